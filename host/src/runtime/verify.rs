//! A checker's call and its verdict, bound to what it judged.
//!
//! **Invariant: this is the only place `VERIFIED` is set**, and only when a
//! certificate the host recorded is judged, the operator policy authorizes
//! the checker's digest for exactly the role that certificate needs (fixed
//! when its producer made it), and the checker accepted. Otherwise the
//! checker is not run: the answer is `NOT_CONCLUDED` with the open
//! obligation named. The record names the certificate's format, and the
//! binding digest covers it.

use std::sync::Arc;

use jacobian_guest::protocol::{CheckRequest, Verdict, VerdictKind};
use serde_json::json;

use crate::catalog::CatalogEntry;
use crate::contract::{Assurance, Relation, Relationship, VerificationRecord, VerificationStatus};
use crate::digest::Digest;
use crate::engine::CallReport;
use crate::experiments::StopReason;
use crate::policy::Policy;
use crate::registry::Installed;

use super::Runtime;
use super::diagnostics::{malformed, storage_failed_text};
use super::execute::{Answer, facts};
use super::quorum::Asked;
use super::result::{Completed, RunFacts, not_concluded};
use super::stages::{Certificate, Prepared, Run};

/// What `check` reads and runs with: what the input's artifacts are, the
/// operator's authorization, the checker's call and the rest of a quorum.
pub(super) trait Verifier<I> {
    /// What a checker call judges (`certificates.rs`); `Err`: the store failed.
    fn judging(&self, references: &[String], routed: Option<&Certificate>) -> Result<Judging, String>;
    /// Whether the operator authorizes this checker for exactly `role`.
    fn authorized(&self, policy: &Policy, entry: &CatalogEntry, role: &str) -> bool;
    /// One call of the checker, in a fresh store, under its budgets.
    fn call<A: Copy>(&self, prepared: &Prepared<'_, I>, request: &[u8], how: Run<'_, A>) -> Result<CallReport, A>;
    /// The other checkers of the role's quorum, on the same request (`quorum.rs`).
    fn ask_quorum<'a, A: Copy>(
        &'a self,
        prepared: &Prepared<'_, I>,
        policy: &Policy,
        role_and_format: (&str, &str),
        request: &[u8],
        how: Run<'_, A>,
    ) -> Result<Result<Asked<'a>, (RunFacts, Answer)>, A>;
}

/// The check, as a value holding what it reads and runs with.
pub(super) struct Check<'r, V> {
    pub verifier: &'r V,
}

