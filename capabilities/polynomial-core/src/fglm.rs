//! FGLM: the lexicographic basis of a zero-dimensional ideal from its
//! reduced basis in another order, by linear algebra in the quotient ring
//! (Faugère, Gianni, Lazard and Mora, 1993). Monomials are visited in
//! increasing lex order; each one's normal form, a vector over the standard
//! monomials, is either independent of those already kept (the monomial is
//! standard for lex) or a combination of them (a lex basis element).
//!
//! The linear algebra runs modulo primes below 2³¹ (word arithmetic, also in
//! WebAssembly), one walk per prime; the coefficients are lifted by the
//! Chinese remainder theorem and read back as fractions by rational
//! reconstruction. Over ℚ the same walk multiplied and normalized fractions
//! whose gcds took four fifths of its time and grew with every step
//! (Katsura-5 lex did not finish within the budget).
//!
//! Nothing modular is trusted. A prime whose walk decides differently from
//! another's lost rank (a combination over ℚ vanished modulo it): the walk
//! that keeps a monomial where the other found a relation is the one kept.
//! A coefficient's fraction, once read by rational reconstruction, is kept
//! while every later prime agrees with it; once each has been confirmed by a
//! prime after the one it was read at, they are taken only when checked
//! exactly: every element's normal
//! form is zero (its monomials' vectors, built over ℚ by the multiplication
//! matrices, cancel) and the monomials outside its leading monomials number
//! the quotient's dimension. Then the elements lie in the ideal and leave no
//! more standard monomials than it has, so they are its lex Gröbner basis;
//! their other monomials are standard, so it is reduced.

use std::collections::{BTreeMap, HashMap, HashSet};

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use crate::buchberger::normal_form;
use crate::poly::Order;
use crate::sparse::{MAX_VARS, Mono, Pol, compare, content, gcd, words};

mod modular;
pub(crate) use modular::primes;
use modular::*;

/// The primes are below this: a residue times a residue plus a residue fits
/// in 64 bits.
const PRIME_BOUND: u64 = 1 << 31;

