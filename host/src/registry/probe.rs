//! The install-time health probe: every published example runs, a recipe's
//! steps first, each in the component that provides its capability (the one
//! being installed or one installed before it), with the artifacts the steps
//! make kept in memory for the calls that name them. Nothing is stored.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use jacobian_guest::protocol::{
    BundleDescriptor, CapabilityDescriptor, CheckRequest, Example, InvokeRequest, Lineage, Mode, Outcome, Verdict,
};
use serde::Serialize;
use serde_json::Value;

use super::{ExampleFailure, InstallError, Present, install_control};
use crate::descriptor::{compile_schema, resolve_step_references};
use crate::digest::{Digest, canonical_json};
use crate::engine::{ArtifactAccess, CallBudgets, Entry, Loaded, Sandbox};

/// One install's probe: the component, what is installed beside it, and the
/// fuel its calls have spent so far.
pub(super) struct Probe<'a> {
    pub sandbox: &'a Sandbox,
    pub loaded: &'a Loaded,
    pub descriptor: &'a BundleDescriptor,
    pub present: &'a Present,
    pub budgets: &'a CallBudgets,
    pub fuel: u64,
}

/// The artifacts a recipe's steps made: their stored bytes, and each step's by role.
#[derive(Default)]
struct Made {
    bytes: BTreeMap<String, Arc<Vec<u8>>>,
    by_step: Vec<BTreeMap<String, String>>,
}

/// What went wrong in one example: the path inside it, and why.
type Failure = (String, String);

impl<'a> Probe<'a> {
    /// Run every example of every capability and checker: how many ran, and
    /// how many were skipped for a step no installed component provides
    /// (only when `present` allows it).
    pub fn run_examples(&mut self) -> Result<(u32, u32), InstallError> {
        let (mut ran, mut skipped) = (0, 0);
        let descriptor = self.descriptor;
        for capability in &descriptor.capabilities {
            let mode = capability.modes.first().copied().unwrap_or(Mode::Explore);
            for example in &capability.examples {
                let last = |probe: &mut Self, input: Value, access| {
                    let request = InvokeRequest { capability_id: capability.id.clone(), mode, input };
                    probe.invoke(probe.loaded, capability, &request, access).map(drop)
                };
                match self.run(&capability.id, example, last) {
                    Err(InstallError::StepProviderMissing { .. }) if self.present.skip_missing_steps => skipped += 1,
                    outcome => outcome.map(|()| ran += 1)?,
                }
            }
        }
        for checker in &descriptor.checkers {
            for example in &checker.examples {
                let last = |probe: &mut Self, input: Value, access| {
                    let request = CheckRequest { role: checker.role.clone(), input };
                    let bytes = probe.call(probe.loaded, &request, access)?;
                    serde_json::from_slice::<Verdict>(&bytes)
                        .map(drop)
                        .map_err(|e| (String::new(), format!("returned a malformed verdict: {e}")))
                };
                match self.run(&checker.capability_id, example, last) {
                    Err(InstallError::StepProviderMissing { .. }) if self.present.skip_missing_steps => skipped += 1,
                    outcome => outcome.map(|()| ran += 1)?,
                }
            }
        }
        Ok((ran, skipped))
    }

    /// Run one example: its steps, then `last` on its resolved input.
    fn run(
        &mut self,
        subject: &str,
        example: &Example,
        last: impl FnOnce(&mut Self, Value, ArtifactAccess) -> Result<(), Failure>,
    ) -> Result<(), InstallError> {
        let failed = |(path, message): Failure| {
            InstallError::Example(Box::new(ExampleFailure {
                digest: self.loaded.digest,
                capability_id: subject.to_owned(),
                title: crate::limits::clip(&example.title, 128).into_owned(),
                path,
                message,
            }))
        };
        let mut made = Made::default();
        for (n, step) in example.steps.iter().enumerate() {
            let path = format!("steps.{n}");
            let (input, access) = resolve(&step.input, n, &format!("{path}.input"), &made).map_err(failed)?;
            let (loaded, capability) =
                self.provider(&step.capability_id).ok_or_else(|| InstallError::StepProviderMissing {
                    digest: self.loaded.digest,
                    capability_id: subject.to_owned(),
                    title: crate::limits::clip(&example.title, 128).into_owned(),
                    step: n,
                    step_capability: step.capability_id.clone(),
                })?;
            let mode = capability.modes.first().copied().unwrap_or(Mode::Explore);
            let request = InvokeRequest { capability_id: step.capability_id.clone(), mode, input };
            let outcome = self
                .invoke(loaded, capability, &request, access)
                .map_err(|(p, m)| failed((if p.is_empty() { path.clone() } else { format!("{path}.{p}") }, m)))?;
            let lineage = Lineage {
                capability_id: step.capability_id.clone(),
                input_digest: Digest::of_json(&request.input).to_hex(),
                provider_digest: loaded.digest.to_hex(),
            };
            let mut roles = BTreeMap::new();
            for draft in outcome.artifacts {
                let role = draft.role.clone();
                let bytes = canonical_json(&draft.into_envelope(&lineage));
                let uri = Digest::of(&bytes).artifact_uri();
                made.bytes.insert(uri.clone(), Arc::new(bytes));
                roles.insert(role, uri);
            }
            made.by_step.push(roles);
        }
        let (input, access) = resolve(&example.input, example.steps.len(), "input", &made).map_err(failed)?;
        last(self, input, access).map_err(|(p, m)| failed((if p.is_empty() { "call".into() } else { p }, m)))
    }

