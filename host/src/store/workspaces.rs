//! Durable workspace storage: every accepted write is one transaction that
//! checks the idempotency key and the branch head, then appends.

use super::StoreFailure;

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
