//! A CDCL SAT solver that writes an LRAT proof as it goes: two watched
//! literals with a blocking literal each, first-UIP learning with recursive
//! minimization, VSIDS on a binary heap with phase saving, Luby restarts and
//! LBD-based clause deletion. Every learned clause is emitted with the hints
//! of its derivation (the antecedents of the conflict analysis and of the
//! literals minimization removed, in trail order), every unit fixed at level
//! 0 becomes a proof clause, and a conflict at level 0 ends the proof with
//! the empty clause.

use std::fmt::Write as _;

mod analyze;
mod structures;
use structures::*;

type Lit = u32;
const NO_REASON: u32 = u32::MAX;

fn lit_of(dimacs: i32) -> Lit {
    let var = dimacs.unsigned_abs() - 1;
    var * 2 + u32::from(dimacs < 0)
}

fn dimacs_of(lit: Lit) -> i32 {
    let var = (lit >> 1) as i32 + 1;
    if lit & 1 == 1 { -var } else { var }
}

fn var(lit: Lit) -> usize {
    (lit >> 1) as usize
}

/// A clause watching a literal, and a literal of it (the blocker) whose
/// truth satisfies the clause without reading it.
#[derive(Clone, Copy)]
struct Watch {
    clause: u32,
    blocker: Lit,
    /// A clause of two literals: the blocker is all the rest of it.
    binary: bool,
}

/// The value of `lit` (1 true, -1 false, 0 unassigned) in a table indexed by literal.
fn lit_value(values: &[i8], lit: Lit) -> i8 {
    values[lit as usize]
}

/// How a run ended.
pub enum Answer {
    /// A model: one signed literal per variable.
    Sat(Vec<i32>),
    /// Unsatisfiable; the LRAT proof ends with the empty clause.
    Unsat,
    /// The conflict budget ran out.
    Unknown,
}

/// Counters of one run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Conflicts.
    pub conflicts: u64,
    /// Decisions.
    pub decisions: u64,
    /// Propagated literals.
    pub propagations: u64,
    /// Learned clauses.
    pub learned: u64,
    /// Learned clauses deleted.
    pub deleted: u64,
    /// Restarts.
    pub restarts: u64,
    /// Times the clause arena was compacted.
    pub compactions: u64,
}

/// The solver state.
pub struct Solver {
    arena: Arena,
    /// Learned clauses not deleted, and the words deleted clauses still take.
    learnts: Vec<u32>,
    wasted: usize,
    watches: Vec<Vec<Watch>>,
    /// Each variable's value (1 true, -1 false, 0 unassigned), and each literal's.
    value: Vec<i8>,
    lit_values: Vec<i8>,
    level: Vec<u32>,
    reason: Vec<u32>,
    unit_id: Vec<u64>,
    /// Each assigned variable's place on the trail.
    trail_place: Vec<u32>,
    trail: Vec<Lit>,
    trail_lim: Vec<usize>,
    qhead: usize,
    activity: Vec<f64>,
    var_inc: f64,
    heap: Heap,
    phase: Vec<bool>,
    seen: Vec<bool>,
    /// Minimization's verdicts, and the variables they were given for.
    mark: Vec<u8>,
    marked: Vec<usize>,
    next_id: u64,
    last_added: u64,
    /// The LRAT proof written so far.
    pub proof: String,
    /// Counters.
    pub stats: Stats,
}

