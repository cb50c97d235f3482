//! Sparse polynomials over ℚ with a monomial order, and their parser.

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

/// Monomial orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Lex,
    Grlex,
    Grevlex,
}

/// Exponent vector.
pub type Mono = Vec<u32>;

/// Compare two monomials in `order`.
pub fn cmp(order: Order, a: &[u32], b: &[u32]) -> Ordering {
    let degree = |m: &[u32]| m.iter().map(|&e| u64::from(e)).sum::<u64>();
    match order {
        Order::Lex => a.cmp(b),
        Order::Grlex => degree(a).cmp(&degree(b)).then_with(|| a.cmp(b)),
        Order::Grevlex => degree(a).cmp(&degree(b)).then_with(|| {
            for i in (0..a.len()).rev() {
                match a[i].cmp(&b[i]) {
                    Ordering::Equal => continue,
                    other => return other.reverse(),
                }
            }
            Ordering::Equal
        }),
    }
}

/// A polynomial: terms sorted by decreasing monomial, no zero coefficients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poly {
    pub terms: Vec<(Mono, BigRational)>,
}

impl Poly {
    pub fn zero() -> Poly {
        Poly { terms: Vec::new() }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn monomial(mono: Mono, coef: BigRational) -> Poly {
        if coef.is_zero() { Poly::zero() } else { Poly { terms: vec![(mono, coef)] } }
    }

    pub fn lm(&self) -> Option<&Mono> {
        self.terms.first().map(|(m, _)| m)
    }

    pub fn lc(&self) -> Option<&BigRational> {
        self.terms.first().map(|(_, c)| c)
    }

    fn normalize(order: Order, mut terms: Vec<(Mono, BigRational)>) -> Poly {
        terms.sort_by(|a, b| cmp(order, &b.0, &a.0));
        let mut out: Vec<(Mono, BigRational)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some((lm, lc)) if *lm == m => *lc += c,
                _ => out.push((m, c)),
            }
        }
        out.retain(|(_, c)| !c.is_zero());
        Poly { terms: out }
    }

    pub fn add(&self, other: &Poly, order: Order) -> Poly {
        Poly::normalize(order, self.terms.iter().chain(&other.terms).cloned().collect())
    }

    pub fn sub(&self, other: &Poly, order: Order) -> Poly {
        let negated = other.terms.iter().map(|(m, c)| (m.clone(), -c.clone()));
        Poly::normalize(order, self.terms.iter().cloned().chain(negated).collect())
    }

    pub fn scale_mono(&self, mono: &[u32], coef: &BigRational) -> Poly {
        if coef.is_zero() {
            return Poly::zero();
        }
        // Multiplying by a monomial preserves the order of terms.
        Poly {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| (m.iter().zip(mono).map(|(a, b)| a + b).collect(), c * coef))
                .collect(),
        }
    }

    pub fn mul(&self, other: &Poly, order: Order) -> Poly {
        let mut terms = Vec::new();
        for (m, c) in &other.terms {
            terms.extend(self.scale_mono(m, c).terms);
        }
        Poly::normalize(order, terms)
    }

    /// Print with the terms in decreasing order: `y^2 - 1/2*x`.
    pub fn show(&self, vars: &[String]) -> String {
        if self.terms.is_empty() {
            return "0".into();
        }
        let mut out = String::new();
        for (i, (m, c)) in self.terms.iter().enumerate() {
            let negative = c.is_negative();
            let magnitude = c.abs();
            if i == 0 {
                if negative {
                    out.push('-');
                }
            } else {
                out.push_str(if negative { " - " } else { " + " });
            }
            let factors: Vec<String> = m
                .iter()
                .zip(vars)
                .filter(|(e, _)| **e > 0)
                .map(|(e, v)| if *e == 1 { v.clone() } else { format!("{v}^{e}") })
                .collect();
            let coefficient = if magnitude.is_integer() {
                magnitude.numer().to_string()
            } else {
                format!("{}/{}", magnitude.numer(), magnitude.denom())
            };
            if factors.is_empty() {
                out.push_str(&coefficient);
            } else if magnitude.is_one() {
                out.push_str(&factors.join("*"));
            } else {
                out.push_str(&format!("{coefficient}*{}", factors.join("*")));
            }
        }
        out
    }
}

/// Largest coefficient a parsed polynomial may hold, in bits of numerator
/// plus denominator: `((9^10)^10)^10` is refused, not expanded.
pub const MAX_COEFFICIENT_BITS: u64 = 4096;

/// Bits of the largest coefficient (numerator plus denominator).
fn coefficient_bits(p: &Poly) -> u64 {
    p.terms.iter().map(|(_, c)| c.numer().bits() + c.denom().bits()).max().unwrap_or(0)
}

/// Total degree (0 for constants and for zero).
fn degree(p: &Poly) -> u32 {
    p.terms.iter().map(|(m, _)| m.iter().sum::<u32>()).max().unwrap_or(0)
}

