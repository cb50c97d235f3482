//! Requests and responses of `workspace.open`, `workspace.write` and
//! `workspace.query`. Drafts have no field for verification, assertion or
//! staleness: `deny_unknown_fields` turns an attempt to set one into a typed
//! error naming it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use strum::EnumIter;

/// `workspace.open` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    /// Idempotency key: the same key and payload return the original response.
    pub idempotency_key: String,
    /// Title of the canonical problem card (kind GOAL).
    pub title: String,
    /// Statement of the problem (the problem card's body).
    pub statement: String,
}

/// `workspace.write` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteRequest {
    /// The workspace.
    pub workspace_id: String,
    /// The revision this write is based on; it must still be the branch head.
    pub base_revision: String,
    /// Idempotency key: the same key and payload return the original response.
    pub idempotency_key: String,
    /// Entries, applied in order as one revision.
    pub entries: Vec<Entry>,
}

/// One entry of a write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Entry {
    /// A finding card.
    Finding {
        /// Name later entries of this write use to refer to it.
        #[serde(default)]
        client_ref: Option<String>,
        /// Kind (a GOAL finding is a sub-goal; the problem card is card-1).
        kind: FindingKind,
        /// Title.
        title: String,
        /// Body.
        #[serde(default)]
        body: String,
        /// Cards (ids or earlier client_refs) this finding depends on.
        #[serde(default)]
        depends_on: Vec<String>,
        /// Cards (ids or earlier client_refs) this finding assumes.
        #[serde(default)]
        assumptions: Vec<String>,
    },
    /// An attempt at a card.
    Attempt {
        /// Name later entries of this write use to refer to it.
        #[serde(default)]
        client_ref: Option<String>,
        /// The card attempted (id or earlier client_ref).
        target: String,
        /// How.
        method: String,
        /// Operational outcome (COMPLETED never means VERIFIED).
        outcome: AttemptOutcome,
        /// What happened.
        summary: String,
    },
    /// A lifecycle margin mark on a card.
    Mark {
        /// The card (id or earlier client_ref).
        card: String,
        /// The mark.
        mark: MarkKind,
        /// Why (required).
        reason: String,
        /// The replacing card (SUPERSEDED only).
        #[serde(default)]
        replacement: Option<String>,
    },
    /// Set the focus to these cards (replaces the previous focus).
    Focus {
        /// Cards (ids or earlier client_refs).
        cards: Vec<String>,
    },
    /// Free scratch text.
    Scratch {
        /// The text.
        text: String,
    },
}

/// Finding kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FindingKind {
    /// A goal: the problem card (card-1, made by workspace.open) or a sub-goal.
    Goal,
    /// A question to be closed.
    OpenQuestion,
    /// A claim.
    Claim,
    /// A lemma.
    Lemma,
    /// A definition.
    Definition,
    /// A conjecture.
    Conjecture,
    /// An observation.
    Observation,
    /// A counterexample.
    Counterexample,
    /// A note.
    Note,
}

/// Attempt outcomes (operational, never mathematical assurance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AttemptOutcome {
    /// The attempt ran to its end (it does not mean VERIFIED or close anything).
    Completed,
    /// It failed.
    Failed,
    /// It was stopped before its end.
    Abandoned,
    /// It ended without a usable answer.
    Inconclusive,
    /// It could not proceed.
    Blocked,
}

/// Lifecycle marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MarkKind {
    /// Reopen or restore a card.
    Active,
    /// Close a GOAL or OPEN_QUESTION (workflow state only).
    Closed,
    /// Withdraw a card; explicit dependents become stale.
    Retracted,
    /// Replace a card; old dependents become stale (no equivalence is implied).
    Superseded,
    /// File a card away without invalidating dependents.
    Archived,
}

/// `workspace.query` views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum QueryView {
    /// Where things stand: problem, focus, open items, recent revisions and attempts.
    Resume,
    /// Active goals and open questions.
    Frontier,
    /// Attempts, newest first (optionally of one card).
    Attempts,
    /// A target card's dependency-first closure and its recent attempts.
    Context,
    /// Active cards that depend on a retracted or superseded card.
    Stale,
}

/// `workspace.query` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryRequest {
    /// The workspace.
    pub workspace_id: String,
    /// The view.
    pub view: QueryView,
    /// Answer at exactly this revision (default: the head).
    #[serde(default)]
    pub revision_id: Option<String>,
    /// The card (CONTEXT requires it; ATTEMPTS may filter by it).
    #[serde(default)]
    pub target_card_id: Option<String>,
    /// Most items to return (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Who recorded an item, and its assurance: always the agent, never verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Recorded {
    /// Always AGENT_RECORDED.
    pub recorded_by: RecordedBy,
    /// Always UNVERIFIED: persistence has no mathematical assurance.
    pub verification: Unverified,
}

/// The only recorder of workspace items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RecordedBy {
    /// The agent that wrote it.
    #[default]
    AgentRecorded,
}

/// The only assurance of workspace items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Unverified {
    /// Nothing here is verified.
    #[default]
    Unverified,
}

// Answers are read back from storage on a retry: unknown fields (from a later
// binary, after a rollback) are ignored, not refused.
/// What `workspace.open` answers (and answers again, identically, to a retry with its key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Opened {
    /// The new workspace.
    pub workspace_id: String,
    /// Its problem card (card-1).
    pub problem_card_id: String,
    /// The only branch.
    pub branch: String,
    /// The initial revision (rev-0).
    pub revision_id: String,
    /// URI of the immutable revision artifact.
    pub revision_artifact_uri: String,
    /// Recorded by the agent, unverified.
    pub provenance: Recorded,
}

/// What `workspace.write` answers (and answers again, identically, to a retry with its key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Written {
    /// The workspace.
    pub workspace_id: String,
    /// The only branch.
    pub branch: String,
    /// The revision this write became.
    pub revision_id: String,
    /// The revision it was written against.
    pub base_revision: String,
    /// URI of the immutable revision artifact.
    pub revision_artifact_uri: String,
    /// The card and attempt ids given to the write's client_refs, in entry order.
    pub assigned: Vec<Assigned>,
    /// Cards this write made stale.
    pub stale_warnings: StaleWarnings,
    /// Recorded by the agent, unverified.
    pub provenance: Recorded,
}

/// One client_ref and the id it became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Assigned {
    /// The write's reference.
    pub client_ref: String,
    /// The id given to it.
    pub id: String,
}

/// Staleness a write caused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StaleWarnings {
    /// Cards stale after this write that were not before it.
    pub newly_stale: Vec<String>,
    /// Cards stale after this write.
    pub stale_total: usize,
}