impl Solver {
    /// A solver for `clauses` over `variables` (clause `i` has id `i + 1`).
    pub fn new(variables: u32, clauses: &[Vec<i32>]) -> (Solver, Option<Answer>) {
        let n = variables as usize;
        let mut s = Solver {
            arena: Arena::default(),
            learnts: Vec::new(),
            wasted: 0,
            watches: vec![Vec::new(); 2 * n],
            value: vec![0; n],
            lit_values: vec![0; 2 * n],
            level: vec![0; n],
            reason: vec![NO_REASON; n],
            unit_id: vec![0; n],
            trail_place: vec![0; n],
            trail: Vec::new(),
            trail_lim: Vec::new(),
            qhead: 0,
            activity: vec![0.0; n],
            var_inc: 1.0,
            heap: Heap { heap: (0..variables).collect(), place: (0..variables).collect() },
            phase: vec![false; n],
            seen: vec![false; n],
            mark: vec![UNKNOWN; n],
            marked: Vec::new(),
            next_id: clauses.len() as u64 + 1,
            last_added: clauses.len() as u64,
            proof: String::new(),
            stats: Stats::default(),
        };
        for (i, dimacs) in clauses.iter().enumerate() {
            let id = i as u64 + 1;
            let mut lits: Vec<Lit> = dimacs.iter().map(|&l| lit_of(l)).collect();
            lits.sort_unstable();
            lits.dedup();
            if lits.windows(2).any(|w| w[0] ^ 1 == w[1]) {
                continue; // a tautology constrains nothing
            }
            if lits.is_empty() {
                s.emit_lemma(&[], &[id]);
                return (s, Some(Answer::Unsat));
            }
            let index = s.arena.push(&lits, id, false, 0);
            if lits.len() == 1 {
                match s.lit_value(lits[0]) {
                    1 => {}
                    -1 => {
                        let earlier = s.unit_id[var(lits[0])];
                        s.emit_lemma(&[], &[earlier, id]);
                        return (s, Some(Answer::Unsat));
                    }
                    _ => s.enqueue(lits[0], index),
                }
            } else {
                s.watch(index);
            }
        }
        (s, None)
    }

    fn lit_value(&self, lit: Lit) -> i8 {
        lit_value(&self.lit_values, lit)
    }

    /// Watch clause `c`'s first two literals, each with the other as blocker.
    fn watch(&mut self, c: u32) {
        let (a, b) = (self.arena.lits(c)[0], self.arena.lits(c)[1]);
        let binary = self.arena.lits(c).len() == 2;
        self.watches[a as usize].push(Watch { clause: c, blocker: b, binary });
        self.watches[b as usize].push(Watch { clause: c, blocker: a, binary });
    }

    fn decision_level(&self) -> u32 {
        self.trail_lim.len() as u32
    }

