//! The PostgreSQL store: every store trait ([`ObjectStore`],
//! [`EpisodeStore`], [`ExperimentStore`], [`WorkspaceStore`]) over one shared
//! database, so several `jacobian serve --http` hosts behind a load balancer
//! see one deployment. Selected with `--store postgres://…`.
//!
//! The traits are synchronous (the SQLite stores are), so this store runs its
//! connection pool on a small runtime of its own and each call waits for its
//! query there. That keeps it callable from any thread, async or blocking.
//!
//! **Cross-host invariants**, each one statement or one transaction:
//! - `workspace.write` locks the workspace row (`FOR UPDATE`), then checks
//!   the idempotency key and the head, then appends: two hosts racing on one
//!   base cannot both win.
//! - An idempotency key is claimed with `INSERT … ON CONFLICT DO NOTHING`,
//!   which waits for a concurrent claimer to commit or abort.
//! - An experiment's ordinals come from one `INSERT … SELECT MAX + 1`,
//!   retried on a unique violation, so hosts never reuse one.
//! - The operator policy carries a version bumped on every write; every use
//!   of the policy asks for it, so a revocation on one host is in force on
//!   every host from its next call.
//! - Components and artifacts are immutable rows keyed by digest, and readers
//!   re-hash them ([`crate::store::DataDir`]).
//!
//! MCP sessions live here too ([`Postgres::sessions`]): rmcp restores a
//! session that reaches a host which never saw it, so a load balancer needs
//! no stickiness.
//!
//! Schema versions are applied in order by [`Postgres::migrate`] under an
//! advisory lock; a database whose schema is newer than this binary is
//! refused at start.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use rmcp::transport::streamable_http_server::session::store::{SessionState, SessionStore, SessionStoreError};
use tokio_postgres::error::SqlState;
use tokio_postgres::{IsolationLevel, NoTls};

use crate::database::DbError;
use crate::digest::Digest;
use crate::episodes::EpisodeStore;
use crate::experiments::{
    Admission, ExperimentBudgets, ExperimentStore, InvocationRecord, RECORD_COLUMNS, Reservation, Reservations, Spent,
    StopReason, judge,
};
use crate::store::{ObjectKind, ObjectStore, PolicyStamp, StoreError};
use crate::workspace::store::{Appended, Remembered, RevisionRow, StoreFailure, WorkspaceStore};

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: i32 = 3;

/// Connections kept open per host.
pub const POOL_SIZE: usize = 16;

/// The longest a statement, or a wait for a pooled connection, may take.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// A reservation of a host that died mid-call stops counting against a cap after this.
const RESERVATION_TTL_SQL: &str = "interval '1 hour'";

/// A stored MCP session is restored for this long after it was created.
const SESSION_TTL_SQL: &str = "interval '24 hours'";

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
];

/// The advisory lock key migrators take (one migration at a time per database).
const MIGRATION_LOCK: i64 = 0x6a61_636f_6269;

/// Why the PostgreSQL store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum PgOpenError {
    /// The connection string does not parse (the password is never echoed).
    #[error("--store: not a PostgreSQL connection string ({0}); expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")]
    InvalidUrl(String),
    /// No connection could be made.
    #[error("--store: PostgreSQL at {target} is unreachable or refused the connection: {reason}")]
    Unreachable { target: String, reason: String },
    /// The database was written by a newer Jacobian.
    #[error(
        "--store: the database at {target} has schema version {found}, newer than this binary's {supported}; \
         upgrade jacobian (nothing was changed)"
    )]
    NewerSchema { target: String, found: i32, supported: i32 },
    /// A migration or a query failed.
    #[error("--store: PostgreSQL at {target}: {reason}")]
    Failed { target: String, reason: String },
}

/// What [`Postgres::migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MigrationReport {
    /// Where (host, port, database; never the password).
    pub target: String,
    /// The version found before migrating (0: empty database).
    pub from_version: i32,
    /// The version now.
    pub schema_version: i32,
    /// Versions applied by this call.
    pub applied: Vec<i32>,
}

/// A handle on the shared PostgreSQL database (cheap to clone).
#[derive(Clone)]
pub struct Postgres {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    handle: tokio::runtime::Handle,
    runtime: Option<tokio::runtime::Runtime>,
    target: String,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Never block (this may run on an async thread).
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// An error and its sources, "outer: inner: innermost" (duplicates skipped).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let next = inner.to_string();
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = inner.source();
    }
    text
}

