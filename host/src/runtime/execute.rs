//! Stage 4, `execute`: run the component in a fresh store and turn its
//! answer into result parts. A producer's outcome is checked against its
//! descriptor and its artifacts are stored; a checker's verdict goes to
//! `verify.rs`, the only place `VERIFIED` is set.

use std::sync::Arc;
use std::time::Instant;

use jacobian_guest::protocol::{ARTIFACT_VERSION, Lineage, Mode, Outcome, ProducerAssurance};
use serde_json::{Value, json};

use crate::catalog::{CatalogEntry, EntryKind};
use crate::contract::{
    ArtifactRef, Assurance, CheckRoute, Diagnostic, InvokeRequest, Provenance, RESULT_CONTRACT, Relation, Relationship,
};
use crate::digest::Digest;
use crate::engine::{Attempt, CallControl, CallReport, Entry};
use crate::experiments::StopReason;
use crate::limits::bounded_text;
use crate::policy::Policy;
use crate::registry::{Installed, Tier};
use crate::store::{CertificateRecord, DbError, StoreError};

use super::Runtime;
use super::diagnostics::{diagnose, malformed, storage_failed};
use super::result::{Body, Completed, ResultParts, RunFacts};
use super::stages::{Concluded, NOT_QUICK_FOR, Prepared, Run, Unrouted, Validated, Work};

/// What a producer's `invoke` is given. Its members are in sorted order:
/// the same bytes as the JSON object they once were built as (a guest's fuel
/// is spent on them, so an archived episode replays to the same figure),
/// written without copying the input first.
#[derive(serde::Serialize)]
pub(super) struct GuestRequest<'a> {
    pub capability_id: &'a str,
    pub input: &'a Value,
    pub mode: Mode,
}

/// What a component call concluded: its answer's parts, or a failure with its stop reason.
pub(super) type Answer = Result<Completed, (Diagnostic, StopReason)>;

/// The component a call runs, as `execute` reads it: its install tier.
pub(super) trait Program {
    fn tier(&self) -> Tier;
}

impl Program for Arc<Installed> {
    fn tier(&self) -> Tier {
        self.record.tier
    }
}

/// What `execute` runs components with: the sandbox (a producer's call) and
/// the verifier (`verify.rs`, a checker's call and its verdict).
pub(super) trait Runner<I> {
    /// One call of the prepared component, in a fresh store, under its budgets.
    fn call<A: Copy>(&self, prepared: &Prepared<'_, I>, request: &[u8], how: Run<'_, A>) -> Result<CallReport, A>;
    /// A checker's call and the verdict it makes.
    fn check<A: Copy>(
        &self,
        prepared: &Prepared<'_, I>,
        policy: &Policy,
        how: Run<'_, A>,
    ) -> Result<(RunFacts, Answer), A>;
}

/// Where a producer's outputs are kept: its artifacts, the caller's grants
/// to them, and the record of a certificate among them.
pub(super) trait Outputs: Sync {
    /// Store an artifact envelope: its digest and size.
    fn put_artifact(&self, envelope: &Value) -> Result<(Digest, u64), StoreError>;
    /// Let the tenant read what its call made (`None`: the operator).
    fn grant(&self, tenant: Option<&str>, uris: &[String]) -> Result<(), StoreError>;
    /// Record what the host knows of a certificate when it is made.
    fn put_certificate(&self, certificate: &Digest, record: &CertificateRecord) -> Result<(), DbError>;
}

/// Stage 4, as a value holding exactly what it uses.
pub(super) struct Execute<'r, R> {
    pub runner: &'r R,
    pub outputs: &'r dyn Outputs,
}

