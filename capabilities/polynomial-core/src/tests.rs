//! The core alone, natively: textbook bases (outside truth), the
//! certificate's identities, and properties of the arithmetic, the parser
//! and division on random polynomials.

use num_bigint::BigInt;
use num_rational::BigRational;
use proptest::prelude::*;

use crate::groebner::{divide, reduced_basis};
use crate::poly::{Order, Poly, parse};

fn vars(names: &[&str]) -> Vec<String> {
    names.iter().map(|v| (*v).to_owned()).collect()
}

fn order_named(name: &str) -> Order {
    match name {
        "lex" => Order::Lex,
        "grlex" => Order::Grlex,
        "grevlex" => Order::Grevlex,
        other => panic!("unknown order {other}"),
    }
}

/// Σ factors[i] * polys[i].
fn combination(factors: &[Poly], polys: &[Poly], order: Order) -> Poly {
    factors.iter().zip(polys).fold(Poly::zero(), |sum, (f, p)| sum.add(&f.mul(p, order), order))
}

#[test]
fn the_textbook_ideals_have_their_published_reduced_bases_and_certificates_that_add_up() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/oracles/groebner.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("outside truth {}: {e}", path.display()));
    let oracle: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = oracle["cases"].as_array().unwrap();
    assert!(cases.len() >= 4);
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
    };
    for case in cases {
        let names = strings(&case["vars"]);
        let order = order_named(case["order"].as_str().unwrap());
        let generators: Vec<Poly> =
            strings(&case["generators"]).iter().map(|g| parse(g, &names, order, 10).unwrap()).collect();
        let result = reduced_basis(&generators, names.len(), order, 5_000).expect("finishes");
        let shown: Vec<String> = result.basis.iter().map(|p| p.show(&names)).collect();
        assert_eq!(shown, strings(&case["reduced_basis"]), "{}", case["generators"]);
        // Every basis element is its stated combination of the generators,
        // and every generator its stated combination of the basis.
        for (element, cofactors) in result.basis.iter().zip(&result.cofactors) {
            assert_eq!(&combination(cofactors, &generators, order), element);
        }
        for (generator, quotients) in generators.iter().zip(&result.reductions) {
            assert_eq!(&combination(quotients, &result.basis, order), generator);
        }
    }
}

#[test]
fn parse_errors_name_the_position_and_the_token() {
    let xy = vars(&["x", "y"]);
    for (text, expected) in
        [("x^", "position 2"), ("x + * y", "position 4"), ("x + z", "position 4"), ("(x", "position 2")]
    {
        let error = parse(text, &xy, Order::Lex, 10).expect_err(text);
        assert!(error.contains(expected), "{text}: {error}");
    }
    assert!(parse("x^11", &xy, Order::Lex, 10).is_err(), "above the degree bound");
    assert_eq!(parse("2*x*y - 1/2", &xy, Order::Grevlex, 10).unwrap().show(&xy), "2*x*y - 1/2");
}

/// Random polynomials in three variables: up to six terms, exponents below
/// four, small rational coefficients.
fn polynomial(order: Order) -> impl Strategy<Value = Poly> {
    prop::collection::vec((prop::collection::vec(0u32..4, 3), -6i64..=6, 1i64..=3), 0..6).prop_map(move |terms| {
        terms.into_iter().fold(Poly::zero(), |sum, (mono, numer, denom)| {
            let coef = BigRational::new(BigInt::from(numer), BigInt::from(denom));
            sum.add(&Poly::monomial(mono, coef), order)
        })
    })
}

fn any_order() -> impl Strategy<Value = Order> {
    prop_oneof![Just(Order::Lex), Just(Order::Grlex), Just(Order::Grevlex)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn printing_then_parsing_gives_the_same_polynomial(
        (order, p) in any_order().prop_flat_map(|o| (Just(o), polynomial(o)))
    ) {
        let xyz = vars(&["x", "y", "z"]);
        prop_assert_eq!(parse(&p.show(&xyz), &xyz, order, 40).unwrap(), p);
    }

    #[test]
    fn the_arithmetic_is_a_commutative_ring(
        (order, a, b, c) in any_order().prop_flat_map(|o| (Just(o), polynomial(o), polynomial(o), polynomial(o)))
    ) {
        prop_assert_eq!(a.add(&b, order).sub(&b, order), a.clone());
        prop_assert_eq!(a.mul(&b, order), b.mul(&a, order));
        prop_assert_eq!(a.mul(&b.add(&c, order), order), a.mul(&b, order).add(&a.mul(&c, order), order));
    }

    #[test]
    fn division_leaves_a_remainder_no_leading_monomial_divides(
        (order, p, divisors) in any_order().prop_flat_map(|o| {
            (Just(o), polynomial(o), prop::collection::vec(polynomial(o), 1..4))
        })
    ) {
        let divisors: Vec<Poly> = divisors.into_iter().filter(|d| !d.is_zero()).collect();
        let (quotients, remainder) = divide(&p, &divisors, order);
        prop_assert_eq!(combination(&quotients, &divisors, order).add(&remainder, order), p);
        for (term, _) in &remainder.terms {
            for d in &divisors {
                let lm = d.lm().unwrap();
                prop_assert!(!lm.iter().zip(term).all(|(a, b)| a <= b), "a remainder term divisible by a leading monomial");
            }
        }
    }
}
