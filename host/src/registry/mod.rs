//! Installing and loading components.
//!
//! Installing is fail closed: a component is recorded only after its digest,
//! imports, exports, descriptor, examples and health probe all pass. Loading
//! re-hashes the stored bytes and the precompiled code before using them.

use std::collections::BTreeMap;
use std::sync::Arc;

use jacobian_guest::protocol::{BundleDescriptor, BundleKind, Provider};
use serde::{Deserialize, Serialize};

use crate::descriptor::DescriptorError;
use crate::digest::Digest;
use crate::engine::{ArtifactAccess, CallBudgets, CallControl, CallFailure, Entry, Loaded, PrepareError, Sandbox};
use crate::store::{DataDir, StoreError};

mod probe;

/// Where a component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, strum::EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Tier {
    /// Built from this source tree and shipped in the binary.
    Bundled,
    /// Installed by the operator with `jacobian install`.
    Operator,
}

/// The platform every component targets.
pub const PLATFORM: &str = "wasm32-wasip2 component (jacobian:runtime@0.1.0)";

/// What the registry records about one installed component.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstallRecord {
    /// Always `sha256`.
    pub digest_kind: String,
    /// Component digest.
    pub digest: Digest,
    /// Capability bundle or checker bundle.
    pub kind: BundleKind,
    /// Bundled or operator-installed.
    pub tier: Tier,
    /// Target platform.
    pub platform: String,
    /// Size of the component.
    pub size_bytes: u64,
    /// Its imports (all on the allowlist).
    pub imports: Vec<String>,
    /// Provider, version, licence, features.
    pub provider: Provider,
    /// The validated descriptor.
    pub descriptor: BundleDescriptor,
    /// The health probe's result.
    pub health: Health,
    /// Who signed it, when a trusted publisher did (checked at install).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<crate::publishers::Publisher>,
}

/// Result of the install-time health probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// `PASSED` (a component that fails is not installed).
    pub status: String,
    /// `describe()` returned identical bytes twice.
    pub describe_deterministic: bool,
    /// Published examples (recipes with all their steps) that ran to a
    /// well-formed outcome: every one the descriptor lists.
    pub examples_run: u32,
    /// Examples not run because a step names a capability no installed
    /// component provides: only where the host installs a portfolio it was
    /// given (the replay of an archive that holds part of one); an operator's
    /// install is refused instead.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub examples_skipped: u32,
    /// Fuel the probe consumed.
    pub fuel_consumed: u64,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An installed, loaded component.
pub struct Installed {
    /// What was recorded at install.
    pub record: InstallRecord,
    /// Ready to instantiate.
    pub loaded: Loaded,
}

/// Why an install was refused. Nothing is recorded when any of these occurs.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("digest mismatch: expected {expected}, the bytes hash to {actual}")]
    DigestMismatch { expected: Digest, actual: Digest },
    #[error("component {digest}")]
    Prepare { digest: Digest, source: PrepareError },
    #[error("component {digest}: describe() {failure}")]
    Describe { digest: Digest, failure: CallFailure },
    #[error("component {digest}: descriptor field {path}: {message}")]
    Descriptor { digest: Digest, path: String, message: String },
    #[error("component {digest}: capability id {id} is already provided by component {existing}")]
    DuplicateId { digest: Digest, id: String, existing: Digest },
    #[error("component {digest}: health probe of {capability_id} failed: {message}")]
    HealthProbe { digest: Digest, capability_id: String, message: String },
    #[error(
        "component {}: example \"{}\" of {} failed at {}: {}",
        .0.digest, .0.title, .0.capability_id, .0.path, .0.message
    )]
    Example(Box<ExampleFailure>),
    #[error(
        "component {digest}: example \"{title}\" of {capability_id} runs {step_capability} (steps.{step}), which no \
         installed component provides: install its provider first"
    )]
    StepProviderMissing { digest: Digest, capability_id: String, title: String, step: usize, step_capability: String },
    #[error("component {digest}: {refusal}")]
    Signature { digest: Digest, refusal: crate::publishers::SignatureRefusal },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A published example that did not run to a well-formed outcome.