impl<R> Execute<'_, R> {
    pub fn execute<I: Program, A: Copy>(&self, validated: &Validated<'_, I>, how: Run<'_, A>) -> Result<Concluded, A>
    where
        R: Runner<I>,
    {
        let request = validated.request;
        let prepared = match &validated.work {
            Work::Unrouted(unrouted) => return Ok(unrouted_answer(request, unrouted)),
            Work::Run(prepared) => prepared,
        };
        let (run, answer) = match prepared.call.entry.kind {
            EntryKind::Producer => self.produce(prepared, how)?,
            EntryKind::Verifier | EntryKind::Router => self.runner.check(prepared, &validated.policy, how)?,
        };
        let (body, stop) = match answer {
            Ok(mut completed) => {
                // A routed check names the checker it went to, even one that was not run.
                if prepared.call.routed.is_some()
                    && let Value::Object(output) = completed.output.get_or_insert_with(|| json!({}))
                {
                    output.insert("routed_to".into(), json!(prepared.call.entry.id));
                }
                (Body::Completed(Box::new(completed)), StopReason::Completed)
            }
            Err((diagnostic, stop)) => {
                (Body::Failed(diagnostic.with("component", prepared.call.entry.component)), stop)
            }
        };
        let parts = ResultParts {
            capability_id: request.capability_id.clone(),
            mode: Some(prepared.call.mode),
            provenance: Some(provenance(prepared)),
            run,
            body,
        };
        Ok(Concluded { parts, stop })
    }

    /// Run a producer and check its outcome against its descriptor.
    fn produce<I, A: Copy>(&self, prepared: &Prepared<'_, I>, how: Run<'_, A>) -> Result<(RunFacts, Answer), A>
    where
        R: Runner<I>,
    {
        let call = &prepared.call;
        let id = &call.entry.id;
        let request = GuestRequest { capability_id: id, input: &call.input, mode: call.mode };
        let report = self.runner.call(prepared, &crate::json::bytes(&request), how)?;
        let (run, bytes) = match facts(report, id, prepared) {
            (run, Ok(bytes)) => (run, bytes),
            (run, Err(failure)) => return Ok((run, Err(failure))),
        };
        let failed = |message: String| Err((malformed(id, message), StopReason::Failed));
        let mut outcome: Outcome = match serde_json::from_slice(&bytes) {
            Ok(outcome) => outcome,
            Err(e) => return Ok((run, failed(format!("the answer is not a valid outcome: {}", bounded_text(e))))),
        };
        if let Some(validator) = &call.entry.output_validator
            && let Some(error) = validator.iter_errors(&outcome.output).next()
        {
            let message = format!("output does not match the declared output schema: {}", bounded_text(error));
            return Ok((run, failed(message)));
        }
        if let Err(message) = crate::descriptor::outcome_keeps_to(&outcome, &declared(call.entry)) {
            return Ok((run, failed(message)));
        }
        // Storing artifacts syncs files: not on a thread that must not be held
        // (an attempt's). The call runs again as an ordinary call, which,
        // being deterministic, answers the same.
        if let Run::Attempt(_, abandoned) = how
            && !outcome.artifacts.is_empty()
        {
            return Err(abandoned);
        }
        let lineage = Lineage {
            capability_id: id.clone(),
            input_digest: prepared.input_digest.to_hex(),
            provider_digest: call.entry.component.to_hex(),
        };
        let mut artifacts = Vec::with_capacity(outcome.artifacts.len());
        for draft in std::mem::take(&mut outcome.artifacts) {
            let (role, schema_uri) = (draft.role.clone(), draft.schema_uri.clone());
            match self.outputs.put_artifact(&draft.into_envelope(&lineage)) {
                Ok((digest, bytes)) => {
                    artifacts.push(ArtifactRef { role, uri: digest.artifact_uri(), schema_uri, bytes })
                }
                Err(e) => return Ok((run, Err((storage_failed(e), StopReason::Unavailable)))),
            }
        }
        // The caller may read what its call made (see `grants.rs`).
        let made: Vec<String> = artifacts.iter().map(|a| a.uri.clone()).collect();
        if let Err(e) = self.outputs.grant(prepared.tenant, &made) {
            return Ok((run, Err((storage_failed(e), StopReason::Unavailable))));
        }
        let check_with = outcome.verification.as_ref().map(|route| CheckRoute {
            checker_role: route.checker_role.clone(),
            verify_capability_id: route.verify_capability_id.clone(),
            certificate_format: route.certificate_format.clone(),
            certificate_artifact: artifacts
                .iter()
                .find(|a| a.role == route.certificate_artifact_role)
                .map(|a| a.uri.clone()),
        });
        if let Some(route) = &check_with
            && let Some(digest) = route.certificate_artifact.as_deref().and_then(|u| Digest::from_artifact_uri(u).ok())
        {
            let record = CertificateRecord {
                checker_role: route.checker_role.clone(),
                certificate_format: route.certificate_format.clone(),
                verify_capability_id: route.verify_capability_id.clone(),
                capability_id: id.clone(),
                producer: call.entry.component,
            };
            if let Err(e) = self.outputs.put_certificate(&digest, &record) {
                return Ok((run, Err((storage_failed(e), StopReason::Unavailable))));
            }
        }
        let relationships = artifacts
            .iter()
            .map(|a| Relationship {
                subject: a.uri.clone(),
                relation: Relation::ProducedFrom,
                object: prepared.input_digest.to_string(),
            })
            .chain(check_with.iter().filter_map(|route| {
                Some(Relationship {
                    subject: route.certificate_artifact.clone()?,
                    relation: Relation::CertificateFor,
                    object: route.checker_role.clone(),
                })
            }))
            .collect();
        let completed = Completed {
            output: Some(outcome.output),
            artifacts,
            relationships,
            scope: Some(outcome.scope),
            qualifiers: outcome.qualifiers,
            obligations: outcome.obligations,
            check_with,
            verification: None,
            assurance: match outcome.assurance {
                ProducerAssurance::Proposed => Assurance::Proposed,
                ProducerAssurance::Heuristic => Assurance::Heuristic,
                ProducerAssurance::Computed => Assurance::Computed,
            },
        };
        Ok((run, Ok(completed)))
    }
}

