//! The deterministic, bounded views of `workspace.query`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::{Card, State, attempt_id, card_id, revision_id};
use super::wire::{AttemptOutcome, FindingKind, MarkKind, QueryView, Recorded};

/// Default and largest number of items in one view.
pub const DEFAULT_LIMIT: usize = 50;
/// Largest accepted `limit`.
pub const MAX_LIMIT: usize = 200;

/// A card in brief.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardSummary {
    /// card-<n>.
    pub id: String,
    /// Its kind.
    pub kind: FindingKind,
    /// Its title.
    pub title: String,
    /// Its lifecycle state (its latest mark, else ACTIVE).
    pub state: MarkKind,
    /// Whether it depends, through explicit links, on a retracted or superseded card.
    pub stale: bool,
    /// Cards it depends on.
    pub depends_on: Vec<String>,
    /// Cards it assumes.
    pub assumptions: Vec<String>,
    /// The revision that created it.
    pub created: String,
    /// Recorded by the agent, unverified.
    pub provenance: Recorded,
}

/// A card with its body and marks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardFull {
    /// The card in brief.
    #[serde(flatten)]
    pub summary: CardSummary,
    /// Its body.
    pub body: String,
    /// Its marks, oldest first.
    pub marks: Vec<MarkView>,
}

/// One mark on a card.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkView {
    /// The mark.
    pub mark: MarkKind,
    /// Why.
    pub reason: String,
    /// The replacing card (SUPERSEDED).
    pub replacement: Option<String>,
    /// The revision that made it.
    pub revision: String,
}

/// One attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptView {
    /// attempt-<n>.
    pub id: String,
    /// The card it was aimed at.
    pub target: String,
    /// How.
    pub method: String,
    /// Its operational outcome.
    pub outcome: AttemptOutcome,
    /// What happened.
    pub summary: String,
    /// The revision that recorded it.
    pub revision: String,
    /// Recorded by the agent, unverified.
    pub provenance: Recorded,
}

/// A stale card and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaleCard {
    /// The card.
    pub card: String,
    /// Its state.
    pub state: Option<MarkKind>,
    /// The retracted or superseded cards it reaches, with the path to each.
    pub roots: Vec<StaleRoot>,
}

/// A retracted or superseded card a stale card reaches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaleRoot {
    /// The root card.
    pub root: String,
    /// Its state.
    pub root_state: Option<MarkKind>,
    /// The explicit links from the stale card to it.
    pub path: Vec<String>,
}

/// A revision and how many entries it wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RevisionSize {
    /// rev-<n>.
    pub revision: String,
    /// Entries written.
    pub entries: usize,
}

/// A scratch note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScratchNote {
    /// The revision that wrote it.
    pub revision: String,
    /// The note.
    pub text: String,
}

/// RESUME: where things stand.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resume {
    /// The problem card.
    pub problem: CardFull,
    /// The focused cards.
    pub focus: Vec<CardSummary>,
    /// Active goals and open questions, up to the limit.
    pub open_items: Vec<CardSummary>,
    /// All active goals and open questions.
    pub open_items_total: usize,
    /// Cards in the workspace.
    pub cards_total: usize,
    /// Cards by lifecycle state.
    pub cards_by_state: BTreeMap<MarkKind, usize>,
    /// Attempts in the workspace.
    pub attempts_total: usize,
    /// The five newest attempts.
    pub recent_attempts: Vec<AttemptView>,
    /// The five newest revisions.
    pub recent_revisions: Vec<RevisionSize>,
    /// The three newest scratch notes.
    pub recent_scratch: Vec<ScratchNote>,
    /// Active cards that are stale.
    pub active_stale_total: usize,
}

/// A FRONTIER item: an active goal or open question and its attempt count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrontierItem {
    /// The card.
    #[serde(flatten)]
    pub card: CardSummary,
    /// Attempts aimed at it.
    pub attempts: usize,
}

/// FRONTIER.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frontier {
    /// Up to the limit.
    pub items: Vec<FrontierItem>,
    /// All of them.
    pub total: usize,
    /// Whether the limit cut the list.
    pub truncated: bool,
}

/// ATTEMPTS.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attempts {
    /// Newest first, up to the limit.
    pub attempts: Vec<AttemptView>,
    /// All that match.
    pub total: usize,
    /// Whether the limit cut the list.
    pub truncated: bool,
}

/// CONTEXT.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Context {
    /// The target card.
    pub target: CardFull,
    /// Its dependency-first closure, up to the limit.
    pub dependencies: Vec<CardFull>,
    /// The whole closure's size.
    pub total_dependency_count: usize,
    /// Whether the limit cut the closure.
    pub truncated: bool,
    /// The five newest attempts at the target.
    pub recent_target_attempts: Vec<AttemptView>,
    /// What the closure is and is not.
    pub note: &'static str,
}

