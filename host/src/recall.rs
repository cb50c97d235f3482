//! Recalled checkers: how the verdicts of a checker found unsound read.
//!
//! A recall (`jacobian checkers recall`, kept in the policy, or the bundled
//! policy's history, [`crate::policy::BUNDLED_RECALLS`]) revokes a checker
//! digest and changes how the verdicts it gave read — never what is stored.
//! An episode keeps its bytes and its digest; read through `episode://`, an
//! experiment's archive or `jacobian verify`, its verdict is `NOT_CONCLUDED`,
//! its assurance `NONE`, and its verification record carries a
//! [`RecallNote`]: the reason, the verdict as stored and the re-checks
//! recorded beside it since. Setting the stored fields back and removing the
//! note gives the stored bytes again, which hash to the episode's digest.

use serde_json::Value;

use crate::contract::{Assurance, RecallNote, RecalledBy, RecheckNote, VerificationStatus};
use crate::digest::Digest;
use crate::policy::{Policy, Recall};
use crate::store::RecheckRecord;

/// The checker digest a stored episode's verdict names, if it has one.
pub fn verdict_checker(episode: &Value) -> Option<Digest> {
    episode.get("verification")?.get("checker_digest")?.as_str()?.parse().ok()
}

/// The checkers a stored verdict rests on: its checker, and under a quorum
/// every checker whose acceptance was counted.
fn rested_on(episode: &Value) -> Vec<Digest> {
    let counted = episode
        .pointer("/verification/quorum/verdicts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["counted"] == Value::Bool(true))
        .filter_map(|v| v["checker_digest"].as_str()?.parse().ok());
    verdict_checker(episode).into_iter().chain(counted).collect()
}

/// Why a checker `episode`'s verdict rests on is recalled under `policy`,
/// and by whom (under a quorum, one recalled checker whose acceptance was
/// counted is enough: the verdict is read again as a whole by `jacobian recheck`).
pub fn recall_of(episode: &Value, policy: &Policy) -> Option<(Recall, RecalledBy)> {
    rested_on(episode).into_iter().find_map(|checker| {
        let by_operator = policy.checkers.recalled.iter().any(|r| r.digest == checker);
        let recall = policy.recall_of(&checker)?;
        Some((recall, if by_operator { RecalledBy::Operator } else { RecalledBy::Bundled }))
    })
}

/// `episode` (stored under `digest`) as it reads once its checker is
/// recalled: the verdict `NOT_CONCLUDED`, the assurance `NONE`, the stored
/// ones in the record's [`RecallNote`] with `rechecks`.
pub fn read_recalled(
    mut episode: Value,
    digest: &Digest,
    (recall, by): (Recall, RecalledBy),
    rechecks: &[RecheckRecord],
) -> Value {
    let stored_assurance: Assurance =
        episode.get("assurance").and_then(|a| serde_json::from_value(a.clone()).ok()).unwrap_or_default();
    let Some(record) = episode.get_mut("verification").and_then(Value::as_object_mut) else { return episode };
    let stored_status: VerificationStatus = record
        .get("status")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or(VerificationStatus::NotConcluded);
    let stored_reason = record.get("reason").and_then(Value::as_str).unwrap_or_default().to_owned();
    let note = RecallNote {
        reason: recall.reason.clone(),
        recalled_by: by,
        stored_status,
        stored_reason,
        stored_assurance,
        stored_episode: format!("{}{}", crate::contract::EPISODE_URI_PREFIX, digest.to_hex()),
        rechecks: rechecks
            .iter()
            .filter_map(|r| {
                Some(RecheckNote {
                    episode: format!("{}{}", crate::contract::EPISODE_URI_PREFIX, r.recheck.to_hex()),
                    status: serde_json::from_value(Value::String(r.status.clone())).ok()?,
                    checker_digest: r.checker,
                })
            })
            .collect(),
    };
    record.insert("status".into(), crate::json::value(&VerificationStatus::NotConcluded));
    record.insert(
        "reason".into(),
        Value::String(format!(
            "checker {} was recalled ({}); the verdict it gave no longer counts: {}",
            recall.digest, recall.reason, "re-check it with `jacobian recheck`"
        )),
    );
    record.insert("recall".into(), crate::json::value(&note));
    if let Some(assurance) = episode.get_mut("assurance") {
        *assurance = crate::json::value(&Assurance::None);
    }
    episode
}
