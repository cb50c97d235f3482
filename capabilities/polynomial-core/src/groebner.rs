//! The reduced Gröbner basis and its trace. Grevlex, grlex and the lex
//! bases of ideals that are not zero-dimensional come from Buchberger's
//! algorithm in the requested order; a lex basis of a zero-dimensional
//! ideal comes from the grevlex basis by FGLM, with the grevlex run as its
//! trace. Either way the trace rebuilds, from the generators, polynomials
//! every basis element reduces to zero by in the trace's order.

use crate::buchberger::{self, Budget, Counts, Step, Stop, normal_form};
use crate::fglm;
use crate::poly::{Order, Poly};
use crate::sparse::{MAX_VARS, Pol, compare};

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
    /// Whether the trace was run on the generators homogenized by a new
    /// last variable (the basis is then the dehomogenized run's, reduced).
    pub homogenized: bool,
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
        let (run, homogenized) = grevlex_run(generators, nvars, budget)?;
        let (grevlex, mut work) = interreduce(Order::Grevlex, &run, homogenized.then_some(nvars), budget.max_work)?;
        if let Some(lex) = fglm::to_lex(Order::Grevlex, &grevlex, nvars, MAX_QUOTIENT, &mut work, budget.max_work) {
            let counts = Counts { work, ..run.counts };
            return Ok(Basis {
                basis: monic(&lex, nvars),
                trace_order: Order::Grevlex,
                trace: run.steps,
                counts,
                fglm: true,
                homogenized,
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
    if order == Order::Grevlex {
        let (run, homogenized) = grevlex_run(generators, nvars, budget)?;
        let (reduced, work) = interreduce(order, &run, homogenized.then_some(nvars), budget.max_work)?;
        let counts = Counts { work, ..run.counts };
        let basis = monic(&reduced, nvars);
        return Ok(Basis { basis, trace_order: order, trace: run.steps, counts, fglm: false, homogenized });
    }
    direct(generators, nvars, order, budget)
}

/// Buchberger in grevlex, on the generators homogenized by a new last
/// variable when they are not homogeneous and a variable is free for it:
/// homogeneous pairs are taken degree by degree, and dehomogenizing a
/// homogeneous grevlex basis (the new variable last) gives a grevlex basis
/// with the same leading monomials. The run, and whether it was homogenized.
fn grevlex_run(generators: &[Poly], nvars: usize, budget: Budget) -> Result<(buchberger::Run, bool), Stopped> {
    let order = Order::Grevlex;
    let integral = integral(generators, order)?;
    let homogeneous = integral.iter().all(|p| p.terms.iter().all(|(m, _)| m.deg == p.degree()));
    if homogeneous || nvars >= MAX_VARS {
        return buchberger::groebner(order, integral, budget).map(|run| (run, false)).map_err(stopped);
    }
    let lifted = integral
        .iter()
        .map(|p| homogenize(p, nvars))
        .collect::<Option<Vec<Pol>>>()
        .ok_or(Stopped { stop: Stop::Degree, counts: Counts::default() })?;
    buchberger::groebner(order, lifted, budget).map(|run| (run, true)).map_err(stopped)
}

fn stopped((stop, counts): (Stop, Counts)) -> Stopped {
    Stopped { stop, counts }
}

/// `p` times `h^(deg p − deg t)` in each term `t`, `h` the variable at
/// `index`, sorted in grevlex; `None` when an exponent does not fit.
fn homogenize(p: &Pol, index: usize) -> Option<Pol> {
    let degree = p.degree();
    let mut terms = p
        .terms
        .iter()
        .map(|(m, c)| {
            let mut m = *m;
            m.e[index] = u16::try_from(degree - m.deg).ok()?;
            m.deg = degree;
            Some((m, c.clone()))
        })
        .collect::<Option<Vec<_>>>()?;
    terms.sort_by(|a, b| compare(Order::Grevlex, &b.0, &a.0));
    Some(Pol { terms })
}

/// `h = 1` in a homogeneous polynomial: no two terms meet (they differ
/// outside `h`), and grevlex with `h` last keeps their order.
fn dehomogenize(p: &Pol, index: usize) -> Pol {
    let terms = p
        .terms
        .iter()
        .map(|(m, c)| {
            let mut m = *m;
            m.deg -= u32::from(m.e[index]);
            m.e[index] = 0;
            (m, c.clone())
        })
        .collect();
    Pol { terms }
}

/// The reduced Gröbner basis of `generators` by Buchberger's algorithm in
/// `order` itself (no FGLM).
pub fn direct(generators: &[Poly], nvars: usize, order: Order, budget: Budget) -> Result<Basis, Stopped> {
    let run = run(generators, order, budget)?;
    let (reduced, work) = interreduce(order, &run, None, budget.max_work)?;
    let counts = Counts { work, ..run.counts };
    Ok(Basis {
        basis: monic(&reduced, nvars),
        trace_order: order,
        trace: run.steps,
        counts,
        fglm: false,
        homogenized: false,
    })
}

fn add(s: Stopped, before: Counts) -> Stopped {
    let c = s.counts;
    Stopped {
        stop: s.stop,
        counts: Counts { pairs: c.pairs + before.pairs, zero: c.zero + before.zero, work: c.work + before.work },
    }
}

fn integral(generators: &[Poly], order: Order) -> Result<Vec<Pol>, Stopped> {
    generators
        .iter()
        .map(|g| Pol::from_rational(g, order))
        .collect::<Option<Vec<Pol>>>()
        .ok_or(Stopped { stop: Stop::Degree, counts: Counts::default() })
}

fn run(generators: &[Poly], order: Order, budget: Budget) -> Result<buchberger::Run, Stopped> {
    buchberger::groebner(order, integral(generators, order)?, budget).map_err(stopped)
}

/// The reduced basis from a minimal one: each element's tail replaced by
/// its normal form (unique, since the basis is a Gröbner basis). A
/// homogenized run's basis (`h` the variable at that index) is
/// dehomogenized first and made minimal again (leading monomials that
/// differed only in `h` may now divide one another).
fn interreduce(
    order: Order,
    run: &buchberger::Run,
    homogenized: Option<usize>,
    max_work: u64,
) -> Result<(Vec<Pol>, u64), Stopped> {
    let mut minimal: Vec<Pol> = run.basis.iter().map(|&i| run.polys[i].clone()).collect();
    if let Some(index) = homogenized {
        let lowered: Vec<Pol> = minimal.iter().map(|p| dehomogenize(p, index)).collect();
        minimal = lowered
            .iter()
            .enumerate()
            .filter(|(i, p)| {
                !lowered
                    .iter()
                    .enumerate()
                    .any(|(j, q)| j != *i && q.lm().divides(p.lm()) && (q.lm() != p.lm() || j < *i))
            })
            .map(|(_, p)| p.clone())
            .collect();
    }
    let mut work = run.counts.work;
    let mut out = Vec::with_capacity(minimal.len());
    for g in &minimal {
        let (mut p, _) = normal_form(order, g, 1, &minimal, &mut work, max_work)
            .map_err(|stop| Stopped { stop, counts: Counts { work, ..run.counts } })?;
        p.make_primitive(&mut work);
        out.push(p);
    }
    out.sort_by(|a, b| compare(order, b.lm(), a.lm()));
    Ok((out, work))
}

fn monic(basis: &[Pol], nvars: usize) -> Vec<Poly> {
    basis.iter().map(|p| p.to_monic(nvars)).collect()
}
