//! Archives: an experiment as one self-contained JSON pack — its episodes in
//! order, every artifact they reference (transitively), the components that
//! produced and can check them (the `.wasm` bytes themselves), the policy and
//! the contract versions — sealed by `pack_hash`, the SHA-256 of the pack's
//! canonical JSON without that field.
//!
//! - `mod.rs`: the pack, building it, loading and checking it, and the
//!   runtime a re-check runs in.
//! - `recheck.rs`: `replay`, `verify` and `compare`.
//!
//! `replay` re-executes every episode from the archive alone in a fresh data
//! directory and reports byte identity or a typed field-level diff; `verify`
//! re-runs the checkers on the archived certificates; `compare` diffs two
//! payloads (never server ids). A pack whose bytes do not match their digests
//! is refused with the field that failed, before anything runs.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::{VerificationRecord, VerificationStatus};
use crate::digest::{Digest, canonical_json};
use crate::experiments::StopReason;
use crate::policy::Policy;
use crate::runtime::{Runtime, verification_binding};
use crate::store::CertificateRecord;

mod reading;
mod recheck;

pub use crate::contract::ARCHIVE_FORMAT;
pub use reading::Reading;
pub use recheck::{
    Comparison, FieldDiff, OfflineVerdict, ReplayOutcome, ReplayReport, ReplayedEpisode, VerifyReport, compare,
    compare_ignoring_contract_changes, replay, verify,
};

/// One archived invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchivedEpisode {
    /// Position in the experiment.
    pub ordinal: u64,
    /// Capability invoked.
    pub capability_id: String,
    /// How it ended.
    pub stop_reason: StopReason,
    /// The episode digest (absent when nothing was stored, e.g. cancelled).
    pub digest: Option<Digest>,
    /// The episode (the complete result with its request and trace).
    pub episode: Option<Value>,
}

/// The pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Archive {
    /// [`ARCHIVE_FORMAT`].
    pub format: String,
    /// The experiment id (an identity, not payload: `compare` ignores it).
    pub experiment: String,
    /// Contract versions of the archiving runtime.
    pub contracts: Vec<String>,
    /// The operator policy in force when archived.
    pub policy: Policy,
    /// Components that were bundled in the archiving binary.
    pub bundled: BTreeSet<Digest>,
    /// Component bytes (base64) by hex digest.
    pub components: BTreeMap<String, String>,
    /// Artifact bytes (base64) by hex digest.
    pub artifacts: BTreeMap<String, String>,
    /// The bytes (base64) of the files uploads among the artifacts carry, by
    /// hex digest of those bytes (absent when there are none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Every invocation, in order.
    pub episodes: Vec<ArchivedEpisode>,
    /// What each packed certificate needs, as recorded when it was made, by
    /// hex digest (absent from packs made before certificates had records:
    /// those are derived from the producer episodes).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub certificates: BTreeMap<String, CertificateRecord>,
    /// Who signed each operator-installed component that a trusted publisher
    /// signed, by hex digest: its signature and key, re-verified on load.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub publishers: BTreeMap<String, crate::publishers::Publisher>,
    /// The verdicts among the episodes whose checker was recalled when the
    /// pack was made, as they read then: `NOT_CONCLUDED`, with the reason,
    /// the verdict as stored and any re-check (absent when there are none;
    /// the episodes themselves are packed as stored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<RecalledVerdict>,
    /// The authorization rules the pack was written under (absent from packs
    /// written before rules were versioned: [`Archive::reading`] infers them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<u32>,
    /// SHA-256 of the canonical JSON of everything above.
    pub pack_hash: String,
}

/// An archived verdict whose checker is recalled (see [`crate::recall`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecalledVerdict {
    /// The episode's position in the experiment.
    pub ordinal: u64,
    /// The recalled checker.
    pub checker_digest: Digest,
    /// How the verdict reads: always `NOT_CONCLUDED`.
    pub status: VerificationStatus,
    /// The recall's reason, the verdict as stored, and any re-checks.
    pub recall: crate::contract::RecallNote,
}