impl Outputs for Runtime {
    fn put_artifact(&self, envelope: &Value) -> Result<(Digest, u64), StoreError> {
        self.data.put_artifact(envelope)
    }

    fn grant(&self, tenant: Option<&str>, uris: &[String]) -> Result<(), StoreError> {
        self.grant_to(tenant, uris)
    }

    fn put_certificate(&self, certificate: &Digest, record: &CertificateRecord) -> Result<(), DbError> {
        self.episodes.put_certificate(certificate, record)
    }
}

impl Runtime {
    /// One call of the prepared component, in a fresh store, under its budgets.
    pub(super) fn call_component<A: Copy>(
        &self,
        prepared: &Prepared<'_>,
        request: &[u8],
        how: Run<'_, A>,
    ) -> Result<CallReport, A> {
        let span = tracing::info_span!(
            "component_call",
            capability_id = %prepared.call.entry.id,
            component = %prepared.call.entry.component,
        );
        let _guard = span.enter();
        self.metrics.component_call();
        let (loaded, budgets, access) = (&prepared.call.installed.loaded, &prepared.budgets, prepared.access.clone());
        let report = match how {
            Run::Ordinary(control) => {
                let control = CallControl { wall_limit: Some(prepared.wall), ..control.clone() };
                self.sandbox.call(loaded, Entry::Run, request, budgets, access, &control)
            }
            Run::Attempt(limits, abandoned) => {
                let id = &prepared.call.entry.id;
                let not_quick = |map: &std::collections::BTreeMap<String, Instant>| {
                    map.get(id).is_some_and(|abandoned| abandoned.elapsed() < NOT_QUICK_FOR)
                };
                if not_quick(&self.not_quick.lock().unwrap_or_else(|e| e.into_inner())) {
                    return Err(abandoned);
                }
                match self.sandbox.attempt(loaded, Entry::Run, request, budgets, access, limits) {
                    Attempt::Answered(report) => report,
                    Attempt::Busy => return Err(abandoned),
                    Attempt::Beyond => {
                        // Only an installed capability's attempt runs: the map is bounded by the catalog.
                        self.not_quick.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), Instant::now());
                        return Err(abandoned);
                    }
                }
            }
        };
        tracing::info!(fuel = report.fuel_consumed, ok = report.result.is_ok(), "call finished");
        Ok(report)
    }
}

