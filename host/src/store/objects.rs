//! What every host of a deployment must see alike, by digest: components
//! and artifacts, install records and the operator policy.

use crate::digest::Digest;

use super::StoreError;

/// What the shared store keeps by digest. Both kinds are immutable: a digest
/// names one byte string forever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// A component's `.wasm` bytes.
    Component,
    /// An artifact's canonical JSON.
    Artifact,
}

impl ObjectKind {
    /// `component` or `artifact` (messages and the PostgreSQL `kind` column).
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Component => "component",
            ObjectKind::Artifact => "artifact",
        }
    }
}

/// Identifies one version of the operator policy; a change of stamp means
/// "read the policy again".
pub type PolicyStamp = Option<u128>;

/// What every host of a deployment must see alike: content-addressed
/// components and artifacts, install records and the operator policy. The
/// data directory keeps them in files; a PostgreSQL store keeps them in
/// tables shared by several hosts. Callers re-hash what they read
/// ([`DataDir`] does), so a store is never trusted for integrity.
pub trait ObjectStore: Send + Sync {
    /// Store `bytes` under `digest` (the caller computed it); a digest already stored is left alone.
    fn put(&self, kind: ObjectKind, digest: &Digest, bytes: &[u8]) -> Result<(), StoreError>;
    /// The bytes stored under `digest`, if any (not yet re-hashed).
    fn get(&self, kind: ObjectKind, digest: &Digest) -> Result<Option<Vec<u8>>, StoreError>;
    /// How many bytes are stored under `digest`, if any, without reading them.
    fn size(&self, kind: ObjectKind, digest: &Digest) -> Result<Option<u64>, StoreError>;
    /// Write (or replace) the install record of a component.
    fn put_record(&self, digest: &Digest, record: &serde_json::Value) -> Result<(), StoreError>;
    /// Every install record, in digest order.
    fn records(&self) -> Result<Vec<serde_json::Value>, StoreError>;
    /// The policy text, if any.
    fn read_policy(&self) -> Result<Option<String>, StoreError>;
    /// Replace the policy text.
    fn write_policy(&self, text: &str) -> Result<(), StoreError>;
    /// Replace the policy text only if its stamp is still `expected`
    /// (compare-and-set); `false` when another writer came first.
    fn write_policy_if(&self, expected: PolicyStamp, text: &str) -> Result<bool, StoreError>;
    /// Write the policy text only if there is none yet (several hosts may start at once).
    fn create_policy(&self, text: &str) -> Result<(), StoreError>;
    /// The current policy version (cheap: asked before every use of the policy).
    fn policy_stamp(&self) -> PolicyStamp;
    /// Store the bytes of `source` as a file named by their SHA-256 (see
    /// `files.rs`): at most `limit` bytes, and only with digest `expect`
    /// when given; nothing is visible unless it is stored whole.
    fn put_file(
        &self,
        source: &mut dyn std::io::Read,
        limit: u64,
        expect: Option<&Digest>,
    ) -> Result<(Digest, u64), super::FileError>;
    /// A stored file, if any (not yet re-hashed).
    fn open_file(&self, digest: &Digest) -> Result<Option<Box<dyn super::StoredFile>>, StoreError>;
}
