//! Opening a runtime: the stores, the engine, the bundled portfolio
//! (installed idempotently), the operator's components (re-hashed and
//! loaded; one that fails is listed, not fatal) and the catalog.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::bundled::BUNDLED;
use crate::catalog::Catalog;
use crate::digest::Digest;
use crate::engine::{CallBudgets, EngineConfig, Loaded, Sandbox};
use crate::metrics::Metrics;
use crate::policy::{Policy, PolicyError};
use crate::registry::{self, InstallError, InstallRecord, Installed, Present, Tier};
use crate::store::{DataDir, StoreConfig, StoreError, Stores};
use crate::workspace::Workspaces;

use super::Runtime;
use super::experiments::Experiments;

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
    /// These instead: the components an archive records as bundled, for replay.
    Given(Vec<GivenComponent>),
}

/// A component an archive records as bundled where it ran.
#[derive(Debug, Clone)]
pub struct GivenComponent {
    /// A name for messages.
    pub name: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Whether this binary, or a release it knows (`crate::releases`),
    /// bundled the same digest, and no recall names it. Only then does it
    /// count as bundled for trust (the policy's `authorize_bundled`);
    /// otherwise it keeps the tier it ran under, so its episodes replay as
    /// they were, and its checkers verify only where the reviewer authorizes them.
    pub trusted: bool,
}

/// A runtime that could not start.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A store could not be opened (see [`crate::store::OpenError`]).
    #[error(transparent)]
    Store(#[from] crate::store::OpenError),
    /// The data directory or the shared objects failed while loading.
    #[error(transparent)]
    Objects(#[from] StoreError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("engine: {0}")]
    Engine(String),
    #[error("bundled component {package}")]
    Bundled { package: String, source: Box<InstallError> },
}

/// A component that is installed but could not be loaded (e.g. tampered bytes).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LoadFailure {
    /// Its recorded digest.
    pub digest: Digest,
    /// Why it is unavailable.
    pub reason: String,
}

/// Keep an installed bundled component's stored copy (by its size, see
/// [`DataDir::keep_component`]) and load it from the precompiled cache.
fn keep_and_load(sandbox: &Sandbox, data: &DataDir, digest: Digest, bytes: &[u8]) -> Result<Loaded, InstallError> {
    data.keep_component(&digest, bytes)?;
    registry::load(sandbox, data, digest, bytes)
}