impl<V> Check<'_, V> {
    /// Run a checker if the policy authorizes it, and bind its verdict.
    pub fn check<I, A: Copy>(
        &self,
        prepared: &Prepared<'_, I>,
        policy: &Policy,
        how: Run<'_, A>,
    ) -> Result<(RunFacts, Answer), A>
    where
        V: Verifier<I>,
    {
        let entry = prepared.call.entry;
        let own_role = entry.checker_roles.first().cloned().unwrap_or_default();
        let judged = match self.verifier.judging(&prepared.references, prepared.call.routed.as_ref()) {
            Ok(judged) => judged,
            Err(e) => return Ok((RunFacts::default(), Err((storage_failed_text(e), StopReason::Unavailable)))),
        };
        let (role, format) = match &judged {
            Judging::Certificate(c) => (c.record.checker_role.clone(), c.record.certificate_format.clone()),
            Judging::Nothing | Judging::Mixed(_) | Judging::Unbound(_) => (own_role.clone(), String::new()),
        };
        let authorized = self.verifier.authorized(policy, entry, &role);
        let mut record = not_concluded(
            role.clone(),
            (entry.component, entry.provider.version.clone()),
            authorized,
            format.clone(),
            prepared.references.clone(),
        );
        let recalled = policy.recall_of(&entry.component);
        let refusal = match &judged {
            Judging::Nothing => Some((
                format!(
                    "none of the input's artifacts is a certificate made by a producer's declared route, so no role is \
                     recorded for a verdict to bind to; checker {} was not run",
                    entry.component
                ),
                "a certificate made by a producer's declared route, checked by a checker the operator authorizes for \
                 its role"
                    .to_owned(),
            )),
            Judging::Unbound(uri) => Some((
                format!(
                    "{uri} is neither a certificate of this check nor an artifact its certificate names, so the \
                     check cannot bind to one certificate's role; checker {} was not run",
                    entry.component
                ),
                "a check whose input is one certificate and the artifacts it names, by a checker the operator \
                 authorizes for its role"
                    .to_owned(),
            )),
            Judging::Mixed(roles) => Some((
                format!(
                    "the input names certificates of several kinds ({}); one verdict judges one role's certificates \
                     in one format, so checker {} was not run",
                    roles.join(", "),
                    entry.component
                ),
                format!(
                    "a separate check of each certificate by a checker authorized for its role ({})",
                    roles.join(", ")
                ),
            )),
            Judging::Certificate(c) if recalled.is_some() => Some((
                format!(
                    "checker {} ({}) was recalled ({}); it was not run for certificate {}",
                    entry.component,
                    entry.id,
                    recalled.as_ref().map(|r| r.reason.as_str()).unwrap_or_default(),
                    c.uri
                ),
                format!("independent check of {} by a checker that the operator authorizes for role {role}", c.uri),
            )),
            Judging::Certificate(c) if !authorized => Some((
                format!(
                    "checker {} ({}, role {own_role}) is not authorized by the operator policy for role {role}, the \
                     role certificate {} needs; it was not run",
                    entry.component, entry.id, c.uri
                ),
                format!("independent check of {} by a checker that the operator authorizes for role {role}", c.uri),
            )),
            Judging::Certificate(c) if !entry.certificate_formats.contains(&format) => Some((
                format!(
                    "checker {} does not declare format {format}, the format of certificate {}; it was not run",
                    entry.id, c.uri
                ),
                format!(
                    "independent check of {} by a checker that the operator authorizes for role {role} and reads \
                     format {format}",
                    c.uri
                ),
            )),
            Judging::Certificate(_) => None,
        };
        if let Some((reason, obligation)) = refusal {
            record.reason = reason;
            record.remaining_obligations = vec![obligation.clone()];
            let completed =
                Completed { obligations: vec![obligation], verification: Some(record), ..Completed::default() };
            return Ok((RunFacts::default(), Ok(completed)));
        }
        let request = CheckRequest { role: role.clone(), input: prepared.call.input.as_ref().clone() };
        let bytes = crate::json::bytes(&request);
        let report = self.verifier.call(prepared, &bytes, how)?;
        let (run, answer) = match facts(report, &entry.id, prepared) {
            (run, Ok(answer)) => (run, answer),
            (run, Err(failure)) => return Ok((run, Err(failure))),
        };
        let verdict: Verdict = match serde_json::from_slice(&answer) {
            Ok(verdict) => verdict,
            Err(e) => {
                let d = malformed(&entry.id, format!("the answer is not a valid verdict: {e}"));
                return Ok((run, Err((d, StopReason::Failed))));
            }
        };
        // A quorum: the other checkers of the role, on the same request.
        let required = policy.quorum(&role);
        let (run, others) = if required > 1 && matches!(judged, Judging::Certificate(_)) {
            match self.verifier.ask_quorum(prepared, policy, (&role, &format), &bytes, how)? {
                Ok(asked) => (run.and(asked.run), Some(asked.answers)),
                Err((more, failure)) => return Ok((run.and(more), failure)),
            }
        } else {
            (run, None)
        };
        record.status = match verdict.verdict {
            VerdictKind::Accepted => VerificationStatus::Verified,
            VerdictKind::Rejected => VerificationStatus::Rejected,
            VerdictKind::Unsupported => VerificationStatus::Unsupported,
        };
        record.reason = verdict.reason.clone();
        record.claim_digest = Some(Digest::of_json(&verdict.claim));
        record.candidate_digest = Some(Digest::of_json(&verdict.candidate));
        record.scope_digest = Some(Digest::of_json(&crate::json::value(&verdict.scope)));
        record.semantics_digest = Some(Digest::of_json(&verdict.semantics));
        record.checked = verdict.checked.clone();
        record.remaining_obligations = verdict.remaining_obligations.clone();
        let mut output = json!({
            "verdict": verdict.verdict,
            "reason": verdict.reason,
            "claim": verdict.claim,
            "semantics": verdict.semantics,
            "candidate": verdict.candidate,
        });
        if let Some(others) = others {
            let (quorum, status) = super::quorum::count(required, (entry, &verdict), &others);
            let (reason, obligation) = super::quorum::explain(&quorum, status, &role, &verdict.reason);
            output["quorum"] = json!({"required": quorum.required, "counted": quorum.counted, "status": status});
            record.status = status;
            record.reason = reason;
            record.remaining_obligations.extend(obligation);
            record.quorum = Some(quorum);
        }
        record.binding_digest = verification_binding(&record);
        let completed = Completed {
            relationships: prepared
                .references
                .iter()
                .map(|uri| Relationship { subject: "result".into(), relation: Relation::Checks, object: uri.clone() })
                .collect(),
            assurance: if record.status == VerificationStatus::Verified {
                Assurance::Verified
            } else {
                Assurance::None
            },
            output: Some(output),
            obligations: record.remaining_obligations.clone(),
            scope: Some(verdict.scope),
            verification: Some(record),
            ..Completed::default()
        };
        Ok((run, Ok(completed)))
    }
}

