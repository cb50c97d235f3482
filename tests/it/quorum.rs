//! A quorum of checkers (`jacobian checkers quorum ROLE K`): with 2 of the
//! SAT role asked, a certificate is VERIFIED only when both bundled SAT
//! checkers — written apart, distinct digests and providers — accept it, and
//! the record lists both verdicts; one rejection makes it REJECTED; an
//! acceptance of another claim does not count; a format only one checker
//! reads concludes nothing. Offline verify reproduces the quorum, and a
//! recall of either checker recalls the verdict.

use jacobian::archive::Archive;
use jacobian::contract::{
    Assurance, CapabilityResult, InvokeRequest, QuorumOutcome, VerificationRecord, VerificationStatus,
};
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support;

const EVERY_CLAUSE: &str = "p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n";

fn call(runtime: &jacobian::Runtime, id: &str, mode: Mode, input: Value) -> CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: id.into(),
        mode: Some(mode),
        input,
        experiment: Some("quorum".into()),
        ..Default::default()
    })
}

fn made(runtime: &jacobian::Runtime, id: &str, input: Value) -> String {
    let result = call(runtime, id, Mode::Explore, input);
    result.artifacts.first().unwrap_or_else(|| panic!("{id}: {:?}", result.diagnostic)).uri.clone()
}

/// The solver's certificate for `dimacs`: (CNF, certificate).
fn solved(runtime: &jacobian::Runtime, dimacs: &str) -> (String, String) {
    let cnf = made(runtime, "sat.cnf.construct", json!({"dimacs": dimacs}));
    let solved = call(runtime, "sat.solve", Mode::Explore, json!({"cnf": cnf}));
    (cnf, solved.check_with.and_then(|c| c.certificate_artifact).expect("a certificate"))
}

fn routed(runtime: &jacobian::Runtime, certificate: &str) -> (CapabilityResult, VerificationRecord) {
    let result = call(runtime, "certificate.verify", Mode::Verify, json!({"certificate": certificate}));
    let record = result.verification.clone().unwrap_or_else(|| panic!("no record: {:?}", result.diagnostic));
    (result, record)
}

/// (checker id, outcome, counted) of each verdict of a quorum.
fn verdicts(record: &VerificationRecord) -> Vec<(String, QuorumOutcome, bool)> {
    let quorum = record.quorum.as_ref().expect("the record lists the quorum's verdicts");
    quorum.verdicts.iter().map(|v| (v.checker_id.clone(), v.outcome, v.counted)).collect()
}

fn owned(list: &[(&str, QuorumOutcome, bool)]) -> Vec<(String, QuorumOutcome, bool)> {
    list.iter().map(|(id, outcome, counted)| ((*id).to_owned(), *outcome, *counted)).collect()
}

#[test]
fn two_of_two_sat_checkers_must_accept_and_one_rejection_or_one_reader_is_not_enough() {
    use QuorumOutcome::{Accepted, Rejected};
    let (runtime, dir) = support::runtime();
    let (unsat_cnf, lrat) = solved(&runtime, EVERY_CLAUSE);
    let (_, model) = solved(&runtime, "p cnf 3 2\n1 -2 0\n2 3 0\n");
    let (one, _) = routed(&runtime, &lrat);
    assert_eq!(one.assurance, Assurance::Verified);
    assert!(one.verification.as_ref().unwrap().quorum.is_none(), "no quorum asked, none listed");

    let printed = support::cli(dir.path(), &["checkers", "quorum", "sat.certificate", "2"]);
    assert!(printed.contains("sat.certificate.plain.verify"), "{printed}");
    assert_eq!(runtime.policy().quorum("sat.certificate"), 2);
    let both = [("sat.certificate.verify", Accepted, true), ("sat.certificate.plain.verify", Accepted, true)];

    // The solver's LRAT refutation and its model of another formula: both checkers accept.
    for certificate in [&lrat, &model] {
        let (result, record) = routed(&runtime, certificate);
        assert_eq!((record.status, result.assurance), (VerificationStatus::Verified, Assurance::Verified));
        assert_eq!(verdicts(&record), owned(&both), "{}", record.reason);
        let quorum = record.quorum.as_ref().unwrap();
        assert_eq!((quorum.required, quorum.counted), (2, 2));
        assert_ne!(quorum.verdicts[0].checker_digest, quorum.verdicts[1].checker_digest);
        assert_ne!(quorum.verdicts[0].provider, quorum.verdicts[1].provider);
        assert!(result.fuel_consumed > one.fuel_consumed || certificate != &lrat, "both checkers ran");
    }
    // Asked directly, the same quorum.
    let direct = call(&runtime, "sat.certificate.verify", Mode::Verify, json!({"cnf": unsat_cnf, "certificate": lrat}));
    assert_eq!(direct.assurance, Assurance::Verified);
    assert_eq!(verdicts(direct.verification.as_ref().unwrap()), owned(&both));

    // The published bogus refutation of a satisfiable formula: both reject.
    let cnf = made(&runtime, "sat.cnf.construct", json!({"dimacs": "p cnf 2 2\n1 2 0\n-1 0\n"}));
    let bogus = made(&runtime, "sat.certificate.construct", json!({"cnf": cnf, "lrat": "3 1 0 -1 0\n4 0 2 3 0\n"}));
    let (result, record) = routed(&runtime, &bogus);
    assert_eq!(record.status, VerificationStatus::Rejected);
    assert_ne!(result.assurance, Assurance::Verified);
    let rejected = [("sat.certificate.verify", Rejected, false), ("sat.certificate.plain.verify", Rejected, false)];
    assert_eq!(verdicts(&record), owned(&rejected));

    // A DRAT proof: only the first checker reads DRAT, so one acceptance is all there is.
    let drat = made(&runtime, "sat.certificate.construct", json!({"cnf": unsat_cnf, "drat": "2 0\n0\n"}));
    let (result, record) = routed(&runtime, &drat);
    assert_eq!(record.status, VerificationStatus::NotConcluded, "{}", record.reason);
    assert_ne!(result.assurance, Assurance::Verified);
    assert_eq!(verdicts(&record), owned(&[("sat.certificate.verify", Accepted, true)]));
    assert!(
        record.remaining_obligations.iter().any(|o| o.contains("1 more authorized checker(s) of role sat.certificate")),
        "{:?}",
        record.remaining_obligations
    );

    // An installed checker the operator authorizes that rejects everything: one rejection outweighs two
    // acceptances; its companion accepts everything, but judged another claim, and is not counted.
    for guest in ["no_checker", "yes_checker"] {
        let (installed, _) = runtime.install(&support::test_guest(guest), None).expect("install");
        support::cli(
            dir.path(),
            &["checkers", "authorize", &installed.digest.to_string(), "--role", "sat.certificate"],
        );
    }
    drop(runtime);
    let runtime = support::open(dir.path().to_path_buf());
    let (result, record) = routed(&runtime, &lrat);
    assert_eq!(record.status, VerificationStatus::Rejected, "{}", record.reason);
    assert_ne!(result.assurance, Assurance::Verified);
    assert!(record.reason.contains("test.no.verify") && record.reason.contains("rejected"), "{}", record.reason);
    let listed = verdicts(&record);
    assert_eq!(listed.len(), 4, "{listed:?}");
    assert!(listed.contains(&("test.no.verify".into(), Rejected, false)), "{listed:?}");
    assert!(listed.contains(&("test.yes.verify".into(), Accepted, false)), "{listed:?}");
    let yes = record.quorum.as_ref().unwrap().verdicts.iter().find(|v| v.checker_id == "test.yes.verify").unwrap();
    assert!(yes.reason.contains("judged another claim"), "{}", yes.reason);
}

