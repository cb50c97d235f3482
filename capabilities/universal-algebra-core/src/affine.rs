//! Affine magmas, tried at each order before the search: `x*y = a·x + b·y + c`
//! over a commutative ring of that order (`Z_n`, and the fields of order 4,
//! 8, 9 and 16).
//!
//! Most small models of random laws in the finder's benchmark corpus are
//! affine, and a law with large terms can keep the propagating search busy
//! far past its budget at an order where an affine model exists (z3 gives up
//! on such laws too). In an affine magma every term is a linear form in its
//! variables plus a constant, `Σ k_v·v + c·κ`, where the coefficients `k_v`
//! and `κ` are polynomials in `a` and `b` computed once per `(a, b)`; an
//! equation holds for every assignment exactly when both sides have the same
//! coefficients and `c·κ` agrees (assign 0 to every variable, then 1 to one).
//! So a pair `(a, b)` costs one pass over the terms, and each `c` a
//! comparison: `q²` passes for a ring of `q` elements.

use crate::engine::Meter;
use crate::laws::{self, Law, Table, Term};

/// A commutative ring on `0..q`, by its tables.
pub(crate) struct Ring {
    pub name: String,
    q: usize,
    add: Vec<u8>,
    mul: Vec<u8>,
}

impl Ring {
    fn add(&self, x: u8, y: u8) -> u8 {
        self.add[usize::from(x) * self.q + usize::from(y)]
    }

    fn mul(&self, x: u8, y: u8) -> u8 {
        self.mul[usize::from(x) * self.q + usize::from(y)]
    }

    fn integers(n: usize) -> Ring {
        let table =
            |f: fn(usize, usize) -> usize| -> Vec<u8> { (0..n * n).map(|i| (f(i / n, i % n) % n) as u8).collect() };
        Ring { name: format!("Z_{n}"), q: n, add: table(|x, y| x + y), mul: table(|x, y| x * y) }
    }

    /// GF(2^k) as polynomials over GF(2) modulo `modulus` (irreducible, degree k).
    fn binary_field(k: u32, modulus: usize) -> Ring {
        let q = 1usize << k;
        let times = |mut x: usize, mut y: usize| {
            let mut product = 0;
            while y != 0 {
                if y & 1 == 1 {
                    product ^= x;
                }
                y >>= 1;
                x <<= 1;
                if x & q != 0 {
                    x ^= modulus;
                }
            }
            product as u8
        };
        let add = (0..q * q).map(|i| ((i / q) ^ (i % q)) as u8).collect();
        let mul = (0..q * q).map(|i| times(i / q, i % q)).collect();
        let name = format!(
            "GF({q}) (an element is the bits of a polynomial over GF(2), modulo the one with bits {modulus:b})"
        );
        Ring { name, q, add, mul }
    }

    /// GF(9) as `u + v·i` with `i² = -1` over Z_3, the element `u + 3v`.
    fn nine() -> Ring {
        let parts = |x: usize| (x % 3, x / 3);
        let add = (0..81)
            .map(|i| {
                let ((a, b), (c, d)) = (parts(i / 9), parts(i % 9));
                ((a + c) % 3 + 3 * ((b + d) % 3)) as u8
            })
            .collect();
        let mul = (0..81)
            .map(|i| {
                let ((a, b), (c, d)) = (parts(i / 9), parts(i % 9));
                ((a * c + 2 * b * d) % 3 + 3 * ((a * d + b * c) % 3)) as u8
            })
            .collect();
        Ring { name: "GF(9) (the element u + 3v is u + v·i, with i² = -1 over Z_3)".into(), q: 9, add, mul }
    }

    /// `x·y`, for tests.
    #[cfg(test)]
    pub(crate) fn product(&self, x: u8, y: u8) -> u8 {
        self.mul(x, y)
    }