/// Parse a polynomial over `vars`: sums of products of rational numbers,
/// variables, powers (`^` with a natural exponent) and parenthesized
/// sub-expressions. A sign only starts a sum, and a fraction is not raised
/// to a power without parentheses (`2/3^2` is refused), so that what is
/// accepted reads the same under the usual conventions. Errors name the
/// byte position and the token.
pub fn parse(text: &str, vars: &[String], order: Order, max_degree: u32) -> Result<Poly, String> {
    let mut p = Parser { text, pos: 0, vars, order, max_degree };
    let poly = p.sum(0)?;
    p.skip_space();
    if p.pos < text.len() {
        return Err(p.error("unexpected token"));
    }
    Ok(poly)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    vars: &'a [String],
    order: Order,
    max_degree: u32,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.text[self.pos..].starts_with(' ') {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.text[self.pos..].chars().next()
    }

    fn token(&self) -> String {
        let rest = &self.text[self.pos..];
        let end = rest
            .find(|c: char| c == ' ' || "+-*^()/".contains(c))
            .filter(|&e| e > 0)
            .unwrap_or_else(|| rest.chars().next().map_or(0, char::len_utf8));
        rest[..end].to_owned()
    }

    fn error(&self, what: &str) -> String {
        if self.pos >= self.text.len() {
            format!("position {}: {what} (end of input)", self.pos)
        } else {
            format!("position {}, token {:?}: {what}", self.pos, self.token())
        }
    }

    fn sum(&mut self, depth: usize) -> Result<Poly, String> {
        if depth > 16 {
            return Err(self.error("parentheses nested deeper than 16"));
        }
        let mut negate = false;
        if self.peek() == Some('-') {
            self.pos += 1;
            negate = true;
        } else if self.peek() == Some('+') {
            self.pos += 1;
        }
        let mut total = Poly::zero();
        loop {
            let term = self.product(depth)?;
            total = if negate { total.sub(&term, self.order) } else { total.add(&term, self.order) };
            match self.peek() {
                Some('+') => {
                    self.pos += 1;
                    negate = false;
                }
                Some('-') => {
                    self.pos += 1;
                    negate = true;
                }
                _ => return Ok(total),
            }
        }
    }

    fn product(&mut self, depth: usize) -> Result<Poly, String> {
        let mut value = self.power(depth)?;
        while self.peek() == Some('*') {
            self.pos += 1;
            let factor = self.power(depth)?;
            // Over a field the degree of a product is the sum: refuse before multiplying.
            if degree(&value) + degree(&factor) > self.max_degree {
                return Err(self.error(&format!("degree above the bound of {}", self.max_degree)));
            }
            self.check_coefficients(coefficient_bits(&value) + coefficient_bits(&factor))?;
            value = value.mul(&factor, self.order);
            self.check_coefficients(coefficient_bits(&value))?;
        }
        Ok(value)
    }

    fn check_coefficients(&self, bits: u64) -> Result<(), String> {
        if bits > MAX_COEFFICIENT_BITS {
            return Err(self.error(&format!("a coefficient above {MAX_COEFFICIENT_BITS} bits")));
        }
        Ok(())
    }

    fn power(&mut self, depth: usize) -> Result<Poly, String> {
        let start = self.pos;
        let base = self.atom(depth)?;
        if self.peek() != Some('^') {
            return Ok(base);
        }
        // `2/3^2` is 2/9 to some readers and 4/9 to others: refused, as the checker refuses it.
        if self.text[start..self.pos].contains('/') && !self.text[start..self.pos].trim_start().starts_with('(') {
            return Err(self.error("a power of a fraction needs parentheses: (a/b)^k"));
        }
        self.pos += 1;
        self.skip_space();
        let digits: String = self.text[self.pos..].chars().take_while(char::is_ascii_digit).collect();
        let exponent: u32 = digits.parse().map_err(|_| self.error("expected a natural exponent after ^"))?;
        if exponent > self.max_degree {
            return Err(self.error(&format!("exponent above the degree bound of {}", self.max_degree)));
        }
        self.pos += digits.len();
        // Refuse before computing: ((x+y+z)^10)^10 would otherwise build a huge polynomial first.
        if degree(&base).saturating_mul(exponent) > self.max_degree {
            return Err(self.error(&format!("degree above the bound of {}", self.max_degree)));
        }
        self.check_coefficients(coefficient_bits(&base).saturating_mul(u64::from(exponent)))?;
        let mut result = Poly::monomial(vec![0; self.vars.len()], BigRational::one());
        for _ in 0..exponent {
            result = result.mul(&base, self.order);
        }
        self.check_coefficients(coefficient_bits(&result))?;
        Ok(result)
    }

    fn atom(&mut self, depth: usize) -> Result<Poly, String> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let inner = self.sum(depth + 1)?;
                if self.peek() != Some(')') {
                    return Err(self.error("expected ')'"));
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(c) if c.is_ascii_digit() => {
                let number = self.integer()?;
                if self.peek() == Some('/') {
                    self.pos += 1;
                    self.skip_space();
                    let denominator = self.integer()?;
                    if denominator.is_zero() {
                        return Err(self.error("division by zero"));
                    }
                    return Ok(Poly::monomial(vec![0; self.vars.len()], BigRational::new(number, denominator)));
                }
                Ok(Poly::monomial(vec![0; self.vars.len()], BigRational::from_integer(number)))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let name: String =
                    self.text[self.pos..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                let index =
                    self.vars.iter().position(|v| *v == name).ok_or_else(|| self.error("not a declared variable"))?;
                self.pos += name.len();
                let mut mono = vec![0; self.vars.len()];
                mono[index] = 1;
                Ok(Poly::monomial(mono, BigRational::one()))
            }
            _ => Err(self.error("expected a number, a variable or '('")),
        }
    }

    fn integer(&mut self) -> Result<BigInt, String> {
        self.skip_space();
        let digits: String = self.text[self.pos..].chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            return Err(self.error("expected digits"));
        }
        if digits.len() > 64 {
            return Err(self.error("a coefficient above 64 digits"));
        }
        self.pos += digits.len();
        digits.parse().map_err(|_| self.error("not an integer"))
    }
}
