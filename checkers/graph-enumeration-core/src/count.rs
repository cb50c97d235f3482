//! How many isomorphism classes there are, from formulas that never look at a
//! graph: Burnside's lemma for all graphs, the inverse Euler transform for
//! connected graphs and Otter's formula for trees. Exact integer arithmetic;
//! `None` when a figure would not fit.

/// Partitions of `n` into parts of size at most `largest`, parts non-increasing.
fn partitions(n: u32, largest: u32, prefix: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
    if n == 0 {
        out.push(prefix.clone());
        return;
    }
    for part in (1..=largest.min(n)).rev() {
        prefix.push(part);
        partitions(n - part, part, prefix, out);
        prefix.pop();
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn factorial(n: u32) -> Option<u128> {
    (1..=u128::from(n)).try_fold(1u128, |acc, k| acc.checked_mul(k))
}

/// Simple graphs on `n` unlabeled vertices. A permutation of cycle type λ fixes
/// 2^c labeled graphs, c being its number of cycles on vertex pairs:
/// Σ ⌊λᵢ/2⌋ + Σ_{i<j} gcd(λᵢ, λⱼ). There are n!/z_λ such permutations.
pub fn graphs(n: u32) -> Option<u128> {
    let mut all = Vec::new();
    partitions(n, n, &mut Vec::new(), &mut all);
    let n_factorial = factorial(n)?;
    let mut total = 0u128;
    for lambda in all {
        let mut pair_cycles = 0u32;
        for (i, &a) in lambda.iter().enumerate() {
            pair_cycles += a / 2;
            pair_cycles += lambda[i + 1..].iter().map(|&b| gcd(a, b)).sum::<u32>();
        }
        // z_λ = Π k^{m_k} m_k!
        let mut z = 1u128;
        let mut i = 0;
        while i < lambda.len() {
            let k = lambda[i];
            let m = lambda[i..].iter().take_while(|&&p| p == k).count() as u32;
            z = z.checked_mul(u128::from(k).checked_pow(m)?)?.checked_mul(factorial(m)?)?;
            i += m as usize;
        }
        let permutations = n_factorial / z;
        total = total.checked_add(permutations.checked_mul(1u128.checked_shl(pair_cycles)?)?)?;
    }
    total.is_multiple_of(n_factorial).then_some(total / n_factorial)
}

/// Connected graphs on `n` unlabeled vertices: all graphs are the Euler
/// transform of connected ones, 1 + Σ aₙxⁿ = Π (1 − xᵏ)^(−cₖ), inverted term by term.
pub fn connected(n: u32) -> Option<u128> {
    let n = n as usize;
    let a: Vec<i128> = (0..=n).map(|k| graphs(k as u32).map(|v| v as i128)).collect::<Option<_>>()?;
    let mut d = vec![0i128; n + 1];
    let mut c = vec![0i128; n + 1];
    for m in 1..=n {
        let mut value = (m as i128).checked_mul(a[m])?;
        for k in 1..m {
            value = value.checked_sub(d[k].checked_mul(a[m - k])?)?;
        }
        d[m] = value;
        let proper: i128 = (1..m).filter(|q| m % q == 0).map(|q| q as i128 * c[q]).sum();
        let numerator = d[m] - proper;
        if numerator % m as i128 != 0 {
            return None;
        }
        c[m] = numerator / m as i128;
    }
    u128::try_from(c[n]).ok()
}

/// Trees on `n` unlabeled vertices (Otter): rooted trees rₙ from
/// r_{n+1} = (1/n) Σ_{k=1..n} (Σ_{d|k} d·r_d) r_{n−k+1}, then
/// tₙ = rₙ − ½ (Σ_{i=1..n−1} rᵢ r_{n−i} − [n even] r_{n/2}).
pub fn trees(n: u32) -> Option<u128> {
    let n = n as usize;
    if n == 0 {
        return Some(1);
    }
    let mut r = vec![0u128; n + 1];
    r[1] = 1;
    for m in 1..n {
        let mut sum = 0u128;
        for k in 1..=m {
            let s: u128 = (1..=k).filter(|d| k % d == 0).map(|d| d as u128 * r[d]).sum();
            sum = sum.checked_add(s.checked_mul(r[m - k + 1])?)?;
        }
        r[m + 1] = sum / m as u128;
    }
    let mut pairs: u128 = (1..n).map(|i| r[i] * r[n - i]).sum();
    if n.is_multiple_of(2) {
        pairs -= r[n / 2];
    }
    Some(r[n] - pairs / 2)
}