impl Verifier<Arc<Installed>> for Runtime {
    fn judging(&self, references: &[String], routed: Option<&Certificate>) -> Result<Judging, String> {
        Runtime::judging(self, references, routed)
    }

    fn authorized(&self, policy: &Policy, entry: &CatalogEntry, role: &str) -> bool {
        self.checker_authorized_for(policy, entry, role)
    }

    fn call<A: Copy>(&self, prepared: &Prepared<'_>, request: &[u8], how: Run<'_, A>) -> Result<CallReport, A> {
        self.call_component(prepared, request, how)
    }

    fn ask_quorum<'a, A: Copy>(
        &'a self,
        prepared: &Prepared<'_>,
        policy: &Policy,
        role_and_format: (&str, &str),
        request: &[u8],
        how: Run<'_, A>,
    ) -> Result<Result<Asked<'a>, (RunFacts, Answer)>, A> {
        Runtime::ask_quorum(self, prepared, policy, role_and_format, request, how)
    }
}

/// What a checker call judges.
pub(super) enum Judging {
    /// A certificate the host recorded when a producer made it.
    Certificate(Certificate),
    /// No artifact of the input is a recorded certificate.
    Nothing,
    /// Recorded certificates of several roles or formats (named, sorted).
    Mixed(Vec<String>),
    /// An artifact of the input that is no certificate of the check and is
    /// not named by one; or, for a routed call, the certificate itself when
    /// the checker's input does not name it.
    Unbound(String),
}

/// SHA-256 over everything a verdict is bound to: claim, semantics,
/// candidate, scope, certificate format, checker digest and version, and,
/// under a quorum, every checker's digest, outcome and judged digest. `None`
/// until the checker has reported all of them.
pub fn verification_binding(record: &VerificationRecord) -> Option<Digest> {
    let mut binding = json!({
        "claim": record.claim_digest.as_ref()?,
        "semantics": record.semantics_digest.as_ref()?,
        "candidate": record.candidate_digest.as_ref()?,
        "scope": record.scope_digest.as_ref()?,
        "certificate_format": record.certificate_format,
        "checker_digest": record.checker_digest,
        "checker_version": record.checker_version,
    });
    if let Some(quorum) = &record.quorum {
        let verdicts: Vec<_> = quorum
            .verdicts
            .iter()
            .map(|v| json!({"checker_digest": v.checker_digest, "outcome": v.outcome, "judged": v.judged_digest}))
            .collect();
        binding["quorum"] = json!({"required": quorum.required, "verdicts": verdicts});
    }
    Some(Digest::of_json(&binding))
}

