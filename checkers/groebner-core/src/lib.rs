//! The check of a Gröbner basis certificate, as a plain library: its own
//! parser and its own arithmetic, sharing no code with the producer, and no
//! choice of its own about how to compute a basis — it replays the trace it
//! is given and reduces with whatever divides.
//! 1. the trace rebuilds, from the generators, each polynomial it lists: the
//!    S-polynomial of two earlier ones, then each named reducer cancelling
//!    the largest term its leading monomial divides (so each lies in the
//!    ideal of the generators). A homogenized trace starts from the
//!    generators homogenized by a new last variable `h` and its polynomials
//!    are read at `h = 1` (they lie in the homogenized ideal, so at `h = 1`
//!    in the ideal);
//! 2. every basis element reduces to zero by the rebuilt polynomials, in
//!    the trace's order (so the basis lies in the ideal of the generators);
//! 3. every generator reduces to zero by the basis (so the generators lie
//!    in the ideal of the basis: the ideals are equal);
//! 4. every S-polynomial of two basis elements whose leading monomials are
//!    not coprime reduces to zero by the basis (Buchberger's criterion with
//!    his product criterion: the basis is a Gröbner basis);
//! 5. the basis is reduced (monic, no term divisible by another leading
//!    monomial), so it is the unique reduced Gröbner basis of the ideal.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use serde::Deserialize;

mod parse;
pub use parse::poly;

/// Most variables a certificate may use.
pub const MAX_VARS: usize = 12;

/// A `groebner-certificate/2`: polynomials as strings in one canonical syntax.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Certificate {
    /// `groebner-certificate/2`.
    pub format: String,
    /// Variables, largest first.
    pub vars: Vec<String>,
    /// `lex`, `grlex` or `grevlex`.
    pub order: String,
    pub generators: Vec<String>,
    /// The claimed reduced Gröbner basis.
    pub basis: Vec<String>,
    pub trace: Trace,
}

/// How to rebuild, from the generators, polynomials the basis reduces to zero by.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// The order the trace was computed in.
    pub order: String,
    /// Whether the trace runs on the generators homogenized by a new last
    /// variable `h` (each term times `h` to the generator's degree minus
    /// its own), in grevlex; its polynomials are read with `h = 1`.
    #[serde(default)]
    pub homogenize: bool,
    /// One entry per polynomial added after the generators: `[i, j, r1, r2, …]`,
    /// the S-polynomial of polynomials `i` and `j` (indices into the list that
    /// starts with the generators), then each `r` cancelling the largest term
    /// its leading monomial divides.
    pub steps: Vec<Vec<usize>>,
}

/// Sparse polynomial as parsed: exponent vector → non-zero coefficient.
pub type P = BTreeMap<Vec<u32>, BigRational>;

pub fn add_into(target: &mut P, source: &P, sign: i32) {
    for (m, c) in source {
        let entry = target.entry(m.clone()).or_insert_with(BigRational::zero);
        if sign > 0 {
            *entry += c
        } else {
            *entry -= c
        }
        if entry.is_zero() {
            target.remove(m);
        }
    }
}

/// The largest exponent a polynomial may have (the producer's bound).
pub const MAX_EXPONENT: u32 = 65_535;

/// The product; an error when an exponent would pass [`MAX_EXPONENT`]
/// (wrapping would make different monomials equal).
pub fn times(a: &P, b: &P) -> Result<P, String> {
    let mut out = P::new();
    for (ma, ca) in a {
        for (mb, cb) in b {
            let m: Vec<u32> = ma
                .iter()
                .zip(mb)
                .map(|(x, y)| x.checked_add(*y).filter(|e| *e <= MAX_EXPONENT))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("an exponent above {MAX_EXPONENT}"))?;
            let entry = out.entry(m.clone()).or_insert_with(BigRational::zero);
            *entry += ca * cb;
            if entry.is_zero() {
                out.remove(&m);
            }
        }
    }
    Ok(out)
}

/// The three orders, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ord3 {
    Lex,
    Grlex,
    Grevlex,
}

impl Ord3 {
    pub fn named(name: &str) -> Option<Ord3> {
        match name {
            "lex" => Some(Ord3::Lex),
            "grlex" => Some(Ord3::Grlex),
            "grevlex" => Some(Ord3::Grevlex),
            _ => None,
        }
    }

