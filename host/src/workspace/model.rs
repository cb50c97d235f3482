//! The workspace's state and its rules, as pure functions: a state is the
//! fold of its revisions, and a write either applies completely or is
//! refused with the path of the first offending field.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use serde_json::{Value, json};

use super::wire::{AttemptOutcome, Entry, FindingKind, MarkKind};
use crate::contract::Code;

/// Largest title, in bytes.
pub const MAX_TITLE: usize = 200;
/// Largest body, summary, scratch text or statement, in bytes.
pub const MAX_BODY: usize = 16 * 1024;
/// Largest reason, in bytes.
pub const MAX_REASON: usize = 4 * 1024;
/// Most entries in one write.
pub const MAX_ENTRIES: usize = 100;
/// Most references in one list.
pub const MAX_REFS: usize = 64;
/// Revisions one workspace may hold, rev-0 included.
pub const MAX_REVISIONS: u64 = 100_000;
/// Cards and attempts one workspace may hold together.
pub const MAX_ITEMS: usize = 10_000;
/// Bytes of entries (as compact JSON) one workspace may hold over all its revisions.
pub const MAX_WORKSPACE_BYTES: u64 = 64 << 20;

/// A card: the problem card or a finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    /// 1-based number; the id is `card-<number>`.
    pub number: u64,
    /// Kind.
    pub kind: FindingKind,
    /// Title.
    pub title: String,
    /// Body.
    pub body: String,
    /// Explicit dependencies (card numbers).
    pub depends_on: Vec<u64>,
    /// Explicit assumptions (card numbers).
    pub assumptions: Vec<u64>,
    /// Revision that created it.
    pub created: u64,
    /// Margin marks, oldest first.
    pub marks: Vec<Mark>,
}

/// One margin mark.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// The mark.
    pub kind: MarkKind,
    /// Why.
    pub reason: String,
    /// The replacing card (SUPERSEDED).
    pub replacement: Option<u64>,
    /// Revision that recorded it.
    pub revision: u64,
}

/// One attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// 1-based number; the id is `attempt-<number>`.
    pub number: u64,
    /// The card attempted.
    pub target: u64,
    /// How.
    pub method: String,
    /// Operational outcome.
    pub outcome: AttemptOutcome,
    /// What happened.
    pub summary: String,
    /// Revision that recorded it.
    pub revision: u64,
}

/// A workspace at one revision.
///
/// Cards, attempts and scratch texts are shared between the states of
/// successive revisions: a write copies the lists of pointers, never the
/// texts (up to [`MAX_ITEMS`] of them, each up to [`MAX_BODY`] bytes), and a
/// card it marks is copied alone.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Cards by number (index = number - 1).
    pub cards: Vec<Arc<Card>>,
    /// Attempts by number.
    pub attempts: Vec<Arc<Attempt>>,
    /// Focused cards.
    pub focus: Vec<u64>,
    /// Scratch texts with their revision.
    pub scratch: Vec<(u64, Arc<str>)>,
    /// The revision this state is at.
    pub revision: u64,
    /// Entries per revision (for RESUME).
    pub revision_sizes: Vec<usize>,
    /// Bytes of every write's entries so far (compact JSON).
    pub entry_bytes: u64,
}

/// An accepted write.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The state at the new revision.
    pub state: State,
    /// `(client_ref, id)` for every entry that named a client_ref.
    pub assigned: Vec<(String, String)>,
    /// The entries with every reference resolved to an id (the revision artifact's body).
    pub entries: Vec<Value>,
}

/// A refused write: code, field path, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteError {
    /// Closed code.
    pub code: Code,
    /// Dot-path of the offending field.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn refuse(code: Code, path: impl Into<String>, message: impl Into<String>) -> WriteError {
    WriteError { code, path: path.into(), message: message.into() }
}

/// `card-<n>`.
pub fn card_id(number: u64) -> String {
    format!("card-{number}")
}

/// `attempt-<n>`.
pub fn attempt_id(number: u64) -> String {
    format!("attempt-{number}")
}

/// `rev-<n>`.
pub fn revision_id(number: u64) -> String {
    format!("rev-{number}")
}

/// Parse `prefix-<n>`.
pub fn parse_numbered(text: &str, prefix: &str) -> Option<u64> {
    let digits = text.strip_prefix(prefix)?.strip_prefix('-')?;
    if digits.is_empty()
        || digits.len() > 19
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || digits.starts_with('0') && digits != "0"
    {
        return None;
    }
    digits.parse().ok()
}

