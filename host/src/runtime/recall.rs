//! Reading verdicts under recalls, and re-checking them (`jacobian
//! recheck`); what a recall means is [`crate::recall`].

use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::contract::InvokeRequest;
use crate::digest::{Digest, canonical_json};
use crate::recall::{read_recalled, recall_of};
use crate::store::{DbError, RecheckRecord};

use super::Runtime;

/// One verdict `jacobian recheck` recorded beside a recalled one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rechecked {
    /// What was recorded.
    #[serde(flatten)]
    pub record: RecheckRecord,
    /// The new verdict's reason.
    pub reason: String,
}

/// The experiment a re-check's calls are recorded in.
pub const RECHECK_EXPERIMENT: &str = "recheck";

/// Why a re-check stopped.
#[derive(Debug, thiserror::Error)]
pub enum RecheckError {
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] DbError),
    /// A stored episode is not JSON.
    #[error("episode {episode} is not readable as JSON: {reason}")]
    Unreadable { episode: Digest, reason: String },
    /// The re-check's call ended without a verdict (a budget, the store).
    #[error("the re-check of episode {episode} ended without a verdict: {reason}")]
    NoVerdict { episode: Digest, reason: String },
}

impl Runtime {
    /// An episode as it reads now: the stored bytes, or, when the checker of
    /// its verdict is recalled, the stored episode with the recall read in
    /// (canonical JSON; see [`crate::recall`]).
    pub fn episode_now(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError> {
        let Some(bytes) = self.episode(digest)? else { return Ok(None) };
        // Only a checker's episode names a checker digest: most are returned as stored, unparsed.
        if !bytes.windows(18).any(|w| w == b"\"checker_digest\":\"") {
            return Ok(Some(bytes));
        }
        let Ok(episode) = serde_json::from_slice::<Value>(&bytes) else { return Ok(Some(bytes)) };
        let Some(recall) = recall_of(&episode, &self.policy()) else { return Ok(Some(bytes)) };
        let rechecks = self.episodes.rechecks(digest)?;
        Ok(Some(canonical_json(&read_recalled(episode, digest, recall, &rechecks))))
    }

    /// The re-checks recorded beside episode `digest`, oldest first.
    pub fn rechecks(&self, digest: &Digest) -> Result<Vec<RecheckRecord>, DbError> {
        self.episodes.rechecks(digest)
    }

    /// For every stored verdict whose checker is recalled (only `checker`'s,
    /// when given) and that no re-check has answered yet: judge its
    /// certificate again through `certificate.verify`, which runs the checker
    /// the policy now authorizes for the certificate's role, and record the
    /// new verdict beside the old one. Nothing stored is changed or deleted.
    pub fn recheck(&self, checker: Option<&Digest>) -> Result<Vec<Rechecked>, RecheckError> {
        let policy = self.policy();
        let mut recalled = policy.checkers.recalled.clone();
        let bundled: Vec<_> = crate::policy::bundled_recalls()
            .into_iter()
            .filter(|b| !recalled.iter().any(|r| r.digest == b.digest))
            .collect();
        recalled.extend(bundled);
        recalled.retain(|r| checker.is_none_or(|c| r.digest == *c));
        let mut done = Vec::new();
        for recall in recalled {
            for episode in self.episodes.verdicts_by(&recall.digest)? {
                if self.episodes.rechecks(&episode)?.iter().any(|r| r.recalled == recall.digest) {
                    continue;
                }
                let Some(bytes) = self.episode(&episode)? else { continue };
                let stored: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| RecheckError::Unreadable { episode, reason: e.to_string() })?;
                let Some(certificate) = self.recorded_certificate_in(&stored)? else { continue };
                let result = self.invoke(&InvokeRequest {
                    capability_id: "certificate.verify".into(),
                    mode: Some(Mode::Verify),
                    input: json!({"certificate": certificate}),
                    experiment: Some(RECHECK_EXPERIMENT.into()),
                    ..Default::default()
                });
                let (Some(verification), Some(transport)) = (result.verification, result.transport) else {
                    let reason = result.diagnostic.map(|d| d.message).unwrap_or_default();
                    return Err(RecheckError::NoVerdict { episode, reason });
                };
                let status = crate::json::name(&verification.status);
                let record = RecheckRecord {
                    episode,
                    recalled: recall.digest,
                    recheck: transport.full_result_digest,
                    status,
                    checker: verification.checker_digest,
                };
                self.episodes.put_recheck(&record)?;
                done.push(Rechecked { record, reason: verification.reason });
            }
        }
        Ok(done)
    }

    /// The certificate a stored verdict judged: the first artifact its record
    /// names that a producer made as a certificate.
    fn recorded_certificate_in(&self, episode: &Value) -> Result<Option<String>, DbError> {
        let named = episode["verification"]["certificate_artifacts"].as_array().cloned().unwrap_or_default();
        for uri in named.iter().filter_map(Value::as_str) {
            if let Ok(digest) = Digest::from_artifact_uri(uri)
                && self.episodes.certificate(&digest)?.is_some()
            {
                return Ok(Some(uri.to_owned()));
            }
        }
        Ok(None)
    }
}
