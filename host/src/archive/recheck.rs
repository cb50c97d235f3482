//! Re-checking a pack: `replay` re-executes its episodes, `verify` re-runs
//! the checkers on its certificates, `compare` diffs two payloads.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::contract::{ARCHIVE_FORMAT, CapabilityResult, InvokeRequest, VerificationRecord, VerificationStatus};
use crate::digest::{Digest, canonical_json};
use crate::experiments::StopReason;
use crate::releases::{ContractChange, contract_changes};
use crate::runtime::{Runtime, RuntimeConfig, episode_value};

use super::{Archive, ArchiveError, Reading, Trust, Unpacked, belonging_certificate, refuse, unavailable};

/// One differing field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldDiff {
    /// Dot-path of the field.
    pub field: String,
    /// Its left value (null when absent).
    pub left: Value,
    /// Its right value (null when absent).
    pub right: Value,
}

/// A typed diff: byte-stable for a given pair of payloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Whether every compared field matches.
    pub identical: bool,
    /// The differing fields in path order.
    pub diffs: Vec<FieldDiff>,
}

fn diff_into(path: &str, left: &Value, right: &Value, out: &mut Vec<FieldDiff>) {
    let join = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
    match (left, right) {
        (Value::Object(l), Value::Object(r)) => {
            let keys: BTreeSet<&String> = l.keys().chain(r.keys()).collect();
            for key in keys {
                diff_into(&join(key), l.get(key).unwrap_or(&Value::Null), r.get(key).unwrap_or(&Value::Null), out);
            }
        }
        (Value::Array(l), Value::Array(r)) if l.len() == r.len() => {
            for (i, (a, b)) in l.iter().zip(r).enumerate() {
                diff_into(&join(&i.to_string()), a, b, out);
            }
        }
        _ if left != right => out.push(FieldDiff { field: path.to_owned(), left: left.clone(), right: right.clone() }),
        _ => {}
    }
}

/// The named changes of the answer's shape that account for every one of
/// `diffs` (none when some field is not theirs), as "name (since release)".
fn accounted(diffs: &[FieldDiff], changes: &[&ContractChange]) -> Option<Vec<String>> {
    let mut names = BTreeSet::new();
    for diff in diffs {
        let change = changes.iter().find(|c| c.covers(&diff.field))?;
        names.insert(format!("{} (since {})", change.name, change.since.as_deref().unwrap_or("this binary")));
    }
    Some(names.into_iter().collect())
}

/// [`compare`], leaving out the fields a named change of the answer's shape
/// accounts for (`jacobian compare --ignore-contract-changes`).
pub fn compare_ignoring_contract_changes(left: &Value, right: &Value) -> Comparison {
    let mut comparison = compare(left, right);
    comparison.diffs.retain(|d| !contract_changes().iter().any(|c| c.covers(&d.field)));
    comparison.identical = comparison.diffs.is_empty();
    comparison
}

/// Diff two payloads: episodes, results or archives. An archive's
/// `experiment` and `pack_hash` are identities, not payload, and are skipped.
pub fn compare(left: &Value, right: &Value) -> Comparison {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if v.get("format").and_then(Value::as_str) == Some(ARCHIVE_FORMAT)
            && let Some(map) = v.as_object_mut()
        {
            map.remove("experiment");
            map.remove("pack_hash");
        }
        v
    };
    let mut diffs = Vec::new();
    diff_into("", &strip(left), &strip(right), &mut diffs);
    Comparison { identical: diffs.is_empty(), diffs }
}

/// What replaying one episode showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReplayOutcome {
    /// Re-executed, byte for byte the archived episode.
    Identical,
    /// Re-executed, with the fields in `diffs` differing.
    Different,
    /// Not re-executed, for the `reason` given: it stopped before an answer
    /// (a budget, a cancellation, no slot), or the pack does not carry the
    /// component that would run it.
    Skipped,
    /// Not re-executed: the checker of its verdict is recalled (the `reason`
    /// says why), so the verdict counts for nothing and nothing reproduces it.
    Recalled,
    /// Re-executed, differing only in fields that named changes of the
    /// answer's shape made since the pack's release (`changes` names them).
    ContractChange,
}

impl ReplayOutcome {
    /// The outcome as it is written.
    pub fn name(self) -> &'static str {
        match self {
            ReplayOutcome::Identical => "IDENTICAL",
            ReplayOutcome::Different => "DIFFERENT",
            ReplayOutcome::Skipped => "SKIPPED",
            ReplayOutcome::Recalled => "RECALLED",
            ReplayOutcome::ContractChange => "CONTRACT_CHANGE",
        }
    }
}

