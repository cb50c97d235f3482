//! The countermodel pair against outside truth (`oracles/magmas.json`).

use jacobian::contract::{Assurance, CapabilityResult, Status, VerificationStatus};
use jacobian_guest::protocol::{ARTIFACT_VERSION, Completeness, Mode};
use serde_json::{Value, json};

use crate::random_laws::{Term, countermodel_smt, ground_smt, law_text, op, run_z3, textbook};
use crate::support::{self, SEARCH, VERIFY, invoke};

/// The oracle's claims in our law syntax: (claim text, hypotheses, target).
const CLAIMS: &[(&str, &[&str], &str)] = &[
    ("every commutative magma is associative", &["commutative"], "associative"),
    ("every commutative quasigroup is associative", &["commutative", "quasigroup"], "associative"),
    ("every magma of order 1 is associative", &[], "associative"),
];

fn oracle() -> Vec<Value> {
    let text = std::fs::read_to_string(support::testdata("oracles/magmas.json")).expect("magmas.json");
    let value: Value = serde_json::from_str(&text).expect("json");
    value["cases"].as_array().expect("cases").clone()
}

fn law(claim: &str) -> (&'static [&'static str], &'static str) {
    let (_, hypotheses, target) = CLAIMS
        .iter()
        .find(|(text, _, _)| *text == claim)
        .unwrap_or_else(|| panic!("oracle claim {claim:?} has no translation in this test"));
    (hypotheses, target)
}

#[test]
fn smallest_counterexample_orders_match_the_oracle_and_verify() {
    let (runtime, _dir) = support::runtime();
    let mut checked = 0;
    for case in oracle() {
        let Some(smallest) = case["smallest_counterexample_order"].as_u64() else { continue };
        let claim = case["claim"].as_str().expect("claim");
        let (hypotheses, target) = law(claim);
        let result = invoke(
            &runtime,
            SEARCH,
            Mode::Explore,
            json!({"hypotheses": hypotheses, "target": target, "min_order": 1, "max_order": smallest + 1}),
        );
        assert_eq!(result.status, Status::Completed, "{claim}: {:?}", result.diagnostic);
        let output = result.output.as_ref().expect("output");
        assert_eq!(output["found"], true, "{claim}");
        assert_eq!(output["order"], smallest, "{claim}: smallest counterexample order");
        let below: Vec<u64> = (1..smallest).collect();
        assert_eq!(output["orders_exhausted"], json!(below), "{claim}: every smaller order exhausted");
        assert_eq!(result.assurance, Assurance::Computed, "a producer never verifies itself");

        let verified = verified_certificate(&runtime, &result, claim);
        let record = verified.verification.expect("verification record");
        assert_eq!(record.status, VerificationStatus::Verified);
        assert!(record.claim_digest.is_some() && record.candidate_digest.is_some());
        checked += 1;
    }
    assert_eq!(checked, 2, "the oracle's two refutable claims were both checked");
}

#[test]
fn order_one_magmas_are_all_associative_exhaustively() {
    let (runtime, _dir) = support::runtime();
    let case = oracle().into_iter().find(|c| c["holds"] == true).expect("the oracle's holding claim");
    let (hypotheses, target) = law(case["claim"].as_str().expect("claim"));
    let result = invoke(
        &runtime,
        SEARCH,
        Mode::Explore,
        json!({"hypotheses": hypotheses, "target": target, "min_order": 1, "max_order": 1}),
    );
    let output = result.output.as_ref().expect("output");
    assert_eq!(output["found"], false);
    assert_eq!(output["orders_exhausted"], json!([1]));
    let scope = result.scope.expect("scope");
    assert_eq!(scope.completeness, Completeness::Exhaustive);
    assert!(scope.statement.contains("not a proof for all orders"), "{}", scope.statement);
    assert!(result.check_with.is_none() && result.artifacts.is_empty());
}

