//! The engine's arithmetic: monomials as fixed arrays of exponents with
//! their total degree and a divisibility mask, polynomials as vectors of
//! terms sorted by decreasing monomial with integer coefficients, kept
//! primitive (fraction-free reduction, content divided out).

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use crate::poly::{Order, Poly};

/// The most variables the engine represents.
pub const MAX_VARS: usize = 12;

/// A monomial: exponents (zero beyond the ring's variables) and total degree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Mono {
    pub deg: u32,
    pub e: [u16; MAX_VARS],
}

impl Mono {
    /// `None` when an exponent does not fit the representation.
    pub fn from_exponents(exponents: &[u32]) -> Option<Mono> {
        let mut m = Mono::default();
        for (slot, &x) in m.e.iter_mut().zip(exponents) {
            *slot = u16::try_from(x).ok()?;
            m.deg += x;
        }
        (exponents.len() <= MAX_VARS).then_some(m)
    }

    pub fn exponents(&self, nvars: usize) -> Vec<u32> {
        self.e[..nvars].iter().map(|&x| u32::from(x)).collect()
    }

    /// The product; `None` when an exponent would overflow.
    pub fn mul(&self, other: &Mono) -> Option<Mono> {
        let mut m = Mono { deg: self.deg + other.deg, e: [0; MAX_VARS] };
        for i in 0..MAX_VARS {
            m.e[i] = self.e[i].checked_add(other.e[i])?;
        }
        Some(m)
    }

    pub fn divides(&self, other: &Mono) -> bool {
        self.deg <= other.deg && self.e.iter().zip(&other.e).all(|(a, b)| a <= b)
    }

    /// `other / self`, for `self` dividing `other`.
    pub fn quotient_of(&self, other: &Mono) -> Mono {
        let mut m = Mono { deg: other.deg - self.deg, e: [0; MAX_VARS] };
        for i in 0..MAX_VARS {
            m.e[i] = other.e[i] - self.e[i];
        }
        m
    }

    pub fn lcm(&self, other: &Mono) -> Mono {
        let mut m = Mono::default();
        for i in 0..MAX_VARS {
            m.e[i] = self.e[i].max(other.e[i]);
            m.deg += u32::from(m.e[i]);
        }
        m
    }

    pub fn coprime(&self, other: &Mono) -> bool {
        self.e.iter().zip(&other.e).all(|(a, b)| *a == 0 || *b == 0)
    }

    /// A bit per variable present: `a | b` needs `mask(a) & !mask(b) == 0`.
    pub fn mask(&self) -> u32 {
        self.e.iter().enumerate().fold(0, |m, (i, &x)| if x > 0 { m | 1 << i } else { m })
    }

    pub fn variable(i: usize) -> Mono {
        let mut m = Mono { deg: 1, e: [0; MAX_VARS] };
        m.e[i] = 1;
        m
    }
}

/// Compare two monomials in `order` (variables largest first).
pub fn compare(order: Order, a: &Mono, b: &Mono) -> Ordering {
    match order {
        Order::Lex => a.e.cmp(&b.e),
        Order::Grlex => a.deg.cmp(&b.deg).then_with(|| a.e.cmp(&b.e)),
        Order::Grevlex => a.deg.cmp(&b.deg).then_with(|| {
            for i in (0..MAX_VARS).rev() {
                if a.e[i] != b.e[i] {
                    return b.e[i].cmp(&a.e[i]);
                }
            }
            Ordering::Equal
        }),
    }
}

/// A polynomial with integer coefficients, terms by decreasing monomial.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pol {
    pub terms: Vec<(Mono, BigInt)>,
}

impl Pol {
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn lm(&self) -> &Mono {
        &self.terms[0].0
    }

    pub fn lc(&self) -> &BigInt {
        &self.terms[0].1
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The largest total degree of a term.
    pub fn degree(&self) -> u32 {
        self.terms.iter().map(|(m, _)| m.deg).max().unwrap_or(0)
    }

    /// Clear denominators and divide out the content: a primitive
    /// polynomial with a positive leading coefficient; `None` when a
    /// monomial does not fit.
    pub fn from_rational(p: &Poly, order: Order) -> Option<Pol> {
        let denominators = p.terms.iter().fold(BigInt::one(), |l, (_, c)| l.lcm(c.denom()));
        let terms = p
            .terms
            .iter()
            .map(|(m, c)| Some((Mono::from_exponents(m)?, c.numer() * (&denominators / c.denom()))))
            .collect::<Option<Vec<_>>>()?;
        let mut pol = Pol { terms };
        pol.terms.sort_by(|a, b| compare(order, &b.0, &a.0));
        pol.make_primitive(&mut 0);
        Some(pol)
    }

    /// The monic rational polynomial.
    pub fn to_monic(&self, nvars: usize) -> Poly {
        let lc = self.lc().clone();
        Poly {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| (m.exponents(nvars), BigRational::new(c.clone(), lc.clone())))
                .collect(),
        }
    }