    pub fn compare(self, a: &[u32], b: &[u32]) -> Ordering {
        let total = |m: &[u32]| m.iter().map(|&e| u64::from(e)).sum::<u64>();
        match self {
            Ord3::Lex => a.cmp(b),
            Ord3::Grlex => total(a).cmp(&total(b)).then(a.cmp(b)),
            // The smaller exponent in the last differing variable wins.
            Ord3::Grevlex => total(a)
                .cmp(&total(b))
                .then_with(|| a.iter().zip(b).rev().find(|(x, y)| x != y).map_or(Ordering::Equal, |(x, y)| y.cmp(x))),
        }
    }
}

/// `p` with a new last variable `h`: each term times `h` to the
/// polynomial's total degree minus the term's.
fn homogenized(p: &P) -> P {
    let total = |m: &[u32]| m.iter().sum::<u32>();
    let degree = p.keys().map(|m| total(m)).max().unwrap_or(0);
    p.iter()
        .map(|(m, c)| {
            let mut lifted = m.clone();
            lifted.push(degree - total(m));
            (lifted, c.clone())
        })
        .collect()
}

/// A polynomial for the heavy checks: integer coefficients, terms by
/// decreasing monomial in one order, primitive with a positive leading
/// coefficient. Monomials are fixed arrays of exponents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Z {
    terms: Vec<([u32; MAX_VARS], BigInt)>,
}

fn exps(m: &[u32]) -> [u32; MAX_VARS] {
    let mut out = [0; MAX_VARS];
    out[..m.len()].copy_from_slice(m);
    out
}

impl Z {
    /// Denominators cleared, sorted in `order`, content divided out.
    pub fn from_parsed(p: &P, order: Ord3) -> Z {
        let common = p.values().fold(BigInt::one(), |l, c| &l / gcd(&l, c.denom()) * c.denom());
        let mut terms: Vec<([u32; MAX_VARS], BigInt)> =
            p.iter().map(|(m, c)| (exps(m), (c * BigRational::from_integer(common.clone())).to_integer())).collect();
        terms.sort_by(|a, b| order.compare(&b.0, &a.0));
        let mut z = Z { terms };
        z.primitive();
        z
    }

    fn primitive(&mut self) {
        let Some((_, lead)) = self.terms.first() else { return };
        let Some(smallest) = self.terms.iter().map(|(_, c)| c).min_by_key(|c| c.bits()) else { return };
        let mut g = smallest.abs();
        for (_, c) in &self.terms {
            if g.is_one() {
                break;
            }
            g = gcd(&g, c);
        }
        if lead.is_negative() {
            g = -g;
        }
        if !g.is_one() {
            for (_, c) in &mut self.terms {
                *c = &*c / &g;
            }
        }
    }

    /// The polynomial in the first `n` variables with the variable after them set to 1.
    fn at_h_one(&self, n: usize) -> P {
        let mut out = P::new();
        for (m, c) in &self.terms {
            let term = P::from([(m[..n].to_vec(), BigRational::from_integer(c.clone()))]);
            add_into(&mut out, &term, 1);
        }
        out
    }

    fn lead(&self) -> &[u32; MAX_VARS] {
        &self.terms[0].0
    }

