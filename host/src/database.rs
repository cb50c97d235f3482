//! The one SQLite database of a data directory (`jacobian.db`).

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

/// How hard a commit waits for the disk.
#[derive(Debug, Clone, Copy)]
pub enum Durability {
    /// `synchronous=NORMAL`: a crash may lose the last commits, never corrupt (episodes).
    Normal,
    /// `synchronous=FULL`: a commit survives a crash once it returns (workspaces).
    Full,
}

/// Open `path` in WAL mode with a busy timeout and run `schema`.
pub fn open(path: &Path, durability: Durability, schema: &str) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let synchronous = match durability {
        Durability::Normal => "NORMAL",
        Durability::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", synchronous)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.execute_batch(schema)?;
    Ok(conn)
}

/// A failure of whichever database backs a store (SQLite or PostgreSQL).
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The embedded SQLite database.
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The shared PostgreSQL database.
    #[error("postgres: {0}")]
    Postgres(String),
}