    /// Divide by the gcd of the coefficients; make the leading one positive.
    pub fn make_primitive(&mut self, work: &mut u64) {
        let Some((_, first)) = self.terms.first() else { return };
        let negative = first.is_negative();
        let mut content = content(self.terms.iter().map(|(_, c)| c), work);
        if negative {
            content = -content;
        }
        if !content.is_one() {
            for (_, c) in &mut self.terms {
                *work += words(c) * words(&content);
                *c = &*c / &content;
            }
        }
    }
}

/// `a·p − b·u·g` in `order`, counting into `work` one per term written
/// plus its coefficient's 64-bit words times the multipliers' (what
/// schoolbook multiplication costs, so growing coefficients cost what they
/// take); `None` when a monomial overflows.
pub fn combine(
    order: Order,
    p: &[(Mono, BigInt)],
    a: &BigInt,
    b: &BigInt,
    u: &Mono,
    g: &[(Mono, BigInt)],
    work: &mut u64,
) -> Option<Vec<(Mono, BigInt)>> {
    let mut out = Vec::with_capacity(p.len() + g.len());
    let scale = |c: &BigInt| if a.is_one() { c.clone() } else { a * c };
    let (mut i, mut j) = (0, 0);
    let mut gj: Option<(Mono, &BigInt)> = match g.first() {
        Some((m, c)) => Some((u.mul(m)?, c)),
        None => None,
    };
    while i < p.len() || gj.is_some() {
        let ord = match (&p.get(i), &gj) {
            (Some((pm, _)), Some((gm, _))) => compare(order, pm, gm),
            (Some(_), None) => Ordering::Greater,
            _ => Ordering::Less,
        };
        match ord {
            Ordering::Greater => {
                out.push((p[i].0, scale(&p[i].1)));
                i += 1;
            }
            Ordering::Less => {
                let (gm, gc) = gj.take()?;
                out.push((gm, -(b * gc)));
                j += 1;
                gj = match g.get(j) {
                    Some((m, c)) => Some((u.mul(m)?, c)),
                    None => None,
                };
            }
            Ordering::Equal => {
                let (gm, gc) = gj.take()?;
                let c = scale(&p[i].1) - b * gc;
                if !c.is_zero() {
                    out.push((gm, c));
                }
                i += 1;
                j += 1;
                gj = match g.get(j) {
                    Some((m, c)) => Some((u.mul(m)?, c)),
                    None => None,
                };
            }
        }
    }
    let factor = words(a).max(words(b));
    *work += out.iter().map(|(_, c)| 1 + words(c) * factor).sum::<u64>();
    Some(out)
}

/// Passes over the smaller operand's words a binary gcd makes for each of
/// them: about one per bit.
const GCD_PASSES: u64 = 64;

/// The greatest common divisor of `a` and `b` (non-negative), the larger
/// reduced modulo the smaller first: the binary gcd then runs on operands of
/// the smaller one's size instead of walking the larger one bit by bit.
/// Charged as the division plus [`GCD_PASSES`] passes per word of the smaller.
pub fn gcd(a: &BigInt, b: &BigInt, work: &mut u64) -> BigInt {
    let (big, small) = if a.bits() >= b.bits() { (a, b) } else { (b, a) };
    if small.is_zero() {
        return big.abs();
    }
    let s = words(small);
    *work += words(big) * s + GCD_PASSES * s * s;
    let rest = big % small;
    if rest.is_zero() { small.abs() } else { small.gcd(&rest) }
}

/// The gcd of `coefficients` (zero for none), from the smallest on, stopping
/// at one.
pub fn content<'c>(coefficients: impl Iterator<Item = &'c BigInt> + Clone, work: &mut u64) -> BigInt {
    let Some(smallest) = coefficients.clone().min_by_key(|c| c.bits()) else { return BigInt::zero() };
    let mut g = smallest.abs();
    for c in coefficients {
        *work += 1;
        if g.is_one() {
            break;
        }
        g = gcd(&g, c, work);
    }
    g
}

/// 64-bit words of an integer.
pub fn words(n: &BigInt) -> u64 {
    n.bits() / 64 + 1
}

/// The multipliers making `a·lc_p − b·lc_g = 0` with the smallest `a`:
/// `(lc_g / d, lc_p / d)` for `d = gcd`, `a` positive.
pub fn cancelling(lc_p: &BigInt, lc_g: &BigInt, work: &mut u64) -> (BigInt, BigInt) {
    let mut d = gcd(lc_p, lc_g, work);
    if lc_g.is_negative() {
        d = -d;
    }
    (lc_g / &d, lc_p / &d)
}
