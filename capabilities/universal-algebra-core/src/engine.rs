//! One search at one order: the Cayley table's cells are assigned one at a
//! time, each assignment propagated through the ground instances of the laws,
//! in the style of Mace4.
//!
//! - **Ground instances, watched.** Every law is instantiated over every
//!   assignment of its variables. Each side of an instance is evaluated up to
//!   its first unassigned cell and waits on that cell's watch list; when the
//!   cell is assigned the instance is evaluated again. A side that evaluates
//!   completely waits on the last-assigned cell of its evaluation. Moves
//!   between watch lists are trailed and undone with the assignments, so after
//!   backtracking every side waits exactly where it waited at that level (a
//!   side left waiting on a cell off its current path would miss the
//!   reassignment of that path). When one side is known and the other
//!   lacks only its outermost cell, that cell is forced (for a hypothesis) or
//!   loses the value (for the target's negated instance).
//! - **Domains.** Each cell keeps the set of values it may still take; where
//!   the rows (or columns) must be permutations — a quasigroup hypothesis, or
//!   a law `y = t` whose path from `t`'s root to `y` passes a product with a
//!   variable operand (see [`Lines::implied`]) — an assigned
//!   value is removed from the rest of its row (or column), and a cell left
//!   with one value is assigned.
//! - **Most constrained cell first**, among the cells whose row and column are
//!   elements already in use or the next unused one (any unassigned cell once
//!   those are all assigned): a cell with at most one value left, else the
//!   fewest values for the most instance sides waiting on it (the ratio of
//!   its values to its watch list's length, stale entries included), ties
//!   going to the longer watch list.
//! - **The least number heuristic.** The elements no decision has mentioned
//!   yet are interchangeable, so a cell is tried only with the values in use
//!   and the least unused one: isomorphic copies that differ in which unused
//!   element comes first are never visited.
//!
//! A list may hold stale entries (a side that moved away and was moved back by
//! undoing); `watch_of` says where each side really waits, and a wake drops
//! the others.

use crate::laws::{Law, Term};

mod instances;
use instances::*;
pub(crate) use instances::{Equation, Hypotheses, Lines};

const UNSET: u8 = u8::MAX;
const NONE: u32 = u32::MAX;
/// Ground instances set up between two looks at the work budget.
const SETUP_CHECK: u32 = 1024;
/// Operands a term's postfix evaluation holds at most (see `run_code`).
const STACK: usize = 64;

/// How one side of an instance evaluates on the current cells.
#[derive(Debug, Clone, Copy)]
enum Side {
    /// Its value, and the cell assigned last among those it read (none for a variable).
    Known(u8, Option<u32>),
    /// The first unassigned cell it needs, and whether that cell is the outermost.
    Blocked(u32, bool),
    /// The outermost operation has one operand known (`other`) and the other
    /// the value of an unassigned cell, on the right (`true`) or the left.
    Inner(u32, u8, bool),
}

impl Side {
    /// The cell a watch on this side waits on.
    fn watch(self) -> Option<u32> {
        match self {
            Side::Blocked(cell, _) | Side::Inner(cell, ..) | Side::Known(_, Some(cell)) => Some(cell),
            Side::Known(_, None) => None,
        }
    }
}

/// Whether a complete table of order `n` is accepted, and the work judging it cost.
pub(crate) type Judge<'a> = dyn Fn(usize, &[u8]) -> (bool, u64) + 'a;

/// Why a search stopped before finishing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Nodes,
    Work,
}

#[derive(Debug)]
pub(crate) enum Step {
    Found(Vec<u8>),
    Exhausted,
    Stopped(Limit),
}

/// Counters shared by every search of one request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meter {
    pub nodes: u64,
    pub work: u64,
    pub max_nodes: u64,
    pub max_work: u64,
}

