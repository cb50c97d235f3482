//! A quorum of checkers: when the operator's policy asks `k > 1` checkers
//! of a role to accept (`[checkers.quorum]`), a check of a certificate of
//! that role runs, after the checker the call resolved to, every other
//! visible checker the policy authorizes for the role that reads the
//! certificate's format and takes the same input — each in a fresh store,
//! under the same budgets, one after another — and the record lists every
//! verdict ([`Quorum`]).
//!
//! **Rule:** the status is `VERIFIED` only when at least `k` checkers with
//! distinct component digests and distinct providers accepted, each bound to
//! the same claim, semantics, candidate and scope as the first checker's
//! verdict, and no checker rejected. One rejection makes it `REJECTED`
//! whatever the others said; fewer than `k` acceptances leave it
//! `NOT_CONCLUDED` (or `UNSUPPORTED`, when the first checker said so and
//! nobody rejected), with the missing acceptances named as an obligation.
//! A component that exports several checkers of the role has each asked
//! (any of them may reject); its acceptances count once.

use std::borrow::Cow;

use jacobian_guest::protocol::{Mode, Verdict, VerdictKind};
use serde_json::{Value, json};

use crate::catalog::{CatalogEntry, EntryKind};
use crate::contract::{Quorum, QuorumOutcome, QuorumVerdict, VerificationStatus};
use crate::digest::Digest;
use crate::experiments::StopReason;
use crate::policy::Policy;

use super::Runtime;
use super::diagnostics::malformed;
use super::execute::facts;
use super::result::RunFacts;
use super::stages::{Call, Prepared, Run};

/// What the other checkers of a quorum said, and what they spent.
pub(super) struct Asked<'a> {
    pub run: RunFacts,
    pub answers: Vec<(&'a CatalogEntry, Result<Verdict, String>)>,
}

impl Runtime {
    /// The other checkers a quorum for `role` asks besides `first`, in digest order.
    fn panel<'a>(
        &'a self,
        policy: &Policy,
        role: &str,
        format: &str,
        first: &CatalogEntry,
        input: &Value,
    ) -> Vec<&'a CatalogEntry> {
        let mut panel: Vec<&CatalogEntry> = self
            .catalog
            .entries()
            .filter(|e| {
                e.kind == EntryKind::Verifier
                    && e.component != first.component
                    && !policy.allowed_modes(&e.id, &e.tags, &e.modes).is_empty()
                    && self.checker_authorized_for(policy, e, role)
                    && e.certificate_formats.iter().any(|f| f == format)
                    && e.input_validator.is_valid(input)
            })
            .collect();
        panel.sort_by(|a, b| (a.component, &a.id).cmp(&(b.component, &b.id)));
        panel
    }

    /// Ask the rest of the quorum: the same request, to each other checker.
    /// A call the caller cancelled, or that found nothing to run on, ends the
    /// whole check with its failure.
    pub(super) fn ask_quorum<'a, A: Copy>(
        &'a self,
        prepared: &Prepared<'_>,
        policy: &Policy,
        (role, format): (&str, &str),
        request: &[u8],
        how: Run<'_, A>,
    ) -> Result<Result<Asked<'a>, (RunFacts, super::execute::Answer)>, A> {
        if let Run::Attempt(_, abandoned) = how {
            return Err(abandoned);
        }
        let mut asked = Asked { run: RunFacts::default(), answers: Vec::new() };
        for entry in self.panel(policy, role, format, prepared.call.entry, &prepared.call.input) {
            let installed = match self.installed(entry) {
                Ok(installed) => installed,
                Err(d) => {
                    asked.answers.push((entry, Err(d.message)));
                    continue;
                }
            };
            let member = Prepared {
                call: Call {
                    entry,
                    installed,
                    mode: Mode::Verify,
                    input: Cow::Borrowed(prepared.call.input.as_ref()),
                    routed: None,
                },
                budgets: prepared.budgets,
                wall: prepared.wall,
                access: prepared.access.clone(),
                references: prepared.references.clone(),
                input_digest: prepared.input_digest,
                input_bytes: prepared.input_bytes,
                tenant: prepared.tenant,
            };
            let report = self.call_component(&member, request, how)?;
            let (run, answer) = facts(report, &entry.id, &member);
            asked.run = std::mem::take(&mut asked.run).and(run);
            let answer = match answer {
                Ok(bytes) => serde_json::from_slice::<Verdict>(&bytes)
                    .map_err(|e| malformed(&entry.id, format!("the answer is not a valid verdict: {e}")).message),
                Err((diagnostic, StopReason::Failed)) => Err(diagnostic.message),
                Err((diagnostic, stop)) => return Ok(Err((asked.run, Err((diagnostic, stop))))),
            };
            asked.answers.push((entry, answer));
        }
        Ok(Ok(asked))
    }
}

