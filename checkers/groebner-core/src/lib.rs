//! The check of a Gröbner basis certificate by polynomial arithmetic only,
//! as a plain library: no Buchberger of its own, its own parser and
//! map-based arithmetic, sharing no code with the producer.
//! 1. every basis element equals the stated combination of the generators
//!    (so the basis lies in the ideal of the generators);
//! 2. every generator equals the stated combination of the basis (so the
//!    generators lie in the ideal of the basis: the ideals are equal);
//! 3. every S-polynomial of the basis has the stated standard representation
//!    (Buchberger's criterion: the basis is a Gröbner basis);
//! 4. the basis is reduced (monic, no term divisible by another leading
//!    monomial), so it is the unique reduced Gröbner basis of the ideal.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use serde::Deserialize;

/// A `groebner-certificate/1`: polynomials as strings in one canonical syntax.
#[derive(Debug, Clone, Deserialize)]
pub struct Certificate {
    /// Variables, largest first.
    pub vars: Vec<String>,
    /// `lex`, `grlex` or `grevlex`.
    pub order: String,
    pub generators: Vec<String>,
    /// The claimed reduced Gröbner basis.
    pub basis: Vec<String>,
    /// One row per basis element: its coefficients over the generators.
    pub cofactors: Vec<Vec<String>>,
    /// One row per generator: its coefficients over the basis.
    pub reductions: Vec<Vec<String>>,
    /// A standard representation of every S-polynomial of the basis.
    pub spolys: Vec<SpolyCertificate>,
}

/// The standard representation of `S(g_i, g_k)`, `i < k`.
#[derive(Debug, Clone, Deserialize)]
pub struct SpolyCertificate {
    pub pair: [usize; 2],
    pub quotients: Vec<String>,
}

/// Sparse polynomial: exponent vector → non-zero coefficient.
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

pub fn times(a: &P, b: &P) -> P {
    let mut out = P::new();
    for (ma, ca) in a {
        for (mb, cb) in b {
            let m: Vec<u32> = ma.iter().zip(mb).map(|(x, y)| x + y).collect();
            let entry = out.entry(m.clone()).or_insert_with(BigRational::zero);
            *entry += ca * cb;
            if entry.is_zero() {
                out.remove(&m);
            }
        }
    }
    out
}

pub fn compare(order: &str, a: &[u32], b: &[u32]) -> Ordering {
    let total = |m: &[u32]| m.iter().map(|&e| u64::from(e)).sum::<u64>();
    match order {
        "lex" => a.cmp(b),
        "grlex" => total(a).cmp(&total(b)).then(a.cmp(b)),
        _ => total(a).cmp(&total(b)).then_with(|| {
            // grevlex: the smaller exponent in the last differing variable wins.
            a.iter().zip(b).rev().find(|(x, y)| x != y).map_or(Ordering::Equal, |(x, y)| y.cmp(x))
        }),
    }
}

pub fn leading<'a>(order: &str, p: &'a P) -> Option<(&'a Vec<u32>, &'a BigRational)> {
    p.iter().max_by(|(a, _), (b, _)| compare(order, a, b))
}

/// Tokens of the polynomial syntax.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(BigInt),
    Var(usize),
    Op(char),
}

fn tokenize(text: &str, vars: &[String]) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            out.push(Tok::Num(digits.parse().map_err(|_| format!("bad number {digits}"))?));
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            out.push(Tok::Var(vars.iter().position(|v| *v == name).ok_or_else(|| format!("unknown variable {name}"))?));
        } else if "+-*/^()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else {
            return Err(format!("unexpected character {c:?}"));
        }
    }
    Ok(out)
}

/// Precedence climbing over the tokens.
struct Expr<'a> {
    toks: &'a [Tok],
    at: usize,
    width: usize,
}

