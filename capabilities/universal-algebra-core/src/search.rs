//! The search over orders: at each order, one propagating search (`engine`)
//! per shape of the target's failure, with the elements of that failure and
//! the identity (when one is assumed) fixed first.
//!
//! A target equation fails at some assignment of its variables. Renaming
//! elements, any countermodel has one whose failing assignment uses the
//! elements `0, 1, …, m-1` in order of first occurrence (a restricted growth
//! string); each such shape is searched in turn with that one instance of the
//! target required to fail, and those elements excluded from the least number
//! heuristic's symmetry. A named target (`has_identity`, `quasigroup`) is
//! judged on complete tables instead.

use crate::affine::{self, Tried};
use crate::engine::{Engine, Equation, Hypotheses, Limit, Lines, Meter, Step};
use crate::laws::{self, Law, Table, Term};

/// Ground instances one search holds at most (their watch lists are its memory).
pub const MAX_INSTANCES: u64 = 1 << 21;

/// What a search over orders `min_order..=max_order` found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The first countermodel: its order, its table and the target's violation.
    pub found: Option<Countermodel>,
    /// The orders every table of which was examined without a countermodel.
    pub orders_exhausted: Vec<u8>,
    /// The orders after a stop whose affine magmas were all tried without a countermodel.
    pub affine_after_stop: Vec<u8>,
    /// Why the search stopped before its last order, and at which order.
    pub stopped: Option<(u8, Stop)>,
    /// Decisions (cells given a value by choice), over all orders.
    pub nodes: u64,
    /// Work units (cells scanned, instance evaluations weighted by their size), over all orders.
    pub work: u64,
}

/// What ended a search early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `max_nodes` decisions were made.
    Nodes,
    /// `max_work` units were spent.
    Work,
    /// The order needs more ground instances than [`MAX_INSTANCES`].
    Instances(u64),
}

/// A magma satisfying every hypothesis and violating the target.
#[derive(Debug, Clone, PartialEq)]
pub struct Countermodel {
    pub order: u8,
    /// `table[a][b]` is `a*b`.
    pub table: Vec<Vec<u8>>,
    /// Where the target fails (see [`laws::violation`]).
    pub witness: serde_json::Value,
    /// The affine rule that made it (see [`affine`]), or `None` when the search found it.
    pub affine: Option<String>,
}

/// The search's two budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub max_nodes: u64,
    pub max_work: u64,
}

/// The part of `max_work` kept for trying affine magmas at the orders after
/// the one a budget stopped the search in: one sixteenth.
pub const AFTER_STOP_SHARE: u64 = 16;

/// Search orders `min_order..=max_order` in turn within `budget`: at each
/// order the affine magmas first, then the propagating search. When a budget
/// stops the search, the affine magmas of the remaining orders are still
/// tried (within the sixteenth of `max_work` kept for them), so a countermodel
/// may be found past an order that was not exhausted.
pub fn find(hypotheses: &[Law], target: &Law, min_order: u8, max_order: u8, budget: Budget) -> Outcome {
    find_with(hypotheses, target, (min_order, max_order), budget, true)
}

/// [`find`], with the affine magmas tried (`affine_first`) or the search alone.
pub fn find_with(hypotheses: &[Law], target: &Law, orders: (u8, u8), budget: Budget, affine_first: bool) -> Outcome {
    let (min_order, max_order) = orders;
    let mut outcome = Outcome {
        found: None,
        orders_exhausted: Vec::new(),
        affine_after_stop: Vec::new(),
        stopped: None,
        nodes: 0,
        work: 0,
    };
    let reserve = budget.max_work / AFTER_STOP_SHARE;
    let mut meter = Meter { nodes: 0, work: 0, max_nodes: budget.max_nodes, max_work: budget.max_work - reserve };
    let Hypotheses { equations, lines, identity } = Hypotheses::of(hypotheses);
    for order in min_order..=max_order {
        let n = usize::from(order);
        let tried = if affine_first { affine::find(hypotheses, target, n, &mut meter) } else { Tried::None };
        if let Tried::Found(found) = tried {
            outcome.found = Some(from_affine(order, found));
            break;
        }
        let instances = equations.iter().map(|e| e.instances(n)).fold(0u64, u64::saturating_add);
        let step = if matches!(tried, Tried::OutOfWork) {
            Step::Stopped(Limit::Work)
        } else if instances > MAX_INSTANCES {
            outcome.stopped = Some((order, Stop::Instances(instances)));
            break;
        } else {
            search_order(n, &equations, lines, identity, target, &mut meter)
        };
        match step {
            Step::Found(cells) => {
                let complete = Table { n, cells: cells.iter().map(|&v| Some(v)).collect() };
                let witness = laws::violation(target, &complete).expect("a found table violates the target");
                let table = cells.chunks(n).map(<[u8]>::to_vec).collect();
                outcome.found = Some(Countermodel { order, table, witness, affine: None });
                break;
            }
            Step::Exhausted => outcome.orders_exhausted.push(order),
            Step::Stopped(limit) => {
                let stop = match limit {
                    Limit::Nodes => Stop::Nodes,
                    Limit::Work => Stop::Work,
                };
                outcome.stopped = Some((order, stop));
                break;
            }
        }
    }
    if let Some((stopped_at, _)) = outcome.stopped.filter(|_| affine_first) {
        // What the search left of max_work: the part held back, less any overshoot (the
        // engine looks at the budget after each propagation step and every 1,024
        // instances of its set-up, so the overshoot is small).
        meter.max_work = budget.max_work;
        for later in stopped_at.saturating_add(1)..=max_order {
            match affine::find(hypotheses, target, usize::from(later), &mut meter) {
                Tried::Found(found) => {
                    outcome.found = Some(from_affine(later, found));
                    break;
                }
                Tried::None => outcome.affine_after_stop.push(later),
                Tried::OutOfWork => break,
            }
        }
    }
    outcome.nodes = meter.nodes;
    outcome.work = meter.work;
    debug_assert!(
        outcome.found.as_ref().is_none_or(|c| hypotheses.iter().all(|h| laws::violation(h, &table(c)).is_none()))
    );
    outcome
}

