//! Store failures: of the data directory's files, of either database, and
//! a schema newer than this binary.

use std::io;
use std::path::PathBuf;

use crate::digest::Digest;

/// Storage failures.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("data directory {path}")]
    Open { path: PathBuf, source: io::Error },
    #[error("{what} {digest} not found")]
    NotFound { what: &'static str, digest: Digest },
    #[error("{what} {expected} is corrupt: its bytes hash to {actual}")]
    DigestMismatch { what: &'static str, expected: Digest, actual: Digest },
    #[error("{what}")]
    Io { what: String, source: io::Error },
    #[error("{what}")]
    Database { what: String, source: DbError },
}

impl StoreError {
    /// Whether the store itself failed (I/O, database), as opposed to
    /// something missing or corrupt: the caller should say STORAGE_FAILED.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Open { .. } | StoreError::Io { .. } | StoreError::Database { .. })
    }
}

/// A failure of whichever database backs a store (SQLite or PostgreSQL).
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The embedded SQLite database.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// The shared PostgreSQL database.
    #[error("postgres: {0}")]
    Postgres(String),
    /// A stored value that cannot be what was written (a row edited behind the store's back).
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// The write-ahead log could not be synced (the write is not
    /// acknowledged) or its checkpointer could not start.
    #[error("the database's write-ahead log: {0}")]
    Log(io::Error),
}

impl DbError {
    /// The same failure again, for each of several writes it failed together.
    pub fn for_each(&self) -> DbError {
        match self {
            DbError::Sqlite(rusqlite::Error::SqliteFailure(code, message)) => {
                DbError::Sqlite(rusqlite::Error::SqliteFailure(*code, message.clone()))
            }
            DbError::Sqlite(other) => DbError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
                Some(other.to_string()),
            )),
            DbError::Postgres(message) => DbError::Postgres(message.clone()),
            DbError::Corrupt(message) => DbError::Corrupt(message.clone()),
            DbError::Log(error) => DbError::Log(std::io::Error::new(error.kind(), error.to_string())),
        }
    }
}

impl From<rusqlite::Error> for StoreFailure {
    fn from(error: rusqlite::Error) -> Self {
        StoreFailure(error.into())
    }
}

/// A database failure seen by a workspace, episode or experiment store.
#[derive(Debug, thiserror::Error)]
#[error("workspace store")]
pub struct StoreFailure(#[from] pub DbError);

/// A database written by a newer Jacobian: nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{target}: the database has schema version {found}, newer than this binary's {supported}; upgrade jacobian \
     (nothing was changed)"
)]
pub struct SchemaTooNew {
    /// Which database (a path, or host:port/database; never a password).
    pub target: String,
    /// The version found.
    pub found: i32,
    /// The newest version this binary knows.
    pub supported: i32,
}
