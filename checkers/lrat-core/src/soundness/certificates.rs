//! The harness's certificates: unit propagation of its own, valid refutations built by it, and the nearby, mutated, lazy-RAT and random ones made from them.

use super::*;

// ---- unit propagation of the harness's own, for building certificates ----

/// Literal values by variable.
#[derive(Clone, Default)]
pub(super) struct Values(BTreeMap<u32, bool>);

impl Values {
    pub(super) fn of(&self, lit: i32) -> Option<bool> {
        self.0.get(&lit.unsigned_abs()).map(|&v| v == (lit > 0))
    }
    pub(super) fn make_true(&mut self, lit: i32) {
        self.0.insert(lit.unsigned_abs(), lit > 0);
    }
}

/// Propagate over `clauses` in id order until a conflict or nothing more:
/// the hints used and whether they end in a conflict. A clause is unit
/// when exactly one of its literal occurrences is not false and it is unassigned.
pub(super) fn propagate(clauses: &BTreeMap<u64, Vec<i32>>, values: &mut Values) -> (Vec<i64>, bool) {
    let mut hints = Vec::new();
    loop {
        let mut progress = false;
        for (&id, c) in clauses {
            let open: Vec<i32> = c.iter().copied().filter(|&l| values.of(l) != Some(false)).collect();
            match open.as_slice() {
                [] => {
                    hints.push(id as i64);
                    return (hints, true);
                }
                [lit] if values.of(*lit).is_none() => {
                    values.make_true(*lit);
                    hints.push(id as i64);
                    progress = true;
                }
                _ => {}
            }
        }
        if !progress {
            return (hints, false);
        }
    }
}

// ---- valid refutations ----

pub(super) struct Builder {
    clauses: BTreeMap<u64, Vec<i32>>,
    formula_clauses: u64,
    next: u64,
    proof: Proof,
    /// Delete a tree lemma once its parent has used it.
    delete_used: bool,
}

impl Builder {
    pub(super) fn new(formula: &Formula) -> Builder {
        let clauses: BTreeMap<u64, Vec<i32>> =
            formula.clauses.iter().enumerate().map(|(i, c)| (i as u64 + 1, c.clone())).collect();
        let m = clauses.len() as u64;
        Builder { clauses, formula_clauses: m, next: m + 1, proof: Proof::default(), delete_used: false }
    }

    pub(super) fn add(&mut self, literals: Vec<i32>, hints: Vec<i64>) -> u64 {
        let id = self.next;
        self.next += 1;
        self.clauses.insert(id, literals.clone());
        self.proof.0.push(Step::Add { id, literals, hints });
        id
    }

    /// `lemma` as a RAT (or RUP) step on its first literal, if unit
    /// propagation shows it is one: the hints, or `None`.
    pub(super) fn rat_hints(&self, lemma: &[i32], prefix_steps: usize) -> Option<Vec<i64>> {
        let mut values = Values::default();
        for &l in lemma {
            if values.of(l) == Some(true) {
                return None; // tautology: not generated
            }
            values.make_true(-l);
        }
        let mut prefix_values = values.clone();
        let (prefix, conflict) = propagate(&self.clauses, &mut prefix_values);
        if conflict {
            return Some(prefix);
        }
        // Use only some of the prefix units, then start the groups from there.
        let kept = prefix_steps.min(prefix.len());
        let mut hints: Vec<i64> = Vec::new();
        for &h in &prefix[..kept] {
            let c = &self.clauses[&(h as u64)];
            let open: Vec<i32> = c.iter().copied().filter(|&l| values.of(l) != Some(false)).collect();
            values.make_true(open[0]);
            hints.push(h);
        }
        let pivot = *lemma.first()?;
        for (&id, d) in &self.clauses {
            if !d.contains(&-pivot) {
                continue;
            }
            hints.push(-(id as i64));
            let mut group = values.clone();
            let mut settled = false;
            for &l in d.iter().filter(|&&l| l != -pivot) {
                match group.of(l) {
                    Some(true) => {
                        settled = true;
                        break;
                    }
                    Some(false) => {}
                    None => group.make_true(-l),
                }
            }
            if settled {
                continue;
            }
            let (more, conflict) = propagate(&self.clauses, &mut group);
            if !conflict {
                return None;
            }
            hints.extend(more);
        }
        Some(hints)
    }

    /// RAT lemmas first: definitions of extension variables, blocked and RAT clauses, some deleted.
    pub(super) fn preamble(&mut self, rng: &mut Rng, variables: u32) {
        let mut extension = variables;
        for _ in 0..rng.below(6) {
            match rng.below(3) {
                0 => {
                    // x <-> (a & b), x new.
                    extension += 1;
                    let x = extension as i32;
                    let ab = clause(rng, variables, 2);
                    let (a, b) = (ab[0], ab[1]);
                    let first = self.add(vec![-x, a], Vec::new());
                    let second = self.add(vec![-x, b], Vec::new());
                    self.add(vec![x, -a, -b], vec![-(first as i64), -(second as i64)]);
                }
                _ => {
                    let width = rng.range(1, 3) as usize;
                    let lemma = clause(rng, variables, width);
                    let prefix = rng.below(4) as usize;
                    if let Some(hints) = self.rat_hints(&lemma, prefix) {
                        self.add(lemma, hints);
                    }
                }
            }
            if rng.chance(1, 4) {
                let lemmas: Vec<u64> = self.clauses.keys().copied().filter(|&id| id > self.formula_clauses).collect();
                if !lemmas.is_empty() {
                    let id = *rng.pick(&lemmas);
                    self.clauses.remove(&id);
                    self.proof.0.push(Step::Delete(vec![id]));
                }
            }
        }
    }

