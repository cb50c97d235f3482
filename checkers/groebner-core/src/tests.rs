//! The checker alone: certificates worked out by hand accepted, each kind
//! of flaw rejected with its reason, and its arithmetic and parser obeying
//! the ring laws on random polynomials.

use proptest::prelude::*;

use crate::{Certificate, P, Trace, add_into, judge, poly, times};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// ⟨x^2 - y, x*y - 1⟩ under grlex, worked by hand: S(f0, f1) = y*(x^2 - y) - x*(x*y - 1) = x - y^2, whose
/// leading monomial y^2 neither x^2 nor x*y divides, so the trace adds it as is (made primitive: y^2 - x).
/// S(f1, y^2 - x) = y*(x*y - 1) - x*(y^2 - x) = x^2 - y = f0 reduces to zero, and x^2, y^2 are coprime:
/// the reduced basis is {x^2 - y, x*y - 1, y^2 - x}.
fn by_hand() -> Certificate {
    Certificate {
        format: "groebner-certificate/2".into(),
        vars: strings(&["x", "y"]),
        order: "grlex".into(),
        generators: strings(&["x^2 - y", "x*y - 1"]),
        basis: strings(&["x^2 - y", "x*y - 1", "y^2 - x"]),
        trace: Trace { order: "grlex".into(), homogenize: false, steps: vec![vec![0, 1]] },
    }
}

#[test]
fn a_certificate_worked_out_by_hand_is_accepted() {
    let checked = judge(&by_hand()).expect("accepted");
    assert_eq!(checked.len(), 5);
    assert!(checked[3].starts_with("2 S-polynomials reduce to zero by the basis and 1 pairs"), "{}", checked[3]);
    // A monomial ideal: ⟨x^2, x*y⟩, whose only S-polynomial is zero; no trace needed.
    let monomial = Certificate {
        order: "grevlex".into(),
        generators: strings(&["x^2", "x*y"]),
        basis: strings(&["x^2", "x*y"]),
        trace: Trace { order: "lex".into(), homogenize: false, steps: Vec::new() },
        ..by_hand()
    };
    assert!(judge(&monomial).is_ok());
}

/// The same ideal in grevlex with a homogenized trace: x^2 - y*h and x*y - h^2, whose S-polynomial
/// y*(x^2 - y*h) - x*(x*y - h^2) = x*h^2 - y^2*h has leading monomial y^2*h (the smaller power of the
/// last variable h wins), which neither x^2 nor x*y divides; at h = 1 it is y^2 - x.
#[test]
fn a_homogenized_trace_worked_out_by_hand_is_accepted_and_bounded() {
    let homogenized = Certificate {
        order: "grevlex".into(),
        trace: Trace { order: "grevlex".into(), homogenize: true, steps: vec![vec![0, 1]] },
        ..by_hand()
    };
    let checked = judge(&homogenized).expect("accepted");
    assert!(checked[0].contains("homogenized by a new last variable h"), "{}", checked[0]);
    // h needs a variable of its own, and the trace must be in grevlex.
    let mut crowded = homogenized.clone();
    crowded.vars = (0..12).map(|i| format!("v{i}")).collect();
    crowded.vars[0] = "x".into();
    crowded.vars[1] = "y".into();
    let reason = judge(&crowded).expect_err("no room for h");
    assert!(reason.contains("homogenized trace runs in grevlex with at most 11 variables"), "{reason}");
    let mut graded = homogenized;
    graded.trace.order = "grlex".into();
    assert!(judge(&graded).expect_err("not grevlex").contains("homogenized trace"));
}

