//! The PostgreSQL schema, version by version.

use crate::store::{DbError, MigrationReport};

use super::{PgOpenError, Postgres, RESERVATION_TTL_SQL, SESSION_TTL_SQL, begin, pg, query_error};

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: i32 = 13;

/// Every schema version, in order: (version, description, SQL).
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "workspaces, idempotency, episodes, experiments, objects, install records, policy",
        "CREATE TABLE workspaces (
        id TEXT PRIMARY KEY,
        head BIGINT NOT NULL
    );
    CREATE TABLE revisions (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        number BIGINT NOT NULL,
        request BYTEA NOT NULL,
        artifact BYTEA NOT NULL,
        PRIMARY KEY (workspace_id, number)
    );
    CREATE TABLE idempotency (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        payload_digest TEXT NOT NULL,
        response BYTEA NOT NULL,
        PRIMARY KEY (scope, key)
    );
    CREATE TABLE episodes (
        digest TEXT PRIMARY KEY,
        capability_id TEXT NOT NULL,
        body BYTEA NOT NULL
    );
    CREATE TABLE experiment_invocations (
        experiment TEXT NOT NULL,
        ordinal BIGINT NOT NULL,
        capability_id TEXT NOT NULL,
        stop_reason TEXT NOT NULL,
        episode TEXT,
        fuel BIGINT NOT NULL,
        wall_time_us BIGINT NOT NULL,
        logical_bytes BIGINT NOT NULL,
        model_visible_bytes BIGINT NOT NULL,
        wire_bytes BIGINT NOT NULL,
        policy_digest TEXT NOT NULL,
        PRIMARY KEY (experiment, ordinal)
    );
    CREATE TABLE experiment_policies (
        digest TEXT PRIMARY KEY,
        body TEXT NOT NULL
    );
    CREATE TABLE objects (
        kind TEXT NOT NULL CHECK (kind IN ('component', 'artifact')),
        digest TEXT NOT NULL,
        body BYTEA NOT NULL,
        PRIMARY KEY (kind, digest)
    );
    CREATE TABLE install_records (
        digest TEXT PRIMARY KEY,
        record TEXT NOT NULL
    );
    CREATE TABLE policy (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        body TEXT NOT NULL,
        version BIGINT NOT NULL
    );",
    ),
    (
        2,
        "MCP sessions shared by every host (a session started on one host continues on another)",
        "CREATE TABLE mcp_sessions (
        id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );",
    ),
    (
        3,
        "experiment reservations: a budgeted call holds its place under a cap on every host while it runs",
        "CREATE TABLE experiment_reservations (
        id TEXT PRIMARY KEY,
        experiment TEXT NOT NULL,
        capability_id TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE INDEX experiment_reservations_by_experiment ON experiment_reservations (experiment);",
    ),
    (
        4,
        "certificates: the checker role, format and checker each certificate artifact needs, recorded from its \
         producer's declared route (filled from the episodes already stored)",
        "CREATE TABLE certificates (
        digest TEXT PRIMARY KEY,
        checker_role TEXT NOT NULL,
        certificate_format TEXT NOT NULL,
        verify_capability_id TEXT NOT NULL,
        capability_id TEXT NOT NULL,
        producer TEXT NOT NULL
    );
    INSERT INTO certificates
        SELECT substr(b->'check_with'->>'certificate_artifact', 19),
               b->'check_with'->>'checker_role',
               b->'check_with'->>'certificate_format',
               b->'check_with'->>'verify_capability_id',
               b->>'capability_id',
               substr(b->'provenance'->>'provider_digest', 8)
        FROM (SELECT convert_from(body, 'UTF8')::json AS b FROM episodes) AS e
        WHERE b->>'status' = 'COMPLETED'
          AND b->'check_with'->>'certificate_artifact' LIKE 'artifact://sha256/%'
    ON CONFLICT DO NOTHING;",
    ),
    (
        5,
        "API tokens: operator-issued bearer tokens for serve --http, stored by digest, seen by every host",
        "CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        scopes TEXT NOT NULL,
        secret_sha256 TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        revoked_at BIGINT
    );",
    ),
    (
        6,
        "MCP session owners: the authenticated principal that opened each session, so no other may continue it",
        "CREATE TABLE mcp_session_owners (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );",
    ),
    (
        7,
        "tenant quotas: each tenant's fuel of the day and stored bytes, its invocation bucket, and a row per \
         call in flight, judged on every host under one lock per tenant",
        "CREATE TABLE tenant_usage (
        tenant TEXT PRIMARY KEY,
        day BIGINT NOT NULL,
        fuel BIGINT NOT NULL,
        stored_bytes BIGINT NOT NULL
    );
    CREATE TABLE tenant_buckets (
        tenant TEXT PRIMARY KEY,
        tokens DOUBLE PRECISION NOT NULL,
        refilled_ms BIGINT NOT NULL
    );
    CREATE TABLE tenant_calls (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE INDEX tenant_calls_by_tenant ON tenant_calls (tenant);",
    ),
    (
        8,
        "experiment keys in byte order, for completions by prefix",
        "CREATE INDEX experiment_invocations_by_key_bytes ON experiment_invocations (experiment COLLATE \"C\");",
    ),
    (
        9,
        "uploaded files: chunks written as they arrive, listed once whole",
        "CREATE TABLE files (
        digest TEXT PRIMARY KEY,
        size BIGINT NOT NULL
    );
    CREATE TABLE file_chunks (
        digest TEXT NOT NULL,
        seq INTEGER NOT NULL,
        body BYTEA NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (digest, seq)
    );",
    ),
    (
        10,
        "rechecks: new verdicts recorded beside those of a recalled checker",
        "CREATE TABLE rechecks (
        episode TEXT NOT NULL,
        seq BIGINT NOT NULL,
        recalled TEXT NOT NULL,
        recheck TEXT NOT NULL,
        status TEXT NOT NULL,
        checker TEXT NOT NULL,
        PRIMARY KEY (episode, recheck)
    );",
    ),
    (
        11,
        crate::store::GRANTS_MIGRATION,
        "CREATE TABLE grants (
        tenant TEXT NOT NULL,
        uri TEXT NOT NULL,
        PRIMARY KEY (tenant, uri)
    );
    CREATE INDEX experiment_invocations_by_episode ON experiment_invocations (episode);
    INSERT INTO grants (tenant, uri)
        SELECT DISTINCT right(i.experiment, 16), a ->> 'uri'
        FROM experiment_invocations AS i
        JOIN episodes AS e ON e.digest = substr(i.episode, 8),
        LATERAL (SELECT convert_from(e.body, 'UTF8')::json -> 'artifacts' AS list) AS b,
        LATERAL json_array_elements(CASE json_typeof(b.list) WHEN 'array' THEN b.list ELSE '[]' END) AS a
        WHERE substr(i.experiment, length(i.experiment) - 16, 1) = '@' AND a ->> 'uri' LIKE 'artifact://sha256/%'
    ON CONFLICT DO NOTHING;",
    ),
    (
        12,
        "tenant calls in flight reserve their fuel budget, so fuel per day holds for calls at once on every host",
        "ALTER TABLE tenant_calls ADD COLUMN fuel BIGINT NOT NULL DEFAULT 0;",
    ),
    (
        13,
        "uploads and workspace writes reserve their bytes (rows that are no call), calls their input and output budget, so stored bytes hold for stores at once on every host",
        "ALTER TABLE tenant_calls ADD COLUMN bytes BIGINT NOT NULL DEFAULT 0,
            ADD COLUMN is_call BOOLEAN NOT NULL DEFAULT TRUE;",
    ),
];