impl Card {
    /// The current workflow state: the last mark, ACTIVE when unmarked.
    pub fn state(&self) -> MarkKind {
        self.marks.last().map_or(MarkKind::Active, |m| m.kind)
    }

    /// Whether the card invalidates its explicit dependents.
    pub fn invalidating(&self) -> bool {
        matches!(self.state(), MarkKind::Retracted | MarkKind::Superseded)
    }
}

/// Check a text field's size.
pub fn check_text(path: &str, text: &str, min: usize, max: usize) -> Result<(), WriteError> {
    if text.trim().len() < min {
        let code = if path.ends_with("reason") { Code::MissingReason } else { Code::InvalidRequest };
        return Err(refuse(code, path, "is required and must not be blank"));
    }
    if text.len() > max {
        return Err(refuse(Code::Oversized, path, format!("is {} bytes, above the limit of {max}", text.len())));
    }
    Ok(())
}

impl State {
    /// Revision 0: the canonical problem card, created only by `workspace.open`.
    pub fn open(title: &str, statement: &str) -> Result<State, WriteError> {
        check_text("title", title, 1, MAX_TITLE)?;
        check_text("statement", statement, 0, MAX_BODY)?;
        Ok(State {
            cards: vec![Arc::new(Card {
                number: 1,
                kind: FindingKind::Goal,
                title: title.to_owned(),
                body: statement.to_owned(),
                depends_on: Vec::new(),
                assumptions: Vec::new(),
                created: 0,
                marks: Vec::new(),
            })],
            attempts: Vec::new(),
            focus: vec![1],
            scratch: Vec::new(),
            revision: 0,
            revision_sizes: vec![1],
            entry_bytes: 0,
        })
    }

    /// Look up a card by number.
    pub fn card(&self, number: u64) -> Option<&Card> {
        number.checked_sub(1).and_then(|i| self.cards.get(i as usize)).map(|card| &**card)
    }

    /// The card to change: copied first if an earlier state shares it.
    fn card_mut(&mut self, number: u64) -> &mut Card {
        Arc::make_mut(&mut self.cards[(number - 1) as usize])
    }

