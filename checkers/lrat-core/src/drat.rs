//! Checking a DRAT proof forward, as it streams in: every lemma must follow
//! from the active clauses by unit propagation (RUP), or be a resolution
//! asymmetric tautology on its first literal (RAT: every resolvent with an
//! active clause containing that literal's negation follows by RUP);
//! deletions remove clauses, matched as sets of literals. The proof is
//! accepted at the first lemma after which unit propagation over the
//! formula and the lemmas finds a conflict (the empty clause, written or
//! not).
//!
//! Two deletions are ignored, as drat-trim ignores them: a clause that is
//! the reason for a top-level assignment (a "unit deletion"), and a clause
//! that is not active. Ignoring a deletion is sound: every clause kept is
//! in the formula or was checked when it was added, so the clause set
//! checked against stays satisfiable whenever the formula is; a RAT check
//! against more clauses is only stricter. Because no top-level assignment
//! is ever retracted, the top-level trail only grows.
//!
//! Clauses live in one arena (`length, flags, next in hash chain,
//! literals…`), watched by their first two literals (two-watched-literal
//! propagation with blocking literals); deleted clauses leave their watches
//! lazily and the arena is compacted once it is mostly dead.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;

use crate::drat_steps::{DratStep, DratSteps};
use crate::{Formula, ProofError, Rejection, reject};

/// Counts of a checked DRAT proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DratSummary {
    /// Lemmas checked and added.
    pub lemmas: u64,
    /// Lemmas that needed RAT.
    pub rat_lemmas: u64,
    /// Clauses deleted.
    pub deletions: u64,
    /// Deletions of clauses that were reasons for top-level assignments (ignored).
    pub ignored_unit_deletions: u64,
    /// Deletions of clauses that were not active (ignored).
    pub ignored_absent_deletions: u64,
    /// Line (text) or step (binary) of the lemma after which propagation conflicts; 0 when the formula
    /// alone is refuted by unit propagation.
    pub refuted_at: usize,
    /// Whether the proof was binary.
    pub binary: bool,
}

/// Check a DRAT proof that `formula` is unsatisfiable, read from `reader`
/// step by step: text, or binary (the form CaDiCaL writes by default). Only
/// the active clauses are held, never the proof.
pub fn check_drat_from<R: Read>(formula: &Formula, reader: R) -> Result<DratSummary, ProofError> {
    let mut checker = Checker { declared: formula.variables, ..Checker::default() };
    checker.grow(formula.variables);
    let mut scratch = Vec::new();
    for clause in &formula.clauses {
        let tautology = checker.normalize(clause, &mut scratch);
        checker.add(&mut scratch, tautology);
        if checker.refuted {
            break;
        }
    }
    let mut summary = DratSummary::default();
    if checker.refuted {
        return Ok(summary);
    }
    let mut steps = DratSteps::new(reader);
    while let Some(step) = steps.next_step()? {
        let line = steps.line();
        summary.binary = steps.binary();
        let tautology = checker.normalize(steps.literals(), &mut scratch);
        match step {
            DratStep::Delete => match checker.delete(&scratch) {
                Deleted::Removed => summary.deletions += 1,
                Deleted::Reason => summary.ignored_unit_deletions += 1,
                Deleted::Absent => summary.ignored_absent_deletions += 1,
            },
            DratStep::Add => {
                if !tautology {
                    let rat = checker.implied(&scratch, line)?;
                    summary.rat_lemmas += u64::from(rat);
                }
                summary.lemmas += 1;
                checker.add(&mut scratch, tautology);
                if checker.refuted {
                    summary.refuted_at = line;
                    return Ok(summary);
                }
            }
        }
    }
    Err(reject(0, "the proof ends without refuting the formula: unit propagation over the formula and every lemma finds no conflict").into())
}

/// Check a DRAT proof given as text.
pub fn check_drat(formula: &Formula, proof: &str) -> Result<DratSummary, Rejection> {
    check_drat_from(formula, proof.as_bytes()).map_err(|e| match e {
        ProofError::Rejected(r) => r,
        ProofError::Unreadable(e) => reject(0, e.to_string()),
    })
}