#[cfg(test)]
mod tests {
    //! `check` on fakes: what the input's artifacts are, whether the operator
    //! authorizes the checker and what the checker answers are given; the
    //! tests count the checker's calls. No runtime is opened and nothing runs.

    use std::sync::Mutex;

    use jacobian_guest::protocol::{Completeness, Mode, Scope};

    use super::super::tests::{Stand, answered, catalog_entry, prepared};
    use super::*;
    use crate::catalog::EntryKind;
    use crate::contract::Code;
    use crate::engine::CallControl;
    use crate::store::CertificateRecord;

    const CERTIFICATE: &str = "artifact://sha256/0000000000000000000000000000000000000000000000000000000000000001";

    struct Fake {
        judging: fn() -> Result<Judging, String>,
        authorized: bool,
        answer: Vec<u8>,
        calls: Mutex<u32>,
    }

    impl Verifier<Stand> for Fake {
        fn judging(&self, _: &[String], _: Option<&Certificate>) -> Result<Judging, String> {
            (self.judging)()
        }

        fn authorized(&self, _: &Policy, _: &CatalogEntry, role: &str) -> bool {
            self.authorized && role == "sat"
        }

        fn call<A: Copy>(&self, _: &Prepared<'_, Stand>, request: &[u8], _: Run<'_, A>) -> Result<CallReport, A> {
            let request: CheckRequest = serde_json::from_slice(request).expect("a check request");
            assert_eq!(request.role, "sat", "the checker is asked about the certificate's role");
            *self.calls.lock().unwrap() += 1;
            Ok(answered(self.answer.clone(), 9))
        }

