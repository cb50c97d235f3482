//! A checker's call and its verdict, bound to what it judged.
//!
//! **Invariant: this is the only place `VERIFIED` is set**, and only when a
//! certificate the host recorded is judged, the operator policy authorizes
//! the checker's digest for exactly the role that certificate needs (fixed
//! when its producer made it), and the checker accepted. Otherwise the
//! checker is not run: the answer is `NOT_CONCLUDED` with the open
//! obligation named. The record names the certificate's format, and the
//! binding digest covers it.

use jacobian_guest::protocol::{CheckRequest, Verdict, VerdictKind};
use serde_json::json;

use crate::contract::{Assurance, Relation, Relationship, VerificationRecord, VerificationStatus};
use crate::digest::Digest;
use crate::experiments::StopReason;
use crate::policy::Policy;

use super::Runtime;
use super::diagnostics::{malformed, storage_failed_text};
use super::execute::{Answer, facts};
use super::pipeline::{Certificate, Prepared, Run};
use super::result::{Completed, RunFacts, not_concluded};

impl Runtime {
    /// Run a checker if the policy authorizes it, and bind its verdict.
    pub(super) fn check<A: Copy>(
        &self,
        prepared: &Prepared<'_>,
        policy: &Policy,
        how: Run<'_, A>,
    ) -> Result<(RunFacts, Answer), A> {
        let entry = prepared.call.entry;
        let own_role = entry.checker_roles.first().cloned().unwrap_or_default();
        let judged = match self.judging(&prepared.references, prepared.call.routed.as_ref()) {
            Ok(judged) => judged,
            Err(e) => return Ok((RunFacts::default(), Err((storage_failed_text(e), StopReason::Unavailable)))),
        };
        let (role, format) = match &judged {
            Judging::Certificate(c) => (c.record.checker_role.clone(), c.record.certificate_format.clone()),
            Judging::Nothing | Judging::Mixed(_) | Judging::Unbound(_) => (own_role.clone(), String::new()),
        };
        let authorized = self.checker_authorized_for(policy, entry, &role);
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
        let report = self.call_component(prepared, &bytes, how)?;
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
            match self.ask_quorum(prepared, policy, (&role, &format), &bytes, how)? {
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
