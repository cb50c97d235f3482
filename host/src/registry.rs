//! Installing and loading components.
//!
//! Installing is fail closed: a component is recorded only after its digest,
//! imports, exports, descriptor, examples and health probe all pass. Loading
//! re-hashes the stored bytes and the precompiled code before using them.

use std::collections::BTreeMap;
use std::sync::Arc;

use jacobian_guest::protocol::{BundleDescriptor, BundleKind, Example, Mode, Outcome, Provider};
use serde::{Deserialize, Serialize};

use crate::descriptor::DescriptorError;
use crate::digest::Digest;
use crate::engine::{ArtifactAccess, CallBudgets, CallControl, CallFailure, Entry, Loaded, PrepareError, Sandbox};
use crate::store::{DataDir, StoreError};

/// Where a component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// Result of the install-time health probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// `PASSED` (a component that fails is not installed).
    pub status: String,
    /// `describe()` returned identical bytes twice.
    pub describe_deterministic: bool,
    /// Published examples run to a well-formed outcome.
    pub examples_run: u32,
    /// Fuel the probe consumed.
    pub fuel_consumed: u64,
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
    #[error("component {digest}: {source}")]
    Prepare { digest: Digest, source: PrepareError },
    #[error("component {digest}: describe() {failure}")]
    Describe { digest: Digest, failure: CallFailure },
    #[error("component {digest}: descriptor field {path}: {message}")]
    Descriptor { digest: Digest, path: String, message: String },
    #[error("component {digest}: capability id {id} is already provided by component {existing}")]
    DuplicateId { digest: Digest, id: String, existing: Digest },
    #[error("component {digest}: health probe of {capability_id} failed: {message}")]
    HealthProbe { digest: Digest, capability_id: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Wall time each call of an install (the two `describe` calls, each health
/// probe) may take: fuel bounds a component's work, not its host calls.
pub const INSTALL_WALL: std::time::Duration = std::time::Duration::from_secs(30);

fn install_control() -> CallControl {
    CallControl { wall_limit: Some(INSTALL_WALL), ..CallControl::default() }
}

/// Ids already taken, and by which component.
pub type TakenIds = BTreeMap<String, Digest>;

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

/// Install component bytes: verify, describe, validate, probe, record.
pub fn install(
    sandbox: &Sandbox,
    data: &DataDir,
    bytes: &[u8],
    tier: Tier,
    expect: Option<Digest>,
    taken: &TakenIds,
    budgets: &CallBudgets,
) -> Result<Installed, InstallError> {
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
    let descriptor = validate_descriptor(digest, &first, loaded.kind, taken)?;
    let mut health =
        Health { status: "PASSED".into(), describe_deterministic: first == second, examples_run: 0, fuel_consumed: 0 };
    if !health.describe_deterministic {
        return Err(InstallError::HealthProbe {
            digest,
            capability_id: String::new(),
            message: "describe() returned different bytes on two calls".into(),
        });
    }
    for capability in &descriptor.capabilities {
        let Some(example) = capability.examples.first() else { continue };
        let mode = capability.modes.first().copied().unwrap_or(Mode::Explore);
        probe(sandbox, &loaded, &capability.id, mode, example, budgets, &mut fuel)?;
        health.examples_run += 1;
    }
    health.fuel_consumed = fuel;

    data.put_component(bytes)?;
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
    };
    data.put_record(&digest, &serde_json::to_value(&record).unwrap_or_default())?;
    Ok(Installed { record, loaded })
}

fn probe(
    sandbox: &Sandbox,
    loaded: &Loaded,
    capability_id: &str,
    mode: Mode,
    example: &Example,
    budgets: &CallBudgets,
    fuel: &mut u64,
) -> Result<(), InstallError> {
    let failed = |message: String| InstallError::HealthProbe {
        digest: loaded.digest,
        capability_id: capability_id.to_owned(),
        message,
    };
    let request = serde_json::json!({"capability_id": capability_id, "mode": mode, "input": example.input});
    let report = sandbox.call(
        loaded,
        Entry::Run,
        request.to_string().as_bytes(),
        budgets,
        ArtifactAccess::default(),
        &install_control(),
    );
    *fuel += report.fuel_consumed;
    let bytes = report.result.map_err(|f| failed(format!("example \"{}\" {f}", example.title)))?;
    serde_json::from_slice::<Outcome>(&bytes)
        .map_err(|e| failed(format!("example \"{}\" returned a malformed outcome: {e}", example.title)))?;
    Ok(())
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