    fn emit_lemma(&mut self, lits: &[Lit], hints: &[u64]) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.last_added = id;
        let _ = write!(self.proof, "{id}");
        for &l in lits {
            let _ = write!(self.proof, " {}", dimacs_of(l));
        }
        self.proof.push_str(" 0");
        for &h in hints {
            let _ = write!(self.proof, " {h}");
        }
        self.proof.push_str(" 0\n");
        id
    }

    fn enqueue(&mut self, lit: Lit, reason: u32) {
        let v = var(lit);
        self.value[v] = if lit & 1 == 1 { -1 } else { 1 };
        self.lit_values[lit as usize] = 1;
        self.lit_values[(lit ^ 1) as usize] = -1;
        self.level[v] = self.decision_level();
        self.reason[v] = reason;
        self.trail_place[v] = self.trail.len() as u32;
        self.trail.push(lit);
        if self.decision_level() == 0 && reason != NO_REASON {
            let lits = self.arena.lits(reason);
            if lits.len() == 1 {
                self.unit_id[v] = self.arena.id(reason);
            } else {
                // Derive the unit: the other literals are false by their own units.
                let mut hints: Vec<u64> =
                    lits.iter().filter(|&&l| var(l) != v).map(|&l| self.unit_id[var(l)]).collect();
                hints.push(self.arena.id(reason));
                self.unit_id[v] = self.emit_lemma(&[lit], &hints);
            }
        }
    }

    fn propagate(&mut self) -> Option<u32> {
        while self.qhead < self.trail.len() {
            let p = self.trail[self.qhead];
            self.qhead += 1;
            self.stats.propagations += 1;
            let false_lit = p ^ 1;
            let mut list = std::mem::take(&mut self.watches[false_lit as usize]);
            let mut keep = 0;
            let mut i = 0;
            let mut conflict = None;
            while i < list.len() {
                let w = list[i];
                i += 1;
                let blocker = lit_value(&self.lit_values, w.blocker);
                if blocker == 1 {
                    list[keep] = w;
                    keep += 1;
                    continue;
                }
                let ci = w.clause;
                if w.binary {
                    list[keep] = w;
                    keep += 1;
                    if blocker == -1 {
                        conflict = Some(ci);
                        break;
                    }
                    // A binary reason may imply either literal: readers skip the implied one's variable.
                    self.enqueue(w.blocker, ci);
                    continue;
                }
                let (first, replacement) = {
                    if self.arena.deleted(ci) {
                        continue;
                    }
                    let lits = self.arena.lits_mut(ci);
                    if lits[0] == false_lit {
                        lits.swap(0, 1);
                    }
                    let first = lits[0];
                    if first != w.blocker && lit_value(&self.lit_values, first) == 1 {
                        list[keep] = Watch { clause: ci, blocker: first, binary: false };
                        keep += 1;
                        continue;
                    }
                    let mut replacement = None;
                    for k in 2..lits.len() {
                        let candidate = lits[k];
                        if lit_value(&self.lit_values, candidate) != -1 {
                            lits.swap(1, k);
                            replacement = Some(candidate);
                            break;
                        }
                    }
                    (first, replacement)
                };
                if let Some(candidate) = replacement {
                    self.watches[candidate as usize].push(Watch { clause: ci, blocker: first, binary: false });
                    continue;
                }
                list[keep] = Watch { clause: ci, blocker: first, binary: false };
                keep += 1;
                if self.lit_value(first) == -1 {
                    conflict = Some(ci);
                    break;
                } else {
                    self.enqueue(first, ci);
                }
            }
            while i < list.len() {
                list[keep] = list[i];
                keep += 1;
                i += 1;
            }
            list.truncate(keep);
            self.watches[false_lit as usize] = list;
            if conflict.is_some() {
                return conflict;
            }
        }
        None
    }

    fn bump(&mut self, v: usize) {
        self.activity[v] += self.var_inc;
        if self.activity[v] > 1e100 {
            for a in &mut self.activity {
                *a *= 1e-100;
            }
            self.var_inc *= 1e-100;
        }
        self.heap.raised(v, &self.activity);
    }

    fn cancel_until(&mut self, level: u32) {
        if self.decision_level() <= level {
            return;
        }
        let start = self.trail_lim[level as usize];
        for &lit in &self.trail[start..] {
            let v = var(lit);
            self.phase[v] = lit & 1 == 0;
            self.value[v] = 0;
            self.lit_values[lit as usize] = 0;
            self.lit_values[(lit ^ 1) as usize] = 0;
            self.reason[v] = NO_REASON;
            self.heap.insert(v, &self.activity);
        }
        self.trail.truncate(start);
        self.trail_lim.truncate(level as usize);
        self.qhead = start;
    }

    fn pick_branch(&mut self) -> Option<Lit> {
        loop {
            let v = self.heap.pop(&self.activity)?;
            if self.value[v] == 0 {
                return Some((v as u32) * 2 + u32::from(!self.phase[v]));
            }
        }
    }

    /// Whether clause `c` (of more than two literals, so its implied literal
    /// is its first) is the reason of a current assignment.
    fn locked(&self, c: u32) -> bool {
        let first = self.arena.lits(c)[0];
        self.reason[var(first)] == c && self.lit_value(first) == 1
    }

    /// Delete half of the learned clauses of more than two literals and LBD
    /// above 2 that are no reason, the highest LBD (then the oldest) first;
    /// compact the arena once deleted clauses take half of it.
    fn reduce(&mut self) {
        let mut candidates: Vec<u32> = self
            .learnts
            .iter()
            .copied()
            .filter(|&c| self.arena.lits(c).len() > 2 && self.arena.lbd(c) > 2 && !self.locked(c))
            .collect();
        candidates.sort_by_key(|&c| (std::cmp::Reverse(self.arena.lbd(c)), self.arena.id(c)));
        candidates.truncate(candidates.len() / 2);
        if candidates.is_empty() {
            return;
        }
        let _ = write!(self.proof, "{} d", self.last_added);
        for &c in &candidates {
            self.arena.delete(c);
            self.wasted += self.arena.size(c);
            let _ = write!(self.proof, " {}", self.arena.id(c));
            self.stats.deleted += 1;
        }
        self.proof.push_str(" 0\n");
        self.learnts.retain(|&c| !self.arena.deleted(c));
        if self.wasted * 2 > self.arena.words.len() {
            self.compact();
        }
    }

    /// Move the live clauses together; references follow them (reasons and
    /// learned clauses through a forwarding word left in each old header,
    /// watches rebuilt from each clause's first two literals, which are
    /// always its watched ones).
    fn compact(&mut self) {
        let mut old = std::mem::take(&mut self.arena.words);
        let mut at = 0;
        while at < old.len() {
            let c = at as u32;
            let size = HEADER + old[at] as usize;
            if old[at + 1] & DELETED == 0 {
                let moved = self.arena.words.len() as u32;
                self.arena.words.extend_from_slice(&old[at..at + size]);
                old[at + 1] = moved;
            } else {
                old[at + 1] = NO_REASON;
            }
            at += size;
            debug_assert!(c as usize + size == at);
        }
        for reason in self.reason.iter_mut().filter(|r| **r != NO_REASON) {
            *reason = old[*reason as usize + 1];
        }
        for c in &mut self.learnts {
            *c = old[*c as usize + 1];
        }
        for list in &mut self.watches {
            list.clear();
        }
        let mut at = 0;
        while at < self.arena.words.len() {
            let c = at as u32;
            at += self.arena.size(c);
            if self.arena.lits(c).len() >= 2 {
                self.watch(c);
            }
        }
        self.wasted = 0;
        self.stats.compactions += 1;
    }

    /// Run until an answer or until `max_conflicts` conflicts.
    pub fn solve(&mut self, max_conflicts: u64) -> Answer {
        let mut restart_index = 1u64;
        let mut until_restart = 64 * luby(restart_index);
        let mut next_reduce = 2000u64;
        let mut reductions = 0u64;
        loop {
            if let Some(conflict) = self.propagate() {
                self.stats.conflicts += 1;
                if self.decision_level() == 0 {
                    let mut hints: Vec<u64> = self.arena.lits(conflict).iter().map(|&l| self.unit_id[var(l)]).collect();
                    hints.push(self.arena.id(conflict));
                    self.emit_lemma(&[], &hints);
                    return Answer::Unsat;
                }
                let (learnt, backjump, hints) = self.analyze(conflict);
                let id = self.emit_lemma(&learnt, &hints);
                self.stats.learned += 1;
                self.cancel_until(backjump);
                let mut levels: Vec<u32> = learnt.iter().map(|&l| self.level[var(l)]).collect();
                levels.sort_unstable();
                levels.dedup();
                let index = self.arena.push(&learnt, id, true, levels.len() as u32);
                if learnt.len() > 1 {
                    self.watch(index);
                }
                self.learnts.push(index);
                self.enqueue(learnt[0], index);
                self.var_inc *= 1.0 / 0.95;
                if self.stats.conflicts >= max_conflicts {
                    return Answer::Unknown;
                }
                until_restart = until_restart.saturating_sub(1);
                if until_restart == 0 {
                    self.stats.restarts += 1;
                    restart_index += 1;
                    until_restart = 64 * luby(restart_index);
                    self.cancel_until(0);
                }
                if self.stats.conflicts >= next_reduce {
                    reductions += 1;
                    next_reduce += 2000 + 300 * reductions;
                    self.reduce();
                }
            } else {
                match self.pick_branch() {
                    None => {
                        let model = (0..self.value.len())
                            .map(|v| if self.value[v] > 0 { v as i32 + 1 } else { -(v as i32 + 1) })
                            .collect();
                        return Answer::Sat(model);
                    }
                    Some(lit) => {
                        self.stats.decisions += 1;
                        self.trail_lim.push(self.trail.len());
                        self.enqueue(lit, NO_REASON);
                    }
                }
            }
        }
    }
}

/// The Luby sequence 1, 1, 2, 1, 1, 2, 4, ...
fn luby(mut i: u64) -> u64 {
    loop {
        let mut k = 1u32;
        while (1u64 << k) - 1 < i {
            k += 1;
        }
        if i == (1u64 << k) - 1 {
            return 1u64 << (k - 1);
        }
        i -= (1u64 << (k - 1)) - 1;
    }
}
