//! Episodes: every invocation's complete result, durable in SQLite and
//! addressed by the SHA-256 of its canonical JSON (`episode://sha256/<hex>`).
//!
//! An episode excludes timings (`accounting`) and transport metadata, so
//! identical invocations have the same episode and the same URI.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use crate::database::DbError;
use crate::digest::Digest;

/// The URI scheme prefix of episodes.
pub const EPISODE_URI_PREFIX: &str = "episode://sha256/";

/// Where episodes are kept: the data directory's SQLite database, or the
/// shared PostgreSQL database of several hosts.
pub trait EpisodeStore: Send + Sync {
    /// Store canonical episode bytes under `digest` (idempotent).
    fn put(&self, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError>;
    /// The episode's canonical bytes.
    fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError>;
}

/// The episode store.
pub struct Episodes {
    store: Box<dyn EpisodeStore>,
}

/// A database failure.
#[derive(Debug, thiserror::Error)]
#[error("episode store: {0}")]
pub struct EpisodeError(#[from] DbError);

impl Episodes {
    /// Episodes kept in `store`.
    pub fn new(store: Box<dyn EpisodeStore>) -> Self {
        Episodes { store }
    }

    /// Store canonical episode bytes (idempotent); returns the digest.
    pub fn put(&self, capability_id: &str, body: &[u8]) -> Result<Digest, EpisodeError> {
        let digest = Digest::of(body);
        self.store.put(&digest, capability_id, body)?;
        Ok(digest)
    }

    /// The episode's canonical bytes.
    pub fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, EpisodeError> {
        Ok(self.store.get(digest)?)
    }
}

/// Episodes in the data directory's SQLite database.
pub struct SqliteEpisodes {
    conn: Mutex<Connection>,
}

impl SqliteEpisodes {
    /// Open (creating) the database at `path` (a fixed name inside the data directory).
    pub fn open(path: &Path) -> Result<Self, DbError> {
        let conn = crate::database::open(
            path,
            crate::database::Durability::Normal,
            "CREATE TABLE IF NOT EXISTS episodes (
                digest TEXT PRIMARY KEY,
                capability_id TEXT NOT NULL,
                body BLOB NOT NULL
            ) STRICT;",
        )?;
        Ok(SqliteEpisodes { conn: Mutex::new(conn) })
    }
}

impl EpisodeStore for SqliteEpisodes {
    fn put(&self, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError> {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        conn.prepare_cached("INSERT OR IGNORE INTO episodes (digest, capability_id, body) VALUES (?1, ?2, ?3)")?
            .execute(params![digest.to_hex(), capability_id, body])?;
        Ok(())
    }

    fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError> {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let body = conn
            .query_row("SELECT body FROM episodes WHERE digest = ?1", params![digest.to_hex()], |row| row.get(0))
            .optional()?;
        Ok(body)
    }
}

/// `episode://sha256/<hex>`.
pub fn episode_uri(digest: &Digest) -> String {
    format!("{EPISODE_URI_PREFIX}{}", digest.to_hex())
}