/// An affine countermodel as the search reports one.
fn from_affine(order: u8, found: affine::Affine) -> Countermodel {
    let table = found.cells.chunks(usize::from(order)).map(<[u8]>::to_vec).collect();
    Countermodel { order, table, witness: found.witness, affine: Some(found.rule) }
}

/// A countermodel's table as the laws module reads it.
fn table(c: &Countermodel) -> Table {
    Table { n: usize::from(c.order), cells: c.table.iter().flatten().map(|&v| Some(v)).collect() }
}

/// Every table of order `n`, up to the symmetries the engine breaks.
fn search_order(
    n: usize,
    equations: &[Equation],
    lines: Lines,
    identity: bool,
    target: &Law,
    meter: &mut Meter,
) -> Step {
    // (the target's failing instance, elements it fixes)
    let shapes: Vec<(Option<Equation>, usize)> = match target {
        Law::Equation { vars, lhs, rhs } => failure_shapes(vars.len(), n)
            .into_iter()
            .filter(|shape| substitute(lhs, shape) != substitute(rhs, shape))
            .map(|shape| {
                let used = shape.iter().max().map_or(0, |&m| usize::from(m) + 1);
                (Some(Equation::failing_at(lhs, rhs, shape)), used)
            })
            .collect(),
        _ => vec![(None, 0)],
    };
    // An equation's failure is searched for; a named target is judged on each
    // complete table (at most a pass over every triple).
    let judged = |n: usize, cells: &[u8]| match target {
        Law::Equation { .. } => (true, 0),
        _ => {
            let table = Table { n, cells: cells.iter().map(|&v| Some(v)).collect() };
            (laws::violation(target, &table).is_some(), (n * n * n) as u64)
        }
    };
    for (failing, used) in shapes {
        let mut all = equations.to_vec();
        all.extend(failing);
        // The identity is one of the fixed elements or the next one.
        let identities: Vec<Option<usize>> =
            if identity { (0..=used.min(n - 1)).map(Some).collect() } else { vec![None] };
        for e in identities {
            let preset: Vec<(usize, u8)> = match e {
                Some(e) => (0..n).flat_map(|x| [(e * n + x, x as u8), (x * n + e, x as u8)]).collect(),
                None => Vec::new(),
            };
            let in_use = e.map_or(used, |e| used.max(e + 1));
            let mut engine = Engine::new(n, &all, lines, &judged, *meter);
            let step = engine.run(&preset, in_use);
            *meter = engine.meter;
            if !matches!(step, Step::Exhausted) {
                return step;
            }
        }
    }
    Step::Exhausted
}

/// Assignments of `k` variables over `0..n` in restricted growth form (each
/// value at most one more than every value before it), in lexicographic order.
fn failure_shapes(k: usize, n: usize) -> Vec<Vec<u8>> {
    fn extend(prefix: &mut Vec<u8>, k: usize, n: usize, out: &mut Vec<Vec<u8>>) {
        if prefix.len() == k {
            out.push(prefix.clone());
            return;
        }
        let next = prefix.iter().max().map_or(0, |&m| m + 1).min(n as u8 - 1);
        for v in 0..=next {
            prefix.push(v);
            extend(prefix, k, n, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    extend(&mut Vec::with_capacity(k), k, n, &mut out);
    out
}

/// A term with its variables replaced by elements (as variables, to compare shapes).
fn substitute(term: &Term, assignment: &[u8]) -> Term {
    match term {
        Term::Var(i) => Term::Var(usize::from(assignment[*i])),
        Term::Op(l, r) => Term::Op(Box::new(substitute(l, assignment)), Box::new(substitute(r, assignment))),
    }
}
