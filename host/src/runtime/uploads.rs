//! Uploads: a file above the input limit (a proof of hundreds of megabytes)
//! brought in whole by `jacobian artifact put` or `PUT /artifacts/sha256/…`.
//! The bytes are stored as a file named by their SHA-256, streamed in under
//! the policy's `[uploads] max_bytes`; an artifact envelope of the stated
//! schema then names the file, and its `artifact://` URI is what
//! capabilities take, as for any artifact. A component reads the file in
//! ranges (`read-file`), never whole; the host re-hashes the file before a
//! call's first read of it.

use serde::Serialize;
use serde_json::{Value, json};

use crate::digest::Digest;
use crate::quotas::{Storing, stored_bytes_spent};
use crate::store::{FileError, StoreError};

use super::Runtime;

/// The envelope role of an upload.
pub const UPLOAD_ROLE: &str = "upload";

/// An upload's envelope is well under this (a schema URI of at most 200 bytes, two digests).
const MAX_UPLOAD_ENVELOPE: usize = 1024;

/// What an upload stored.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Uploaded {
    /// The artifact to pass to capabilities (`artifact://sha256/<hex>`).
    pub uri: String,
    /// The SHA-256 of the file's bytes.
    pub file: Digest,
    /// Its length.
    pub bytes: u64,
    /// The schema the artifact declares.
    pub schema_uri: String,
}