    /// Whether the tables make a commutative ring with 0 and 1 (every law, checked on every element).
    #[cfg(test)]
    pub(crate) fn is_commutative_ring(&self) -> bool {
        let q = self.q as u8;
        let one = (1 % self.q) as u8;
        let elements = || 0..q;
        elements().all(|x| {
            self.add(x, 0) == x
                && self.mul(x, one) == x
                && elements().any(|y| self.add(x, y) == 0)
                && elements().all(|y| {
                    self.add(x, y) == self.add(y, x)
                        && self.mul(x, y) == self.mul(y, x)
                        && elements().all(|z| {
                            self.add(self.add(x, y), z) == self.add(x, self.add(y, z))
                                && self.mul(self.mul(x, y), z) == self.mul(x, self.mul(y, z))
                                && self.mul(x, self.add(y, z)) == self.add(self.mul(x, y), self.mul(x, z))
                        })
                })
        })
    }

    /// The rings tried at order `n`.
    pub(crate) fn of_order(n: usize) -> Vec<Ring> {
        let mut rings = vec![Ring::integers(n)];
        match n {
            4 => rings.push(Ring::binary_field(2, 0b111)),
            8 => rings.push(Ring::binary_field(3, 0b1011)),
            9 => rings.push(Ring::nine()),
            16 => rings.push(Ring::binary_field(4, 0b10011)),
            _ => {}
        }
        rings
    }
}

/// An affine countermodel: its cells, where the target fails, and how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Affine {
    pub cells: Vec<u8>,
    pub witness: serde_json::Value,
    /// `x*y = a·x + b·y + c over R`, in words.
    pub rule: String,
}

/// What trying the affine magmas of one order came to.
#[derive(Debug)]
pub(crate) enum Tried {
    Found(Affine),
    /// Every one was tried; none is a countermodel.
    None,
    /// The meter's work budget ran out first.
    OutOfWork,
}

/// The first affine magma of order `n` satisfying every hypothesis and
/// violating `target`, trying `(a, b, c)` in lexicographic order over each ring.
pub(crate) fn find(hypotheses: &[Law], target: &Law, n: usize, meter: &mut Meter) -> Tried {
    let equations: Vec<Compiled> = hypotheses.iter().filter_map(Compiled::of).collect();
    // An equation as the target is judged by its forms too; a named one on the table.
    let target_equation = Compiled::of(target);
    let named = hypotheses.iter().any(|h| !matches!(h, Law::Equation { .. }));
    let size: u64 = equations.iter().chain(&target_equation).map(Compiled::cost).sum();
    let (mut left, mut right) = (Vec::new(), Vec::new());
    let mut kappas = Vec::with_capacity(equations.len());
    for ring in Ring::of_order(n) {
        let q = ring.q as u8;
        for a in 0..q {
            for b in 0..q {
                // A pass over the terms, and at most q tables of n² cells.
                meter.work += size + 1 + (q as u64) * (n * n) as u64;
                if meter.work > meter.max_work {
                    return Tried::OutOfWork;
                }
                // Each equation's constant difference: c·κ must vanish.
                kappas.clear();
                if !equations.iter().all(|e| e.differing(&ring, (a, b), (&mut left, &mut right), &mut kappas).is_none())
                {
                    continue;
                }
                // Where the target's forms differ: the variable whose coefficient does, if any.
                let (mut target_kappa, mut differing) = (None, None);
                if let Some(t) = &target_equation {
                    let mut k = Vec::with_capacity(1);
                    differing = t.differing(&ring, (a, b), (&mut left, &mut right), &mut k);
                    target_kappa = k.pop();
                }
                for c in 0..q {
                    if !kappas.iter().all(|&(l, r)| ring.mul(c, l) == ring.mul(c, r)) {
                        continue;
                    }
                    let constants_agree = target_kappa.is_some_and(|(l, r)| ring.mul(c, l) == ring.mul(c, r));
                    if target_equation.is_some() && differing.is_none() && constants_agree {
                        continue;
                    }
                    let cells: Vec<u8> = (0..ring.q * ring.q)
                        .map(|i| {
                            let (x, y) = ((i / ring.q) as u8, (i % ring.q) as u8);
                            ring.add(ring.add(ring.mul(a, x), ring.mul(b, y)), c)
                        })
                        .collect();
                    let table = Table { n, cells: cells.iter().map(|&v| Some(v)).collect() };
                    // The named hypotheses (and a named target) judged on the table.
                    let hold = !named || {
                        meter.work += (n * n * n) as u64;
                        hypotheses
                            .iter()
                            .all(|h| matches!(h, Law::Equation { .. }) || laws::violation(h, &table).is_none())
                    };
                    if !hold {
                        continue;
                    }
                    // An equation fails where every variable is 0 (the constants differ) or
                    // where the one whose coefficient differs is 1: found from the forms, its
                    // value read off the table; a named target is judged on the table.
                    let witness = match (&target_equation, differing) {
                        (Some(t), differing) => {
                            let mut at = vec![0u8; t.vars];
                            if let (true, Some(v)) = (constants_agree, differing) {
                                at[v] = (1 % ring.q) as u8;
                            }
                            meter.work += t.cost();
                            laws::violation_at(target, &table, &at)
                        }
                        (None, _) => {
                            meter.work += (n * n * n) as u64;
                            laws::violation(target, &table)
                        }
                    };
                    if let Some(witness) = witness {
                        debug_assert!(hypotheses.iter().all(|h| laws::violation(h, &table).is_none()));
                        let rule = format!("x*y = {a}·x + {b}·y + {c} over {}", ring.name);
                        return Tried::Found(Affine { cells, witness, rule });
                    }
                }
            }
        }
    }
    Tried::None
}

