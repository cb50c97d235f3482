//! The transport-agnostic core: open a data directory, load the portfolio,
//! describe and invoke. The MCP edge and the CLI call only this.
//!
//! - `open.rs`: the stores, the engine, the portfolio, the catalog.
//! - `policy_cache.rs`: the operator policy as this host sees it.
//! - `pipeline.rs`: the invoke pipeline and its entry points, one per caller
//!   shape, through `resolve.rs` (with `route.rs` for `certificate.verify`),
//!   `validate.rs`, `admit.rs`, `execute.rs` (with `verify.rs`, the only
//!   place `VERIFIED` is set) and `record.rs` (episodes and experiment lines);
//!   `stages.rs` holds the values that flow between the stages.
//! - `certificates.rs`: what each certificate needs (role, format, checker),
//!   recorded when its producer made it.
//! - `result.rs`: the one constructor of a `CapabilityResult`.
//! - `diagnostics.rs`: every failure of the pipeline as a typed diagnostic.
//! - `uploads.rs`: files above the input limit, brought in whole.

mod admit;
mod certificates;
mod commits;
mod diagnostics;
mod execute;
mod experiments;
mod grants;
mod open;
mod pipeline;
mod policy_cache;
mod quorum;
mod recall;
mod record;
mod resolve;
mod result;
mod route;
mod stages;
mod uploads;
mod validate;
mod verify;
mod workspace_quota;

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

pub use diagnostics::{argument_error, argument_path, read_arguments};
pub(crate) use diagnostics::{artifact_references, named_in_content};
pub use experiments::{ExperimentError, Experiments, QuotaHold};
pub use open::{GivenComponent, LoadFailure, OpenError, Portfolio, RuntimeConfig, open_state, open_tokens};
pub use recall::{RECHECK_EXPERIMENT, RecheckError, Rechecked};
pub use record::episode_value;
pub use uploads::{UPLOAD_ROLE, UploadError, Uploaded, carried_file};
pub use verify::verification_binding;

/// The loaded portfolio and everything needed to run it.
pub struct Runtime {
    data: DataDir,
    sandbox: Sandbox,
    components: BTreeMap<Digest, Arc<Installed>>,
    bundled: BTreeSet<Digest>,
    /// Components installed as bundled here by this binary or an earlier one.
    installed_bundled: BTreeSet<Digest>,
    catalog: Catalog,
    policy: Mutex<(PolicyStamp, Arc<Policy>)>,
    load_failures: Vec<LoadFailure>,
    episodes: Box<dyn EpisodeStore>,
    experiments: Experiments,
    default_experiment: String,
    metrics: Metrics,
    in_flight: AtomicUsize,
    draining: AtomicBool,
    /// When each capability's last inline attempt went beyond its bounds
    /// (see [`Runtime::try_invoke_quick`]).
    not_quick: Mutex<BTreeMap<String, std::time::Instant>>,
    /// Quick calls' episodes and lines waiting to be written together.
    commits: commits::GroupCommit,
    workspaces: Workspaces,
    /// MCP sessions shared by the hosts of a deployment (a PostgreSQL store).
    sessions: Option<Arc<dyn SessionStore>>,
    /// Operator-issued API tokens (every host of a deployment reads the same).
    tokens: Arc<dyn crate::store::TokenStore>,
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

    /// Whether the component was bundled where it was installed: by this
    /// binary, or by an earlier one whose install record is here (what an
    /// archive records as bundled; never a grant of trust).
    pub fn installed_as_bundled(&self, digest: &Digest) -> bool {
        self.installed_bundled.contains(digest)
    }

    /// A component's stored bytes, re-hashed. A start keeps a bundled
    /// component's copy by its size, so a copy damaged in place is found
    /// here: for a component this binary bundles, the embedded bytes are
    /// returned and the copy written again.
    pub fn component_bytes(&self, digest: &Digest) -> Result<Vec<u8>, crate::store::StoreError> {
        use crate::store::StoreError;
        match self.data.read_component(digest) {
            Err(StoreError::DigestMismatch { .. } | StoreError::NotFound { .. })
                if let Some(bundled) = BUNDLED.iter().find(|c| c.sha256 == digest.to_hex()) =>
            {
                tracing::warn!(component = %digest, "the stored copy of a bundled component was damaged; written again");
                self.data.put_component(bundled.bytes)?;
                Ok(bundled.bytes.to_vec())
            }
            read => read,
        }
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

    /// The canonical bytes of a stored episode, re-hashed: bytes that no
    /// longer match their digest are a corrupt store, never an answer.
    pub fn episode(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError> {
        let bytes = self.episodes.get(digest)?;
        if let Some(bytes) = &bytes
            && Digest::of(bytes) != *digest
        {
            return Err(DbError::Corrupt(format!("episode {digest}: its stored bytes hash to {}", Digest::of(bytes))));
        }
        Ok(bytes)
    }

    /// MCP sessions shared by every host of the deployment, when its store is shared.
    pub fn sessions(&self) -> Option<Arc<dyn SessionStore>> {
        self.sessions.clone()
    }

    /// The deployment's API tokens.
    pub fn tokens(&self) -> Arc<dyn crate::store::TokenStore> {
        self.tokens.clone()
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
    pub fn describe(&self, request: &DescribeRequest) -> Result<crate::catalog::DescribeAnswer, Diagnostic> {
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

    /// The components a set of episodes needs to be re-run: each one's
    /// provider and checker, and for each certificate route the checker that
    /// an episode of the set ran for it, else the one installed now.
    pub fn components_for<'a>(&self, episodes: impl IntoIterator<Item = &'a Value>) -> BTreeSet<Digest> {
        let digest_at = |episode: &Value, pointer: &str| -> Option<Digest> {
            episode.pointer(pointer).and_then(Value::as_str).and_then(|d| d.parse().ok())
        };
        let mut out = BTreeSet::new();
        let mut ran: BTreeMap<String, Digest> = BTreeMap::new();
        let mut routes = BTreeSet::new();
        for episode in episodes {
            out.extend(digest_at(episode, "/provenance/provider_digest"));
            // The router's own NOT_CONCLUDED record names no component.
            out.extend(
                digest_at(episode, "/verification/checker_digest").filter(|d| *d != crate::catalog::router_component()),
            );
            // Under a quorum, every checker it asked.
            let asked = episode.pointer("/verification/quorum/verdicts").and_then(Value::as_array);
            out.extend(asked.into_iter().flatten().filter_map(|v| digest_at(v, "/checker_digest")));
            if episode["verification"].is_object()
                && let Some(checker) = digest_at(episode, "/provenance/provider_digest")
            {
                // A routed check answers as certificate.verify and names the checker it ran.
                let id = episode.pointer("/output/routed_to").and_then(Value::as_str);
                if let Some(id) = id.or_else(|| episode["capability_id"].as_str()) {
                    ran.insert(id.to_owned(), checker);
                }
            }
            if let Some(id) = episode.pointer("/check_with/verify_capability_id").and_then(Value::as_str) {
                routes.insert(id.to_owned());
            }
        }
        for id in routes {
            match ran.get(&id) {
                Some(checker) => out.insert(*checker),
                None => self.catalog.get(&id).is_some_and(|entry| out.insert(entry.component)),
            };
        }
        out
    }
}

#[cfg(test)]
mod tests;
