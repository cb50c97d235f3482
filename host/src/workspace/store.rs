//! Durable workspace storage behind a trait (SQLite here; PostgreSQL in
//! `crate::postgres`). Every accepted write is one transaction that
//! checks the idempotency key and the branch head, then appends.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// One stored revision: the request it applied (canonical JSON) and its artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionRow {
    /// Revision number (0 is `workspace.open`).
    pub number: u64,
    /// Canonical JSON of the request that produced it.
    pub request: Vec<u8>,
    /// Canonical JSON of the revision artifact.
    pub artifact: Vec<u8>,
}

/// A remembered response to an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    /// SHA-256 (hex) of the request payload.
    pub payload_digest: String,
    /// The original response (JSON).
    pub response: Vec<u8>,
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// The revision is now the head.
    Done,
    /// The base was not the head; nothing was written.
    Conflict {
        /// The current head.
        head: u64,
    },
    /// The key was used already; nothing was written.
    Remembered(Remembered),
    /// No such workspace.
    NotFound,
}

/// A storage failure.
#[derive(Debug, thiserror::Error)]
#[error("workspace store: {0}")]
pub struct StoreFailure(#[from] pub crate::database::DbError);

impl From<rusqlite::Error> for StoreFailure {
    fn from(error: rusqlite::Error) -> Self {
        StoreFailure(error.into())
    }
}

/// Workspace storage.
pub trait WorkspaceStore: Send + Sync {
    /// The response remembered for `key` in `scope` (a workspace id, or `open`).
    fn remembered(&self, scope: &str, key: &str) -> Result<Option<Remembered>, StoreFailure>;
    /// Create a workspace with revision 0, remembering the response. Returns
    /// the earlier response when the key was used already.
    fn create(
        &self,
        workspace_id: &str,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Option<Remembered>, StoreFailure>;
    /// Append a revision if `base` is still the head and the key is unused.
    fn append(
        &self,
        workspace_id: &str,
        base: u64,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Appended, StoreFailure>;
    /// The head revision number.
    fn head(&self, workspace_id: &str) -> Result<Option<u64>, StoreFailure>;
    /// Revisions `from..=to`, in order.
    fn revisions(&self, workspace_id: &str, from: u64, to: u64) -> Result<Vec<RevisionRow>, StoreFailure>;
}

/// The embedded SQLite store (WAL, one transaction per accepted write).
pub struct SqliteStore {
    conn: Mutex<Connection>,
}

impl SqliteStore {
    /// Open (creating) the tables in the database at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreFailure> {
        let conn = crate::database::open(
            path,
            crate::database::Durability::Full,
            "CREATE TABLE IF NOT EXISTS workspaces (
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
        )?;
        Ok(SqliteStore { conn: Mutex::new(conn) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn remembered_in(conn: &Connection, scope: &str, key: &str) -> Result<Option<Remembered>, rusqlite::Error> {
    conn.query_row(
        "SELECT payload_digest, response FROM idempotency WHERE scope = ?1 AND key = ?2",
        params![scope, key],
        |row| Ok(Remembered { payload_digest: row.get(0)?, response: row.get(1)? }),
    )
    .optional()
}

impl WorkspaceStore for SqliteStore {
    fn remembered(&self, scope: &str, key: &str) -> Result<Option<Remembered>, StoreFailure> {
        Ok(remembered_in(&self.lock(), scope, key)?)
    }

    fn create(
        &self,
        workspace_id: &str,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Option<Remembered>, StoreFailure> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if let Some(earlier) = remembered_in(&tx, "open", key)? {
            return Ok(Some(earlier));
        }
        tx.execute("INSERT INTO workspaces (id, head) VALUES (?1, 0)", params![workspace_id])?;
        tx.execute(
            "INSERT INTO revisions (workspace_id, number, request, artifact) VALUES (?1, 0, ?2, ?3)",
            params![workspace_id, revision.request, revision.artifact],
        )?;
        tx.execute(
            "INSERT INTO idempotency (scope, key, payload_digest, response) VALUES ('open', ?1, ?2, ?3)",
            params![key, remember.payload_digest, remember.response],
        )?;
        tx.commit()?;
        Ok(None)
    }

    fn append(
        &self,
        workspace_id: &str,
        base: u64,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Appended, StoreFailure> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if let Some(earlier) = remembered_in(&tx, workspace_id, key)? {
            return Ok(Appended::Remembered(earlier));
        }
        let head: Option<i64> = tx
            .query_row("SELECT head FROM workspaces WHERE id = ?1", params![workspace_id], |r| r.get(0))
            .optional()?;
        let Some(head) = head else { return Ok(Appended::NotFound) };
        if head as u64 != base {
            return Ok(Appended::Conflict { head: head as u64 });
        }
        tx.execute(
            "INSERT INTO revisions (workspace_id, number, request, artifact) VALUES (?1, ?2, ?3, ?4)",
            params![workspace_id, revision.number as i64, revision.request, revision.artifact],
        )?;
        tx.execute("UPDATE workspaces SET head = ?2 WHERE id = ?1", params![workspace_id, revision.number as i64])?;
        tx.execute(
            "INSERT INTO idempotency (scope, key, payload_digest, response) VALUES (?1, ?2, ?3, ?4)",
            params![workspace_id, key, remember.payload_digest, remember.response],
        )?;
        tx.commit()?;
        Ok(Appended::Done)
    }

    fn head(&self, workspace_id: &str) -> Result<Option<u64>, StoreFailure> {
        let head: Option<i64> = self
            .lock()
            .query_row("SELECT head FROM workspaces WHERE id = ?1", params![workspace_id], |r| r.get(0))
            .optional()?;
        Ok(head.map(|h| h as u64))
    }

    fn revisions(&self, workspace_id: &str, from: u64, to: u64) -> Result<Vec<RevisionRow>, StoreFailure> {
        let conn = self.lock();
        let mut statement = conn.prepare(
            "SELECT number, request, artifact FROM revisions
             WHERE workspace_id = ?1 AND number BETWEEN ?2 AND ?3 ORDER BY number",
        )?;
        let rows = statement.query_map(params![workspace_id, from as i64, to as i64], |row| {
            Ok(RevisionRow { number: row.get::<_, i64>(0)? as u64, request: row.get(1)?, artifact: row.get(2)? })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}