/// An equation with both sides in postfix.
struct Compiled {
    sides: [Vec<Option<usize>>; 2],
    vars: usize,
}

impl Compiled {
    fn of(law: &Law) -> Option<Compiled> {
        let Law::Equation { vars, lhs, rhs } = law else { return None };
        let (mut l, mut r) = (Vec::new(), Vec::new());
        postfix(lhs, &mut l);
        postfix(rhs, &mut r);
        Some(Compiled { sides: [l, r], vars: vars.len() })
    }

    /// Work units one evaluation of both sides costs.
    fn cost(&self) -> u64 {
        (self.sides[0].len() + self.sides[1].len()) as u64 * (self.vars as u64 + 2)
    }

    /// The first variable whose coefficients differ under `(a, b)`; the κs pushed to `kappas`.
    fn differing(
        &self,
        ring: &Ring,
        ab: (u8, u8),
        (left, right): (&mut Vec<u8>, &mut Vec<u8>),
        kappas: &mut Vec<(u8, u8)>,
    ) -> Option<usize> {
        let l = form(&self.sides[0], ring, ab, self.vars, left);
        let r = form(&self.sides[1], ring, ab, self.vars, right);
        kappas.push((l[self.vars], r[self.vars]));
        (0..self.vars).find(|&v| l[v] != r[v])
    }
}

/// A term in postfix order: a variable's index, or `None` for a product.
fn postfix(term: &Term, out: &mut Vec<Option<usize>>) {
    match term {
        Term::Var(i) => out.push(Some(*i)),
        Term::Op(l, r) => {
            postfix(l, out);
            postfix(r, out);
            out.push(None);
        }
    }
}

/// A term (in postfix) as a linear form, written to the start of `stack`:
/// its `vars` coefficients, then `κ` (the constant is `c·κ`). `stack` is
/// scratch space, reused.
fn form<'s>(code: &[Option<usize>], ring: &Ring, (a, b): (u8, u8), vars: usize, stack: &'s mut Vec<u8>) -> &'s [u8] {
    let width = vars + 1;
    let one = (1 % ring.q) as u8;
    stack.clear();
    for unit in code {
        match unit {
            Some(i) => {
                let at = stack.len();
                stack.resize(at + width, 0);
                stack[at + i] = one;
            }
            None => {
                let right = stack.len() - width;
                let left = right - width;
                for k in 0..width {
                    stack[left + k] = ring.add(ring.mul(a, stack[left + k]), ring.mul(b, stack[right + k]));
                }
                stack[left + vars] = ring.add(stack[left + vars], one);
                stack.truncate(right);
            }
        }
    }
    &stack[..width]
}
