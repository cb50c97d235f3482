//! Archives replay whatever the outcome: packs written by an earlier binary
//! (`tests/fixtures/archives`, made by `make.sh` there) keep replaying (the
//! verdicts of recalled checkers named, not re-run), and a
//! new pack carries the component of every episode it holds.

use std::path::PathBuf;

use jacobian::archive::{Archive, ReplayOutcome, ReplayReport, replay};
use jacobian::contract::{Code, InvokeRequest, Stage, Status};
use serde_json::{Value, json};

use crate::support;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/archives").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Replay as a reviewer who authorizes the checkers the pack's verdicts name.
fn replay_pack(pack: &[u8]) -> ReplayReport {
    let dir = tempfile::tempdir().unwrap();
    replay(pack, dir.path(), &support::reviewer_trust(pack)).expect("the pack is accepted")
}

fn outcomes(report: &ReplayReport) -> Vec<(u64, ReplayOutcome)> {
    report.episodes.iter().map(|e| (e.ordinal, e.outcome)).collect()
}

#[test]
fn a_countermodel_pack_from_before_the_pipeline_redesign_replays_identically() {
    let report = replay_pack(&fixture("countermodel-052cb71.json"));
    assert!(report.episodes.iter().all(|e| e.diffs.is_empty()), "{:?}", report.episodes);
    // The search, its checker, the router, and the component's own refusal.
    assert_eq!(outcomes(&report), (1..=4).map(|o| (o, ReplayOutcome::Identical)).collect::<Vec<_>>());
    assert!(report.identical);
}

#[test]
fn a_mixed_pack_from_before_the_redesign_replays_what_it_carries_and_names_what_it_cannot() {
    let report = replay_pack(&fixture("mixed-052cb71.json"));
    // The verdicts of the SAT, induced-tree and Gröbner checkers of that
    // binary are recalled (their soundness holes, docs/trust.md): named, not re-run.
    let recalled = [3, 6, 8];
    let mut expected: Vec<(u64, ReplayOutcome)> = (1..=9)
        .map(|o| (o, if recalled.contains(&o) { ReplayOutcome::Recalled } else { ReplayOutcome::Identical }))
        .collect();
    // That pack left out the component of an episode refused by schema
    // validation when no other episode used it: never a different result.
    expected.push((10, ReplayOutcome::Skipped));
    assert_eq!(outcomes(&report), expected, "{:?}", report.episodes);
    for (ordinal, checker) in [
        (3, "sat.certificate.verify"),
        (6, "graph.induced_tree.maximum.verify"),
        (8, "polynomial.groebner_basis.verify"),
    ] {
        let reason = report.episodes[ordinal - 1].reason.as_deref().unwrap_or_default();
        assert!(reason.starts_with(checker) && reason.contains("052cb71"), "{ordinal}: {reason}");
    }
    let skipped = &report.episodes[9];
    assert_eq!(skipped.capability_id, "claim.proposition.construct");
    let reason = skipped.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("no component") && reason.contains("claim.proposition.construct"), "{reason}");
    assert_eq!((report.replayed, report.skipped), (6, 4));
    assert!(report.identical, "a skipped or recalled episode is not a difference");
}

#[test]
fn a_new_pack_carries_the_component_of_every_episode_even_a_refused_one_and_replays_it() {
    let (runtime, _dir) = support::runtime();
    let call = |id: &str, input: Value| {
        runtime.invoke(&InvokeRequest {
            capability_id: id.into(),
            input,
            experiment: Some("exp-refusals".into()),
            ..Default::default()
        })
    };
    // Refused by the host's schema validation: no episode at all.
    let misspelled =
        call("polynomial.compute.groebner_basis", json!({"generator": ["x"], "vars": ["x"], "order": "lex"}));
    let d = misspelled.diagnostic.unwrap();
    assert_eq!((d.code, d.stage), (Code::InvalidInput, Stage::Validation));
    let paths: Vec<&str> = d.details["errors"].as_array().unwrap().iter().filter_map(|e| e["path"].as_str()).collect();
    assert_eq!(paths, ["input.generators", "input.generator"]);
    assert!(!misspelled.transport.unwrap().stored);
    // Refused by the components themselves: episodes, whose components the pack carries.
    let syntax =
        call("polynomial.compute.groebner_basis", json!({"generators": ["x^"], "vars": ["x"], "order": "lex"}));
    let prose = call("claim.proposition.construct", json!({"formula": "p ->"}));
    for refused in [&syntax, &prose] {
        assert_eq!(refused.status, Status::Failed);
        assert_eq!(refused.diagnostic.as_ref().unwrap().code, Code::InvalidInput);
        assert!(refused.provenance.is_some() && refused.transport.as_ref().unwrap().stored, "{:?}", refused.diagnostic);
    }
    let archive = Archive::build(&runtime, "exp-refusals").expect("archives");
    assert_eq!(archive.episodes.len(), 2, "the schema refusal is in no experiment");
    for refused in [&syntax, &prose] {
        let digest = refused.provenance.as_ref().unwrap().provider_digest.to_hex();
        assert!(archive.components.contains_key(&digest), "{} carried", refused.capability_id);
    }
    let report = replay_pack(&serde_json::to_vec(&archive).unwrap());
    assert_eq!(outcomes(&report), vec![(1, ReplayOutcome::Identical), (2, ReplayOutcome::Identical)]);
}
