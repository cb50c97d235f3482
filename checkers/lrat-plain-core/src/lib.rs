//! A second checker of LRAT refutations and models, written apart from
//! `jacobian-lrat-core` so that a policy can ask two checkers that share no
//! checking code to agree (a quorum, see docs/decisions/0008-a-quorum-needs-acceptances-and-no-rejection.md). It is plain on
//! purpose: clauses in an ordered map as sorted sets of literals, the proof
//! read token by token, each lemma judged from the definitions below with a
//! fresh look-up of every clause, no arena, no pages, no candidate cursor.
//!
//! The rules (the LRAT format's, as `jacobian-lrat-core` documents them too):
//! - a lemma's id is above every earlier id (the formula's clauses are
//!   `1..=m`) and at most 2³¹−1; its literals are non-zero, at most 2³⁰ in
//!   magnitude; the proof is accepted at its first empty clause;
//! - the lemma's literals are made false; a lemma holding a literal and its
//!   negation is a tautology and is accepted as it is;
//! - the positive hints before the first negative one are read in order:
//!   each names an active clause whose literals that are not false are at
//!   most one (as a set); none is a conflict, and the lemma holds (RUP); one
//!   is made true;
//! - otherwise the lemma is RAT on its first literal `p`: the rest of the
//!   hints are groups `-j h…`, with `j` strictly increasing; every active
//!   clause holding `¬p` has a group, and every group's `j` is an active
//!   clause that either has a true literal other than `¬p` (under the RUP
//!   part's assignment) or holds `¬p`; in the second case its literals
//!   other than `¬p` are made false and its hints must reach a conflict as
//!   above. Each group starts from the RUP part's assignment. The empty
//!   clause needs a conflict;
//! - deletions (`id d ids 0`) name active clauses.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};

/// Largest lemma id.
pub const MAX_ID: i64 = i32::MAX as i64;
/// Largest variable in a lemma.
pub const MAX_VARIABLE: i64 = 1 << 30;

/// Why a certificate is not accepted.
#[derive(Debug)]
pub enum Failure {
    /// It was read and is wrong: at this step (1-based; 0 for the whole).
    Wrong { step: u64, why: String },
    /// Its bytes could not be read.
    Unreadable(std::io::Error),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Wrong { step: 0, why } => f.write_str(why),
            Failure::Wrong { step, why } => write!(f, "step {step}: {why}"),
            Failure::Unreadable(e) => write!(f, "the proof could not be read: {e}"),
        }
    }
}

fn wrong<T>(step: u64, why: impl Into<String>) -> Result<T, Failure> {
    Err(Failure::Wrong { step, why: why.into() })
}

/// What an accepted refutation held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accepted {
    /// Lemmas judged.
    pub lemmas: u64,
    /// Of them, judged as RAT.
    pub rat: u64,
    /// Clauses deleted.
    pub deleted: u64,
    /// The empty clause's id.
    pub empty_clause: i64,
}

/// Whether `assignment` makes a literal of every clause true. Its literals
/// are variables of the formula (`1..=variables`), none set both ways.
pub fn model_satisfies(variables: u32, clauses: &[Vec<i32>], assignment: &[i32]) -> Result<(), Failure> {
    let mut true_literals = std::collections::BTreeSet::new();
    for &literal in assignment {
        if literal == 0 || literal.unsigned_abs() > variables {
            return wrong(0, format!("the assignment's literal {literal} is no variable of the formula"));
        }
        if true_literals.contains(&-literal) {
            return wrong(0, format!("the assignment makes {} both true and false", literal.unsigned_abs()));
        }
        true_literals.insert(literal);
    }
    match clauses.iter().position(|clause| !clause.iter().any(|l| true_literals.contains(l))) {
        Some(index) => wrong(0, format!("clause {} has no true literal", index + 1)),
        None => Ok(()),
    }
}

/// Check an LRAT refutation of the formula (`clauses`, clause `i` with id
/// `i + 1`), read from `proof` in text or binary form.
pub fn refutes(clauses: &[Vec<i32>], proof: impl Read) -> Result<Accepted, Failure> {
    let mut active: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (index, clause) in clauses.iter().enumerate() {
        active.insert(index as i64 + 1, as_set(clause.iter().map(|&l| i64::from(l))));
    }
    let mut latest = clauses.len() as i64;
    let mut accepted = Accepted::default();
    let mut reader = Reader::new(proof);
    let mut trail = Trail::default();
    let mut step = 0u64;
    while let Some(line) = reader.next_line().map_err(Failure::Unreadable)? {
        step += 1;
        match line {
            Line::Delete(ids) => {
                for id in ids {
                    if active.remove(&id).is_none() {
                        return wrong(step, format!("clause {id} is deleted but not active"));
                    }
                    accepted.deleted += 1;
                }
            }
            Line::Add { id, literals, hints } => {
                if id <= latest || id > MAX_ID {
                    return wrong(step, format!("lemma id {id} is not above {latest} and at most {MAX_ID}"));
                }
                if let Some(l) = literals.iter().find(|l| **l == 0 || l.abs() > MAX_VARIABLE) {
                    return wrong(step, format!("literal {l} is out of range"));
                }
                let rat = judge(&active, &mut trail, &literals, &hints);
                trail.back_to(0);
                let rat = rat.or_else(|why| wrong(step, why))?;
                accepted.lemmas += 1;
                accepted.rat += u64::from(rat);
                latest = id;
                if literals.is_empty() {
                    accepted.empty_clause = id;
                    return Ok(accepted);
                }
                active.insert(id, as_set(literals.into_iter()));
            }
            Line::Malformed(why) => return wrong(step, why),
        }
    }
    wrong(0, "no empty clause is derived")
}