/// Why an archive was refused (or could not be built or opened): the field
/// that failed, and how.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{field}: {reason}")]
pub struct ArchiveError {
    /// What kind of failure: the pack is invalid, something is missing, or a store failed.
    pub kind: ArchiveErrorKind,
    /// Dot-path of the failing field (e.g. `components.<hex>`, `episodes.3.episode`, `pack_hash`).
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

/// The kinds of [`ArchiveError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchiveErrorKind {
    /// The pack's bytes do not match their digests, or its shape is wrong.
    Invalid,
    /// The experiment, an episode or a component is not there.
    NotFound,
    /// A store or runtime could not be used.
    Unavailable,
    /// The pack would be larger than the caller's bound (an archive read over MCP).
    TooLarge,
}

fn refuse(field: impl Into<String>, reason: impl Into<String>) -> ArchiveError {
    ArchiveError { kind: ArchiveErrorKind::Invalid, field: field.into(), reason: reason.into() }
}

fn missing(field: impl Into<String>, reason: impl Into<String>) -> ArchiveError {
    ArchiveError { kind: ArchiveErrorKind::NotFound, field: field.into(), reason: reason.into() }
}

fn unavailable(field: impl Into<String>, reason: impl Into<String>) -> ArchiveError {
    ArchiveError { kind: ArchiveErrorKind::Unavailable, field: field.into(), reason: reason.into() }
}

/// What an offline re-check trusts beyond the pack: the pack's hash, if
/// pinned, and checker authorizations the reviewer grants. Otherwise only
/// checkers this binary bundles, or that a release it knows vouches for
/// (`host/releases.toml`), are authorized — an archive cannot authorize its
/// own checkers.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// Refuse the pack unless its `pack_hash` is this.
    pub expect_pack_hash: Option<String>,
    /// Checker digests authorized per role for this re-check.
    pub authorized: Vec<crate::policy::Authorization>,
}

/// The episodes' verdicts whose checker the runtime's policy (or this
/// binary's bundled history) recalls, as they read now.
fn recalled_verdicts(runtime: &Runtime, episodes: &[ArchivedEpisode]) -> Result<Vec<RecalledVerdict>, ArchiveError> {
    let policy = runtime.policy();
    let mut out = Vec::new();
    for archived in episodes {
        let (Some(episode), Some(digest)) = (&archived.episode, &archived.digest) else { continue };
        let Some(recall) = crate::recall::recall_of(episode, &policy) else { continue };
        let field = format!("episodes.{}", archived.ordinal);
        let rechecks = runtime.rechecks(digest).map_err(|e| unavailable(&field, e.to_string()))?;
        let checker_digest = recall.0.digest;
        let read = crate::recall::read_recalled(episode.clone(), digest, recall, &rechecks);
        let note = serde_json::from_value(read["verification"]["recall"].clone())
            .map_err(|e| refuse(&field, e.to_string()))?;
        out.push(RecalledVerdict {
            ordinal: archived.ordinal,
            checker_digest,
            status: VerificationStatus::NotConcluded,
            recall: note,
        });
    }
    Ok(out)
}

/// The artifacts an episode read or made: the references its request's
/// input passed validation with (whole `artifact://` strings), and its
/// outputs. A URI inside other text (a search query, a message) is text.
fn episode_artifacts(episode: &Value, out: &mut BTreeSet<Digest>) {
    let named = crate::runtime::artifact_references(&episode["request"]["input"], "");
    let made = episode["artifacts"].as_array().into_iter().flatten().filter_map(|a| a["uri"].as_str());
    let certificate = episode["check_with"]["certificate_artifact"].as_str();
    for uri in named.iter().map(|(_, uri)| uri.as_str()).chain(made).chain(certificate) {
        if let Ok(digest) = Digest::from_artifact_uri(uri) {
            out.insert(digest);
        }
    }
}

/// The artifacts an artifact names in its content (a certificate its CNF).
fn named_artifacts(bytes: &[u8], out: &mut Vec<Digest>) {
    out.extend(crate::runtime::named_in_content(bytes).iter().filter_map(|uri| Digest::from_artifact_uri(uri).ok()));
}