/// Words before a clause's literals: length, flags, next clause (offset + 1) with the same hash.
const HEADER: usize = 3;
const DELETED: u32 = 1;
/// Units and tautologies: kept for deletion and RAT, never watched.
const UNWATCHED: u32 = 2;

/// Dead words before the arena is compacted (small in tests, so they compact).
const COMPACT_AFTER: usize = if cfg!(test) { 16 } else { 1 << 20 };

#[derive(Clone, Copy)]
struct Watch {
    clause: u32,
    blocker: u32,
}

enum Deleted {
    Removed,
    Reason,
    Absent,
}

#[derive(Default)]
struct Checker {
    arena: Vec<u32>,
    /// By literal code: clauses watching it.
    watches: Vec<Vec<Watch>>,
    /// By literal code: 1 true, -1 false, 0 unassigned.
    value: Vec<i8>,
    /// By variable: the clause (offset + 1) that implied it.
    reason: Vec<u32>,
    /// Literal codes made true, in order; the top level is every entry while no lemma is being checked.
    trail: Vec<u32>,
    head: usize,
    /// Clause hash to its first clause (offset + 1); the rest chain through the headers.
    buckets: HashMap<u64, u32, BuildHasherDefault<Passthrough>>,
    /// By literal code: in the clause being normalized or matched.
    mark: Vec<bool>,
    /// By literal code: how many active clauses hold it (RAT candidates).
    occurrences: Vec<u32>,
    /// The formula's variables, indexed as they are.
    declared: u32,
    /// Variables above those (a proof's extension variables), indexed densely after them: memory
    /// grows with how many a proof uses, never with how large their numbers are.
    extension: HashMap<u32, u32>,
    /// Each extension variable's number, by dense index above `declared`.
    extension_names: Vec<u32>,
    dead: usize,
    refuted: bool,
}

impl Checker {
    fn grow(&mut self, variables: u32) {
        let codes = 2 * (variables as usize + 1);
        if self.value.len() < codes {
            self.value.resize(codes, 0);
            self.mark.resize(codes, false);
            self.occurrences.resize(codes, 0);
            self.watches.resize_with(codes, Vec::new);
            self.reason.resize(variables as usize + 1, 0);
        }
    }

    /// A literal as an index, `2 · variable + (negative)` with the variable
    /// indexed densely; its negation is `code ^ 1`.
    #[inline]
    fn code(&mut self, literal: i32) -> u32 {
        let mut variable = literal.unsigned_abs();
        if variable > self.declared {
            let next = self.declared + 1 + self.extension_names.len() as u32;
            variable = *self.extension.entry(variable).or_insert(next);
            if variable == next {
                self.extension_names.push(literal.unsigned_abs());
                self.grow(next);
            }
        }
        (variable << 1) | u32::from(literal < 0)
    }

    /// The DIMACS literal of a code.
    fn literal(&self, code: u32) -> i32 {
        let dense = code >> 1;
        let variable =
            if dense <= self.declared { dense } else { self.extension_names[(dense - self.declared - 1) as usize] };
        if code & 1 == 1 { -(variable as i32) } else { variable as i32 }
    }

    /// `literals` as codes in `into`, duplicates dropped (the first stays
    /// first: it is the RAT pivot); whether the clause is a tautology.
    fn normalize(&mut self, literals: &[i32], into: &mut Vec<u32>) -> bool {
        into.clear();
        let mut tautology = false;
        for &l in literals {
            let c = self.code(l);
            if self.mark[c as usize] {
                continue;
            }
            tautology |= self.mark[(c ^ 1) as usize];
            self.mark[c as usize] = true;
            into.push(c);
        }
        for &c in into.iter() {
            self.mark[c as usize] = false;
        }
        tautology
    }

    #[inline]
    fn assign(&mut self, c: u32, reason: u32) {
        self.value[c as usize] = 1;
        self.value[(c ^ 1) as usize] = -1;
        self.reason[(c >> 1) as usize] = reason;
        self.trail.push(c);
    }

