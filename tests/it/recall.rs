//! Recalling a checker: every verdict it gave reads as NOT_CONCLUDED with
//! the reason — its episode, its experiment's archive, an offline verify —
//! while the stored bytes stay as they were; `jacobian recheck` records the
//! verdict of the checker now authorized beside it; the checker built before
//! a soundness fix is recalled by the bundled policy's history.

use jacobian::archive::Archive;
use jacobian::contract::{Assurance, CapabilityResult, InvokeRequest, VerificationStatus};
use jacobian::digest::Digest;
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

fn status(record: &Value) -> &str {
    record["status"].as_str().unwrap_or_default()
}

#[test]
fn a_recalled_checker_s_verdicts_read_as_not_concluded_everywhere_and_a_recheck_records_the_new_verdict_beside_them() {
    let (runtime, dir) = support::runtime();
    let (yes, _) = runtime.install(&support::test_guest("yes_checker"), None).expect("install");
    drop(runtime);
    let runtime = support::open(dir.path().to_path_buf());
    runtime.update_policy(|p| p.authorize("sat.certificate", yes.digest)).unwrap();
    // A satisfiable formula, a bogus refutation, and the unsound checker's VERIFIED.
    let experiment = "unsound";
    let cnf = call(&runtime, experiment, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 2 1\n1 2 0\n"}));
    let cnf = cnf.artifacts[0].uri.clone();
    let made = call(
        &runtime,
        experiment,
        "sat.certificate.construct",
        Mode::Explore,
        json!({"cnf": cnf, "lrat": "2 0 1 0\n"}),
    );
    let certificate = made.artifacts[0].uri.clone();
    let verified =
        call(&runtime, experiment, "test.yes.verify", Mode::Verify, json!({"cnf": cnf, "certificate": certificate}));
    assert_eq!(verified.assurance, Assurance::Verified, "{:?}", verified.verification);
    let transport = verified.transport.clone().expect("stored");
    let (uri, digest) =
        (transport.full_result_episode_uri.clone().expect("an episode URI"), transport.full_result_digest);

    // The operator recalls it, from the command line.
    let reason = "accepts every certificate without reading it";
    support::cli(dir.path(), &["checkers", "recall", &yes.digest.to_string(), "--reason", reason]);

    // episode://: NOT_CONCLUDED, with the reason and the stored verdict; the stored bytes unchanged.
    let read: Value = serde_json::from_str(&jacobian::resources::read(&runtime, &uri).expect("readable").text).unwrap();
    assert_eq!(status(&read["verification"]), "NOT_CONCLUDED");
    assert_eq!(read["assurance"], "NONE");
    let note = &read["verification"]["recall"];
    assert_eq!((note["reason"].as_str(), note["recalled_by"].as_str()), (Some(reason), Some("OPERATOR")));
    assert_eq!(
        (note["stored_status"].as_str(), note["stored_assurance"].as_str()),
        (Some("VERIFIED"), Some("VERIFIED"))
    );
    let stored = runtime.episode(&digest).unwrap().expect("stored");
    assert_eq!(Digest::of(&stored), digest);
    let stored: Value = serde_json::from_slice(&stored).unwrap();
    assert_eq!(status(&stored["verification"]), "VERIFIED", "nothing stored is changed");

    // The recalled checker concludes nothing from now on.
    let again =
        call(&runtime, "later", "test.yes.verify", Mode::Verify, json!({"cnf": cnf, "certificate": certificate}));
    let record = again.verification.expect("a record");
    assert_eq!(record.status, VerificationStatus::NotConcluded);
    assert!(record.reason.contains("was recalled") && record.reason.contains(reason), "{}", record.reason);

    // The experiment's archive: the verdict listed as recalled, the episode packed as stored.
    let archive = Archive::build(&runtime, experiment).expect("archives");
    let recalled = archive.recalled.iter().find(|r| r.checker_digest == yes.digest).expect("the recalled verdict");
    assert_eq!(recalled.status, VerificationStatus::NotConcluded);
    assert_eq!(recalled.recall.reason, reason);
    assert_eq!(recalled.recall.stored_status, VerificationStatus::Verified);

    // Offline: the archived verdict is named as recalled, and is not VERIFIED again.
    let pack = serde_json::to_vec(&archive).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let report = jacobian::archive::verify(&pack, scratch.path(), &support::reviewer_trust(&pack)).expect("verifies");
    let offline = report.verdicts.iter().find(|v| v.capability_id == "test.yes.verify").expect("its verdict");
    assert_eq!(offline.recalled.as_deref(), Some(reason));
    assert_ne!(offline.status, Some(VerificationStatus::Verified), "{offline:?}");

    // jacobian recheck: the checker now authorized for the role judges the certificate again.
    let printed = support::cli(dir.path(), &["recheck"]);
    let line: Value = serde_json::from_str(printed.lines().next().expect("one re-check")).unwrap();
    let bundled: Digest = runtime.catalog().get("sat.certificate.verify").map(|e| e.component).unwrap();
    assert_eq!(line["status"], "REJECTED", "{printed}");
    assert_eq!(line["checker"], bundled.to_string());
    assert_eq!(support::cli(dir.path(), &["recheck"]).lines().count(), 0, "a verdict is re-checked once");
    let read: Value = serde_json::from_str(&jacobian::resources::read(&runtime, &uri).expect("readable").text).unwrap();
    let rechecks = read["verification"]["recall"]["rechecks"].as_array().expect("rechecks");
    assert_eq!(rechecks.len(), 1);
    assert_eq!(rechecks[0]["status"], "REJECTED");
    assert_eq!(rechecks[0]["checker_digest"], bundled.to_string());
    // Both verdicts stay stored: the old episode as it was, the new one readable.
    assert!(jacobian::resources::read(&runtime, rechecks[0]["episode"].as_str().unwrap()).is_ok());
}

/// The bundled policy's history recalls the checkers this project shipped
/// before their soundness fixes, and none that this binary bundles.
#[test]
fn the_bundled_history_recalls_the_checkers_built_before_their_fixes_and_none_built_now() {
    let recalls = jacobian::policy::bundled_recalls();
    assert_eq!(recalls.len(), jacobian::policy::BUNDLED_RECALLS.len(), "every entry parses");
    assert!(recalls.len() >= 4, "the SAT, Gröbner, induced-tree and countermodel checkers of 54eee10");
    let (runtime, _dir) = support::runtime();
    let policy = runtime.policy();
    for recall in &recalls {
        assert!(!policy.authorizes("sat.certificate", &recall.digest, true), "{} is authorized", recall.digest);
        assert!(!recall.reason.is_empty());
    }
    for entry in runtime.catalog().entries() {
        assert!(policy.recall_of(&entry.component).is_none(), "{} is bundled now and recalled", entry.id);
    }
}