impl Archive {
    /// Pack an experiment of `runtime`.
    pub fn build(runtime: &Runtime, experiment: &str) -> Result<Archive, ArchiveError> {
        Archive::build_within(runtime, experiment, u64::MAX)
    }

    /// Pack an experiment, refusing ([`ArchiveErrorKind::TooLarge`]) as soon
    /// as the bytes it would carry (episodes, then artifacts and components
    /// by their stored sizes, before they are read) pass `limit`. The pack
    /// carries the artifacts the episodes read and made and those they name,
    /// closed, each only if the experiment's tenant may read it (see
    /// `runtime/grants.rs`), whoever packs it; an upload carries its file.
    pub fn build_within(runtime: &Runtime, experiment: &str, limit: u64) -> Result<Archive, ArchiveError> {
        let owner = crate::experiments::owner_tag(experiment);
        let mut carried = 0u64;
        let mut carry = |field: String, bytes: u64| {
            carried = carried.saturating_add(bytes);
            if carried > limit {
                return Err(ArchiveError {
                    kind: ArchiveErrorKind::TooLarge,
                    field,
                    reason: format!(
                        "the pack would carry more than {limit} bytes; write it on the host with `jacobian archive`"
                    ),
                });
            }
            Ok(())
        };
        let records = runtime
            .experiments()
            .invocations(experiment)
            .map_err(|e| unavailable("experiment", crate::errors::render(&e)))?;
        if records.is_empty() {
            return Err(missing("experiment", format!("no invocations are recorded for experiment {experiment}")));
        }
        // One experiment, one policy: the pack carries the policy its invocations ran under.
        let policy_digest = records[0].policy_digest;
        if let Some(other) = records.iter().find(|r| r.policy_digest != policy_digest) {
            return Err(refuse(
                format!("episodes.{}", other.ordinal),
                "the operator policy changed during this experiment; an archive carries one policy",
            ));
        }
        let policy: Policy = runtime
            .experiments()
            .policy(&policy_digest)
            .map_err(|e| unavailable("policy", crate::errors::render(&e)))?
            .and_then(|body| serde_json::from_str(&body).ok())
            .ok_or_else(|| missing("policy", format!("policy {policy_digest} is not recorded")))?;
        let mut episodes = Vec::new();
        let mut artifacts = BTreeSet::new();
        for record in records {
            let digest = record.episode;
            let episode = match &digest {
                Some(d) => {
                    let field = format!("episodes.{}", record.ordinal);
                    let bytes = runtime
                        .episode(d)
                        .map_err(|e| unavailable(&field, e.to_string()))?
                        .ok_or_else(|| missing(&field, "episode missing from the store"))?;
                    carry(field.clone(), bytes.len() as u64)?;
                    let value: Value = serde_json::from_slice(&bytes).map_err(|e| refuse(&field, e.to_string()))?;
                    episode_artifacts(&value, &mut artifacts);
                    Some(value)
                }
                None => None,
            };
            episodes.push(ArchivedEpisode {
                ordinal: record.ordinal,
                capability_id: record.capability_id,
                stop_reason: record.stop_reason,
                digest,
                episode,
            });
        }
        let recalled = recalled_verdicts(runtime, &episodes)?;
        let components = runtime.components_for(episodes.iter().filter_map(|e| e.episode.as_ref()));
        // Artifacts name their lineage (inputs, the CNF a proof is about): close over them.
        let mut packed = BTreeMap::new();
        let mut files = BTreeMap::new();
        let mut pending: Vec<Digest> = artifacts.into_iter().collect();
        while let Some(digest) = pending.pop() {
            if packed.contains_key(&digest.to_hex()) {
                continue;
            }
            let field = format!("artifacts.{}", digest.to_hex());
            // One the reader may not read is absent, as one never stored.
            if !runtime
                .tag_may_read(owner, &digest.artifact_uri())
                .map_err(|e| unavailable(&field, crate::errors::render(&e)))?
            {
                continue;
            }
            // Inputs that never existed (a failed call's bad reference) are absent, not corrupt.
            if let Ok(size) = runtime.data().artifact_size(&digest) {
                carry(field.clone(), size)?;
            }
            let bytes = match runtime.data().read_artifact(&digest) {
                Ok(bytes) => bytes,
                Err(crate::store::StoreError::NotFound { .. }) => continue,
                Err(e) => return Err(unavailable(field, crate::errors::render(&e))),
            };
            named_artifacts(&bytes, &mut pending);
            // An upload: the file it names travels too, whole.
            if let Some((file, _)) = crate::runtime::carried_file(&bytes) {
                let field = format!("files.{}", file.to_hex());
                let stored =
                    runtime.data().open_file(&file).map_err(|e| unavailable(&field, crate::errors::render(&e)))?;
                carry(field.clone(), stored.len())?;
                let mut whole = vec![0u8; stored.len() as usize];
                let read = stored.read_at(0, &mut whole).map_err(|e| unavailable(&field, e.to_string()))?;
                if read != whole.len() || Digest::of(&whole) != file {
                    return Err(unavailable(&field, format!("the stored file {file} is short or corrupt")));
                }
                files.insert(file.to_hex(), BASE64.encode(&whole));
            }
            packed.insert(digest.to_hex(), BASE64.encode(&bytes));
        }
        // Each certificate's record, and its producer (which bears the record out on re-check).
        let mut certificates = BTreeMap::new();
        let mut components = components;
        for hex in packed.keys() {
            let digest = Digest::from_hex(hex).map_err(|e| refuse(format!("artifacts.{hex}"), e.to_string()))?;
            if let Some(record) =
                runtime.certificate(&digest).map_err(|e| unavailable(format!("certificates.{hex}"), e.to_string()))?
            {
                components.insert(record.producer);
                certificates.insert(hex.clone(), record);
            }
        }
        let mut component_bytes = BTreeMap::new();
        let mut bundled = BTreeSet::new();
        let mut publishers = BTreeMap::new();
        for digest in components {
            if let Some(publisher) = runtime.components().find(|r| r.digest == digest).and_then(|r| r.publisher.clone())
            {
                publishers.insert(digest.to_hex(), publisher);
            }
            if let Ok(size) = runtime.data().component_size(&digest) {
                carry(format!("components.{}", digest.to_hex()), size)?;
            }
            let bytes = runtime
                .component_bytes(&digest)
                .map_err(|e| unavailable(format!("components.{}", digest.to_hex()), crate::errors::render(&e)))?;
            if runtime.installed_as_bundled(&digest) {
                bundled.insert(digest);
            }
            component_bytes.insert(digest.to_hex(), BASE64.encode(&bytes));
        }
        let mut archive = Archive {
            format: ARCHIVE_FORMAT.into(),
            experiment: experiment.to_owned(),
            contracts: crate::contract::contracts(),
            policy,
            bundled,
            components: component_bytes,
            artifacts: packed,
            files,
            episodes,
            certificates,
            publishers,
            recalled,
            rules: Some(crate::policy::RULES),
            pack_hash: String::new(),
        };
        archive.pack_hash = archive.compute_pack_hash();
        Ok(archive)
    }

