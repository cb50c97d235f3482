//! Checking SAT certificates against a CNF formula: models by evaluating
//! every clause, LRAT proofs by hinted unit propagation (RUP steps), RAT steps
//! with their candidate groups, and deletions, and DRAT proofs forward by
//! unit propagation of their own (the `drat` module). Shares no code with
//! any solver.

use std::fmt;

/// A CNF formula: clauses of non-zero DIMACS literals, clause `i` has id `i + 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formula {
    /// Declared number of variables.
    pub variables: u32,
    /// Clauses in order.
    pub clauses: Vec<Vec<i32>>,
}

/// Why a certificate was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// 1-based line of the proof (0 for the model or the whole proof).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 { f.write_str(&self.message) } else { write!(f, "line {}: {}", self.line, self.message) }
    }
}

fn reject(line: usize, message: impl Into<String>) -> Rejection {
    Rejection { line, message: message.into() }
}

/// Check that `assignment` (signed literals) satisfies every clause.
pub fn check_model(formula: &Formula, assignment: &[i32]) -> Result<(), Rejection> {
    let mut value = vec![0i8; formula.variables as usize + 1];
    for &lit in assignment {
        let var = lit.unsigned_abs() as usize;
        if lit == 0 || var > formula.variables as usize {
            return Err(reject(0, format!("assignment literal {lit} is outside 1..={}", formula.variables)));
        }
        let v = if lit > 0 { 1 } else { -1 };
        if value[var] == -v {
            return Err(reject(0, format!("the assignment sets variable {var} both ways")));
        }
        value[var] = v;
    }
    for (i, clause) in formula.clauses.iter().enumerate() {
        let satisfied = clause.iter().any(|&l| {
            let var = l.unsigned_abs() as usize;
            var < value.len() && value[var] == if l > 0 { 1 } else { -1 }
        });
        if !satisfied {
            return Err(reject(0, format!("clause {} ({:?}) is not satisfied", i + 1, clause)));
        }
    }
    Ok(())
}

/// Counts of a checked proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProofSummary {
    /// Lemmas added (RUP or RAT).
    pub lemmas: u64,
    /// Lemmas that needed RAT candidate groups.
    pub rat_lemmas: u64,
    /// Clauses deleted.
    pub deletions: u64,
    /// Id of the empty clause.
    pub empty_clause_id: u64,
}

/// Why a proof was not accepted: it was read and is wrong, or it could not be read.
#[derive(Debug)]
pub enum ProofError {
    /// The proof was read and a step does not check (or the empty clause never comes).
    Rejected(Rejection),
    /// The proof's bytes could not be read (not a judgement of the proof).
    Unreadable(std::io::Error),
}

impl fmt::Display for ProofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProofError::Rejected(r) => r.fmt(f),
            ProofError::Unreadable(e) => write!(f, "the proof could not be read: {e}"),
        }
    }
}

impl From<Rejection> for ProofError {
    fn from(r: Rejection) -> Self {
        ProofError::Rejected(r)
    }
}

struct Assignment {
    value: Vec<i8>,
    trail: Vec<usize>,
}

impl Assignment {
    #[inline]
    fn of(&self, lit: i32) -> i8 {
        let var = lit.unsigned_abs() as usize;
        let v = self.value.get(var).copied().unwrap_or(0);
        if lit > 0 { v } else { -v }
    }

    /// Make `lit` true; false if it was already false.
    #[inline]
    fn set(&mut self, lit: i32) -> bool {
        match self.of(lit) {
            1 => true,
            -1 => false,
            _ => {
                let var = lit.unsigned_abs() as usize;
                if var >= self.value.len() {
                    self.value.resize(var + 1, 0);
                }
                self.value[var] = if lit > 0 { 1 } else { -1 };
                self.trail.push(var);
                true
            }
        }
    }

    fn undo_to(&mut self, mark: usize) {
        for &var in &self.trail[mark..] {
            self.value[var] = 0;
        }
        self.trail.truncate(mark);
    }
}

enum Unit {
    Conflict,
    Assigned,
}

