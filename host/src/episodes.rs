//! Episodes: every invocation's complete result, durable in SQLite and
//! addressed by the SHA-256 of its canonical JSON (`episode://sha256/<hex>`).
//!
//! An episode excludes timings (`accounting`) and transport metadata, so
//! identical invocations have the same episode and the same URI.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use crate::digest::Digest;

/// The URI scheme prefix of episodes.
pub const EPISODE_URI_PREFIX: &str = "episode://sha256/";

/// The episode store.
pub struct Episodes {
    conn: Mutex<Connection>,
}

/// A database failure.
#[derive(Debug, thiserror::Error)]
#[error("episode store: {0}")]
pub struct EpisodeError(#[from] rusqlite::Error);

impl Episodes {
    /// Open (creating) the database at `path` (a fixed name inside the data directory).
    pub fn open(path: &Path) -> Result<Self, EpisodeError> {
        let conn = crate::database::open(
            path,
            crate::database::Durability::Normal,
            "CREATE TABLE IF NOT EXISTS episodes (
                digest TEXT PRIMARY KEY,
                capability_id TEXT NOT NULL,
                body BLOB NOT NULL
            ) STRICT;",
        )?;
        Ok(Episodes { conn: Mutex::new(conn) })
    }

    /// Store canonical episode bytes (idempotent); returns the digest.
    pub fn put(&self, capability_id: &str, body: &[u8]) -> Result<Digest, EpisodeError> {
        let digest = Digest::of(body);
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        conn.prepare_cached("INSERT OR IGNORE INTO episodes (digest, capability_id, body) VALUES (?1, ?2, ?3)")?
            .execute(params![digest.to_hex(), capability_id, body])?;
        Ok(digest)
    }

    /// The episode's canonical bytes.
    pub fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, EpisodeError> {
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
