//! The independent check of a listing of finite models up to isomorphism
//! (or up to isomorphism and anti-isomorphism). Shares no code with the
//! enumeration: laws are compiled by this crate's own parser, every listed
//! table is re-evaluated on every tuple, and completeness rests on two
//! things computed here from scratch:
//!
//! - each listed table's own canonical form (the greatest column-major code
//!   over every relabelling, Heap's order) and its stabilizer, so that no
//!   two listed tables are in one class and each class's number of labelled
//!   tables is `|G| / |stabilizer|` (the orbit-stabilizer theorem);
//! - the number of labelled models (every table on `{0..n-1}` satisfying the
//!   laws), counted by a search of this crate's own: cells in row-major
//!   order, each ground instance of an equation watched on the first cell it
//!   cannot yet evaluate.
//!
//! Disjoint classes of models whose sizes add up to the number of labelled
//! models leave no model outside them: the listing is complete.

use std::collections::HashMap;

use crate::{Property, Token};

/// Largest order whose listings are checked (canonical forms try every permutation).
pub const MAX_ORDER: usize = 6;

/// Which relabellings make two tables the same model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classes {
    Isomorphism,
    /// Isomorphism, or isomorphism to the opposite magma (`a*b` read as `b*a`).
    IsomorphismOrAnti,
}

/// What a listing came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// Every class once: what was established, and the work the recount spent.
    Complete(Vec<String>, u64),
    /// A flaw, named.
    Flawed(String),
    /// The labelled recount needs more than `max_work`; nothing about completeness was decided.
    TooLarge(String),
}

/// Judge `tables` (row-major digit strings) as every model of `hypotheses`
/// of order `n`, once per class; the recount may spend `max_work` units.
pub fn judge(n: usize, hypotheses: &[String], classes: Classes, tables: &[String], max_work: u64) -> Judgement {
    match judge_inner(n, hypotheses, classes, tables, max_work) {
        Ok(judgement) => judgement,
        Err(flaw) => Judgement::Flawed(flaw),
    }
}

