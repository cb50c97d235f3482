//! `universal_algebra.enumerate.models` and its checker in the sandbox:
//! counts against the OEIS (outside truth, read in place), every complete
//! listing VERIFIED, tampered listings rejected with the flaw named.

use jacobian::Runtime;
use jacobian::contract::{Status, VerificationStatus};
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, invoke, sequence, stored, tampered};

const ENUMERATE: &str = "universal_algebra.enumerate.models";
const VERIFY_MODELS: &str = "universal_algebra.models.verify";

/// Enumerate; the output, the listing's URI and the fuel the call burnt.
fn enumerate(runtime: &Runtime, input: Value) -> (Value, String, u64) {
    let result = invoke(runtime, ENUMERATE, Mode::Explore, input.clone());
    assert_eq!(result.status, Status::Completed, "{input}: {:?}", result.diagnostic);
    let uri = result.check_with.unwrap_or_else(|| panic!("{input}: no check route")).certificate_artifact.unwrap();
    (result.output.unwrap(), uri, result.fuel_consumed)
}

fn verify(runtime: &Runtime, uri: &str) -> (VerificationStatus, String, u64) {
    let result = invoke(runtime, VERIFY_MODELS, Mode::Verify, json!({"models": uri}));
    let fuel = result.fuel_consumed;
    let record = result.verification.unwrap_or_else(|| panic!("{:?}", result.diagnostic));
    (record.status, record.reason, fuel)
}

#[test]
fn model_counts_are_the_oeis_counts_and_every_listing_is_verified() {
    let (runtime, _dir) = support::runtime();
    let mut cases: Vec<(&[&str], &str, u64)> = Vec::new();
    cases.extend((1..=3).map(|n| (&[][..], "A001329", n)));
    cases.extend((1..=4).map(|n| (&["commutative"][..], "A001425", n)));
    cases.extend((1..=5).map(|n| (&["associative", "commutative"][..], "A001426", n)));
    // A027851's values count semigroups up to isomorphism alone (1, 1, 5, 24, 188, 1915, ...).
    cases.extend((1..=5).map(|n| (&["associative"][..], "A027851", n)));
    for (laws, id, n) in cases {
        let input = json!({"hypotheses": laws, "order": n, "max_work": 500_000_000});
        let (output, uri, fuel) = enumerate(&runtime, input);
        let expected = sequence(id)[n as usize];
        assert_eq!(output["count"], expected, "{id}({n})");
        assert_eq!(output["complete"], true);
        assert_eq!(stored(&runtime, &uri)["content"]["models"].as_array().unwrap().len() as u64, expected);
        let (status, reason, checker_fuel) = verify(&runtime, &uri);
        assert_eq!(status, VerificationStatus::Verified, "{laws:?} {n}: {reason}");
        println!("{id}({n}) = {expected}: {fuel} fuel to enumerate, {checker_fuel} to check");
        if (id, n) == ("A027851", 5) {
            // The checker's recount budget, at the fuel a unit cost here, fits the default fuel.
            let words: Vec<&str> = reason.rsplit("spent ").next().unwrap().split(' ').collect();
            let (work, budget): (f64, f64) = (words[0].parse().unwrap(), words[3].parse().unwrap());
            let per_unit = checker_fuel as f64 / work;
            println!("checker: {per_unit:.1} fuel a recount unit (canonical forms included)");
            assert!(per_unit * budget * 1.5 < jacobian::policy::Budgets::default().fuel as f64, "{per_unit:.1}");
        }
    }
}

#[test]
fn classes_up_to_anti_isomorphism_are_verified_and_need_self_dual_laws() {
    let (runtime, _dir) = support::runtime();
    let laws = ["associative"];
    let (iso, _, _) = enumerate(&runtime, json!({"hypotheses": laws, "order": 4}));
    let (anti, uri, _) = enumerate(&runtime, json!({"hypotheses": laws, "order": 4, "up_to": "isomorphism_or_anti"}));
    let (status, reason, _) = verify(&runtime, &uri);
    assert_eq!(status, VerificationStatus::Verified, "{reason}");
    // Every class up to anti-isomorphism is one or two classes up to isomorphism.
    let (iso, anti) = (iso["count"].as_u64().unwrap(), anti["count"].as_u64().unwrap());
    assert!(anti < iso && iso < 2 * anti, "{iso} classes up to isomorphism, {anti} up to anti-isomorphism");
    // The opposite of a left-zero magma (x*y = x) is a right-zero one, not a model.
    let refused = invoke(
        &runtime,
        ENUMERATE,
        Mode::Explore,
        json!({"hypotheses": ["x*y = x"], "order": 2, "up_to": "isomorphism_or_anti"}),
    );
    assert_eq!(refused.status, Status::Failed);
    let diagnostic = refused.diagnostic.unwrap();
    assert_eq!(diagnostic.details["path"], "input.up_to", "{diagnostic:?}");
}