/// Store a countermodel artifact written by hand from the oracle (not by our producer's search).
fn store_countermodel(runtime: &jacobian::Runtime, hypotheses: &[&str], table: Value, witness: Value) -> String {
    let order = table.as_array().map(Vec::len).unwrap_or(0);
    let search = runtime.catalog().get(SEARCH).expect("the search is installed");
    let envelope = json!({
        "artifact_version": ARTIFACT_VERSION,
        "schema_uri": "jacobian:universal_algebra/countermodel@1",
        "role": "countermodel",
        "lineage": {"capability_id": SEARCH, "input_digest": "0".repeat(64), "provider_digest": search.component.to_hex()},
        "content": {
            "claim": {"statement": "oracle", "hypotheses": hypotheses, "target": "associative", "semantics": "magma"},
            "order": order, "table": table, "witness": witness,
        },
    });
    let (digest, _) = runtime.data().put_artifact(&envelope).expect("stored");
    // Recorded as a certificate of the search's declared check, as if the search had made it.
    let check = &search.checks[0];
    let record = jacobian::store::CertificateRecord {
        checker_role: check.checker_role.clone(),
        certificate_format: check.certificate_formats[0].clone(),
        verify_capability_id: check.verify_capability_id.clone(),
        capability_id: SEARCH.into(),
        producer: search.component,
    };
    runtime.adopt_certificate(&digest, &record).expect("adopted");
    digest.artifact_uri()
}

/// The found countermodel's certificate, checked by the independent checker: VERIFIED.
fn verified_certificate(runtime: &jacobian::Runtime, result: &CapabilityResult, context: &str) -> CapabilityResult {
    let certificate = result.check_with.as_ref().and_then(|c| c.certificate_artifact.clone()).expect("certificate");
    let verified = invoke(runtime, VERIFY, Mode::Verify, json!({"countermodel": certificate}));
    assert_eq!(verified.assurance, Assurance::Verified, "{context}: {:?}", verified.verification);
    verified
}

fn verify(runtime: &jacobian::Runtime, uri: &str) -> VerificationStatus {
    let result = invoke(runtime, VERIFY, Mode::Verify, json!({"countermodel": uri}));
    result.verification.map(|v| v.status).unwrap_or_else(|| panic!("no record: {:?}", result.diagnostic))
}

#[test]
fn checker_accepts_the_oracle_examples_and_rejects_corruptions() {
    let (runtime, _dir) = support::runtime();
    let cases = oracle();
    // NAND on {0,1}: commutative, (0*0)*1 = 0 but 0*(0*1) = 1.
    let nand = &cases[0]["example"];
    let table = nand["table"].clone();
    let witness = json!({"assignment": {"x": 0, "y": 0, "z": 1}});
    let good = store_countermodel(&runtime, &["commutative"], table.clone(), witness.clone());
    assert_eq!(verify(&runtime, &good), VerificationStatus::Verified);

    // x*y = -x-y mod 3 with witness (0, 0, 1): a commutative quasigroup that is not associative.
    let quasigroup: Vec<Vec<u64>> = (0..3).map(|x| (0..3).map(|y| (6 - x - y) % 3).collect()).collect();
    let w = &cases[1]["example"]["witness"];
    let witness3 = json!({"assignment": {"x": w[0], "y": w[1], "z": w[2]}});
    let q = store_countermodel(&runtime, &["commutative", "quasigroup"], json!(quasigroup), witness3);
    assert_eq!(verify(&runtime, &q), VerificationStatus::Verified);

    // Corruptions: a non-commutative table, a witness where the law holds, an out-of-range entry.
    let mut broken = table.clone();
    broken[0][1] = json!(0);
    let not_commutative = store_countermodel(&runtime, &["commutative"], broken, witness.clone());
    assert_eq!(verify(&runtime, &not_commutative), VerificationStatus::Rejected);
    let wrong_witness =
        store_countermodel(&runtime, &["commutative"], table.clone(), json!({"assignment": {"x": 1, "y": 1, "z": 1}}));
    assert_eq!(verify(&runtime, &wrong_witness), VerificationStatus::Rejected);
    let mut out_of_range = table;
    out_of_range[1][1] = json!(2);
    let bad_entry = store_countermodel(&runtime, &["commutative"], out_of_range, witness);
    assert_eq!(verify(&runtime, &bad_entry), VerificationStatus::Rejected);
}