#[test]
fn a_quorum_s_verdict_is_reproduced_offline_and_recalled_with_either_checker() {
    let (runtime, dir) = support::runtime();
    support::cli(dir.path(), &["checkers", "quorum", "sat.certificate", "2"]);
    let (_, lrat) = solved(&runtime, EVERY_CLAUSE);
    let (result, record) = routed(&runtime, &lrat);
    assert_eq!(record.status, VerificationStatus::Verified, "{}", record.reason);
    let uri = result.transport.as_ref().and_then(|t| t.full_result_episode_uri.clone()).expect("stored");

    // Offline: the archive carries the policy and both checkers; verify and replay reproduce the quorum.
    let archive = Archive::build(&runtime, "quorum").expect("archives");
    let pack = serde_json::to_vec(&archive).unwrap();
    let trust = support::reviewer_trust(&pack);
    let report = jacobian::archive::verify(&pack, tempfile::tempdir().unwrap().path(), &trust).expect("verifies");
    let offline = report.verdicts.iter().find(|v| v.capability_id == "certificate.verify").expect("its verdict");
    assert_eq!((offline.status, offline.matches_archive), (Some(VerificationStatus::Verified), Some(true)));
    let replay = jacobian::archive::replay(&pack, tempfile::tempdir().unwrap().path(), &trust).expect("replays");
    assert!(replay.identical, "{:?}", replay.episodes);

    // The second checker recalled: the stored verdict rested on it, and reads NOT_CONCLUDED.
    let plain = runtime.catalog().get("sat.certificate.plain.verify").unwrap().component;
    support::cli(dir.path(), &["checkers", "recall", &plain.to_string(), "--reason", "a test of the recall"]);
    let read: Value = serde_json::from_str(&jacobian::resources::read(&runtime, &uri).expect("readable").text).unwrap();
    assert_eq!(read["verification"]["status"], "NOT_CONCLUDED");
    assert_eq!(read["verification"]["recall"]["reason"], "a test of the recall");
    // And from now on the quorum cannot be met: one authorized checker is left.
    let (_, again) = routed(&runtime, &lrat);
    assert_eq!(again.status, VerificationStatus::NotConcluded, "{}", again.reason);
}

#[test]
fn a_quorum_is_between_one_and_eight() {
    let (_runtime, dir) = support::runtime();
    for bad in ["0", "9"] {
        let output = std::process::Command::new(support::BIN)
            .arg("--data-dir")
            .arg(dir.path())
            .args(["checkers", "quorum", "sat.certificate", bad])
            .output()
            .unwrap();
        assert!(!output.status.success(), "quorum {bad} accepted");
    }
    let memory = 1 << 30;
    for (text, ok) in [
        ("[checkers.quorum]\n\"sat.certificate\" = 2\n", true),
        ("[checkers.quorum]\n\"sat.certificate\" = 0\n", false),
        ("[checkers.quorum]\n\"sat.certificate\" = 9\n", false),
    ] {
        let parsed = jacobian::policy::Policy::parse(text, memory);
        assert_eq!(parsed.is_ok(), ok, "{text}: {parsed:?}");
        if let Err(e) = parsed {
            assert!(e.to_string().contains("checkers.quorum.\"sat.certificate\""), "{e}");
        }
    }
}