/// What a call spent and logged, and its answer bytes or the diagnosed failure.
pub(super) fn facts<I>(
    report: CallReport,
    id: &str,
    prepared: &Prepared<'_, I>,
) -> (RunFacts, Result<Vec<u8>, (Diagnostic, StopReason)>) {
    let run = RunFacts { fuel_consumed: report.fuel_consumed, guest_log: report.log };
    let answer = report.result.map_err(|failure| diagnose(&failure, id, &prepared.budgets, &report.console));
    (run, answer)
}

/// What a producer's catalog entry declares that its outcomes keep to.
pub(super) fn declared(entry: &CatalogEntry) -> crate::descriptor::Declared<'_> {
    crate::descriptor::Declared {
        artifact_types: &entry.artifact_types,
        checker_roles: &entry.checker_roles,
        checks: &entry.checks,
    }
}

/// Who ran, from which install, on which input, under which budgets.
fn provenance<I: Program>(prepared: &Prepared<'_, I>) -> Provenance {
    let entry = prepared.call.entry;
    Provenance {
        provider: entry.provider.name.clone(),
        provider_version: entry.provider.version.clone(),
        digest_kind: "sha256".into(),
        provider_digest: entry.component,
        install_tier: match prepared.call.installed.tier() {
            Tier::Bundled => "BUNDLED".into(),
            Tier::Operator => "OPERATOR".into(),
        },
        input_digest: prepared.input_digest,
        budgets: prepared.budgets,
        contracts: vec![
            RESULT_CONTRACT.into(),
            jacobian_guest::protocol::PROTOCOL_VERSION.into(),
            ARTIFACT_VERSION.into(),
        ],
    }
}

/// `certificate.verify` with no checker to run: completed, nothing concluded, the obligation named.
fn unrouted_answer(request: &InvokeRequest, unrouted: &Unrouted) -> Concluded {
    let Unrouted { certificate, schema_uri, record } = unrouted;
    let output = json!({"routed_to": null, "certificate": certificate, "checker_role": record.checker_role,
                        "format": record.certificate_format, "schema_uri": schema_uri});
    let obligation = format!(
        "an independent check of {certificate} by a checker the operator authorizes for role {} (format {}, schema \
         {schema_uri})",
        record.checker_role, record.certificate_format
    );
    // The router's own record: nothing was concluded, by no checker (the
    // digest is the host's router, never a checker's, and is not authorized).
    // The version is fixed, not the host's: the same episode from every host release.
    let mut verification = super::result::not_concluded(
        record.checker_role.clone(),
        (crate::catalog::router_component(), "certificate.verify/1".into()),
        false,
        record.certificate_format.clone(),
        vec![certificate.clone()],
    );
    verification.reason = format!(
        "no visible checker is authorized by the operator for role {} and reads format {} of schema {schema_uri}",
        record.checker_role, record.certificate_format
    );
    verification.remaining_obligations = vec![obligation.clone()];
    let completed = Completed {
        output: Some(output),
        obligations: vec![obligation],
        verification: Some(verification),
        ..Completed::default()
    };
    let parts = ResultParts {
        capability_id: request.capability_id.clone(),
        mode: Some(Mode::Verify),
        provenance: None,
        run: RunFacts::default(),
        body: Body::Completed(Box::new(completed)),
    };
    Concluded { parts, stop: StopReason::Completed }
}

#[cfg(test)]
mod tests {
    //! `execute` on fakes: a stand-in for the installed component, a runner
    //! that answers what it is told (no sandbox), and outputs kept in memory.
    //! No runtime is opened and nothing runs.

    use jacobian_guest::protocol::{ArtifactDraft, Completeness, Scope, VerificationRoute};

    use super::super::stages::Abandoned;
    use super::super::tests::{Asked, Stand, answered, catalog_entry, prepared};
    use super::*;
    use crate::contract::Code;
    use crate::engine::InlineLimits;