    /// Apply a write as the next revision. Nothing is applied unless
    /// everything is valid.
    pub fn apply(&self, entries: &[Entry]) -> Result<Applied, WriteError> {
        if entries.is_empty() || entries.len() > MAX_ENTRIES {
            return Err(refuse(Code::InvalidRequest, "entries", format!("must hold 1..={MAX_ENTRIES} entries")));
        }
        let refs = ClientRefs::collect(entries)?;
        let mut next = self.clone();
        next.revision += 1;
        let revision = next.revision;
        let mut assigned = Vec::new();
        let mut resolved_entries = Vec::new();
        // Ids given to client refs so far in this write: client_ref -> (is_card, number).
        let mut bound: BTreeMap<String, (bool, u64)> = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let at = |field: &str| format!("entries.{i}.{field}");
            let resolve_card = |state: &State, bound: &BTreeMap<String, (bool, u64)>, path: String, text: &str| {
                resolve(state, bound, &refs, i, &path, text)
            };
            match entry {
                Entry::Finding { client_ref, kind, title, body, depends_on, assumptions } => {
                    // A GOAL finding is a sub-goal: card-1 stays the problem card.
                    check_text(&at("title"), title, 1, MAX_TITLE)?;
                    check_text(&at("body"), body, 0, MAX_BODY)?;
                    let mut links = [(depends_on, "depends_on", Vec::new()), (assumptions, "assumptions", Vec::new())];
                    for (list, field, out) in links.iter_mut() {
                        if list.len() > MAX_REFS {
                            return Err(refuse(
                                Code::Oversized,
                                at(field),
                                format!("holds more than {MAX_REFS} references"),
                            ));
                        }
                        for (j, text) in list.iter().enumerate() {
                            let number = resolve_card(&next, &bound, format!("entries.{i}.{field}.{j}"), text)?;
                            if !out.contains(&number) {
                                out.push(number);
                            }
                        }
                    }
                    let [(_, _, deps), (_, _, assumed)] = links;
                    let number = next.cards.len() as u64 + 1;
                    next.cards.push(Arc::new(Card {
                        number,
                        kind: *kind,
                        title: title.clone(),
                        body: body.clone(),
                        depends_on: deps.clone(),
                        assumptions: assumed.clone(),
                        created: revision,
                        marks: Vec::new(),
                    }));
                    if let Some(r) = client_ref {
                        bound.insert(r.clone(), (true, number));
                        assigned.push((r.clone(), card_id(number)));
                    }
                    resolved_entries.push(json!({
                        "type": "finding", "id": card_id(number), "client_ref": client_ref, "kind": kind,
                        "title": title, "body": body,
                        "depends_on": deps.iter().map(|n| card_id(*n)).collect::<Vec<_>>(),
                        "assumptions": assumed.iter().map(|n| card_id(*n)).collect::<Vec<_>>(),
                    }));
                }
                Entry::Attempt { client_ref, target, method, outcome, summary } => {
                    let card = resolve_card(&next, &bound, at("target"), target)?;
                    check_text(&at("method"), method, 1, MAX_TITLE)?;
                    check_text(&at("summary"), summary, 0, MAX_BODY)?;
                    let number = next.attempts.len() as u64 + 1;
                    next.attempts.push(Arc::new(Attempt {
                        number,
                        target: card,
                        method: method.clone(),
                        outcome: *outcome,
                        summary: summary.clone(),
                        revision,
                    }));
                    if let Some(r) = client_ref {
                        bound.insert(r.clone(), (false, number));
                        assigned.push((r.clone(), attempt_id(number)));
                    }
                    resolved_entries.push(json!({
                        "type": "attempt", "id": attempt_id(number), "client_ref": client_ref, "target": card_id(card),
                        "method": method, "outcome": outcome, "summary": summary,
                    }));
                }
                Entry::Mark { card, mark, reason, replacement } => {
                    let number = resolve_card(&next, &bound, at("card"), card)?;
                    check_text(&at("reason"), reason, 1, MAX_REASON)?;
                    let current = next.card(number).map(Card::state).unwrap_or(MarkKind::Active);
                    let kind = next.card(number).map(|c| c.kind).unwrap_or(FindingKind::Note);
                    let replacement = match (*mark, replacement.as_ref()) {
                        (MarkKind::Superseded, Some(text)) => {
                            let r = resolve_card(&next, &bound, at("replacement"), text)?;
                            if r == number {
                                return Err(refuse(
                                    Code::InvalidRequest,
                                    at("replacement"),
                                    "a card cannot replace itself",
                                ));
                            }
                            Some(r)
                        }
                        (MarkKind::Superseded, None) => {
                            return Err(refuse(
                                Code::InvalidRequest,
                                at("replacement"),
                                "SUPERSEDED names its replacement",
                            ));
                        }
                        (_, Some(_)) => {
                            return Err(refuse(
                                Code::InvalidRequest,
                                at("replacement"),
                                "only SUPERSEDED takes a replacement",
                            ));
                        }
                        (_, None) => None,
                    };
                    check_mark(kind, current, *mark)
                        .map_err(|message| refuse(Code::MarkNotAllowed, at("mark"), message))?;
                    next.card_mut(number).marks.push(Mark {
                        kind: *mark,
                        reason: reason.clone(),
                        replacement,
                        revision,
                    });
                    resolved_entries.push(json!({
                        "type": "mark", "card": card_id(number), "mark": mark, "reason": reason,
                        "replacement": replacement.map(card_id),
                    }));
                }
                Entry::Focus { cards } => {
                    if cards.len() > MAX_REFS {
                        return Err(refuse(Code::Oversized, at("cards"), format!("holds more than {MAX_REFS} cards")));
                    }
                    let mut focus = Vec::new();
                    for (j, text) in cards.iter().enumerate() {
                        let number = resolve_card(&next, &bound, format!("entries.{i}.cards.{j}"), text)?;
                        if !focus.contains(&number) {
                            focus.push(number);
                        }
                    }
                    resolved_entries
                        .push(json!({"type": "focus", "cards": focus.iter().map(|n| card_id(*n)).collect::<Vec<_>>()}));
                    next.focus = focus;
                }
                Entry::Scratch { text } => {
                    check_text(&at("text"), text, 1, MAX_BODY)?;
                    next.scratch.push((revision, Arc::from(text.as_str())));
                    resolved_entries.push(json!({"type": "scratch", "text": text}));
                }
            }
        }
        next.revision_sizes.push(entries.len());
        next.entry_bytes = next.entry_bytes.saturating_add(crate::limits::json_size(&entries) as u64);
        Ok(Applied { state: next, assigned, entries: resolved_entries })
    }

    /// Whether a state a write would make is within a workspace's limits.
    /// Checked for new writes only: a workspace stored by an earlier binary
    /// beyond them still folds and reads, it just takes no more writes.
    pub fn within_limits(&self) -> Result<(), WriteError> {
        let full = |what: String| {
            Err(refuse(Code::Oversized, "entries", format!("{what}; nothing was written (open a new workspace)")))
        };
        if self.revision >= MAX_REVISIONS {
            return full(format!("the workspace has reached its limit of {MAX_REVISIONS} revisions"));
        }
        if self.cards.len() + self.attempts.len() > MAX_ITEMS {
            return full(format!("the workspace would hold more than {MAX_ITEMS} cards and attempts"));
        }
        if self.entry_bytes > MAX_WORKSPACE_BYTES {
            return full(format!("the workspace would hold more than {MAX_WORKSPACE_BYTES} bytes of entries"));
        }
        Ok(())
    }

    /// Cards that reach a current RETRACTED or SUPERSEDED card through
    /// explicit dependency and assumption links, each with its roots and one
    /// shortest path (card numbers, from the stale card to the root).
    pub fn stale(&self) -> BTreeMap<u64, Vec<(u64, Vec<u64>)>> {
        let mut dependents: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for card in &self.cards {
            for target in card.depends_on.iter().chain(&card.assumptions) {
                dependents.entry(*target).or_default().push(card.number);
            }
        }
        let mut stale: BTreeMap<u64, Vec<(u64, Vec<u64>)>> = BTreeMap::new();
        for root in self.cards.iter().filter(|c| c.invalidating()).map(|c| c.number) {
            // Breadth-first over dependents: the first visit is a shortest path.
            let mut parent: BTreeMap<u64, u64> = BTreeMap::new();
            let mut queue = VecDeque::from([root]);
            let mut seen = BTreeSet::from([root]);
            while let Some(node) = queue.pop_front() {
                for dependent in dependents.get(&node).into_iter().flatten() {
                    if seen.insert(*dependent) {
                        parent.insert(*dependent, node);
                        queue.push_back(*dependent);
                        let mut path = vec![*dependent];
                        let mut at = *dependent;
                        while let Some(p) = parent.get(&at) {
                            path.push(*p);
                            at = *p;
                        }
                        stale.entry(*dependent).or_default().push((root, path));
                    }
                }
            }
        }
        stale
    }
}