fn as_set(literals: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut set: Vec<i64> = literals.collect();
    set.sort_unstable();
    set.dedup();
    set
}

/// A partial assignment: each variable's value (0 unset, 1 true, -1
/// false), and the variables set, in order, to unset them again.
#[derive(Default)]
struct Trail {
    values: Vec<i8>,
    order: Vec<usize>,
}

impl Trail {
    fn value(&self, literal: i64) -> Option<bool> {
        match self.values.get(literal.unsigned_abs() as usize).copied().unwrap_or(0) {
            0 => None,
            v => Some((v > 0) == (literal > 0)),
        }
    }

    fn make_true(&mut self, literal: i64) {
        let variable = literal.unsigned_abs() as usize;
        if variable >= self.values.len() {
            self.values.resize(variable + 1, 0);
        }
        if self.values[variable] == 0 {
            self.order.push(variable);
        }
        self.values[variable] = if literal > 0 { 1 } else { -1 };
    }

    fn back_to(&mut self, length: usize) {
        for variable in self.order.drain(length..) {
            self.values[variable] = 0;
        }
    }
}

/// What one hint did.
enum Hint {
    Conflict,
    Unit,
}

fn follow(active: &BTreeMap<i64, Vec<i64>>, trail: &mut Trail, hint: i64) -> Result<Hint, String> {
    let clause = active.get(&hint).ok_or_else(|| format!("hint {hint} is no active clause"))?;
    let open: Vec<i64> = clause.iter().copied().filter(|&l| trail.value(l) != Some(false)).collect();
    match open.as_slice() {
        [] => Ok(Hint::Conflict),
        [literal] => {
            trail.make_true(*literal);
            Ok(Hint::Unit)
        }
        _ => Err(format!("hint {hint} has {} literals that are not false", open.len())),
    }
}