/// Why an upload was refused. Nothing is stored in any case.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// The schema is not a schema URI.
    #[error("schema {0:?} is not a schema URI (NAMESPACE:NAME@VERSION, e.g. jacobian:sat/lrat-file@1)")]
    Schema(String),
    /// The declared or the actual length is above the policy's bound.
    #[error("the file is larger than the limit of {limit} bytes (policy [uploads] max_bytes)")]
    TooLarge { limit: u64 },
    /// The bytes do not hash to the digest the caller named.
    #[error("the bytes hash to {actual}, not to the {expected} the upload named")]
    Mismatch { expected: Digest, actual: Digest },
    /// The tenant's stored-bytes quota is spent.
    #[error("{}", .0.message())]
    Quota(crate::quotas::Exceeded),
    /// The sender failed (a client gone, a file unreadable).
    #[error("reading the upload: {0}")]
    Source(std::io::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<FileError> for UploadError {
    fn from(e: FileError) -> Self {
        match e {
            FileError::TooLarge { limit } => UploadError::TooLarge { limit },
            FileError::Mismatch { expected, actual } => UploadError::Mismatch { expected, actual },
            FileError::Source(e) => UploadError::Source(e),
            FileError::Store(e) => UploadError::Store(e),
        }
    }
}

/// Whether `schema` reads as a schema URI: `NAMESPACE:NAME@VERSION`, printable ASCII, at most 200 bytes.
fn schema_uri(schema: &str) -> bool {
    let Some((name, version)) = schema.rsplit_once('@') else { return false };
    schema.len() <= 200
        && name.split_once(':').is_some_and(|(a, b)| !a.is_empty() && !b.is_empty())
        && !version.is_empty()
        && version.bytes().all(|b| b.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-:/".contains(&b))
}

/// The envelope that names an uploaded file.
fn envelope(schema: &str, file: &Digest, bytes: u64) -> Value {
    json!({
        "artifact_version": jacobian_guest::protocol::ARTIFACT_VERSION,
        "schema_uri": schema,
        "role": UPLOAD_ROLE,
        "lineage": {"capability_id": UPLOAD_ROLE, "input_digest": file.to_hex(), "provider_digest": ""},
        "content": {"file": file.to_string(), "bytes": bytes},
    })
}

/// The file an artifact's canonical bytes name, if it is an upload.
pub fn carried_file(envelope: &[u8]) -> Option<(Digest, u64)> {
    // Cheap before parsing (every named artifact is asked): an upload's
    // envelope is small, and canonical JSON spells its role exactly so.
    let marker = b"\"role\":\"upload\"";
    if envelope.len() > MAX_UPLOAD_ENVELOPE || !envelope.windows(marker.len()).any(|w| w == marker) {
        return None;
    }
    let value: Value = serde_json::from_slice(envelope).ok()?;
    if value["role"] != UPLOAD_ROLE || value["lineage"]["capability_id"] != UPLOAD_ROLE {
        return None;
    }
    let file = value["content"]["file"].as_str()?.parse().ok()?;
    Some((file, value["content"]["bytes"].as_u64()?))
}

impl Runtime {
    /// Store the bytes of `source` as a file and an artifact of `schema`
    /// naming it. `declared` (a Content-Length, a file's size) is refused at
    /// once when above the bound; the bytes are refused as soon as they pass
    /// it; with `expect`, bytes of another digest are refused. The file and
    /// the artifact are visible only once both are stored.
    pub fn upload(
        &self,
        source: &mut dyn std::io::Read,
        schema: &str,
        declared: Option<u64>,
        expect: Option<&Digest>,
    ) -> Result<Uploaded, UploadError> {
        self.upload_as(None, source, schema, declared, expect)
    }

    /// [`Runtime::upload`] for `tenant` (`None`: the operator), under the
    /// tenant's stored-bytes quota: the declared length is reserved first
    /// (refused whole when the quota has not that much left), or, for a body
    /// of unknown length, what is left, and the bytes are cut off at the
    /// reservation; an upload never passes the quota. What was stored is
    /// counted, the rest of the reservation given back.
    pub fn upload_as(
        &self,
        tenant: Option<&str>,
        source: &mut dyn std::io::Read,
        schema: &str,
        declared: Option<u64>,
        expect: Option<&Digest>,
    ) -> Result<Uploaded, UploadError> {
        if !schema_uri(schema) {
            return Err(UploadError::Schema(schema.chars().take(200).collect()));
        }
        let policy = self.policy();
        let limit = policy.uploads.max_bytes;
        if declared.is_some_and(|n| n > limit) {
            return Err(UploadError::TooLarge { limit });
        }
        let owner = tenant;
        let quota = tenant.filter(|_| policy.quotas.of_any_storage()).map(|t| policy.quotas.of(t));
        let hold = match (tenant, quota) {
            (Some(tenant), Some(quota)) => {
                let storing = declared.map_or(Storing::AtMost(limit), Storing::Exactly);
                let reserved =
                    self.experiments.reserve_storage(tenant, quota, storing).map_err(|e| StoreError::Io {
                        what: format!("the stored bytes of tenant {tenant}"),
                        source: std::io::Error::other(crate::errors::render(&e)),
                    })?;
                match reserved {
                    Ok(hold) => Some(hold),
                    Err(exceeded) => {
                        self.metrics.quota_refusal(exceeded.limit);
                        return Err(UploadError::Quota(exceeded));
                    }
                }
            }
            _ => None,
        };
        // Cut off at the reservation: past it, the quota (not the policy's bound) refuses.
        let cap = hold.as_ref().map_or(limit, |hold| hold.bytes().min(limit));
        let stored = self.data.put_file(source, cap, expect).map_err(|e| match (e, quota) {
            (FileError::TooLarge { .. }, Some(quota)) if cap < limit => {
                let exceeded = stored_bytes_spent(quota.stored_bytes.unwrap_or(cap));
                self.metrics.quota_refusal(exceeded.limit);
                UploadError::Quota(exceeded)
            }
            (e, _) => UploadError::from(e),
        });
        let uploaded = stored.and_then(|(file, bytes)| {
            let (digest, _) = self.data.put_artifact(&envelope(schema, &file, bytes))?;
            // Private to whoever uploaded it (see `grants.rs`).
            self.grant_to(owner, &[digest.artifact_uri()])?;
            Ok(Uploaded { uri: digest.artifact_uri(), file, bytes, schema_uri: schema.to_owned() })
        });
        if let Some(hold) = hold {
            let bytes = uploaded.as_ref().map_or(0, |uploaded| uploaded.bytes);
            self.release_quota(hold, 0, bytes, false);
        }
        uploaded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_uris_and_upload_envelopes() {
        assert!(schema_uri("jacobian:sat/lrat-file@1"));
        for bad in ["", "sat", "jacobian:sat", "jacobian:sat@", "jacobian:sat@x", ":x@1", "a:b c@1", "a:\"b@1"] {
            assert!(!schema_uri(bad), "{bad:?}");
        }
        let file = Digest::of(b"1 2 0\n");
        let bytes = crate::digest::canonical_json(&envelope("jacobian:sat/lrat-file@1", &file, 6));
        assert_eq!(carried_file(&bytes), Some((file, 6)));
        // A producer's artifact with an upload-like content but another lineage carries nothing.
        let mut other = envelope("x:y@1", &file, 6);
        other["lineage"]["capability_id"] = json!("sat.solve");
        assert_eq!(carried_file(&crate::digest::canonical_json(&other)), None);
    }
}
