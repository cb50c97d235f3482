//! The transport-agnostic core: open a data directory, load the portfolio,
//! describe and invoke. The MCP edge and the CLI call only this.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use jacobian_guest::protocol::{
    ARTIFACT_VERSION, BundleKind, CheckRequest, Lineage, Mode, Outcome, ProducerAssurance, Refusal, Verdict,
    VerdictKind,
};
use serde_json::{Value, json};

use crate::bundled::BUNDLED;
use crate::catalog::{self, Binding, Catalog, CatalogEntry, EntryKind};
use crate::contract::{
    Accounting, ArtifactRef, Assurance, BudgetRequest, CapabilityResult, CheckRoute, Code, DescribeRequest, Diagnostic,
    InvokeRequest, Provenance, RESULT_CONTRACT, Relation, Relationship, ResultView, SCOPE_RULE, Stage, Status,
    Transport, VerificationRecord, VerificationStatus,
};
use crate::digest::{Digest, canonical_json};
use crate::engine::{
    ArtifactAccess, CallBudgets, CallControl, CallFailure, CallReport, EngineConfig, Entry, InlineLimits, Sandbox,
};
use crate::episodes::{EpisodeError, Episodes, SqliteEpisodes, episode_uri};
use crate::experiments::{ExperimentError, Experiments, InvocationRecord, SqliteExperiments, StopReason};
use crate::metrics::Metrics;
use crate::policy::{Policy, PolicyError};
use crate::registry::{self, InstallError, InstallRecord, Installed, TakenIds, Tier};
use crate::store::{DataDir, PolicyStamp, StoreError};
use crate::workspace::Workspaces;
use crate::workspace::store::{SqliteStore, WorkspaceStore};

/// The SQLite database inside the data directory (a fixed name).
pub const DATABASE_FILE: &str = "jacobian.db";

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreConfig::DataDir => f.write_str("DataDir"),
            StoreConfig::Postgres(_) => f.write_str("Postgres(<connection string>)"),
        }
    }
}

/// How to open a runtime.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// The data directory.
    pub data_dir: PathBuf,
    /// Engine settings.
    pub engine: EngineConfig,
    /// Which components count as bundled.
    pub portfolio: Portfolio,
    /// Where the shared state lives.
    pub store: StoreConfig,
}

/// Where a runtime keeps what every host must see alike (components,
/// artifacts, install records, policy, episodes, experiments, workspaces).
/// Its `Debug` never shows the connection string (it carries a password).
#[derive(Clone, Default, PartialEq, Eq)]
pub enum StoreConfig {
    /// The data directory itself: files and its SQLite database (one host).
    #[default]
    DataDir,
    /// A PostgreSQL database shared by several hosts (`postgres://…`); the
    /// data directory keeps only this host's precompiled-code cache.
    Postgres(String),
}

impl RuntimeConfig {
    /// The bundled portfolio over `data_dir` with default engine settings.
    pub fn new(data_dir: PathBuf) -> Self {
        RuntimeConfig {
            data_dir,
            engine: EngineConfig::default(),
            portfolio: Portfolio::Bundled,
            store: StoreConfig::DataDir,
        }
    }
}

/// The components a runtime installs as bundled at open.
#[derive(Debug, Clone, Default)]
pub enum Portfolio {
    /// The components built into this binary.
    #[default]
    Bundled,
    /// These (name, bytes) instead: an archive's bundled components, for replay.
    Given(Vec<(String, Vec<u8>)>),
}

/// Every store a runtime uses, opened as `config.store` says.
struct Stores {
    data: DataDir,
    episodes: Episodes,
    experiments: Experiments,
    workspaces: Box<dyn WorkspaceStore>,
    postgres: Option<crate::postgres::Postgres>,
}

fn open_stores(config: &RuntimeConfig) -> Result<Stores, OpenError> {
    Ok(match &config.store {
        StoreConfig::DataDir => {
            let data = DataDir::open(&config.data_dir)?;
            let database = data.path().join(DATABASE_FILE);
            Stores {
                episodes: Episodes::new(Box::new(SqliteEpisodes::open(&database)?)),
                experiments: Experiments::new(Box::new(SqliteExperiments::open(&database)?)),
                workspaces: Box::new(SqliteStore::open(&database).map_err(|e| e.0)?),
                data,
                postgres: None,
            }
        }
        StoreConfig::Postgres(url) => {
            let shared = crate::postgres::Postgres::connect(url)?;
            let report = shared.migrate()?;
            if !report.applied.is_empty() {
                tracing::info!(target = %report.target, applied = ?report.applied, "database schema migrated");
            }
            Stores {
                data: DataDir::with_objects(&config.data_dir, Box::new(shared.clone()))?,
                episodes: Episodes::new(Box::new(shared.clone())),
                experiments: Experiments::new(Box::new(shared.clone())),
                workspaces: Box::new(shared.clone()),
                postgres: Some(shared),
            }
        }
    })
}

/// The shared state alone, without loading any component: what operator
/// commands that must work on a broken deployment (`jacobian policy`) use.
pub fn open_state(config: &RuntimeConfig) -> Result<DataDir, OpenError> {
    Ok(open_stores(config)?.data)
}