    /// Why the checker of episode `ordinal`'s verdict is recalled, if it is:
    /// by the pack's own list, its policy, or this binary's bundled history.
    pub fn recall_of(&self, ordinal: u64, episode: &Value) -> Option<String> {
        self.recalled
            .iter()
            .find(|r| r.ordinal == ordinal)
            .map(|r| r.recall.reason.clone())
            .or_else(|| crate::recall::recall_of(episode, &self.policy).map(|(recall, _)| recall.reason))
    }

    fn compute_pack_hash(&self) -> String {
        let mut value = crate::json::value(&self);
        if let Some(map) = value.as_object_mut() {
            map.remove("pack_hash");
        }
        Digest::of(&canonical_json(&value)).to_string()
    }

    /// Parse a pack and check every digest in it (components, artifacts,
    /// episodes, then the pack hash), naming the first field that fails.
    pub fn load(bytes: &[u8], trust: &Trust) -> Result<(Archive, Unpacked), ArchiveError> {
        let archive: Archive = serde_json::from_slice(bytes).map_err(|e| refuse("archive", e.to_string()))?;
        if archive.format != ARCHIVE_FORMAT {
            return Err(refuse("format", format!("expected {ARCHIVE_FORMAT}, found {:?}", archive.format)));
        }
        for (field, rules) in [("rules", archive.rules), ("policy.rules", archive.policy.rules)] {
            if let Some(rules) = rules.filter(|r| crate::policy::rules::meaning(*r).is_none()) {
                return Err(refuse(field, format!("authorization rules {rules} are unknown to this binary")));
            }
        }
        // What the pack records as bundled decides which release it reads as: each must be carried.
        if let Some(digest) = archive.bundled.iter().find(|d| !archive.components.contains_key(&d.to_hex())) {
            return Err(refuse(format!("bundled.{}", digest.to_hex()), "names no component of the pack"));
        }
        let mut unpacked = Unpacked::default();
        for (kind, map, out) in [
            ("components", &archive.components, &mut unpacked.components),
            ("artifacts", &archive.artifacts, &mut unpacked.artifacts),
            ("files", &archive.files, &mut unpacked.files),
        ] {
            for (hex, text) in map {
                let field = format!("{kind}.{hex}");
                let digest = Digest::from_hex(hex).map_err(|e| refuse(&field, e.to_string()))?;
                let bytes = BASE64.decode(text).map_err(|e| refuse(&field, format!("not base64: {e}")))?;
                if Digest::of(&bytes) != digest {
                    return Err(refuse(&field, format!("the bytes hash to {}, not {digest}", Digest::of(&bytes))));
                }
                out.insert(digest, bytes);
            }
        }
        for (hex, publisher) in &archive.publishers {
            let field = format!("publishers.{hex}");
            let bytes = Digest::from_hex(hex)
                .ok()
                .and_then(|digest| unpacked.components.get(&digest))
                .ok_or_else(|| refuse(&field, "names no component of the pack"))?;
            publisher.reverify(bytes).map_err(|e| refuse(&field, format!("the signature does not hold: {e}")))?;
        }
        for (i, episode) in archive.episodes.iter().enumerate() {
            if let Some(value) = &episode.episode
                && value["capability_id"] != episode.capability_id.as_str()
            {
                return Err(refuse(format!("episodes.{i}.capability_id"), "is not the episode's capability_id"));
            }
            let field = format!("episodes.{i}.episode");
            match (&episode.digest, &episode.episode) {
                (Some(digest), Some(value)) => {
                    let actual = Digest::of(&canonical_json(value));
                    if actual != *digest {
                        return Err(refuse(field, format!("the episode hashes to {actual}, not {digest}")));
                    }
                }
                (None, None) => {}
                _ => return Err(refuse(field, "digest and episode must be both present or both absent")),
            }
            // A verdict's record must still be bound to what it names (its format among them).
            if let Some(verification) = episode.episode.as_ref().map(|e| &e["verification"]).filter(|v| v.is_object()) {
                let field = format!("{field}.verification");
                let record: VerificationRecord =
                    serde_json::from_value(verification.clone()).map_err(|e| refuse(&field, e.to_string()))?;
                let unbound = record.binding_digest.is_none() && record.status == VerificationStatus::Verified;
                if unbound
                    || (record.binding_digest.is_some() && verification_binding(&record) != record.binding_digest)
                {
                    return Err(refuse(
                        format!("{field}.binding_digest"),
                        "does not bind the record's claim, semantics, candidate, scope, certificate format and checker",
                    ));
                }
            }
        }
        // Hashed as written (a later binary's defaults added on parsing are not the pack's).
        let mut written: Value = serde_json::from_slice(bytes).map_err(|e| refuse("archive", e.to_string()))?;
        if let Some(map) = written.as_object_mut() {
            map.remove("pack_hash");
        }
        let expected = Digest::of(&canonical_json(&written)).to_string();
        if archive.pack_hash != expected {
            return Err(refuse("pack_hash", format!("the pack hashes to {expected}, not {}", archive.pack_hash)));
        }
        if let Some(pinned) = &trust.expect_pack_hash
            && *pinned != archive.pack_hash
        {
            return Err(refuse("pack_hash", format!("the pack is {}, not the expected {pinned}", archive.pack_hash)));
        }
        Ok((archive, unpacked))
    }

