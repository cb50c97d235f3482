//! A CDCL SAT solver that writes an LRAT proof as it goes: two watched
//! literals, first-UIP learning, VSIDS with phase saving, Luby restarts and
//! LBD-based clause deletion. Every learned clause is emitted with the hints
//! of its derivation (the antecedents of the conflict analysis in trail
//! order), every unit fixed at level 0 becomes a proof clause, and a conflict
//! at level 0 ends the proof with the empty clause.

use std::fmt::Write as _;

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

struct Clause {
    lits: Vec<Lit>,
    id: u64,
    learnt: bool,
    lbd: u32,
    deleted: bool,
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
}

/// The solver state.
pub struct Solver {
    clauses: Vec<Clause>,
    watches: Vec<Vec<u32>>,
    value: Vec<i8>,
    level: Vec<u32>,
    reason: Vec<u32>,
    unit_id: Vec<u64>,
    trail: Vec<Lit>,
    trail_lim: Vec<usize>,
    qhead: usize,
    activity: Vec<f64>,
    var_inc: f64,
    phase: Vec<bool>,
    seen: Vec<bool>,
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
            clauses: Vec::new(),
            watches: vec![Vec::new(); 2 * n],
            value: vec![0; n],
            level: vec![0; n],
            reason: vec![NO_REASON; n],
            unit_id: vec![0; n],
            trail: Vec::new(),
            trail_lim: Vec::new(),
            qhead: 0,
            activity: vec![0.0; n],
            var_inc: 1.0,
            phase: vec![false; n],
            seen: vec![false; n],
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
            let index = s.clauses.len() as u32;
            s.clauses.push(Clause { lits: lits.clone(), id, learnt: false, lbd: 0, deleted: false });
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
                s.watches[lits[0] as usize].push(index);
                s.watches[lits[1] as usize].push(index);
            }
        }
        (s, None)
    }

    fn lit_value(&self, lit: Lit) -> i8 {
        let v = self.value[var(lit)];
        if lit & 1 == 1 { -v } else { v }
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
        self.level[v] = self.decision_level();
        self.reason[v] = reason;
        self.trail.push(lit);
        if self.decision_level() == 0 && reason != NO_REASON {
            let clause = &self.clauses[reason as usize];
            if clause.lits.len() == 1 {
                self.unit_id[v] = clause.id;
            } else {
                // Derive the unit: the other literals are false by their own units.
                let mut hints: Vec<u64> =
                    clause.lits.iter().filter(|&&l| var(l) != v).map(|&l| self.unit_id[var(l)]).collect();
                hints.push(clause.id);
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
                let ci = list[i];
                i += 1;
                if self.clauses[ci as usize].deleted {
                    continue;
                }
                {
                    let lits = &mut self.clauses[ci as usize].lits;
                    if lits[0] == false_lit {
                        lits.swap(0, 1);
                    }
                }
                let first = self.clauses[ci as usize].lits[0];
                if self.lit_value(first) == 1 {
                    list[keep] = ci;
                    keep += 1;
                    continue;
                }
                let len = self.clauses[ci as usize].lits.len();
                let mut moved = false;
                for k in 2..len {
                    let candidate = self.clauses[ci as usize].lits[k];
                    if self.lit_value(candidate) != -1 {
                        self.clauses[ci as usize].lits.swap(1, k);
                        self.watches[candidate as usize].push(ci);
                        moved = true;
                        break;
                    }
                }
                if moved {
                    continue;
                }
                list[keep] = ci;
                keep += 1;
                if self.lit_value(first) == -1 {
                    while i < list.len() {
                        list[keep] = list[i];
                        keep += 1;
                        i += 1;
                    }
                    conflict = Some(ci);
                } else {
                    self.enqueue(first, ci);
                }
            }
            list.truncate(keep);
            self.watches[false_lit as usize] = list;
            if conflict.is_some() {
                return conflict;
            }
        }
        None
    }

    /// First-UIP analysis: the learned clause (asserting literal first), the
    /// backjump level, and the LRAT hints of its derivation.
    fn analyze(&mut self, conflict: u32) -> (Vec<Lit>, u32, Vec<u64>) {
        let current = self.decision_level();
        let mut learnt: Vec<Lit> = vec![0];
        let mut units: Vec<u64> = Vec::new();
        let mut unit_seen: Vec<usize> = Vec::new();
        let mut chain: Vec<(usize, u64)> = Vec::new();
        let conflict_id = self.clauses[conflict as usize].id;
        let mut clause = conflict;
        let mut pending = 0;
        let mut index = self.trail.len();
        let mut resolved: Option<Lit> = None;
        loop {
            let lits = self.clauses[clause as usize].lits.clone();
            for q in lits {
                let v = var(q);
                if resolved.is_some_and(|p| var(p) == v) || self.seen[v] {
                    continue;
                }
                if self.level[v] == 0 {
                    if !unit_seen.contains(&v) {
                        unit_seen.push(v);
                        units.push(self.unit_id[v]);
                    }
                    continue;
                }
                self.seen[v] = true;
                self.bump(v);
                if self.level[v] == current {
                    pending += 1;
                } else {
                    learnt.push(q);
                }
            }
            loop {
                index -= 1;
                if self.seen[var(self.trail[index])] {
                    break;
                }
            }
            let p = self.trail[index];
            self.seen[var(p)] = false;
            pending -= 1;
            resolved = Some(p);
            if pending == 0 {
                break;
            }
            clause = self.reason[var(p)];
            chain.push((index, self.clauses[clause as usize].id));
        }
        let uip = resolved.unwrap_or(0);
        learnt[0] = uip ^ 1;
        for &l in &learnt[1..] {
            self.seen[var(l)] = false;
        }
        let mut backjump = 0;
        if learnt.len() > 1 {
            let mut best = 1;
            for i in 2..learnt.len() {
                if self.level[var(learnt[i])] > self.level[var(learnt[best])] {
                    best = i;
                }
            }
            learnt.swap(1, best);
            backjump = self.level[var(learnt[1])];
        }
        chain.sort_unstable();
        let mut hints = units;
        hints.extend(chain.into_iter().map(|(_, id)| id));
        hints.push(conflict_id);
        (learnt, backjump, hints)
    }

    fn bump(&mut self, v: usize) {
        self.activity[v] += self.var_inc;
        if self.activity[v] > 1e100 {
            for a in &mut self.activity {
                *a *= 1e-100;
            }
            self.var_inc *= 1e-100;
        }
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
            self.reason[v] = NO_REASON;
        }
        self.trail.truncate(start);
        self.trail_lim.truncate(level as usize);
        self.qhead = start;
    }

    fn pick_branch(&self) -> Option<Lit> {
        let mut best: Option<usize> = None;
        for v in 0..self.value.len() {
            if self.value[v] == 0 && best.is_none_or(|b| self.activity[v] > self.activity[b]) {
                best = Some(v);
            }
        }
        best.map(|v| (v as u32) * 2 + u32::from(!self.phase[v]))
    }

    fn locked(&self, index: usize) -> bool {
        let first = self.clauses[index].lits[0];
        self.reason[var(first)] == index as u32 && self.lit_value(first) == 1
    }

    fn reduce(&mut self) {
        let mut candidates: Vec<usize> = (0..self.clauses.len())
            .filter(|&i| {
                let c = &self.clauses[i];
                c.learnt && !c.deleted && c.lits.len() > 2 && c.lbd > 2
            })
            .filter(|&i| !self.locked(i))
            .collect();
        candidates.sort_by_key(|&i| (std::cmp::Reverse(self.clauses[i].lbd), std::cmp::Reverse(self.clauses[i].id)));
        let doomed: Vec<usize> = candidates.into_iter().take(self.stats.learned as usize / 4).collect();
        if doomed.is_empty() {
            return;
        }
        let _ = write!(self.proof, "{} d", self.last_added);
        for &i in &doomed {
            self.clauses[i].deleted = true;
            let _ = write!(self.proof, " {}", self.clauses[i].id);
            self.stats.deleted += 1;
        }
        self.proof.push_str(" 0\n");
    }

    /// Run until an answer or until `max_conflicts` conflicts.
    pub fn solve(&mut self, max_conflicts: u64) -> Answer {
        let mut restart_index = 1u64;
        let mut until_restart = 64 * luby(restart_index);
        let mut next_reduce = 2000u64;
        loop {
            if let Some(conflict) = self.propagate() {
                self.stats.conflicts += 1;
                if self.decision_level() == 0 {
                    let lits = self.clauses[conflict as usize].lits.clone();
                    let mut hints: Vec<u64> = lits.iter().map(|&l| self.unit_id[var(l)]).collect();
                    hints.push(self.clauses[conflict as usize].id);
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
                let index = self.clauses.len() as u32;
                let asserting = learnt[0];
                if learnt.len() > 1 {
                    self.watches[learnt[0] as usize].push(index);
                    self.watches[learnt[1] as usize].push(index);
                }
                self.clauses.push(Clause { lits: learnt, id, learnt: true, lbd: levels.len() as u32, deleted: false });
                self.enqueue(asserting, index);
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
                    next_reduce += 2000 + 300 * self.stats.restarts;
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
