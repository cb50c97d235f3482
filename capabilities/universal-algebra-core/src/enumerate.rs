//! Every model of given laws at one order, up to isomorphism (or up to
//! isomorphism and anti-isomorphism): the propagating search (`engine`) run
//! to the end, each complete table reduced to its canonical form (the least
//! relabelled table, row-major, over every permutation of the elements and,
//! for anti-isomorphism, of the transposed table too) and kept once.
//!
//! The least number heuristic already skips most isomorphic copies; the
//! canonical forms remove the rest.

use std::cell::RefCell;
use std::collections::BTreeSet;

pub use crate::engine::Limit;
use crate::engine::{Engine, Hypotheses, Meter, Step};
use crate::laws::Law;

/// Which tables count as the same model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpTo {
    Isomorphism,
    /// Isomorphism, or isomorphism to the opposite magma (`a*b` read as `b*a`).
    IsomorphismOrAnti,
}

/// What an enumeration found.
#[derive(Debug, Clone, PartialEq)]
pub struct Enumeration {
    /// Canonical tables (row-major), in increasing order.
    pub models: Vec<Vec<u8>>,
    /// Why it stopped early, if it did: the models are then only some of them.
    pub stopped: Option<Limit>,
    pub nodes: u64,
    pub work: u64,
}

/// Orders this enumeration takes (canonical forms try every permutation).
pub const MAX_ORDER: u8 = 6;

/// Every model of `hypotheses` of order `order`, up to `up_to`, within the budgets.
pub fn models(hypotheses: &[Law], order: u8, up_to: UpTo, max_nodes: u64, max_work: u64) -> Enumeration {
    assert!((1..=MAX_ORDER).contains(&order), "order {order} is outside 1..={MAX_ORDER}");
    let n = usize::from(order);
    let Hypotheses { equations, lines, identity } = Hypotheses::of(hypotheses);
    let permutations = permutations(n);
    let found: RefCell<BTreeSet<Vec<u8>>> = RefCell::new(BTreeSet::new());
    let keep = |n: usize, cells: &[u8]| {
        let form = canonical(n, cells, &permutations, up_to);
        found.borrow_mut().insert(form);
        (false, (permutations.len() * n * n) as u64)
    };
    // With an identity, it can be taken to be element 0.
    let preset: Vec<(usize, u8)> =
        if identity { (0..n).flat_map(|x| [(x, x as u8), (x * n, x as u8)]).collect() } else { Vec::new() };
    let meter = Meter { nodes: 0, work: 0, max_nodes, max_work };
    let mut engine = Engine::new(n, &equations, lines, &keep, meter);
    let step = engine.run(&preset, usize::from(identity));
    let stopped = match step {
        Step::Stopped(limit) => Some(limit),
        Step::Exhausted => None,
        Step::Found(_) => unreachable!("every complete table is kept and the search goes on"),
    };
    let (work, nodes) = (engine.meter.work, engine.meter.nodes);
    drop(engine);
    Enumeration { models: found.into_inner().into_iter().collect(), stopped, nodes, work }
}

/// Every permutation of `0..n`.
pub(crate) fn permutations(n: usize) -> Vec<Vec<u8>> {
    fn extend(prefix: &mut Vec<u8>, used: &mut [bool], out: &mut Vec<Vec<u8>>) {
        if prefix.len() == used.len() {
            out.push(prefix.clone());
            return;
        }
        for v in 0..used.len() {
            if !used[v] {
                used[v] = true;
                prefix.push(v as u8);
                extend(prefix, used, out);
                prefix.pop();
                used[v] = false;
            }
        }
    }
    let mut out = Vec::new();
    extend(&mut Vec::with_capacity(n), &mut vec![false; n], &mut out);
    out
}

/// The least relabelling of the table (and of its transpose, for anti-isomorphism).
pub(crate) fn canonical(n: usize, cells: &[u8], permutations: &[Vec<u8>], up_to: UpTo) -> Vec<u8> {
    let mut best = vec![u8::MAX; n * n];
    let mut candidate = vec![0u8; n * n];
    let transposes: &[bool] = if up_to == UpTo::IsomorphismOrAnti { &[false, true] } else { &[false] };
    for &transpose in transposes {
        for p in permutations {
            // candidate[p(a)][p(b)] = p(a*b), or p(b*a) for the opposite magma.
            for a in 0..n {
                for b in 0..n {
                    let product = if transpose { cells[b * n + a] } else { cells[a * n + b] };
                    candidate[usize::from(p[a]) * n + usize::from(p[b])] = p[usize::from(product)];
                }
            }
            if candidate < best {
                best.copy_from_slice(&candidate);
            }
        }
    }
    best
}