    fn undo(&mut self, mark: usize) {
        for &c in &self.trail[mark..] {
            self.value[c as usize] = 0;
            self.value[(c ^ 1) as usize] = 0;
        }
        self.trail.truncate(mark);
        self.head = mark;
    }

    /// Propagate the trail from its head; whether a clause is falsified.
    fn propagate(&mut self) -> bool {
        let Checker { arena, watches, value, reason, trail, head, .. } = self;
        while *head < trail.len() {
            let falsified = trail[*head] ^ 1;
            *head += 1;
            let mut list = std::mem::take(&mut watches[falsified as usize]);
            let (mut i, mut kept) = (0, 0);
            let mut conflict = false;
            while i < list.len() {
                let watch = list[i];
                i += 1;
                if value[watch.blocker as usize] == 1 {
                    list[kept] = watch;
                    kept += 1;
                    continue;
                }
                let offset = watch.clause as usize;
                if arena[offset + 1] & DELETED != 0 {
                    continue;
                }
                let length = arena[offset] as usize;
                let literals = &mut arena[offset + HEADER..offset + HEADER + length];
                if literals[0] == falsified {
                    literals.swap(0, 1);
                }
                let first = literals[0];
                let rewatched = Watch { clause: watch.clause, blocker: first };
                if value[first as usize] == 1 {
                    list[kept] = rewatched;
                    kept += 1;
                    continue;
                }
                if let Some(k) = (2..length).find(|&k| value[literals[k] as usize] != -1) {
                    literals.swap(1, k);
                    watches[literals[1] as usize].push(rewatched);
                    continue;
                }
                list[kept] = rewatched;
                kept += 1;
                if value[first as usize] == -1 {
                    conflict = true;
                    list.copy_within(i.., kept);
                    kept += list.len() - i;
                    break;
                }
                value[first as usize] = 1;
                value[(first ^ 1) as usize] = -1;
                reason[(first >> 1) as usize] = watch.clause + 1;
                trail.push(first);
            }
            list.truncate(kept);
            watches[falsified as usize] = list;
            if conflict {
                return true;
            }
        }
        false
    }

    /// Whether assuming every literal of `clause` false leads to a conflict.
    fn refutes_negation(&mut self, clause: &[u32]) -> bool {
        for &c in clause {
            match self.value[c as usize] {
                1 => return true,
                0 => self.assign(c ^ 1, 0),
                _ => {}
            }
        }
        self.propagate()
    }

    /// Check a lemma (normalized, not a tautology) against the active
    /// clauses at the top level; whether it needed RAT.
    fn implied(&mut self, lemma: &[u32], line: usize) -> Result<bool, Rejection> {
        let top = self.trail.len();
        if self.refutes_negation(lemma) {
            self.undo(top);
            return Ok(false);
        }
        let Some(&pivot) = lemma.first() else {
            self.undo(top);
            return Err(reject(line, "the empty clause does not follow by unit propagation"));
        };
        let after = self.trail.len();
        // The active clauses holding ¬pivot: none for a fresh pivot (an
        // extension variable), and the scan stops at the last one.
        let mut candidates = self.occurrences[(pivot ^ 1) as usize];
        let mut offset = 0;
        while candidates > 0 && offset < self.arena.len() {
            let (length, flags) = (self.arena[offset] as usize, self.arena[offset + 1]);
            let (start, end) = (offset + HEADER, offset + HEADER + length);
            offset = end;
            if flags & DELETED != 0 || !self.arena[start..end].contains(&(pivot ^ 1)) {
                continue;
            }
            candidates -= 1;
            let mut conflict = false;
            for k in start..end {
                let c = self.arena[k];
                if c == pivot ^ 1 {
                    continue;
                }
                match self.value[c as usize] {
                    1 => {
                        conflict = true;
                        break;
                    }
                    0 => self.assign(c ^ 1, 0),
                    _ => {}
                }
            }
            let conflict = conflict || self.propagate();
            self.undo(after);
            if !conflict {
                // At most 16 of the clause's literals are named.
                let mut candidate: Vec<String> =
                    self.arena[start..end].iter().take(16).map(|&c| self.literal(c).to_string()).collect();
                if length > 16 {
                    candidate.push(format!("… ({length} literals)"));
                }
                self.undo(top);
                return Err(reject(
                    line,
                    format!(
                        "the lemma is neither RUP nor RAT on its first literal {}: the resolvent with the clause [{}] does not follow by unit propagation",
                        self.literal(pivot),
                        candidate.join(", ")
                    ),
                ));
            }
        }
        self.undo(top);
        Ok(true)
    }

