//! The deterministic, bounded views of `workspace.query`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::model::{Card, State, attempt_id, card_id, revision_id};
use super::wire::{FindingKind, MarkKind, QueryView};

/// Default and largest number of items in one view.
pub const DEFAULT_LIMIT: usize = 50;
/// Largest accepted `limit`.
pub const MAX_LIMIT: usize = 200;

/// Every recorded item carries the same honest provenance.
fn recorded() -> Value {
    json!({"recorded_by": "AGENT_RECORDED", "verification": "UNVERIFIED"})
}

fn card_summary(card: &Card, stale: &BTreeMap<u64, Vec<(u64, Vec<u64>)>>) -> Value {
    json!({
        "id": card_id(card.number),
        "kind": card.kind,
        "title": card.title,
        "state": card.state(),
        "stale": stale.contains_key(&card.number),
        "depends_on": card.depends_on.iter().map(|n| card_id(*n)).collect::<Vec<_>>(),
        "assumptions": card.assumptions.iter().map(|n| card_id(*n)).collect::<Vec<_>>(),
        "created": revision_id(card.created),
        "provenance": recorded(),
    })
}

fn card_full(card: &Card, stale: &BTreeMap<u64, Vec<(u64, Vec<u64>)>>) -> Value {
    let mut value = card_summary(card, stale);
    value["body"] = json!(card.body);
    value["marks"] = json!(card
        .marks
        .iter()
        .map(|m| json!({"mark": m.kind, "reason": m.reason, "replacement": m.replacement.map(card_id), "revision": revision_id(m.revision)}))
        .collect::<Vec<_>>());
    value
}

fn attempt_value(state: &State, index: usize) -> Value {
    let a = &state.attempts[index];
    json!({
        "id": attempt_id(a.number), "target": card_id(a.target), "method": a.method, "outcome": a.outcome,
        "summary": a.summary, "revision": revision_id(a.revision), "provenance": recorded(),
    })
}

fn stale_value(state: &State, number: u64, roots: &[(u64, Vec<u64>)]) -> Value {
    json!({
        "card": card_id(number),
        "state": state.card(number).map(Card::state),
        "roots": roots.iter().map(|(root, path)| json!({
            "root": card_id(*root),
            "root_state": state.card(*root).map(Card::state),
            "path": path.iter().map(|n| card_id(*n)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// A view of `state`. `target` is the card number for CONTEXT and ATTEMPTS.
pub fn view(state: &State, view: QueryView, target: Option<u64>, limit: usize) -> Value {
    let stale = state.stale();
    let active_stale: Vec<u64> =
        stale.keys().copied().filter(|n| state.card(*n).is_some_and(|c| c.state() == MarkKind::Active)).collect();
    match view {
        QueryView::Resume => {
            let problem = &state.cards[0];
            let open: Vec<&Card> = state
                .cards
                .iter()
                .filter(|c| {
                    matches!(c.kind, FindingKind::Goal | FindingKind::OpenQuestion) && c.state() == MarkKind::Active
                })
                .collect();
            let mut states: BTreeMap<String, usize> = BTreeMap::new();
            for card in &state.cards {
                *states.entry(format!("{:?}", card.state()).to_ascii_uppercase()).or_default() += 1;
            }
            let first = state.revision_sizes.len().saturating_sub(5);
            json!({
                "problem": card_full(problem, &stale),
                "focus": state.focus.iter().filter_map(|n| state.card(*n)).map(|c| card_summary(c, &stale)).collect::<Vec<_>>(),
                "open_items": open.iter().take(limit).map(|c| card_summary(c, &stale)).collect::<Vec<_>>(),
                "open_items_total": open.len(),
                "cards_total": state.cards.len(),
                "cards_by_state": states,
                "attempts_total": state.attempts.len(),
                "recent_attempts": (0..state.attempts.len()).rev().take(5).map(|i| attempt_value(state, i)).collect::<Vec<_>>(),
                "recent_revisions": (first..state.revision_sizes.len()).map(|r| json!({"revision": revision_id(r as u64), "entries": state.revision_sizes[r]})).collect::<Vec<_>>(),
                "recent_scratch": state.scratch.iter().rev().take(3).map(|(r, t)| json!({"revision": revision_id(*r), "text": t})).collect::<Vec<_>>(),
                "active_stale_total": active_stale.len(),
            })
        }
        QueryView::Frontier => {
            let items: Vec<&Card> = state
                .cards
                .iter()
                .filter(|c| {
                    matches!(c.kind, FindingKind::Goal | FindingKind::OpenQuestion) && c.state() == MarkKind::Active
                })
                .collect();
            json!({
                "items": items.iter().take(limit).map(|c| {
                    let mut v = card_summary(c, &stale);
                    v["attempts"] = json!(state.attempts.iter().filter(|a| a.target == c.number).count());
                    v
                }).collect::<Vec<_>>(),
                "total": items.len(),
                "truncated": items.len() > limit,
            })
        }
        QueryView::Attempts => {
            let chosen: Vec<usize> = (0..state.attempts.len())
                .rev()
                .filter(|i| target.is_none_or(|t| state.attempts[*i].target == t))
                .collect();
            json!({
                "attempts": chosen.iter().take(limit).map(|i| attempt_value(state, *i)).collect::<Vec<_>>(),
                "total": chosen.len(),
                "truncated": chosen.len() > limit,
            })
        }
        QueryView::Context => {
            let Some(target) = target else { return Value::Null };
            let closure = dependency_first_closure(state, target);
            let total = closure.len();
            json!({
                "target": state.card(target).map(|c| card_full(c, &stale)),
                "dependencies": closure.iter().take(limit).filter_map(|n| state.card(*n)).map(|c| card_full(c, &stale)).collect::<Vec<_>>(),
                "total_dependency_count": total,
                "truncated": total > limit,
                "recent_target_attempts": (0..state.attempts.len()).rev().filter(|i| state.attempts[*i].target == target).take(5).map(|i| attempt_value(state, i)).collect::<Vec<_>>(),
                "note": "the closure follows explicit depends_on and assumptions links only; it infers no relevance and no missing premises",
            })
        }
        QueryView::Stale => json!({
            "stale": active_stale.iter().take(limit).map(|n| stale_value(state, *n, &stale[n])).collect::<Vec<_>>(),
            "total": active_stale.len(),
            "truncated": active_stale.len() > limit,
            "note": "stale follows only current RETRACTED or SUPERSEDED cards through explicit links; no warning says nothing about truth",
        }),
    }
}

/// Every card the target reaches through explicit links, dependencies
/// before their dependents (ties by card number), excluding the target.
pub fn dependency_first_closure(state: &State, target: u64) -> Vec<u64> {
    let mut reached = BTreeSet::new();
    let mut stack = vec![target];
    while let Some(n) = stack.pop() {
        if let Some(card) = state.card(n) {
            for d in card.depends_on.iter().chain(&card.assumptions) {
                if reached.insert(*d) {
                    stack.push(*d);
                }
            }
        }
    }
    reached.remove(&target);
    // Links only point to older cards, so ascending card number is a
    // dependency-first order.
    reached.into_iter().collect()
}