    pub(super) fn completed_episodes(&self) -> impl Iterator<Item = &Value> {
        self.episodes.iter().filter(|e| e.stop_reason == StopReason::Completed).filter_map(|e| e.episode.as_ref())
    }
}

/// The certificate a producer episode routes to, with the record its route
/// stands for — provided the certificate belongs to the episode: it is one
/// of the episode's artifacts, and its lineage names the episode's
/// capability, input digest and component. `Ok(None)` when the episode
/// routes to no certificate; `Err` says why one does not belong.
fn belonging_certificate(
    episode: &Value,
    artifacts: &BTreeMap<Digest, Vec<u8>>,
) -> Result<Option<(Digest, CertificateRecord)>, String> {
    let Some(uri) = episode["check_with"]["certificate_artifact"].as_str() else { return Ok(None) };
    let route = &episode["check_with"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let digest = Digest::from_artifact_uri(uri).map_err(|e| e.to_string())?;
    if !episode["artifacts"].as_array().into_iter().flatten().any(|a| a["uri"] == uri) {
        return Err(format!("certificate {uri} is not among the episode's artifacts"));
    }
    let bytes = artifacts.get(&digest).ok_or_else(|| format!("certificate {uri} is not in the pack"))?;
    let envelope: Value = serde_json::from_slice(bytes).map_err(|e| format!("certificate {uri}: {e}"))?;
    let lineage = &envelope["lineage"];
    let provenance = &episode["provenance"];
    let own = |digest: &Value| text(digest).strip_prefix("sha256:").map(str::to_owned);
    let request = &episode["request"];
    let asked = Digest::of_json(&request["input"]).to_hex();
    if lineage["capability_id"] != episode["capability_id"]
        || request["capability_id"] != episode["capability_id"]
        || text(&lineage["input_digest"]) != asked
        || Some(asked) != own(&provenance["input_digest"])
        || Some(text(&lineage["provider_digest"])) != own(&provenance["provider_digest"])
    {
        return Err(format!(
            "certificate {uri} was made by {} on input {}, not by this episode's request (its capability, input and \
             component)",
            lineage["capability_id"], lineage["input_digest"]
        ));
    }
    let producer = provenance["provider_digest"].as_str().unwrap_or_default().parse().map_err(|e| format!("{e}"))?;
    let record = CertificateRecord {
        checker_role: text(&route["checker_role"]),
        certificate_format: text(&route["certificate_format"]),
        verify_capability_id: text(&route["verify_capability_id"]),
        capability_id: text(&episode["capability_id"]),
        producer,
    };
    Ok(Some((digest, record)))
}

/// An archive's bytes, checked against their digests.
#[derive(Default)]
pub struct Unpacked {
    components: BTreeMap<Digest, Vec<u8>>,
    artifacts: BTreeMap<Digest, Vec<u8>>,
    files: BTreeMap<Digest, Vec<u8>>,
}

impl Unpacked {
    /// Store the pack's artifacts and the files its uploads carry in `data`.
    fn put_into(&self, data: &crate::store::DataDir) -> Result<(), ArchiveError> {
        for (digest, bytes) in &self.artifacts {
            data.put_canonical(bytes)
                .map_err(|e| unavailable(format!("artifacts.{}", digest.to_hex()), crate::errors::render(&e)))?;
        }
        for (digest, bytes) in &self.files {
            data.put_file(&mut bytes.as_slice(), u64::MAX, Some(digest))
                .map_err(|e| unavailable(format!("files.{}", digest.to_hex()), crate::errors::render(&e)))?;
        }
        Ok(())
    }
}
