//! Files brought in whole by an operator or a client (`jacobian artifact
//! put`, `PUT /artifacts/sha256/…`): stored by the SHA-256 of their bytes,
//! streamed in (hashed and counted on the way, refused once past the bound),
//! visible only once complete and, when the caller named a digest, only if
//! the bytes have it; read back by offset, never whole.

use std::io;

use crate::digest::Digest;

use super::StoreError;

pub use crate::readable::{FILE_CHUNK, StoredFile, hash_file};

/// Why a file was not stored. Nothing of it is visible in any case.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// More bytes came than the bound allows.
    #[error("the file is larger than the limit of {limit} bytes")]
    TooLarge { limit: u64 },
    /// The bytes do not have the digest the caller named.
    #[error("the bytes hash to {actual}, not to the {expected} named for them")]
    Mismatch { expected: Digest, actual: Digest },
    /// The source of the bytes failed (a client gone, a disk).
    #[error("reading the file: {0}")]
    Source(io::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Reads `source` to its end in chunks, hashing and counting, handing each
/// chunk to `sink`; refuses once more than `limit` bytes came.
pub(crate) fn stream_in(
    source: &mut dyn io::Read,
    limit: u64,
    mut sink: impl FnMut(&[u8]) -> Result<(), StoreError>,
) -> Result<(Digest, u64), FileError> {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; FILE_CHUNK];
    let mut total = 0u64;
    loop {
        // Fill the buffer (a source may hand out a little at a time).
        let mut filled = 0;
        while filled < buffer.len() {
            match source.read(&mut buffer[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(FileError::Source(e)),
            }
        }
        if filled == 0 {
            return Ok((Digest::from_bytes(hasher.finalize().into()), total));
        }
        total += filled as u64;
        if total > limit {
            return Err(FileError::TooLarge { limit });
        }
        hasher.update(&buffer[..filled]);
        sink(&buffer[..filled])?;
    }
}

/// The check every store makes before a file becomes visible.
pub(crate) fn expect(expected: Option<&Digest>, actual: Digest) -> Result<Digest, FileError> {
    match expected {
        Some(expected) if *expected != actual => Err(FileError::Mismatch { expected: *expected, actual }),
        _ => Ok(actual),
    }
}

/// A file in the data directory.
pub(crate) struct LocalFile(pub(crate) std::fs::File, pub(crate) u64);

impl StoredFile for LocalFile {
    fn len(&self) -> u64 {
        self.1
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt as _;
        let mut done = 0;
        while done < buf.len() {
            match self.0.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}