#[derive(Debug)]
pub struct ExampleFailure {
    /// The component.
    pub digest: Digest,
    /// The capability (or checker) whose example it is.
    pub capability_id: String,
    /// The example's title (clipped).
    pub title: String,
    /// Where in the example: `steps.N…`, `input…`, `output` or `call`.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

/// Wall time each `describe` call of an install may take, and all of its
/// example calls together: fuel bounds a component's work, not its host calls.
pub const INSTALL_WALL: std::time::Duration = std::time::Duration::from_secs(30);

fn install_control() -> CallControl {
    CallControl { wall_limit: Some(INSTALL_WALL), ..CallControl::default() }
}

/// Ids already taken, and by which component.
pub type TakenIds = BTreeMap<String, Digest>;

/// The components installed before the one being installed: the ids they
/// take, and where a recipe's steps that name their capabilities run.
#[derive(Default)]
pub struct Present {
    taken: TakenIds,
    components: BTreeMap<Digest, Arc<Installed>>,
    skip_missing_steps: bool,
}

impl Present {
    /// Install even when an example's step names a capability none of these
    /// provides, skipping that example (counted in `examples_skipped`).
    pub fn skip_missing_steps(&mut self) {
        self.skip_missing_steps = true;
    }

    /// Add an installed component, taking its ids.
    pub fn add(&mut self, installed: Arc<Installed>) {
        for id in installed.record.ids() {
            self.taken.insert(id, installed.record.digest);
        }
        self.components.insert(installed.record.digest, installed);
    }

    /// Whether an installed component provides `id`.
    pub fn provides(&self, id: &str) -> bool {
        self.taken.contains_key(id)
    }

    /// The installed components, by digest.
    pub fn into_components(self) -> BTreeMap<Digest, Arc<Installed>> {
        self.components
    }

    /// The component that provides `id`.
    fn provider(&self, id: &str) -> Option<&Installed> {
        self.taken.get(id).and_then(|digest| self.components.get(digest)).map(Arc::as_ref)
    }
}

impl InstallRecord {
    /// The capability ids the component provides (verifier ids for checkers).
    pub fn ids(&self) -> Vec<String> {
        let descriptor = &self.descriptor;
        descriptor
            .capabilities
            .iter()
            .map(|c| c.id.clone())
            .chain(descriptor.checkers.iter().map(|k| k.capability_id.clone()))
            .collect()
    }
}

/// Compile (or load precompiled), check and pre-link component bytes.
pub fn load(sandbox: &Sandbox, data: &DataDir, digest: Digest, bytes: &[u8]) -> Result<Loaded, InstallError> {
    let key = sandbox.compatibility_key();
    let prepare_err = |source| InstallError::Prepare { digest, source };
    let cached = data.cached_code(&key, &digest).and_then(|code| {
        // SAFETY: `code` was written by `Sandbox::serialize` under this
        // engine's compatibility key and its SHA-256 was re-checked on read.
        unsafe { sandbox.deserialize(&code) }.ok()
    });
    let component = match cached {
        Some(component) => component,
        None => {
            let component = sandbox.compile(bytes).map_err(prepare_err)?;
            if let Ok(code) = sandbox.serialize(&component) {
                data.put_cached_code(&key, &digest, &code)?;
            }
            component
        }
    };
    sandbox.prepare(digest, &component).map_err(prepare_err)
}

/// Where a bundle is checked or installed: the sandbox, the data directory,
/// the components installed beside it, and the budgets of its calls.
pub struct Setting<'a> {
    /// The sandbox its calls run in.
    pub sandbox: &'a Sandbox,
    /// Where it is stored (and its compiled code cached).
    pub data: &'a DataDir,
    /// What is installed beside it.
    pub present: &'a Present,
    /// One call's budgets: all of an install's example calls share its fuel.
    pub budgets: &'a CallBudgets,
}

/// Install component bytes: verify, describe, validate, probe, record (with
/// the publisher whose signature the caller checked).
pub fn install(
    setting: &Setting<'_>,
    bytes: &[u8],
    tier: Tier,
    expect: Option<Digest>,
    publisher: Option<crate::publishers::Publisher>,
) -> Result<Installed, InstallError> {
    let Checked { mut record, loaded, .. } = check(setting, bytes, tier, expect, 1)?;
    record.publisher = publisher;
    let data = setting.data;
    data.put_component(bytes)?;
    data.put_record(&record.digest, &crate::json::value(&record))?;
    Ok(Installed { record, loaded })
}

/// What [`check`] found: the record an install would write, and what every
/// example call returned in each run of the examples.
pub struct Checked {
    /// The record an install would write.
    pub record: InstallRecord,
    /// The component, ready to instantiate.
    pub loaded: Loaded,
    /// Per run, every example call in order (a later run ends at its first failure).
    pub runs: Vec<Vec<ExampleCall>>,
    /// Why a run after the first failed where the first did not: the
    /// examples do not behave the same on every run.
    pub later_failure: Option<String>,
}

