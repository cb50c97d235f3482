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

/// The countermodel checker 052cb71 bundled.
const UNIVERSAL_ALGEBRA_CHECKER_052CB71: &str = "29dd30c6f5b5f29c43690e96dbf04c27cdf80ea02520e7ebfa315e3887282c33";

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
    let (mut episodes, mut verdicts, mut verified, mut unaccounted) = (0, 0, 0, Vec::new());
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
        let checked = verify(&bytes, scratch.path(), &Trust::default()).expect("the pack is accepted");
        for v in &checked.verdicts {
            verdicts += 1;
            let holds = v.status == Some(VerificationStatus::Verified) && v.matches_archive != Some(false);
            verified += usize::from(holds);
            if !holds && v.explained.is_none() {
                unaccounted.push(format!("{} verify {} {}: {v:?}", label(path), v.ordinal, v.capability_id));
            }
        }
        reports.insert(label(path), (replayed, checked));
    }
    let releases = packs.iter().map(|(r, _)| r).collect::<std::collections::BTreeSet<_>>();
    let mut summary = format!(
        "{} archives of {} releases ({}), {episodes} episodes replayed ({outcomes:?}), {verdicts} verdicts re-derived \
         ({} VERIFIED)\n",
        packs.len(),
        releases.len(),
        releases.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", "),
        verified
    );
    for unexplained in &unaccounted {
        summary.push_str(&format!("  not accounted for: {unexplained}\n"));
    }
    print!("{summary}");
    // The test command prints this file at its end (scripts/test.sh).
    if let Some(path) = std::env::var_os("JACOBIAN_COMPAT_REPORT") {
        std::fs::write(&path, &summary).unwrap_or_else(|e| panic!("{}: {e}", Path::new(&path).display()));
    }
    assert!(unaccounted.is_empty(), "unaccounted for:\n{}", unaccounted.join("\n"));
    assert!(packs.len() >= 5 && episodes >= 50 && verdicts >= 30, "{} {episodes} {verdicts}", packs.len());

    // The packs of 052cb71 (before role binding): read under rules 1, its
    // bundled checkers trusted by this binary's release list, recalled ones never.
    let (replayed, verified) = &reports["052cb71/countermodel.json"];
    assert_eq!((replayed.reading.rules, replayed.reading.rules_from), (1, "the release that wrote the pack"));
    assert!(replayed.reading.mapping.contains("roles its component declares"));
    assert_eq!(replayed.reading.trusted.keys().collect::<Vec<_>>(), [UNIVERSAL_ALGEBRA_CHECKER_052CB71]);
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
        assert!(!replayed.reading.trusted.contains_key(&recall.digest.to_hex()), "{}", recall.digest);
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
        // Its checker, vouched for by the release list, and nothing else.
        let trusted = reading["trusted"].as_object().unwrap();
        assert_eq!(trusted.keys().collect::<Vec<_>>(), [UNIVERSAL_ALGEBRA_CHECKER_052CB71], "{report}");
        assert!(trusted.values().all(|by| by.as_str().unwrap().starts_with("release 052cb71: ")), "{report}");
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

/// Seal an edited pack again, as anyone can: its episodes' digests and its
/// `pack_hash` recomputed.
fn reseal(pack: &mut Value) {
    use jacobian::digest::{Digest, canonical_json};
    for archived in pack["episodes"].as_array_mut().unwrap() {
        if archived["episode"].is_object() {
            archived["digest"] = Digest::of(&canonical_json(&archived["episode"])).to_string().into();
        }
    }
    let mut body = pack.clone();
    body.as_object_mut().unwrap().remove("pack_hash");
    pack["pack_hash"] = Digest::of(&canonical_json(&body)).to_string().into();
}

/// A pack re-sealed after editing can neither claim a release whose
/// components it does not carry, nor name rules this binary does not know,
/// nor pass off a verdict about other certificates as the one re-derived.
#[test]
fn a_resealed_pack_cannot_claim_a_release_name_unknown_rules_or_pass_off_another_verdict() {
    let original: Value = serde_json::from_slice(&std::fs::read(root().join("052cb71/mixed.json")).unwrap()).unwrap();
    let load = |pack: &Value| Archive::load(&serde_json::to_vec(pack).unwrap(), &Trust::default()).map(|_| ());
    let mut claims = original.clone();
    claims["bundled"].as_array_mut().unwrap().push(format!("sha256:{UNIVERSAL_ALGEBRA_CHECKER_052CB71}").into());
    reseal(&mut claims);
    let err = load(&claims).expect_err("a release claimed by a digest it does not carry");
    assert_eq!(err.field, format!("bundled.{UNIVERSAL_ALGEBRA_CHECKER_052CB71}"), "{err}");
    for field in ["rules", "policy.rules"] {
        let mut rules = original.clone();
        match field {
            "rules" => rules["rules"] = 7.into(),
            _ => rules["policy"]["rules"] = 7.into(),
        }
        reseal(&mut rules);
        assert_eq!(load(&rules).expect_err("unknown rules").field, field);
    }
    // The archived SAT verdict (ordinal 3), edited to say it judged one
    // more artifact: this binary's checker re-derives a verdict about the
    // certificate alone, which is not the archived one.
    let mut widened = original.clone();
    let extra = widened["episodes"][0]["episode"]["artifacts"][0]["uri"].clone();
    let verification = &mut widened["episodes"][2]["episode"]["verification"];
    verification["certificate_artifacts"].as_array_mut().unwrap().push(extra);
    reseal(&mut widened);
    load(&widened).expect("sealed again, it loads");
    let scratch = tempfile::tempdir().unwrap();
    let report = verify(&serde_json::to_vec(&widened).unwrap(), scratch.path(), &Trust::default()).unwrap();
    let sat = report.verdicts.iter().find(|v| v.ordinal == 3).expect("its verdict");
    assert_eq!((sat.status, sat.matches_archive), (Some(VerificationStatus::Verified), Some(false)), "{sat:?}");
}