#[test]
fn invalid_requests_name_the_field_and_store_nothing() {
    let (runtime, dir) = support::runtime();
    let artifacts = || std::fs::read_dir(dir.path().join("artifacts")).map(|d| d.count()).unwrap_or(0);
    let before = artifacts();
    let check = |input: Value, path: &str| {
        let result = invoke(&runtime, SEARCH, Mode::Explore, input);
        let d = result.diagnostic.expect("diagnostic");
        assert_eq!(d.details["path"], path, "{d:?}");
        assert_eq!(serde_json::to_value(d.code).unwrap(), "INVALID_INPUT");
    };
    check(json!({"target": "associative", "max_order": 99}), "input.max_order");
    check(json!({"target": "associative"}), "input.max_order");
    check(json!({"target": "associative", "max_order": 2, "colour": "red"}), "input.colour");
    check(
        json!({"hypotheses": ["commutative", "x*(y"], "target": "associative", "max_order": 2}),
        "input.hypotheses.1",
    );
    check(json!({"target": "frobnicative", "max_order": 2}), "input.target");
    // A chain x*x*… nests to the left without parentheses: its length is bounded, not its depth.
    let chain = format!("x = {}", vec!["x"; 100_000].join("*"));
    check(json!({"hypotheses": ["commutative", chain], "target": "associative", "max_order": 2}), "input.hypotheses.1");
    check(json!({"target": "associative", "min_order": 3, "max_order": 2}), "input.min_order");
    let missing = invoke(
        &runtime,
        VERIFY,
        Mode::Verify,
        json!({"countermodel": format!("artifact://sha256/{}", "ab".repeat(32))}),
    );
    let d = missing.diagnostic.expect("diagnostic");
    assert_eq!(d.details["path"], "input.countermodel");
    assert_eq!(serde_json::to_value(d.code).unwrap(), "ARTIFACT_NOT_FOUND");
    let wrong_mode = invoke(&runtime, SEARCH, Mode::Verify, json!({"target": "associative", "max_order": 2}));
    assert_eq!(serde_json::to_value(wrong_mode.diagnostic.unwrap().code).unwrap(), "MODE_NOT_SUPPORTED");
    let over = support::invoke_with(
        &runtime,
        SEARCH,
        json!({"target": "associative", "max_order": 2}),
        jacobian::contract::BudgetRequest { fuel: Some(u64::MAX), ..Default::default() },
    );
    let d = over.diagnostic.expect("diagnostic");
    assert_eq!(d.details["path"], "budget.fuel");
    assert_eq!(artifacts(), before, "a rejected request stores nothing");
}

/// Whether z3 finds a magma of order `n` satisfying `lhs = rhs`.
fn z3_has_model(lhs: &Term, rhs: &Term, n: usize) -> bool {
    match run_z3(&ground_smt(lhs, rhs, n), std::time::Duration::from_secs(120)).0 {
        Some(answer) => answer,
        None => panic!("z3 gave no answer for order {n}"),
    }
}

#[test]
fn smallest_models_of_random_laws_agree_with_z3_and_verify() {
    let (runtime, _dir) = support::runtime();
    let mut seed = 0x5eed_1a75_u64;
    let (mut with_model, mut without) = (0, 0);
    for case in 0..24 {
        let vars = 2 + case % 4;
        let lhs = Term::random(&mut seed, vars, if case % 3 == 0 { 0 } else { 3 });
        let rhs = Term::random(&mut seed, vars, 4);
        let law = format!("{} = {}", lhs.text(), rhs.text());
        let result = invoke(
            &runtime,
            SEARCH,
            Mode::Explore,
            json!({"hypotheses": [law], "target": "x = y", "min_order": 2, "max_order": 4}),
        );
        let output = result.output.as_ref().unwrap_or_else(|| panic!("{law}: {:?}", result.diagnostic));
        assert_eq!(output["budget_exhausted"], false, "{law}: {output}");
        let ours = output["order"].as_u64().map(|o| o as usize);
        let theirs = (2..=4).find(|&n| z3_has_model(&lhs, &rhs, n));
        assert_eq!(ours, theirs, "{law}: smallest non-trivial model order, ours against z3's");
        let Some(order) = ours else {
            assert_eq!(output["orders_exhausted"], json!([2, 3, 4]), "{law}");
            without += 1;
            continue;
        };
        assert_eq!(output["orders_exhausted"], json!((2..order).collect::<Vec<_>>()), "{law}");
        verified_certificate(&runtime, &result, &law);
        with_model += 1;
    }
    assert!(with_model >= 6 && without >= 2, "the corpus has both kinds: {with_model} with a model, {without} without");
}