/// A change to a stored listing's content.
type Edit<'a> = Box<dyn Fn(&mut Value) + 'a>;

#[test]
fn tampered_listings_are_rejected_with_the_flaw_named() {
    let (runtime, _dir) = support::runtime();
    let (_, uri, _) = enumerate(&runtime, json!({"hypotheses": ["associative"], "order": 3}));
    let listing = stored(&runtime, &uri)["content"].clone();
    let models: Vec<String> =
        listing["models"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_owned()).collect();
    // The same class twice: a listed table relabelled by swapping 0 and 1.
    let swap = |c: char| match c {
        '0' => '1',
        '1' => '0',
        other => other,
    };
    let source: Vec<char> = models[3].chars().collect();
    let relabelled: String = (0..9)
        .map(|i| {
            let index = |x: usize| [1, 0, 2][x];
            swap(source[index(i / 3) * 3 + index(i % 3)])
        })
        .collect();
    let cases: Vec<(&str, Edit)> = vec![
        (
            "missing",
            Box::new(|c: &mut Value| {
                c["models"].as_array_mut().unwrap().pop();
                c["count"] = json!(models.len() - 1);
            }),
        ),
        (
            "are isomorphic",
            Box::new(|c: &mut Value| {
                c["models"].as_array_mut().unwrap().push(json!(relabelled.clone()));
                c["count"] = json!(models.len() + 1);
            }),
        ),
        ("does not satisfy associative", Box::new(|c: &mut Value| c["models"][0] = json!("021102210"))),
        ("count says", Box::new(|c: &mut Value| c["count"] = json!(models.len() + 1))),
        ("models.2", Box::new(|c: &mut Value| c["models"][2] = json!("0123"))),
        ("models.0 has 9 cells, not 16", Box::new(|c: &mut Value| c["claim"]["order"] = json!(4))),
        ("does not satisfy", Box::new(|c: &mut Value| c["claim"]["hypotheses"] = json!(["commutative"]))),
    ];
    for (flaw, edit) in cases {
        let forged = tampered(&runtime, &uri, edit);
        let (status, reason, _) = verify(&runtime, &forged);
        assert_eq!(status, VerificationStatus::Rejected, "{flaw}: {reason}");
        assert!(reason.contains(flaw), "expected {flaw:?} in {reason:?}");
    }
    let (status, reason, _) = verify(&runtime, &uri);
    assert_eq!(status, VerificationStatus::Verified, "the original still verifies: {reason}");
    // A listing whose recount passes the checker's budget (every magma of order 4: 4^16 tables)
    // is UNSUPPORTED, within the default fuel, not a guess and not FUEL_EXHAUSTED.
    let (_, all, _) = enumerate(&runtime, json!({"order": 2}));
    let huge = tampered(&runtime, &all, |c: &mut Value| {
        c["claim"]["order"] = json!(4);
        c["models"] = json!([]);
        c["count"] = json!(0);
    });
    let (status, reason, fuel) = verify(&runtime, &huge);
    assert_eq!(status, VerificationStatus::Unsupported, "{reason}");
    println!("an exhausted recount budget: {fuel} fuel");
}

#[test]
fn budgets_stop_an_enumeration_with_a_partial_scope_and_fit_the_default_fuel() {
    let (runtime, _dir) = support::runtime();
    let result = invoke(&runtime, ENUMERATE, Mode::Explore, json!({"order": 3, "max_work": 20_000}));
    assert_eq!(result.status, Status::Completed, "{:?}", result.diagnostic);
    let output = result.output.unwrap();
    assert_eq!(output["complete"], false);
    assert_eq!(output["stop_reason"], "max_work");
    assert!(output["count"].as_u64().unwrap() < sequence("A001329")[3]);
    assert!(result.check_with.is_none(), "a partial listing has nothing to verify");
    // The producer's largest work budget, at the fuel a unit costs here, fits the default fuel.
    let input = json!({"hypotheses": ["associative"], "order": 5, "max_work": 100_000_000});
    let result = invoke(&runtime, ENUMERATE, Mode::Explore, input);
    let output = result.output.unwrap();
    assert_eq!(output["stop_reason"], "max_work", "{output}");
    let per_unit = result.fuel_consumed as f64 / output["work"].as_u64().unwrap() as f64;
    let schema_max =
        runtime.catalog().get(ENUMERATE).unwrap().input_schema["properties"]["max_work"]["maximum"].as_u64().unwrap();
    let default_fuel = jacobian::policy::Budgets::default().fuel;
    println!("enumeration: {per_unit:.1} fuel a work unit");
    assert!(per_unit * schema_max as f64 * 1.5 < default_fuel as f64, "{per_unit:.1} fuel a unit");
}
