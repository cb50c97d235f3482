//! The data directory: components, artifacts, install records, the
//! precompiled-code cache and the policy file.
//!
//! **Boundary:** everything here goes through a `cap_std::fs::Dir` handle
//! opened once on the data directory. File names are built only from
//! validated digests and fixed names, so no name a request or a bundle
//! supplies can reach outside it. Every write is atomic (temporary file, then
//! rename) and content-addressed files are never overwritten.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::digest::{Digest, canonical_json};

const COMPONENTS: &str = "components";
const ARTIFACTS: &str = "artifacts";
const CACHE: &str = "cache";
const REGISTRY: &str = "registry";
const TMP: &str = "tmp";
/// The operator policy file inside the data directory.
pub const POLICY_FILE: &str = "policy.toml";

/// Storage failures.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("data directory {path}: {source}")]
    Open { path: PathBuf, source: io::Error },
    #[error("{what} {digest} not found")]
    NotFound { what: &'static str, digest: Digest },
    #[error("{what} {expected} is corrupt: its bytes hash to {actual}")]
    DigestMismatch { what: &'static str, expected: Digest, actual: Digest },
    #[error("{what}: {source}")]
    Io { what: String, source: io::Error },
}

/// Handle on the data directory.
pub struct DataDir {
    root: Dir,
    path: PathBuf,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl DataDir {
    /// Open (creating if needed) the data directory at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open { path: path.to_owned(), source };
        std::fs::create_dir_all(path).map_err(open_err)?;
        let root = Dir::open_ambient_dir(path, ambient_authority()).map_err(open_err)?;
        for sub in [COMPONENTS, ARTIFACTS, CACHE, REGISTRY, TMP] {
            root.create_dir_all(sub).map_err(open_err)?;
        }
        Ok(DataDir { root, path: path.to_owned() })
    }

    /// Where it is (for messages only; all access goes through the handle).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Store component bytes under their digest (idempotent).
    pub fn put_component(&self, bytes: &[u8]) -> Result<Digest, StoreError> {
        let digest = Digest::of(bytes);
        self.write_once(&component_name(&digest), bytes)?;
        Ok(digest)
    }

    /// Read component bytes, re-hashing them.
    pub fn read_component(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.read_verified("component", &component_name(digest), digest)
    }

    /// Store an artifact envelope as canonical JSON; returns its digest.
    pub fn put_artifact(&self, envelope: &serde_json::Value) -> Result<(Digest, u64), StoreError> {
        let bytes = canonical_json(envelope);
        Ok((self.put_canonical(&bytes)?, bytes.len() as u64))
    }

    /// Store artifact bytes that are already canonical JSON.
    pub fn put_canonical(&self, bytes: &[u8]) -> Result<Digest, StoreError> {
        let digest = Digest::of(bytes);
        self.write_once(&artifact_name(&digest), bytes)?;
        Ok(digest)
    }

    /// Read an artifact, re-hashing it.
    pub fn read_artifact(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.read_verified("artifact", &artifact_name(digest), digest)
    }

    /// Precompiled code for `digest` under engine key `key`, if present and intact.
    pub fn cached_code(&self, key: &str, digest: &Digest) -> Option<Vec<u8>> {
        let dir = format!("{CACHE}/{}", sanitize_key(key));
        let code = self.root.read(format!("{dir}/{}.cwasm", digest.to_hex())).ok()?;
        let recorded = self.root.read_to_string(format!("{dir}/{}.cwasm.sha256", digest.to_hex())).ok()?;
        (Digest::of(&code).to_hex() == recorded.trim()).then_some(code)
    }

    /// Store precompiled code for `digest` under engine key `key`.
    pub fn put_cached_code(&self, key: &str, digest: &Digest, code: &[u8]) -> Result<(), StoreError> {
        let dir = format!("{CACHE}/{}", sanitize_key(key));
        self.root.create_dir_all(&dir).map_err(|source| StoreError::Io { what: dir.clone(), source })?;
        self.write_replace(&format!("{dir}/{}.cwasm", digest.to_hex()), code)?;
        self.write_replace(&format!("{dir}/{}.cwasm.sha256", digest.to_hex()), Digest::of(code).to_hex().as_bytes())
    }

    /// Write the install record of a component.
    pub fn put_record(&self, digest: &Digest, record: &serde_json::Value) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(record).unwrap_or_default();
        self.write_replace(&format!("{REGISTRY}/{}.json", digest.to_hex()), &bytes)
    }

    /// Every install record, in digest order.
    pub fn records(&self) -> Result<Vec<serde_json::Value>, StoreError> {
        let io_err = |source| StoreError::Io { what: REGISTRY.into(), source };
        let mut names: Vec<String> = self
            .root
            .read_dir(REGISTRY)
            .map_err(io_err)?
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".json"))
            .collect();
        names.sort();
        let mut records = Vec::new();
        for name in names {
            let text = self.root.read(format!("{REGISTRY}/{name}")).map_err(io_err)?;
            let value = serde_json::from_slice(&text).map_err(|e| StoreError::Io {
                what: format!("{REGISTRY}/{name}"),
                source: io::Error::new(io::ErrorKind::InvalidData, e),
            })?;
            records.push(value);
        }
        Ok(records)
    }

    /// Whether an install record exists for `digest`.
    pub fn has_record(&self, digest: &Digest) -> bool {
        self.root.exists(format!("{REGISTRY}/{}.json", digest.to_hex()))
    }

    /// The policy file's text, if present.
    pub fn read_policy(&self) -> Result<Option<String>, StoreError> {
        match self.root.read_to_string(POLICY_FILE) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { what: POLICY_FILE.into(), source }),
        }
    }

    /// Replace the policy file atomically.
    pub fn write_policy(&self, text: &str) -> Result<(), StoreError> {
        self.write_replace(POLICY_FILE, text.as_bytes())
    }

    /// Modification time of the policy file (to notice operator changes).
    pub fn policy_modified(&self) -> Option<std::time::SystemTime> {
        self.root.metadata(POLICY_FILE).ok()?.modified().ok().map(|t| t.into_std())
    }

    fn read_verified(&self, what: &'static str, name: &str, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        let bytes = match self.root.read(name) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound { what, digest: *digest });
            }
            Err(source) => return Err(StoreError::Io { what: name.into(), source }),
        };
        let actual = Digest::of(&bytes);
        if actual != *digest {
            return Err(StoreError::DigestMismatch { what, expected: *digest, actual });
        }
        Ok(bytes)
    }

    fn write_once(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        if self.root.exists(name) {
            return Ok(());
        }
        self.write_replace(name, bytes)
    }

    fn write_replace(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let io_err = |source| StoreError::Io { what: name.to_owned(), source };
        let temp = format!("{TMP}/{}-{}", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed));
        self.root.write(&temp, bytes).map_err(io_err)?;
        self.root.rename(&temp, &self.root, name).map_err(io_err)
    }
}

fn component_name(digest: &Digest) -> String {
    format!("{COMPONENTS}/{}.wasm", digest.to_hex())
}

fn artifact_name(digest: &Digest) -> String {
    format!("{ARTIFACTS}/{}.json", digest.to_hex())
}

fn sanitize_key(key: &str) -> String {
    key.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}
