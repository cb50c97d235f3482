//! The install-time health probe: every published example runs, a recipe's
//! steps first, each in the component that provides its capability (the one
//! being installed or one installed before it), with the artifacts the steps
//! make kept in memory for the calls that name them. Nothing is stored. All
//! of one install's calls share one call's fuel and [`super::INSTALL_WALL`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use jacobian_guest::protocol::{
    BundleDescriptor, CapabilityDescriptor, CheckRequest, Example, InvokeRequest, Lineage, Mode, Outcome, Verdict,
};
use serde::Serialize;
use serde_json::Value;

use super::{ExampleCall, ExampleFailure, InstallError, Present};
use crate::descriptor::{compile_schema, resolve_step_references};
use crate::digest::{Digest, canonical_json};
use crate::engine::{ArtifactAccess, CallBudgets, CallControl, Entry, Loaded, Sandbox};

/// One install's probe: the component, what is installed beside it, the
/// fuel its calls have spent so far (the `describe` calls' included) and when
/// its time is up.
pub(super) struct Probe<'a> {
    pub sandbox: &'a Sandbox,
    pub loaded: &'a Loaded,
    pub descriptor: &'a BundleDescriptor,
    pub present: &'a Present,
    pub budgets: &'a CallBudgets,
    pub fuel: u64,
    pub deadline: std::time::Instant,
    /// Compiled schemas by capability id and which (input or output): a
    /// recipe's steps call the same capabilities again and again.
    pub validators: BTreeMap<(String, &'static str), jsonschema::Validator>,
    /// Every call the examples made, in order, by what it returned.
    pub transcript: Vec<ExampleCall>,
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
        let mut tally = |outcome: Result<(), InstallError>, skip: bool| {
            match outcome {
                Err(InstallError::StepProviderMissing { .. }) if skip => skipped += 1,
                outcome => {
                    outcome?;
                    ran += 1;
                }
            }
            Ok::<(), InstallError>(())
        };
        let (descriptor, skip) = (self.descriptor, self.present.skip_missing_steps);
        for capability in &descriptor.capabilities {
            let mode = capability.modes.first().copied().unwrap_or(Mode::Explore);
            for example in &capability.examples {
                let last = |probe: &mut Self, input: Value, access| {
                    let request = InvokeRequest { capability_id: capability.id.clone(), mode, input };
                    probe.invoke(probe.loaded, capability, &request, access).map(drop)
                };
                tally(self.run(&capability.id, example, last), skip)?;
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
                tally(self.run(&checker.capability_id, example, last), skip)?;
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
        let title = crate::limits::clip(&example.title, 128).into_owned();
        let failed = |(path, message): Failure| {
            InstallError::Example(Box::new(ExampleFailure {
                digest: self.loaded.digest,
                capability_id: subject.to_owned(),
                title: title.clone(),
                path,
                message,
            }))
        };
        let mut made = Made::default();
        let first_call = self.transcript.len();
        for (n, step) in example.steps.iter().enumerate() {
            let path = format!("steps.{n}");
            let (input, access) = resolve(&step.input, n, &format!("{path}.input"), &made).map_err(failed)?;
            let (loaded, capability) =
                self.provider(&step.capability_id).ok_or_else(|| InstallError::StepProviderMissing {
                    digest: self.loaded.digest,
                    capability_id: subject.to_owned(),
                    title: title.clone(),
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
        last(self, input, access).map_err(|(p, m)| failed((if p.is_empty() { "call".into() } else { p }, m)))?;
        // Name the calls this example made: its steps in order, then its own call.
        let calls = self.transcript.len() - first_call;
        for (n, call) in self.transcript[first_call..].iter_mut().enumerate() {
            call.subject = subject.to_owned();
            call.title = title.clone();
            call.at = if n + 1 == calls { "call".into() } else { format!("steps.{n}") };
        }
        Ok(())
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
        self.check_against(capability, "input", &request.input)?;
        let bytes = self.call(loaded, request, access)?;
        let outcome: Outcome = serde_json::from_slice(&bytes)
            .map_err(|e| (String::new(), format!("returned a malformed outcome: {e}")))?;
        self.check_against(capability, "output", &outcome.output)?;
        let declared = crate::descriptor::Declared {
            artifact_types: &capability.artifact_types,
            checker_roles: &capability.checker_roles,
            checks: &capability.checks,
        };
        crate::descriptor::outcome_keeps_to(&outcome, &declared).map_err(|m| ("outcome".to_owned(), m))?;
        Ok(outcome)
    }

    /// `value` validates against the capability's `which` schema ("input" or
    /// "output"), or the first violation at that path.
    fn check_against(
        &mut self,
        capability: &CapabilityDescriptor,
        which: &'static str,
        value: &Value,
    ) -> Result<(), Failure> {
        let key = (capability.id.clone(), which);
        if !self.validators.contains_key(&key) {
            let schema = if which == "input" { &capability.input_schema } else { &capability.output_schema };
            let validator = compile_schema(schema).map_err(|e| (which.to_owned(), e))?;
            self.validators.insert(key.clone(), validator);
        }
        match self.validators[&key].iter_errors(value).next() {
            None => Ok(()),
            Some(error) => Err((
                which.to_owned(),
                format!("does not validate against the {which} schema: {}", crate::limits::bounded_text(error)),
            )),
        }
    }

    /// One call of `loaded` with what is left of the install's fuel and time.
    fn call(&mut self, loaded: &Loaded, request: &impl Serialize, access: ArtifactAccess) -> Result<Vec<u8>, Failure> {
        let spent =
            || (String::new(), "the examples spent the install's budget: one call's fuel and 30 s in all".into());
        let fuel = self.budgets.fuel.checked_sub(self.fuel).filter(|&left| left > 0).ok_or_else(spent)?;
        let wall = self.deadline.checked_duration_since(std::time::Instant::now()).ok_or_else(spent)?;
        let budgets = CallBudgets { fuel, ..*self.budgets };
        let control = CallControl { wall_limit: Some(wall), ..CallControl::default() };
        let request = crate::json::bytes(&request);
        let report = self.sandbox.call(loaded, Entry::Run, &request, &budgets, access, &control);
        self.fuel += report.fuel_consumed;
        let bytes = report.result.map_err(|failure| (String::new(), format!("{failure}")))?;
        let sha256 = Digest::of(&bytes);
        self.transcript.push(ExampleCall { subject: String::new(), title: String::new(), at: String::new(), sha256 });
        Ok(bytes)
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