fn pg(error: impl std::error::Error) -> DbError {
    DbError::Postgres(chain(&error))
}

/// A tokio-postgres error with the server's message when there is one.
fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => chain(error),
    }
}

fn query_error(error: tokio_postgres::Error) -> DbError {
    DbError::Postgres(describe(&error))
}

/// A transaction at READ COMMITTED whatever the role's or database's
/// default: the row lock and `ON CONFLICT` arguments in the module comment
/// depend on it (under REPEATABLE READ racing writers would fail instead).
async fn begin(client: &mut deadpool_postgres::Object) -> Result<deadpool_postgres::Transaction<'_>, DbError> {
    client.build_transaction().isolation_level(IsolationLevel::ReadCommitted).start().await.map_err(query_error)
}

impl Postgres {
    /// Parse `url` and connect (one connection is made now, so an unreachable
    /// database is reported at start). Does not migrate.
    pub fn connect(url: &str) -> Result<Postgres, PgOpenError> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(PgOpenError::InvalidUrl("it must start with postgres:// or postgresql://".into()));
        }
        // The user info ends at the first '@': a second one would make part of
        // the password look like the host name, and end up in messages.
        let authority = url.split_once("://").map_or("", |(_, rest)| rest.split(['/', '?']).next().unwrap_or(""));
        if authority.matches('@').count() > 1 {
            return Err(PgOpenError::InvalidUrl("percent-encode '@' in the user name or password as %40".into()));
        }
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e: tokio_postgres::Error| PgOpenError::InvalidUrl(describe(&e)))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        // A dead server or a hung query fails the call instead of holding it.
        config.keepalives(true).keepalives_idle(Duration::from_secs(30)).tcp_user_timeout(Duration::from_secs(30));
        if config.get_options().is_none() {
            config.options(format!("-c statement_timeout={}", STATEMENT_TIMEOUT.as_millis()));
        }
        if config.get_application_name().is_none() {
            config.application_name("jacobian");
        }
        let target = target_of(&config);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("jacobian-postgres")
            .enable_all()
            .build()
            .map_err(|e| PgOpenError::Failed { target: target.clone(), reason: e.to_string() })?;
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(STATEMENT_TIMEOUT))
            .create_timeout(Some(Duration::from_secs(10)))
            .recycle_timeout(Some(Duration::from_secs(5)))
            .build()
            .map_err(|e| PgOpenError::Failed { target: target.clone(), reason: e.to_string() })?;
        let handle = runtime.handle().clone();
        let store =
            Postgres { inner: Arc::new(Inner { pool, handle, runtime: Some(runtime), target: target.clone() }) };
        let pool = store.inner.pool.clone();
        store
            .block(async move {
                let client = pool.get().await.map_err(pg)?;
                client.simple_query("SELECT 1").await.map_err(query_error)?;
                Ok(())
            })
            .map_err(|e| PgOpenError::Unreachable { target, reason: e.to_string() })?;
        Ok(store)
    }

    /// Where this store is (host, port, database; never the password).
    pub fn target(&self) -> &str {
        &self.inner.target
    }

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

    /// Run SQL statements as they are (operators and tests: creating a
    /// database, dropping a table).
    pub fn batch_execute(&self, sql: &str) -> Result<(), DbError> {
        let pool = self.inner.pool.clone();
        let sql = sql.to_owned();
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client.batch_execute(&sql).await.map_err(query_error)
        })
    }

    /// The one integer a query returns (`SELECT count(*) …`): for operators'
    /// checks and tests.
    pub fn query_i64(&self, sql: &str) -> Result<i64, DbError> {
        let pool = self.inner.pool.clone();
        let sql = sql.to_owned();
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client.query_one(&sql, &[]).await.map_err(query_error)?;
            row.try_get(0).map_err(query_error)
        })
    }

    /// Run `work` on the store's runtime and wait for it.
    fn block<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, DbError>> + Send + 'static,
    ) -> Result<T, DbError> {
        let (send, receive) = std::sync::mpsc::sync_channel(1);
        self.inner.handle.spawn(async move {
            let _ = send.send(work.await);
        });
        receive.recv().map_err(|_| DbError::Postgres("the store's runtime stopped".into()))?
    }

    fn pool(&self) -> Pool {
        self.inner.pool.clone()
    }

    /// The MCP session store over this database (for `serve --http`).
    pub fn sessions(&self) -> Arc<dyn SessionStore> {
        Arc::new(Sessions(self.clone()))
    }

    /// Run `work` on the store's runtime from async code.
    async fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, DbError>> + Send + 'static,
    ) -> Result<T, DbError> {
        self.inner.handle.spawn(work).await.map_err(|e| DbError::Postgres(e.to_string()))?
    }
}