/// A runtime that could not start.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("engine: {0}")]
    Engine(String),
    #[error(transparent)]
    Episodes(#[from] EpisodeError),
    #[error(transparent)]
    Experiments(#[from] ExperimentError),
    #[error("bundled component {package}: {source}")]
    Bundled { package: String, source: Box<InstallError> },
    #[error(transparent)]
    Postgres(#[from] crate::postgres::PgOpenError),
    #[error("{0}")]
    Database(#[from] crate::database::DbError),
}

/// A component that is installed but could not be loaded (e.g. tampered bytes).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LoadFailure {
    /// Its recorded digest.
    pub digest: Digest,
    /// Why it is unavailable.
    pub reason: String,
}

/// The loaded portfolio and everything needed to run it.
pub struct Runtime {
    data: DataDir,
    sandbox: Sandbox,
    components: BTreeMap<Digest, Arc<Installed>>,
    bundled: BTreeSet<Digest>,
    catalog: Catalog,
    policy: Mutex<(PolicyStamp, Arc<Policy>)>,
    load_failures: Vec<LoadFailure>,
    episodes: Episodes,
    experiments: Experiments,
    default_experiment: String,
    metrics: Metrics,
    in_flight: std::sync::atomic::AtomicUsize,
    draining: std::sync::atomic::AtomicBool,
    workspaces: Workspaces,
    /// The shared PostgreSQL store, when one is configured.
    postgres: Option<crate::postgres::Postgres>,
}

/// Counts an invocation as in flight while alive.
struct InFlight<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a std::sync::atomic::AtomicUsize) -> Self {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Runtime {
    /// Open the data directory, install the bundled portfolio (idempotent) and
    /// load every operator-installed component.
    pub fn open(config: RuntimeConfig) -> Result<Self, OpenError> {
        let Stores { data, episodes, experiments, workspaces: workspace_store, postgres } = open_stores(&config)?;
        let sandbox = Sandbox::new(config.engine).map_err(|e| OpenError::Engine(format!("{e:#}")))?;
        let ceiling = sandbox.config().max_memory_bytes;
        // Hosts starting together: the first writes the default, all read the same.
        let policy = match data.read_policy()? {
            Some(text) => Policy::parse(&text, ceiling)?,
            None => {
                data.create_policy(&Policy::default().to_toml())?;
                Policy::parse(&data.read_policy()?.unwrap_or_default(), ceiling)?
            }
        };
        let budgets: CallBudgets = policy.budgets.into();
        let records: BTreeMap<Digest, InstallRecord> = data
            .records()?
            .into_iter()
            .filter_map(|v| serde_json::from_value::<InstallRecord>(v).ok())
            .map(|r| (r.digest, r))
            .collect();

        let mut components = BTreeMap::new();
        let mut bundled = BTreeSet::new();
        let mut taken = TakenIds::new();
        let portfolio: Vec<(String, Digest, &[u8])> = match &config.portfolio {
            Portfolio::Bundled => BUNDLED
                .iter()
                .map(|c| {
                    let digest =
                        c.sha256.parse().map_err(|e: crate::digest::DigestError| OpenError::Engine(e.to_string()));
                    digest.map(|d| (c.package.to_owned(), d, c.bytes))
                })
                .collect::<Result<_, _>>()?,
            Portfolio::Given(list) => {
                list.iter().map(|(name, bytes)| (name.clone(), Digest::of(bytes), &bytes[..])).collect()
            }
        };
        for (package, expected, bytes) in portfolio {
            let bundle_error = |e| OpenError::Bundled { package: package.clone(), source: Box::new(e) };
            let installed = match records.get(&expected) {
                Some(record) if record.tier == Tier::Bundled => {
                    data.put_component(bytes)?;
                    let loaded = registry::load(&sandbox, &data, expected, bytes).map_err(bundle_error)?;
                    Installed { record: record.clone(), loaded }
                }
                _ => registry::install(&sandbox, &data, bytes, Tier::Bundled, Some(expected), &taken, &budgets)
                    .map_err(bundle_error)?,
            };
            claim_ids(&mut taken, &installed);
            bundled.insert(expected);
            components.insert(expected, Arc::new(installed));
        }
        let mut load_failures = Vec::new();
        for record in records.into_values().filter(|r| r.tier == Tier::Operator) {
            let digest = record.digest;
            let clash = ids_of(&record).into_iter().find(|id| taken.contains_key(id));
            let result = match clash {
                Some(id) => Err(format!("capability id {id} is already provided by another component")),
                None => registry::reload(&sandbox, &data, record).map_err(|e| e.to_string()),
            };
            match result {
                Ok(installed) => {
                    claim_ids(&mut taken, &installed);
                    components.insert(digest, Arc::new(installed));
                }
                Err(reason) => {
                    tracing::warn!(component = %digest, %reason, "installed component not loaded");
                    load_failures.push(LoadFailure { digest, reason });
                }
            }
        }
        let catalog = Catalog::build(components.values().map(Arc::as_ref));
        let workspaces = Workspaces::new(workspace_store);
        let modified = data.policy_stamp();
        Ok(Runtime {
            data,
            sandbox,
            components,
            bundled,
            catalog,
            policy: Mutex::new((modified, Arc::new(policy))),
            load_failures,
            episodes,
            experiments,
            default_experiment: crate::experiments::mint_id(),
            metrics: Metrics::default(),
            in_flight: Default::default(),
            draining: Default::default(),
            workspaces,
            postgres,
        })
    }

    /// Install an operator bundle. Idempotent by digest.
    pub fn install(&self, bytes: &[u8], expect: Option<Digest>) -> Result<(InstallRecord, bool), InstallError> {
        let digest = Digest::of(bytes);
        if let Some(expected) = expect
            && expected != digest
        {
            return Err(InstallError::DigestMismatch { expected, actual: digest });
        }
        if let Some(existing) = self.components.get(&digest) {
            return Ok((existing.record.clone(), false));
        }
        let mut taken = TakenIds::new();
        for installed in self.components.values() {
            claim_ids(&mut taken, installed);
        }
        let budgets: CallBudgets = self.policy().budgets.into();
        let installed = registry::install(&self.sandbox, &self.data, bytes, Tier::Operator, expect, &taken, &budgets)?;
        Ok((installed.record, true))
    }

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

    /// Digests of the checkers bundled in this binary.
    pub fn is_bundled(&self, digest: &Digest) -> bool {
        self.bundled.contains(digest)
    }

    /// The data directory.
    pub fn data(&self) -> &DataDir {
        &self.data
    }

    /// The engine.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// The operator policy in force, re-read whenever its stored version changes
    /// (the file's modification time, or the PostgreSQL version column).
    /// The stamp is read outside the lock, so a slow store never serializes calls.
    pub fn policy(&self) -> Arc<Policy> {
        let stamp = self.data.policy_stamp();
        {
            let guard = self.policy.lock().unwrap_or_else(|e| e.into_inner());
            if stamp.is_some() && stamp == guard.0 {
                return guard.1.clone();
            }
        }
        let fresh = self
            .data
            .read_policy()
            .ok()
            .flatten()
            .and_then(|text| Policy::parse(&text, self.sandbox.config().max_memory_bytes).ok());
        let mut guard = self.policy.lock().unwrap_or_else(|e| e.into_inner());
        *guard = match fresh {
            Some(policy) => (stamp, Arc::new(policy)),
            None => {
                // A policy that became unreadable or invalid denies every
                // checker rather than keeping stale authority, and is read
                // again on the next call (no stamp is cached), so a store
                // that recovers restores it.
                let mut deny = (*guard.1).clone();
                deny.checkers.authorize_bundled = false;
                deny.checkers.authorized.clear();
                (None, Arc::new(deny))
            }
        };
        guard.1.clone()
    }

    /// Change the stored policy (operator only: the CLI calls this): read it
    /// as stored now, change it, and write it back only if nobody wrote in
    /// between (compare-and-set on its stamp), else start again, so two
    /// operators' changes (a revocation here, an authorization there) both land.
    pub fn update_policy(&self, change: impl Fn(&mut Policy)) -> Result<Policy, OpenError> {
        let ceiling = self.sandbox.config().max_memory_bytes;
        for _ in 0..16 {
            let stamp = self.data.policy_stamp();
            let mut policy = match self.data.read_policy()? {
                Some(text) => Policy::parse(&text, ceiling)?,
                None => Policy::default(),
            };
            change(&mut policy);
            if self.data.write_policy_if(stamp, &policy.to_toml())? {
                let mut guard = self.policy.lock().unwrap_or_else(|e| e.into_inner());
                *guard = (None, Arc::new(policy.clone()));
                return Ok(policy);
            }
        }
        Err(OpenError::Engine("the policy kept changing under this update; try again".into()))
    }

    /// What discovery binds: profile, policy digest, checker authorization.
    pub fn binding(&self) -> Binding {
        let policy = self.policy();
        let authorized = self
            .catalog
            .entries()
            .filter(|e| e.kind == EntryKind::Verifier)
            .map(|e| (e.id.clone(), self.checker_authorized(&policy, e)))
            .collect();
        let modes =
            self.catalog.entries().map(|e| (e.id.clone(), policy.allowed_modes(&e.id, &e.tags, &e.modes))).collect();
        Binding { profile: policy.profile.clone(), policy_digest: policy.digest(), modes, authorized }
    }

    fn checker_authorized(&self, policy: &Policy, entry: &CatalogEntry) -> bool {
        let role = entry.checker_roles.first().map(String::as_str).unwrap_or("");
        policy.authorizes(role, &entry.component, self.is_bundled(&entry.component))
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

    /// Answer `capability.invoke`. Never panics on anything a request can
    /// influence; every failure is a typed diagnostic in the result.
    pub fn invoke(&self, request: &InvokeRequest) -> CapabilityResult {
        self.invoke_with(request, &CallControl::default())
    }

    /// [`Runtime::invoke`] under caller control (cancellation, progress). The
    /// invocation is admitted against its experiment's budgets, run, stored
    /// as an episode (unless cancelled: then nothing is stored) and recorded
    /// in the experiment with its accounting.
    pub fn invoke_with(&self, request: &InvokeRequest, control: &CallControl) -> CapabilityResult {
        let ordinary = CallControl { inline: None, ..control.clone() };
        self.invoke_under(request, &ordinary).unwrap_or_else(|| {
            // Unreachable: only an inline attempt is ever abandoned.
            let d = Diagnostic::new(Code::ComponentUnavailable, Stage::Execution, "the call was abandoned", "retry");
            CapabilityResult::failed(&request.capability_id, request.mode, d)
        })
    }

    /// Answer `capability.invoke` on the calling thread if it is quick: a
    /// local store, an input of at most [`crate::limits::INLINE_INPUT_BYTES`]
    /// that names no artifact, and a component call within
    /// [`InlineLimits::DEFAULT`]. The MCP edge calls this on its async thread
    /// before handing the call to a blocking thread, which costs two thread
    /// switches. `None`: the call is not quick, nothing of it was stored or
    /// counted, and it must be run with [`Runtime::invoke_with`]. A quick
    /// call's answer and records are exactly those of an ordinary call (fuel
    /// is deterministic).
    pub fn try_invoke_inline(&self, request: &InvokeRequest) -> Option<CapabilityResult> {
        if !self.experiments.local()
            || crate::limits::json_size(&request.input) > crate::limits::INLINE_INPUT_BYTES
            || names_an_artifact(&request.input)
            || self.catalog.get(&request.capability_id).is_some_and(|e| e.kind == EntryKind::Router)
        {
            return None;
        }
        let control = CallControl { inline: Some(InlineLimits::DEFAULT), ..CallControl::default() };
        self.invoke_under(request, &control)
    }

    /// [`Runtime::invoke_with`]; `None` only when `control` is an inline
    /// attempt that was abandoned (then nothing was stored or counted).
    fn invoke_under(&self, request: &InvokeRequest, control: &CallControl) -> Option<CapabilityResult> {
        let _in_flight = InFlight::enter(&self.in_flight);
        let started = Instant::now();
        let experiment = request.experiment.clone().unwrap_or_else(|| self.default_experiment.clone());
        if !crate::experiments::valid_id(&experiment) {
            let d = Diagnostic::new(
                Code::InvalidRequest,
                Stage::Request,
                "an experiment id is 1-64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit",
                "omit experiment to use this session's experiment",
            )
            .with("path", "experiment");
            return Some(CapabilityResult::failed(&request.capability_id, request.mode, d));
        }
        let input_bytes = crate::limits::json_size(&request.input);
        if input_bytes > crate::limits::MAX_INPUT_BYTES {
            let d = Diagnostic::new(
                Code::Oversized,
                Stage::Request,
                format!("input is {input_bytes} bytes of JSON, above the limit of {}", crate::limits::MAX_INPUT_BYTES),
                "reduce the input: reference artifacts of earlier calls by digest instead of inlining them, or split the problem",
            )
            .with("path", "input")
            .with("limit", crate::limits::MAX_INPUT_BYTES);
            return Some(CapabilityResult::failed(&request.capability_id, request.mode, d));
        }
        if self.draining.load(std::sync::atomic::Ordering::SeqCst) {
            let d = Diagnostic::new(
                Code::ComponentUnavailable,
                Stage::Request,
                "the server is shutting down and accepts no new invocations",
                "retry against another instance or after the restart",
            );
            return Some(CapabilityResult::failed(&request.capability_id, request.mode, d));
        }
        let policy = self.policy();
        let admitted = self.experiments.admit(&experiment, &request.capability_id, &policy.experiments);
        let mut result = match admitted {
            Err(e) => {
                let d = Diagnostic::new(Code::StorageFailed, Stage::Storage, e.to_string(), "retry the call");
                return Some(CapabilityResult::failed(&request.capability_id, request.mode, d));
            }
            Ok(Err((stop, message))) => {
                let d = Diagnostic::new(
                    Code::ExperimentBudgetSpent,
                    Stage::Policy,
                    message,
                    "start a new experiment, or ask the operator to raise the experiment budgets",
                )
                .with("stop_reason", stop);
                CapabilityResult::failed(&request.capability_id, request.mode, d)
            }
            Ok(Ok(())) => {
                let result = self.run_request_under(request, control, &policy);
                if control.abandoned() {
                    self.experiments.withdraw(&experiment, &request.capability_id);
                    return None;
                }
                result
            }
        };
        // Only calls that ran to an answer or a diagnostic of their own are
        // episodes: budget stops, cancellations and a busy sandbox store nothing.
        let stop_of = |result: &CapabilityResult| match (&result.diagnostic, result.status) {
            (_, Status::Completed) => StopReason::Completed,
            (Some(d), _) => match d.code {
                Code::Cancelled => StopReason::Cancelled,
                Code::ComponentUnavailable | Code::StorageFailed | Code::Overloaded => StopReason::Unavailable,
                Code::ExperimentBudgetSpent => d.details["stop_reason"]
                    .as_str()
                    .and_then(|s| serde_json::from_value(json!(s)).ok())
                    .unwrap_or(StopReason::Failed),
                _ => StopReason::Failed,
            },
            (None, _) => StopReason::Failed,
        };
        if stop_of(&result).replayable() {
            self.record_episode(request, &mut result, request.view.unwrap_or_default());
        }
        let stop = stop_of(&result);
        result.accounting.wall_time_us = started.elapsed().as_micros() as u64;
        result.accounting.fuel_consumed = result.fuel_consumed;
        result.accounting.experiment = Some(experiment.clone());
        result.accounting.stop_reason = Some(stop);
        let transport = result.transport.as_ref();
        let record = InvocationRecord {
            ordinal: 0,
            capability_id: result.capability_id.clone(),
            stop_reason: stop,
            episode: transport.map(|t| t.full_result_digest.clone()),
            fuel: result.fuel_consumed,
            wall_time_us: result.accounting.wall_time_us,
            logical_bytes: transport.map_or(0, |t| t.logical_bytes),
            model_visible_bytes: transport.map_or(0, |t| t.model_visible_bytes),
            wire_bytes: serialized_len(&result) + result.text.len() as u64,
            policy_digest: policy.digest().to_string(),
        };
        let body = || serde_json::to_string(&*policy).unwrap_or_default();
        if let Err(e) = self.experiments.remember_policy(&record.policy_digest, body) {
            tracing::warn!(error = %e, "policy not remembered");
        }
        match self.experiments.record(&experiment, &record) {
            Ok(ordinal) => result.accounting.ordinal = Some(ordinal),
            Err(e) => tracing::warn!(error = %e, "experiment record not written"),
        }
        let known = self.catalog.get(&result.capability_id).is_some();
        self.metrics.invocation(
            if known { &result.capability_id } else { "unknown" },
            stop,
            result.fuel_consumed,
            result.verification.as_ref().map(|v| v.status),
        );
        Some(result)
    }

    /// The experiment store.
    pub fn experiments(&self) -> &Experiments {
        &self.experiments
    }

    /// This runtime's default experiment (one per process unless a session names its own).
    pub fn default_experiment(&self) -> &str {
        &self.default_experiment
    }

    /// Refuse new invocations from now on (graceful shutdown).
    pub fn start_draining(&self) {
        self.draining.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Invocations running now (graceful shutdown waits for zero).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Counters for `/metrics`.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
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

    /// Whether this binary bundles the component (by built digest).
    pub fn builds_bundled(digest: &Digest) -> bool {
        BUNDLED.iter().any(|c| c.sha256.parse::<Digest>().is_ok_and(|d| d == *digest))
    }

    /// Run a request without recording it as an episode (the router runs a
    /// checker this way; `reference://catalog` reads the pack this way).
    pub(crate) fn run_request(&self, request: &InvokeRequest, control: &CallControl) -> CapabilityResult {
        self.run_request_under(request, control, &self.policy())
    }

    /// [`Runtime::run_request`] under a policy already read for this call
    /// (one read of the policy version per invocation).
    fn run_request_under(
        &self,
        request: &InvokeRequest,
        control: &CallControl,
        policy: &Arc<Policy>,
    ) -> CapabilityResult {
        if self.catalog.get(&request.capability_id).is_some_and(|e| e.kind == EntryKind::Router) {
            return self.route_certificate(request, control, policy);
        }
        match self.prepare_invoke(request, control, policy) {
            Ok(call) => match call.entry.kind {
                EntryKind::Producer => self.run_producer(&call),
                EntryKind::Verifier | EntryKind::Router => self.run_verifier(&call),
            },
            Err(failed) => *failed,
        }
    }

    /// `certificate.verify`: find the authorized checker for the certificate's
    /// schema and declared format, and run it.
    fn route_certificate(
        &self,
        request: &InvokeRequest,
        control: &CallControl,
        policy: &Arc<Policy>,
    ) -> CapabilityResult {
        let id = request.capability_id.as_str();
        let fail = |mode, d: Diagnostic| CapabilityResult::failed(id, mode, d);
        let Some(entry) = self.catalog.get(id) else {
            return fail(request.mode, Diagnostic::new(Code::CapabilityNotFound, Stage::Request, "no router", ""));
        };
        if policy.allowed_modes(&entry.id, &entry.tags, &entry.modes).is_empty() {
            let d = Diagnostic::new(
                Code::CapabilityPolicyDenied,
                Stage::Policy,
                format!("the operator policy (profile {}) hides {id}", policy.profile),
                "use capability.describe to find the capabilities this policy makes available",
            )
            .with("path", "capability_id");
            return fail(request.mode, d);
        }
        if request.mode.is_some_and(|m| m != Mode::Verify) {
            let d =
                Diagnostic::new(Code::ModeNotSupported, Stage::Request, format!("{id} runs in VERIFY mode only"), "")
                    .with("path", "mode");
            return fail(request.mode, d);
        }
        let mode = Some(Mode::Verify);
        if let Some(error) = entry.input_validator.iter_errors(&request.input).next() {
            let d = Diagnostic::new(
                Code::InvalidInput,
                Stage::Validation,
                crate::limits::bounded_text(&error),
                "pass {\"certificate\": \"artifact://sha256/...\"}",
            )
            .with("path", error_path(&error));
            return fail(mode, d);
        }
        let uri = request.input["certificate"].as_str().unwrap_or_default().to_owned();
        let read = Digest::from_artifact_uri(&uri).map_err(|e| (Code::ArtifactNotFound, e.to_string())).and_then(|d| {
            self.data.read_artifact(&d).map_err(|e| {
                let code = if e.is_unavailable() { Code::StorageFailed } else { Code::ArtifactNotFound };
                (code, e.to_string())
            })
        });
        let envelope: Value = match read
            .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| (Code::ArtifactNotFound, e.to_string())))
        {
            Ok(envelope) => envelope,
            Err((code, message)) => {
                let d = Diagnostic::new(code, Stage::Validation, message, "pass a certificate URI from a result")
                    .with("path", "input.certificate");
                return fail(mode, d);
            }
        };
        let schema = envelope["schema_uri"].as_str().unwrap_or_default().to_owned();
        let Some(format) = envelope["content"]["format"].as_str().map(str::to_owned) else {
            let d = Diagnostic::new(
                Code::InvalidInput,
                Stage::Validation,
                format!("the artifact ({schema}) declares no certificate format"),
                "pass a certificate artifact, e.g. the certificate_artifact of a result's check_with",
            )
            .with("path", "input.certificate");
            return fail(mode, d);
        };
        let binding = self.binding();
        let checker = self.catalog.entries().find(|e| {
            e.kind == EntryKind::Verifier
                && binding.visible(e)
                && binding.authorized.get(&e.id).copied().unwrap_or(false)
                && e.artifact_types.contains(&schema)
                && e.certificate_formats.contains(&format)
        });
        let Some(checker) = checker else {
            let obligation =
                format!("an independent check by a checker authorized for format {format} (schema {schema})");
            let mut result =
                CapabilityResult::failed(id, mode, Diagnostic::new(Code::InvalidInput, Stage::Request, "", ""));
            result.status = Status::Completed;
            result.diagnostic = None;
            result.output = Some(json!({"routed_to": null, "format": format, "schema_uri": schema}));
            result.obligations = vec![obligation];
            return result;
        };
        let mut input = serde_json::Map::new();
        for field in checker.input_schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            let inside = envelope["content"][field].as_str().filter(|v| v.starts_with("artifact://"));
            input.insert(field.to_owned(), json!(inside.unwrap_or(&uri)));
        }
        let inner = InvokeRequest {
            capability_id: checker.id.clone(),
            mode,
            input: Value::Object(input),
            budget: request.budget,
            view: None,
            experiment: None,
        };
        let mut result = self.run_request_under(&inner, control, policy);
        result.capability_id = id.to_owned();
        if let Some(Value::Object(output)) = result.output.as_mut() {
            output.insert("routed_to".into(), json!(checker.id));
        }
        result
    }

    /// Store the result as an episode and attach the text projection and
    /// transport metadata. A storage failure turns the result into a
    /// diagnostic rather than an answer without its durable record.
    fn record_episode(&self, request: &InvokeRequest, result: &mut CapabilityResult, view: ResultView) {
        let episode = episode_value(request, result);
        let body = canonical_json(&episode);
        let digest = match self.episodes.put(&result.capability_id, &body) {
            Ok(digest) => digest,
            Err(e) => {
                let failed = CapabilityResult::failed(
                    &result.capability_id,
                    result.mode,
                    Diagnostic::new(Code::StorageFailed, Stage::Storage, e.to_string(), "retry the call"),
                );
                *result = failed;
                return;
            }
        };
        let uri = episode_uri(&digest);
        let projection = crate::projection::project(&episode, view, &digest, &uri);
        result.transport = Some(Transport {
            view,
            logical_bytes: body.len() as u64,
            model_visible_bytes: projection.text.len() as u64,
            output_complete_in_text: projection.output_complete,
            full_result_digest: digest.to_string(),
            full_result_episode_uri: uri,
        });
        result.text = projection.text;
    }

    /// The shared PostgreSQL store, when the runtime was opened on one.
    pub fn postgres(&self) -> Option<&crate::postgres::Postgres> {
        self.postgres.as_ref()
    }

    /// The epistemic workspace service.
    pub fn workspaces(&self) -> &Workspaces {
        &self.workspaces
    }

    /// The canonical bytes of a stored episode.
    pub fn episode(&self, digest: &Digest) -> Result<Option<Vec<u8>>, EpisodeError> {
        self.episodes.get(digest)
    }

    fn prepare_invoke<'a>(
        &'a self,
        request: &'a InvokeRequest,
        control: &CallControl,
        policy: &Arc<Policy>,
    ) -> Result<Call<'a>, Box<CapabilityResult>> {
        let id = request.capability_id.as_str();
        let fail = |mode, d: Diagnostic| Box::new(CapabilityResult::failed(id, mode, d));
        let entry = self.catalog.get(id).ok_or_else(|| {
            fail(
                request.mode,
                Diagnostic::new(
                    Code::CapabilityNotFound,
                    Stage::Request,
                    format!("no installed capability {id:?}"),
                    "call capability.describe to find installed capability ids",
                )
                .with("path", "capability_id"),
            )
        })?;
        let allowed = policy.allowed_modes(&entry.id, &entry.tags, &entry.modes);
        if allowed.is_empty() {
            return Err(fail(
                request.mode,
                Diagnostic::new(
                    Code::CapabilityPolicyDenied,
                    Stage::Policy,
                    format!("the operator policy (profile {}) hides {id}", policy.profile),
                    "use capability.describe to find the capabilities this policy makes available",
                )
                .with("path", "capability_id")
                .with("policy_digest", policy.digest()),
            ));
        }
        let mode = request.mode.unwrap_or(allowed[0]);
        if entry.modes.contains(&mode) && !allowed.contains(&mode) {
            return Err(fail(
                Some(mode),
                Diagnostic::new(
                    Code::CapabilityPolicyDenied,
                    Stage::Policy,
                    format!("the operator policy withdraws mode {mode:?} from {id}"),
                    format!("use one of {allowed:?}"),
                )
                .with("path", "mode")
                .with("policy_digest", policy.digest()),
            ));
        }
        if !entry.modes.contains(&mode) {
            return Err(fail(
                Some(mode),
                Diagnostic::new(
                    Code::ModeNotSupported,
                    Stage::Request,
                    format!("{id} does not support mode {mode:?}"),
                    format!("use one of {:?}", entry.modes),
                )
                .with("path", "mode"),
            ));
        }
        let budgets = resolve_budgets(policy, request.budget).map_err(|d| fail(Some(mode), d))?;
        let errors: Vec<Value> = entry
            .input_validator
            .iter_errors(&request.input)
            .take(20)
            .map(|e| json!({"path": error_path(&e), "message": crate::limits::bounded_text(&e)}))
            .collect();
        if let Some(first) = errors.first() {
            return Err(fail(
                Some(mode),
                Diagnostic::new(
                    Code::InvalidInput,
                    Stage::Validation,
                    format!("input does not satisfy the input schema of {id}"),
                    "read capability.describe with view CONTRACT for the exact input schema",
                )
                .with("path", &first["path"])
                .with("errors", &errors),
            ));
        }
        let mut access = ArtifactAccess::default();
        let mut references = Vec::new();
        for (path, uri) in artifact_references(&request.input, "input") {
            let not_found = |message: String| {
                fail(
                    Some(mode),
                    Diagnostic::new(
                        Code::ArtifactNotFound,
                        Stage::Validation,
                        message,
                        "pass an artifact URI returned by an earlier result",
                    )
                    .with("path", &path),
                )
            };
            let digest = Digest::from_artifact_uri(&uri).map_err(|e| not_found(e.to_string()))?;
            let bytes = self.data.read_artifact(&digest).map_err(|e| {
                if e.is_unavailable() {
                    let d = Diagnostic::new(Code::StorageFailed, Stage::Storage, e.to_string(), "retry the call");
                    fail(Some(mode), d.with("path", &path))
                } else {
                    not_found(e.to_string())
                }
            })?;
            access.allow(&digest, Arc::new(bytes));
            references.push(uri);
        }
        let installed = self.components.get(&entry.component).cloned().ok_or_else(|| {
            fail(
                Some(mode),
                Diagnostic::new(Code::ComponentUnavailable, Stage::Instantiation, "component is not loaded", "")
                    .with("component", entry.component),
            )
        })?;
        Ok(Call {
            entry,
            installed,
            mode,
            budgets,
            access,
            references,
            input: &request.input,
            input_digest: Digest::of_json(&request.input),
            policy: policy.clone(),
            control: control.clone(),
        })
    }

    fn run_producer(&self, call: &Call<'_>) -> CapabilityResult {
        let request = json!({"capability_id": call.entry.id, "mode": call.mode, "input": call.input});
        let report = self.run(call, request.to_string().as_bytes());
        let mut result = call.base(&report);
        let bytes = match report.result {
            Ok(bytes) => bytes,
            Err(failure) => return call.fail(result, diagnose(&failure, call, &report.console)),
        };
        let mut outcome: Outcome = match serde_json::from_slice(&bytes) {
            Ok(outcome) => outcome,
            Err(e) => {
                return call.fail(
                    result,
                    malformed(call, format!("the answer is not a valid outcome: {}", crate::limits::bounded_text(e))),
                );
            }
        };
        if let Some(validator) = &call.entry.output_validator
            && let Some(error) = validator.iter_errors(&outcome.output).next()
        {
            return call.fail(
                result,
                malformed(
                    call,
                    format!("output does not match the declared output schema: {}", crate::limits::bounded_text(error)),
                ),
            );
        }
        if let Some(undeclared) = outcome.artifacts.iter().find(|a| !call.entry.artifact_types.contains(&a.schema_uri))
        {
            return call.fail(
                result,
                malformed(call, format!("artifact type {} is not declared in the descriptor", undeclared.schema_uri)),
            );
        }
        let lineage = Lineage {
            capability_id: call.entry.id.clone(),
            input_digest: call.input_digest.to_hex(),
            provider_digest: call.entry.component.to_hex(),
        };
        for draft in std::mem::take(&mut outcome.artifacts) {
            let mut envelope = json!({
                "artifact_version": ARTIFACT_VERSION,
                "schema_uri": draft.schema_uri,
                "role": draft.role,
                "lineage": lineage,
            });
            // Moved, not copied: an artifact can be megabytes of JSON.
            envelope["content"] = draft.content;
            match self.data.put_artifact(&envelope) {
                Ok((digest, bytes)) => result.artifacts.push(ArtifactRef {
                    role: draft.role,
                    uri: digest.artifact_uri(),
                    schema_uri: draft.schema_uri,
                    bytes,
                }),
                Err(e) => {
                    let d = Diagnostic::new(Code::StorageFailed, Stage::Storage, e.to_string(), "retry the call");
                    return call.fail(result, d);
                }
            }
        }
        result.check_with = outcome.verification.as_ref().map(|route| CheckRoute {
            checker_role: route.checker_role.clone(),
            verify_capability_id: route.verify_capability_id.clone(),
            certificate_format: route.certificate_format.clone(),
            certificate_artifact: result
                .artifacts
                .iter()
                .find(|a| a.role == route.certificate_artifact_role)
                .map(|a| a.uri.clone()),
        });
        result.relationships = result
            .artifacts
            .iter()
            .map(|a| Relationship {
                subject: a.uri.clone(),
                relation: Relation::ProducedFrom,
                object: call.input_digest.to_string(),
            })
            .chain(result.check_with.iter().filter_map(|route| {
                Some(Relationship {
                    subject: route.certificate_artifact.clone()?,
                    relation: Relation::CertificateFor,
                    object: route.checker_role.clone(),
                })
            }))
            .collect();
        result.status = Status::Completed;
        result.output = Some(outcome.output);
        result.scope = Some(outcome.scope);
        result.qualifiers = outcome.qualifiers;
        result.assurance = match outcome.assurance {
            ProducerAssurance::Proposed => Assurance::Proposed,
            ProducerAssurance::Heuristic => Assurance::Heuristic,
            ProducerAssurance::Computed => Assurance::Computed,
        };
        result.obligations = outcome.obligations;
        result
    }

    fn run_verifier(&self, call: &Call<'_>) -> CapabilityResult {
        let role = call.entry.checker_roles.first().cloned().unwrap_or_default();
        let authorized = self.checker_authorized(&call.policy, call.entry);
        let mut record = VerificationRecord {
            status: VerificationStatus::NotConcluded,
            reason: String::new(),
            checker_role: role.clone(),
            checker_digest: call.entry.component.to_string(),
            checker_version: call.entry.provider.version.clone(),
            checker_authorized: authorized,
            certificate_format: call.entry.certificate_formats.first().cloned().unwrap_or_default(),
            certificate_artifacts: call.references.clone(),
            claim_digest: None,
            candidate_digest: None,
            semantics_digest: None,
            scope_digest: None,
            binding_digest: None,
            checked: Vec::new(),
            remaining_obligations: Vec::new(),
        };
        if !authorized {
            let obligation =
                format!("independent check of the evidence by a checker that the operator authorizes for role {role}");
            record.reason = format!(
                "checker {} is not authorized by the operator policy for role {role}; it was not run",
                call.entry.component
            );
            record.remaining_obligations = vec![obligation.clone()];
            let mut result = call.base_unrun();
            result.status = Status::Completed;
            result.obligations = vec![obligation];
            result.verification = Some(record);
            return result;
        }
        let request = CheckRequest { role: role.clone(), input: call.input.clone() };
        let bytes = serde_json::to_vec(&request).unwrap_or_default();
        let report = self.run(call, &bytes);
        let mut result = call.base(&report);
        let answer = match report.result {
            Ok(answer) => answer,
            Err(failure) => return call.fail(result, diagnose(&failure, call, &report.console)),
        };
        let verdict: Verdict = match serde_json::from_slice(&answer) {
            Ok(verdict) => verdict,
            Err(e) => return call.fail(result, malformed(call, format!("the answer is not a valid verdict: {e}"))),
        };
        record.status = match verdict.verdict {
            VerdictKind::Accepted => VerificationStatus::Verified,
            VerdictKind::Rejected => VerificationStatus::Rejected,
            VerdictKind::Unsupported => VerificationStatus::Unsupported,
        };
        record.reason = verdict.reason.clone();
        record.claim_digest = Some(Digest::of_json(&verdict.claim).to_string());
        record.candidate_digest = Some(Digest::of_json(&verdict.candidate).to_string());
        record.scope_digest =
            Some(Digest::of_json(&serde_json::to_value(&verdict.scope).unwrap_or_default()).to_string());
        record.semantics_digest = Some(Digest::of_json(&verdict.semantics).to_string());
        record.binding_digest = verification_binding(&record).map(|d| d.to_string());
        record.checked = verdict.checked.clone();
        record.remaining_obligations = verdict.remaining_obligations.clone();
        result.relationships = call
            .references
            .iter()
            .map(|uri| Relationship { subject: "result".into(), relation: Relation::Checks, object: uri.clone() })
            .collect();
        result.status = Status::Completed;
        result.assurance =
            if record.status == VerificationStatus::Verified { Assurance::Verified } else { Assurance::None };
        result.output = Some(json!({
            "verdict": verdict.verdict,
            "reason": verdict.reason,
            "claim": verdict.claim,
            "semantics": verdict.semantics,
            "candidate": verdict.candidate,
        }));
        result.scope = Some(verdict.scope);
        result.obligations = verdict.remaining_obligations;
        result.verification = Some(record);
        result
    }

    fn run(&self, call: &Call<'_>, request: &[u8]) -> CallReport {
        let span = tracing::info_span!(
            "component_call",
            capability_id = %call.entry.id,
            component = %call.entry.component,
        );
        let _guard = span.enter();
        let report = self.sandbox.call(
            &call.installed.loaded,
            Entry::Run,
            request,
            &call.budgets,
            call.access.clone(),
            &call.control,
        );
        tracing::info!(fuel = report.fuel_consumed, ok = report.result.is_ok(), "call finished");
        report
    }

    /// Bundle kind of an installed component.
    pub fn kind_of(&self, digest: &Digest) -> Option<BundleKind> {
        self.components.get(digest).map(|c| c.loaded.kind)
    }
}

