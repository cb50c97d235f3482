//! FGLM: the lexicographic basis of a zero-dimensional ideal from its
//! reduced basis in another order, by linear algebra in the quotient ring
//! (Faugère, Gianni, Lazard and Mora, 1993). Monomials are visited in
//! increasing lex order; each one's normal form, a vector over the standard
//! monomials, is either independent of those already kept (the monomial is
//! standard for lex) or a combination of them (a lex basis element).

use std::collections::{BTreeMap, HashMap};

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::buchberger::normal_form;
use crate::poly::Order;
use crate::sparse::{MAX_VARS, Mono, Pol, compare, words};

/// What a rational operation costs against one word of integer arithmetic:
/// each normalizes by a gcd (measured on Katsura-5, about 60 times a term
/// of Buchberger's algorithm).
const RATIONAL: u64 = 64;

/// 64-bit words of a rational: what one operation on it costs, roughly.
fn size(q: &BigRational) -> u64 {
    words(q.numer()) + words(q.denom())
}

/// The standard monomials of a reduced basis, or `None` when there are
/// infinitely many (the ideal is not zero-dimensional) or more than `limit`.
fn staircase(basis: &[Pol], nvars: usize, limit: usize) -> Option<Vec<Mono>> {
    let pure = |i: usize| basis.iter().any(|g| g.lm().e[i] > 0 && g.lm().deg == u32::from(g.lm().e[i]));
    if !(0..nvars).all(pure) {
        return None;
    }
    let reducible = |m: &Mono| basis.iter().any(|g| g.lm().divides(m));
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut queue = vec![Mono::default()];
    while let Some(m) = queue.pop() {
        if reducible(&m) || !seen.insert(m) {
            continue;
        }
        if out.len() == limit {
            return None;
        }
        out.push(m);
        queue.extend((0..nvars).filter_map(|i| m.mul(&Mono::variable(i))));
    }
    Some(out)
}