/// One call an example made (a recipe's step or its last call), by the digest of what it returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExampleCall {
    /// The capability (or checker) whose example it is.
    pub subject: String,
    /// The example's title (clipped).
    pub title: String,
    /// `steps.N` or `call`.
    pub at: String,
    /// SHA-256 of the bytes the component returned.
    pub sha256: Digest,
}

/// Every install check on component bytes, recording nothing: digest,
/// component, `describe()` twice, the descriptor, and the examples (recipes'
/// steps first) run `runs` times, each run on a fresh budget, so a caller
/// can compare what the runs returned.
pub fn check(
    setting: &Setting<'_>,
    bytes: &[u8],
    tier: Tier,
    expect: Option<Digest>,
    runs: usize,
) -> Result<Checked, InstallError> {
    let Setting { sandbox, data, present, budgets } = *setting;
    let digest = Digest::of(bytes);
    if let Some(expected) = expect
        && expected != digest
    {
        return Err(InstallError::DigestMismatch { expected, actual: digest });
    }
    let loaded = load(sandbox, data, digest, bytes)?;
    let imports = loaded.imports.clone();

    let describe = |fuel: &mut u64| -> Result<Vec<u8>, InstallError> {
        let report =
            sandbox.call(&loaded, Entry::Describe, &[], budgets, ArtifactAccess::default(), &install_control());
        *fuel += report.fuel_consumed;
        report.result.map_err(|failure| InstallError::Describe { digest, failure })
    };
    let mut fuel = 0;
    let first = describe(&mut fuel)?;
    let second = describe(&mut fuel)?;
    let descriptor = validate_descriptor(digest, &first, loaded.kind, &present.taken)?;
    let mut health = Health {
        status: "PASSED".into(),
        describe_deterministic: first == second,
        examples_run: 0,
        examples_skipped: 0,
        fuel_consumed: 0,
    };
    if !health.describe_deterministic {
        return Err(InstallError::HealthProbe {
            digest,
            capability_id: String::new(),
            message: "describe() returned different bytes on two calls".into(),
        });
    }
    let (mut transcripts, mut later_failure) = (Vec::new(), None);
    for run in 0..runs.max(1) {
        let mut probe = probe::Probe {
            sandbox,
            loaded: &loaded,
            descriptor: &descriptor,
            present,
            budgets,
            fuel,
            deadline: std::time::Instant::now() + INSTALL_WALL,
            validators: BTreeMap::new(),
            transcript: Vec::new(),
        };
        match probe.run_examples() {
            Ok(counts) if run == 0 => {
                (health.examples_run, health.examples_skipped) = counts;
                health.fuel_consumed = probe.fuel;
            }
            Ok(_) => {}
            Err(e) if run == 0 => return Err(e),
            Err(e) => later_failure = later_failure.or(Some(crate::errors::render(&e))),
        }
        transcripts.push(probe.transcript);
    }
    let record = InstallRecord {
        digest_kind: "sha256".into(),
        digest,
        kind: loaded.kind,
        tier,
        platform: PLATFORM.into(),
        size_bytes: bytes.len() as u64,
        imports,
        provider: descriptor.provider.clone(),
        descriptor,
        health,
        publisher: None,
    };
    Ok(Checked { record, loaded, runs: transcripts, later_failure })
}

fn validate_descriptor(
    digest: Digest,
    bytes: &[u8],
    kind: BundleKind,
    taken: &TakenIds,
) -> Result<BundleDescriptor, InstallError> {
    crate::descriptor::validate(bytes, kind, taken).map_err(|e| match e {
        DescriptorError::Invalid { path, message } => InstallError::Descriptor { digest, path, message },
        DescriptorError::DuplicateId { id, existing } => InstallError::DuplicateId { digest, id, existing },
    })
}

pub use crate::descriptor::compile_schema;

/// Load a previously installed component from its record, re-hashing its bytes.
pub fn reload(sandbox: &Sandbox, data: &DataDir, record: InstallRecord) -> Result<Installed, InstallError> {
    let bytes = data.read_component(&record.digest)?;
    let loaded = load(sandbox, data, record.digest, &bytes)?;
    Ok(Installed { record, loaded })
}

/// Shared handle.
pub type InstalledRef = Arc<Installed>;