pub(crate) struct Engine<'a> {
    n: usize,
    equations: &'a [Equation],
    /// First instance id of each equation, then the total.
    offsets: Vec<u32>,
    lines: Lines,
    /// Whether a complete table is accepted (for targets judged on complete
    /// tables, or for keeping every model), and the work that judging cost.
    accept: &'a Judge<'a>,
    value: Vec<u8>,
    domain: Vec<u32>,
    position: Vec<u32>,
    watches: Vec<Vec<u32>>,
    /// Where each side (`instance << 1 | side`) waits, or `NONE`.
    watch_of: Vec<u32>,
    /// (side, the cell it left) for each move, undone on backtracking.
    watch_trail: Vec<(u32, u32)>,
    /// The wake in which each side was last evaluated (a list may hold a side twice).
    stamp: Vec<u32>,
    wakes: u32,
    spare: Vec<u32>,
    trail: Vec<u32>,
    domain_trail: Vec<(u32, u32)>,
    head: usize,
    radix: Radix,
    /// The largest element a decision (or the fixed start) has mentioned, or -1.
    largest: i32,
    pub(crate) meter: Meter,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(
        n: usize,
        equations: &'a [Equation],
        lines: Lines,
        accept: &'a Judge<'a>,
        meter: Meter,
    ) -> Engine<'a> {
        let mut offsets = Vec::with_capacity(equations.len() + 1);
        let mut total = 0u32;
        for equation in equations {
            offsets.push(total);
            total += equation.instances(n) as u32;
        }
        offsets.push(total);
        let cells = n * n;
        Engine {
            n,
            equations,
            offsets,
            lines,
            accept,
            value: vec![UNSET; cells],
            domain: vec![(1u32 << n) - 1; cells],
            position: vec![0; cells],
            watches: vec![Vec::new(); cells],
            watch_of: vec![NONE; 2 * total as usize],
            watch_trail: Vec::new(),
            stamp: vec![0; 2 * total as usize],
            wakes: 0,
            spare: Vec::new(),
            trail: Vec::with_capacity(cells),
            domain_trail: Vec::new(),
            head: 0,
            radix: Radix::new(n as u32),
            largest: -1,
            meter,
        }
    }

    /// Search for a complete table with `preset` cells given and elements
    /// `0..in_use` already distinguished (they are not interchangeable).
    pub(crate) fn run(&mut self, preset: &[(usize, u8)], in_use: usize) -> Step {
        for &(cell, v) in preset {
            if !self.set(cell as u32, v) {
                return Step::Exhausted;
            }
        }
        let total = *self.offsets.last().expect("offsets end with the total");
        // Setting up: the watch tables (about 16 bytes an instance) and the cells.
        // The budget is checked before and as the instances are evaluated, so an
        // order with millions of them cannot spend far past it.
        let setup = 4 * u64::from(total) + (self.n * self.n) as u64;
        if self.meter.work + setup > self.meter.max_work {
            return Step::Stopped(Limit::Work);
        }
        self.meter.work += setup;
        for instance in 0..total {
            if instance % SETUP_CHECK == 0 && self.meter.work > self.meter.max_work {
                return Step::Stopped(Limit::Work);
            }
            let (equation, assignment) = self.locate(instance);
            let sides = [self.evaluate(equation, 0, &assignment), self.evaluate(equation, 1, &assignment)];
            for (s, side) in sides.iter().enumerate() {
                if let Some(cell) = side.watch() {
                    let entry = instance << 1 | s as u32;
                    self.watch_of[entry as usize] = cell;
                    self.watches[cell as usize].push(entry);
                }
            }
            if !self.consequence(equation, sides) {
                return Step::Exhausted;
            }
        }
        if self.meter.work > self.meter.max_work {
            return Step::Stopped(Limit::Work);
        }
        match self.propagate() {
            Flow::Conflict => return Step::Exhausted,
            Flow::Stopped(limit) => return Step::Stopped(limit),
            Flow::Quiet => {}
        }
        self.largest = in_use as i32 - 1;
        self.decide()
    }

    fn decide(&mut self) -> Step {
        let Some(choice) = self.select() else {
            debug_assert!(self.value.iter().all(|&v| v != UNSET));
            let (accepted, cost) = (self.accept)(self.n, &self.value);
            self.meter.work += cost;
            return if accepted { Step::Found(self.value.clone()) } else { Step::Exhausted };
        };
        let Some((cell, values, largest_here)) = choice else { return Step::Exhausted };
        let mut values = values;
        while values != 0 {
            let v = values.trailing_zeros() as u8;
            values &= values - 1;
            self.meter.nodes += 1;
            if self.meter.nodes > self.meter.max_nodes {
                return Step::Stopped(Limit::Nodes);
            }
            let mark = (self.trail.len(), self.domain_trail.len(), self.watch_trail.len());
            let largest = self.largest;
            self.largest = largest_here.max(i32::from(v));
            let step = if self.set(cell, v) {
                match self.propagate() {
                    Flow::Quiet => self.decide(),
                    Flow::Conflict => Step::Exhausted,
                    Flow::Stopped(limit) => Step::Stopped(limit),
                }
            } else {
                Step::Exhausted
            };
            if !matches!(step, Step::Exhausted) {
                return step;
            }
            self.undo(mark);
            self.largest = largest;
        }
        Step::Exhausted
    }

    /// The next cell and the values to try there, `Some(None)` at a dead end,
    /// `None` when every cell is assigned.
    #[allow(clippy::type_complexity)]
    fn select(&mut self) -> Option<Option<(u32, u32, i32)>> {
        let n = self.n;
        let bound = ((self.largest + 1) as usize).min(n - 1);
        let mut best: Option<((u64, u64, usize, usize, usize), u32, u32, i32)> = None;
        for pass in 0..2 {
            let square = if pass == 0 { bound + 1 } else { n };
            for a in 0..square {
                for b in 0..square {
                    let cell = a * n + b;
                    if self.value[cell] != UNSET {
                        continue;
                    }
                    let largest_here = self.largest.max(a as i32).max(b as i32);
                    let limit = ((largest_here + 1) as usize).min(n - 1);
                    let values = self.domain[cell] & ((1u32 << (limit + 1)) - 1);
                    // Fewest values for the most instance sides waiting (stale
                    // entries included) first; a cell with at most one value
                    // before any other.
                    let count = values.count_ones();
                    let waiting = self.watches[cell].len() as u64;
                    let weight =
                        if count <= 1 { u64::from(count) } else { 2 + (u64::from(count) << 12) / (waiting + 1) };
                    let key = (weight, u64::MAX - waiting, a.max(b), a, b);
                    if best.as_ref().is_none_or(|(k, ..)| key < *k) {
                        best = Some((key, cell as u32, values, largest_here));
                    }
                }
            }
            self.meter.work += (square * square) as u64;
            if let Some((key, cell, values, largest_here)) = best {
                return Some((key.0 > 0).then_some((cell, values, largest_here)));
            }
        }
        None
    }

    fn undo(&mut self, (trail, domains, watches): (usize, usize, usize)) {
        self.meter.work += (self.watch_trail.len() - watches) as u64;
        for (entry, from) in self.watch_trail.drain(watches..).rev() {
            // The copy left behind is stale; drop it when it is still the last one there.
            let to = self.watch_of[entry as usize] as usize;
            if self.watches[to].last() == Some(&entry) {
                self.watches[to].pop();
            }
            self.watch_of[entry as usize] = from;
            self.watches[from as usize].push(entry);
        }
        for (cell, domain) in self.domain_trail.drain(domains..).rev() {
            self.domain[cell as usize] = domain;
        }
        for cell in self.trail.drain(trail..) {
            self.value[cell as usize] = UNSET;
        }
        self.head = trail;
    }

    fn locate(&self, instance: u32) -> (&'a Equation, [u8; 8]) {
        // Few equations, and almost every instance belongs to the first: a scan beats a search.
        let e = self.offsets[1..].iter().position(|&o| instance < o).expect("an instance below the total");
        let equations: &'a [Equation] = self.equations;
        let equation = &equations[e];
        let mut assignment = [0u8; 8];
        match &equation.fixed {
            Some(fixed) => assignment[..fixed.len()].copy_from_slice(fixed),
            None => {
                let mut index = instance - self.offsets[e];
                for slot in assignment.iter_mut().take(equation.vars) {
                    let (q, r) = self.radix.divmod(index);
                    *slot = r as u8;
                    index = q;
                }
            }
        }
        (equation, assignment)
    }

    fn evaluate(&self, equation: &Equation, side: usize, assignment: &[u8; 8]) -> Side {
        let code = &equation.sides[side];
        let split = equation.splits[side];
        if split == 0 {
            return self.run_code(code, assignment);
        }
        let (left, right) = (&code[..split], &code[split..code.len() - 1]);
        match self.run_code(left, assignment) {
            Side::Blocked(cell, true) => match self.run_code(right, assignment) {
                Side::Known(b, _) => Side::Inner(cell, b, false),
                _ => Side::Blocked(cell, false),
            },
            Side::Known(a, left_last) => match self.run_code(right, assignment) {
                Side::Known(b, right_last) => {
                    let cell = (usize::from(a) * self.n + usize::from(b)) as u32;
                    let v = self.value[cell as usize];
                    if v == UNSET {
                        return Side::Blocked(cell, true);
                    }
                    let last = [left_last, right_last]
                        .into_iter()
                        .flatten()
                        .fold(cell, |m, c| if self.position[c as usize] > self.position[m as usize] { c } else { m });
                    Side::Known(v, Some(last))
                }
                Side::Blocked(cell, true) => Side::Inner(cell, a, true),
                Side::Blocked(cell, _) | Side::Inner(cell, ..) => Side::Blocked(cell, false),
            },
            Side::Blocked(cell, _) | Side::Inner(cell, ..) => Side::Blocked(cell, false),
        }
    }

    /// Evaluate postfix code up to its first unassigned cell.
    fn run_code(&self, code: &[Code], assignment: &[u8; 8]) -> Side {
        // The parser nests at most 32 parentheses, so postfix code never holds
        // more than 35 operands at once.
        let mut stack = [0u8; STACK];
        let mut top = 0;
        let mut last: Option<u32> = None;
        for (i, unit) in code.iter().enumerate() {
            match *unit {
                Code::Var(v) => {
                    stack[top] = assignment[usize::from(v)];
                    top += 1;
                }
                Code::Op => {
                    top -= 1;
                    let cell = (usize::from(stack[top - 1]) * self.n + usize::from(stack[top])) as u32;
                    let v = self.value[cell as usize];
                    if v == UNSET {
                        return Side::Blocked(cell, i + 1 == code.len());
                    }
                    if last.is_none_or(|c| self.position[c as usize] < self.position[cell as usize]) {
                        last = Some(cell);
                    }
                    stack[top - 1] = v;
                }
            }
        }
        Side::Known(stack[0], last)
    }

    /// Apply what an instance's two sides imply; false on a contradiction.
    fn consequence(&mut self, equation: &Equation, sides: [Side; 2]) -> bool {
        // An evaluation costs its symbols and a fixed part (finding and decoding the instance).
        self.meter.work += equation.size() + 8;
        match sides {
            [Side::Known(x, _), Side::Known(y, _)] => (x == y) != equation.negated,
            [Side::Known(x, _), Side::Blocked(cell, true)] | [Side::Blocked(cell, true), Side::Known(x, _)] => {
                if equation.negated {
                    self.remove(cell, x)
                } else {
                    self.set(cell, x)
                }
            }
            [Side::Known(x, _), Side::Inner(cell, other, right)]
            | [Side::Inner(cell, other, right), Side::Known(x, _)] => {
                self.exclude_operands(cell, other, right, x, equation.negated)
            }
            _ => true,
        }
    }

    /// The side is `other * u` (or `u * other`) for the value `u` of `cell`,
    /// and must equal `x` (or differ from it, negated): remove from the cell
    /// every value `w` for which `other * w` cannot be `x` (or must be).
    fn exclude_operands(&mut self, cell: u32, other: u8, right: bool, x: u8, negated: bool) -> bool {
        let n = self.n;
        let mut values = self.domain[cell as usize];
        self.meter.work += n as u64;
        while values != 0 {
            let w = values.trailing_zeros() as usize;
            values &= values - 1;
            let product = if right { usize::from(other) * n + w } else { w * n + usize::from(other) };
            let domain = self.domain[product];
            let excluded = if negated { domain == 1 << x } else { domain & (1 << x) == 0 };
            if excluded && !self.remove(cell, w as u8) {
                return false;
            }
        }
        true
    }

    fn set(&mut self, cell: u32, v: u8) -> bool {
        let c = cell as usize;
        if self.domain[c] & (1 << v) == 0 {
            return false;
        }
        if self.value[c] == v {
            return true;
        }
        self.domain_trail.push((cell, self.domain[c]));
        self.domain[c] = 1 << v;
        self.value[c] = v;
        self.position[c] = self.trail.len() as u32;
        self.trail.push(cell);
        true
    }

    fn remove(&mut self, cell: u32, v: u8) -> bool {
        let c = cell as usize;
        let domain = self.domain[c];
        if domain & (1 << v) == 0 {
            return true;
        }
        let left = domain & !(1 << v);
        if left == 0 {
            return false;
        }
        if left.count_ones() == 1 {
            return self.set(cell, left.trailing_zeros() as u8);
        }
        self.domain_trail.push((cell, domain));
        self.domain[c] = left;
        true
    }

    fn propagate(&mut self) -> Flow {
        while self.head < self.trail.len() {
            let cell = self.trail[self.head];
            self.head += 1;
            if self.lines.any() && !self.latin(cell) {
                return Flow::Conflict;
            }
            if !self.wake(cell) {
                return Flow::Conflict;
            }
            if self.meter.work > self.meter.max_work {
                return Flow::Stopped(Limit::Work);
            }
        }
        Flow::Quiet
    }

    /// Remove an assigned value from the rest of its row and column (those of
    /// them that are permutations).
    fn latin(&mut self, cell: u32) -> bool {
        let n = self.n;
        let (a, b) = (cell as usize / n, cell as usize % n);
        let v = self.value[cell as usize];
        self.meter.work += 2 * n as u64;
        (!self.lines.rows || (0..n).filter(|&j| j != b).all(|j| self.remove((a * n + j) as u32, v)))
            && (!self.lines.columns || (0..n).filter(|&i| i != a).all(|i| self.remove((i * n + b) as u32, v)))
    }

    /// Evaluate again every instance side waiting on `cell`.
    fn wake(&mut self, cell: u32) -> bool {
        self.wakes = self.wakes.checked_add(1).unwrap_or_else(|| {
            self.stamp.fill(0);
            1
        });
        let spare = std::mem::take(&mut self.spare);
        let waiting = std::mem::replace(&mut self.watches[cell as usize], spare);
        let mut ok = true;
        let mut i = 0;
        while i < waiting.len() {
            let entry = waiting[i];
            i += 1;
            if self.watch_of[entry as usize] != cell || self.stamp[entry as usize] == self.wakes {
                continue;
            }
            self.stamp[entry as usize] = self.wakes;
            let instance = entry >> 1;
            let (equation, assignment) = self.locate(instance);
            let sides = [self.evaluate(equation, 0, &assignment), self.evaluate(equation, 1, &assignment)];
            let next = sides[(entry & 1) as usize].watch().expect("a side with no cell is never watched");
            if next != cell {
                self.watch_of[entry as usize] = next;
                self.watch_trail.push((entry, cell));
            }
            self.watches[next as usize].push(entry);
            if !self.consequence(equation, sides) {
                ok = false;
                break;
            }
        }
        self.meter.work += (waiting.len() - i) as u64;
        self.watches[cell as usize].extend_from_slice(&waiting[i..]);
        let mut waiting = waiting;
        waiting.clear();
        self.spare = waiting;
        ok
    }
}

enum Flow {
    Quiet,
    Conflict,
    Stopped(Limit),
}

#[cfg(test)]
mod radix {
    use super::Radix;

    #[test]
    fn division_by_multiplication_is_exact_over_the_instance_numbers() {
        for n in 1..32u32 {
            let radix = Radix::new(n);
            // Every number up to 2^16, then a stride across the rest of 2^21.
            for i in (0..1u32 << 16).chain((1u32 << 16..1 << 21).step_by(997)).chain([(1 << 21) - 1]) {
                assert_eq!(radix.divmod(i), (i / n, i % n), "{i} / {n}");
            }
        }
    }
}
