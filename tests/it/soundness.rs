//! Checker soundness end to end: refutations of a satisfiable formula that a
//! checker skipping a RAT rule accepted, and certificates a hostile
//! third-party producer forged for the other bundled checkers, are not
//! VERIFIED — routed by `certificate.verify`, asked of the checker directly,
//! and re-checked offline from an archive. A valid RAT refutation is.
//! The proofs and drat-trim's `lrat-check` verdict on each are in
//! `tests/fixtures/soundness/lrat-variants.json`; the checkers' own
//! harnesses are in their `*-core` crates.

use jacobian::archive::Archive;
use jacobian::contract::{Assurance, CapabilityResult, InvokeRequest, VerificationStatus};
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support;

fn call(runtime: &jacobian::Runtime, experiment: &str, id: &str, mode: Mode, input: Value) -> CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: id.into(),
        mode: Some(mode),
        input,
        experiment: Some(experiment.into()),
        ..Default::default()
    })
}

/// The verdict of a VERIFY call, and its reason.
fn verdict(result: &CapabilityResult) -> (VerificationStatus, String) {
    let record = result.verification.as_ref().unwrap_or_else(|| panic!("no verification: {:?}", result.diagnostic));
    if record.status != VerificationStatus::Verified {
        assert_ne!(result.assurance, Assurance::Verified, "{record:?}");
    }
    (record.status, record.reason.clone())
}

fn fixture() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/soundness/lrat-variants.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .expect("JSON")
}

#[test]
fn bogus_rat_refutations_are_rejected_routed_direct_and_offline_and_a_valid_one_is_verified() {
    let (runtime, _dir) = support::runtime();
    let fixture = fixture();
    let experiment = "rat";
    let cnf = |dimacs: &str| {
        let made = call(&runtime, experiment, "sat.cnf.construct", Mode::Explore, json!({"dimacs": dimacs}));
        made.artifacts[0].uri.clone()
    };
    let (satisfiable, unsatisfiable) =
        (cnf(fixture["satisfiable"].as_str().unwrap()), cnf(fixture["unsatisfiable"].as_str().unwrap()));
    let mut cases: Vec<(String, &str, &str, VerificationStatus)> = fixture["false_refutations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let name = v["name"].as_str().unwrap().to_owned();
            (name, satisfiable.as_str(), v["proof"].as_str().unwrap(), VerificationStatus::Rejected)
        })
        .collect();
    let valid = fixture["valid_rat_refutation"]["proof"].as_str().unwrap();
    cases.push(("valid RAT refutation".into(), unsatisfiable.as_str(), valid, VerificationStatus::Verified));
    for (name, cnf, proof, expected) in &cases {
        let made =
            call(&runtime, experiment, "sat.certificate.construct", Mode::Explore, json!({"cnf": cnf, "lrat": proof}));
        let certificate = made.artifacts.first().unwrap_or_else(|| panic!("{name}: {:?}", made.diagnostic)).uri.clone();
        let routed =
            call(&runtime, experiment, "certificate.verify", Mode::Verify, json!({"certificate": certificate}));
        assert_eq!(routed.output.as_ref().unwrap()["routed_to"], "sat.certificate.verify", "{name}");
        let direct = call(
            &runtime,
            experiment,
            "sat.certificate.verify",
            Mode::Verify,
            json!({"cnf": cnf, "certificate": certificate}),
        );
        for (how, result) in [("routed", &routed), ("direct", &direct)] {
            let (status, reason) = verdict(result);
            assert_eq!(status, *expected, "{name}, {how}: {reason}");
        }
    }
    // Offline: the archive's VERIFY episodes re-run by this binary's checker.
    let pack = serde_json::to_vec(&Archive::build(&runtime, experiment).expect("archives")).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let report = jacobian::archive::verify(&pack, scratch.path(), &Default::default()).expect("verifies");
    let offline: Vec<_> = report.verdicts.iter().filter(|v| v.matches_archive.is_some()).collect();
    assert_eq!(offline.len(), 2 * cases.len(), "every routed and direct verdict is re-checked");
    let verified = offline.iter().filter(|v| v.status == Some(VerificationStatus::Verified)).count();
    let rejected = offline.iter().filter(|v| v.status == Some(VerificationStatus::Rejected)).count();
    assert_eq!((verified, rejected), (2, offline.len() - 2), "{offline:#?}");
    assert!(offline.iter().all(|v| v.matches_archive == Some(true)), "{offline:#?}");
}

#[test]
fn certificates_a_hostile_producer_forged_for_the_bundled_checkers_are_not_verified() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("forger"), None).expect("a third-party producer installs");
    drop(runtime);
    let runtime = support::open(dir.path().to_path_buf());
    let experiment = "forged";
    let graph = call(&runtime, experiment, "test.forger.graph", Mode::Explore, json!({}));
    let graph = graph.artifacts.first().unwrap_or_else(|| panic!("{:?}", graph.diagnostic)).uri.clone();
    let forged = [
        ("test.forger.induced_tree", json!({"graph": graph}), "graph.induced_tree.maximum.verify", "must be simple"),
        ("test.forger.groebner", json!({}), "polynomial.groebner_basis.verify", "generator 0"),
    ];
    for (producer, input, checker, why) in forged {
        let made = call(&runtime, experiment, producer, Mode::Explore, input);
        let certificate = made.check_with.and_then(|c| c.certificate_artifact).expect("a routed certificate");
        let routed =
            call(&runtime, experiment, "certificate.verify", Mode::Verify, json!({"certificate": certificate}));
        assert_ne!(routed.assurance, Assurance::Verified, "{producer}: {:?}", routed.verification);
        let said = serde_json::to_string(&routed).unwrap();
        assert!(said.contains(checker), "{producer}: routed to {checker}: {said}");
        assert!(said.contains(why), "{producer}: {why:?} in {said}");
    }
    let pack = serde_json::to_vec(&Archive::build(&runtime, experiment).expect("archives")).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let report = jacobian::archive::verify(&pack, scratch.path(), &Default::default()).expect("verifies");
    assert!(!report.verdicts.is_empty());
    assert!(report.verdicts.iter().all(|v| v.status != Some(VerificationStatus::Verified)), "{:#?}", report.verdicts);
}
