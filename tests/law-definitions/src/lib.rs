//! The test oracle of the universal-algebra cores: each named law judged
//! from its textbook definition, by brute force over a complete table. The
//! producer's search and the checker each have their own law parser and
//! evaluator; their tests compare both against this one, which shares no
//! code with either.

use std::collections::BTreeSet;

/// The named laws this oracle defines.
pub const LAWS: &[&str] = &[
    "associative",
    "commutative",
    "idempotent",
    "left_alternative",
    "right_alternative",
    "flexible",
    "has_identity",
    "quasigroup",
];

/// Whether the named `law` holds for `op` on `0..n`.
///
/// # Panics
/// For a law not in [`LAWS`].
pub fn holds(law: &str, n: usize, op: &dyn Fn(usize, usize) -> usize) -> bool {
    let all = |f: &dyn Fn(usize, usize, usize) -> bool| (0..n).all(|x| (0..n).all(|y| (0..n).all(|z| f(x, y, z))));
    match law {
        "associative" => all(&|x, y, z| op(x, op(y, z)) == op(op(x, y), z)),
        "commutative" => all(&|x, y, _| op(x, y) == op(y, x)),
        "idempotent" => (0..n).all(|x| op(x, x) == x),
        "left_alternative" => all(&|x, y, _| op(x, op(x, y)) == op(op(x, x), y)),
        "right_alternative" => all(&|x, y, _| op(op(y, x), x) == op(y, op(x, x))),
        "flexible" => all(&|x, y, _| op(x, op(y, x)) == op(op(x, y), x)),
        "has_identity" => (0..n).any(|e| (0..n).all(|x| op(e, x) == x && op(x, e) == x)),
        // Every row and every column is a permutation: a*x = b and y*a = b have unique solutions.
        "quasigroup" => (0..n).all(|a| {
            let row: BTreeSet<usize> = (0..n).map(|x| op(a, x)).collect();
            let column: BTreeSet<usize> = (0..n).map(|x| op(x, a)).collect();
            row.len() == n && column.len() == n
        }),
        other => panic!("the oracle does not define {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::holds;

    #[test]
    fn textbook_operations_have_their_laws() {
        // Addition mod 3: an abelian group (associative, commutative, identity, quasigroup).
        let add = |a: usize, b: usize| (a + b) % 3;
        for law in ["associative", "commutative", "has_identity", "quasigroup"] {
            assert!(holds(law, 3, &add), "{law}");
        }
        assert!(!holds("idempotent", 3, &add));
        // NAND on {0, 1}: commutative, not associative, no identity.
        let nand = |a: usize, b: usize| 1 - (a & b);
        assert!(holds("commutative", 2, &nand) && !holds("associative", 2, &nand) && !holds("has_identity", 2, &nand));
        // Left projection x*y = x: associative and idempotent, not commutative (n > 1), not a quasigroup.
        let left = |a: usize, _: usize| a;
        assert!(holds("associative", 3, &left) && holds("idempotent", 3, &left));
        assert!(!holds("commutative", 3, &left) && !holds("quasigroup", 3, &left));
        // Subtraction mod 3: flexible? (x - (y - x)) = 2x - y and ((x - y) - x) = -y: only when 2x = 0.
        let sub = |a: usize, b: usize| (a + 3 - b) % 3;
        assert!(!holds("flexible", 3, &sub) && holds("quasigroup", 3, &sub));
    }
}