/// A law with a model of order 5 and none smaller.
const ORDER_FIVE: &str = "x = y*(x*((y*x)*y))";

#[test]
fn larger_orders_are_searched_and_checked() {
    let (runtime, _dir) = support::runtime();
    let (x, y) = (|| Term::Var(0), || Term::Var(1));
    let rhs = op(y(), op(x(), op(op(y(), x()), y())));
    assert_eq!(format!("x = {}", rhs.text()), "x = (y*(x*((y*x)*y)))");
    let z3_orders: Vec<bool> = (2..=5).map(|n| z3_has_model(&x(), &rhs, n)).collect();
    assert_eq!(z3_orders, [false, false, false, true], "z3: no model of order 2..4, one of order 5");
    let result = invoke(
        &runtime,
        SEARCH,
        Mode::Explore,
        json!({"hypotheses": [ORDER_FIVE], "target": "x = y", "min_order": 2, "max_order": 16}),
    );
    let output = result.output.as_ref().expect("output");
    assert_eq!((output["order"].clone(), output["orders_exhausted"].clone()), (json!(5), json!([2, 3, 4])));
    // A quasigroup of order 12 with an identity that is not commutative (a non-abelian group
    // of order 12 is one), found and checked by the independent checker.
    let result = invoke(
        &runtime,
        SEARCH,
        Mode::Explore,
        json!({"hypotheses": ["associative", "has_identity", "quasigroup"], "target": "commutative",
               "min_order": 12, "max_order": 12}),
    );
    let output = result.output.as_ref().unwrap_or_else(|| panic!("{:?}", result.diagnostic));
    assert_eq!(output["order"], 12, "{output}");
    // An affine magma with an identity is commutative: the search found this one.
    assert_eq!(output["found_by"], "search", "{output}");
    verified_certificate(&runtime, &result, "");
}

/// Smallest countermodels of orders 6 and 7 that mathematics knows (the
/// smallest non-abelian group, S3; the smallest non-distributive Steiner
/// quasigroup, the Fano plane's): found at that order with every smaller one
/// exhausted, checked by the independent checker, and z3 agreeing order by order.
#[test]
fn textbook_countermodels_of_orders_six_and_seven_are_found_and_checked() {
    let (runtime, _dir) = support::runtime();
    for (what, hypotheses, target, order) in textbook() {
        let laws: Vec<String> = hypotheses.iter().map(law_text).collect();
        let result = invoke(
            &runtime,
            SEARCH,
            Mode::Explore,
            json!({"hypotheses": laws, "target": law_text(&target), "min_order": 1, "max_order": 7}),
        );
        let output = result.output.as_ref().unwrap_or_else(|| panic!("{what}: {:?}", result.diagnostic));
        assert_eq!(output["order"], order, "{what}: {output}");
        assert_eq!(output["orders_exhausted"], json!((1..order).collect::<Vec<_>>()), "{what}: {output}");
        verified_certificate(&runtime, &result, what);
        let z3: Vec<Option<bool>> = (2..=order)
            .map(|n| run_z3(&countermodel_smt(&hypotheses, &target, n), std::time::Duration::from_secs(120)).0)
            .collect();
        let mut expected = vec![Some(false); order - 2];
        expected.push(Some(true));
        assert_eq!(z3, expected, "{what}: z3 on orders 2..={order}");
    }
}