/// Process one hint. With its false literals set aside, the clause must
/// have no literal left (a conflict) or exactly one, which is made true (it
/// may be true already, as `lrat-check` allows). A literal the clause
/// repeats is one literal (`lrat-check` counts each occurrence, and refuses
/// such a clause as a unit: a documented difference).
fn propagate_hint(clauses: &Clauses, a: &mut Assignment, id: i64, line: usize) -> Result<Unit, Rejection> {
    let clause = clauses.get(id).ok_or_else(|| reject(line, format!("hint {id} names no active clause")))?;
    let mut open = None;
    for &lit in clause {
        if a.of(lit) == -1 {
            continue;
        }
        if open.is_some_and(|o| o != lit) {
            return Err(reject(line, format!("hint {id} is not unit: more than one of its literals is not false")));
        }
        open = Some(lit);
    }
    match open {
        None => Ok(Unit::Conflict),
        Some(lit) => {
            a.set(lit);
            Ok(Unit::Assigned)
        }
    }
}

/// Check an LRAT proof (text) that `formula` is unsatisfiable.
pub fn check_lrat(formula: &Formula, proof: &str) -> Result<ProofSummary, Rejection> {
    check_lrat_from(formula, proof.as_bytes()).map_err(|e| match e {
        ProofError::Rejected(r) => r,
        ProofError::Unreadable(e) => reject(0, e.to_string()),
    })
}

/// Check an LRAT proof that `formula` is unsatisfiable, read from `reader`
/// step by step: text, or binary when its first byte is `a` or `d` (the
/// form drat-trim's `compress` writes). Only the active clauses are held,
/// never the proof; a proof ends at its empty clause.
pub fn check_lrat_from<R: std::io::Read>(formula: &Formula, reader: R) -> Result<ProofSummary, ProofError> {
    let mut clauses = Clauses::default();
    for (i, clause) in formula.clauses.iter().enumerate() {
        clauses.insert(i as u64 + 1, clause);
    }
    let mut last_id = formula.clauses.len() as u64;
    let mut a = Assignment { value: vec![0; formula.variables as usize + 1], trail: Vec::new() };
    let mut summary = ProofSummary::default();
    let mut steps = Steps::new(reader);
    while let Some(step) = steps.next_step()? {
        let line = steps.line();
        match step {
            Step::Delete => {
                for &d in steps.deleted() {
                    if !clauses.remove(d) {
                        return Err(reject(line, format!("deletion of {d}, which is not an active clause")).into());
                    }
                    summary.deletions += 1;
                }
            }
            Step::Add(id) => {
                if id <= last_id {
                    return Err(reject(line, format!("clause id {id} does not increase (last id {last_id})")).into());
                }
                if id > MAX_ID {
                    return Err(reject(line, format!("clause id {id} is above {MAX_ID}")).into());
                }
                let (lemma, hints) = steps.lemma();
                if lemma.iter().any(|l| l.unsigned_abs() > MAX_VARIABLE) {
                    return Err(reject(line, "literal out of range").into());
                }
                let rat = check_lemma(&clauses, &mut a, lemma, hints, line)?;
                a.undo_to(0);
                summary.lemmas += 1;
                summary.rat_lemmas += u64::from(rat);
                last_id = id;
                if lemma.is_empty() {
                    summary.empty_clause_id = id;
                    return Ok(summary);
                }
                clauses.insert(id, lemma);
            }
        }
    }
    Err(reject(0, "the proof does not derive the empty clause").into())
}

/// Largest clause id (as lrat-check, a signed 32-bit integer).
const MAX_ID: u64 = i32::MAX as u64;
/// Largest variable in a lemma.
const MAX_VARIABLE: u32 = 1 << 30;