    /// A clause id falsified by `path` (every literal's negation on it), if any.
    pub(super) fn falsified(&self, path: &[i32]) -> Option<u64> {
        self.clauses.iter().find(|(_, c)| c.iter().all(|l| path.contains(&-l))).map(|(&id, _)| id)
    }

    /// The decision tree below `path`: the id of a clause within the negation of `path`.
    pub(super) fn tree(&mut self, rng: &mut Rng, path: &mut Vec<i32>, variables: u32) -> u64 {
        if let Some(id) = self.falsified(path) {
            return id;
        }
        let free: Vec<u32> = (1..=variables).filter(|v| !path.iter().any(|l| l.unsigned_abs() == *v)).collect();
        let x = *rng.pick(&free) as i32;
        let x = if rng.chance(1, 2) { x } else { -x };
        path.push(x);
        let first = self.tree(rng, path, variables);
        path.pop();
        if !self.clauses[&first].contains(&-x) {
            return first;
        }
        path.push(-x);
        let second = self.tree(rng, path, variables);
        path.pop();
        if !self.clauses[&second].contains(&x) {
            return second;
        }
        let lemma: Vec<i32> = path.iter().map(|l| -l).collect();
        let id = self.add(lemma, vec![first as i64, second as i64]);
        if self.delete_used {
            let used: Vec<u64> = [first, second].into_iter().filter(|&c| c > self.formula_clauses).collect();
            if !used.is_empty() {
                used.iter().for_each(|c| {
                    self.clauses.remove(c);
                });
                self.proof.0.push(Step::Delete(used));
            }
        }
        id
    }
}

/// A valid refutation of the unsatisfiable `formula`.
pub(super) fn valid_refutation(rng: &mut Rng, formula: &Formula) -> Proof {
    let mut builder = Builder::new(formula);
    builder.delete_used = rng.chance(1, 2);
    builder.preamble(rng, formula.variables);
    let root = builder.tree(rng, &mut Vec::new(), formula.variables);
    if !builder.clauses[&root].is_empty() {
        unreachable!("the tree's root is the empty clause");
    }
    builder.proof
}

// ---- false and mutated certificates ----

/// `formula` weakened until a random assignment is a model: each clause it
/// falsifies gains a literal it makes true — the negation of a RAT pivot of
/// `proof` where it can, which makes the clause a RAT candidate without a
/// hint group. The clause ids stay as they were.
pub(super) fn weakened(rng: &mut Rng, formula: &Formula, proof: &Proof) -> Formula {
    let pivots: Vec<i32> = proof
        .0
        .iter()
        .filter_map(|s| match s {
            Step::Add { literals, hints, .. } if hints.iter().any(|h| *h < 0) => literals.first().copied(),
            _ => None,
        })
        .filter(|p| p.unsigned_abs() <= formula.variables)
        .collect();
    let model: Vec<i32> = (1..=formula.variables as i64).map(|v| rng.signed(v) as i32).collect();
    let mut weaker = formula.clone();
    for clause in &mut weaker.clauses {
        if clause.iter().any(|l| model.contains(l)) {
            continue;
        }
        let true_pivots: Vec<i32> = pivots.iter().map(|p| -p).filter(|l| model.contains(l)).collect();
        let lit = if !true_pivots.is_empty() && rng.chance(2, 3) { *rng.pick(&true_pivots) } else { *rng.pick(&model) };
        clause.retain(|l| l.abs() != lit.abs());
        clause.push(lit);
    }
    weaker
}