/// Affine magmas are tried at each order before the search, and after a budget stopped it.
#[test]
fn affine_models_are_found_where_the_search_stalls_and_verify() {
    let (runtime, _dir) = support::runtime();
    // z3 gives up on order 5 of this law after two minutes (see the core's tests); orders 2..4
    // are exhausted by the search (order 4 needs more than the default budget), and the affine
    // magmas of order 5 include a model.
    let hard = "x = ((((y*x)*y)*((x*x)*y))*((y*(y*y))*(x*(x*y))))";
    let result = invoke(
        &runtime,
        SEARCH,
        Mode::Explore,
        json!({"hypotheses": [hard], "target": "x = y", "min_order": 2, "max_order": 7, "max_work": 500_000_000}),
    );
    let output = result.output.as_ref().unwrap_or_else(|| panic!("{:?}", result.diagnostic));
    assert_eq!((output["order"].clone(), output["orders_exhausted"].clone()), (json!(5), json!([2, 3, 4])));
    assert!(
        output["found_by"].as_str().is_some_and(|f| f.starts_with("affine: ") && f.ends_with("over Z_5")),
        "{output}"
    );
    verified_certificate(&runtime, &result, "");
    // One decision allowed: the search stops at order 2, an affine model of a later order is
    // found, and the scope says the orders in between were not exhausted.
    let result = invoke(
        &runtime,
        SEARCH,
        Mode::Explore,
        json!({"hypotheses": [ORDER_FIVE], "target": "x = y", "min_order": 2, "max_order": 8, "max_nodes": 1}),
    );
    let output = result.output.as_ref().expect("output");
    assert_eq!((output["found"].clone(), output["budget_exhausted"].clone()), (json!(true), json!(true)), "{output}");
    assert_eq!((output["stopped_at_order"].clone(), output["stop_reason"].clone()), (json!(2), json!("max_nodes")));
    assert_eq!(output["orders_exhausted"], json!([]), "{output}");
    let scope = result.scope.as_ref().expect("scope");
    assert!(scope.statement.contains("were not exhausted and a smaller countermodel may exist"), "{}", scope.statement);
    verified_certificate(&runtime, &result, "");
}

/// The search's own budget speaks before fuel can run out: the fuel a work unit costs, measured
/// on searches of different shapes that all end on `max_work`, times the largest `max_work` the
/// schema admits, stays inside the default fuel budget.
#[test]
fn the_largest_work_budget_fits_in_the_default_fuel() {
    let (runtime, _dir) = support::runtime();
    let schema_max =
        runtime.catalog().get(SEARCH).expect("installed").input_schema["properties"]["max_work"]["maximum"]
            .as_u64()
            .expect("max_work has a maximum");
    let default_fuel = jacobian::policy::Budgets::default().fuel;
    let searched = |shape: Value| {
        let mut input = shape;
        input["min_order"] = json!(5);
        input["max_order"] = json!(16);
        input["max_work"] = json!(20_000_000);
        (input, "max_work")
    };
    // The affine stage: six variables overflow the ground instances a search holds from order
    // 12, so orders 12..16 are tried by their affine magmas alone, sixteen hypotheses each time.
    let laws: Vec<String> =
        (0..16).map(|i| format!("x*(y*(z*(w*(u*v)))) = {}", ["v", "(v*v)", "(v*(v*v))", "((v*v)*v)"][i % 4])).collect();
    // (The first has an affine model of order 7, found after the search stops; the second, with
    // three variables, stops exhausting order 5.)
    let shapes = [
        searched(json!({"hypotheses": ["x = ((((y*y)*(x*y))*((x*y)*y))*(((x*y)*(x*x))*y))"], "target": "x = y"})),
        searched(json!({"hypotheses": ["x = (((y*z)*((z*y)*(y*x)))*(x*z))"], "target": "x = y"})),
        // Named targets are judged on complete tables: these visit many.
        searched(json!({"hypotheses": ["associative", "has_identity"], "target": "has_identity"})),
        searched(json!({"hypotheses": ["quasigroup", "x*(y*x) = y"], "target": "quasigroup"})),
        (json!({"hypotheses": laws, "target": "x*y = y", "min_order": 12, "max_order": 16}), "instances"),
    ];
    let mut worst: f64 = 0.0;
    for (input, stop) in shapes {
        let result = invoke(&runtime, SEARCH, Mode::Explore, input.clone());
        let output = result.output.as_ref().unwrap_or_else(|| panic!("{input}: {:?}", result.diagnostic));
        assert_eq!(output["stop_reason"], stop, "{input}: {output}");
        let per_unit = result.fuel_consumed as f64 / output["work"].as_u64().expect("work") as f64;
        println!("{input}: {} fuel for {} work units, {per_unit:.1} a unit", result.fuel_consumed, output["work"]);
        worst = worst.max(per_unit);
    }
    assert!(
        worst * schema_max as f64 * 1.5 < default_fuel as f64,
        "at {worst:.1} fuel a unit, max_work {schema_max} needs more than two thirds of the default fuel {default_fuel}"
    );
}