/// The result as an episode: everything but accounting, transport and text,
/// plus the request that produced it (what a replay re-executes) and its
/// ordinal event trace. Nothing in it depends on the clock or the experiment,
/// so identical invocations serialize identically.
pub fn episode_value(request: &InvokeRequest, result: &CapabilityResult) -> Value {
    let mut value = serde_json::to_value(result).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("accounting");
        map.remove("transport");
        map.insert(
            "request".into(),
            json!({
                "capability_id": request.capability_id,
                "mode": request.mode,
                "input": request.input,
                "budget": request.budget,
            }),
        );
        map.insert("trace".into(), Value::Array(trace(request, result)));
    }
    value
}

/// Bytes of `value` as JSON, counted without building the string.
fn serialized_len(value: &impl serde::Serialize) -> u64 {
    crate::limits::json_size(value) as u64
}

/// What happened, in order; `offset` is an ordinal, never a timestamp.
fn trace(request: &InvokeRequest, result: &CapabilityResult) -> Vec<Value> {
    let mut events = vec![json!({"event": "request", "payload": {
        "capability_id": request.capability_id, "mode": request.mode,
        "input_digest": Digest::of_json(&request.input).to_string(),
    }})];
    if let Some(p) = &result.provenance {
        events.push(json!({"event": "component_resolved", "payload": {
            "component": p.provider_digest, "install_tier": p.install_tier, "budgets": p.budgets,
        }}));
        events.push(json!({"event": "component_returned", "payload": {
            "fuel_consumed": result.fuel_consumed, "log_lines": result.guest_log.len(),
        }}));
    }
    for artifact in &result.artifacts {
        events.push(json!({"event": "artifact_stored", "payload": {
            "role": artifact.role, "uri": artifact.uri, "schema_uri": artifact.schema_uri,
        }}));
    }
    if let Some(v) = &result.verification {
        events.push(json!({"event": "verdict", "payload": {
            "status": v.status, "checker": v.checker_digest, "authorized": v.checker_authorized,
        }}));
    }
    events.push(json!({"event": "stop", "payload": {
        "status": result.status, "assurance": result.assurance,
        "code": result.diagnostic.as_ref().map(|d| d.code),
    }}));
    events
        .into_iter()
        .enumerate()
        .map(|(offset, mut event)| {
            event["offset"] = json!(offset);
            event
        })
        .collect()
}