        fn ask_quorum<'a, A: Copy>(
            &'a self,
            _: &Prepared<'_, Stand>,
            _: &Policy,
            _: (&str, &str),
            _: &[u8],
            _: Run<'_, A>,
        ) -> Result<Result<Asked<'a>, (RunFacts, Answer)>, A> {
            panic!("no quorum is configured")
        }
    }

    fn certificate(role: &str, format: &str) -> Judging {
        let record = CertificateRecord {
            checker_role: role.into(),
            certificate_format: format.into(),
            verify_capability_id: "sat.lrat.verify".into(),
            capability_id: "sat.solve".into(),
            producer: Digest::of(b"producer"),
        };
        Judging::Certificate(Certificate { uri: CERTIFICATE.into(), record })
    }

    fn sat_lrat() -> Result<Judging, String> {
        Ok(certificate("sat", "lrat"))
    }

    fn verdict(kind: VerdictKind) -> Vec<u8> {
        let verdict = Verdict {
            verdict: kind,
            reason: "every step checked".into(),
            checked: Vec::new(),
            remaining_obligations: Vec::new(),
            claim: json!({"unsatisfiable": true}),
            semantics: json!("CNF"),
            candidate: json!(null),
            scope: Scope { completeness: Completeness::Exhaustive, statement: "the formula".into() },
        };
        crate::json::bytes(&verdict)
    }

    fn fake(judging: fn() -> Result<Judging, String>, authorized: bool, answer: Vec<u8>) -> Fake {
        Fake { judging, authorized, answer, calls: Mutex::new(0) }
    }

    /// The checker's answer and how many times it was called, under `policy`.
    fn check_under(fake: &Fake, policy: &Policy) -> (Answer, u32) {
        let mut checker = catalog_entry("sat.lrat.verify", EntryKind::Verifier, &[Mode::Verify]);
        checker.checker_roles = vec!["sat".into()];
        checker.certificate_formats = vec!["lrat".into()];
        let prepared = prepared(&checker, Mode::Verify, vec![CERTIFICATE.into()]);
        let control = CallControl::default();
        let Ok((_, answer)) =
            Check { verifier: fake }.check(&prepared, policy, super::super::stages::ordinary(&control));
        (answer, *fake.calls.lock().unwrap())
    }

    fn check(fake: &Fake) -> (Answer, u32) {
        check_under(fake, &Policy::default())
    }

    fn status(answer: &Answer) -> (Option<VerificationStatus>, Option<Assurance>) {
        match answer {
            Ok(completed) => (completed.verification.as_ref().map(|v| v.status), Some(completed.assurance)),
            Err(_) => (None, None),
        }
    }

    #[test]
    fn only_an_authorized_checker_accepting_a_recorded_certificate_makes_it_verified() {
        let (answer, calls) = check(&fake(sat_lrat, true, verdict(VerdictKind::Accepted)));
        assert_eq!((status(&answer), calls), ((Some(VerificationStatus::Verified), Some(Assurance::Verified)), 1));
        let record = answer.as_ref().unwrap().verification.clone().unwrap();
        assert!(record.checker_authorized && record.binding_digest.is_some());
        assert_eq!(record.binding_digest, verification_binding(&record), "bound to what it judged");
        let (answer, _) = check(&fake(sat_lrat, true, verdict(VerdictKind::Rejected)));
        assert_eq!(status(&answer), (Some(VerificationStatus::Rejected), Some(Assurance::None)));
        let (answer, _) = check(&fake(sat_lrat, true, verdict(VerdictKind::Unsupported)));
        assert_eq!(status(&answer), (Some(VerificationStatus::Unsupported), Some(Assurance::None)));
    }

    #[test]
    fn a_checker_not_authorized_for_the_certificates_role_is_not_run() {
        let (answer, calls) = check(&fake(sat_lrat, false, verdict(VerdictKind::Accepted)));
        assert_eq!((status(&answer), calls), ((Some(VerificationStatus::NotConcluded), Some(Assurance::None)), 0));
        let other_role = || Ok(certificate("smt", "lrat"));
        let (answer, calls) = check(&fake(other_role, true, verdict(VerdictKind::Accepted)));
        assert_eq!((status(&answer).0, calls), (Some(VerificationStatus::NotConcluded), 0), "authorized for sat only");
        assert!(!answer.unwrap().obligations.is_empty(), "the obligation is named");
    }

    #[test]
    fn a_recalled_checker_or_an_undeclared_format_is_not_run() {
        let fake_checker = fake(sat_lrat, true, verdict(VerdictKind::Accepted));
        let mut recalling = Policy::default();
        recalling.recall(catalog_entry("sat.lrat.verify", EntryKind::Verifier, &[]).component, "accepts a bogus RAT");
        let (answer, calls) = check_under(&fake_checker, &recalling);
        assert_eq!((status(&answer).0, calls), (Some(VerificationStatus::NotConcluded), 0));
        let drat = || Ok(certificate("sat", "drat"));
        let (answer, calls) = check(&fake(drat, true, verdict(VerdictKind::Accepted)));
        assert_eq!((status(&answer).0, calls), (Some(VerificationStatus::NotConcluded), 0));
    }

    #[test]
    fn an_input_that_is_no_single_recorded_certificate_is_not_checked() {
        let nothing = || Ok(Judging::Nothing);
        let mixed = || Ok(Judging::Mixed(vec!["sat/lrat".into(), "sat/drat".into()]));
        let unbound = || Ok(Judging::Unbound(CERTIFICATE.into()));
        for judging in [nothing, mixed, unbound] {
            let (answer, calls) = check(&fake(judging, true, verdict(VerdictKind::Accepted)));
            assert_eq!((status(&answer).0, calls), (Some(VerificationStatus::NotConcluded), 0));
        }
        let failing = || Err("the certificate records could not be read".to_owned());
        let (answer, calls) = check(&fake(failing, true, verdict(VerdictKind::Accepted)));
        assert_eq!(calls, 0);
        assert!(matches!(answer, Err((d, StopReason::Unavailable)) if d.code == Code::StorageFailed));
    }

    #[test]
    fn an_answer_that_is_no_verdict_is_malformed_never_verified() {
        let (answer, calls) = check(&fake(sat_lrat, true, b"{\"verdict\": \"ACCEPTED\"}".to_vec()));
        assert_eq!(calls, 1);
        assert!(matches!(answer, Err((d, StopReason::Failed)) if d.code == Code::MalformedOutput));
    }
}
