//! The transport-agnostic core: open a data directory, load the portfolio,
//! describe and invoke. The MCP edge and the CLI call only this.
//!
//! - `open.rs`: the stores, the engine, the portfolio, the catalog.
//! - `policy_cache.rs`: the operator policy as this host sees it.
//! - `pipeline.rs`: the invoke pipeline and its entry points, one per caller
//!   shape, through `resolve.rs` (with `route.rs` for `certificate.verify`),
//!   `validate.rs`, `admit.rs`, `execute.rs` (with `verify.rs`, the only
//!   place `VERIFIED` is set) and `record.rs` (episodes and experiment lines).
//! - `result.rs`: the one constructor of a `CapabilityResult`.
//! - `diagnostics.rs`: every failure of the pipeline as a typed diagnostic.

mod admit;
mod diagnostics;
mod execute;
mod experiments;
mod open;
mod pipeline;
mod policy_cache;
mod record;
mod resolve;
mod result;
mod route;
mod validate;
mod verify;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use jacobian_guest::protocol::BundleKind;
use serde_json::Value;

use crate::bundled::BUNDLED;
use crate::catalog::{self, Catalog};
use crate::contract::{Code, DescribeRequest, Diagnostic, Stage};
use crate::digest::Digest;
use crate::engine::Sandbox;
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::registry::{InstallRecord, Installed};
use crate::store::{DataDir, DbError, EpisodeStore, PolicyStamp, SessionStore};
use crate::workspace::Workspaces;

pub use experiments::{ExperimentError, Experiments};
pub use open::{LoadFailure, OpenError, Portfolio, RuntimeConfig, open_state};
pub use record::episode_value;
pub use verify::verification_binding;

/// The loaded portfolio and everything needed to run it.
pub struct Runtime {
    data: DataDir,
    sandbox: Sandbox,
    components: BTreeMap<Digest, Arc<Installed>>,
    bundled: BTreeSet<Digest>,
    catalog: Catalog,
    policy: Mutex<(PolicyStamp, Arc<Policy>)>,
    load_failures: Vec<LoadFailure>,
    episodes: Box<dyn EpisodeStore>,
    experiments: Experiments,
    default_experiment: String,
    metrics: Metrics,
    in_flight: AtomicUsize,
    draining: AtomicBool,
    workspaces: Workspaces,
    /// MCP sessions shared by the hosts of a deployment (a PostgreSQL store).
    sessions: Option<Arc<dyn SessionStore>>,
}

impl Runtime {
    /// The installed catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Installed components, by digest.
    pub fn components(&self) -> impl Iterator<Item = &InstallRecord> {
        self.components.values().map(|c| &c.record)
    }

    /// Installed components that could not be loaded.
    pub fn load_failures(&self) -> &[LoadFailure] {
        &self.load_failures
    }

    /// Whether the component counts as bundled here (and so may be
    /// authorized by the policy's `authorize_bundled`).
    pub fn is_bundled(&self, digest: &Digest) -> bool {
        self.bundled.contains(digest)
    }

    /// Whether this binary bundles the component (by built digest).
    pub fn builds_bundled(digest: &Digest) -> bool {
        BUNDLED.iter().any(|c| c.sha256.parse::<Digest>().is_ok_and(|d| d == *digest))
    }

    /// Bundle kind of an installed component.
    pub fn kind_of(&self, digest: &Digest) -> Option<BundleKind> {
        self.components.get(digest).map(|c| c.loaded.kind)
    }

    /// The data directory.
    pub fn data(&self) -> &DataDir {
        &self.data
    }

    /// The engine.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// The experiment store.
    pub fn experiments(&self) -> &Experiments {
        &self.experiments
    }

    /// This runtime's default experiment (one per process unless a session names its own).
    pub fn default_experiment(&self) -> &str {
        &self.default_experiment
    }

    /// The epistemic workspace service.
    pub fn workspaces(&self) -> &Workspaces {
        &self.workspaces
    }

    /// The canonical bytes of a stored episode.
    pub fn episode(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError> {
        self.episodes.get(digest)
    }

    /// MCP sessions shared by every host of the deployment, when its store is shared.
    pub fn sessions(&self) -> Option<Arc<dyn SessionStore>> {
        self.sessions.clone()
    }

    /// Counters for `/metrics`.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Refuse new invocations from now on (graceful shutdown).
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Invocations running now (graceful shutdown waits for zero).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Answer `capability.describe`.
    pub fn describe(&self, request: &DescribeRequest) -> Result<Value, Diagnostic> {
        catalog::describe(&self.catalog, &self.binding(), request).map_err(|e| {
            let code = if e.not_found { Code::CapabilityNotFound } else { Code::InvalidRequest };
            Diagnostic::new(
                code,
                Stage::Request,
                e.message,
                "call capability.describe without capability_id to browse installed ids",
            )
            .with("path", e.path)
        })
    }

    /// The components an episode names: its provider, its checker, and the
    /// checker its certificate routes to (when installed).
    pub fn components_for(&self, episode: &Value) -> BTreeSet<Digest> {
        let mut out = BTreeSet::new();
        for pointer in ["/provenance/provider_digest", "/verification/checker_digest"] {
            if let Some(digest) = episode.pointer(pointer).and_then(Value::as_str).and_then(|d| d.parse().ok()) {
                out.insert(digest);
            }
        }
        if let Some(id) = episode.pointer("/check_with/verify_capability_id").and_then(Value::as_str)
            && let Some(entry) = self.catalog.get(id)
        {
            out.insert(entry.component);
        }
        out
    }
}

#[cfg(test)]
mod tests;