#[test]
fn each_kind_of_flaw_is_rejected_with_its_reason() {
    type Flaw = (&'static str, fn(&mut Certificate));
    let flaws: [Flaw; 12] = [
        ("basis element 2 does not reduce to zero by the trace's polynomials", |c| c.trace.steps.clear()),
        ("trace step 0: reducer 0 divides no term", |c| c.trace.steps[0].push(0)),
        ("trace step 0: reducer 2 is not an earlier", |c| c.trace.steps[0].push(2)),
        ("trace step 0: the pair (0, 0) is not two earlier", |c| c.trace.steps[0] = vec![0, 0]),
        ("trace step 0: the pair (0, 5) is not two earlier", |c| c.trace.steps[0] = vec![0, 5]),
        ("trace step 0 names no pair", |c| c.trace.steps[0] = vec![1]),
        ("trace step 1 reduces to zero", |c| c.trace.steps.push(vec![1, 2, 0])),
        ("S(g0, g1) does not reduce to zero", |c| {
            // The generators alone: in the ideal, but not a Gröbner basis.
            c.basis.pop();
        }),
        ("not monic", |c| c.basis[2] = "2*y^2 - 2*x".into()),
        ("unknown order", |c| c.order = "revlex".into()),
        ("unknown variable z", |c| c.generators[0] = "x - z".into()),
        ("unknown format", |c| c.format = "groebner-certificate/1".into()),
    ];
    for (reason, flaw) in flaws {
        let mut certificate = by_hand();
        flaw(&mut certificate);
        let error = judge(&certificate).expect_err(reason);
        assert!(error.contains(reason), "{reason}: {error}");
    }
    // A basis of a larger ideal: y^2 - x replaced by y - 1 (no term divisible by another leading monomial,
    // monic) lies outside the ideal, and the trace cannot rebuild it.
    let mut larger = by_hand();
    larger.basis = strings(&["x^2 - y", "x*y - 1", "y - 1"]);
    let error = judge(&larger).expect_err("outside the ideal");
    assert!(error.contains("a term of basis element 0 is divisible") || error.contains("does not reduce"), "{error}");
    // A generator outside the ideal of the basis: the basis of the smaller ideal ⟨x^2 - y, x*y - 1⟩ claimed
    // for ⟨x^2 - y, x*y - 1, x^3 - 2⟩ (x^3 - 2 ≡ x*y - 2 ≡ -1 modulo the basis) fails on the last generator.
    let mut smaller = by_hand();
    smaller.generators.push("x^3 - 2".into());
    let error = judge(&smaller).expect_err("a generator outside");
    assert!(error.contains("generator 2 does not reduce to zero by the basis"), "{error}");
    // A Gröbner basis of the same ideal that is not reduced: x^2 - y + (y^2 - x) keeps its leading monomial
    // and lies in the ideal, but its term y^2 is divisible by the leading monomial of the third element.
    let mut unreduced = by_hand();
    unreduced.basis[0] = "x^2 + y^2 - x - y".into();
    let error = judge(&unreduced).expect_err("not reduced");
    assert_eq!(error, "a term of basis element 0 is divisible by the leading monomial of element 2");
}

/// Exponents that would wrap around are refused, not reduced modulo 2^32:
/// x^(2^32) - 2 is not -1, so its ideal is not the whole ring.
#[test]
fn exponents_never_wrap_around() {
    let wrapped = Certificate {
        vars: strings(&["x"]),
        order: "lex".into(),
        generators: strings(&["(((x^256)^256)^256)^256 - 2"]),
        basis: strings(&["1"]),
        trace: Trace { order: "lex".into(), homogenize: false, steps: Vec::new() },
        ..by_hand()
    };
    let error = judge(&wrapped).expect_err("x^(2^32) - 2 does not generate the whole ring");
    assert!(error.contains("an exponent above 65535"), "{error}");
    let chained = Certificate { generators: strings(&["x^2^3"]), basis: strings(&["x^6"]), ..wrapped };
    let error = judge(&chained).expect_err("a power of a power");
    assert!(error.contains("needs parentheses"), "{error}");
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
        let times = |x: &P, y: &P| times(x, y).unwrap();
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

    /// The checker's gcd is the greatest common divisor, on integers of up
    /// to 640 bits of either sign sharing a random factor.
    #[test]
    fn the_gcd_is_the_greatest_common_divisor(
        a in prop::collection::vec(any::<u64>(), 0..6),
        b in prop::collection::vec(any::<u64>(), 0..6),
        f in prop::collection::vec(any::<u64>(), 0..4),
        signs in (any::<bool>(), any::<bool>()),
    ) {
        use num_bigint::{BigInt, BigUint, Sign};
        use num_integer::Integer;
        let int = |digits: &[u64], negative: bool| {
            let magnitude = BigUint::from_slice(&digits.iter().flat_map(|d| [*d as u32, (*d >> 32) as u32]).collect::<Vec<_>>());
            BigInt::from_biguint(if negative { Sign::Minus } else { Sign::Plus }, magnitude)
        };
        let factor = int(&f, false) + 1u32;
        let (a, b) = (int(&a, signs.0) * &factor, int(&b, signs.1) * &factor);
        prop_assert_eq!(crate::gcd(&a, &b), a.gcd(&b));
    }
}

/// What the conventions read one way and a lazy parser another is refused;
/// what they agree on reads as they do (powers before products before sums).
#[test]
fn the_syntax_reads_as_the_conventions_do_and_refuses_what_they_leave_open() {
    let vars = strings(&["x", "y"]);
    let constant = |text: &str| -> Option<num_rational::BigRational> {
        let p = poly(text, &vars).ok()?;
        Some(p.get(&vec![0, 0]).cloned().unwrap_or_default())
    };
    let q = |n: i64, d: i64| Some(num_rational::BigRational::new(n.into(), d.into()));
    assert_eq!(constant("-2^2"), q(-4, 1));
    assert_eq!(constant("2/3*3"), q(2, 1));
    assert_eq!(constant("(2/3)^2"), q(4, 9));
    assert_eq!(constant("2/(3)"), None, "division only of naturals");
    assert_eq!(constant("1 - 2*3^2"), q(-17, 1));
    for open in ["1/-2*2", "2/3^2", "2*-3", "x - -1", "x^2^3", "2/0", "x/2", "2/3/4", "(x+1)/3", "--x", "2x"] {
        assert!(poly(open, &vars).is_err(), "{open:?} is accepted");
    }
}

/// The published hole: `x + 1/-2*2` was read as x - 1/4 (the minus taking
/// the whole product after the slash), so a basis of x - 1/4 was accepted.
#[test]
fn a_generator_the_conventions_read_otherwise_is_not_a_basis_of_what_it_was_read_as() {
    let forged = Certificate {
        vars: strings(&["x"]),
        order: "lex".into(),
        generators: strings(&["x + 1/-2*2"]),
        basis: strings(&["x - 1/4"]),
        trace: Trace { order: "lex".into(), homogenize: false, steps: Vec::new() },
        ..by_hand()
    };
    let rejection = judge(&forged).expect_err("refused");
    assert!(rejection.contains("generator 0"), "{rejection}");
}

/// Parentheses nest at most 32 deep: deeper is refused, not a stack overflow.
#[test]
fn parentheses_nest_to_a_bound() {
    let vars = strings(&["x"]);
    let nested = |depth: usize| format!("{}x{}", "(".repeat(depth), ")".repeat(depth));
    assert!(poly(&nested(32), &vars).is_ok());
    assert_eq!(poly(&nested(33), &vars).unwrap_err(), "parentheses nested deeper than 32");
    assert!(poly(&nested(100_000), &vars).is_err());
}

/// What a certificate may not be, each refused with its reason rather than
/// reaching arithmetic that assumes it: no variables or too many, an empty
/// basis or a zero in it, a zero generator named as a pair's member or a reducer.
#[test]
fn degenerate_certificates_are_refused_before_the_arithmetic() {
    let refused = |edit: &dyn Fn(&mut Certificate)| {
        let mut certificate = by_hand();
        edit(&mut certificate);
        judge(&certificate).expect_err("refused")
    };
    assert!(refused(&|c| c.vars.clear()).contains("between 1 and 12 variables"));
    assert!(refused(&|c| c.vars = (0..13).map(|i| format!("v{i}")).collect()).contains("between 1 and 12 variables"));
    assert!(refused(&|c| c.basis.clear()).contains("empty or contains zero"));
    assert!(refused(&|c| c.basis.push("0".into())).contains("empty or contains zero"));
    let zero_in_pair = refused(&|c| {
        c.generators.insert(0, "0".into());
        c.trace.steps = vec![vec![0, 2]];
    });
    assert!(zero_in_pair.contains("is not two earlier non-zero polynomials"), "{zero_in_pair}");
    let zero_reducer = refused(&|c| {
        c.generators.insert(0, "0".into());
        c.trace.steps = vec![vec![1, 2, 0]];
    });
    assert!(zero_reducer.contains("reducer 0 is not an earlier non-zero polynomial"), "{zero_reducer}");
}
