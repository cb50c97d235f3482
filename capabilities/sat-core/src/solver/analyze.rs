//! Conflict analysis: the first-UIP clause, minimized recursively, with the
//! hints of its derivation in trail order.

use super::*;

impl Solver {
    /// First-UIP analysis: the learned clause (asserting literal first), the
    /// backjump level, and the LRAT hints of its derivation.
    pub(super) fn analyze(&mut self, conflict: u32) -> (Vec<Lit>, u32, Vec<u64>) {
        let current = self.decision_level();
        let mut learnt: Vec<Lit> = vec![0];
        let mut units: Vec<u64> = Vec::new();
        let mut unit_seen: Vec<usize> = Vec::new();
        let mut chain: Vec<(usize, u64)> = Vec::new();
        let conflict_id = self.arena.id(conflict);
        let mut clause = conflict;
        let mut pending = 0;
        let mut index = self.trail.len();
        let mut resolved: Option<Lit> = None;
        loop {
            for k in 0..self.arena.lits(clause).len() {
                let q = self.arena.lits(clause)[k];
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
            chain.push((index, self.arena.id(clause)));
        }
        let uip = resolved.unwrap_or(0);
        learnt[0] = uip ^ 1;
        // Minimization: a literal implied by the clause's other literals (its
        // reason's literals each in the clause, fixed at level 0, or so
        // implied in turn) is dropped; the reasons that imply it join the hints.
        let mut keep = vec![true];
        for &l in &learnt[1..] {
            let v = var(l);
            keep.push(self.reason[v] == NO_REASON || !self.implied(v, &mut chain, &mut units, &mut unit_seen));
        }
        for &l in &learnt[1..] {
            self.seen[var(l)] = false;
        }
        let mut kept = keep.iter();
        learnt.retain(|_| kept.next().copied().unwrap_or(true));
        for &v in &self.marked {
            self.mark[v] = UNKNOWN;
        }
        self.marked.clear();
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

    /// Whether variable `v` (of a level below the conflict's, with a reason)
    /// follows from the learned clause's literals (`seen`) and level-0 units
    /// by reasons; each reason so used is added to `chain` once, with its
    /// literal's trail place, each unit to `units`. Depth first, on a stack
    /// of its own (implication chains can be as long as the trail).
    pub(super) fn implied(
        &mut self,
        v: usize,
        chain: &mut Vec<(usize, u64)>,
        units: &mut Vec<u64>,
        unit_seen: &mut Vec<usize>,
    ) -> bool {
        match self.mark[v] {
            REMOVABLE => return true,
            POISON => return false,
            _ => {}
        }
        let mut stack: Vec<(usize, usize)> = vec![(v, 0)];
        while let Some(&(w, k)) = stack.last() {
            let reason = self.reason[w];
            let lits = self.arena.lits(reason);
            if k == lits.len() {
                stack.pop();
                self.mark[w] = REMOVABLE;
                self.marked.push(w);
                chain.push((self.trail_place[w] as usize, self.arena.id(reason)));
                continue;
            }
            let u = var(lits[k]);
            if let Some(top) = stack.last_mut() {
                top.1 += 1;
            }
            if u == w || self.seen[u] || self.mark[u] == REMOVABLE {
                continue;
            }
            if self.level[u] == 0 {
                if !unit_seen.contains(&u) {
                    unit_seen.push(u);
                    units.push(self.unit_id[u]);
                }
                continue;
            }
            if self.mark[u] == POISON || self.reason[u] == NO_REASON {
                for (x, _) in stack.drain(..) {
                    self.mark[x] = POISON;
                    self.marked.push(x);
                }
                return false;
            }
            stack.push((u, 0));
        }
        true
    }
}
