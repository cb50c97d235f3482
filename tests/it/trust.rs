//! Who may make what true: a verdict is bound to the role the certificate
//! needs, fixed by the host when its producer made it, and only a checker the
//! operator authorized for exactly that role can make it `VERIFIED`.

use jacobian::archive::{Archive, ArchiveErrorKind};
use jacobian::contract::{Assurance, CapabilityResult, Code, InvokeRequest, VerificationRecord, VerificationStatus};
use jacobian::digest::{Digest, canonical_json};
use jacobian::runtime::verification_binding;
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, invoke};

fn record_of(result: &CapabilityResult) -> VerificationRecord {
    result.verification.clone().unwrap_or_else(|| panic!("a verification record: {:?}", result.diagnostic))
}

fn in_experiment(runtime: &jacobian::Runtime, experiment: &str, id: &str, input: Value) -> CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: id.into(),
        input,
        experiment: Some(experiment.into()),
        ..Default::default()
    })
}

/// A satisfiable CNF and a bogus LRAT "refutation" of it, wrapped by `sat.certificate.construct`.
fn bogus_refutation(runtime: &jacobian::Runtime) -> (String, String) {
    let cnf = invoke(runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 2 1\n1 2 0\n"})).artifacts[0]
        .uri
        .clone();
    let bogus = invoke(runtime, "sat.certificate.construct", Mode::Explore, json!({"cnf": cnf, "lrat": "2 0 1 0\n"}));
    (cnf, bogus.artifacts[0].uri.clone())
}

/// The attack as found: a lax checker of role `acme.lint` (id
/// `aaa.lint.verify`, sorting before the SAT checker) that declares the SAT
/// schemas and formats, authorized by the operator for `acme.lint` only.
#[test]
fn a_checker_authorized_for_another_role_never_verifies_a_certificate_routed_or_direct() {
    let (runtime, dir) = support::runtime();
    let (installed, _) = runtime.install(&support::test_guest("yes_checker"), None).expect("install");
    let runtime = support::open(dir.path().to_path_buf());
    runtime.update_policy(|p| p.authorize("acme.lint", installed.digest)).unwrap();
    let (cnf, certificate) = bogus_refutation(&runtime);

    // Routed: the certificate needs role sat.certificate; only the real checker is authorized for it, and it rejects.
    let routed = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": certificate}));
    assert_eq!(routed.output.as_ref().unwrap()["routed_to"], "sat.certificate.verify");
    let record = record_of(&routed);
    assert_eq!((record.status, record.checker_role.as_str()), (VerificationStatus::Rejected, "sat.certificate"));
    assert_ne!(routed.assurance, Assurance::Verified);

    // Direct: authorized for acme.lint, not for the role this certificate needs; it is not run.
    let direct = invoke(&runtime, "aaa.lint.verify", Mode::Verify, json!({"cnf": cnf, "certificate": certificate}));
    let record = record_of(&direct);
    assert_eq!(record.status, VerificationStatus::NotConcluded);
    assert_ne!(direct.assurance, Assurance::Verified);
    assert!(!record.checker_authorized);
    assert_eq!(record.checker_role, "sat.certificate", "the record names the role the certificate needs");
    assert!(
        direct.obligations.iter().any(|o| o.contains("authorizes for role sat.certificate")),
        "the obligation names the role required: {:?}",
        direct.obligations
    );
    assert_eq!(direct.fuel_consumed, 0, "not run");

    // With the real checkers revoked, nothing is authorized for the role: still never VERIFIED, and nothing runs.
    for real in ["sat.certificate.verify", "sat.certificate.plain.verify"] {
        let real = runtime.catalog().get(real).unwrap().component;
        runtime.update_policy(|p| p.revoke(real)).unwrap();
    }
    let unrouted = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": certificate}));
    let output = unrouted.output.as_ref().unwrap();
    assert_eq!((output["routed_to"].clone(), output["checker_role"].clone()), (Value::Null, json!("sat.certificate")));
    assert_eq!(record_of(&unrouted).status, VerificationStatus::NotConcluded, "concluded nothing");
    assert!(unrouted.assurance != Assurance::Verified);
    assert!(unrouted.obligations[0].contains("role sat.certificate"), "{:?}", unrouted.obligations);

    // Authorized for the certificate's own role, the lax checker does decide: authority is the operator's to give.
    runtime.update_policy(|p| p.authorize("sat.certificate", installed.digest)).unwrap();
    let granted = invoke(&runtime, "test.yes.verify", Mode::Verify, json!({"cnf": cnf, "certificate": certificate}));
    assert_eq!(granted.assurance, Assurance::Verified);
    let lint = invoke(&runtime, "aaa.lint.verify", Mode::Verify, json!({"cnf": cnf, "certificate": certificate}));
    assert_eq!(record_of(&lint).status, VerificationStatus::NotConcluded, "aaa.lint.verify does not fill that role");
}

/// A hostile producer of role `acme.lint` wraps a SAT certificate in its own
/// certificate, so that routing would fill the lint checker's input with the
/// SAT certificate; and a direct call pairs a lint certificate with an
/// artifact it does not name. Neither may make anything VERIFIED.
#[test]
fn a_check_cannot_judge_a_certificate_of_another_role_through_a_wrapper_or_borrow_a_role() {
    let (runtime, dir) = support::runtime();
    let (checkers, _) = runtime.install(&support::test_guest("yes_checker"), None).expect("install");
    runtime.install(&support::test_guest("hostile"), None).expect("install");
    let runtime = support::open(dir.path().to_path_buf());
    runtime.update_policy(|p| p.authorize("acme.lint", checkers.digest)).unwrap();
    let (cnf, sat_certificate) = bogus_refutation(&runtime);
    let attack = |attack: &str, argument: String| {
        invoke(&runtime, "test.hostile.attack", Mode::Explore, json!({"attack": attack, "argument": argument}))
    };
    let wrapped = attack("relabel", format!("cnf={cnf};certificate={sat_certificate}"));
    let wrapper = wrapped.check_with.as_ref().and_then(|c| c.certificate_artifact.clone()).expect("a certificate");

    // Routed: the lint checker is chosen for the wrapper's role, but its input would judge the SAT certificate.
    let routed = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": wrapper}));
    assert_eq!(routed.output.as_ref().unwrap()["routed_to"], "aaa.lint.verify");
    let record = record_of(&routed);
    assert_eq!(record.status, VerificationStatus::NotConcluded, "{}", record.reason);
    assert!(record.reason.contains(&wrapper), "names the certificate the input left out: {}", record.reason);
    assert_eq!(routed.fuel_consumed, 0, "not run");

    // Direct, the SAT certificate beside the wrapper: certificates of two kinds.
    let both =
        invoke(&runtime, "aaa.lint.verify", Mode::Verify, json!({"cnf": wrapper, "certificate": sat_certificate}));
    let record = record_of(&both);
    assert_eq!(record.status, VerificationStatus::NotConcluded);
    assert!(record.reason.contains("several kinds"), "{}", record.reason);

    // Direct, the wrapper's role borrowed for an artifact it does not name.
    let other = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 3 1\n1 2 3 0\n"}));
    let stray = other.artifacts[0].uri.clone();
    let borrowed = invoke(&runtime, "aaa.lint.verify", Mode::Verify, json!({"cnf": wrapper, "certificate": stray}));
    let record = record_of(&borrowed);
    assert_eq!(record.status, VerificationStatus::NotConcluded);
    assert!(record.reason.contains(&stray), "{}", record.reason);

    // The wrapper with what it names, judged under its own role by the checker authorized for it: the operator's call.
    let own = invoke(&runtime, "aaa.lint.verify", Mode::Verify, json!({"cnf": cnf, "certificate": wrapper}));
    let record = record_of(&own);
    assert_eq!((record.status, record.checker_role.as_str()), (VerificationStatus::Verified, "acme.lint"));

    // A producer may not route a certificate as one format while its content says another.
    let mismatch = attack("format_mismatch", format!("cnf={cnf};certificate={sat_certificate}"));
    let refusal = mismatch.diagnostic.expect("refused");
    assert_eq!(refusal.code, Code::MalformedOutput);
    assert!(refusal.message.contains("format lrat but the certificate artifact says model"), "{}", refusal.message);
}

#[test]
fn a_check_of_artifacts_that_are_no_certificate_concludes_nothing() {
    let (runtime, _dir) = support::runtime();
    let (cnf, _) = bogus_refutation(&runtime);
    // The CNF is an artifact, but no producer made it as a certificate: no role is recorded for a verdict to bind to.
    let result = invoke(&runtime, "sat.certificate.verify", Mode::Verify, json!({"cnf": cnf, "certificate": cnf}));
    let record = record_of(&result);
    assert_eq!(record.status, VerificationStatus::NotConcluded);
    assert!(record.reason.contains("none of the input's artifacts is a certificate"), "{}", record.reason);
    assert_eq!(result.fuel_consumed, 0, "not run");
    let routed = invoke(&runtime, "certificate.verify", Mode::Verify, json!({"certificate": cnf}));
    let refusal = routed.diagnostic.expect("refused");
    assert_eq!((refusal.code, refusal.details["path"].clone()), (Code::InvalidInput, json!("input.certificate")));
    assert!(refusal.message.contains("was not made as a certificate"), "{}", refusal.message);
    assert!(routed.verification.is_none());
}

/// A SAT model's verdict records `model` (not the checker's first format),
/// the binding digest covers it, and a pack whose record says otherwise is refused.
#[test]
fn a_model_verdict_records_model_and_a_tampered_format_is_refused() {
    let (runtime, _dir) = support::runtime();
    let experiment = "model-verdict";
    let cnf = in_experiment(&runtime, experiment, "sat.cnf.construct", json!({"dimacs": "p cnf 2 2\n1 2 0\n-1 0\n"}));
    let solved = in_experiment(&runtime, experiment, "sat.solve", json!({"cnf": cnf.artifacts[0].uri}));
    let route = solved.check_with.clone().expect("a route");
    assert_eq!(route.certificate_format, "model");
    let certificate = route.certificate_artifact.expect("a certificate");
    let verdict = in_experiment(&runtime, experiment, "certificate.verify", json!({"certificate": certificate}));
    let record = record_of(&verdict);
    assert_eq!((record.status, record.certificate_format.as_str()), (VerificationStatus::Verified, "model"));
    assert_eq!(record.binding_digest, verification_binding(&record));
    let lrat = VerificationRecord { certificate_format: "lrat".into(), ..record.clone() };
    assert_ne!(verification_binding(&lrat), record.binding_digest, "the binding covers the format");

    // A pack whose verdict record is edited to say lrat (digests recomputed so only the binding can tell).
    let archive = Archive::build(&runtime, experiment).expect("archives");
    let mut pack = serde_json::to_value(&archive).unwrap();
    let index = pack["episodes"].as_array().unwrap().iter().position(|e| e["episode"]["verification"].is_object());
    let index = index.expect("the verify episode");
    pack["episodes"][index]["episode"]["verification"]["certificate_format"] = json!("lrat");
    let refused = |pack: &Value| Archive::load(&serde_json::to_vec(&reseal(pack)).unwrap(), &Default::default());
    let error = refused(&pack).err().expect("refused");
    assert_eq!(error.kind, ArchiveErrorKind::Invalid);
    assert_eq!(error.field, format!("episodes.{index}.episode.verification.binding_digest"));
    // A VERIFIED record bound to nothing is refused too.
    let mut unbound = serde_json::to_value(&archive).unwrap();
    unbound["episodes"][index]["episode"]["verification"]["binding_digest"] = Value::Null;
    let error = refused(&unbound).err().expect("refused");
    assert_eq!(error.field, format!("episodes.{index}.episode.verification.binding_digest"));
    // An episode filed under another capability than its own.
    let mut misfiled = serde_json::to_value(&archive).unwrap();
    misfiled["episodes"][index]["capability_id"] = json!("sat.solve");
    let error = refused(&misfiled).err().expect("refused");
    assert_eq!(error.field, format!("episodes.{index}.capability_id"));
}

/// A pack with every episode digest and the pack hash recomputed, so that
/// only the checks behind them can tell what was edited.
fn reseal(pack: &Value) -> Value {
    let mut pack = pack.clone();
    for episode in pack["episodes"].as_array_mut().unwrap() {
        if episode["episode"].is_object() {
            episode["digest"] = json!(Digest::of(&canonical_json(&episode["episode"])).to_string());
        }
    }
    let mut unsealed = pack.clone();
    unsealed.as_object_mut().unwrap().remove("pack_hash");
    pack["pack_hash"] = json!(Digest::of(&canonical_json(&unsealed)).to_string());
    pack
}

/// Offline `verify` reports a verdict under a producer's capability only for
/// a certificate that belongs to that episode's request.
#[test]
fn offline_verify_checks_that_a_certificate_belongs_to_its_episode() {
    let (runtime, _dir) = support::runtime();
    let experiment = "belongs";
    let cnf = in_experiment(&runtime, experiment, "sat.cnf.construct", json!({"dimacs": "p cnf 1 2\n1 0\n-1 0\n"}));
    let solved = in_experiment(&runtime, experiment, "sat.solve", json!({"cnf": cnf.artifacts[0].uri}));
    assert_eq!(solved.check_with.as_ref().unwrap().certificate_format, "lrat");
    let archive = Archive::build(&runtime, experiment).expect("archives");
    let honest = serde_json::to_vec(&archive).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let report = jacobian::archive::verify(&honest, scratch.path(), &Default::default()).expect("verifies");
    let verdict = report.verdicts.iter().find(|v| v.capability_id == "sat.solve").expect("a verdict");
    assert_eq!(verdict.status, Some(VerificationStatus::Verified), "{}", verdict.reason);

    // The producer episode's route edited to name the CNF artifact as its certificate.
    let offline = |pack: &Value| {
        let scratch = tempfile::tempdir().unwrap();
        let bytes = serde_json::to_vec(&reseal(pack)).unwrap();
        let report = jacobian::archive::verify(&bytes, scratch.path(), &Default::default()).expect("verifies");
        report.verdicts.into_iter().find(|v| v.capability_id == "sat.solve").expect("a verdict")
    };
    // The producer episode's route edited to name the CNF artifact as its certificate.
    let mut pack = serde_json::to_value(&archive).unwrap();
    pack["episodes"][1]["episode"]["check_with"]["certificate_artifact"] = json!(cnf.artifacts[0].uri);
    let verdict = offline(&pack);
    assert_eq!(verdict.status, None);
    assert!(verdict.reason.contains("is not among the episode's artifacts"), "{}", verdict.reason);
    // The request edited to ask about another formula than the one the certificate was made for.
    let mut pack = serde_json::to_value(&archive).unwrap();
    let other = "artifact://sha256/".to_owned() + &"0".repeat(64);
    pack["episodes"][1]["episode"]["request"]["input"]["cnf"] = json!(other);
    let verdict = offline(&pack);
    assert_eq!(verdict.status, None);
    assert!(verdict.reason.contains("not by this episode's request"), "{}", verdict.reason);
}

/// `certificate.verify` and the MCP tools' names are the host's: no component may provide them.
#[test]
fn the_host_s_own_ids_are_reserved_at_install() {
    let seed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/descriptor/checker.json")).unwrap();
    let descriptor: Value = serde_json::from_slice(&seed[1..]).unwrap();
    let original = descriptor["checkers"][0]["capability_id"].as_str().unwrap().to_owned();
    for id in jacobian::descriptor::RESERVED_IDS {
        let text =
            serde_json::to_string(&descriptor).unwrap().replace(&format!("\"{original}\""), &format!("\"{id}\""));
        let error = jacobian::descriptor::validate(
            text.as_bytes(),
            jacobian_guest::protocol::BundleKind::Checker,
            &Default::default(),
        )
        .expect_err(id);
        assert_eq!(
            error.to_string(),
            format!("descriptor field checkers.0.capability_id: {id} is reserved by the host")
        );
    }
}