/// SHA-256 over everything a verdict is bound to: claim, semantics,
/// candidate, scope, certificate format, checker digest and version. `None`
/// until the checker has reported all of them.
pub fn verification_binding(record: &VerificationRecord) -> Option<Digest> {
    let binding = json!({
        "claim": record.claim_digest.as_ref()?,
        "semantics": record.semantics_digest.as_ref()?,
        "candidate": record.candidate_digest.as_ref()?,
        "scope": record.scope_digest.as_ref()?,
        "certificate_format": record.certificate_format,
        "checker_digest": record.checker_digest,
        "checker_version": record.checker_version,
    });
    Some(Digest::of_json(&binding))
}

/// Record the capability ids a component provides as taken.
fn claim_ids(taken: &mut TakenIds, installed: &Installed) {
    for id in ids_of(&installed.record) {
        taken.insert(id, installed.record.digest);
    }
}

/// The capability ids a component provides (verifier ids for checkers).
fn ids_of(record: &InstallRecord) -> Vec<String> {
    let descriptor = &record.descriptor;
    descriptor
        .capabilities
        .iter()
        .map(|c| c.id.clone())
        .chain(descriptor.checkers.iter().map(|k| k.capability_id.clone()))
        .collect()
}

/// One resolved invocation.
struct Call<'a> {
    entry: &'a CatalogEntry,
    installed: Arc<Installed>,
    mode: Mode,
    budgets: CallBudgets,
    access: ArtifactAccess,
    references: Vec<String>,
    input: &'a Value,
    input_digest: Digest,
    policy: Arc<Policy>,
    control: CallControl,
}