    /// Store a clause (normalized) at the top level: watch it, or assign
    /// its literal when it is unit, and propagate; mark the formula refuted
    /// on a conflict. Reorders `clause`.
    fn add(&mut self, clause: &mut [u32], tautology: bool) {
        for &c in clause.iter() {
            self.occurrences[c as usize] += 1;
        }
        if tautology {
            self.store(clause, UNWATCHED);
            return;
        }
        // True literals first, then unassigned, then false: the first two are watched.
        clause.sort_by_key(|&c| match self.value[c as usize] {
            1 => 0,
            0 => 1,
            _ => 2,
        });
        let flags = if clause.len() < 2 { UNWATCHED } else { 0 };
        let offset = self.store(clause, flags);
        if clause.len() >= 2 {
            self.watches[clause[0] as usize].push(Watch { clause: offset, blocker: clause[1] });
            self.watches[clause[1] as usize].push(Watch { clause: offset, blocker: clause[0] });
        }
        let Some(&first) = clause.first() else {
            self.refuted = true;
            return;
        };
        match self.value[first as usize] {
            1 => {}
            -1 => self.refuted = true,
            _ => {
                if clause.len() == 1 || self.value[clause[1] as usize] == -1 {
                    self.assign(first, offset + 1);
                    if self.propagate() {
                        self.refuted = true;
                    }
                }
            }
        }
    }

    fn store(&mut self, clause: &[u32], flags: u32) -> u32 {
        let offset = self.arena.len() as u32;
        let next = self.buckets.insert(hash(clause), offset + 1).unwrap_or(0);
        self.arena.extend_from_slice(&[clause.len() as u32, flags, next]);
        self.arena.extend_from_slice(clause);
        offset
    }

    /// Delete the active clause with exactly these literals (at the top level).
    fn delete(&mut self, clause: &[u32]) -> Deleted {
        let key = hash(clause);
        for &c in clause {
            self.mark[c as usize] = true;
        }
        let (mut previous, mut current) = (None, self.buckets.get(&key).copied().unwrap_or(0));
        while current != 0 {
            let offset = current as usize - 1;
            let length = self.arena[offset] as usize;
            let literals = &self.arena[offset + HEADER..offset + HEADER + length];
            if length == clause.len() && literals.iter().all(|&c| self.mark[c as usize]) {
                break;
            }
            previous = Some(offset);
            current = self.arena[offset + 2];
        }
        for &c in clause {
            self.mark[c as usize] = false;
        }
        if current == 0 {
            return Deleted::Absent;
        }
        let offset = current as usize - 1;
        let literals = &self.arena[offset + HEADER..offset + HEADER + clause.len()];
        if literals.iter().any(|&c| self.value[c as usize] == 1 && self.reason[(c >> 1) as usize] == current) {
            return Deleted::Reason;
        }
        let next = self.arena[offset + 2];
        match previous {
            Some(p) => self.arena[p + 2] = next,
            None if next == 0 => {
                self.buckets.remove(&key);
            }
            None => {
                self.buckets.insert(key, next);
            }
        }
        self.arena[offset + 1] |= DELETED;
        for &c in clause {
            self.occurrences[c as usize] -= 1;
        }
        self.dead += HEADER + clause.len();
        if self.dead > COMPACT_AFTER && 2 * self.dead > self.arena.len() {
            self.compact();
        }
        Deleted::Removed
    }