    /// A runner that answers every call with `answer`, and outputs that
    /// keep what they are given (or fail to store artifacts).
    #[derive(Default)]
    struct Fake {
        answer: Vec<u8>,
        artifacts_fail: bool,
        asked: Asked,
    }

    impl Fake {
        fn ask(&self, what: String) {
            self.asked.push(what);
        }
    }

    impl Runner<Stand> for Fake {
        fn call<A: Copy>(&self, _: &Prepared<'_, Stand>, request: &[u8], _: Run<'_, A>) -> Result<CallReport, A> {
            let request: Value = serde_json::from_slice(request).unwrap();
            self.ask(format!("call {}", request["capability_id"].as_str().unwrap()));
            Ok(answered(self.answer.clone(), 42))
        }

        fn check<A: Copy>(
            &self,
            prepared: &Prepared<'_, Stand>,
            _: &Policy,
            _: Run<'_, A>,
        ) -> Result<(RunFacts, Answer), A> {
            self.ask(format!("check {}", prepared.call.entry.id));
            Ok((RunFacts::default(), Ok(Completed { output: Some(json!({"accepted": true})), ..Completed::default() })))
        }
    }

    impl Outputs for Fake {
        fn put_artifact(&self, envelope: &Value) -> Result<(Digest, u64), StoreError> {
            self.ask(format!("artifact {}", envelope["role"].as_str().unwrap()));
            if self.artifacts_fail {
                let source = std::io::Error::other("disk full");
                return Err(StoreError::Io { what: "writing an artifact".into(), source });
            }
            let bytes = crate::json::bytes(envelope);
            Ok((Digest::of(&bytes), bytes.len() as u64))
        }

        fn grant(&self, tenant: Option<&str>, uris: &[String]) -> Result<(), StoreError> {
            self.ask(format!("grant {} {}", tenant.unwrap_or("operator"), uris.len()));
            Ok(())
        }

        fn put_certificate(&self, _: &Digest, record: &CertificateRecord) -> Result<(), DbError> {
            self.ask(format!("certificate {} by {}", record.checker_role, record.capability_id));
            Ok(())
        }
    }

    /// A producer that declares artifact type `cert/1` and checker role `sat`.
    fn producer() -> CatalogEntry {
        let mut entry = catalog_entry("sat.solve", EntryKind::Producer, &[Mode::Explore]);
        entry.artifact_types = vec!["cert/1".into()];
        entry.checker_roles = vec!["sat".into()];
        entry
    }

    /// An outcome with a certificate artifact routed to role `sat`.
    fn outcome(schema_uri: &str) -> Vec<u8> {
        let outcome = Outcome {
            output: json!({"satisfiable": false}),
            artifacts: vec![ArtifactDraft {
                role: "certificate".into(),
                schema_uri: schema_uri.into(),
                content: json!({"format": "lrat", "proof": "0"}),
            }],
            scope: Scope { completeness: Completeness::Exhaustive, statement: "every assignment".into() },
            qualifiers: Vec::new(),
            assurance: ProducerAssurance::Computed,
            obligations: Vec::new(),
            verification: Some(VerificationRoute {
                checker_role: "sat".into(),
                verify_capability_id: "sat.lrat.verify".into(),
                certificate_format: "lrat".into(),
                certificate_artifact_role: "certificate".into(),
            }),
        };
        crate::json::bytes(&outcome)
    }

    fn run<A: Copy>(fake: &Fake, entry: &CatalogEntry, how: Run<'_, A>) -> Result<Concluded, A> {
        let request = InvokeRequest { capability_id: entry.id.clone(), ..InvokeRequest::default() };
        let prepared = prepared(entry, Mode::Explore, Vec::new());
        let validated = Validated {
            request: &request,
            experiment: "e".into(),
            policy: std::sync::Arc::new(Policy::default()),
            work: Work::Run(prepared),
        };
        Execute { runner: fake, outputs: fake }.execute(&validated, how)
    }