    /// `x·self − y·(m·other)`, merged in `order`; `None` when an exponent overflows.
    fn minus(&self, x: &BigInt, y: &BigInt, m: &[u32; MAX_VARS], other: &Z, order: Ord3) -> Option<Z> {
        let shifted = other
            .terms
            .iter()
            .map(|(e, c)| {
                let mut s = [0u32; MAX_VARS];
                for k in 0..MAX_VARS {
                    s[k] = e[k].checked_add(m[k])?;
                }
                Some((s, c))
            })
            .collect::<Option<Vec<_>>>()?;
        let mut out = Vec::with_capacity(self.terms.len() + shifted.len());
        let (mut a, mut b) = (self.terms.iter().peekable(), shifted.into_iter().peekable());
        loop {
            let side = match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Greater,
                (None, Some(_)) => Ordering::Less,
                (Some((ea, _)), Some((eb, _))) => order.compare(ea, eb),
            };
            match side {
                Ordering::Greater => {
                    let (e, c) = a.next()?;
                    out.push((*e, x * c));
                }
                Ordering::Less => {
                    let (e, c) = b.next()?;
                    out.push((e, -(y * c)));
                }
                Ordering::Equal => {
                    let ((e, ca), (_, cb)) = (a.next()?, b.next()?);
                    let c = x * ca - y * cb;
                    if !c.is_zero() {
                        out.push((*e, c));
                    }
                }
            }
        }
        let mut z = Z { terms: out };
        z.primitive();
        Some(z)
    }

    /// Cancel the term at `at` with `g`, whose leading monomial divides it.
    fn cancel(&self, at: usize, g: &Z, order: Ord3) -> Option<Z> {
        let (e, c) = &self.terms[at];
        let m: [u32; MAX_VARS] = std::array::from_fn(|k| e[k] - g.lead()[k]);
        let d = gcd(c, &g.terms[0].1);
        self.minus(&(&g.terms[0].1 / &d), &(c / &d), &m, g, order)
    }

    /// The S-polynomial of `f` and `g`.
    fn s_polynomial(f: &Z, g: &Z, order: Ord3) -> Option<Z> {
        let lcm: [u32; MAX_VARS] = std::array::from_fn(|k| f.lead()[k].max(g.lead()[k]));
        let mf: [u32; MAX_VARS] = std::array::from_fn(|k| lcm[k] - f.lead()[k]);
        let mg: [u32; MAX_VARS] = std::array::from_fn(|k| lcm[k] - g.lead()[k]);
        let lifted = Z { terms: Vec::new() }.minus(&BigInt::zero(), &BigInt::from(-1), &mf, f, order)?;
        let d = gcd(&f.terms[0].1, &g.terms[0].1);
        lifted.minus(&(&g.terms[0].1 / &d), &(&f.terms[0].1 / &d), &mg, g, order)
    }
}

/// The greatest common divisor (non-negative), the larger operand reduced
/// modulo the smaller first: a binary gcd of unequal operands otherwise
/// walks the larger one bit by bit, which made this checker's content
/// computations nearly all of its time on large lex bases.
fn gcd(a: &BigInt, b: &BigInt) -> BigInt {
    let (big, small) = if a.bits() >= b.bits() { (a, b) } else { (b, a) };
    if small.is_zero() {
        return big.abs();
    }
    let rest = big % small;
    if rest.is_zero() { small.abs() } else { small.gcd(&rest) }
}

fn divides(a: &[u32; MAX_VARS], b: &[u32; MAX_VARS]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y)
}

/// Whether `p` reduces to zero by `by`, cancelling its leading term with
/// the first polynomial whose leading monomial divides it, again and again.
fn reduces_to_zero(mut p: Z, by: &[Z], order: Ord3) -> Result<bool, String> {
    while !p.terms.is_empty() {
        let Some(g) = by.iter().find(|g| !g.terms.is_empty() && divides(g.lead(), p.lead())) else {
            return Ok(false);
        };
        p = p.cancel(0, g, order).ok_or("an exponent above 2^32")?;
    }
    Ok(true)
}