impl Call<'_> {
    fn base_unrun(&self) -> CapabilityResult {
        CapabilityResult {
            contract: RESULT_CONTRACT.into(),
            capability_id: self.entry.id.clone(),
            mode: Some(self.mode),
            status: Status::Failed,
            output: None,
            artifacts: Vec::new(),
            relationships: Vec::new(),
            scope: None,
            qualifiers: Vec::new(),
            assurance: Assurance::None,
            obligations: Vec::new(),
            check_with: None,
            verification: None,
            diagnostic: None,
            provenance: Some(Provenance {
                provider: self.entry.provider.name.clone(),
                provider_version: self.entry.provider.version.clone(),
                digest_kind: "sha256".into(),
                provider_digest: self.entry.component.to_string(),
                install_tier: match self.installed.record.tier {
                    Tier::Bundled => "BUNDLED".into(),
                    Tier::Operator => "OPERATOR".into(),
                },
                input_digest: self.input_digest.to_string(),
                budgets: self.budgets,
                contracts: vec![
                    RESULT_CONTRACT.into(),
                    jacobian_guest::protocol::PROTOCOL_VERSION.into(),
                    ARTIFACT_VERSION.into(),
                ],
            }),
            fuel_consumed: 0,
            guest_log: Vec::new(),
            scope_rule: SCOPE_RULE.into(),
            transport: None,
            text: String::new(),
            accounting: Accounting::default(),
        }
    }

    fn base(&self, report: &CallReport) -> CapabilityResult {
        let mut result = self.base_unrun();
        result.fuel_consumed = report.fuel_consumed;
        result.guest_log = report.log.clone();
        result
    }

    fn fail(&self, mut result: CapabilityResult, diagnostic: Diagnostic) -> CapabilityResult {
        result.status = Status::Failed;
        result.assurance = Assurance::None;
        result.diagnostic = Some(diagnostic.with("component", self.entry.component));
        result
    }
}

