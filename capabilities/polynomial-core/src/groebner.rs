//! Buchberger's algorithm with cofactor tracking, then the reduced basis and
//! its certificate: cofactors of every basis element in the generators,
//! quotients reducing every generator to zero, and standard representations
//! of every S-polynomial of the basis.

use num_rational::BigRational;
use num_traits::One;

use crate::poly::{Mono, Order, Poly};

/// A polynomial with its expression in the input generators.
#[derive(Clone)]
struct Tracked {
    poly: Poly,
    cof: Vec<Poly>,
}

fn divides(a: &[u32], b: &[u32]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y)
}

fn quotient(b: &[u32], a: &[u32]) -> Mono {
    b.iter().zip(a).map(|(y, x)| y - x).collect()
}

fn lcm(a: &[u32], b: &[u32]) -> Mono {
    a.iter().zip(b).map(|(x, y)| *x.max(y)).collect()
}

/// Multivariate division: `p = Σ q_i g_i + r`, no term of `r` divisible by any
/// leading monomial, and `lm(q_i g_i) ≤ lm(p)`.
pub fn divide(p: &Poly, basis: &[Poly], order: Order) -> (Vec<Poly>, Poly) {
    let mut quotients = vec![Poly::zero(); basis.len()];
    let mut remainder = Poly::zero();
    let mut rest = p.clone();
    while let Some((m, c)) = rest.terms.first().cloned() {
        match basis.iter().position(|g| g.lm().is_some_and(|lm| divides(lm, &m))) {
            Some(i) => {
                let g = &basis[i];
                let t = quotient(&m, g.lm().unwrap_or(&m));
                let coef = &c / g.lc().cloned().unwrap_or_else(BigRational::one);
                quotients[i] = quotients[i].add(&Poly::monomial(t.clone(), coef.clone()), order);
                rest = rest.sub(&g.scale_mono(&t, &coef), order);
            }
            None => {
                remainder.terms.push((m.clone(), c.clone()));
                rest.terms.remove(0);
            }
        }
    }
    (quotients, remainder)
}

/// The S-polynomial of `a` and `b` and the monomial multipliers used.
pub fn spoly(a: &Poly, b: &Poly, order: Order) -> (Poly, (Mono, BigRational), (Mono, BigRational)) {
    let (la, lb) = (a.lm().cloned().unwrap_or_default(), b.lm().cloned().unwrap_or_default());
    let l = lcm(&la, &lb);
    let ma = (quotient(&l, &la), BigRational::one() / a.lc().cloned().unwrap_or_else(BigRational::one));
    let mb = (quotient(&l, &lb), BigRational::one() / b.lc().cloned().unwrap_or_else(BigRational::one));
    let s = a.scale_mono(&ma.0, &ma.1).sub(&b.scale_mono(&mb.0, &mb.1), order);
    (s, ma, mb)
}

fn combine(terms: &[(&Poly, &[Poly])], order: Order, width: usize) -> Vec<Poly> {
    let mut out = vec![Poly::zero(); width];
    for (q, cof) in terms {
        for (slot, c) in out.iter_mut().zip(cof.iter()) {
            *slot = slot.add(&c.mul(q, order), order);
        }
    }
    out
}

/// The reduced basis with its certificate parts.
pub struct Basis {
    pub basis: Vec<Poly>,
    pub cofactors: Vec<Vec<Poly>>,
    pub reductions: Vec<Vec<Poly>>,
    pub spolys: Vec<((usize, usize), Vec<Poly>)>,
    pub steps: u64,
}