pub fn judge(c: &Certificate) -> Result<Vec<String>, String> {
    if c.format != "groebner-certificate/2" {
        return Err(format!("unknown format {}", c.format));
    }
    let order = Ord3::named(&c.order).ok_or_else(|| format!("unknown order {}", c.order))?;
    let trace_order = Ord3::named(&c.trace.order).ok_or_else(|| format!("unknown trace order {}", c.trace.order))?;
    if c.vars.is_empty() || c.vars.len() > MAX_VARS {
        return Err(format!("between 1 and {MAX_VARS} variables"));
    }
    let parse_all = |texts: &[String], what: &str| -> Result<Vec<P>, String> {
        texts.iter().enumerate().map(|(i, t)| poly(t, &c.vars).map_err(|e| format!("{what} {i}: {e}"))).collect()
    };
    let f = parse_all(&c.generators, "generator")?;
    let g = parse_all(&c.basis, "basis element")?;
    if g.is_empty() || g.iter().any(P::is_empty) {
        return Err("the basis is empty or contains zero".into());
    }
    // 5 first, as it is cheapest: monic and reduced.
    let leads: Vec<Vec<u32>> =
        g.iter().map(|p| p.keys().max_by(|a, b| order.compare(a, b)).cloned().unwrap_or_default()).collect();
    for (i, p) in g.iter().enumerate() {
        if !p[&leads[i]].is_one() {
            return Err(format!("basis element {i} is not monic"));
        }
        for m in p.keys() {
            for (k, lead) in leads.iter().enumerate() {
                if k != i && lead.iter().zip(m).all(|(a, b)| a <= b) {
                    return Err(format!(
                        "a term of basis element {i} is divisible by the leading monomial of element {k}"
                    ));
                }
            }
        }
    }
    // 1. Replay the trace (on the homogenized generators, if it says so).
    if c.trace.homogenize && (trace_order != Ord3::Grevlex || c.vars.len() >= MAX_VARS) {
        return Err(format!("a homogenized trace runs in grevlex with at most {} variables", MAX_VARS - 1));
    }
    let start = |p: &P| if c.trace.homogenize { homogenized(p) } else { p.clone() };
    let mut h: Vec<Z> = f.iter().map(|p| Z::from_parsed(&start(p), trace_order)).collect();
    for (k, step) in c.trace.steps.iter().enumerate() {
        let n = h.len();
        let (i, j, by) = match step.as_slice() {
            [i, j, by @ ..] => (*i, *j, by),
            _ => return Err(format!("trace step {k} names no pair")),
        };
        if i >= n || j >= n || i == j || h[i].terms.is_empty() || h[j].terms.is_empty() {
            return Err(format!("trace step {k}: the pair ({i}, {j}) is not two earlier non-zero polynomials"));
        }
        let mut p = Z::s_polynomial(&h[i], &h[j], trace_order).ok_or("an exponent above 2^32")?;
        for &r in by {
            let reducer = h.get(r).filter(|g| !g.terms.is_empty() && r < n);
            let Some(reducer) = reducer else {
                return Err(format!("trace step {k}: reducer {r} is not an earlier non-zero polynomial"));
            };
            let Some(at) = p.terms.iter().position(|(e, _)| divides(reducer.lead(), e)) else {
                return Err(format!("trace step {k}: reducer {r} divides no term"));
            };
            p = p.cancel(at, reducer, trace_order).ok_or("an exponent above 2^32")?;
        }
        if p.terms.is_empty() {
            return Err(format!("trace step {k} reduces to zero"));
        }
        h.push(p);
    }
    // 2. The basis from the rebuilt polynomials, in the trace's order.
    if c.trace.homogenize {
        let n = c.vars.len();
        h = h.iter().map(|z| Z::from_parsed(&z.at_h_one(n), trace_order)).collect();
    }
    for (i, p) in g.iter().enumerate() {
        if !reduces_to_zero(Z::from_parsed(p, trace_order), &h, trace_order)? {
            return Err(format!("basis element {i} does not reduce to zero by the trace's polynomials"));
        }
    }
    // 3. The generators from the basis.
    let basis: Vec<Z> = g.iter().map(|p| Z::from_parsed(p, order)).collect();
    for (j, p) in f.iter().enumerate() {
        if !reduces_to_zero(Z::from_parsed(p, order), &basis, order)? {
            return Err(format!("generator {j} does not reduce to zero by the basis"));
        }
    }
    // 4. Buchberger's criterion.
    let (mut checked, mut coprime) = (0usize, 0usize);
    for k in 0..basis.len() {
        for i in 0..k {
            if basis[i].lead().iter().zip(basis[k].lead()).all(|(a, b)| *a == 0 || *b == 0) {
                coprime += 1;
                continue;
            }
            let s = Z::s_polynomial(&basis[i], &basis[k], order).ok_or("an exponent above 2^32")?;
            if !reduces_to_zero(s, &basis, order)? {
                return Err(format!("S(g{i}, g{k}) does not reduce to zero by the basis"));
            }
            checked += 1;
        }
    }
    Ok(vec![
        format!(
            "the trace's {} steps rebuild their polynomials from the {} generators{}",
            c.trace.steps.len(),
            f.len(),
            if c.trace.homogenize { " homogenized by a new last variable h, then read at h = 1" } else { "" }
        ),
        format!("each of the {} basis elements reduces to zero by them, so lies in the ideal", g.len()),
        "each generator reduces to zero by the basis, so the two ideals are equal".into(),
        format!(
            "{checked} S-polynomials reduce to zero by the basis and {coprime} pairs have coprime leading monomials (Buchberger's criterion)"
        ),
        "the basis is monic and reduced, hence the unique reduced Gröbner basis of the ideal".into(),
    ])
}

#[cfg(test)]
mod soundness;
#[cfg(test)]
mod tests;