/// MCP session state (the client's `initialize` parameters) by session id.
struct Sessions(Postgres);

#[async_trait::async_trait]
impl SessionStore for Sessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let (pool, id) = (self.0.pool(), session_id.to_owned());
        let text: Option<String> = self
            .0
            .run(async move {
                let client = pool.get().await.map_err(pg)?;
                let row = client
                    .query_opt(
                        &format!(
                            "SELECT state FROM mcp_sessions WHERE id = $1 AND created_at > now() - {SESSION_TTL_SQL}"
                        ),
                        &[&id],
                    )
                    .await
                    .map_err(query_error)?;
                Ok(row.map(|row| row.get(0)))
            })
            .await?;
        Ok(text.map(|text| serde_json::from_str(&text)).transpose()?)
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let (pool, id, text) = (self.0.pool(), session_id.to_owned(), serde_json::to_string(state)?);
        self.0
            .run(async move {
                let client = pool.get().await.map_err(pg)?;
                client
                    .execute(
                        "INSERT INTO mcp_sessions (id, state) VALUES ($1, $2)
                         ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state",
                        &[&id, &text],
                    )
                    .await
                    .map_err(query_error)?;
                Ok(())
            })
            .await?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let (pool, id) = (self.0.pool(), session_id.to_owned());
        self.0
            .run(async move {
                let client = pool.get().await.map_err(pg)?;
                client.execute("DELETE FROM mcp_sessions WHERE id = $1", &[&id]).await.map_err(query_error)?;
                Ok(())
            })
            .await?;
        Ok(())
    }
}

/// `url` with its database name replaced by `database` (query parameters kept).
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let server = match base[authority_end..].find('/') {
        Some(slash) => &base[..authority_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

/// `host:port/database` of a parsed connection string.
fn target_of(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(config.get_user().unwrap_or("postgres")))
}

fn database_error(what: impl Into<String>) -> impl FnOnce(DbError) -> StoreError {
    let what = what.into();
    move |source| StoreError::Database { what, source }
}

impl Postgres {
    /// Whether an object is stored (without fetching it).
    fn contains(&self, kind: ObjectKind, digest: &Digest) -> Result<bool, StoreError> {
        let (pool, hex) = (self.pool(), digest.to_hex());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client
                .query_opt("SELECT 1 FROM objects WHERE kind = $1 AND digest = $2", &[&kind.as_str(), &hex])
                .await
                .map_err(query_error)?;
            Ok(row.is_some())
        })
        .map_err(database_error(format!("{} {digest}", kind.as_str())))
    }
}

