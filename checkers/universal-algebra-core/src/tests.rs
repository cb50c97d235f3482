//! The checker alone: the oracle's countermodels accepted (outside truth),
//! tampered ones rejected, and on random tables, the named laws judged as
//! their definitions say (evaluated here directly, not by the parser).

use proptest::prelude::*;
use serde_json::json;

use crate::{Property, judge};

fn oracle() -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/oracles/magmas.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("outside truth {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_oracles_countermodels_are_accepted_and_tampered_ones_rejected() {
    let oracle = oracle();
    let nand: Vec<Vec<u64>> = serde_json::from_value(oracle["cases"][0]["example"]["table"].clone()).unwrap();
    // (0*0)*1 = 0 but 0*(0*1) = 1: associativity fails at x=0, y=0, z=1.
    let witness = json!({"kind": "equation", "assignment": {"x": 0, "y": 0, "z": 1}});
    let checked = judge(2, &nand, &strings(&["commutative"]), "associative", &witness).expect("accepted");
    assert_eq!(checked.len(), 3, "{checked:?}");
    // x*y = -x-y mod 3: a commutative quasigroup, not associative at the oracle's witness.
    let rule: Vec<Vec<u64>> = (0..3).map(|x| (0..3).map(|y| (6 - x - y) % 3).collect()).collect();
    let [x, y, z] = [0, 1, 2].map(|i: usize| oracle["cases"][1]["example"]["witness"][i].as_u64().unwrap());
    let witness = json!({"assignment": {"x": x, "y": y, "z": z}});
    assert!(judge(3, &rule, &strings(&["commutative", "quasigroup"]), "associative", &witness).is_ok());

    let holds_at = json!({"assignment": {"x": 0, "y": 0, "z": 0}});
    for (table, hypotheses, witness, reason) in [
        (nand.clone(), vec!["commutative"], &holds_at, "the target holds at the witness"),
        (vec![vec![0, 1], vec![0, 0]], vec!["commutative"], &holds_at, "hypothesis commutative fails"),
        (vec![vec![0, 2], vec![1, 0]], vec![], &holds_at, "outside 0..2"),
        (vec![vec![0, 1]], vec![], &holds_at, "not 2 by 2"),
    ] {
        let error = judge(2, &table, &strings(&hypotheses), "associative", witness).expect_err(reason);
        assert!(error.contains(reason), "{reason}: {error}");
    }
    assert!(judge(2, &nand, &strings(&["x*(y"]), "associative", &holds_at).is_err(), "an unparsable law");
}

/// Whether a named law holds on `op` over `0..n`, from its definition (the shared oracle).
fn by_definition(law: &str, n: usize, op: &dyn Fn(usize, usize) -> usize) -> bool {
    jacobian_test_law_definitions::holds(law, n, op)
}

