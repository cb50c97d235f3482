//! What a verification established, and how a verdict reads once its
//! checker is recalled (see `crate::recall`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use strum::EnumIter;

use super::Assurance;
use crate::digest::Digest;

/// Outcome of a verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VerificationStatus {
    /// An authorized checker accepted evidence bound to the recorded claim.
    Verified,
    /// The checker rejected the evidence.
    Rejected,
    /// The checker cannot judge this input (beyond its bounds).
    Unsupported,
    /// No authorized checker ran: nothing was concluded.
    NotConcluded,
}

/// What a verification established, and exactly about what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VerificationRecord {
    /// The outcome.
    pub status: VerificationStatus,
    /// Why.
    pub reason: String,
    /// Checker role.
    pub checker_role: String,
    /// Digest of the checker component.
    pub checker_digest: Digest,
    /// Checker provider version.
    pub checker_version: String,
    /// Whether the operator policy authorizes this digest for this role.
    pub checker_authorized: bool,
    /// Certificate format judged.
    pub certificate_format: String,
    /// Certificate artifacts the checker read.
    pub certificate_artifacts: Vec<String>,
    /// SHA-256 of the canonical claim the checker judged.
    pub claim_digest: Option<Digest>,
    /// SHA-256 of the canonical candidate the checker judged.
    pub candidate_digest: Option<Digest>,
    /// SHA-256 of the canonical semantics the checker judged under.
    pub semantics_digest: Option<Digest>,
    /// SHA-256 of the canonical scope of the verdict.
    pub scope_digest: Option<Digest>,
    /// SHA-256 over claim, semantics, candidate, scope, certificate format and
    /// checker digest and version: changes when any one of them changes.
    pub binding_digest: Option<Digest>,
    /// What the checker established.
    pub checked: Vec<String>,
    /// What remains open.
    pub remaining_obligations: Vec<String>,
    /// Present only when this verdict's checker was recalled after it gave
    /// it: the verdict above then reads `NOT_CONCLUDED`, and what was stored
    /// is kept here, with the new verdicts of any re-check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<RecallNote>,
    /// Present only when the operator's policy asks more than one checker of
    /// this role to accept (`[checkers.quorum]`): every checker's verdict.
    /// The checker above answered first; the status is `VERIFIED` only when
    /// `required` of them, with distinct digests and providers, accepted
    /// this same claim, semantics, candidate and scope, and none rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<Quorum>,
}

/// The verdicts of every checker a quorum asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quorum {
    /// How many had to accept.
    pub required: u32,
    /// How many accepted and counted.
    pub counted: u32,
    /// Each checker asked, the first one first, then by digest.
    pub verdicts: Vec<QuorumVerdict>,
}

/// One checker's verdict in a quorum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuorumVerdict {
    /// The checker's capability id.
    pub checker_id: String,
    /// Its component digest.
    pub checker_digest: Digest,
    /// Its provider.
    pub provider: String,
    /// Its provider version.
    pub checker_version: String,
    /// What it answered.
    pub outcome: QuorumOutcome,
    /// Its reason (or why it gave no verdict).
    pub reason: String,
    /// Whether its acceptance counts towards the quorum (an acceptance of
    /// another claim, or by a provider already counted, does not).
    pub counted: bool,
    /// SHA-256 of its verdict's claim, semantics, candidate and scope, as the record's binding covers them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_digest: Option<Digest>,
}

/// What one checker of a quorum answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum QuorumOutcome {
    /// It accepted the certificate.
    Accepted,
    /// It rejected the certificate.
    Rejected,
    /// The certificate is beyond what it judges.
    Unsupported,
    /// It gave no verdict: it failed, ran out of a budget, or refused the input.
    NoVerdict,
}

/// How a stored verdict reads once its checker is recalled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallNote {
    /// Why the checker was recalled.
    pub reason: String,
    /// Who recalled it: the operator (the policy), or this project (the bundled policy's history).
    pub recalled_by: RecalledBy,
    /// The verdict as stored.
    pub stored_status: VerificationStatus,
    /// Its reason as stored.
    pub stored_reason: String,
    /// The result's assurance as stored.
    pub stored_assurance: Assurance,
    /// The stored episode (`episode://sha256/…`), whose digest names the bytes as stored, before this reading.
    pub stored_episode: String,
    /// Verdicts recorded beside it by a re-check (`jacobian recheck`), oldest first.
    pub rechecks: Vec<RecheckNote>,
}

/// Who recalled a checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RecalledBy {
    /// The operator's policy.
    Operator,
    /// This project: the checker shipped in an earlier release and was found unsound.
    Bundled,
}

/// One verdict a re-check recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecheckNote {
    /// The re-check's episode (`episode://sha256/…`).
    pub episode: String,
    /// Its verdict.
    pub status: VerificationStatus,
    /// The checker that gave it.
    pub checker_digest: Digest,
}