fn malformed(call: &Call<'_>, message: String) -> Diagnostic {
    Diagnostic::new(
        Code::MalformedOutput,
        Stage::Output,
        format!("component of {} returned a malformed answer: {message}", call.entry.id),
        "report this to the provider; the answer was discarded and nothing was stored",
    )
}

fn diagnose(failure: &CallFailure, call: &Call<'_>, console: &str) -> Diagnostic {
    let id = &call.entry.id;
    let console = (!console.is_empty()).then(|| console.to_owned());
    match failure {
        CallFailure::FuelExhausted => Diagnostic::new(
            Code::FuelExhausted,
            Stage::Execution,
            format!("{id} ran out of fuel ({} units)", call.budgets.fuel),
            "no conclusion was reached; narrow the input, or raise budget.fuel up to the operator's limit",
        )
        .with("fuel", call.budgets.fuel),
        CallFailure::MemoryLimit { limit } => Diagnostic::new(
            Code::MemoryLimit,
            Stage::Execution,
            format!("{id} tried to grow its memory past {limit} bytes"),
            "narrow the input, or raise budget.memory_bytes up to the operator's limit",
        )
        .with("memory_bytes", limit),
        CallFailure::StackOverflow => Diagnostic::new(
            Code::StackOverflow,
            Stage::Execution,
            format!("{id} overflowed its stack"),
            "the input nests too deeply for this component; simplify it",
        ),
        CallFailure::Trap { message } => Diagnostic::new(
            Code::GuestTrap,
            Stage::Execution,
            format!("{id} trapped: {message}"),
            "the component failed on this input; nothing was concluded or stored",
        )
        .with("console", console),
        CallFailure::OutputTooLarge { bytes, limit } => Diagnostic::new(
            Code::OutputTooLarge,
            Stage::Output,
            format!("{id} answered with {bytes} bytes, above the output budget of {limit}"),
            "narrow the input, or raise budget.output_bytes up to the operator's limit",
        )
        .with("output_bytes", limit)
        .with("answer_bytes", bytes),
        CallFailure::Refused { message } => {
            let refusal: Refusal = serde_json::from_str(message).unwrap_or_else(|_| Refusal::at("", message.clone()));
            let path = if refusal.path.is_empty() { "input".to_owned() } else { format!("input.{}", refusal.path) };
            Diagnostic::new(
                Code::InvalidInput,
                Stage::Validation,
                format!("{id} refused the input: {}", refusal.message),
                "fix the named field; read capability.describe with view CONTRACT for the rules",
            )
            .with("path", path)
        }
        CallFailure::Cancelled => Diagnostic::new(
            Code::Cancelled,
            Stage::Execution,
            format!("{id} was cancelled by the caller"),
            "nothing was concluded or stored; invoke again to rerun",
        ),
        CallFailure::Abandoned => Diagnostic::new(
            Code::ComponentUnavailable,
            Stage::Execution,
            format!("{id}: a quick attempt went beyond its bounds"),
            "retry the call",
        ),
        CallFailure::Overloaded { running, queued } => Diagnostic::new(
            Code::Overloaded,
            Stage::Instantiation,
            format!("{id} did not start: all {running} sandbox slots are busy and {queued} calls are already waiting"),
            "retry after a short delay; the operator sets the limits with serve --max-concurrent-calls and --max-queued-calls",
        )
        .with("running", running)
        .with("queued", queued),
        CallFailure::Instantiation { message } => Diagnostic::new(
            Code::ComponentUnavailable,
            Stage::Instantiation,
            format!("{id} could not be instantiated: {message}"),
            "retry shortly; every sandbox slot may be busy",
        ),
    }
}