pub(super) fn mutate(rng: &mut Rng, proof: &mut Proof, top: u64) {
    let steps = &mut proof.0;
    if steps.is_empty() {
        return;
    }
    let at = rng.below(steps.len() as u64) as usize;
    let any_id = |rng: &mut Rng| rng.range(1, top + 2) as i64;
    match rng.below(12) {
        0 => {
            // A hint to another clause (maybe a negative one).
            if let Step::Add { hints, .. } = &mut steps[at]
                && !hints.is_empty()
            {
                let k = rng.below(hints.len() as u64) as usize;
                let id = any_id(rng);
                hints[k] = if hints[k] < 0 { -id } else { id };
            }
        }
        1 => {
            if let Step::Add { hints, .. } = &mut steps[at]
                && !hints.is_empty()
            {
                hints.remove(rng.below(hints.len() as u64) as usize);
            }
        }
        2 => {
            // A whole RAT group dropped.
            if let Step::Add { hints, .. } = &mut steps[at]
                && let Some(start) = hints.iter().rposition(|h| *h < 0)
            {
                let end = hints[start + 1..].iter().position(|h| *h < 0).map_or(hints.len(), |p| start + 1 + p);
                hints.drain(start..end);
            }
        }
        3 => {
            if let Step::Add { hints, .. } = &mut steps[at] {
                let k = rng.below(hints.len() as u64 + 1) as usize;
                let id = any_id(rng);
                let id = rng.signed(id);
                hints.insert(k, id);
            }
        }
        4 => {
            if let Step::Add { hints, .. } = &mut steps[at]
                && hints.len() >= 2
            {
                let (a, b) = (rng.below(hints.len() as u64) as usize, rng.below(hints.len() as u64) as usize);
                hints.swap(a, b);
            }
        }
        5 => {
            if let Step::Add { literals, .. } = &mut steps[at]
                && !literals.is_empty()
            {
                literals.remove(rng.below(literals.len() as u64) as usize);
            }
        }
        6 => {
            if let Step::Add { literals, .. } = &mut steps[at]
                && !literals.is_empty()
            {
                let k = rng.below(literals.len() as u64) as usize;
                literals[k] = -literals[k];
            }
        }
        7 => {
            // Another pivot.
            if let Step::Add { literals, .. } = &mut steps[at]
                && literals.len() >= 2
            {
                literals.rotate_left(1);
            }
        }
        8 => {
            // An id repeated or going down.
            let earlier = steps[..at].iter().rev().find_map(|s| match s {
                Step::Add { id, .. } => Some(*id),
                _ => None,
            });
            if let (Step::Add { id, .. }, Some(e)) = (&mut steps[at], earlier) {
                *id = if rng.chance(1, 2) { e } else { e.saturating_sub(1).max(1) };
            }
        }
        9 => {
            // Delete a clause a later step may use.
            let id = rng.range(1, top);
            steps.insert(at, Step::Delete(vec![id]));
        }
        10 => {
            steps.remove(at);
        }
        _ => {
            let copy = steps[at].clone();
            steps.insert(at, copy);
        }
    }
}

/// `(p)` and `(¬p)` with some groups each, then the empty clause from them.
pub(super) fn rat_pair(rng: &mut Rng, formula: &Formula) -> Proof {
    let m = formula.clauses.len() as u64;
    let p = rng.literal(formula.variables);
    let mut builder = Builder::new(formula);
    let mut ids = Vec::new();
    for pivot in [p, -p] {
        let honest = builder.rat_hints(&[pivot], rng.below(3) as usize);
        let mut hints: Vec<i64> = match honest {
            Some(h) if rng.chance(1, 2) => h,
            _ => {
                let mut made = Vec::new();
                for (&id, c) in &builder.clauses {
                    if (c.contains(&-pivot) && rng.chance(1, 2)) || rng.chance(1, 8) {
                        made.push(-(id as i64));
                        for _ in 0..rng.below(3) {
                            made.push(rng.range(1, m + 3) as i64);
                        }
                    }
                }
                made
            }
        };
        match rng.below(6) {
            0 => hints.push(-((m + 100) as i64)),
            1 if hints.len() >= 2 => hints.reverse(),
            2 => {
                let g = hints.iter().copied().find(|h| *h < 0);
                if let Some(g) = g {
                    hints.push(g);
                }
            }
            _ => {}
        }
        if rng.chance(1, 4) {
            let victim = rng.range(1, m);
            builder.clauses.remove(&victim);
            builder.proof.0.push(Step::Delete(vec![victim]));
        }
        ids.push(builder.add(vec![pivot], hints) as i64);
    }
    builder.add(Vec::new(), ids);
    builder.proof
}

/// The published bogus refutation: for m clauses, `m+1 1 0 -(m+100) 0`,
/// `m+2 -1 0 -(m+100) 0`, `m+3 0 m+1 m+2 0`.
pub(super) fn published_bogus(m: u64, variable: i32) -> Proof {
    let group = -((m + 100) as i64);
    Proof(vec![
        Step::Add { id: m + 1, literals: vec![variable], hints: vec![group] },
        Step::Add { id: m + 2, literals: vec![-variable], hints: vec![group] },
        Step::Add { id: m + 3, literals: Vec::new(), hints: vec![(m + 1) as i64, (m + 2) as i64] },
    ])
}

pub(super) fn random_text(rng: &mut Rng, m: u64) -> String {
    let mut text = String::new();
    let mut id = m;
    for _ in 0..rng.range(1, 8) {
        id += rng.range(0, 2);
        let _ = write!(text, "{id} ");
        for _ in 0..rng.below(3) {
            let _ = write!(text, "{} ", rng.literal(4));
        }
        text.push_str("0 ");
        for _ in 0..rng.below(5) {
            let hint = rng.range(1, id + 1) as i64;
            let _ = write!(text, "{} ", rng.signed(hint));
        }
        text.push_str("0\n");
    }
    text
}
