//! Installing and loading components.
//!
//! Installing is fail closed: a component is recorded only after its digest,
//! imports, exports, descriptor, examples and health probe all pass. Loading
//! re-hashes the stored bytes and the precompiled code before using them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jacobian_guest::protocol::{BundleDescriptor, BundleKind, Example, Mode, Outcome, PROTOCOL_VERSION, Provider};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    #[error("component {digest}: describe() failed: {failure:?}")]
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
            sandbox.call(&loaded, Entry::Describe, &[], budgets, ArtifactAccess::default(), &CallControl::default());
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
        &CallControl::default(),
    );
    *fuel += report.fuel_consumed;
    let bytes = report.result.map_err(|f| failed(format!("example {:?}: {f:?}", example.title)))?;
    serde_json::from_slice::<Outcome>(&bytes)
        .map_err(|e| failed(format!("example {:?} returned a malformed outcome: {e}", example.title)))?;
    Ok(())
}

fn validate_descriptor(
    digest: Digest,
    bytes: &[u8],
    kind: BundleKind,
    taken: &TakenIds,
) -> Result<BundleDescriptor, InstallError> {
    let bad = |path: &str, message: String| InstallError::Descriptor { digest, path: path.to_owned(), message };
    let descriptor: BundleDescriptor =
        serde_json::from_slice(bytes).map_err(|e| bad("", format!("not a valid descriptor: {e}")))?;
    if descriptor.protocol != PROTOCOL_VERSION {
        return Err(bad("protocol", format!("is {:?}, this host speaks {PROTOCOL_VERSION}", descriptor.protocol)));
    }
    if descriptor.kind != kind {
        return Err(bad("kind", format!("is {:?} but the component's exports make it {kind:?}", descriptor.kind)));
    }
    match kind {
        BundleKind::Capability if descriptor.capabilities.is_empty() || !descriptor.checkers.is_empty() => {
            return Err(bad(
                "capabilities",
                "a capability bundle lists one or more capabilities and no checkers".into(),
            ));
        }
        BundleKind::Checker if descriptor.checkers.is_empty() || !descriptor.capabilities.is_empty() => {
            return Err(bad("checkers", "a checker bundle lists one or more checkers and no capabilities".into()));
        }
        _ => {}
    }
    let mut seen = BTreeSet::new();
    let mut claim = |path: String, id: &str| -> Result<(), InstallError> {
        if !valid_id(id) {
            return Err(bad(&path, format!("{id:?} is not a namespaced id (domain.verb.object, lowercase)")));
        }
        if let Some(existing) = taken.get(id) {
            return Err(InstallError::DuplicateId { digest, id: id.to_owned(), existing: *existing });
        }
        if !seen.insert(id.to_owned()) {
            return Err(bad(&path, format!("{id} appears twice")));
        }
        Ok(())
    };
    for (i, c) in descriptor.capabilities.iter().enumerate() {
        claim(format!("capabilities.{i}.id"), &c.id)?;
        if c.modes.is_empty() {
            return Err(bad(&format!("capabilities.{i}.modes"), "lists no mode".into()));
        }
        let validator =
            compile_schema(&c.input_schema).map_err(|e| bad(&format!("capabilities.{i}.input_schema"), e))?;
        compile_schema(&c.output_schema).map_err(|e| bad(&format!("capabilities.{i}.output_schema"), e))?;
        for (j, example) in c.examples.iter().enumerate() {
            if let Some(error) = validator.iter_errors(&example.input).next() {
                return Err(bad(
                    &format!("capabilities.{i}.examples.{j}.input"),
                    format!("does not validate against the input schema: {}", crate::limits::bounded_text(error)),
                ));
            }
        }
    }
    for (i, k) in descriptor.checkers.iter().enumerate() {
        claim(format!("checkers.{i}.capability_id"), &k.capability_id)?;
        compile_schema(&k.input_schema).map_err(|e| bad(&format!("checkers.{i}.input_schema"), e))?;
        if k.role.is_empty() {
            return Err(bad(&format!("checkers.{i}.role"), "is empty".into()));
        }
    }
    Ok(descriptor)
}

/// Compile a JSON Schema (draft 2020-12 as schemars emits it).
pub fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| format!("not a usable JSON Schema: {e}"))
}

/// `domain.verb.object`: at least two dot-separated lowercase segments.
fn valid_id(id: &str) -> bool {
    let segments: Vec<&str> = id.split('.').collect();
    id.len() <= 128
        && segments.len() >= 2
        && segments.iter().all(|s| {
            !s.is_empty()
                && s.starts_with(|c: char| c.is_ascii_lowercase())
                && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

/// Load a previously installed component from its record, re-hashing its bytes.
pub fn reload(sandbox: &Sandbox, data: &DataDir, record: InstallRecord) -> Result<Installed, InstallError> {
    let bytes = data.read_component(&record.digest)?;
    let loaded = load(sandbox, data, record.digest, &bytes)?;
    Ok(Installed { record, loaded })
}

/// Shared handle.
pub type InstalledRef = Arc<Installed>;