/// The monomials not divisible by any of `leads`, or `None` when there are
/// infinitely many (some variable has no pure power among them) or more
/// than `limit`.
fn staircase(leads: &[Mono], nvars: usize, limit: usize) -> Option<Vec<Mono>> {
    let pure = |i: usize| leads.iter().any(|l| l.e[i] > 0 && l.deg == u32::from(l.e[i]));
    if !(0..nvars).all(pure) {
        return None;
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut queue = vec![Mono::default()];
    while let Some(m) = queue.pop() {
        if leads.iter().any(|l| l.divides(&m)) || !seen.insert(m) {
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

/// Multiplication by one variable in the quotient: column `b` is the normal
/// form of the variable times standard monomial `b`, as integers over `den`.
struct Matrix {
    columns: Vec<Vec<BigInt>>,
    den: BigInt,
}

/// A vector over the standard monomials: integers over a positive `den`.
struct Exact {
    num: Vec<BigInt>,
    den: BigInt,
}

/// What a prime's walk decided about one monomial: where it came from (a kept
/// monomial's index and the variable it was multiplied by; `None` for 1) and
/// whether it was kept (otherwise it leads a basis element).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decision {
    mono: Mono,
    parent: Option<(usize, usize)>,
    kept: bool,
}

/// One prime's walk: its decisions, and for each basis element (in order)
/// its leading monomial's coefficients over the monomials kept before it.
struct Walk {
    decisions: Vec<Decision>,
    relations: Vec<Vec<u64>>,
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
    to_lex_with(order, basis, nvars, limit, work, max_work, primes())
}

/// [`to_lex`] with the primes given (tests pass unlucky ones first).
pub(crate) fn to_lex_with(
    order: Order,
    basis: &[Pol],
    nvars: usize,
    limit: usize,
    work: &mut u64,
    max_work: u64,
    primes: impl Iterator<Item = u64>,
) -> Option<Vec<Pol>> {
    if basis.iter().any(|g| g.lm().deg == 0) {
        return Some(vec![Pol { terms: vec![(Mono::default(), BigInt::one())] }]);
    }
    let leads: Vec<Mono> = basis.iter().map(|g| *g.lm()).collect();
    let standard = staircase(&leads, nvars, limit)?;
    let index: HashMap<Mono, usize> = standard.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let matrices = (0..nvars)
        .map(|i| multiplication(order, basis, &standard, &index, i, work, max_work))
        .collect::<Option<Vec<Matrix>>>()?;
    let unit = index[&Mono::default()];
    let d = standard.len();

    let mut reference: Option<Walk> = None;
    let mut lifted = Lifted::default();
    for p in primes {
        debug_assert!(is_prime(p) && p < PRIME_BOUND, "{p}");
        // The matrices modulo p, unless p divides a denominator.
        *work += matrices.iter().map(|m| m.columns.iter().flatten().map(words).sum::<u64>()).sum::<u64>();
        if *work > max_work {
            return None;
        }
        let Some(images) = matrices.iter().map(|m| modular(m, p)).collect::<Option<Vec<Vec<u64>>>>() else {
            continue;
        };
        let walk = walk_modulo(&images, unit, d, nvars, p, work, max_work)?;
        match &reference {
            Some(r) if r.decisions == walk.decisions => {}
            Some(r) if !keeps_first(&walk.decisions, &r.decisions) => continue,
            // The first prime, or one that kept what the reference's prime lost.
            _ => lifted = Lifted::default(),
        }
        let settled = lifted.add(&walk.relations, p, work);
        reference = Some(walk);
        if settled {
            let walk = reference.as_ref()?;
            let fractions: Vec<&[Option<BigRational>]> = lifted.fractions.iter().map(Vec::as_slice).collect();
            if let Some(out) = checked(walk, &fractions, &matrices, unit, d, nvars, limit, work, max_work) {
                return Some(out);
            }
            // Not the basis: read every fraction again at a larger modulus.
            lifted.fractions.iter_mut().flatten().for_each(|q| *q = None);
        }
        if *work > max_work {
            return None;
        }
    }
    None
}

/// The relations' coefficients lifted over the primes so far, and each
/// one's fraction once rational reconstruction has found one that the
/// primes since agree with.
#[derive(Default)]
struct Lifted {
    residues: Vec<Vec<BigInt>>,
    modulus: BigInt,
    fractions: Vec<Vec<Option<BigRational>>>,
    /// Primes lifted, and how many there must be before the extended
    /// Euclidean algorithm is tried again after it found no fraction (its
    /// cost grows with the modulus; the schedule lifts at most a quarter
    /// more primes than needed).
    primes: usize,
    euclid_at: usize,
}

impl Lifted {
    /// Add one prime's coefficients; whether every coefficient now has a
    /// fraction that a prime after the one it was read at agrees with.
    fn add(&mut self, relations: &[Vec<u64>], p: u64, work: &mut u64) -> bool {
        if self.residues.is_empty() {
            self.residues = relations.iter().map(|r| r.iter().map(|&c| BigInt::from(c)).collect()).collect();
            self.fractions = relations.iter().map(|r| vec![None; r.len()]).collect();
            self.modulus = BigInt::from(p);
            self.primes = 1;
            return false;
        }
        if residue(&self.modulus, p) == 0 {
            // A prime lifted already (the lift would multiply the modulus by it for nothing).
            return false;
        }
        // A fraction this prime disagrees with is dropped.
        for (fractions, images) in self.fractions.iter_mut().zip(relations) {
            for (q, &a) in fractions.iter_mut().zip(images) {
                if let Some(f) = q {
                    *work += words(f.numer()) + words(f.denom());
                    let den = residue(f.denom(), p);
                    if den == 0 || residue(f.numer(), p) * inverse(den, p) % p != a {
                        *q = None;
                    }
                }
            }
        }
        // Chinese remainders.
        let inv = inverse(residue(&self.modulus, p), p);
        let size = words(&self.modulus);
        for (lifted, images) in self.residues.iter_mut().zip(relations) {
            for (r, &a) in lifted.iter_mut().zip(images) {
                *work += 2 * size;
                let t = (a + p - residue(r, p)) % p * inv % p;
                if t != 0 {
                    *r += &self.modulus * t;
                }
            }
        }
        self.modulus *= p;
        self.primes += 1;
        // Read the missing fractions, up to the first that has none yet. A
        // relation's coefficients tend to share a denominator: the ones read
        // already give a multiplier that often makes the next one's residue
        // its numerator, without the extended Euclidean algorithm.
        let bound: BigInt = (&self.modulus / 2u32).sqrt();
        let size = words(&self.modulus);
        let mut settled = true;
        for (fractions, residues) in self.fractions.iter_mut().zip(&self.residues) {
            let mut hint = BigInt::one();
            for (q, r) in fractions.iter_mut().zip(residues) {
                if let Some(f) = q {
                    hint = lcm(&hint, f.denom(), work);
                    continue;
                }
                settled = false;
                *work += 2 * size * (size + words(&hint));
                let mut numerator = (r * &hint).mod_floor(&self.modulus);
                if numerator > &self.modulus / 2u32 {
                    numerator -= &self.modulus;
                }
                if numerator.abs() <= bound {
                    let f = fraction(numerator, hint.clone(), work);
                    if *f.denom() <= bound {
                        *q = Some(f);
                        continue;
                    }
                }
                if self.primes < self.euclid_at {
                    return false;
                }
                *work += 64 * size * size;
                match rational(r, &self.modulus, &bound) {
                    Some(f) => {
                        hint = lcm(&hint, f.denom(), work);
                        *q = Some(f);
                    }
                    None => {
                        self.euclid_at = self.primes + self.primes.div_ceil(4);
                        return false;
                    }
                }
            }
        }
        settled
    }
}

/// Multiplication by variable `i` in the quotient, exactly.
fn multiplication(
    order: Order,
    basis: &[Pol],
    standard: &[Mono],
    index: &HashMap<Mono, usize>,
    i: usize,
    work: &mut u64,
    max_work: u64,
) -> Option<Matrix> {
    let d = standard.len();
    let mut columns = Vec::with_capacity(d);
    let mut dens = Vec::with_capacity(d);
    for b in standard {
        let m = b.mul(&Mono::variable(i))?;
        let mut column = vec![BigInt::zero(); d];
        if let Some(&j) = index.get(&m) {
            column[j] = BigInt::one();
            dens.push(BigInt::one());
        } else {
            // NF(m) = nf / scale.
            let (nf, scale) =
                normal_form(order, &Pol { terms: vec![(m, BigInt::one())] }, 0, basis, work, max_work).ok()?;
            let (numer, denom) = (scale.numer(), scale.denom());
            for (t, c) in nf.terms {
                let c = c * denom;
                column[*index.get(&t)?] = if numer.is_negative() { -c } else { c };
            }
            dens.push(numer.abs());
        }
        columns.push(column);
    }
    let den = dens.iter().fold(BigInt::one(), |l, e| lcm(&l, e, work));
    for (column, e) in columns.iter_mut().zip(&dens) {
        let factor = &den / e;
        if !factor.is_one() {
            for c in column.iter_mut().filter(|c| !c.is_zero()) {
                *work += words(c) * words(&factor);
                *c *= &factor;
            }
        }
    }
    Some(Matrix { columns, den })
}

/// A monomial waiting in the walk: its vector modulo the prime and where it came from.
type Candidate = (Mono, Vec<u64>, Option<(usize, usize)>);

/// The FGLM walk modulo `p`; `None` when `work` passes `max_work` (or a monomial overflows).
fn walk_modulo(
    matrices: &[Vec<u64>],
    unit: usize,
    d: usize,
    nvars: usize,
    p: u64,
    work: &mut u64,
    max_work: u64,
) -> Option<Walk> {
    // Rows in echelon form: (pivot, vector, its combination of the kept monomials).
    let mut rows: Vec<(usize, Vec<u64>, Vec<u64>)> = Vec::new();
    let mut kept = 0usize;
    let mut leads: Vec<Mono> = Vec::new();
    let mut walk = Walk { decisions: Vec::new(), relations: Vec::new() };
    let mut candidates: BTreeMap<[u16; MAX_VARS], Candidate> = BTreeMap::new();
    let one = Mono::default();
    let mut start = vec![0; d];
    start[unit] = 1;
    candidates.insert(one.e, (one, start, None));
    while let Some((_, (m, v, parent))) = candidates.pop_first() {
        if leads.iter().any(|l| l.divides(&m)) {
            continue;
        }
        *work += (2 * d * (rows.len() + 1)) as u64;
        if *work > max_work {
            return None;
        }
        let mut w = v.clone();
        let mut comb = vec![0u64; kept];
        for (pivot, row, row_comb) in &rows {
            let c = w[*pivot];
            if c == 0 {
                continue;
            }
            let minus = p - c;
            for (x, &y) in w.iter_mut().zip(row) {
                if y != 0 {
                    *x = (*x + minus * y) % p;
                }
            }
            for (x, &y) in comb.iter_mut().zip(row_comb) {
                if y != 0 {
                    *x = (*x + c * y) % p;
                }
            }
        }
        match w.iter().position(|&x| x != 0) {
            None => {
                // m = Σ comb[s] · kept[s] in the quotient: a lex basis element.
                walk.decisions.push(Decision { mono: m, parent, kept: false });
                walk.relations.push(comb);
                leads.push(m);
            }
            Some(pivot) => {
                // A new lex standard monomial: normalize the row, extend the combinations.
                let inv = inverse(w[pivot], p);
                for x in &mut w {
                    *x = *x * inv % p;
                }
                let mut row_comb: Vec<u64> = comb.iter().map(|&c| (p - c) % p * inv % p).collect();
                row_comb.push(inv);
                for (_, _, c) in &mut rows {
                    c.push(0);
                }
                rows.push((pivot, w, row_comb));
                for (i, matrix) in matrices.iter().enumerate().take(nvars) {
                    let next = m.mul(&Mono::variable(i))?;
                    if candidates.contains_key(&next.e) || leads.iter().any(|l| l.divides(&next)) {
                        continue;
                    }
                    // x_i·m in the quotient: the multiplication matrix applied to m's vector.
                    let mut image = vec![0u64; d];
                    for (b, &c) in v.iter().enumerate() {
                        if c == 0 {
                            continue;
                        }
                        *work += d as u64;
                        for (x, &y) in image.iter_mut().zip(&matrix[b * d..(b + 1) * d]) {
                            if y != 0 {
                                *x = (*x + c * y) % p;
                            }
                        }
                    }
                    *work += d as u64;
                    candidates.insert(next.e, (next, image, Some((kept, i))));
                }
                walk.decisions.push(Decision { mono: m, parent, kept: true });
                kept += 1;
                if *work > max_work {
                    return None;
                }
            }
        }
    }
    Some(walk)
}

/// Whether walk `a` keeps a monomial where `b` found a relation, at the
/// first place they differ (until then both visited the same monomials).
fn keeps_first(a: &[Decision], b: &[Decision]) -> bool {
    a.iter().zip(b).find(|(x, y)| x != y).is_some_and(|(x, y)| x.mono == y.mono && x.kept && !y.kept)
}

/// The fraction a/b ≡ `r` (mod `m`) with |a|, b ≤ `bound`, by the extended
/// Euclidean algorithm stopped halfway.
fn rational(r: &BigInt, m: &BigInt, bound: &BigInt) -> Option<BigRational> {
    let (mut r0, mut r1) = (m.clone(), r.clone());
    let (mut t0, mut t1) = (BigInt::zero(), BigInt::one());
    while &r1 > bound {
        let (q, rest) = r0.div_rem(&r1);
        r0 = std::mem::replace(&mut r1, rest);
        let t = &t0 - &q * &t1;
        t0 = std::mem::replace(&mut t1, t);
    }
    if t1.is_zero() || &t1.abs() > bound || !r1.gcd(&t1).is_one() {
        return None;
    }
    if t1.is_negative() {
        (r1, t1) = (-r1, -t1);
    }
    Some(BigRational::new_raw(r1, t1))
}

/// The lex basis read from `walk` with these coefficients, if it checks out
/// over ℚ (see the module's documentation).
#[allow(clippy::too_many_arguments)]
fn checked(
    walk: &Walk,
    fractions: &[&[Option<BigRational>]],
    matrices: &[Matrix],
    unit: usize,
    d: usize,
    nvars: usize,
    limit: usize,
    work: &mut u64,
    max_work: u64,
) -> Option<Vec<Pol>> {
    let kept: Vec<Mono> = walk.decisions.iter().filter(|x| x.kept).map(|x| x.mono).collect();
    let leads: Vec<Mono> = walk.decisions.iter().filter(|x| !x.kept).map(|x| x.mono).collect();
    *work += (d * (leads.len() + 1)) as u64;
    if kept.len() != d || staircase(&leads, nvars, limit)?.len() != d {
        return None;
    }
    // Each visited monomial's vector over ℚ, from its parent's.
    let mut vectors: Vec<Exact> = Vec::with_capacity(kept.len());
    let mut relations = fractions.iter();
    let mut out = Vec::new();
    for decision in &walk.decisions {
        let vector = match decision.parent {
            None => {
                let mut num = vec![BigInt::zero(); d];
                num[unit] = BigInt::one();
                Exact { num, den: BigInt::one() }
            }
            Some((k, i)) => times(&matrices[i], &vectors[k], work),
        };
        if *work > max_work {
            return None;
        }
        if decision.kept {
            vectors.push(vector);
            continue;
        }
        let coefficients: Vec<BigRational> = relations.next()?.iter().cloned().collect::<Option<_>>()?;
        if !cancels(&vector, &coefficients, &vectors, work) {
            return None;
        }
        // m − Σ c_s · kept[s], primitive.
        let mut terms: Vec<(Mono, BigRational)> = vec![(decision.mono, BigRational::one())];
        terms.extend(kept.iter().zip(&coefficients).filter(|(_, c)| !c.is_zero()).map(|(s, c)| (*s, -c.clone())));
        terms.sort_by(|a, b| compare(Order::Lex, &b.0, &a.0));
        let denominators = terms.iter().fold(BigInt::one(), |l, (_, c)| lcm(&l, c.denom(), work));
        let terms = terms.into_iter().map(|(m, c)| (m, (c * &denominators).to_integer())).collect();
        let mut p = Pol { terms };
        p.make_primitive(work);
        out.push(p);
    }
    out.sort_by(|a, b| compare(Order::Lex, b.lm(), a.lm()));
    Some(out)
}

/// The matrix times the vector, with the common content divided out.
fn times(matrix: &Matrix, v: &Exact, work: &mut u64) -> Exact {
    let d = v.num.len();
    let mut num = vec![BigInt::zero(); d];
    for (c, column) in v.num.iter().zip(&matrix.columns) {
        if c.is_zero() {
            continue;
        }
        for (x, y) in num.iter_mut().zip(column) {
            if !y.is_zero() {
                *work += words(c) * words(y) + words(x);
                *x += c * y;
            }
        }
    }
    let mut den = &matrix.den * &v.den;
    let g = gcd(&content(num.iter().filter(|x| !x.is_zero()), work), &den, work);
    if !g.is_one() && !g.is_zero() {
        for x in &mut num {
            *work += words(x);
            *x = &*x / &g;
        }
        den /= g;
    }
    Exact { num, den }
}

/// Whether `vector` = Σ coefficients[s] · kept[s], exactly.
fn cancels(vector: &Exact, coefficients: &[BigRational], kept: &[Exact], work: &mut u64) -> bool {
    // Over the common denominator of every term: vector.num · (L / vector.den) = Σ a_s · kept_s.num · (L / (b_s · kept_s.den)).
    let mut common = vector.den.clone();
    for (c, k) in coefficients.iter().zip(kept) {
        if !c.is_zero() {
            common = lcm(&common, &(c.denom() * &k.den), work);
        }
    }
    let mut sum: Vec<BigInt> = {
        let factor = &common / &vector.den;
        vector.num.iter().map(|x| x * &factor).collect()
    };
    for (c, k) in coefficients.iter().zip(kept) {
        if c.is_zero() {
            continue;
        }
        let factor = c.numer() * (&common / (c.denom() * &k.den));
        for (x, y) in sum.iter_mut().zip(&k.num) {
            if !y.is_zero() {
                *work += words(&factor) * words(y) + words(x);
                *x -= &factor * y;
            }
        }
    }
    sum.iter().all(Zero::is_zero)
}

/// The least common multiple of two positive integers.
fn lcm(a: &BigInt, b: &BigInt, work: &mut u64) -> BigInt {
    let g = gcd(a, b, work);
    *work += words(a) * words(b);
    a / g * b
}

/// `numerator / denominator` in lowest terms (the denominator positive).
fn fraction(numerator: BigInt, denominator: BigInt, work: &mut u64) -> BigRational {
    let g = gcd(&numerator, &denominator, work);
    BigRational::new_raw(numerator / &g, denominator / g)
}