impl ObjectStore for Postgres {
    fn put(&self, kind: ObjectKind, digest: &Digest, bytes: &[u8]) -> Result<(), StoreError> {
        // Every host re-stores the bundled components at start: a component
        // already there (the usual case) is not sent again. Artifacts are
        // small and mostly new, so they go straight to the insert.
        if kind == ObjectKind::Component && self.contains(kind, digest)? {
            return Ok(());
        }
        let (pool, hex, body) = (self.pool(), digest.to_hex(), bytes.to_vec());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached("INSERT INTO objects (kind, digest, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
                .await
                .map_err(query_error)?;
            client.execute(&statement, &[&kind.as_str(), &hex, &body]).await.map_err(query_error)?;
            Ok(())
        })
        .map_err(database_error(format!("{} {digest}", kind.as_str())))
    }

    fn get(&self, kind: ObjectKind, digest: &Digest) -> Result<Option<Vec<u8>>, StoreError> {
        let (pool, hex) = (self.pool(), digest.to_hex());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached("SELECT body FROM objects WHERE kind = $1 AND digest = $2")
                .await
                .map_err(query_error)?;
            let row = client.query_opt(&statement, &[&kind.as_str(), &hex]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
        .map_err(database_error(format!("{} {digest}", kind.as_str())))
    }

    fn put_record(&self, digest: &Digest, record: &serde_json::Value) -> Result<(), StoreError> {
        let (pool, hex, text) = (self.pool(), digest.to_hex(), serde_json::to_string(record).unwrap_or_default());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO install_records (digest, record) VALUES ($1, $2)
                     ON CONFLICT (digest) DO UPDATE SET record = EXCLUDED.record",
                    &[&hex, &text],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .map_err(database_error(format!("install record {digest}")))
    }

    fn records(&self) -> Result<Vec<serde_json::Value>, StoreError> {
        let pool = self.pool();
        let texts: Vec<String> = self
            .block(async move {
                let client = pool.get().await.map_err(pg)?;
                let rows = client
                    .query("SELECT record FROM install_records ORDER BY digest", &[])
                    .await
                    .map_err(query_error)?;
                Ok(rows.into_iter().map(|row| row.get(0)).collect())
            })
            .map_err(database_error("install records"))?;
        texts
            .iter()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| StoreError::Database {
                    what: "install records".into(),
                    source: DbError::Postgres(format!("a record is not JSON: {e}")),
                })
            })
            .collect()
    }

    fn read_policy(&self) -> Result<Option<String>, StoreError> {
        let pool = self.pool();
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client.query_opt("SELECT body FROM policy WHERE id = 1", &[]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
        .map_err(database_error("policy"))
    }

    fn write_policy(&self, text: &str) -> Result<(), StoreError> {
        let (pool, text) = (self.pool(), text.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO policy (id, body, version) VALUES (1, $1, 1)
                     ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, version = policy.version + 1",
                    &[&text],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .map_err(database_error("policy"))
    }

    fn write_policy_if(&self, expected: PolicyStamp, text: &str) -> Result<bool, StoreError> {
        let (pool, text) = (self.pool(), text.to_owned());
        let expected = expected.map(|v| v as i64);
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let changed = match expected {
                Some(version) => client
                    .execute(
                        "UPDATE policy SET body = $2, version = version + 1 WHERE id = 1 AND version = $1",
                        &[&version, &text],
                    )
                    .await
                    .map_err(query_error)?,
                None => client
                    .execute(
                        "INSERT INTO policy (id, body, version) VALUES (1, $1, 1) ON CONFLICT DO NOTHING",
                        &[&text],
                    )
                    .await
                    .map_err(query_error)?,
            };
            Ok(changed == 1)
        })
        .map_err(database_error("policy"))
    }

    fn create_policy(&self, text: &str) -> Result<(), StoreError> {
        let (pool, text) = (self.pool(), text.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute("INSERT INTO policy (id, body, version) VALUES (1, $1, 1) ON CONFLICT DO NOTHING", &[&text])
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .map_err(database_error("policy"))
    }

    fn policy_stamp(&self) -> PolicyStamp {
        let pool = self.pool();
        let version: Option<i64> = self
            .block(async move {
                let client = pool.get().await.map_err(pg)?;
                let statement =
                    client.prepare_cached("SELECT version FROM policy WHERE id = 1").await.map_err(query_error)?;
                let row = client.query_opt(&statement, &[]).await.map_err(query_error)?;
                Ok(row.map(|row| row.get(0)))
            })
            .ok()
            .flatten();
        // Unreadable: no stamp, so the caller re-reads and fails closed.
        version.map(|v| v as u128)
    }
}

impl EpisodeStore for Postgres {
    fn put(&self, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError> {
        let (pool, hex, id, body) = (self.pool(), digest.to_hex(), capability_id.to_owned(), body.to_vec());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached(
                    "INSERT INTO episodes (digest, capability_id, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                )
                .await
                .map_err(query_error)?;
            client.execute(&statement, &[&hex, &id, &body]).await.map_err(query_error)?;
            Ok(())
        })
    }

    fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError> {
        let (pool, hex) = (self.pool(), digest.to_hex());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row =
                client.query_opt("SELECT body FROM episodes WHERE digest = $1", &[&hex]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
    }
}

impl ExperimentStore for Postgres {
    fn spent(&self, experiment: &str) -> Result<Spent, DbError> {
        let (pool, experiment) = (self.pool(), experiment.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached(
                    "SELECT capability_id, COUNT(*), COALESCE(SUM(fuel), 0)::BIGINT FROM experiment_invocations
                     WHERE experiment = $1 AND stop_reason IN ('COMPLETED', 'FAILED', 'CANCELLED')
                     GROUP BY capability_id",
                )
                .await
                .map_err(query_error)?;
            Ok(spent_of(&client.query(&statement, &[&experiment]).await.map_err(query_error)?))
        })
    }

    fn append(&self, experiment: &str, record: &InvocationRecord) -> Result<u64, DbError> {
        let (pool, experiment, record) = (self.pool(), experiment.to_owned(), record.clone());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client.prepare_cached(INSERT_RECORD).await.map_err(query_error)?;
            // Another host may take the same ordinal first: take the next one.
            let mut attempts = 0;
            loop {
                match insert_record(&client, &statement, &experiment, &record).await {
                    Ok(ordinal) => return Ok(ordinal),
                    Err(e) if attempts < 64 && e.code() == Some(&SqlState::UNIQUE_VIOLATION) => attempts += 1,
                    Err(e) => return Err(query_error(e)),
                }
            }
        })
    }

    fn put_policy(&self, digest: &str, body: &str) -> Result<(), DbError> {
        let (pool, digest, body) = (self.pool(), digest.to_owned(), body.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO experiment_policies (digest, body) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                    &[&digest, &body],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
    }

    fn policy(&self, digest: &str) -> Result<Option<String>, DbError> {
        let (pool, digest) = (self.pool(), digest.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client
                .query_opt("SELECT body FROM experiment_policies WHERE digest = $1", &[&digest])
                .await
                .map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
    }

    fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, DbError> {
        let (pool, experiment) = (self.pool(), experiment.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let rows = client
                .query(
                    &format!(
                        "SELECT {RECORD_COLUMNS} FROM experiment_invocations WHERE experiment = $1 ORDER BY ordinal"
                    ),
                    &[&experiment],
                )
                .await
                .map_err(query_error)?;
            Ok(rows
                .into_iter()
                .map(|row| InvocationRecord {
                    ordinal: row.get::<_, i64>(0) as u64,
                    capability_id: row.get(1),
                    stop_reason: StopReason::parse(row.get(2)),
                    episode: row.get(3),
                    fuel: row.get::<_, i64>(4) as u64,
                    wall_time_us: row.get::<_, i64>(5) as u64,
                    logical_bytes: row.get::<_, i64>(6) as u64,
                    model_visible_bytes: row.get::<_, i64>(7) as u64,
                    wire_bytes: row.get::<_, i64>(8) as u64,
                    policy_digest: row.get(9),
                })
                .collect())
        })
    }

    fn reservations(&self) -> Option<&dyn Reservations> {
        Some(self)
    }
}

