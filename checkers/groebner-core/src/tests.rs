//! The checker alone: certificates worked out by hand accepted, each kind
//! of flaw rejected with its reason, and its arithmetic and parser obeying
//! the ring laws on random polynomials.

use proptest::prelude::*;

use crate::{Certificate, P, SpolyCertificate, add_into, judge, poly, times};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// ⟨x - y, y^2 - 1⟩ under lex: already the reduced basis. S(g0, g1) = y^2*(x - y) - x*(y^2 - 1)
/// = x - y^3 = 1*(x - y) + (-y)*(y^2 - 1), standard since lm(x - y) = x = lm(S) and y^3 < x.
fn by_hand() -> Certificate {
    Certificate {
        vars: strings(&["x", "y"]),
        order: "lex".into(),
        generators: strings(&["x - y", "y^2 - 1"]),
        basis: strings(&["x - y", "y^2 - 1"]),
        cofactors: vec![strings(&["1", "0"]), strings(&["0", "1"])],
        reductions: vec![strings(&["1", "0"]), strings(&["0", "1"])],
        spolys: vec![SpolyCertificate { pair: [0, 1], quotients: strings(&["1", "-y"]) }],
    }
}

#[test]
fn a_certificate_worked_out_by_hand_is_accepted() {
    let checked = judge(&by_hand()).expect("accepted");
    assert_eq!(checked.len(), 4);
    // A monomial ideal: ⟨x^2, x*y⟩, whose only S-polynomial is zero.
    let monomial = Certificate {
        vars: strings(&["x", "y"]),
        order: "grevlex".into(),
        generators: strings(&["x^2", "x*y"]),
        basis: strings(&["x^2", "x*y"]),
        cofactors: vec![strings(&["1", "0"]), strings(&["0", "1"])],
        reductions: vec![strings(&["1", "0"]), strings(&["0", "1"])],
        spolys: vec![SpolyCertificate { pair: [0, 1], quotients: strings(&["0", "0"]) }],
    };
    assert!(judge(&monomial).is_ok());
}

#[test]
fn each_kind_of_flaw_is_rejected_with_its_reason() {
    type Flaw = (&'static str, fn(&mut Certificate));
    let flaws: [Flaw; 7] = [
        ("basis element 0 is not the stated combination", |c| c.cofactors[0] = strings(&["2", "0"])),
        ("generator 1 is not the stated combination", |c| c.reductions[1] = strings(&["0", "2"])),
        ("does not sum to it", |c| c.spolys[0].quotients = strings(&["1", "y"])),
        ("0 of 1 S-polynomials", |c| c.spolys.clear()),
        ("not monic", |c| {
            c.basis[0] = "2*x - 2*y".into();
            c.cofactors[0] = strings(&["2", "0"]);
            c.reductions[0] = strings(&["1/2", "0"]);
            c.spolys[0].quotients = strings(&["1/2", "-y"]);
        }),
        ("unknown order", |c| c.order = "revlex".into()),
        ("unknown variable z", |c| c.generators[0] = "x - z".into()),
    ];
    for (reason, flaw) in flaws {
        let mut certificate = by_hand();
        flaw(&mut certificate);
        let error = judge(&certificate).expect_err(reason);
        assert!(error.contains(reason), "{reason}: {error}");
    }
    // A Gröbner basis of the same ideal that is not reduced: g0 = (x - y) + (y^2 - 1) keeps the
    // leading monomials x and y^2, and every other check holds (worked by hand: S(g0, g1) =
    // y^2*g0 - x*g1 = x + y^4 - y^3 - y^2 = 1*g0 + (y^2 - y - 1)*g1), but its term y^2 is
    // divisible by the leading monomial of g1.
    let unreduced = Certificate {
        basis: strings(&["x + y^2 - y - 1", "y^2 - 1"]),
        cofactors: vec![strings(&["1", "1"]), strings(&["0", "1"])],
        reductions: vec![strings(&["1", "-1"]), strings(&["0", "1"])],
        spolys: vec![SpolyCertificate { pair: [0, 1], quotients: strings(&["1", "y^2 - y - 1"]) }],
        ..by_hand()
    };
    let error = judge(&unreduced).expect_err("not reduced");
    assert_eq!(error, "a term of basis element 0 is divisible by the leading monomial of element 1");
}

/// Random polynomials in x, y as text in the certificate syntax.
fn polynomial() -> impl Strategy<Value = String> {
    prop::collection::vec((-5i32..=5, 1u32..=3, 0u32..3, 0u32..3), 1..5).prop_map(|terms| {
        terms.iter().map(|(n, d, a, b)| format!("({n}/{d})*x^{a}*y^{b}")).collect::<Vec<_>>().join(" + ")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn parsing_agrees_with_the_arithmetic(a in polynomial(), b in polynomial(), c in polynomial()) {
        let vars = strings(&["x", "y"]);
        let p = |text: &str| -> P { poly(text, &vars).unwrap() };
        prop_assert_eq!(p(&format!("({a})*({b})")), times(&p(&a), &p(&b)));
        prop_assert_eq!(times(&p(&a), &p(&b)), times(&p(&b), &p(&a)));
        let mut sum = p(&b);
        add_into(&mut sum, &p(&c), 1);
        let mut distributed = times(&p(&a), &p(&b));
        add_into(&mut distributed, &times(&p(&a), &p(&c)), 1);
        prop_assert_eq!(times(&p(&a), &sum), distributed);
        let difference = p(&format!("({a}) - ({a})"));
        prop_assert!(difference.is_empty());
    }
}
