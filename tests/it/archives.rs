//! A new pack carries the component of every episode it holds, even a
//! refused one, and replays it (packs of earlier releases: `compat.rs`).

use jacobian::archive::{Archive, ReplayOutcome, ReplayReport, replay};
use jacobian::contract::{Code, InvokeRequest, Stage, Status};
use serde_json::{Value, json};

use crate::support;

/// Replay as a reviewer who authorizes the checkers the pack's verdicts name.
fn replay_pack(pack: &[u8]) -> ReplayReport {
    let dir = tempfile::tempdir().unwrap();
    replay(pack, dir.path(), &support::reviewer_trust(pack)).expect("the pack is accepted")
}

fn outcomes(report: &ReplayReport) -> Vec<(u64, ReplayOutcome)> {
    report.episodes.iter().map(|e| (e.ordinal, e.outcome)).collect()
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