/// One replayed episode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayedEpisode {
    pub ordinal: u64,
    pub capability_id: String,
    pub outcome: ReplayOutcome,
    /// Why it was skipped or recalled; for one replayed other than from the
    /// pack alone, how.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why the release that wrote the pack says this episode replays as it
    /// does (SKIPPED and DIFFERENT only; `host/releases.toml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explained: Option<String>,
    /// The fields that differ (DIFFERENT and CONTRACT_CHANGE only).
    pub diffs: Vec<FieldDiff>,
    /// The changes of the answer's shape that account for every differing
    /// field (CONTRACT_CHANGE only), each with the release that made it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
}

/// What `jacobian replay` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayReport {
    pub pack_hash: String,
    /// The release, rules and trust the pack was read with.
    pub reading: Reading,
    /// Every re-executed episode was byte-identical.
    pub identical: bool,
    pub replayed: usize,
    /// Invocations not re-executed: stopped before an answer (budget,
    /// cancellation, no slot), run by a component the pack does not carry,
    /// or a verdict of a recalled checker.
    pub skipped: usize,
    pub episodes: Vec<ReplayedEpisode>,
}

/// The request an episode records.
fn request_of(episode: &Value) -> Result<InvokeRequest, String> {
    let mut request: InvokeRequest =
        serde_json::from_value(episode["request"].clone()).map_err(|e| format!("request: {e}"))?;
    request.experiment = Some("replay".into());
    Ok(request)
}

/// Whether an archived episode is a refusal at validation that no component ran for.
fn refused_before_a_component(episode: &Value) -> bool {
    episode["provenance"].is_null() && episode["diagnostic"]["stage"] == "VALIDATION"
}

/// A runtime of this binary's bundled portfolio (opened once, beside the
/// re-check's own data directory), holding the pack's artifacts, and with
/// the pack's recalls, revocations and quorums on top of this binary's
/// policy: for refusals the pack carries no component for, and
/// certificates the pack's checkers conclude nothing on.
fn this_binary<'a>(
    opened: &'a mut Option<Runtime>,
    dir: &Path,
    archive: &Archive,
    unpacked: &Unpacked,
) -> Result<&'a Runtime, ArchiveError> {
    if let Some(runtime) = opened {
        return Ok(runtime);
    }
    let runtime = Runtime::open(RuntimeConfig::new(dir.join("this-binary")))
        .map_err(|e| unavailable("components", crate::errors::render(&e)))?;
    unpacked.put_into(runtime.data())?;
    let pack = &archive.policy.checkers;
    runtime
        .update_policy(|policy| {
            policy.checkers.authorize_bundled = pack.authorize_bundled;
            policy.checkers.quorum = pack.quorum.clone();
            for digest in &pack.revoked {
                policy.revoke(*digest);
            }
            let recalled = pack.recalled.iter().map(|r| (r.digest, &r.reason));
            for (digest, reason) in
                recalled.chain(archive.recalled.iter().map(|r| (r.checker_digest, &r.recall.reason)))
            {
                policy.recall(digest, reason);
            }
        })
        .map_err(|e| unavailable("policy", crate::errors::render(&e)))?;
    Ok(opened.insert(runtime))
}

/// A verdict on a pack's certificate by this binary's own checkers, routed
/// by the record the pack's runtime kept for it.
fn judged_here(here: &Runtime, pack: &Runtime, certificate: &str) -> Result<CapabilityResult, String> {
    let digest = Digest::from_artifact_uri(certificate).map_err(|e| e.to_string())?;
    here.adopt_from(&digest, pack)?;
    Ok(here.invoke(&routed(certificate)))
}

/// certificate.verify of `certificate`.
fn routed(certificate: &str) -> InvokeRequest {
    InvokeRequest {
        capability_id: crate::catalog::ROUTER_ID.into(),
        mode: None,
        input: json!({"certificate": certificate}),
        budget: None,
        view: None,
        experiment: Some("verify".into()),
        tenant: None,
    }
}

/// The one recorded certificate among a check's input artifacts (none when
/// there are several: which of them a fallback should judge is not ours to pick).
fn judged_certificate(pack: &Runtime, episode: &Value) -> Option<String> {
    let mut recorded = crate::runtime::artifact_references(&episode["request"]["input"], "")
        .into_iter()
        .map(|(_, uri)| uri)
        .filter(|uri| Digest::from_artifact_uri(uri).is_ok_and(|d| matches!(pack.certificate(&d), Ok(Some(_)))));
    let first = recorded.next()?;
    recorded.all(|other| other == first).then_some(first)
}

/// Whether a re-derived verdict is the archived one: the same status about
/// the same thing (claim, candidate, semantics, scope, certificate format
/// and artifacts), whichever checker gave it.
fn same_verdict(now: Option<&VerificationRecord>, archived: &Value) -> bool {
    let Ok(archived) = serde_json::from_value::<VerificationRecord>(archived.clone()) else { return false };
    now.is_some_and(|now| {
        let judged =
            |r: &VerificationRecord| (r.status, r.claim_digest, r.candidate_digest, r.semantics_digest, r.scope_digest);
        judged(now) == judged(&archived)
            && (&now.certificate_format, &now.certificate_artifacts)
                == (&archived.certificate_format, &archived.certificate_artifacts)
    })
}

