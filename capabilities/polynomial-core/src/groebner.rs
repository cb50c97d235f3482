//! The reduced Gröbner basis and its trace. Grevlex, grlex and the lex
//! bases of ideals that are not zero-dimensional come from Buchberger's
//! algorithm in the requested order; a lex basis of a zero-dimensional
//! ideal comes from the grevlex basis by FGLM, with the grevlex run as its
//! trace. Either way the trace rebuilds, from the generators, polynomials
//! every basis element reduces to zero by in the trace's order.

use crate::buchberger::{self, Budget, Counts, Step, Stop, normal_form};
use crate::fglm;
use crate::poly::{Order, Poly};
use crate::sparse::{Pol, compare};

/// Most standard monomials FGLM works with.
pub const MAX_QUOTIENT: usize = 2_000;

/// The reduced basis with its trace.
#[derive(Debug, Clone)]
pub struct Basis {
    /// Monic, by decreasing leading monomial.
    pub basis: Vec<Poly>,
    /// The order the trace was run in.
    pub trace_order: Order,
    pub trace: Vec<Step>,
    pub counts: Counts,
    /// Whether the lex basis came from FGLM.
    pub fglm: bool,
}

/// Why there is no basis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    pub stop: Stop,
    pub counts: Counts,
}

/// The reduced Gröbner basis of `generators` in `order`.
pub fn reduced_basis(generators: &[Poly], nvars: usize, order: Order, budget: Budget) -> Result<Basis, Stopped> {
    if order == Order::Lex {
        let run = run(generators, Order::Grevlex, budget)?;
        let (grevlex, mut work) = interreduce(Order::Grevlex, &run, budget.max_work)?;
        if let Some(lex) = fglm::to_lex(Order::Grevlex, &grevlex, nvars, MAX_QUOTIENT, &mut work, budget.max_work) {
            let counts = Counts { work, ..run.counts };
            return Ok(Basis {
                basis: monic(&lex, nvars),
                trace_order: Order::Grevlex,
                trace: run.steps,
                counts,
                fglm: true,
            });
        }
        if work > budget.max_work {
            return Err(Stopped { stop: Stop::Work, counts: Counts { work, ..run.counts } });
        }
        // Not zero-dimensional: Buchberger in lex itself, on what is left of the budget.
        let left = Budget { max_pairs: budget.max_pairs - run.counts.pairs, max_work: budget.max_work - work };
        let lex = direct(generators, nvars, Order::Lex, left).map_err(|s| add(s, Counts { work, ..run.counts }))?;
        let c = lex.counts;
        let counts = Counts { pairs: c.pairs + run.counts.pairs, zero: c.zero + run.counts.zero, work: c.work + work };
        return Ok(Basis { counts, ..lex });
    }
    direct(generators, nvars, order, budget)
}

/// The reduced Gröbner basis of `generators` by Buchberger's algorithm in
/// `order` itself (no FGLM).
pub fn direct(generators: &[Poly], nvars: usize, order: Order, budget: Budget) -> Result<Basis, Stopped> {
    let run = run(generators, order, budget)?;
    let (reduced, work) = interreduce(order, &run, budget.max_work)?;
    let counts = Counts { work, ..run.counts };
    Ok(Basis { basis: monic(&reduced, nvars), trace_order: order, trace: run.steps, counts, fglm: false })
}

fn add(s: Stopped, before: Counts) -> Stopped {
    let c = s.counts;
    Stopped {
        stop: s.stop,
        counts: Counts { pairs: c.pairs + before.pairs, zero: c.zero + before.zero, work: c.work + before.work },
    }
}

fn run(generators: &[Poly], order: Order, budget: Budget) -> Result<buchberger::Run, Stopped> {
    let integral = generators
        .iter()
        .map(|g| Pol::from_rational(g, order))
        .collect::<Option<Vec<Pol>>>()
        .ok_or(Stopped { stop: Stop::Degree, counts: Counts::default() })?;
    buchberger::groebner(order, integral, budget).map_err(|(stop, counts)| Stopped { stop, counts })
}

/// The reduced basis from a minimal one: each element's tail replaced by
/// its normal form (unique, since the basis is a Gröbner basis).
fn interreduce(order: Order, run: &buchberger::Run, max_work: u64) -> Result<(Vec<Pol>, u64), Stopped> {
    let minimal: Vec<Pol> = run.basis.iter().map(|&i| run.polys[i].clone()).collect();
    let mut work = run.counts.work;
    let mut out = Vec::with_capacity(minimal.len());
    for g in &minimal {
        let (mut p, _) = normal_form(order, g, 1, &minimal, &mut work, max_work)
            .map_err(|stop| Stopped { stop, counts: Counts { work, ..run.counts } })?;
        p.make_primitive();
        out.push(p);
    }
    out.sort_by(|a, b| compare(order, b.lm(), a.lm()));
    Ok((out, work))
}

fn monic(basis: &[Pol], nvars: usize) -> Vec<Poly> {
    basis.iter().map(|p| p.to_monic(nvars)).collect()
}