/// STALE.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stale {
    /// Active stale cards, up to the limit.
    pub stale: Vec<StaleCard>,
    /// All of them.
    pub total: usize,
    /// Whether the limit cut the list.
    pub truncated: bool,
    /// What staleness is and is not.
    pub note: &'static str,
}

/// What `workspace.query` answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Queried {
    /// The workspace.
    pub workspace_id: String,
    /// The only branch.
    pub branch: String,
    /// The view asked for.
    pub view: QueryView,
    /// The revision the view shows.
    pub revision_id: String,
    /// The branch head when it was read.
    pub head_revision_id: String,
    /// Whether the view shows the head: `false` for a past revision (asked
    /// for by `revision_id`), which later writes may have changed since.
    pub at_head: bool,
    /// The view itself.
    pub result: ViewResult,
    /// Recorded by the agent, unverified.
    pub provenance: Recorded,
}

/// One view's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ViewResult {
    /// RESUME.
    Resume(Box<Resume>),
    /// FRONTIER.
    Frontier(Frontier),
    /// ATTEMPTS.
    Attempts(Attempts),
    /// CONTEXT.
    Context(Box<Context>),
    /// STALE.
    Stale(Stale),
}

/// What a query reads: a view, with the card it needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Selection<'a> {
    /// RESUME.
    Resume,
    /// FRONTIER.
    Frontier,
    /// ATTEMPTS, of one card or all.
    Attempts(Option<u64>),
    /// CONTEXT of a card.
    Context(&'a Card),
    /// STALE.
    Stale,
}

type StaleMap = BTreeMap<u64, Vec<(u64, Vec<u64>)>>;

fn card_ids(numbers: &[u64]) -> Vec<String> {
    numbers.iter().map(|n| card_id(*n)).collect()
}

fn card_summary(card: &Card, stale: &StaleMap) -> CardSummary {
    CardSummary {
        id: card_id(card.number),
        kind: card.kind,
        title: card.title.clone(),
        state: card.state(),
        stale: stale.contains_key(&card.number),
        depends_on: card_ids(&card.depends_on),
        assumptions: card_ids(&card.assumptions),
        created: revision_id(card.created),
        provenance: Recorded::default(),
    }
}

fn card_full(card: &Card, stale: &StaleMap) -> CardFull {
    CardFull {
        summary: card_summary(card, stale),
        body: card.body.clone(),
        marks: card
            .marks
            .iter()
            .map(|m| MarkView {
                mark: m.kind,
                reason: m.reason.clone(),
                replacement: m.replacement.map(card_id),
                revision: revision_id(m.revision),
            })
            .collect(),
    }
}

fn attempt_view(state: &State, index: usize) -> AttemptView {
    let a = &state.attempts[index];
    AttemptView {
        id: attempt_id(a.number),
        target: card_id(a.target),
        method: a.method.clone(),
        outcome: a.outcome,
        summary: a.summary.clone(),
        revision: revision_id(a.revision),
        provenance: Recorded::default(),
    }
}

fn stale_card(state: &State, number: u64, roots: &[(u64, Vec<u64>)]) -> StaleCard {
    StaleCard {
        card: card_id(number),
        state: state.card(number).map(Card::state),
        roots: roots
            .iter()
            .map(|(root, path)| StaleRoot {
                root: card_id(*root),
                root_state: state.card(*root).map(Card::state),
                path: card_ids(path),
            })
            .collect(),
    }
}

/// Active goals and open questions.
fn open_items(state: &State) -> Vec<&Card> {
    state
        .cards
        .iter()
        .filter(|c| matches!(c.kind, FindingKind::Goal | FindingKind::OpenQuestion) && c.state() == MarkKind::Active)
        .map(|c| &**c)
        .collect()
}

/// The newest attempts first, those at `target` only when given.
fn newest_attempts(state: &State, target: Option<u64>) -> impl Iterator<Item = usize> + '_ {
    (0..state.attempts.len()).rev().filter(move |i| target.is_none_or(|t| state.attempts[*i].target == t))
}