/// The lifecycle rules of margin marks.
pub fn check_mark(kind: FindingKind, current: MarkKind, mark: MarkKind) -> Result<(), String> {
    let invalidating = matches!(current, MarkKind::Retracted | MarkKind::Superseded);
    match mark {
        MarkKind::Closed if !matches!(kind, FindingKind::Goal | FindingKind::OpenQuestion) => {
            Err(format!("CLOSED applies only to GOAL or OPEN_QUESTION cards, not {kind:?}"))
        }
        MarkKind::Closed | MarkKind::Archived if invalidating => Err(format!(
            "the card is {current:?}: restore it with ACTIVE before {mark:?} can clear its invalidating state"
        )),
        _ => Ok(()),
    }
}

/// Where each client_ref of a write is defined and what each entry refers to.
struct ClientRefs {
    defined: BTreeMap<String, usize>,
    /// For each entry, the client refs it mentions.
    mentions: Vec<Vec<String>>,
}

impl ClientRefs {
    fn collect(entries: &[Entry]) -> Result<Self, WriteError> {
        let mut defined = BTreeMap::new();
        let mut mentions = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let (client_ref, refs): (Option<&String>, Vec<&String>) = match entry {
                Entry::Finding { client_ref, depends_on, assumptions, .. } => {
                    (client_ref.as_ref(), depends_on.iter().chain(assumptions).collect())
                }
                Entry::Attempt { client_ref, target, .. } => (client_ref.as_ref(), vec![target]),
                Entry::Mark { card, replacement, .. } => (None, std::iter::once(card).chain(replacement).collect()),
                Entry::Focus { cards } => (None, cards.iter().collect()),
                Entry::Scratch { .. } => (None, Vec::new()),
            };
            if let Some(name) = client_ref {
                let valid = !name.is_empty()
                    && name.len() <= 64
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                    && parse_numbered(name, "card").is_none()
                    && parse_numbered(name, "attempt").is_none();
                if !valid {
                    return Err(refuse(
                        Code::InvalidRequest,
                        format!("entries.{i}.client_ref"),
                        "must be 1..=64 of [A-Za-z0-9_-] and not shaped like a card or attempt id",
                    ));
                }
                if defined.insert(name.clone(), i).is_some() {
                    return Err(refuse(
                        Code::DuplicateClientRef,
                        format!("entries.{i}.client_ref"),
                        format!("{name:?} is already used by an earlier entry of this write"),
                    ));
                }
            }
            mentions.push(refs.into_iter().cloned().collect());
        }
        Ok(ClientRefs { defined, mentions })
    }

    /// Whether entry `from` reaches entry `to` through client-ref mentions.
    fn reaches(&self, from: usize, to: usize) -> bool {
        let mut stack = vec![from];
        let mut seen = BTreeSet::new();
        while let Some(i) = stack.pop() {
            if i == to {
                return true;
            }
            if !seen.insert(i) {
                continue;
            }
            for name in &self.mentions[i] {
                if let Some(&j) = self.defined.get(name) {
                    stack.push(j);
                }
            }
        }
        false
    }
}