fn resolve_budgets(policy: &Policy, request: Option<BudgetRequest>) -> Result<CallBudgets, Diagnostic> {
    let mut budgets: CallBudgets = policy.budgets.into();
    let Some(request) = request else { return Ok(budgets) };
    for (field, asked, limit, slot) in [
        ("fuel", request.fuel, policy.budgets.fuel, &mut budgets.fuel),
        ("memory_bytes", request.memory_bytes, policy.budgets.memory_bytes, &mut budgets.memory_bytes),
        ("output_bytes", request.output_bytes, policy.budgets.output_bytes, &mut budgets.output_bytes),
    ] {
        if let Some(asked) = asked {
            if asked == 0 || asked > limit {
                return Err(Diagnostic::new(
                    Code::BudgetExceedsPolicy,
                    Stage::Policy,
                    format!("budget.{field} must be between 1 and the operator's {limit}, got {asked}"),
                    "a request may lower the operator's budgets but never raise them",
                )
                .with("path", format!("budget.{field}"))
                .with("limit", limit));
            }
            *slot = asked;
        }
    }
    Ok(budgets)
}

/// The dot-path of the field a schema error is about: the offending
/// property itself for `required` and `additionalProperties` errors.
fn error_path(error: &jsonschema::ValidationError<'_>) -> String {
    let path = dot_path("input", &error.instance_path().to_string());
    match error.kind() {
        jsonschema::error::ValidationErrorKind::Required { property } => {
            format!("{path}.{}", property.as_str().unwrap_or_default())
        }
        jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => match unexpected.first() {
            Some(name) => format!("{path}.{name}"),
            None => path,
        },
        _ => path,
    }
}

/// `/a/0/b` under `root` → `root.a.0.b`.
fn dot_path(root: &str, pointer: &str) -> String {
    let mut path = root.to_owned();
    for segment in pointer.split('/').filter(|s| !s.is_empty()) {
        path.push('.');
        path.push_str(&segment.replace("~1", "/").replace("~0", "~"));
    }
    path
}

/// Every string in `value` that names an artifact, with its dot-path.
/// Whether any string in `value` is an artifact URI ([`artifact_references`] without the paths).
fn names_an_artifact(value: &Value) -> bool {
    match value {
        Value::String(s) => s.starts_with("artifact://"),
        Value::Array(items) => items.iter().any(names_an_artifact),
        Value::Object(map) => map.values().any(names_an_artifact),
        _ => false,
    }
}

fn artifact_references(value: &Value, path: &str) -> Vec<(String, String)> {
    match value {
        Value::String(s) if s.starts_with("artifact://") => vec![(path.to_owned(), s.clone())],
        Value::Array(items) => {
            items.iter().enumerate().flat_map(|(i, v)| artifact_references(v, &format!("{path}.{i}"))).collect()
        }
        Value::Object(map) => map.iter().flat_map(|(k, v)| artifact_references(v, &format!("{path}.{k}"))).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
