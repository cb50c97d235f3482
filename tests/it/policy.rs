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