fn resolve(
    state: &State,
    bound: &BTreeMap<String, (bool, u64)>,
    refs: &ClientRefs,
    entry: usize,
    path: &str,
    text: &str,
) -> Result<u64, WriteError> {
    if let Some(&(is_card, number)) = bound.get(text) {
        return if is_card {
            Ok(number)
        } else {
            Err(refuse(Code::InvalidRequest, path, format!("{text:?} names an attempt, not a card")))
        };
    }
    if let Some(&defined_at) = refs.defined.get(text) {
        // Defined by this entry or a later one: a link can only point backwards.
        if defined_at == entry || refs.reaches(defined_at, entry) {
            return Err(refuse(Code::LinkCycle, path, format!("{text:?} would close a cycle of explicit links")));
        }
        return Err(refuse(
            Code::UnknownReference,
            path,
            format!("{text:?} is defined by a later entry; order entries so references point backwards"),
        ));
    }
    match parse_numbered(text, "card").filter(|n| state.card(*n).is_some()) {
        Some(number) => Ok(number),
        None => Err(refuse(
            Code::UnknownReference,
            path,
            format!("{text:?} is neither a card of this workspace nor a client_ref of an earlier entry"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(value: Value) -> Vec<Entry> {
        serde_json::from_value(value).expect("entries")
    }

    /// A write shares every card, attempt and scratch text it does not
    /// change with the state it was applied to, copies the card it marks,
    /// and leaves that state as it was.
    #[test]
    fn a_write_copies_only_what_it_changes() {
        let open = State::open("Goal", "statement").expect("open");
        let grown = open
            .apply(&entries(json!([
                {"type": "finding", "kind": "CLAIM", "title": "a", "body": "x".repeat(MAX_BODY)},
                {"type": "finding", "kind": "CLAIM", "title": "b", "body": "y".repeat(MAX_BODY)},
                {"type": "attempt", "target": "card-2", "method": "m", "outcome": "COMPLETED", "summary": "s"},
                {"type": "scratch", "text": "z".repeat(MAX_BODY)},
            ])))
            .expect("grow")
            .state;
        let marked = grown
            .apply(&entries(json!([{"type": "mark", "card": "card-2", "mark": "RETRACTED", "reason": "wrong"}])))
            .expect("mark")
            .state;
        assert!(Arc::ptr_eq(&grown.cards[0], &marked.cards[0]));
        assert!(Arc::ptr_eq(&grown.cards[2], &marked.cards[2]), "an unchanged card was copied");
        assert!(Arc::ptr_eq(&grown.attempts[0], &marked.attempts[0]), "an attempt was copied");
        assert!(Arc::ptr_eq(&grown.scratch[0].1, &marked.scratch[0].1), "a scratch text was copied");
        assert!(!Arc::ptr_eq(&grown.cards[1], &marked.cards[1]));
        assert!(grown.cards[1].marks.is_empty(), "the earlier state changed");
        assert_eq!(marked.cards[1].marks.len(), 1);
    }
}
