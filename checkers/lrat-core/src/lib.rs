//! Checking SAT certificates against a CNF formula: models by evaluating
//! every clause, LRAT proofs by hinted unit propagation (RUP steps), RAT steps
//! with their candidate groups, and deletions. Shares no code with any solver.

use std::collections::BTreeMap;
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

struct Assignment {
    value: Vec<i8>,
    trail: Vec<usize>,
}

impl Assignment {
    fn grow(&mut self, var: usize) {
        if var >= self.value.len() {
            self.value.resize(var + 1, 0);
        }
    }

    fn of(&self, lit: i32) -> i8 {
        let var = lit.unsigned_abs() as usize;
        let v = self.value.get(var).copied().unwrap_or(0);
        if lit > 0 { v } else { -v }
    }

    /// Make `lit` true; false if it was already false.
    fn set(&mut self, lit: i32) -> bool {
        match self.of(lit) {
            1 => true,
            -1 => false,
            _ => {
                let var = lit.unsigned_abs() as usize;
                self.grow(var);
                self.value[var] = if lit > 0 { 1 } else { -1 };
                self.trail.push(var);
                true
            }
        }
    }

    fn undo_to(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let var = self.trail.pop().unwrap_or(0);
            self.value[var] = 0;
        }
    }
}

enum Unit {
    Conflict,
    Assigned,
}

/// Process one hint: the clause must be unit (assign its literal) or falsified.
fn propagate_hint(
    clauses: &BTreeMap<u64, Vec<i32>>,
    a: &mut Assignment,
    id: u64,
    line: usize,
) -> Result<Unit, Rejection> {
    let clause = clauses.get(&id).ok_or_else(|| reject(line, format!("hint {id} names no active clause")))?;
    let mut unassigned = None;
    for &lit in clause {
        match a.of(lit) {
            1 => return Err(reject(line, format!("hint {id} is already satisfied, not unit"))),
            0 => {
                if unassigned.is_some_and(|u| u != lit) {
                    return Err(reject(line, format!("hint {id} is not unit: more than one literal is unassigned")));
                }
                unassigned = Some(lit);
            }
            _ => {}
        }
    }
    match unassigned {
        None => Ok(Unit::Conflict),
        Some(lit) => {
            a.set(lit);
            Ok(Unit::Assigned)
        }
    }
}

/// Check an LRAT proof that `formula` is unsatisfiable.
pub fn check_lrat(formula: &Formula, proof: &str) -> Result<ProofSummary, Rejection> {
    let mut clauses: BTreeMap<u64, Vec<i32>> = BTreeMap::new();
    for (i, clause) in formula.clauses.iter().enumerate() {
        clauses.insert(i as u64 + 1, clause.clone());
    }
    let mut last_id = formula.clauses.len() as u64;
    let mut a = Assignment { value: vec![0; formula.variables as usize + 1], trail: Vec::new() };
    let mut summary = ProofSummary::default();
    for (index, text) in proof.lines().enumerate() {
        let line = index + 1;
        let text = text.trim();
        if text.is_empty() || text.starts_with('c') {
            continue;
        }
        let mut tokens = text.split_ascii_whitespace();
        let id: u64 = tokens
            .next()
            .and_then(|t| t.parse().ok())
            .filter(|id| *id > 0)
            .ok_or_else(|| reject(line, "expected a positive clause id"))?;
        let rest: Vec<&str> = tokens.collect();
        if rest.first() == Some(&"d") {
            let ids = numbers(&rest[1..], line)?;
            let (ids, tail) = split_at_zero(&ids, line)?;
            if !tail.is_empty() {
                return Err(reject(line, "text after the deletion's terminating 0"));
            }
            for &d in ids {
                if d <= 0 || clauses.remove(&(d as u64)).is_none() {
                    return Err(reject(line, format!("deletion of {d}, which is not an active clause")));
                }
                summary.deletions += 1;
            }
            continue;
        }
        let numbers = numbers(&rest, line)?;
        let (lemma, rest) = split_at_zero(&numbers, line)?;
        let (hints, tail) = split_at_zero(rest, line)?;
        if !tail.is_empty() {
            return Err(reject(line, "text after the hints' terminating 0"));
        }
        if id <= last_id {
            return Err(reject(line, format!("clause id {id} does not increase (last id {last_id})")));
        }
        let lemma: Vec<i32> = lemma.iter().map(|&l| l as i32).collect();
        if lemma.iter().any(|l| *l == 0 || l.unsigned_abs() > 1 << 30) {
            return Err(reject(line, "literal out of range"));
        }
        let rat = check_lemma(&clauses, &mut a, &lemma, hints, line)?;
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
    Err(reject(0, "the proof does not derive the empty clause"))
}

fn numbers(tokens: &[&str], line: usize) -> Result<Vec<i64>, Rejection> {
    tokens.iter().map(|t| t.parse::<i64>().map_err(|_| reject(line, format!("{t:?} is not an integer")))).collect()
}

fn split_at_zero(numbers: &[i64], line: usize) -> Result<(&[i64], &[i64]), Rejection> {
    let zero = numbers.iter().position(|n| *n == 0).ok_or_else(|| reject(line, "missing terminating 0"))?;
    Ok((&numbers[..zero], &numbers[zero + 1..]))
}

/// Check one lemma; returns whether it needed RAT.
fn check_lemma(
    clauses: &BTreeMap<u64, Vec<i32>>,
    a: &mut Assignment,
    lemma: &[i32],
    hints: &[i64],
    line: usize,
) -> Result<bool, Rejection> {
    // Assume the lemma false. A tautological lemma is implied outright.
    for &lit in lemma {
        if !a.set(-lit) {
            return Ok(false);
        }
    }
    let first_negative = hints.iter().position(|h| *h < 0).unwrap_or(hints.len());
    for &hint in &hints[..first_negative] {
        if let Unit::Conflict = propagate_hint(clauses, a, hint as u64, line)? {
            return Ok(false);
        }
    }
    if first_negative == hints.len() {
        return Err(reject(line, "the hints end without a conflict (not RUP, and no RAT candidates given)"));
    }
    let pivot = *lemma.first().ok_or_else(|| reject(line, "the empty clause cannot be a RAT step"))?;
    let groups = &hints[first_negative..];
    let after_rup = a.trail.len();
    for (&candidate_id, candidate) in clauses.iter().filter(|(_, c)| c.contains(&-pivot)) {
        let start = groups.iter().position(|h| *h == -(candidate_id as i64));
        let Some(start) = start else {
            if candidate.iter().any(|l| a.of(*l) == 1) {
                continue;
            }
            return Err(reject(line, format!("RAT candidate clause {candidate_id} has no hint group")));
        };
        let end = groups[start + 1..].iter().position(|h| *h < 0).map_or(groups.len(), |p| start + 1 + p);
        let mut tautology = false;
        for &lit in candidate.iter().filter(|l| **l != -pivot) {
            if !a.set(-lit) {
                tautology = true;
                break;
            }
        }
        let mut conflict = tautology;
        if !tautology {
            for &hint in &groups[start + 1..end] {
                if let Unit::Conflict = propagate_hint(clauses, a, hint as u64, line)? {
                    conflict = true;
                    break;
                }
            }
        }
        a.undo_to(after_rup);
        if !conflict {
            return Err(reject(line, format!("the resolvent with clause {candidate_id} is not refuted by its hints")));
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests;
