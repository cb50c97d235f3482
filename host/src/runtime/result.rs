//! The one place a [`CapabilityResult`] is built: from typed parts, once,
//! after the pipeline has concluded. What the episode holds is fixed then;
//! the record stage adds only what lies outside the episode (transport, the
//! text view and accounting).

use jacobian_guest::protocol::{Mode, Qualifier, Scope};
use serde_json::Value;

use crate::contract::{
    Accounting, ArtifactRef, Assurance, CapabilityResult, CheckRoute, Diagnostic, LogLine, Provenance, RESULT_CONTRACT,
    Relationship, ResultView, SCOPE_RULE, Status, Transport, VerificationRecord, VerificationStatus,
};

/// Everything an invocation concluded, before it is recorded.
#[derive(Debug, Clone)]
pub(crate) struct ResultParts {
    /// The capability id the caller invoked (`certificate.verify` for a routed check).
    pub capability_id: String,
    /// The mode, once known.
    pub mode: Option<Mode>,
    /// The resolved component, from the `resolve` stage on.
    pub provenance: Option<Provenance>,
    /// What the component spent and logged (nothing if it never ran).
    pub run: RunFacts,
    /// The answer, or why there is none.
    pub body: Body,
}

/// What a component call left besides its answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunFacts {
    pub fuel_consumed: u64,
    pub guest_log: Vec<LogLine>,
}

impl RunFacts {
    /// Two calls' facts together: the fuel summed, the logs in order.
    pub fn and(mut self, more: RunFacts) -> RunFacts {
        self.fuel_consumed = self.fuel_consumed.saturating_add(more.fuel_consumed);
        self.guest_log.extend(more.guest_log);
        self
    }
}

/// Completed or failed.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// The operation ran to its end (its output may still say "not found", or
    /// a verification may have concluded nothing).
    Completed(Box<Completed>),
    /// No conclusion.
    Failed(Diagnostic),
}

/// The parts of a completed answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Completed {
    pub output: Option<Value>,
    pub artifacts: Vec<ArtifactRef>,
    pub relationships: Vec<Relationship>,
    pub scope: Option<Scope>,
    pub qualifiers: Vec<Qualifier>,
    pub obligations: Vec<String>,
    pub check_with: Option<CheckRoute>,
    /// The verification record of a VERIFY call; it alone decides whether
    /// the assurance is `VERIFIED` (see `verify.rs`).
    pub verification: Option<VerificationRecord>,
    pub assurance: Assurance,
}

impl ResultParts {
    /// A failure before anything was resolved or ran.
    pub fn failed(capability_id: &str, mode: Option<Mode>, diagnostic: Diagnostic) -> Self {
        ResultParts {
            // An id longer than any capability's is echoed by its prefix.
            capability_id: crate::limits::clip(capability_id, crate::limits::MAX_ID_BYTES).into_owned(),
            mode,
            provenance: None,
            run: RunFacts::default(),
            body: Body::Failed(diagnostic),
        }
    }
}

/// Build the result. The only `CapabilityResult` literal in the crate.
pub(crate) fn build(parts: ResultParts) -> CapabilityResult {
    let ResultParts { capability_id, mode, provenance, run, body } = parts;
    let (status, diagnostic, completed) = match body {
        Body::Completed(completed) => (Status::Completed, None, *completed),
        Body::Failed(diagnostic) => (Status::Failed, Some(diagnostic), Completed::default()),
    };
    let Completed {
        output,
        artifacts,
        relationships,
        scope,
        qualifiers,
        obligations,
        check_with,
        verification,
        assurance,
    } = completed;
    CapabilityResult {
        contract: RESULT_CONTRACT.into(),
        capability_id,
        mode,
        status,
        output,
        artifacts,
        relationships,
        scope,
        qualifiers,
        assurance,
        obligations,
        check_with,
        verification,
        diagnostic,
        provenance,
        fuel_consumed: run.fuel_consumed,
        guest_log: run.guest_log,
        scope_rule: SCOPE_RULE.into(),
        transport: None,
        text: String::new(),
        accounting: Accounting::default(),
        members: Default::default(),
    }
}

/// What a result carries beyond its episode: where the episode is and what
/// the model saw, and the run's accounting.
pub(crate) fn deliver(
    result: &mut CapabilityResult,
    transport: Option<Transport>,
    text: String,
    accounting: Accounting,
) {
    result.transport = transport;
    result.text = text;
    result.accounting = accounting;
}

/// The transport and text view of a result that is not stored (a refused
/// request, a budget or quota stop, a cancellation, no slot): the text is the
/// result itself, which is small, so it is complete in text whatever the
/// view; the transport says so and that no episode holds it.
pub(crate) fn unrecorded(result: &CapabilityResult, view: ResultView) -> (Option<Transport>, String) {
    let mut value = crate::json::value(&result);
    if let Some(map) = value.as_object_mut() {
        map.remove("accounting");
        map.remove("transport");
    }
    let text = crate::json::text(&value);
    let canonical = crate::digest::canonical_json(&value);
    let transport = Transport {
        view,
        logical_bytes: canonical.len() as u64,
        model_visible_bytes: text.len() as u64,
        output_complete_in_text: true,
        full_result_digest: crate::digest::Digest::of(&canonical),
        stored: false,
        full_result_episode_uri: None,
    };
    (Some(transport), text)
}

/// A record that concludes nothing yet: no reason, bindings, checks or
/// obligations, for the checker `checker_digest` at `checker_version`.
pub(super) fn not_concluded(
    checker_role: String,
    (checker_digest, checker_version): (crate::digest::Digest, String),
    checker_authorized: bool,
    certificate_format: String,
    certificate_artifacts: Vec<String>,
) -> VerificationRecord {
    VerificationRecord {
        status: VerificationStatus::NotConcluded,
        reason: String::new(),
        checker_role,
        checker_digest,
        checker_version,
        checker_authorized,
        certificate_format,
        certificate_artifacts,
        claim_digest: None,
        candidate_digest: None,
        semantics_digest: None,
        scope_digest: None,
        binding_digest: None,
        checked: Vec::new(),
        remaining_obligations: Vec::new(),
        recall: None,
        quorum: None,
    }
}