    /// Move the live clauses to a new arena (at the top level), rebuilding
    /// the watches and the hash chains, and moving the reasons with them.
    fn compact(&mut self) {
        let live = self.arena.len() - self.dead;
        let mut old = std::mem::replace(&mut self.arena, Vec::with_capacity(live));
        self.buckets.clear();
        self.watches.iter_mut().for_each(Vec::clear);
        let mut offset = 0;
        while offset < old.len() {
            let (length, flags) = (old[offset] as usize, old[offset + 1]);
            let literals = offset + HEADER..offset + HEADER + length;
            if flags & DELETED == 0 {
                let moved = self.store(&old[literals.clone()], flags);
                if flags & UNWATCHED == 0 {
                    let (a, b) = (old[literals.start], old[literals.start + 1]);
                    self.watches[a as usize].push(Watch { clause: moved, blocker: b });
                    self.watches[b as usize].push(Watch { clause: moved, blocker: a });
                }
                // Where the clause went, for the reasons below.
                old[offset + 1] = moved + 1;
            }
            offset = literals.end;
        }
        for &c in &self.trail {
            let reason = &mut self.reason[(c >> 1) as usize];
            if *reason != 0 {
                *reason = old[*reason as usize];
            }
        }
        self.dead = 0;
    }
}

/// A hash of a clause's literals that ignores their order.
fn hash(clause: &[u32]) -> u64 {
    let (mut sum, mut xor) = (0u64, 0u64);
    for &c in clause {
        let mut x = u64::from(c).wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        sum = sum.wrapping_add(x);
        xor ^= x.rotate_left(29);
    }
    sum ^ xor.rotate_left(32) ^ clause.len() as u64
}

/// The bucket keys are hashes already.
#[derive(Default)]
struct Passthrough(u64);

impl Hasher for Passthrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

#[cfg(test)]
mod memory {
    use super::{COMPACT_AFTER, Checker, Deleted, HEADER};

    fn add(checker: &mut Checker, clause: &[i32]) {
        let mut codes = Vec::new();
        let tautology = checker.normalize(clause, &mut codes);
        checker.add(&mut codes, tautology);
    }

    fn delete(checker: &mut Checker, clause: &[i32]) -> Deleted {
        let mut codes = Vec::new();
        checker.normalize(clause, &mut codes);
        checker.delete(&codes)
    }

    /// Only the active clauses are held: a stream of clauses, each deleted
    /// a few steps after it was added, keeps the arena within twice the live
    /// words (plus the compaction threshold) and drops the dead clauses'
    /// watches; a reason moved by a compaction still protects its literal.
    #[test]
    fn deleted_clauses_give_their_room_back_and_reasons_move_with_theirs() {
        let mut checker = Checker { declared: 60, ..Checker::default() };
        checker.grow(60);
        let clause = |i: usize| [1 + (i % 23) as i32, -(24 + (i % 19) as i32), 50 + (i % 7) as i32];
        // Dead clauses before the reason, so that a compaction moves it.
        for i in 0..4 {
            add(&mut checker, &clause(i));
            assert!(matches!(delete(&mut checker, &clause(i)), Deleted::Removed));
        }
        add(&mut checker, &[-58, 59]);
        add(&mut checker, &[58]);
        assert_eq!(checker.value[(59 << 1) as usize], 1, "x59 follows from x58 by propagation");
        let mut live = std::collections::VecDeque::new();
        for i in 4..2_000 {
            add(&mut checker, &clause(i));
            live.push_back(i);
            if live.len() > 10 {
                assert!(matches!(delete(&mut checker, &clause(live.pop_front().unwrap())), Deleted::Removed));
            }
            let live_words = (live.len() + 2) * (HEADER + 3);
            assert!(checker.arena.len() <= 2 * live_words + COMPACT_AFTER + 8, "{} words", checker.arena.len());
            let watches: usize = checker.watches.iter().map(Vec::len).sum();
            assert!(watches <= 4 * (live.len() + 2) + COMPACT_AFTER, "{watches} watches");
        }
        assert!(matches!(delete(&mut checker, &[-58, 59]), Deleted::Reason), "the reason of x59 stays");
        assert!(matches!(delete(&mut checker, &[58]), Deleted::Reason), "and the reason of x58");
    }
}