/// Re-execute every replayable episode of the archive in `dir` (fresh).
pub fn replay(bytes: &[u8], dir: &Path, trust: &Trust) -> Result<ReplayReport, ArchiveError> {
    let (archive, unpacked) = Archive::load(bytes, trust)?;
    let reading = archive.reading();
    let runtime = archive.runtime(&unpacked, dir, trust, &reading)?;
    let mut bundled = None;
    let writer = crate::releases::writer_of(&archive.bundled);
    let changes: Vec<&ContractChange> = contract_changes().iter().filter(|c| c.after(writer)).collect();
    let mut episodes = Vec::new();
    for (i, archived) in archive.episodes.iter().enumerate() {
        let replayed = |outcome: ReplayOutcome, reason: Option<String>, diffs| ReplayedEpisode {
            ordinal: archived.ordinal,
            capability_id: archived.capability_id.clone(),
            outcome,
            reason,
            explained: match outcome {
                ReplayOutcome::Skipped | ReplayOutcome::Different => {
                    archive.explained(&archived.capability_id, archived.episode.as_ref(), outcome.name())
                }
                ReplayOutcome::Identical | ReplayOutcome::Recalled | ReplayOutcome::ContractChange => None,
            },
            diffs,
            changes: Vec::new(),
        };
        let Some(original) = archived.episode.as_ref().filter(|_| archived.stop_reason.replayable()) else {
            let reason = format!("it stopped before an answer ({})", archived.stop_reason);
            episodes.push(replayed(ReplayOutcome::Skipped, Some(reason), Vec::new()));
            continue;
        };
        if let Some(reason) = archive.recall_of(archived.ordinal, original) {
            episodes.push(replayed(ReplayOutcome::Recalled, Some(reason), Vec::new()));
            continue;
        }
        let request = request_of(original).map_err(|e| refuse(format!("episodes.{i}.episode"), e))?;
        let mut on = &runtime;
        let mut note = None;
        if runtime.catalog().get(&request.capability_id).is_none() {
            // A request the host refused at validation, before any component
            // ran: packs written before 13b7f8c left that component out. The
            // refusal is the host's, against the capability's input schema:
            // it is replayed against this binary's bundled provider, and said so.
            let provider = if refused_before_a_component(original) {
                Some(this_binary(&mut bundled, dir, &archive, &unpacked)?)
                    .filter(|r| r.catalog().get(&request.capability_id).is_some())
            } else {
                None
            };
            let Some(provider) = provider else {
                let reason = format!("the pack carries no component that provides {}", request.capability_id);
                episodes.push(replayed(ReplayOutcome::Skipped, Some(reason), Vec::new()));
                continue;
            };
            note = Some(format!(
                "refused at validation before any component ran; the pack carries no component that provides {}, \
                 so it was validated against this binary's",
                request.capability_id
            ));
            on = provider;
        }
        let result = on.invoke(&request);
        let again = episode_value(&request, &result);
        episodes.push(if canonical_json(&again) == canonical_json(original) {
            replayed(ReplayOutcome::Identical, note, Vec::new())
        } else {
            let diffs = compare(original, &again).diffs;
            match accounted(&diffs, &changes) {
                Some(names) => {
                    ReplayedEpisode { changes: names, ..replayed(ReplayOutcome::ContractChange, note, diffs) }
                }
                None => replayed(ReplayOutcome::Different, note, diffs),
            }
        });
    }
    let replayed = episodes
        .iter()
        .filter(|e| {
            matches!(e.outcome, ReplayOutcome::Identical | ReplayOutcome::Different | ReplayOutcome::ContractChange)
        })
        .count();
    Ok(ReplayReport {
        pack_hash: archive.pack_hash,
        reading,
        identical: episodes.iter().all(|e| e.outcome != ReplayOutcome::Different),
        replayed,
        skipped: episodes.len() - replayed,
        episodes,
    })
}

/// One verdict re-derived offline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OfflineVerdict {
    pub ordinal: u64,
    pub capability_id: String,
    /// The certificate checked.
    pub certificate: Option<String>,
    /// The checker that ran.
    pub checker: Option<String>,
    pub status: Option<VerificationStatus>,
    pub reason: String,
    /// For archived VERIFY episodes: whether the verdict is the archived one
    /// (the same status about the same claim, candidate, semantics, scope,
    /// certificate format and artifacts, whichever checker gave it).
    pub matches_archive: Option<bool>,
    /// For an archived verdict whose checker is recalled: why (the archived
    /// verdict then counts for nothing, whatever it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recalled: Option<String>,
    /// When the verdict is not the pack's checkers' (they concluded
    /// nothing) but this binary's bundled checkers': what the pack's said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rechecked: Option<String>,
    /// Why the release that wrote the pack says the verdict is not
    /// `VERIFIED` here, if it says (`host/releases.toml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explained: Option<String>,
}

