//! The compatibility corpus (`tests/compat/`, one folder per release, each
//! with the script that wrote it): every archive an earlier release wrote
//! replays and verifies offline on this binary with no trust granted by the
//! reviewer. An episode that does not replay byte for byte, and a verdict
//! that is not `VERIFIED`, must be accounted for: by its release's stated
//! differences (`host/releases.toml`), a named change of the answer's shape,
//! a recall, or having stopped before an answer. A tampered byte in any
//! archive is refused naming the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use jacobian::archive::{Archive, ReplayOutcome, Trust, replay, verify};
use jacobian::contract::VerificationStatus;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/compat")
}

fn corpus() -> Vec<(String, PathBuf)> {
    let root = root();
    let mut packs = Vec::new();
    for release in std::fs::read_dir(&root).expect("tests/compat").map(|e| e.expect("an entry").path()) {
        if !release.is_dir() {
            continue;
        }
        let name = release.file_name().unwrap().to_string_lossy().into_owned();
        let mut found = 0;
        for file in std::fs::read_dir(&release).expect("a release folder").map(|e| e.expect("an entry").path()) {
            if file.extension().is_some_and(|e| e == "json") {
                packs.push((name.clone(), file));
                found += 1;
            }
        }
        assert!(found > 0, "{} holds no archive", release.display());
        assert!(release.join("make.sh").is_file(), "{} does not say how it was written", release.display());
    }
    packs.sort();
    packs
}

fn label(path: &Path) -> String {
    let parent = path.parent().and_then(Path::file_name).unwrap_or_default().to_string_lossy();
    format!("{parent}/{}", path.file_name().unwrap_or_default().to_string_lossy())
}

#[test]
fn every_archive_of_every_release_replays_and_verifies_or_the_difference_is_accounted_for() {
    let packs = corpus();
    let known: Vec<&str> = jacobian::releases::releases().iter().map(|r| r.name.as_str()).collect();
    let (mut episodes, mut verdicts, mut unaccounted) = (0, 0, Vec::new());
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut reports = BTreeMap::new();
    for (release, path) in &packs {
        assert!(known.contains(&release.as_str()), "{release} is not in host/releases.toml");
        let bytes = std::fs::read(path).unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let replayed = replay(&bytes, scratch.path(), &Trust::default()).expect("the pack is accepted");
        assert_eq!(replayed.reading.written_by.as_deref(), Some(release.as_str()), "{}", label(path));
        for e in &replayed.episodes {
            episodes += 1;
            *outcomes.entry(e.outcome.name().to_owned()).or_default() += 1;
            let accounted = match e.outcome {
                ReplayOutcome::Identical => true,
                ReplayOutcome::ContractChange => !e.changes.is_empty(),
                ReplayOutcome::Recalled => e.reason.is_some(),
                ReplayOutcome::Skipped => {
                    e.explained.is_some()
                        || e.reason.as_deref().is_some_and(|r| r.starts_with("it stopped before an answer"))
                }
                ReplayOutcome::Different => e.explained.is_some(),
            };
            if !accounted {
                unaccounted.push(format!("{} replay {} {}: {e:?}", label(path), e.ordinal, e.outcome.name()));
            }
        }
        let scratch = tempfile::tempdir().unwrap();
        let verified = verify(&bytes, scratch.path(), &Trust::default()).expect("the pack is accepted");
        for v in &verified.verdicts {
            verdicts += 1;
            let holds = v.status == Some(VerificationStatus::Verified) && v.matches_archive != Some(false);
            if !holds && v.explained.is_none() {
                unaccounted.push(format!("{} verify {} {}: {v:?}", label(path), v.ordinal, v.capability_id));
            }
        }
        reports.insert(label(path), (replayed, verified));
    }
    println!(
        "compat corpus: {} archives of {} releases, {episodes} episodes replayed ({outcomes:?}), {verdicts} verdicts re-derived",
        packs.len(),
        packs.iter().map(|(r, _)| r).collect::<std::collections::BTreeSet<_>>().len()
    );
    assert!(unaccounted.is_empty(), "unaccounted for:\n{}", unaccounted.join("\n"));
    assert!(packs.len() >= 5 && episodes >= 50 && verdicts >= 30, "{} {episodes} {verdicts}", packs.len());

    // The packs of 052cb71 (before role binding): read under rules 1, its
    // bundled checkers trusted by this binary's release list, recalled ones never.
    let (replayed, verified) = &reports["052cb71/countermodel.json"];
    assert_eq!((replayed.reading.rules, replayed.reading.rules_from), (1, "the release that wrote the pack"));
    assert!(replayed.reading.mapping.contains("roles its component declares"));
    assert!(replayed.episodes.iter().all(|e| e.outcome == ReplayOutcome::Identical), "{replayed:?}");
    let statuses: Vec<_> = verified.verdicts.iter().map(|v| v.status).collect();
    assert_eq!(statuses, [Some(VerificationStatus::Verified); 3], "{verified:?}");
    assert!(verified.verdicts.iter().all(|v| v.rechecked.is_none()), "its own checker verifies");
    let (replayed, verified) = &reports["052cb71/mixed.json"];
    let recalled: Vec<u64> =
        replayed.episodes.iter().filter(|e| e.outcome == ReplayOutcome::Recalled).map(|e| e.ordinal).collect();
    assert_eq!(recalled, [3, 6, 8]);
    for ordinal in recalled {
        let v = verified.verdicts.iter().find(|v| v.ordinal == ordinal).expect("its verdict");
        assert!(v.recalled.is_some(), "the verdict names its recall: {v:?}");
    }
    // A recalled checker is never trusted as bundled, whoever bundled it.
    for recall in jacobian::policy::bundled_recalls() {
        assert!(!replayed.reading.bundled.contains_key(&recall.digest.to_hex()), "{}", recall.digest);
    }
    // The claim refusal's component was left out by that release; it is
    // replayed against this binary's, and says so.
    let refusal = &replayed.episodes[9];
    assert_eq!(
        (refusal.capability_id.as_str(), refusal.outcome),
        ("claim.proposition.construct", ReplayOutcome::Identical)
    );
    assert!(refusal.reason.as_deref().is_some_and(|r| r.contains("validated against this binary's")), "{refusal:?}");
    // Its SAT and induced-tree certificates: that release's checkers are
    // recalled, so this binary's judge them, and they hold.
    for ordinal in [2, 3, 5, 6] {
        let v = verified.verdicts.iter().find(|v| v.ordinal == ordinal).expect("a verdict");
        assert_eq!(v.status, Some(VerificationStatus::Verified), "{v:?}");
        assert!(v.rechecked.is_some() && v.matches_archive != Some(false), "{v:?}");
    }
}