fn judge_inner(
    n: usize,
    hypotheses: &[String],
    classes: Classes,
    tables: &[String],
    max_work: u64,
) -> Result<Judgement, String> {
    if n == 0 || n > MAX_ORDER {
        return Err(format!("order {n} is outside 1..={MAX_ORDER}"));
    }
    let laws = hypotheses
        .iter()
        .enumerate()
        .map(|(i, text)| Property::parse(text).map_err(|e| format!("hypotheses.{i} ({text}): {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let decoded = tables.iter().enumerate().map(|(i, t)| decode(n, t, i)).collect::<Result<Vec<_>, _>>()?;
    // What re-checking and canonicalizing the listed tables costs comes out
    // of the same budget as the recount, before either runs.
    let sides: u64 = if classes == Classes::IsomorphismOrAnti { 2 } else { 1 };
    let per_table = laws.iter().fold(0u64, |sum, law| sum.saturating_add(law.evaluation_cost(n).saturating_mul(sides)));
    let factorial: u64 = (1..=n as u64).product();
    let per_table = per_table.saturating_add(factorial * sides * (n * n) as u64);
    let upfront = per_table.saturating_mul(decoded.len() as u64);
    if upfront > max_work {
        return Ok(Judgement::TooLarge(format!(
            "re-checking and canonicalizing {} tables needs {upfront} work units, more than this checker's budget \
             of {max_work}; nothing was decided",
            decoded.len()
        )));
    }
    for (i, table) in decoded.iter().enumerate() {
        let op = |a: usize, b: usize| usize::from(table[a * n + b]);
        let opposite = |a: usize, b: usize| usize::from(table[b * n + a]);
        for (law, text) in laws.iter().zip(hypotheses) {
            if let Some(failure) = law.first_failure(n, &op) {
                return Err(format!("models.{i} does not satisfy {text}: {failure}"));
            }
            if classes == Classes::IsomorphismOrAnti
                && let Some(failure) = law.first_failure(n, &opposite)
            {
                return Err(format!(
                    "the opposite of models.{i} does not satisfy {text} ({failure}), so classes up to \
                     anti-isomorphism are not classes of models"
                ));
            }
        }
    }
    let (labelled, work) = match labelled_models(n, &laws, max_work - upfront) {
        Ok(counted) => counted,
        Err(spent) => {
            return Ok(Judgement::TooLarge(format!(
                "recounting the labelled models of order {n} needs more than this checker's budget ({spent} work \
                 units left of {max_work}, at most {MAX_INSTANCES} ground instances); the listing's completeness \
                 was not decided"
            )));
        }
    };
    let work = work + upfront;
    let permutations = heap_permutations(n);
    let group = permutations.len() as u128 * if classes == Classes::IsomorphismOrAnti { 2 } else { 1 };
    let mut forms: HashMap<u128, usize> = HashMap::with_capacity(decoded.len());
    let mut covered: u128 = 0;
    for (i, table) in decoded.iter().enumerate() {
        let (form, stabilizer) = canonical(n, table, &permutations, classes);
        if let Some(first) = forms.insert(form, i) {
            let how = match classes {
                Classes::Isomorphism => "isomorphic",
                Classes::IsomorphismOrAnti => "isomorphic or anti-isomorphic",
            };
            return Err(format!("models.{first} and models.{i} are {how}"));
        }
        covered += group / stabilizer;
    }
    if covered != labelled {
        return Err(format!(
            "the {} listed classes hold {covered} labelled tables, but {labelled} tables of order {n} satisfy the \
             laws: {}",
            decoded.len(),
            if covered < labelled { "some model is missing" } else { "the count is inconsistent" }
        ));
    }
    Ok(Judgement::Complete(
        vec![
            format!("{} tables of order {n} satisfy every hypothesis on every tuple", decoded.len()),
            "no two share a canonical form (recomputed here), so no two are in one class".into(),
            format!(
                "their classes hold {covered} labelled tables (orbit-stabilizer), and a recount finds exactly \
             {labelled} labelled models, so no model is outside them"
            ),
        ],
        work,
    ))
}

/// A row-major string of `n * n` digits, each below `n`.
fn decode(n: usize, text: &str, i: usize) -> Result<Vec<u8>, String> {
    if text.len() != n * n {
        return Err(format!("models.{i} has {} cells, not {}", text.len(), n * n));
    }
    text.bytes()
        .map(|c| match c {
            b'0'..=b'9' if usize::from(c - b'0') < n => Ok(c - b'0'),
            _ => Err(format!("models.{i} holds {:?}, not an element of 0..{n}", c as char)),
        })
        .collect()
}

/// Every permutation of `0..n`, by Heap's algorithm (the identity first).
fn heap_permutations(n: usize) -> Vec<Vec<u8>> {
    let mut current: Vec<u8> = (0..n as u8).collect();
    let mut out = vec![current.clone()];
    let mut counters = vec![0usize; n];
    let mut i = 1;
    while i < n {
        if counters[i] < i {
            let j = if i % 2 == 0 { 0 } else { counters[i] };
            current.swap(j, i);
            out.push(current.clone());
            counters[i] += 1;
            i = 1;
        } else {
            counters[i] = 0;
            i += 1;
        }
    }
    out
}

/// The greatest column-major code of the table's images, and how many group
/// elements fix the table (automorphisms, plus anti-automorphisms).
fn canonical(n: usize, table: &[u8], permutations: &[Vec<u8>], classes: Classes) -> (u128, u128) {
    let code = |cells: &[u8]| {
        (0..n)
            .flat_map(|b| (0..n).map(move |a| (a, b)))
            .fold(0u128, |acc, (a, b)| acc * n as u128 + u128::from(cells[a * n + b]))
    };
    let own = code(table);
    let mut image = vec![0u8; n * n];
    let (mut best, mut fixing) = (0u128, 0u128);
    let sides: &[bool] = if classes == Classes::IsomorphismOrAnti { &[false, true] } else { &[false] };
    for &opposite in sides {
        for p in permutations {
            for a in 0..n {
                for b in 0..n {
                    let value = if opposite { table[b * n + a] } else { table[a * n + b] };
                    image[usize::from(p[a]) * n + usize::from(p[b])] = p[usize::from(value)];
                }
            }
            let candidate = code(&image);
            best = best.max(candidate);
            fixing += u128::from(candidate == own);
        }
    }
    (best, fixing)
}

/// The number of tables on `0..n` satisfying every law and the work units
/// spent counting them, or `max_work` when it ran out.
pub fn labelled_models(n: usize, laws: &[Property], max_work: u64) -> Result<(u128, u64), u64> {
    let mut recount = Recount {
        n,
        cells: vec![EMPTY; n * n],
        programs: Vec::new(),
        instances: Vec::new(),
        watch: vec![Vec::new(); n * n],
        watched: Vec::new(),
        assigned: Vec::new(),
        queue: Vec::new(),
        latin: laws.iter().any(|l| matches!(l, Property::Latin)),
        identity: laws.iter().any(|l| matches!(l, Property::Identity)),
        work: 0,
        max_work,
        count: 0,
    };
    for law in laws {
        if let Property::Equation { names, lhs, rhs } = law {
            let k = names.len();
            let total = n.pow(k as u32);
            recount.spend(law.evaluation_cost(n))?;
            if recount.instances.len() + total > MAX_INSTANCES {
                return Err(recount.max_work);
            }
            let program = recount.programs.len();
            recount.programs.push((lhs.clone(), rhs.clone()));
            for mut code in 0..total {
                let mut values = [0u8; 6];
                for value in values.iter_mut().take(k) {
                    *value = (code % n) as u8;
                    code /= n;
                }
                recount.instances.push(Instance { program, values });
            }
        }
    }
    // Instances that read no cell hold or fail outright; the others wait on
    // the first cell they read, and those that force a cell force it now.
    let mut forced = Vec::new();
    for id in 0..recount.instances.len() {
        match recount.examine(id) {
            Examined::Holds => {}
            Examined::Fails => return Ok((0, recount.work)),
            Examined::Waits(cell) => recount.watch[cell].push(id as u32),
            Examined::Forces(cell, value) => {
                recount.watch[cell].push(id as u32);
                forced.push((cell, value));
            }
        }
    }
    let mut consistent = true;
    for (cell, value) in forced {
        consistent = consistent && recount.propagate(cell, value)?;
    }
    if consistent {
        recount.search(0)?;
    }
    Ok((recount.count, recount.work))
}

const EMPTY: u8 = u8::MAX;
/// Work units one branch of the recount is charged.
const BRANCH: u64 = 8;
/// Ground instances the recount holds at once (their watch entries are its
/// memory: 16 bytes each, 32 MiB in all); more is past its budget.
const MAX_INSTANCES: usize = 1 << 21;

struct Instance {
    program: usize,
    values: [u8; 6],
}

/// An instance of an equation on the partial table.
enum Examined {
    Holds,
    Fails,
    /// It reads this unassigned cell.
    Waits(usize),
    /// One side is known and the other lacks only its outermost product: that cell must hold the value.
    Forces(usize, u8),
}

struct Recount {
    n: usize,
    cells: Vec<u8>,
    programs: Vec<(Vec<Token>, Vec<Token>)>,
    instances: Vec<Instance>,
    /// The instances waiting on each unassigned cell.
    watch: Vec<Vec<u32>>,
    /// Cells whose watch list grew, to shrink again on backtracking.
    watched: Vec<usize>,
    /// Cells assigned, by choice or forced, in order.
    assigned: Vec<usize>,
    /// Forced assignments waiting (kept to reuse its allocation).
    queue: Vec<(usize, u8)>,
    latin: bool,
    identity: bool,
    work: u64,
    max_work: u64,
    count: u128,
}

impl Recount {
    fn spend(&mut self, units: u64) -> Result<(), u64> {
        self.work += units;
        if self.work > self.max_work { Err(self.max_work) } else { Ok(()) }
    }

    fn examine(&self, id: usize) -> Examined {
        let instance = &self.instances[id];
        let (lhs, rhs) = &self.programs[instance.program];
        let left = evaluate(lhs, &instance.values, &self.cells, self.n);
        let right = evaluate(rhs, &instance.values, &self.cells, self.n);
        match (left, right) {
            (Ok(l), Ok(r)) if l == r => Examined::Holds,
            (Ok(_), Ok(_)) => Examined::Fails,
            (Ok(value), Err((cell, true))) | (Err((cell, true)), Ok(value)) => Examined::Forces(cell, value),
            (Err((cell, _)), _) | (_, Err((cell, _))) => Examined::Waits(cell),
        }
    }

    /// Branch on the first unassigned cell (row-major) over every value;
    /// count the complete tables.
    fn search(&mut self, from: usize) -> Result<(), u64> {
        // Every cell before `from` is assigned.
        let Some(cell) = self.cells[from..].iter().position(|&c| c == EMPTY).map(|i| from + i) else {
            if !self.identity || self.identity_possible() {
                self.count += 1;
            }
            return Ok(());
        };
        for value in 0..self.n as u8 {
            // A branch (choosing, assigning, undoing) costs what several term symbols do.
            self.spend(BRANCH)?;
            let mark = (self.assigned.len(), self.watched.len());
            if self.propagate(cell, value)? {
                self.search(cell + 1)?;
            }
            while self.assigned.len() > mark.0 {
                let undone = self.assigned.pop().expect("above the mark");
                self.cells[undone] = EMPTY;
            }
            while self.watched.len() > mark.1 {
                let later = self.watched.pop().expect("above the mark");
                self.watch[later].pop();
            }
        }
        Ok(())
    }

    /// Assign the cell and everything it forces; false on a contradiction
    /// (the caller undoes the assignments either way).
    fn propagate(&mut self, cell: usize, value: u8) -> Result<bool, u64> {
        let mut queue = std::mem::take(&mut self.queue);
        queue.clear();
        queue.push((cell, value));
        let outcome = self.drain(&mut queue);
        self.queue = queue;
        outcome
    }

    fn drain(&mut self, queue: &mut Vec<(usize, u8)>) -> Result<bool, u64> {
        let n = self.n;
        while let Some((cell, value)) = queue.pop() {
            if self.cells[cell] != EMPTY {
                if self.cells[cell] != value {
                    return Ok(false);
                }
                continue;
            }
            let (row, column) = (cell / n, cell % n);
            let checks = if self.latin { 2 * n } else { 0 } + if self.identity { 2 * n * n } else { 0 };
            self.spend(checks as u64)?;
            if self.latin
                && ((0..n).any(|b| self.cells[row * n + b] == value)
                    || (0..n).any(|a| self.cells[a * n + column] == value))
            {
                return Ok(false);
            }
            self.cells[cell] = value;
            self.assigned.push(cell);
            if self.identity && !self.identity_possible() {
                return Ok(false);
            }
            let waiting = std::mem::take(&mut self.watch[cell]);
            let mut outcome = Ok(true);
            for &id in &waiting {
                let cost = {
                    let (lhs, rhs) = &self.programs[self.instances[id as usize].program];
                    (lhs.len() + rhs.len()) as u64
                };
                if let Err(spent) = self.spend(cost) {
                    outcome = Err(spent);
                    break;
                }
                match self.examine(id as usize) {
                    Examined::Holds => {}
                    Examined::Fails => {
                        outcome = Ok(false);
                        break;
                    }
                    Examined::Waits(later) => {
                        self.watch[later].push(id);
                        self.watched.push(later);
                    }
                    Examined::Forces(later, forced) => {
                        self.watch[later].push(id);
                        self.watched.push(later);
                        queue.push((later, forced));
                    }
                }
            }
            self.watch[cell] = waiting;
            if outcome != Ok(true) {
                return outcome;
            }
        }
        Ok(true)
    }

    /// Whether some element can still be a two-sided identity.
    fn identity_possible(&self) -> bool {
        let n = self.n;
        let fits = |cell: usize, x: usize| self.cells[cell] == EMPTY || usize::from(self.cells[cell]) == x;
        (0..n).any(|e| (0..n).all(|x| fits(e * n + x, x) && fits(x * n + e, x)))
    }
}

/// A postfix program's value on the partial table, or the first unassigned
/// cell it reads and whether that is its outermost product.
fn evaluate(program: &[Token], values: &[u8; 6], cells: &[u8], n: usize) -> Result<u8, (usize, bool)> {
    // Terms of up to 32 symbols (all the named laws and most equations) evaluate without allocating.
    let mut inline = [0u8; 32];
    let mut spilled = Vec::new();
    let stack: &mut [u8] = if program.len() <= inline.len() {
        &mut inline
    } else {
        spilled.resize(program.len(), 0);
        &mut spilled
    };
    let mut top = 0;
    for (i, token) in program.iter().enumerate() {
        match *token {
            Token::Var(v) => {
                stack[top] = values[v];
                top += 1;
            }
            Token::Apply => {
                // A well-formed postfix program has two operands here.
                let (a, b) = (stack[top - 2], stack[top - 1]);
                let cell = usize::from(a) * n + usize::from(b);
                match cells[cell] {
                    EMPTY => return Err((cell, i + 1 == program.len())),
                    value => {
                        stack[top - 2] = value;
                        top -= 1;
                    }
                }
            }
        }
    }
    Ok(stack[0])
}
