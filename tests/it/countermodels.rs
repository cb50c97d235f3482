//! The countermodel pair against outside truth (`oracles/magmas.json`).

use jacobian::contract::{Assurance, Status, VerificationStatus};
use jacobian_guest::protocol::{ARTIFACT_VERSION, Completeness, Mode};
use serde_json::{Value, json};

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

        let certificate = result.check_with.as_ref().and_then(|c| c.certificate_artifact.clone()).expect("certificate");
        let verified = invoke(&runtime, VERIFY, Mode::Verify, json!({"countermodel": certificate}));
        assert_eq!(verified.assurance, Assurance::Verified, "{claim}: {:?}", verified.verification);
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
