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
