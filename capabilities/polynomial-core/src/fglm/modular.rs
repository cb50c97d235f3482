//! Word arithmetic modulo a prime below 2³¹: residues, inverses, the primes the walks use.

use super::*;

/// `x` modulo `p`, in `0..p`.
pub(super) fn residue(x: &BigInt, p: u64) -> u64 {
    let r = x.magnitude().to_u32_digits().iter().rev().fold(0u64, |r, &digit| ((r << 32) | u64::from(digit)) % p);
    if x.is_negative() && r != 0 { p - r } else { r }
}

pub(super) fn power(mut base: u64, mut exponent: u64, p: u64) -> u64 {
    let mut out = 1;
    while exponent > 0 {
        if exponent & 1 == 1 {
            out = out * base % p;
        }
        base = base * base % p;
        exponent >>= 1;
    }
    out
}

pub(super) fn inverse(a: u64, p: u64) -> u64 {
    power(a, p - 2, p)
}

/// The matrix modulo `p`, column after column, or `None` when `p` divides its denominator.
pub(super) fn modular(matrix: &Matrix, p: u64) -> Option<Vec<u64>> {
    let den = residue(&matrix.den, p);
    if den == 0 {
        return None;
    }
    let inv = inverse(den, p);
    Some(matrix.columns.iter().flatten().map(|c| residue(c, p) * inv % p).collect())
}

/// Primes below 2³¹, from the largest down.
pub(crate) fn primes() -> impl Iterator<Item = u64> {
    (3..PRIME_BOUND).rev().step_by(2).filter(|&n| is_prime(n))
}

/// Miller–Rabin with the bases 2, 7 and 61, exact below 4,759,123,141.
pub(super) fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    for small in [2, 3, 5, 7, 11, 13, 61] {
        if n.is_multiple_of(small) {
            return n == small;
        }
    }
    let (mut d, mut s) = (n - 1, 0);
    while d.is_multiple_of(2) {
        d /= 2;
        s += 1;
    }
    [2, 7, 61].iter().all(|&a| {
        let mut x = power(a % n, d, n);
        if x == 1 || x == n - 1 {
            return true;
        }
        for _ in 1..s {
            x = x * x % n;
            if x == n - 1 {
                return true;
            }
        }
        false
    })
}