/// Compute the reduced Gröbner basis of `generators`; `None` when `max_steps`
/// S-polynomial reductions did not finish.
pub fn reduced_basis(generators: &[Poly], nvars: usize, order: Order, max_steps: u64) -> Option<Basis> {
    let n = generators.len();
    let unit = |j: usize| -> Vec<Poly> {
        (0..n).map(|k| if k == j { Poly::monomial(vec![0; nvars], BigRational::one()) } else { Poly::zero() }).collect()
    };
    let mut g: Vec<Tracked> = generators
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.is_zero())
        .map(|(j, f)| Tracked { poly: f.clone(), cof: unit(j) })
        .collect();
    let mut pairs: Vec<(usize, usize)> = (0..g.len()).flat_map(|k| (0..k).map(move |i| (i, k))).collect();
    let mut steps = 0;
    while let Some((i, k)) = pairs.pop() {
        let (a, b) = (&g[i], &g[k]);
        let (la, lb) = (a.poly.lm().cloned().unwrap_or_default(), b.poly.lm().cloned().unwrap_or_default());
        if la.iter().zip(&lb).all(|(x, y)| *x == 0 || *y == 0) {
            continue; // coprime leading monomials: the S-polynomial reduces to zero
        }
        steps += 1;
        if steps > max_steps {
            return None;
        }
        let (s, ma, mb) = spoly(&a.poly, &b.poly, order);
        let scale = |cof: &[Poly], m: &(Mono, BigRational)| -> Vec<Poly> {
            cof.iter().map(|c| c.scale_mono(&m.0, &m.1)).collect()
        };
        let (ca, cb) = (scale(&a.cof, &ma), scale(&b.cof, &mb));
        let s_cof: Vec<Poly> = ca.iter().zip(&cb).map(|(x, y)| x.sub(y, order)).collect();
        let polys: Vec<Poly> = g.iter().map(|t| t.poly.clone()).collect();
        let (q, r) = divide(&s, &polys, order);
        if r.is_zero() {
            continue;
        }
        let parts: Vec<(&Poly, &[Poly])> = q.iter().zip(g.iter()).map(|(q, t)| (q, t.cof.as_slice())).collect();
        let used = combine(&parts, order, n);
        let r_cof: Vec<Poly> = s_cof.iter().zip(&used).map(|(x, y)| x.sub(y, order)).collect();
        let new = g.len();
        g.push(Tracked { poly: r, cof: r_cof });
        pairs.extend((0..new).map(|i| (i, new)));
    }
    // Minimal: drop elements whose leading monomial another's divides.
    let mut keep: Vec<Tracked> = Vec::new();
    for (i, t) in g.iter().enumerate() {
        let lm = t.poly.lm().cloned().unwrap_or_default();
        let redundant = g
            .iter()
            .enumerate()
            .any(|(j, o)| j != i && o.poly.lm().is_some_and(|ol| divides(ol, &lm) && (ol != &lm || j < i)));
        if !redundant {
            keep.push(t.clone());
        }
    }
    // Reduce each element by the others, then make it monic.
    for i in 0..keep.len() {
        let others: Vec<Poly> =
            keep.iter().enumerate().map(|(j, t)| if j == i { Poly::zero() } else { t.poly.clone() }).collect();
        let (q, r) = divide(&keep[i].poly, &others, order);
        let parts: Vec<(&Poly, &[Poly])> = q.iter().zip(keep.iter()).map(|(q, t)| (q, t.cof.as_slice())).collect();
        let used = combine(&parts, order, n);
        let cof: Vec<Poly> = keep[i].cof.iter().zip(&used).map(|(x, y)| x.sub(y, order)).collect();
        let lc_inv = BigRational::one() / r.lc().cloned().unwrap_or_else(BigRational::one);
        let zero = vec![0; nvars];
        keep[i] = Tracked {
            poly: r.scale_mono(&zero, &lc_inv),
            cof: cof.iter().map(|c| c.scale_mono(&zero, &lc_inv)).collect(),
        };
    }
    keep.sort_by(|a, b| {
        crate::poly::cmp(order, b.poly.lm().map_or(&[][..], |m| m), a.poly.lm().map_or(&[][..], |m| m))
    });
    let basis: Vec<Poly> = keep.iter().map(|t| t.poly.clone()).collect();
    let reductions = generators.iter().map(|f| divide(f, &basis, order).0).collect();
    let mut spolys = Vec::new();
    for k in 0..basis.len() {
        for i in 0..k {
            let (s, _, _) = spoly(&basis[i], &basis[k], order);
            let (q, r) = divide(&s, &basis, order);
            debug_assert!(r.is_zero());
            spolys.push(((i, k), q));
        }
    }
    Some(Basis { cofactors: keep.into_iter().map(|t| t.cof).collect(), basis, reductions, spolys, steps })
}
