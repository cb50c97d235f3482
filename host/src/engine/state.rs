//! What one call's store holds: its WASI context and resource table, its
//! memory limiter, its bounded log, and the artifacts it may read.

use std::collections::BTreeMap;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::digest::Digest;
use crate::readable::StoredFile;

use super::LogLine;

/// The artifacts one call may read, by hex digest (only those its request
/// names), and the files those that are uploads carry.
#[derive(Clone, Default)]
pub struct ArtifactAccess {
    pub(super) allowed: BTreeMap<String, Arc<Vec<u8>>>,
    pub(super) files: BTreeMap<String, Arc<FileAccess>>,
}

impl std::fmt::Debug for ArtifactAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArtifactAccess")
            .field("allowed", &self.allowed.keys().collect::<Vec<_>>())
            .field("files", &self.files.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ArtifactAccess {
    /// Allow reading `bytes` under `digest`.
    pub fn allow(&mut self, digest: &Digest, bytes: Arc<Vec<u8>>) {
        self.allowed.insert(digest.to_hex(), bytes);
    }

    /// Allow reading `file` (whose bytes must hash to `file_digest`) through
    /// the upload artifact `artifact`.
    pub fn allow_file(&mut self, artifact: &Digest, file_digest: Digest, file: Box<dyn StoredFile>) {
        let access = FileAccess { file, digest: file_digest, checked: std::sync::OnceLock::new() };
        self.files.insert(artifact.to_hex(), Arc::new(access));
    }
}

/// A file a call may read, re-hashed once before its first byte is served.
pub struct FileAccess {
    pub(super) file: Box<dyn StoredFile>,
    digest: Digest,
    checked: std::sync::OnceLock<Result<(), (String, bool)>>,
}

impl FileAccess {
    /// Whether the file was re-hashed in this call already.
    pub(super) fn hashed(&self) -> bool {
        self.checked.get().is_some()
    }

    /// Whether the stored bytes still hash to the file's digest (read whole
    /// once a call; `Err((message, corrupt))` otherwise).
    pub(super) fn intact(&self) -> Result<(), (String, bool)> {
        self.checked
            .get_or_init(|| match crate::readable::hash_file(self.file.as_ref()) {
                Ok(actual) if actual == self.digest => Ok(()),
                Ok(actual) => Err((format!("file {} is corrupt: its bytes hash to {actual}", self.digest), true)),
                Err(e) => Err((format!("file {} could not be read: {e}", self.digest), false)),
            })
            .clone()
    }
}

/// Per-call host state.
pub struct CallState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limiter: Limiter,
    pub(super) log: Vec<LogLine>,
    pub(super) log_dropped: u64,
    pub(super) artifacts: ArtifactAccess,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// Caps a call's linear memory and records a refusal, so that memory
/// exhaustion is reported as such rather than as the abort it causes.
pub(super) struct Limiter {
    cap: u64,
    total: u64,
    pub(super) refused: Option<u64>,
}

impl Limiter {
    pub(super) fn new(cap: u64) -> Self {
        Limiter { cap, total: 0, refused: None }
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let growth = (desired as u64).saturating_sub(current as u64);
        if self.total.saturating_add(growth) > self.cap {
            self.refused = Some(self.cap);
            return Ok(false);
        }
        self.total += growth;
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}