    /// The component and descriptor of the capability `id`: this one's, or
    /// an installed component's.
    fn provider(&self, id: &str) -> Option<(&'a Loaded, &'a CapabilityDescriptor)> {
        let (loaded, descriptor, present) = (self.loaded, self.descriptor, self.present);
        let own = descriptor.capabilities.iter().find(|c| c.id == id).map(|c| (loaded, c));
        own.or_else(|| {
            let installed = present.provider(id)?;
            let capability = installed.record.descriptor.capabilities.iter().find(|c| c.id == id)?;
            Some((&installed.loaded, capability))
        })
    }

    /// Invoke a capability: its input checked against its schema, its
    /// outcome parsed and its output checked against its output schema.
    fn invoke(
        &mut self,
        loaded: &Loaded,
        capability: &CapabilityDescriptor,
        request: &InvokeRequest,
        access: ArtifactAccess,
    ) -> Result<Outcome, Failure> {
        check_against(&capability.input_schema, &request.input, "input", "the input schema")?;
        let bytes = self.call(loaded, request, access)?;
        let outcome: Outcome = serde_json::from_slice(&bytes)
            .map_err(|e| (String::new(), format!("returned a malformed outcome: {e}")))?;
        check_against(&capability.output_schema, &outcome.output, "output", "the output schema")?;
        Ok(outcome)
    }

    /// One call of `loaded` under the install budgets.
    fn call(&mut self, loaded: &Loaded, request: &impl Serialize, access: ArtifactAccess) -> Result<Vec<u8>, Failure> {
        let request = serde_json::to_vec(request).unwrap_or_default();
        let report = self.sandbox.call(loaded, Entry::Run, &request, self.budgets, access, &install_control());
        self.fuel += report.fuel_consumed;
        report.result.map_err(|failure| (String::new(), format!("{failure}")))
    }
}

/// `value` with its step references replaced by the URIs of the artifacts
/// the steps made, and leave to read exactly those artifacts.
fn resolve(value: &Value, steps_before: usize, path: &str, made: &Made) -> Result<(Value, ArtifactAccess), Failure> {
    let named = RefCell::new(ArtifactAccess::default());
    let artifact = |step: usize, role: &str| {
        let uri = made.by_step[step].get(role).ok_or_else(|| {
            let roles: Vec<&str> = made.by_step[step].keys().map(String::as_str).collect();
            format!("refers to step {step}'s artifact {role:?}, but that step made only {roles:?}")
        })?;
        if let (Ok(digest), Some(bytes)) = (Digest::from_artifact_uri(uri), made.bytes.get(uri)) {
            named.borrow_mut().allow(&digest, Arc::clone(bytes));
        }
        Ok(uri.clone())
    };
    let resolved = resolve_step_references(value, steps_before, path, &artifact)?;
    Ok((resolved, named.into_inner()))
}

/// `value` validates against `schema`, or the first violation at `path`.
fn check_against(schema: &Value, value: &Value, path: &str, what: &str) -> Result<(), Failure> {
    let validator = compile_schema(schema).map_err(|e| (path.to_owned(), e))?;
    match validator.iter_errors(value).next() {
        None => Ok(()),
        Some(error) => {
            Err((path.to_owned(), format!("does not validate against {what}: {}", crate::limits::bounded_text(error))))
        }
    }
}
