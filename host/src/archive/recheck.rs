//! Re-checking a pack: `replay` re-executes its episodes, `verify` re-runs
//! the checkers on its certificates, `compare` diffs two payloads.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::contract::{ARCHIVE_FORMAT, CapabilityResult, InvokeRequest, VerificationStatus};
use crate::digest::canonical_json;
use crate::experiments::StopReason;
use crate::runtime::episode_value;

use super::{Archive, ArchiveError, Trust, belonging_certificate, refuse};

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
}

/// One replayed episode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayedEpisode {
    pub ordinal: u64,
    pub capability_id: String,
    pub outcome: ReplayOutcome,
    /// Why it was skipped or recalled (SKIPPED and RECALLED only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The fields that differ (DIFFERENT only).
    pub diffs: Vec<FieldDiff>,
}

/// What `jacobian replay` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayReport {
    pub pack_hash: String,
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

/// Re-execute every replayable episode of the archive in `dir` (fresh).
pub fn replay(bytes: &[u8], dir: &Path, trust: &Trust) -> Result<ReplayReport, ArchiveError> {
    let (archive, unpacked) = Archive::load(bytes, trust)?;
    let runtime = archive.runtime(&unpacked, dir, trust)?;
    let mut episodes = Vec::new();
    for (i, archived) in archive.episodes.iter().enumerate() {
        let replayed = |outcome, reason: Option<String>, diffs| ReplayedEpisode {
            ordinal: archived.ordinal,
            capability_id: archived.capability_id.clone(),
            outcome,
            reason,
            diffs,
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
        if runtime.catalog().get(&request.capability_id).is_none() {
            let reason = format!("the pack carries no component that provides {}", request.capability_id);
            episodes.push(replayed(ReplayOutcome::Skipped, Some(reason), Vec::new()));
            continue;
        }
        let result = runtime.invoke(&request);
        let again = episode_value(&request, &result);
        episodes.push(if canonical_json(&again) == canonical_json(original) {
            replayed(ReplayOutcome::Identical, None, Vec::new())
        } else {
            replayed(ReplayOutcome::Different, None, compare(original, &again).diffs)
        });
    }
    let replayed = episodes
        .iter()
        .filter(|e| e.outcome == ReplayOutcome::Identical || e.outcome == ReplayOutcome::Different)
        .count();
    Ok(ReplayReport {
        pack_hash: archive.pack_hash,
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
    /// For archived VERIFY episodes: whether the verdict is the archived one.
    pub matches_archive: Option<bool>,
    /// For an archived verdict whose checker is recalled: why (the archived
    /// verdict then counts for nothing, whatever it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recalled: Option<String>,
}

/// What `jacobian verify` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    pub pack_hash: String,
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
    let runtime = archive.runtime(&unpacked, dir, trust)?;
    let mut verdicts = Vec::new();
    for (i, archived) in archive.episodes.iter().enumerate() {
        let Some(episode) = archived.episode.as_ref().filter(|_| archived.stop_reason == StopReason::Completed) else {
            continue;
        };
        if episode["verification"].is_object() {
            let request = request_of(episode).map_err(|e| refuse(format!("episodes.{i}.episode"), e))?;
            let result = runtime.invoke(&request);
            let (status, reason, checker) = verdict_of(&result);
            let archived_status: Option<VerificationStatus> =
                serde_json::from_value(episode["verification"]["status"].clone()).ok();
            verdicts.push(OfflineVerdict {
                ordinal: archived.ordinal,
                capability_id: archived.capability_id.clone(),
                certificate: None,
                checker,
                matches_archive: Some(status.is_some() && status == archived_status),
                status,
                reason,
                recalled: archive.recall_of(archived.ordinal, episode),
            });
        } else if let Some(certificate) = episode["check_with"]["certificate_artifact"].as_str() {
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
                verdicts.push(OfflineVerdict {
                    ordinal: archived.ordinal,
                    capability_id: archived.capability_id.clone(),
                    certificate: Some(certificate.to_owned()),
                    checker: None,
                    status: None,
                    reason: format!("not checked: {reason}"),
                    matches_archive: None,
                    recalled: None,
                });
                continue;
            }
            let request = InvokeRequest {
                capability_id: crate::catalog::ROUTER_ID.into(),
                mode: None,
                input: json!({"certificate": certificate}),
                budget: None,
                view: None,
                experiment: Some("verify".into()),
                tenant: None,
            };
            let result = runtime.invoke(&request);
            let (status, reason, checker) = verdict_of(&result);
            verdicts.push(OfflineVerdict {
                ordinal: archived.ordinal,
                capability_id: archived.capability_id.clone(),
                certificate: Some(certificate.to_owned()),
                checker,
                status,
                reason,
                matches_archive: None,
                recalled: None,
            });
        }
    }
    Ok(VerifyReport { pack_hash: archive.pack_hash, verdicts })
}