fn table() -> impl Strategy<Value = (usize, Vec<usize>)> {
    (1usize..=4).prop_flat_map(|n| (Just(n), prop::collection::vec(0..n, n * n)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn named_laws_are_judged_as_their_definitions_say(
        (n, cells) in table(),
        law in prop::sample::select(jacobian_test_law_definitions::LAWS),
    ) {
        let op = |a: usize, b: usize| cells[a * n + b];
        let property = Property::parse(law).unwrap();
        prop_assert_eq!(property.first_failure(n, &op).is_none(), by_definition(law, n, &op));
    }
}

/// Every table of order `n`, row-major, as digit strings.
fn every_table(n: usize) -> impl Iterator<Item = String> {
    (0..n.pow((n * n) as u32)).map(move |mut code| {
        (0..n * n)
            .map(|_| {
                let digit = code % n;
                code /= n;
                char::from(b'0' + digit as u8)
            })
            .collect()
    })
}

fn satisfies(n: usize, table: &str, laws: &[Property]) -> bool {
    let cells = table.as_bytes();
    let op = |a: usize, b: usize| usize::from(cells[a * n + b] - b'0');
    laws.iter().all(|law| law.first_failure(n, &op).is_none())
}

/// One model per class, by brute force: the first table met of each class
/// (classes found by relabelling naively, a third way beside both enumerations).
fn listing(n: usize, laws: &[&str], anti: bool) -> Vec<String> {
    let laws: Vec<Property> = laws.iter().map(|l| Property::parse(l).unwrap()).collect();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let perms: Vec<Vec<usize>> = every_table(n)
        .take(n.pow(n as u32))
        .map(|t| t.bytes().take(n).map(|c| usize::from(c - b'0')).collect::<Vec<_>>())
        .filter(|p| {
            let mut sorted = p.clone();
            sorted.sort();
            sorted == (0..n).collect::<Vec<_>>()
        })
        .collect();
    for table in every_table(n).filter(|t| satisfies(n, t, &laws)) {
        if seen.contains(&table) {
            continue;
        }
        let cells = table.as_bytes();
        let opposite: String = (0..n * n).map(|i| char::from(cells[(i % n) * n + i / n])).collect();
        for p in &perms {
            seen.insert(relabel(n, &table, p));
            if anti {
                seen.insert(relabel(n, &opposite, p));
            }
        }
        out.push(table);
    }
    out
}

#[test]
fn the_labelled_recount_equals_brute_force() {
    use crate::models::labelled_models;
    let cases: &[&[&str]] = &[
        &[],
        &["commutative"],
        &["associative"],
        &["associative", "has_identity"],
        &["quasigroup"],
        &["idempotent", "x*(y*x) = y"],
        &["x = y"],
        &["has_identity", "commutative"],
        &["(x*y)*(z*w) = (x*z)*(y*w)"],
    ];
    for laws in cases {
        let parsed: Vec<Property> = laws.iter().map(|l| Property::parse(l).unwrap()).collect();
        for n in 1..=3 {
            let brute = every_table(n).filter(|t| satisfies(n, t, &parsed)).count() as u128;
            assert_eq!(
                labelled_models(n, &parsed, u64::MAX).map(|(count, _)| count),
                Ok(brute),
                "{laws:?} at order {n}"
            );
        }
    }
    let parsed = [Property::parse("associative").unwrap()];
    assert_eq!(labelled_models(4, &parsed, 1_000), Err(1_000), "a budget stops the recount and says so");
}

#[test]
fn complete_listings_are_accepted_and_flawed_ones_named() {
    use crate::models::{Classes, Judgement, judge};
    let laws = strings(&["associative"]);
    let anti = listing(3, &["associative"], true);
    let iso = listing(3, &["associative"], false);
    // A027851's values count semigroups up to isomorphism (read in place).
    assert_eq!(iso.len(), oeis("A027851", 3));
    assert!(anti.len() < iso.len());
    assert!(matches!(judge(3, &laws, Classes::Isomorphism, &iso, u64::MAX), Judgement::Complete(..)));
    assert!(matches!(judge(3, &laws, Classes::IsomorphismOrAnti, &anti, u64::MAX), Judgement::Complete(..)));
    let flaw = |classes, tables: &[String]| match judge(3, &laws, classes, tables, u64::MAX) {
        Judgement::Flawed(reason) => reason,
        other => panic!("accepted a flawed listing: {other:?}"),
    };
    // Up to isomorphism alone, anti-isomorphic pairs are two classes: the shorter listing misses some.
    assert!(flaw(Classes::Isomorphism, &anti).contains("missing"));
    assert!(flaw(Classes::IsomorphismOrAnti, &iso).contains("anti-isomorphic"));
    assert!(flaw(Classes::Isomorphism, &iso[1..]).contains("missing"));
    // A relabelled copy of a listed model is the same class.
    let mut doubled = iso.clone();
    doubled.push(relabel(3, &iso[5], &[1, 0, 2]));
    assert_ne!(doubled[5], doubled[iso.len()], "the copy is another table");
    assert!(flaw(Classes::Isomorphism, &doubled).contains("are isomorphic"));
    let mut outsider = iso.clone();
    outsider[0] = "021102210".into(); // x*y = x - y (mod 3) is not associative
    assert!(flaw(Classes::Isomorphism, &outsider).contains("does not satisfy associative"));
    for bad in ["01234567", "0120", "01a012012"] {
        let mut tampered = iso.clone();
        tampered[2] = bad.into();
        assert!(flaw(Classes::Isomorphism, &tampered).starts_with("models.2"), "{bad}");
    }
    // Laws whose opposite models are not models have no classes up to anti-isomorphism.
    let left_zero = strings(&["x*y = x"]);
    assert!(matches!(
        judge(2, &left_zero, Classes::IsomorphismOrAnti, &["0011".to_owned()], u64::MAX),
        Judgement::Flawed(reason) if reason.contains("opposite")
    ));
    assert!(matches!(judge(4, &laws, Classes::Isomorphism, &[], 10), Judgement::TooLarge(_)));
    // Hostile listings stay within the budget: too many ground instances, too costly a re-check.
    let wide = vec!["a*b*c = d*e*f".to_owned(); 50];
    assert!(matches!(judge(6, &wide, Classes::Isomorphism, &[], u64::MAX), Judgement::TooLarge(_)));
    let heavy = vec!["a*b*c*d*e*f = a*b*c*d*e*f".to_owned(); 1500];
    let one = vec!["0".repeat(36)];
    match judge(6, &heavy, Classes::Isomorphism, &one, 600_000_000) {
        Judgement::TooLarge(reason) => assert!(reason.contains("re-checking"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

/// The table `p(a) * p(b) = p(a * b)`.
fn relabel(n: usize, table: &str, p: &[usize]) -> String {
    let cells = table.as_bytes();
    let mut image = vec![b'0'; n * n];
    for a in 0..n {
        for b in 0..n {
            image[p[a] * n + p[b]] = b'0' + p[usize::from(cells[a * n + b] - b'0')] as u8;
        }
    }
    String::from_utf8(image).unwrap()
}

/// OEIS values, read in place (outside truth).
fn oeis(id: &str, order: usize) -> usize {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/oracles/sequences.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("outside truth {}: {e}", path.display()));
    let sequences: serde_json::Value = serde_json::from_str(&text).unwrap();
    sequences[id]["values"][order].as_u64().unwrap() as usize
}

/// The published hole: with n^variables past the machine word the search
/// answered "no failure" unevaluated, so a false hypothesis counted as holding.
#[test]
fn a_hypothesis_is_evaluated_however_many_assignments_it_has() {
    let n = 1626;
    let table = vec![vec![0u64; n]; n];
    let law = crate::Property::parse("x*y*z*u*v*w = x").unwrap();
    let op = |a: usize, b: usize| table[a][b] as usize;
    let failure = law.first_failure(n, &op).expect("x = 1 makes the sides differ");
    assert!(failure.contains("x=1"), "{failure}");
    // The target fails at x = 1 (1*1 = 0): only the hypothesis makes the claim false.
    let witness = serde_json::json!({"assignment": {"x": 1}});
    let judged = crate::judge(n, &table, &["x*y*z*u*v*w = x".to_owned()], "x*x = x", &witness);
    assert!(judged.unwrap_err().contains("hypothesis x*y*z*u*v*w = x fails"), "the false hypothesis is found");
}

/// Laws parse only as terms: an operand where an operator belongs, an
/// operator where an operand does, a parenthesis out of place are refused;
/// a law costs one unit per term symbol per assignment.
#[test]
fn malformed_terms_are_refused_and_costs_are_counted() {
    for bad in
        ["x y = x", "x * * y = x", "(x)(y) = x", "x * ) = x", "x * = y", "* x = x", "x = (", "x (y) = x", ") x = x"]
    {
        assert!(Property::parse(bad).is_err(), "{bad}");
    }
    // A '(' where an operator is due, a ')' where an operand is: refused where they stand.
    for bad in ["x() = x", "(x*)y = y"] {
        assert!(Property::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(Property::parse("x*y = y*x").unwrap().evaluation_cost(3), 9 * 6);
    assert_eq!(Property::parse("x*(y*z) = (x*y)*z").unwrap().evaluation_cost(2), 8 * 10);
    assert_eq!(Property::parse("has_identity").unwrap().evaluation_cost(3), 18);
}

/// The listing check at its bounds: orders 1 to 6, a digit naming no
/// element refused, laws with no model at all (an empty listing is every
/// class), and the work a check costs, exactly: the budget it needs
/// suffices and one unit less does not.
#[test]
fn the_listing_check_holds_at_its_bounds_and_its_budget() {
    use crate::models::{Classes, Judgement, judge};
    let none: Vec<String> = Vec::new();
    for n in [0, 7] {
        assert!(
            matches!(judge(n, &none, Classes::Isomorphism, &[], u64::MAX), Judgement::Flawed(r) if r.contains("outside"))
        );
    }
    let flawed = judge(2, &none, Classes::Isomorphism, &["0002".to_owned()], u64::MAX);
    assert!(matches!(flawed, Judgement::Flawed(r) if r.contains("not an element of 0..2")));
    // x*x = y forces every diagonal cell to every element: no model of order 2.
    let impossible = strings(&["x*x = y"]);
    assert!(matches!(judge(2, &impossible, Classes::Isomorphism, &[], u64::MAX), Judgement::Complete(..)));
    assert!(matches!(
        judge(2, &impossible, Classes::Isomorphism, &["0000".to_owned()], u64::MAX),
        Judgement::Flawed(_)
    ));
    // The 18 semigroups of order 3: the least budget that completes the check, pinned.
    let laws = strings(&["associative"]);
    let iso = listing(3, &["associative"], false);
    let complete = |budget| matches!(judge(3, &laws, Classes::Isomorphism, &iso, budget), Judgement::Complete(..));
    let (mut low, mut high) = (0u64, 1u64 << 40);
    while low + 1 < high {
        let mid = (low + high) / 2;
        if complete(mid) { high = mid } else { low = mid }
    }
    assert_eq!(high, LEAST_BUDGET_SEMIGROUPS_3, "the work units the check of the semigroups of order 3 costs");
    let anti = listing(3, &["associative"], true);
    let complete_anti =
        |budget| matches!(judge(3, &laws, Classes::IsomorphismOrAnti, &anti, budget), Judgement::Complete(..));
    let (mut low, mut high) = (0u64, 1u64 << 40);
    while low + 1 < high {
        let mid = (low + high) / 2;
        if complete_anti(mid) { high = mid } else { low = mid }
    }
    assert_eq!(high, LEAST_BUDGET_SEMIGROUPS_3_ANTI, "the same up to anti-isomorphism");
}

const LEAST_BUDGET_SEMIGROUPS_3: u64 = 43_532;
const LEAST_BUDGET_SEMIGROUPS_3_ANTI: u64 = 47_420;

/// A term nested deeper than the recount's inline stack (32 values) is
/// evaluated on a stack of its own length: x*(x*(…)) with 40 x's holds in
/// every magma, so the one table of order 1 is the whole listing.
#[test]
fn deeply_nested_terms_are_evaluated_whole() {
    use crate::models::{Classes, Judgement, judge};
    let deep = (1..40).fold("x".to_owned(), |term, _| format!("x*({term})"));
    let law = vec![format!("{deep} = {deep}")];
    let judged = judge(1, &law, Classes::Isomorphism, &["0".to_owned()], u64::MAX);
    assert!(matches!(judged, Judgement::Complete(..)), "{judged:?}");
    let judged = judge(2, &law, Classes::Isomorphism, &[], u64::MAX);
    assert!(matches!(judged, Judgement::Flawed(ref r) if r.contains("some model is missing")), "{judged:?}");
}