/// What `jacobian verify` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    pub pack_hash: String,
    /// The release, rules and trust the pack was read with.
    pub reading: Reading,
    pub verdicts: Vec<OfflineVerdict>,
}

fn verdict_of(result: &CapabilityResult) -> (Option<VerificationStatus>, String, Option<String>) {
    match &result.verification {
        Some(v) => (Some(v.status), v.reason.clone(), Some(v.checker_digest.to_string())),
        None => (None, result.diagnostic.as_ref().map(|d| d.message.clone()).unwrap_or_default(), None),
    }
}

/// Re-run the checkers on the archive's certificates (producer results with
/// a certificate, through `certificate.verify`) and its VERIFY episodes.
pub fn verify(bytes: &[u8], dir: &Path, trust: &Trust) -> Result<VerifyReport, ArchiveError> {
    let (archive, unpacked) = Archive::load(bytes, trust)?;
    let reading = archive.reading();
    let runtime = archive.runtime(&unpacked, dir, trust, &reading)?;
    let mut here = None;
    let mut verdicts = Vec::new();
    for (i, archived) in archive.episodes.iter().enumerate() {
        let Some(episode) = archived.episode.as_ref().filter(|_| archived.stop_reason == StopReason::Completed) else {
            continue;
        };
        let mut verdict = OfflineVerdict {
            ordinal: archived.ordinal,
            capability_id: archived.capability_id.clone(),
            certificate: None,
            checker: None,
            status: None,
            reason: String::new(),
            matches_archive: None,
            recalled: None,
            rechecked: None,
            explained: None,
        };
        let judged = if episode["verification"].is_object() {
            let request = request_of(episode).map_err(|e| refuse(format!("episodes.{i}.episode"), e))?;
            verdict.certificate = judged_certificate(&runtime, episode);
            verdict.recalled = archive.recall_of(archived.ordinal, episode);
            runtime.invoke(&request)
        } else if let Some(certificate) = episode["check_with"]["certificate_artifact"].as_str() {
            verdict.certificate = Some(certificate.to_owned());
            let belongs = belonging_certificate(episode, &unpacked.artifacts).and_then(|found| {
                let (digest, record) = found.ok_or("no certificate")?;
                // The record routing will use is the one this episode's route stands for.
                match runtime.certificate(&digest) {
                    Ok(Some(kept)) if kept == record => Ok(()),
                    Ok(_) => Err(format!(
                        "the pack's record of {certificate} is not the one this episode's route stands for"
                    )),
                    Err(e) => Err(e.to_string()),
                }
            });
            if let Err(reason) = belongs {
                verdict.reason = format!("not checked: {reason}");
                verdicts.push(verdict);
                continue;
            }
            runtime.invoke(&routed(certificate))
        } else {
            continue;
        };
        let mut judged = judged;
        (verdict.status, verdict.reason, verdict.checker) = verdict_of(&judged);
        // The pack's checkers concluded nothing (recalled, not authorized
        // here, absent): this binary's own checkers judge the certificate.
        if verdict.status == Some(VerificationStatus::NotConcluded)
            && let Some(certificate) = verdict.certificate.clone()
        {
            let here = this_binary(&mut here, dir, &archive, &unpacked)?;
            match judged_here(here, &runtime, &certificate) {
                Ok(again) => {
                    let (status, reason, checker) = verdict_of(&again);
                    if status.is_some_and(|s| s != VerificationStatus::NotConcluded) {
                        verdict.rechecked = Some(format!(
                            "the pack's checkers concluded nothing ({}); judged by this binary's",
                            verdict.reason
                        ));
                        (verdict.status, verdict.reason, verdict.checker) = (status, reason, checker);
                        judged = again;
                    } else {
                        verdict.reason = format!("{}; nor did this binary's: {reason}", verdict.reason);
                    }
                }
                Err(why) => verdict.reason = format!("{}; not judged by this binary's checkers: {why}", verdict.reason),
            }
        }
        if episode["verification"].is_object() {
            verdict.matches_archive = Some(same_verdict(judged.verification.as_ref(), &episode["verification"]));
        }
        if verdict.status != Some(VerificationStatus::Verified) {
            let status = verdict.status.map(|s| crate::json::value(&s));
            let status = status.as_ref().and_then(Value::as_str).unwrap_or("NONE");
            verdict.explained = archive.explained(&verdict.capability_id, Some(episode), status);
        }
        verdicts.push(verdict);
    }
    Ok(VerifyReport { pack_hash: archive.pack_hash, reading, verdicts })
}