    fn asked(fake: &Fake) -> Vec<String> {
        fake.asked.all()
    }

    fn code(concluded: &Concluded) -> Option<Code> {
        match &concluded.parts.body {
            Body::Failed(diagnostic) => Some(diagnostic.code),
            Body::Completed(_) => None,
        }
    }

    #[test]
    fn a_producers_artifacts_are_stored_granted_to_its_caller_and_its_certificate_recorded() {
        let fake = Fake { answer: outcome("cert/1"), ..Fake::default() };
        let control = CallControl::default();
        let Ok(concluded) = run(&fake, &producer(), super::super::stages::ordinary(&control));
        assert_eq!(
            asked(&fake),
            ["call sat.solve", "artifact certificate", "grant alice 1", "certificate sat by sat.solve"]
        );
        assert_eq!((code(&concluded), concluded.stop), (None, StopReason::Completed));
        let Body::Completed(completed) = &concluded.parts.body else { panic!("a completed answer") };
        let uri = completed.artifacts[0].uri.clone();
        assert_eq!(completed.check_with.as_ref().and_then(|r| r.certificate_artifact.clone()), Some(uri.clone()));
        let relations: Vec<(Relation, &str)> =
            completed.relationships.iter().map(|r| (r.relation, r.subject.as_str())).collect();
        assert_eq!(relations, [(Relation::ProducedFrom, uri.as_str()), (Relation::CertificateFor, uri.as_str())]);
        assert_eq!(completed.assurance, Assurance::Computed);
        let provenance = concluded.parts.provenance.as_ref().expect("provenance");
        assert_eq!(provenance.install_tier, "OPERATOR");
        assert_eq!(concluded.parts.run.fuel_consumed, 42);
    }

    #[test]
    fn an_outcome_beyond_its_descriptor_is_malformed_and_nothing_of_it_is_stored() {
        let fake = Fake { answer: outcome("undeclared/1"), ..Fake::default() };
        let control = CallControl::default();
        let Ok(concluded) = run(&fake, &producer(), super::super::stages::ordinary(&control));
        assert_eq!((code(&concluded), concluded.stop), (Some(Code::MalformedOutput), StopReason::Failed));
        assert_eq!(asked(&fake), ["call sat.solve"]);
        let fake = Fake { answer: b"{\"output\": 1}".to_vec(), ..Fake::default() };
        let Ok(concluded) = run(&fake, &producer(), super::super::stages::ordinary(&control));
        assert_eq!(code(&concluded), Some(Code::MalformedOutput), "not an outcome");
    }

    #[test]
    fn an_attempt_that_would_store_artifacts_is_abandoned_before_it_stores_any() {
        let fake = Fake { answer: outcome("cert/1"), ..Fake::default() };
        let attempt = Run::Attempt(InlineLimits::DEFAULT, Abandoned);
        assert!(run(&fake, &producer(), attempt).is_err());
        assert_eq!(asked(&fake), ["call sat.solve"]);
    }

    #[test]
    fn an_artifact_the_store_did_not_keep_fails_the_call_unavailable_and_grants_nothing() {
        let fake = Fake { answer: outcome("cert/1"), artifacts_fail: true, ..Fake::default() };
        let control = CallControl::default();
        let Ok(concluded) = run(&fake, &producer(), super::super::stages::ordinary(&control));
        assert_eq!((code(&concluded), concluded.stop), (Some(Code::StorageFailed), StopReason::Unavailable));
        assert_eq!(asked(&fake), ["call sat.solve", "artifact certificate"]);
    }

    #[test]
    fn a_checker_is_run_by_the_verifier_never_as_a_producer() {
        let fake = Fake::default();
        let checker = catalog_entry("sat.lrat.verify", EntryKind::Verifier, &[Mode::Verify]);
        let control = CallControl::default();
        let Ok(concluded) = run(&fake, &checker, super::super::stages::ordinary(&control));
        assert_eq!(asked(&fake), ["check sat.lrat.verify"]);
        assert_eq!(concluded.stop, StopReason::Completed);
    }
}
