//! Checker authority follows the operator policy file, and fails closed.

use jacobian::contract::{Assurance, VerificationStatus};
use jacobian_guest::protocol::Mode;
use serde_json::json;

use crate::support::{self, SEARCH, VERIFY, invoke};

#[test]
fn an_invalid_policy_file_withdraws_checker_authority_until_repaired() {
    let (runtime, dir) = support::runtime();
    let found = invoke(
        &runtime,
        SEARCH,
        Mode::Explore,
        json!({"hypotheses": ["commutative"], "target": "associative", "max_order": 2}),
    );
    let uri = found.check_with.and_then(|c| c.certificate_artifact).expect("certificate");
    let verify = || invoke(&runtime, VERIFY, Mode::Verify, json!({"countermodel": uri}));
    assert_eq!(verify().assurance, Assurance::Verified);

    let path = dir.path().join("policy.toml");
    let good = std::fs::read_to_string(&path).expect("policy written at first start");
    // Ensure the modification time changes even on coarse clocks.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&path, "this is [not toml").expect("break the policy");
    let broken = verify();
    assert_eq!(broken.assurance, Assurance::None);
    assert_eq!(broken.verification.expect("record").status, VerificationStatus::NotConcluded);

    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&path, good).expect("repair the policy");
    assert_eq!(verify().assurance, Assurance::Verified);
}

#[test]
fn an_installed_checker_that_accepts_everything_verifies_nothing_until_authorized() {
    let (runtime, dir) = support::runtime();
    let (record, _) = runtime.install(&support::test_guest("yes_checker"), None).expect("install the hostile checker");
    let runtime = support::open(dir.path().to_path_buf());
    // A satisfiable formula with a bogus "refutation": syntactically LRAT, semantically wrong.
    let cnf = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 2 1\n1 2 0\n"})).artifacts
        [0]
    .uri
    .clone();
    let bogus = invoke(&runtime, "sat.certificate.construct", Mode::Explore, json!({"cnf": cnf, "lrat": "2 0 1 0\n"}));
    let certificate = bogus.artifacts[0].uri.clone();
    let ask = |runtime: &jacobian::Runtime| {
        invoke(runtime, "test.yes.verify", Mode::Verify, json!({"cnf": cnf, "certificate": certificate}))
    };
    // Installed, not authorized: it may not even conclude.
    let unauthorized = ask(&runtime);
    let record_of = |r: &jacobian::contract::CapabilityResult| r.verification.clone().expect("a verification record");
    assert_eq!(record_of(&unauthorized).status, VerificationStatus::NotConcluded);
    assert_ne!(unauthorized.assurance, Assurance::Verified);
    // The router never picks it: the authorized bundled checker judges, and rejects.
    let routed = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": certificate}));
    assert_eq!(routed.output.as_ref().unwrap()["routed_to"], "sat.certificate.verify");
    assert_eq!(record_of(&routed).status, VerificationStatus::Rejected);
    // Only the operator's authorization by digest gives it authority; revocation takes it back.
    runtime.update_policy(|p| p.authorize("sat.certificate", record.digest)).unwrap();
    assert_eq!(ask(&runtime).assurance, Assurance::Verified, "authority comes from the operator alone");
    runtime.update_policy(|p| p.revoke(record.digest)).unwrap();
    assert_eq!(record_of(&ask(&runtime)).status, VerificationStatus::NotConcluded);
}