/// Whether `hints` lead to a conflict; an error if one is not unit.
fn conflict(active: &BTreeMap<i64, Vec<i64>>, trail: &mut Trail, hints: &[i64]) -> Result<bool, String> {
    for &hint in hints {
        if let Hint::Conflict = follow(active, trail, hint)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Judge one lemma; `Ok(true)` when it holds as RAT, `Ok(false)` as a
/// tautology or by RUP.
fn judge(active: &BTreeMap<i64, Vec<i64>>, trail: &mut Trail, lemma: &[i64], hints: &[i64]) -> Result<bool, String> {
    for &literal in lemma {
        if trail.value(literal) == Some(true) {
            return Ok(false);
        }
        trail.make_true(-literal);
    }
    let split = hints.iter().position(|&h| h < 0).unwrap_or(hints.len());
    if conflict(active, trail, &hints[..split])? {
        return Ok(false);
    }
    let Some(&pivot) = lemma.first() else {
        return Err("the empty clause's hints reach no conflict".into());
    };
    let mut groups: BTreeMap<i64, &[i64]> = BTreeMap::new();
    let mut rest = &hints[split..];
    while let Some((&head, tail)) = rest.split_first() {
        let length = tail.iter().position(|&h| h < 0).unwrap_or(tail.len());
        let clause = i64::try_from(head.unsigned_abs()).unwrap_or(i64::MAX);
        if groups.keys().next_back().is_some_and(|&last| last >= clause) {
            return Err(format!("RAT group {head} is out of increasing order"));
        }
        groups.insert(clause, &tail[..length]);
        rest = &tail[length..];
    }
    for (&id, clause) in active {
        if clause.contains(&-pivot) && !groups.contains_key(&id) {
            return Err(format!("clause {id} holds {} but has no RAT group", -pivot));
        }
    }
    let assumed = trail.order.len();
    for (&id, group) in &groups {
        let clause = active.get(&id).ok_or_else(|| format!("RAT group -{id} is no active clause"))?;
        let others: Vec<i64> = clause.iter().copied().filter(|&l| l != -pivot).collect();
        let settled = others.iter().any(|&l| trail.value(l) == Some(true) || others.binary_search(&-l).is_ok());
        if settled {
            continue;
        }
        if !clause.contains(&-pivot) {
            return Err(format!("RAT group -{id}: clause {id} does not hold {}", -pivot));
        }
        for &literal in &others {
            trail.make_true(-literal);
        }
        if !conflict(active, trail, group)? {
            return Err(format!("the resolvent with clause {id} is not refuted by its hints"));
        }
        trail.back_to(assumed);
    }
    Ok(true)
}

/// One step of the proof.
enum Line {
    Add { id: i64, literals: Vec<i64>, hints: Vec<i64> },
    Delete(Vec<i64>),
    Malformed(String),
}

/// Reads proof steps: text lines, or binary when the first byte is `a` or `d`.
struct Reader<R> {
    input: BufReader<R>,
    binary: Option<bool>,
}

impl<R: Read> Reader<R> {
    fn new(input: R) -> Self {
        Reader { input: BufReader::new(input), binary: None }
    }

    fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        if self.binary.is_none() {
            let first = self.input.fill_buf()?.first().copied();
            self.binary = Some(matches!(first, Some(b'a' | b'd')));
        }
        if self.binary == Some(true) { self.binary_step() } else { self.text_line() }
    }

    fn text_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            if self.input.read_until(b'\n', &mut bytes)? == 0 {
                return Ok(None);
            }
            let Ok(text) = std::str::from_utf8(&bytes) else {
                return Ok(Some(Line::Malformed("the line is not text".into())));
            };
            let mut words = text.split_ascii_whitespace().peekable();
            match words.peek() {
                None => continue,
                Some(word) if word.starts_with('c') => continue,
                Some(_) => return Ok(Some(text_step(words.collect()))),
            }
        }
    }

    fn binary_step(&mut self) -> std::io::Result<Option<Line>> {
        let mut kind = [0u8];
        if self.input.read(&mut kind)? == 0 {
            return Ok(None);
        }
        let mut numbers = || -> std::io::Result<Result<Vec<i64>, String>> {
            let mut out = Vec::new();
            loop {
                match self.varint()? {
                    None => return Ok(Err("the proof ends inside a step".into())),
                    Some(0) => return Ok(Ok(out)),
                    Some(n) => out.push(n),
                }
            }
        };
        Ok(Some(match kind[0] {
            b'd' => match numbers()? {
                Ok(ids) => Line::Delete(ids),
                Err(why) => Line::Malformed(why),
            },
            b'a' => match (numbers()?, numbers()?) {
                (Ok(mut literals), Ok(hints)) if !literals.is_empty() => {
                    let id = literals.remove(0);
                    Line::Add { id, literals, hints }
                }
                (Ok(_), Ok(_)) => Line::Malformed("a step without an id".into()),
                (Err(why), _) | (_, Err(why)) => Line::Malformed(why),
            },
            other => Line::Malformed(format!("byte {other} starts no step")),
        }))
    }

    /// One number, 7 bits a byte, low first, sign in the lowest bit.
    fn varint(&mut self) -> std::io::Result<Option<i64>> {
        let mut value = 0u64;
        for shift in (0..63).step_by(7) {
            let mut byte = [0u8];
            if self.input.read(&mut byte)? == 0 {
                return Ok(None);
            }
            value |= u64::from(byte[0] & 0x7f) << shift;
            if byte[0] & 0x80 == 0 {
                let magnitude = (value >> 1) as i64;
                return Ok(Some(if value & 1 == 1 { -magnitude } else { magnitude }));
            }
        }
        Ok(None)
    }
}

/// A text step: `id literals… 0 hints… 0` or `id d ids… 0`.
fn text_step(words: Vec<&str>) -> Line {
    let numbers = |words: &[&str]| -> Result<Vec<i64>, String> {
        words.iter().map(|w| w.parse::<i64>().map_err(|_| format!("{w:?} is not a number"))).collect()
    };
    let Some(id) = words.first().and_then(|w| w.parse::<i64>().ok()).filter(|&id| id > 0) else {
        return Line::Malformed("a step starts with a positive id".into());
    };
    if words.get(1) == Some(&"d") {
        return match numbers(&words[2..]) {
            Ok(mut ids) if ids.last() == Some(&0) && ids.iter().filter(|&&n| n == 0).count() == 1 => {
                ids.pop();
                Line::Delete(ids)
            }
            Ok(_) => Line::Malformed("a deletion ends at its only 0".into()),
            Err(why) => Line::Malformed(why),
        };
    }
    let numbers = match numbers(&words[1..]) {
        Ok(numbers) => numbers,
        Err(why) => return Line::Malformed(why),
    };
    let zeros: Vec<usize> = numbers.iter().enumerate().filter(|(_, n)| **n == 0).map(|(i, _)| i).collect();
    match zeros.as_slice() {
        [end_of_literals, end] if *end == numbers.len() - 1 => Line::Add {
            id,
            literals: numbers[..*end_of_literals].to_vec(),
            hints: numbers[end_of_literals + 1..*end].to_vec(),
        },
        _ => Line::Malformed("a lemma is its literals, 0, its hints, 0".into()),
    }
}

#[cfg(test)]
mod tests;
