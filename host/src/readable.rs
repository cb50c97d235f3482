//! A file read by offset, never whole: what the stores hand out for an
//! uploaded file and what a call's sandbox reads from (both import it from
//! here, so the sandbox never imports the stores), and its re-hash.

use std::io;

use crate::digest::Digest;

/// Bytes moved at a time, in and out.
pub const FILE_CHUNK: usize = 1 << 20;

/// A stored file, read by offset (not re-hashed: the caller does that).
pub trait StoredFile: Send + Sync {
    /// Its length in bytes.
    fn len(&self) -> u64;
    /// Whether it is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Read into `buf` from `offset`; fewer bytes only at the end.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
}

/// Re-hash a stored file from its start (a read of every byte).
pub fn hash_file(file: &dyn StoredFile) -> io::Result<Digest> {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; FILE_CHUNK];
    let mut offset = 0;
    while offset < file.len() {
        let n = file.read_at(offset, &mut buffer)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file is shorter than recorded"));
        }
        hasher.update(&buffer[..n]);
        offset += n as u64;
    }
    Ok(Digest::from_bytes(hasher.finalize().into()))
}
