//! The data directory's SQLite database, `jacobian.db`: episodes,
//! experiment lines and workspaces, one versioned schema.
//!
//! One opener: [`Sqlite::open`] sets WAL mode and a busy timeout, applies
//! every schema version this binary knows and the database lacks (in one
//! `BEGIN IMMEDIATE` transaction, so processes opening it together migrate
//! once), refuses a database whose schema is newer, and then holds one
//! connection per role: episodes and experiment lines commit with
//! `synchronous=NORMAL` (a crash may lose the last commits, never corrupt),
//! workspaces with `synchronous=FULL` (an acknowledged write survives a crash).
//!
//! Databases made before the schema was versioned hold the tables of
//! version 1 and no `jacobian_schema` table: version 1 creates its tables
//! only where absent, so such a database is upgraded in place.

mod records;
mod workspaces;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior, params};

use super::{DbError, MigrationReport, OpenError, SchemaTooNew};

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: i32 = 2;

/// Every schema version, in order: (version, description, SQL).
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "episodes, experiment lines and policies, workspaces, revisions, idempotency keys",
        "CREATE TABLE IF NOT EXISTS episodes (
        digest TEXT PRIMARY KEY,
        capability_id TEXT NOT NULL,
        body BLOB NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS experiment_invocations (
        experiment TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        capability_id TEXT NOT NULL,
        stop_reason TEXT NOT NULL,
        episode TEXT,
        fuel INTEGER NOT NULL,
        wall_time_us INTEGER NOT NULL,
        logical_bytes INTEGER NOT NULL,
        model_visible_bytes INTEGER NOT NULL,
        wire_bytes INTEGER NOT NULL,
        policy_digest TEXT NOT NULL,
        PRIMARY KEY (experiment, ordinal)
    ) STRICT;
    CREATE TABLE IF NOT EXISTS experiment_policies (
        digest TEXT PRIMARY KEY,
        body TEXT NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS workspaces (
        id TEXT PRIMARY KEY,
        head INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS revisions (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        number INTEGER NOT NULL,
        request BLOB NOT NULL,
        artifact BLOB NOT NULL,
        PRIMARY KEY (workspace_id, number)
    ) STRICT;
    CREATE TABLE IF NOT EXISTS idempotency (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        payload_digest TEXT NOT NULL,
        response BLOB NOT NULL,
        PRIMARY KEY (scope, key)
    ) STRICT;",
    ),
    (
        2,
        "certificates: the checker role, format and checker each certificate artifact needs, recorded from its \
         producer's declared route (filled from the episodes already stored)",
        "CREATE TABLE certificates (
        digest TEXT PRIMARY KEY,
        checker_role TEXT NOT NULL,
        certificate_format TEXT NOT NULL,
        verify_capability_id TEXT NOT NULL,
        capability_id TEXT NOT NULL,
        producer TEXT NOT NULL
    ) STRICT;
    INSERT OR IGNORE INTO certificates
        SELECT substr(json_extract(b, '$.check_with.certificate_artifact'), 19),
               json_extract(b, '$.check_with.checker_role'),
               json_extract(b, '$.check_with.certificate_format'),
               json_extract(b, '$.check_with.verify_capability_id'),
               json_extract(b, '$.capability_id'),
               substr(json_extract(b, '$.provenance.provider_digest'), 8)
        FROM (SELECT CAST(body AS TEXT) AS b FROM episodes)
        WHERE json_extract(b, '$.status') = 'COMPLETED'
          AND json_extract(b, '$.check_with.certificate_artifact') LIKE 'artifact://sha256/%';",
    ),
];

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// What each connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Episodes,
    Experiments,
    Workspaces,
}

/// The open database (cheap to clone).
#[derive(Clone)]
pub struct Sqlite {
    inner: Arc<Inner>,
}

struct Inner {
    episodes: Mutex<Connection>,
    experiments: Mutex<Connection>,
    workspaces: Mutex<Connection>,
}

impl Sqlite {
    /// Open (creating) the database at `path`, migrated to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Sqlite, OpenError> {
        let report = migrate_to(path, SCHEMA_VERSION)?;
        if !report.applied.is_empty() {
            tracing::info!(target = %report.target, applied = ?report.applied, "database schema migrated");
        }
        let normal = || connect(path, "NORMAL");
        let inner = Inner {
            episodes: Mutex::new(normal()?),
            experiments: Mutex::new(normal()?),
            workspaces: Mutex::new(connect(path, "FULL")?),
        };
        owner_only(path);
        Ok(Sqlite { inner: Arc::new(inner) })
    }

    /// Apply every schema version this binary knows and the database at
    /// `path` lacks (`jacobian migrate` on a data directory).
    pub fn migrate(path: &Path) -> Result<MigrationReport, OpenError> {
        migrate_to(path, SCHEMA_VERSION)
    }

    fn lock(&self, role: Role) -> MutexGuard<'_, Connection> {
        let conn = match role {
            Role::Episodes => &self.inner.episodes,
            Role::Experiments => &self.inner.experiments,
            Role::Workspaces => &self.inner.workspaces,
        };
        conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Make the database and its WAL files readable by their owner only (SQLite
/// creates them with the process's umask).
fn owner_only(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        if let Err(error) = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(file = ?file, %error, "could not make the database owner-only");
        }
    }
}

/// A connection in WAL mode with a busy timeout and the given `synchronous` level.
fn connect(path: &Path, synchronous: &str) -> Result<Connection, DbError> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", synchronous)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}

/// [`Sqlite::migrate`], stopping at schema version `up_to`.
pub fn migrate_to(path: &Path, up_to: i32) -> Result<MigrationReport, OpenError> {
    let target = PathBuf::from(path).display().to_string();
    let mut conn = connect(path, "FULL")?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(DbError::from)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS jacobian_schema (
            version INTEGER PRIMARY KEY,
            description TEXT NOT NULL,
            applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        ) STRICT",
    )
    .map_err(DbError::from)?;
    let from_version: i32 = tx
        .query_row("SELECT COALESCE(MAX(version), 0) FROM jacobian_schema", [], |row| row.get(0))
        .map_err(DbError::from)?;
    if from_version > SCHEMA_VERSION {
        return Err(SchemaTooNew { target, found: from_version, supported: SCHEMA_VERSION }.into());
    }
    let mut applied = Vec::new();
    for (version, description, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > from_version && *v <= up_to) {
        tx.execute_batch(sql).map_err(DbError::from)?;
        tx.execute("INSERT INTO jacobian_schema (version, description) VALUES (?1, ?2)", params![version, description])
            .map_err(DbError::from)?;
        applied.push(*version);
    }
    tx.commit().map_err(DbError::from)?;
    let schema_version = applied.last().copied().unwrap_or(from_version);
    Ok(MigrationReport { target, from_version, schema_version, applied })
}