impl Expr<'_> {
    fn constant(&self, c: BigRational) -> P {
        let mut p = P::new();
        if !c.is_zero() {
            p.insert(vec![0; self.width], c);
        }
        p
    }

    fn parse(&mut self, min: u8) -> Result<P, String> {
        let mut left = self.unary()?;
        while let Some(Tok::Op(op)) = self.toks.get(self.at).cloned() {
            let (prec, right_assoc) = match op {
                '+' | '-' => (1, false),
                '*' => (2, false),
                '/' => (3, false),
                '^' => (4, true),
                _ => break,
            };
            if prec < min {
                break;
            }
            self.at += 1;
            let next = if right_assoc { prec } else { prec + 1 };
            left = match op {
                '^' => {
                    let Some(Tok::Num(n)) = self.toks.get(self.at).cloned() else {
                        return Err("exponent must be a number".into());
                    };
                    self.at += 1;
                    let n: u32 = n.try_into().map_err(|_| "exponent too large".to_owned())?;
                    if n > 64 {
                        return Err("exponent too large".into());
                    }
                    let mut acc = self.constant(BigRational::one());
                    for _ in 0..n {
                        acc = times(&acc, &left);
                    }
                    acc
                }
                '/' => {
                    let right = self.parse(next)?;
                    // Only division by a non-zero constant is meaningful here.
                    let Some(c) = (right.len() == 1).then(|| right.get(&vec![0; self.width]).cloned()).flatten() else {
                        return Err("division by a non-constant".into());
                    };
                    times(&left, &self.constant(BigRational::one() / c))
                }
                '*' => times(&left, &self.parse(next)?),
                _ => {
                    let right = self.parse(next)?;
                    let mut sum = left;
                    add_into(&mut sum, &right, if op == '+' { 1 } else { -1 });
                    sum
                }
            };
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<P, String> {
        match self.toks.get(self.at).cloned() {
            Some(Tok::Op('-')) => {
                self.at += 1;
                let inner = self.parse(2)?;
                let mut negated = P::new();
                add_into(&mut negated, &inner, -1);
                Ok(negated)
            }
            Some(Tok::Op('(')) => {
                self.at += 1;
                let inner = self.parse(0)?;
                if self.toks.get(self.at) != Some(&Tok::Op(')')) {
                    return Err("missing )".into());
                }
                self.at += 1;
                Ok(inner)
            }
            Some(Tok::Num(n)) => {
                self.at += 1;
                Ok(self.constant(BigRational::from_integer(n)))
            }
            Some(Tok::Var(v)) => {
                self.at += 1;
                let mut m = vec![0; self.width];
                m[v] = 1;
                Ok(P::from([(m, BigRational::one())]))
            }
            other => Err(format!("unexpected {other:?}")),
        }
    }
}

pub fn poly(text: &str, vars: &[String]) -> Result<P, String> {
    let toks = tokenize(text, vars)?;
    let mut e = Expr { toks: &toks, at: 0, width: vars.len() };
    let p = e.parse(0)?;
    if e.at != toks.len() {
        return Err(format!("trailing tokens in {text:?}"));
    }
    Ok(p)
}

pub fn combination(quotients: &[P], polys: &[P]) -> P {
    let mut sum = P::new();
    for (q, p) in quotients.iter().zip(polys) {
        add_into(&mut sum, &times(q, p), 1);
    }
    sum
}

pub fn judge(c: &Certificate) -> Result<Vec<String>, String> {
    let order = c.order.as_str();
    if !matches!(order, "lex" | "grlex" | "grevlex") {
        return Err(format!("unknown order {order}"));
    }
    let parse_all = |texts: &[String], what: &str| -> Result<Vec<P>, String> {
        texts.iter().map(|t| poly(t, &c.vars).map_err(|e| format!("{what}: {e}"))).collect()
    };
    let f = parse_all(&c.generators, "generator")?;
    let g = parse_all(&c.basis, "basis")?;
    if g.iter().any(P::is_empty) {
        return Err("the basis contains zero".into());
    }
    // 1. Basis elements from the generators.
    if c.cofactors.len() != g.len() {
        return Err("one row of cofactors per basis element is required".into());
    }
    for (i, row) in c.cofactors.iter().enumerate() {
        if row.len() != f.len() {
            return Err(format!("cofactor row {i} has {} entries for {} generators", row.len(), f.len()));
        }
        if combination(&parse_all(row, "cofactor")?, &f) != g[i] {
            return Err(format!("basis element {i} is not the stated combination of the generators"));
        }
    }
    // 2. Generators from the basis.
    if c.reductions.len() != f.len() {
        return Err("one reduction per generator is required".into());
    }
    for (j, row) in c.reductions.iter().enumerate() {
        if row.len() != g.len() || combination(&parse_all(row, "quotient")?, &g) != f[j] {
            return Err(format!("generator {j} is not the stated combination of the basis"));
        }
    }
    // 3. Standard representations of every S-polynomial.
    let mut covered = BTreeMap::new();
    for s in &c.spolys {
        let [i, k] = s.pair;
        if i >= k || k >= g.len() || s.quotients.len() != g.len() {
            return Err(format!("malformed S-polynomial entry {:?}", s.pair));
        }
        let (mi, ci) = leading(order, &g[i]).ok_or("zero basis element")?;
        let (mk, ck) = leading(order, &g[k]).ok_or("zero basis element")?;
        let lcm: Vec<u32> = mi.iter().zip(mk).map(|(a, b)| *a.max(b)).collect();
        let multiplier = |m: &[u32], c: &BigRational| -> P {
            P::from([(lcm.iter().zip(m).map(|(l, x)| l - x).collect::<Vec<u32>>(), BigRational::one() / c)])
        };
        let mut spoly = times(&multiplier(mi, ci), &g[i]);
        add_into(&mut spoly, &times(&multiplier(mk, ck), &g[k]), -1);
        let q = parse_all(&s.quotients, "S-polynomial quotient")?;
        if combination(&q, &g) != spoly {
            return Err(format!("the representation of S(g{i}, g{k}) does not sum to it"));
        }
        let bound = leading(order, &spoly).map(|(m, _)| m.clone());
        for (l, ql) in q.iter().enumerate().filter(|(_, ql)| !ql.is_empty()) {
            let product = times(ql, &g[l]);
            let lm = leading(order, &product).map(|(m, _)| m.clone());
            let within = match (&lm, &bound) {
                (Some(a), Some(b)) => compare(order, a, b) != Ordering::Greater,
                (None, _) => true,
                (Some(_), None) => false,
            };
            if !within {
                return Err(format!(
                    "the representation of S(g{i}, g{k}) is not standard (term {l} exceeds its leading monomial)"
                ));
            }
        }
        covered.insert((i, k), ());
    }
    let pairs = g.len() * g.len().saturating_sub(1) / 2;
    if covered.len() != pairs {
        return Err(format!("{} of {pairs} S-polynomials have representations", covered.len()));
    }
    // 4. Reduced.
    let leads: Vec<Vec<u32>> =
        g.iter().map(|p| leading(order, p).map(|(m, _)| m.clone()).unwrap_or_default()).collect();
    for (i, p) in g.iter().enumerate() {
        if leading(order, p).map(|(_, c)| c.is_one()) != Some(true) {
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
    Ok(vec![
        format!("each of the {} basis elements is the stated combination of the {} generators", g.len(), f.len()),
        "each generator is the stated combination of the basis, so the two ideals are equal".into(),
        format!("all {pairs} S-polynomials have standard representations (Buchberger's criterion)"),
        "the basis is monic and reduced, hence the unique reduced Gröbner basis of the ideal".into(),
    ])
}

#[cfg(test)]
mod tests;