impl Reservations for Postgres {
    fn reserve(
        &self,
        experiment: &str,
        capability_id: &str,
        budgets: &ExperimentBudgets,
    ) -> Result<Admission, DbError> {
        let (pool, experiment, capability) = (self.pool(), experiment.to_owned(), capability_id.to_owned());
        let budgets = budgets.clone();
        self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            // One admission per experiment at a time, on every host.
            tx.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", &[&experiment])
                .await
                .map_err(query_error)?;
            // One statement, one snapshot: a call is counted as its row or as
            // its reservation, never neither (they swap in one transaction).
            let rows = tx
                .query(
                    &format!(
                        "SELECT capability_id, COUNT(*), COALESCE(SUM(fuel), 0)::BIGINT FROM (
                            SELECT capability_id, fuel FROM experiment_invocations
                            WHERE experiment = $1 AND stop_reason IN ('COMPLETED', 'FAILED', 'CANCELLED')
                            UNION ALL
                            SELECT capability_id, 0 FROM experiment_reservations
                            WHERE experiment = $1 AND created_at > now() - {RESERVATION_TTL_SQL}
                         ) spend GROUP BY capability_id"
                    ),
                    &[&experiment],
                )
                .await
                .map_err(query_error)?;
            let mut spent = spent_of(&rows);
            if let refused @ Admission::Refused { .. } = judge(&mut spent, &capability, &budgets) {
                tx.rollback().await.map_err(query_error)?;
                return Ok(refused);
            }
            let id = uuid::Uuid::new_v4().simple().to_string();
            tx.execute(
                "INSERT INTO experiment_reservations (id, experiment, capability_id) VALUES ($1, $2, $3)",
                &[&id, &experiment, &capability],
            )
            .await
            .map_err(query_error)?;
            tx.commit().await.map_err(query_error)?;
            Ok(Admission::Admitted { reservation: Some(Reservation(id)) })
        })
    }

    fn append_reserved(
        &self,
        experiment: &str,
        record: &InvocationRecord,
        reservation: &Reservation,
    ) -> Result<u64, DbError> {
        let (pool, experiment, record, reservation) =
            (self.pool(), experiment.to_owned(), record.clone(), reservation.0.clone());
        self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let mut attempts = 0;
            loop {
                let tx = begin(&mut client).await?;
                tx.execute("DELETE FROM experiment_reservations WHERE id = $1", &[&reservation])
                    .await
                    .map_err(query_error)?;
                let statement = tx.prepare_cached(INSERT_RECORD).await.map_err(query_error)?;
                match insert_record(&tx, &statement, &experiment, &record).await {
                    Ok(ordinal) => {
                        tx.commit().await.map_err(query_error)?;
                        return Ok(ordinal);
                    }
                    // Another host took the ordinal: the transaction is void, start again.
                    Err(e) if attempts < 64 && e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                        tx.rollback().await.map_err(query_error)?;
                        attempts += 1;
                    }
                    Err(e) => return Err(query_error(e)),
                }
            }
        })
    }
}

/// Spend from `(capability_id, count, fuel)` rows.
fn spent_of(rows: &[tokio_postgres::Row]) -> Spent {
    let mut spent = Spent::default();
    for row in rows {
        let (id, count, fuel): (String, i64, i64) = (row.get(0), row.get(1), row.get(2));
        spent.invocations.insert(id, count.max(0) as u64);
        spent.fuel = spent.fuel.saturating_add(fuel.max(0) as u64);
    }
    spent
}