/// Check one lemma; returns whether it needed RAT. The rule, as the LRAT
/// format defines it and drat-trim's `lrat-check` implements it:
/// 1. every literal of the lemma is assumed false (a lemma holding a literal
///    and its negation is a tautology, implied as it is);
/// 2. the positive hints before the first negative one are unit propagated
///    in order; a conflict proves the lemma (RUP), and the rest is not read;
/// 3. otherwise the lemma must be a resolution asymmetric tautology on its
///    first literal, the pivot `p`. The hints go on as groups, each a
///    negative id `-j` and positive ids. The groups name clauses in
///    increasing id order, each an active clause, and every active clause
///    that holds `¬p` (a candidate) must have a group. A group's clause is
///    settled at once when one of its literals other than `¬p` is true
///    under step 2's assignment, or it holds a literal and its negation
///    (the resolvent is a tautology); otherwise it must hold `¬p`, its
///    other literals are assumed false, and the group's hints must reach a
///    conflict by unit propagation. Each group starts again from step 2's
///    assignment. A lemma without groups is RAT only when no active clause
///    holds `¬p`; the empty clause can only be proved by a conflict.
fn check_lemma(
    clauses: &Clauses,
    a: &mut Assignment,
    lemma: &[i32],
    hints: &[i64],
    line: usize,
) -> Result<bool, Rejection> {
    for &lit in lemma {
        if !a.set(-lit) {
            return Ok(false);
        }
    }
    let first_negative = hints.iter().position(|h| *h < 0).unwrap_or(hints.len());
    for &hint in &hints[..first_negative] {
        if let Unit::Conflict = propagate_hint(clauses, a, hint, line)? {
            return Ok(false);
        }
    }
    let Some(&pivot) = lemma.first() else {
        return Err(reject(line, "the hints of the empty clause end without a conflict"));
    };
    let mut candidates = clauses.iter().filter(|(_, c)| c.contains(&-pivot)).map(|(id, _)| id).peekable();
    let after_rup = a.trail.len();
    let mut groups = &hints[first_negative..];
    let mut previous = 0u64;
    while let Some((&head, rest)) = groups.split_first() {
        let end = rest.iter().position(|h| *h < 0).unwrap_or(rest.len());
        let (group, next) = rest.split_at(end);
        groups = next;
        let id = head.unsigned_abs();
        if id <= previous {
            return Err(reject(
                line,
                format!("RAT hint group {head} does not follow group -{previous} in increasing order"),
            ));
        }
        previous = id;
        if let Some(missing) = candidates.next_if(|c| *c < id) {
            return Err(reject(
                line,
                format!("RAT candidate clause {missing} (it holds {}) has no hint group", -pivot),
            ));
        }
        candidates.next_if_eq(&id);
        let clause = clauses
            .get(id as i64)
            .ok_or_else(|| reject(line, format!("RAT hint group {head} names no active clause")))?;
        let refuted = resolvent_refuted(clauses, a, pivot, clause, group, line);
        a.undo_to(after_rup);
        match refuted? {
            Resolvent::Refuted => {}
            Resolvent::NoPivot => {
                return Err(reject(
                    line,
                    format!("RAT hint group {head} names clause {id}, which does not hold {}", -pivot),
                ));
            }
            Resolvent::Open => {
                return Err(reject(line, format!("the resolvent with clause {id} is not refuted by its hints")));
            }
        }
    }
    if let Some(missing) = candidates.next() {
        return Err(reject(line, format!("RAT candidate clause {missing} (it holds {}) has no hint group", -pivot)));
    }
    Ok(true)
}

/// What one RAT hint group showed of the resolvent of the lemma with its clause.
enum Resolvent {
    /// Satisfied, a tautology, or refuted by the group's hints.
    Refuted,
    /// The clause does not hold the pivot's negation (and is not satisfied).
    NoPivot,
    /// The group's hints end without a conflict.
    Open,
}

/// Judge the resolvent on `pivot` of the lemma (assumed false in `a`) with
/// `clause`, using one group's hints; `a` is left for the caller to undo.
fn resolvent_refuted(
    clauses: &Clauses,
    a: &mut Assignment,
    pivot: i32,
    clause: &[i32],
    group: &[i64],
    line: usize,
) -> Result<Resolvent, Rejection> {
    let mut holds_pivot = false;
    for &lit in clause {
        if lit == -pivot {
            holds_pivot = true;
            continue;
        }
        match a.of(lit) {
            1 => return Ok(Resolvent::Refuted),
            -1 => {}
            _ => {
                a.set(-lit);
            }
        }
    }
    if !holds_pivot {
        return Ok(Resolvent::NoPivot);
    }
    for &hint in group {
        if let Unit::Conflict = propagate_hint(clauses, a, hint, line)? {
            return Ok(Resolvent::Refuted);
        }
    }
    Ok(Resolvent::Open)
}

mod bytes;
mod clauses;
mod drat;
mod drat_steps;
mod steps;

pub use drat::{DratSummary, check_drat, check_drat_from};

use clauses::Clauses;
use steps::{Step, Steps};

#[cfg(test)]
mod drat_tests;
#[cfg(test)]
mod soundness;
#[cfg(test)]
mod tests;