/// The advisory lock key migrators take (one migration at a time per database).
const MIGRATION_LOCK: i64 = 0x6a61_636f_6269;

impl Postgres {
    /// Apply every schema version this binary knows and the database lacks,
    /// in one transaction under an advisory lock (hosts starting together
    /// migrate once). Refuses a database with a newer schema.
    pub fn migrate(&self) -> Result<MigrationReport, PgOpenError> {
        self.migrate_to(SCHEMA_VERSION)
    }

    /// [`Postgres::migrate`], stopping at schema version `up_to` (tests of
    /// upgrades start from an older schema this way).
    pub fn migrate_to(&self, up_to: i32) -> Result<MigrationReport, PgOpenError> {
        let pool = self.inner.pool.clone();
        let target = self.inner.target.clone();
        let failed = |e: DbError| PgOpenError::Failed { target: target.clone(), reason: e.to_string() };
        let (from_version, applied) = self
            .block(async move {
                let mut client = pool.get().await.map_err(pg)?;
                let tx = begin(&mut client).await?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await.map_err(query_error)?;
                tx.batch_execute(
                    "CREATE TABLE IF NOT EXISTS jacobian_schema (
                        version INTEGER PRIMARY KEY,
                        description TEXT NOT NULL,
                        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                    )",
                )
                .await
                .map_err(query_error)?;
                let row = tx.query_one("SELECT COALESCE(MAX(version), 0) FROM jacobian_schema", &[]).await;
                let from: i32 = row.map_err(query_error)?.get(0);
                if from > SCHEMA_VERSION {
                    return Ok((from, None));
                }
                let mut applied = Vec::new();
                for (version, description, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > from && *v <= up_to) {
                    tx.batch_execute(sql).await.map_err(query_error)?;
                    tx.execute(
                        "INSERT INTO jacobian_schema (version, description) VALUES ($1, $2)",
                        &[version, description],
                    )
                    .await
                    .map_err(query_error)?;
                    applied.push(*version);
                }
                if up_to >= 3 {
                    // Leftovers of hosts that died: expired reservations and sessions.
                    tx.batch_execute(&format!(
                        "DELETE FROM experiment_reservations WHERE created_at < now() - {RESERVATION_TTL_SQL};
                         DELETE FROM mcp_sessions WHERE created_at < now() - {SESSION_TTL_SQL};"
                    ))
                    .await
                    .map_err(query_error)?;
                }
                if up_to >= 6 {
                    tx.batch_execute(&format!(
                        "DELETE FROM mcp_session_owners WHERE created_at < now() - {SESSION_TTL_SQL};"
                    ))
                    .await
                    .map_err(query_error)?;
                }
                if up_to >= 7 {
                    tx.batch_execute(&format!(
                        "DELETE FROM tenant_calls WHERE created_at < now() - {RESERVATION_TTL_SQL};"
                    ))
                    .await
                    .map_err(query_error)?;
                }
                tx.commit().await.map_err(query_error)?;
                Ok((from, Some(applied)))
            })
            .map_err(failed)?;
        let target = self.inner.target.clone();
        match applied {
            None => Err(PgOpenError::NewerSchema { target, found: from_version, supported: SCHEMA_VERSION }),
            Some(applied) => {
                let schema_version = applied.last().copied().unwrap_or(from_version);
                Ok(MigrationReport { target, from_version, schema_version, applied })
            }
        }
    }
}