/// SHA-256 over what a verdict judged: claim, semantics, candidate, scope.
pub(super) fn judged_digest(verdict: &Verdict) -> Digest {
    Digest::of_json(&json!({
        "claim": Digest::of_json(&verdict.claim),
        "semantics": Digest::of_json(&verdict.semantics),
        "candidate": Digest::of_json(&verdict.candidate),
        "scope": Digest::of_json(&crate::json::value(&verdict.scope)),
    }))
}

/// Count the quorum: the first checker's verdict, then the others'.
/// Returns the record's quorum and the status it decides.
pub(super) fn count(
    required: usize,
    first: (&CatalogEntry, &Verdict),
    others: &[(&CatalogEntry, Result<Verdict, String>)],
) -> (Quorum, VerificationStatus) {
    let bound = judged_digest(first.1);
    let mut counted_from: Vec<(&str, Digest)> = Vec::new();
    let mut verdicts = Vec::new();
    let answers = std::iter::once((first.0, Ok::<&Verdict, &String>(first.1)))
        .chain(others.iter().map(|(e, a)| (*e, a.as_ref())));
    for (entry, answer) in answers {
        let (outcome, reason, judged) = match answer {
            Ok(v) => {
                let outcome = match v.verdict {
                    VerdictKind::Accepted => QuorumOutcome::Accepted,
                    VerdictKind::Rejected => QuorumOutcome::Rejected,
                    VerdictKind::Unsupported => QuorumOutcome::Unsupported,
                };
                (outcome, v.reason.clone(), Some(judged_digest(v)))
            }
            Err(message) => (QuorumOutcome::NoVerdict, message.clone(), None),
        };
        let provider = entry.provider.name.as_str();
        let mut reason = reason;
        let counted = outcome == QuorumOutcome::Accepted && {
            if judged != Some(bound) {
                reason = format!("not counted: it judged another claim, semantics, candidate or scope; {reason}");
                false
            } else if counted_from.iter().any(|(p, d)| *p == provider || *d == entry.component) {
                reason = format!("not counted: its provider or component is counted already; {reason}");
                false
            } else {
                counted_from.push((provider, entry.component));
                true
            }
        };
        verdicts.push(QuorumVerdict {
            checker_id: entry.id.clone(),
            checker_digest: entry.component,
            provider: provider.to_owned(),
            checker_version: entry.provider.version.clone(),
            outcome,
            reason: crate::limits::bounded_text(reason),
            counted,
            judged_digest: judged,
        });
    }
    let counted = verdicts.iter().filter(|v| v.counted).count();
    let status = if verdicts.iter().any(|v| v.outcome == QuorumOutcome::Rejected) {
        VerificationStatus::Rejected
    } else if counted >= required {
        VerificationStatus::Verified
    } else if first.1.verdict == VerdictKind::Unsupported {
        VerificationStatus::Unsupported
    } else {
        VerificationStatus::NotConcluded
    };
    (Quorum { required: required as u32, counted: counted as u32, verdicts }, status)
}

/// The record's reason and open obligation, once a quorum is counted.
pub(super) fn explain(
    quorum: &Quorum,
    status: VerificationStatus,
    role: &str,
    first_reason: &str,
) -> (String, Option<String>) {
    let counted: Vec<String> = quorum
        .verdicts
        .iter()
        .filter(|v| v.counted)
        .map(|v| format!("{} ({})", v.checker_id, v.checker_digest))
        .collect();
    let k = quorum.required;
    match status {
        VerificationStatus::Rejected => {
            let by: Vec<String> = quorum
                .verdicts
                .iter()
                .filter(|v| v.outcome == QuorumOutcome::Rejected)
                .map(|v| format!("{} ({}) rejected: {}", v.checker_id, v.checker_digest, v.reason))
                .collect();
            (format!("a quorum of {k} checkers of role {role} was asked and {}", by.join("; ")), None)
        }
        VerificationStatus::Verified => (
            format!("{first_reason} (quorum: {} of the {k} required accepted: {})", quorum.counted, counted.join(", ")),
            None,
        ),
        _ => {
            let reason = format!(
                "the operator's policy asks {k} checkers of role {role} with distinct providers to accept; {} did, of {} asked ({first_reason})",
                quorum.counted,
                quorum.verdicts.len()
            );
            let obligation = format!(
                "acceptance of the same claim by {} more authorized checker(s) of role {role}, each of another provider",
                k.saturating_sub(quorum.counted)
            );
            (reason, Some(obligation))
        }
    }
}