/// The reduced lex basis (primitive, by decreasing leading monomial) of the
/// zero-dimensional ideal whose reduced basis in `order` is `basis`; `None`
/// when the ideal is not zero-dimensional, its quotient has more than
/// `limit` standard monomials, or `work` passes `max_work`.
pub fn to_lex(
    order: Order,
    basis: &[Pol],
    nvars: usize,
    limit: usize,
    work: &mut u64,
    max_work: u64,
) -> Option<Vec<Pol>> {
    if basis.iter().any(|g| g.lm().deg == 0) {
        return Some(vec![Pol { terms: vec![(Mono::default(), BigInt::one())] }]);
    }
    let standard = staircase(basis, nvars, limit)?;
    let index: HashMap<Mono, usize> = standard.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let d = standard.len();
    // The normal form of a monomial as a dense vector over the standard monomials.
    let mut cache: HashMap<Mono, Vec<BigRational>> = HashMap::new();
    let mut vector_of = |m: Mono, work: &mut u64| -> Option<Vec<BigRational>> {
        if let Some(v) = cache.get(&m) {
            return Some(v.clone());
        }
        let mut v = vec![BigRational::zero(); d];
        if let Some(&i) = index.get(&m) {
            v[i] = BigRational::one();
        } else {
            let (nf, scale) =
                normal_form(order, &Pol { terms: vec![(m, BigInt::one())] }, 0, basis, work, max_work).ok()?;
            for (t, c) in nf.terms {
                v[*index.get(&t)?] = BigRational::from_integer(c) / &scale;
            }
        }
        cache.insert(m, v.clone());
        Some(v)
    };
    // Multiplication by each variable, column by column: x_i · standard[b].
    let mut columns: Vec<Vec<Vec<BigRational>>> = Vec::with_capacity(nvars);
    for i in 0..nvars {
        let mut column = Vec::with_capacity(d);
        for b in &standard {
            column.push(vector_of(b.mul(&Mono::variable(i))?, work)?);
        }
        columns.push(column);
        if *work > max_work {
            return None;
        }
    }
    // Rows in echelon form: (pivot, vector, its combination of the lex standard monomials).
    let mut rows: Vec<(usize, Vec<BigRational>, Vec<BigRational>)> = Vec::new();
    let mut kept: Vec<(Mono, Vec<BigRational>)> = Vec::new();
    let mut leads: Vec<Mono> = Vec::new();
    let mut out: Vec<Pol> = Vec::new();
    let mut candidates: BTreeMap<[u16; MAX_VARS], (Mono, Vec<BigRational>)> = BTreeMap::new();
    let one = Mono::default();
    candidates.insert(one.e, (one, vector_of(one, work)?));
    while let Some((_, (m, v))) = candidates.pop_first() {
        if leads.iter().any(|l| l.divides(&m)) {
            continue;
        }
        *work += (d * (rows.len() + 1)) as u64;
        if *work > max_work {
            return None;
        }
        let mut w = v.clone();
        let mut comb = vec![BigRational::zero(); kept.len()];
        for (pivot, row, row_comb) in &rows {
            if w[*pivot].is_zero() {
                continue;
            }
            let c = w[*pivot].clone();
            let wc = size(&c);
            for (x, y) in w.iter_mut().zip(row) {
                if !y.is_zero() {
                    *x -= &c * y;
                    *work += RATIONAL * (wc * size(y) + size(x));
                }
            }
            for (x, y) in comb.iter_mut().zip(row_comb) {
                if !y.is_zero() {
                    *x += &c * y;
                    *work += RATIONAL * (wc * size(y) + size(x));
                }
            }
        }
        match w.iter().position(|x| !x.is_zero()) {
            None => {
                // m = Σ comb[s] · kept[s] in the quotient: a lex basis element.
                let mut terms: Vec<(Mono, BigRational)> = vec![(m, BigRational::one())];
                terms.extend(kept.iter().zip(&comb).filter(|(_, c)| !c.is_zero()).map(|((s, _), c)| (*s, -c.clone())));
                terms.sort_by(|a, b| compare(Order::Lex, &b.0, &a.0));
                let denominators = terms.iter().fold(BigInt::one(), |l, (_, c)| l.lcm(c.denom()));
                let terms = terms.into_iter().map(|(m, c)| (m, (c * &denominators).to_integer())).collect();
                let mut p = Pol { terms };
                p.make_primitive(work);
                leads.push(m);
                out.push(p);
            }
            Some(pivot) => {
                // A new lex standard monomial: normalize the row, extend the combinations.
                let inverse = BigRational::one() / &w[pivot];
                for x in &mut w {
                    *x *= &inverse;
                }
                let mut row_comb: Vec<BigRational> = comb.iter().map(|c| -c * &inverse).collect();
                row_comb.push(inverse);
                for (_, _, c) in &mut rows {
                    c.push(BigRational::zero());
                }
                rows.push((pivot, w, row_comb));
                for (i, column) in columns.iter().enumerate() {
                    let next = m.mul(&Mono::variable(i))?;
                    if candidates.contains_key(&next.e) || leads.iter().any(|l| l.divides(&next)) {
                        continue;
                    }
                    // x_i·m in the quotient: the multiplication matrix applied to m's vector.
                    let mut image = vec![BigRational::zero(); d];
                    for (b, coefficient) in v.iter().enumerate() {
                        if coefficient.is_zero() {
                            continue;
                        }
                        let wc = size(coefficient);
                        for (x, y) in image.iter_mut().zip(&column[b]) {
                            if !y.is_zero() {
                                *x += coefficient * y;
                                *work += RATIONAL * (wc * size(y) + size(x));
                            }
                        }
                    }
                    *work += d as u64;
                    candidates.insert(next.e, (next, image));
                    if *work > max_work {
                        return None;
                    }
                }
                kept.push((m, v));
            }
        }
    }
    out.sort_by(|a, b| compare(Order::Lex, b.lm(), a.lm()));
    Some(out)
}
