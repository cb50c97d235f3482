//! Uploaded files in PostgreSQL: `file_chunks` rows of [`FILE_CHUNK`] bytes
//! written under a pending key as the bytes arrive, then renamed to the
//! file's digest and listed in `files` in one transaction (replacing a copy
//! already there, so uploading again repairs a damaged one). A file is read
//! through `files` only, so a partial upload is never visible; its chunks
//! are deleted on every way out, and pending chunks a crash left behind are
//! swept by the next upload once a day old. Every chunk read must have its
//! exact length (a full chunk, or the file's tail).

use crate::digest::Digest;
use crate::store::files::{FILE_CHUNK, FileError, StoredFile, expect, stream_in};
use crate::store::{DbError, StoreError};

use super::{Postgres, begin, pg, query_error};

fn failed(what: impl Into<String>) -> impl FnOnce(DbError) -> StoreError {
    let what = what.into();
    move |source| StoreError::Database { what, source }
}

impl Postgres {
    pub(super) fn put_file_rows(
        &self,
        source: &mut dyn std::io::Read,
        limit: u64,
        expected: Option<&Digest>,
    ) -> Result<(Digest, u64), FileError> {
        let pending = format!("pending-{}", uuid::Uuid::new_v4().simple());
        struct Pending<'a>(&'a Postgres, &'a str, bool);
        impl Drop for Pending<'_> {
            fn drop(&mut self) {
                if self.2 {
                    let (pool, key) = (self.0.pool(), self.1.to_owned());
                    let _ = self.0.block(async move {
                        let client = pool.get().await.map_err(pg)?;
                        client.execute("DELETE FROM file_chunks WHERE digest = $1", &[&key]).await.map_err(query_error)
                    });
                }
            }
        }
        let mut guard = Pending(self, &pending, true);
        let pool = self.pool();
        let _ = self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "DELETE FROM file_chunks WHERE digest LIKE 'pending-%' AND created_at < now() - interval '1 day'",
                    &[],
                )
                .await
                .map_err(query_error)
        });
        let mut seq = 0i32;
        let (digest, size) = stream_in(source, limit, |chunk| {
            let (pool, key, body, at) = (self.pool(), pending.clone(), chunk.to_vec(), seq);
            seq += 1;
            self.block(async move {
                let client = pool.get().await.map_err(pg)?;
                client
                    .execute("INSERT INTO file_chunks (digest, seq, body) VALUES ($1, $2, $3)", &[&key, &at, &body])
                    .await
                    .map_err(query_error)?;
                Ok(())
            })
            .map_err(failed("an uploaded file"))
        })?;
        let digest = expect(expected, digest)?;
        let (pool, key, hex, length) = (self.pool(), pending.clone(), digest.to_hex(), size as i64);
        self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let transaction = begin(&mut client).await?;
            transaction.execute("DELETE FROM file_chunks WHERE digest = $1", &[&hex]).await.map_err(query_error)?;
            transaction
                .execute("UPDATE file_chunks SET digest = $2 WHERE digest = $1", &[&key, &hex])
                .await
                .map_err(query_error)?;
            transaction
                .execute(
                    "INSERT INTO files (digest, size) VALUES ($1, $2) \
                         ON CONFLICT (digest) DO UPDATE SET size = EXCLUDED.size",
                    &[&hex, &length],
                )
                .await
                .map_err(query_error)?;
            transaction.commit().await.map_err(query_error)?;
            Ok(())
        })
        .map_err(failed(format!("file {digest}")))?;
        // Renamed: nothing pending is left.
        guard.2 = false;
        drop(guard);
        Ok((digest, size))
    }

    pub(super) fn open_file_rows(&self, digest: &Digest) -> Result<Option<Box<dyn StoredFile>>, StoreError> {
        let (pool, hex) = (self.pool(), digest.to_hex());
        let size: Option<i64> = self
            .block(async move {
                let client = pool.get().await.map_err(pg)?;
                let row =
                    client.query_opt("SELECT size FROM files WHERE digest = $1", &[&hex]).await.map_err(query_error)?;
                Ok(row.map(|row| row.get(0)))
            })
            .map_err(failed(format!("file {digest}")))?;
        Ok(size.map(|size| {
            Box::new(RowFile { store: self.clone(), hex: digest.to_hex(), size: size as u64, last: Default::default() })
                as _
        }))
    }
}

/// A file read from its chunk rows; the last chunk read is kept, so reads
/// smaller than a chunk, in order, fetch each chunk once.
struct RowFile {
    store: Postgres,
    hex: String,
    size: u64,
    last: std::sync::Mutex<Option<(i32, Vec<u8>)>>,
}

impl StoredFile for RowFile {
    fn len(&self) -> u64 {
        self.size
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = (offset + buf.len() as u64).min(self.size);
        if offset >= end {
            return Ok(0);
        }
        let chunk = FILE_CHUNK as u64;
        let (first, last) = ((offset / chunk) as i32, ((end - 1) / chunk) as i32);
        let mut kept = self.last.lock().unwrap_or_else(|e| e.into_inner());
        // A chunk's exact length: full, or the tail of the file.
        let expected = |seq: i32| (self.size - u64::from(seq as u32) * chunk).min(chunk) as usize;
        if first == last
            && let Some((seq, body)) = kept.as_ref()
            && *seq == first
            && body.len() == expected(first)
        {
            let from = (offset - u64::from(first as u32) * chunk) as usize;
            let n = ((end - offset) as usize).min(body.len().saturating_sub(from));
            buf[..n].copy_from_slice(&body[from..from + n]);
            return Ok(n);
        }
        let (pool, hex) = (self.store.pool(), self.hex.clone());
        let rows: Vec<(i32, Vec<u8>)> = self
            .store
            .block(async move {
                let client = pool.get().await.map_err(pg)?;
                let rows = client
                    .query(
                        "SELECT seq, body FROM file_chunks WHERE digest = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq",
                        &[&hex, &first, &last],
                    )
                    .await
                    .map_err(query_error)?;
                Ok(rows.into_iter().map(|row| (row.get(0), row.get(1))).collect())
            })
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut done = 0usize;
        let mut kept_chunk = None;
        for (seq, body) in rows {
            let start = u64::from(seq as u32) * chunk;
            let from = (offset + done as u64).saturating_sub(start) as usize;
            if start + from as u64 != offset + done as u64 || body.len() != expected(seq) {
                return Err(std::io::Error::other(format!("file {}: chunk {seq} is missing or short", self.hex)));
            }
            let n = (body.len() - from).min((end - offset) as usize - done);
            buf[done..done + n].copy_from_slice(&body[from..from + n]);
            done += n;
            kept_chunk = Some((seq, body));
        }
        if done as u64 != end - offset {
            return Err(std::io::Error::other(format!("file {}: chunks are missing", self.hex)));
        }
        *kept = kept_chunk;
        Ok(done)
    }
}