/// What a reader runs, with no flag: `jacobian verify` and `replay` of a
/// 052cb71 pack succeed and say which release wrote it and how its rules were read.
#[test]
fn jacobian_verify_and_replay_of_a_052cb71_pack_succeed_and_say_how_they_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let pack = root().join("052cb71/countermodel.json");
    for command in ["verify", "replay"] {
        let printed = crate::support::cli(dir.path(), &[command, pack.to_str().unwrap()]);
        let report: Value = serde_json::from_str(&printed).expect("the report");
        let reading = &report["reading"];
        assert_eq!((reading["written_by"].as_str(), reading["rules"].as_u64()), (Some("052cb71"), Some(1)), "{report}");
        assert!(reading["mapping"].as_str().unwrap().contains("and only those"), "{report}");
        let vouched: Vec<&str> = reading["bundled"].as_object().unwrap().values().filter_map(Value::as_str).collect();
        assert_eq!(vouched, ["release 052cb71"; 2], "{report}");
    }
}

/// One byte changed in a component, an artifact, an episode or the hash of
/// any corpus archive: refused, naming the field, before anything runs.
#[test]
fn a_tampered_byte_in_any_corpus_archive_is_refused_naming_the_field() {
    for (_, path) in corpus() {
        let pack: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut cases: Vec<(Value, String)> = Vec::new();
        for kind in ["components", "artifacts"] {
            let (hex, text) = pack[kind].as_object().unwrap().iter().next().expect("one");
            let mut bytes = base64::engine::general_purpose::STANDARD.decode(text.as_str().unwrap()).unwrap();
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            let mut tampered = pack.clone();
            tampered[kind][hex] = base64::engine::general_purpose::STANDARD.encode(&bytes).into();
            cases.push((tampered, format!("{kind}.{hex}")));
        }
        let index = pack["episodes"].as_array().unwrap().iter().position(|e| e["episode"].is_object()).expect("one");
        let mut tampered = pack.clone();
        tampered["episodes"][index]["episode"]["fuel_consumed"] = 1.into();
        cases.push((tampered, format!("episodes.{index}.episode")));
        let mut tampered = pack.clone();
        tampered["policy"]["checkers"]["authorize_bundled"] =
            (!pack["policy"]["checkers"]["authorize_bundled"].as_bool().unwrap()).into();
        cases.push((tampered, "pack_hash".into()));
        for (tampered, field) in cases {
            let err = Archive::load(&serde_json::to_vec(&tampered).unwrap(), &Trust::default())
                .err()
                .unwrap_or_else(|| panic!("{}: {field} tampered and accepted", label(&path)));
            assert_eq!(err.field, field, "{}: {err}", label(&path));
        }
    }
}
