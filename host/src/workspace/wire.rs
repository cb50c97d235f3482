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
        /// Kind (GOAL is reserved for the problem card).
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
    /// The canonical problem card (created only by workspace.open).
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
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