/// [`keep_and_load`] for each of `components`, on every core: reading,
/// re-hashing and deserializing the portfolio is most of a start.
fn preload<'b>(
    sandbox: &Sandbox,
    data: &DataDir,
    components: impl Iterator<Item = (Digest, &'b [u8])>,
) -> HashMap<Digest, Result<Loaded, InstallError>> {
    let components: Vec<(Digest, &[u8])> = components.collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(components.len()).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let mine: Vec<(Digest, &[u8])> = components.iter().skip(t).step_by(threads).copied().collect();
                scope.spawn(move || {
                    mine.into_iter()
                        .map(|(digest, bytes)| (digest, keep_and_load(sandbox, data, digest, bytes)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        // A worker that panicked loaded nothing: its components load again, one by one.
        workers.into_iter().filter_map(|w| w.join().ok()).flatten().collect()
    })
}

/// The shared state alone, without loading any component: what operator
/// commands that must work on a broken deployment (`jacobian policy`) use.
pub fn open_state(config: &RuntimeConfig) -> Result<DataDir, OpenError> {
    Ok(crate::store::open(&config.store, &config.data_dir)?.data)
}

/// The deployment's API tokens alone, without loading any component
/// (`jacobian tokens`).
pub fn open_tokens(config: &RuntimeConfig) -> Result<Arc<dyn crate::store::TokenStore>, OpenError> {
    Ok(crate::store::open(&config.store, &config.data_dir)?.tokens)
}

impl Runtime {
    /// Open the data directory, install the bundled portfolio (idempotent) and
    /// load every operator-installed component.
    pub fn open(config: RuntimeConfig) -> Result<Self, OpenError> {
        let Stores { data, episodes, experiments, workspaces, sessions, tokens } =
            crate::store::open(&config.store, &config.data_dir)?;
        let sandbox = Sandbox::new(config.engine).map_err(|e| OpenError::Engine(crate::errors::render(&*e)))?;
        let ceiling = sandbox.config().max_memory_bytes;
        // Hosts starting together: the first writes the default, all read the same.
        if data.read_policy()?.is_none() {
            data.create_policy(&Policy::default().to_toml()?)?;
        }
        // The stamp before the text: a change in between is seen at the first use.
        let stamp = data.policy_stamp();
        let policy = Policy::parse(&data.read_policy()?.unwrap_or_default(), ceiling)?;
        let budgets: CallBudgets = policy.budgets.into();
        let records: BTreeMap<Digest, InstallRecord> = data
            .records()?
            .into_iter()
            .filter_map(|v| serde_json::from_value::<InstallRecord>(v).ok())
            .map(|r| (r.digest, r))
            .collect();

        // Every component ever installed as bundled here, an earlier binary's too.
        let installed_bundled: BTreeSet<Digest> =
            records.values().filter(|r| r.tier == Tier::Bundled).map(|r| r.digest).collect();
        let mut present = Present::default();
        let mut bundled = BTreeSet::new();
        let portfolio: Vec<(String, Digest, &[u8], bool)> = match &config.portfolio {
            Portfolio::Bundled => BUNDLED
                .iter()
                .map(|c| {
                    let digest =
                        c.sha256.parse().map_err(|e: crate::digest::DigestError| OpenError::Engine(e.to_string()));
                    digest.map(|d| (c.package.to_owned(), d, c.bytes, true))
                })
                .collect::<Result<_, _>>()?,
            Portfolio::Given(list) => list
                .iter()
                .map(|given| (given.name.clone(), Digest::of(&given.bytes), &given.bytes[..], given.trusted))
                .collect(),
        };
        // A component whose examples run steps in another waits for it:
        // passes repeat while they install something. When one installs
        // nothing, a last pass decides: a portfolio given for a replay may
        // hold a checker without its producer, so there such examples are
        // skipped (and counted); the bundled one must run every example.
        let mut preloaded = preload(
            &sandbox,
            &data,
            portfolio.iter().filter(|c| records.get(&c.1).is_some_and(|r| r.tier == Tier::Bundled)).map(|c| (c.1, c.2)),
        );
        let mut pending = portfolio;
        let mut last_pass = false;
        while !pending.is_empty() {
            let before = pending.len();
            let mut waiting = Vec::new();
            for (package, expected, bytes, trusted) in pending {
                let bundle_error = |e| OpenError::Bundled { package: package.clone(), source: Box::new(e) };
                let installed = match records.get(&expected) {
                    Some(record) if record.tier == Tier::Bundled => {
                        let loaded = match preloaded.remove(&expected) {
                            Some(loaded) => loaded,
                            None => keep_and_load(&sandbox, &data, expected, bytes),
                        };
                        Installed { record: record.clone(), loaded: loaded.map_err(bundle_error)? }
                    }
                    _ => match registry::install(
                        &registry::Setting { sandbox: &sandbox, data: &data, present: &present, budgets: &budgets },
                        bytes,
                        Tier::Bundled,
                        Some(expected),
                        None,
                    ) {
                        Err(InstallError::StepProviderMissing { .. }) if !last_pass => {
                            waiting.push((package, expected, bytes, trusted));
                            continue;
                        }
                        installed => installed.map_err(bundle_error)?,
                    },
                };
                if trusted {
                    bundled.insert(expected);
                }
                present.add(Arc::new(installed));
            }
            if waiting.len() == before {
                last_pass = true;
                if matches!(config.portfolio, Portfolio::Given(_)) {
                    present.skip_missing_steps();
                }
            }
            pending = waiting;
        }
        let mut load_failures = Vec::new();
        for record in records.into_values().filter(|r| r.tier == Tier::Operator) {
            let digest = record.digest;
            let ids = record.ids();
            let reserved = ids.iter().find(|id| crate::descriptor::RESERVED_IDS.contains(&id.as_str()));
            let clash = ids.iter().find(|id| present.provides(id));
            let result = match (reserved, clash) {
                (Some(id), _) => Err(format!("capability id {id} is reserved by the host")),
                (None, Some(id)) => Err(format!("capability id {id} is already provided by another component")),
                (None, None) => registry::reload(&sandbox, &data, record).map_err(|e| crate::errors::render(&e)),
            };
            match result {
                Ok(installed) => present.add(Arc::new(installed)),
                Err(reason) => {
                    tracing::warn!(component = %digest, %reason, "installed component not loaded");
                    load_failures.push(LoadFailure { digest, reason });
                }
            }
        }
        let components = present.into_components();
        let catalog = Catalog::build(components.values().map(Arc::as_ref));
        Ok(Runtime {
            data,
            sandbox,
            components,
            installed_bundled: installed_bundled.union(&bundled).copied().collect(),
            bundled,
            catalog,
            policy: Mutex::new((stamp, Arc::new(policy))),
            load_failures,
            episodes,
            experiments: Experiments::new(experiments),
            default_experiment: crate::experiments::mint_id(),
            metrics: Metrics::default(),
            in_flight: Default::default(),
            draining: Default::default(),
            not_quick: Default::default(),
            commits: Default::default(),
            workspaces: Workspaces::new(workspaces),
            sessions,
            tokens,
        })
    }

    /// Install an operator bundle without a signature (refused when the
    /// policy requires one). Idempotent by digest.
    pub fn install(&self, bytes: &[u8], expect: Option<Digest>) -> Result<(InstallRecord, bool), InstallError> {
        self.install_signed(bytes, expect, None)
    }

    /// Install an operator bundle with its minisign signature, if any: a
    /// signature given must verify and be by a publisher the policy trusts
    /// (checked before anything else, an installed bundle included); none
    /// given is refused when the policy requires one. Idempotent by digest.
    pub fn install_signed(
        &self,
        bytes: &[u8],
        expect: Option<Digest>,
        signature: Option<&str>,
    ) -> Result<(InstallRecord, bool), InstallError> {
        let publisher = self
            .policy()
            .publishers
            .admit(bytes, signature)
            .map_err(|refusal| InstallError::Signature { digest: Digest::of(bytes), refusal })?;
        self.install_with(bytes, expect, false, publisher)
    }

    /// Install a component an archive holds, for its replay, with the
    /// publisher the archive says signed it (re-verified by the caller): an
    /// example whose step names a capability none of the installed
    /// components provides (the archive holds only what its episodes used)
    /// is skipped and counted, not a refusal.
    pub fn install_replayed(
        &self,
        bytes: &[u8],
        expect: Option<Digest>,
        publisher: Option<crate::publishers::Publisher>,
    ) -> Result<(InstallRecord, bool), InstallError> {
        self.install_with(bytes, expect, true, publisher)
    }

    /// Every install check on a bundle, installing nothing: the examples run
    /// twice, each time on a fresh budget, beside the installed components
    /// (the bundle itself excluded, so an installed bundle checks as new).
    pub fn check_bundle(&self, bytes: &[u8], expect: Option<Digest>) -> Result<registry::Checked, InstallError> {
        let digest = Digest::of(bytes);
        let mut present = Present::default();
        for installed in self.components.values().filter(|c| c.record.digest != digest) {
            present.add(Arc::clone(installed));
        }
        let budgets: CallBudgets = self.policy().budgets.into();
        let setting =
            registry::Setting { sandbox: &self.sandbox, data: &self.data, present: &present, budgets: &budgets };
        registry::check(&setting, bytes, Tier::Operator, expect, 2)
    }

    fn install_with(
        &self,
        bytes: &[u8],
        expect: Option<Digest>,
        skip_missing_steps: bool,
        publisher: Option<crate::publishers::Publisher>,
    ) -> Result<(InstallRecord, bool), InstallError> {
        let digest = Digest::of(bytes);
        if let Some(expected) = expect
            && expected != digest
        {
            return Err(InstallError::DigestMismatch { expected, actual: digest });
        }
        if let Some(existing) = self.components.get(&digest) {
            return Ok((existing.record.clone(), false));
        }
        let mut present = Present::default();
        for installed in self.components.values() {
            present.add(Arc::clone(installed));
        }
        if skip_missing_steps {
            present.skip_missing_steps();
        }
        let budgets: CallBudgets = self.policy().budgets.into();
        let setting =
            registry::Setting { sandbox: &self.sandbox, data: &self.data, present: &present, budgets: &budgets };
        let installed = registry::install(&setting, bytes, Tier::Operator, expect, publisher)?;
        Ok((installed.record, true))
    }
}