/// The view `selection` of `state`, with at most `limit` items in each list.
pub fn view(state: &State, selection: Selection<'_>, limit: usize) -> ViewResult {
    let stale = state.stale();
    let active_stale: Vec<u64> =
        stale.keys().copied().filter(|n| state.card(*n).is_some_and(|c| c.state() == MarkKind::Active)).collect();
    match selection {
        Selection::Resume => {
            let open = open_items(state);
            let mut cards_by_state = BTreeMap::new();
            for card in &state.cards {
                *cards_by_state.entry(card.state()).or_default() += 1;
            }
            let first = state.revision_sizes.len().saturating_sub(5);
            ViewResult::Resume(Box::new(Resume {
                problem: card_full(&state.cards[0], &stale),
                focus: state.focus.iter().filter_map(|n| state.card(*n)).map(|c| card_summary(c, &stale)).collect(),
                open_items: open.iter().take(limit).map(|c| card_summary(c, &stale)).collect(),
                open_items_total: open.len(),
                cards_total: state.cards.len(),
                cards_by_state,
                attempts_total: state.attempts.len(),
                recent_attempts: newest_attempts(state, None).take(5).map(|i| attempt_view(state, i)).collect(),
                recent_revisions: (first..state.revision_sizes.len())
                    .map(|r| RevisionSize { revision: revision_id(r as u64), entries: state.revision_sizes[r] })
                    .collect(),
                recent_scratch: state
                    .scratch
                    .iter()
                    .rev()
                    .take(3)
                    .map(|(r, text)| ScratchNote { revision: revision_id(*r), text: text.to_string() })
                    .collect(),
                active_stale_total: active_stale.len(),
            }))
        }
        Selection::Frontier => {
            let items = open_items(state);
            ViewResult::Frontier(Frontier {
                items: items
                    .iter()
                    .take(limit)
                    .map(|c| FrontierItem {
                        card: card_summary(c, &stale),
                        attempts: state.attempts.iter().filter(|a| a.target == c.number).count(),
                    })
                    .collect(),
                total: items.len(),
                truncated: items.len() > limit,
            })
        }
        Selection::Attempts(target) => {
            let chosen: Vec<usize> = newest_attempts(state, target).collect();
            ViewResult::Attempts(Attempts {
                attempts: chosen.iter().take(limit).map(|i| attempt_view(state, *i)).collect(),
                total: chosen.len(),
                truncated: chosen.len() > limit,
            })
        }
        Selection::Context(card) => {
            let target = card.number;
            let closure = dependency_first_closure(state, target, limit);
            let total = closure.total;
            ViewResult::Context(Box::new(Context {
                target: card_full(card, &stale),
                dependencies: closure
                    .kept
                    .iter()
                    .filter_map(|n| state.card(*n))
                    .map(|c| card_full(c, &stale))
                    .collect(),
                total_dependency_count: total,
                truncated: total > limit,
                recent_target_attempts: newest_attempts(state, Some(target))
                    .take(5)
                    .map(|i| attempt_view(state, i))
                    .collect(),
                note: "the closure follows explicit depends_on and assumptions links only; it infers no relevance and no missing premises",
            }))
        }
        Selection::Stale => ViewResult::Stale(Stale {
            stale: active_stale.iter().take(limit).map(|n| stale_card(state, *n, &stale[n])).collect(),
            total: active_stale.len(),
            truncated: active_stale.len() > limit,
            note: "stale follows only current RETRACTED or SUPERSEDED cards through explicit links; no warning says nothing about truth",
        }),
    }
}

/// The cards a target reaches through explicit links.
pub struct Closure {
    /// Up to the limit, nearest to the target first (fewest links, then
    /// the newer card), listed dependencies before their dependents.
    pub kept: Vec<u64>,
    /// How many cards it reaches.
    pub total: usize,
}

/// Every card the target reaches through explicit links, excluding the
/// target. A bounded view keeps the nearest: the direct premises before their
/// own premises, so truncation drops the remotest ancestors first.
pub fn dependency_first_closure(state: &State, target: u64, limit: usize) -> Closure {
    // Breadth first: each card at its least number of links from the target.
    let mut depth: BTreeMap<u64, usize> = BTreeMap::new();
    let mut frontier = vec![target];
    let mut level = 0;
    while !frontier.is_empty() {
        level += 1;
        let mut next = Vec::new();
        for n in frontier {
            if let Some(card) = state.card(n) {
                for d in card.depends_on.iter().chain(&card.assumptions) {
                    if *d != target && !depth.contains_key(d) {
                        depth.insert(*d, level);
                        next.push(*d);
                    }
                }
            }
        }
        frontier = next;
    }
    let total = depth.len();
    let mut nearest: Vec<(usize, std::cmp::Reverse<u64>)> =
        depth.into_iter().map(|(n, d)| (d, std::cmp::Reverse(n))).collect();
    nearest.sort();
    // Links only point to older cards, so ascending card number is a
    // dependency-first order.
    let mut kept: Vec<u64> = nearest.into_iter().take(limit).map(|(_, std::cmp::Reverse(n))| n).collect();
    kept.sort_unstable();
    Closure { kept, total }
}