/// An invocation record with the experiment's next ordinal, in one statement.
const INSERT_RECORD: &str = "INSERT INTO experiment_invocations (experiment, ordinal, capability_id, stop_reason,
        episode, fuel, wall_time_us, logical_bytes, model_visible_bytes, wire_bytes, policy_digest)
     SELECT $1, COALESCE(MAX(ordinal), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9, $10
     FROM experiment_invocations WHERE experiment = $1
     RETURNING ordinal";

/// Run [`INSERT_RECORD`] (prepared by the caller, so it is cached per connection).
async fn insert_record(
    client: &impl deadpool_postgres::GenericClient,
    statement: &tokio_postgres::Statement,
    experiment: &str,
    record: &InvocationRecord,
) -> Result<u64, tokio_postgres::Error> {
    let numbers = [
        record.fuel as i64,
        record.wall_time_us as i64,
        record.logical_bytes as i64,
        record.model_visible_bytes as i64,
        record.wire_bytes as i64,
    ];
    let row = client
        .query_one(
            statement,
            &[
                &experiment,
                &record.capability_id,
                &record.stop_reason.to_string(),
                &record.episode,
                &numbers[0],
                &numbers[1],
                &numbers[2],
                &numbers[3],
                &numbers[4],
                &record.policy_digest,
            ],
        )
        .await?;
    Ok(row.get::<_, i64>(0) as u64)
}

async fn remembered_in(
    client: &impl deadpool_postgres::GenericClient,
    scope: &str,
    key: &str,
) -> Result<Option<Remembered>, DbError> {
    let row = client
        .query_opt("SELECT payload_digest, response FROM idempotency WHERE scope = $1 AND key = $2", &[&scope, &key])
        .await
        .map_err(query_error)?;
    Ok(row.map(|row| Remembered { payload_digest: row.get(0), response: row.get(1) }))
}

impl WorkspaceStore for Postgres {
    fn remembered(&self, scope: &str, key: &str) -> Result<Option<Remembered>, StoreFailure> {
        let (pool, scope, key) = (self.pool(), scope.to_owned(), key.to_owned());
        Ok(self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            remembered_in(&client, &scope, &key).await
        })?)
    }

    fn create(
        &self,
        workspace_id: &str,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Option<Remembered>, StoreFailure> {
        let (pool, id, key) = (self.pool(), workspace_id.to_owned(), key.to_owned());
        let (revision, remember) = (revision.clone(), remember.clone());
        Ok(self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            // Claim the key first: a concurrent claimer makes this wait for its
            // commit, after which its response is the answer.
            let claimed = tx
                .execute(
                    "INSERT INTO idempotency (scope, key, payload_digest, response) VALUES ('open', $1, $2, $3)
                     ON CONFLICT DO NOTHING",
                    &[&key, &remember.payload_digest, &remember.response],
                )
                .await
                .map_err(query_error)?;
            if claimed == 0 {
                let earlier = remembered_in(&tx, "open", &key).await?;
                tx.rollback().await.map_err(query_error)?;
                return Ok(earlier);
            }
            tx.execute("INSERT INTO workspaces (id, head) VALUES ($1, 0)", &[&id]).await.map_err(query_error)?;
            tx.execute(
                "INSERT INTO revisions (workspace_id, number, request, artifact) VALUES ($1, 0, $2, $3)",
                &[&id, &revision.request, &revision.artifact],
            )
            .await
            .map_err(query_error)?;
            tx.commit().await.map_err(query_error)?;
            Ok(None)
        })?)
    }

    fn append(
        &self,
        workspace_id: &str,
        base: u64,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Appended, StoreFailure> {
        let (pool, id, key) = (self.pool(), workspace_id.to_owned(), key.to_owned());
        let (revision, remember) = (revision.clone(), remember.clone());
        Ok(self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            // The row lock serializes every writer of this workspace, on every host.
            let head = tx
                .query_opt("SELECT head FROM workspaces WHERE id = $1 FOR UPDATE", &[&id])
                .await
                .map_err(query_error)?;
            let Some(head) = head.map(|row| row.get::<_, i64>(0) as u64) else {
                return Ok(Appended::NotFound);
            };
            if let Some(earlier) = remembered_in(&tx, &id, &key).await? {
                return Ok(Appended::Remembered(earlier));
            }
            if head != base {
                return Ok(Appended::Conflict { head });
            }
            let number = revision.number as i64;
            tx.execute(
                "INSERT INTO revisions (workspace_id, number, request, artifact) VALUES ($1, $2, $3, $4)",
                &[&id, &number, &revision.request, &revision.artifact],
            )
            .await
            .map_err(query_error)?;
            tx.execute("UPDATE workspaces SET head = $2 WHERE id = $1", &[&id, &number]).await.map_err(query_error)?;
            tx.execute(
                "INSERT INTO idempotency (scope, key, payload_digest, response) VALUES ($1, $2, $3, $4)",
                &[&id, &key, &remember.payload_digest, &remember.response],
            )
            .await
            .map_err(query_error)?;
            tx.commit().await.map_err(query_error)?;
            Ok(Appended::Done)
        })?)
    }

    fn head(&self, workspace_id: &str) -> Result<Option<u64>, StoreFailure> {
        let (pool, id) = (self.pool(), workspace_id.to_owned());
        Ok(self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement =
                client.prepare_cached("SELECT head FROM workspaces WHERE id = $1").await.map_err(query_error)?;
            let row = client.query_opt(&statement, &[&id]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get::<_, i64>(0) as u64))
        })?)
    }

    fn revisions(&self, workspace_id: &str, from: u64, to: u64) -> Result<Vec<RevisionRow>, StoreFailure> {
        let (pool, id) = (self.pool(), workspace_id.to_owned());
        let (from, to) = (from as i64, to as i64);
        Ok(self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let rows = client
                .query(
                    "SELECT number, request, artifact FROM revisions
                     WHERE workspace_id = $1 AND number BETWEEN $2 AND $3 ORDER BY number",
                    &[&id, &from, &to],
                )
                .await
                .map_err(query_error)?;
            Ok(rows
                .into_iter()
                .map(|row| RevisionRow {
                    number: row.get::<_, i64>(0) as u64,
                    request: row.get(1),
                    artifact: row.get(2),
                })
                .collect())
        })?)
    }
}
