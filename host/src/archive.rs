//! Archives: an experiment as one self-contained JSON pack — its episodes in
//! order, every artifact they reference (transitively), the components that
//! produced and can check them (the `.wasm` bytes themselves), the policy and
//! the contract versions — sealed by `pack_hash`, the SHA-256 of the pack's
//! canonical JSON without that field.
//!
//! `replay` re-executes every episode from the archive alone in a fresh data
//! directory and reports byte identity or a typed field-level diff; `verify`
//! re-runs the checkers on the archived certificates; `compare` diffs two
//! payloads (never server ids). A pack whose bytes do not match their digests
//! is refused with the field that failed, before anything runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::contract::{CapabilityResult, InvokeRequest, VerificationStatus};
use crate::digest::{Digest, canonical_json};
use crate::experiments::StopReason;
use crate::policy::Policy;
use crate::runtime::{GivenComponent, Portfolio, Runtime, RuntimeConfig, episode_value};

pub use crate::contract::ARCHIVE_FORMAT;

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
    /// Every invocation, in order.
    pub episodes: Vec<ArchivedEpisode>,
    /// SHA-256 of the canonical JSON of everything above.
    pub pack_hash: String,
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
/// pinned, and checker authorizations the reviewer grants. Only checkers
/// bundled in this binary are authorized otherwise — an archive cannot
/// authorize its own checkers.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// Refuse the pack unless its `pack_hash` is this.
    pub expect_pack_hash: Option<String>,
    /// Checker digests authorized per role for this re-check.
    pub authorized: Vec<crate::policy::Authorization>,
}

/// Every `artifact://sha256/<hex>` named anywhere in `text`.
fn artifact_digests(text: &str, out: &mut BTreeSet<Digest>) {
    const PREFIX: &str = "artifact://sha256/";
    let mut rest = text;
    while let Some(at) = rest.find(PREFIX) {
        let tail = &rest[at + PREFIX.len()..];
        if let Some(hex) = tail.get(..64)
            && let Ok(digest) = Digest::from_hex(hex)
        {
            out.insert(digest);
        }
        rest = &rest[at + PREFIX.len()..];
    }
}

impl Archive {
    /// Pack an experiment of `runtime`.
    pub fn build(runtime: &Runtime, experiment: &str) -> Result<Archive, ArchiveError> {
        let records =
            runtime.experiments().invocations(experiment).map_err(|e| unavailable("experiment", e.to_string()))?;
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
            .map_err(|e| unavailable("policy", e.to_string()))?
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
                    artifact_digests(&String::from_utf8_lossy(&bytes), &mut artifacts);
                    let value: Value = serde_json::from_slice(&bytes).map_err(|e| refuse(&field, e.to_string()))?;
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
        let components = runtime.components_for(episodes.iter().filter_map(|e| e.episode.as_ref()));
        // Artifacts name their lineage (inputs, the CNF a proof is about): close over them.
        let mut packed = BTreeMap::new();
        let mut pending: Vec<Digest> = artifacts.into_iter().collect();
        while let Some(digest) = pending.pop() {
            if packed.contains_key(&digest.to_hex()) {
                continue;
            }
            // Inputs that never existed (a failed call's bad reference) are absent, not corrupt.
            let bytes = match runtime.data().read_artifact(&digest) {
                Ok(bytes) => bytes,
                Err(crate::store::StoreError::NotFound { .. }) => continue,
                Err(e) => return Err(unavailable(format!("artifacts.{}", digest.to_hex()), e.to_string())),
            };
            let mut named = BTreeSet::new();
            artifact_digests(&String::from_utf8_lossy(&bytes), &mut named);
            pending.extend(named);
            packed.insert(digest.to_hex(), BASE64.encode(&bytes));
        }
        let mut component_bytes = BTreeMap::new();
        let mut bundled = BTreeSet::new();
        for digest in components {
            let bytes = runtime
                .data()
                .read_component(&digest)
                .map_err(|e| unavailable(format!("components.{}", digest.to_hex()), e.to_string()))?;
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
            episodes,
            pack_hash: String::new(),
        };
        archive.pack_hash = archive.compute_pack_hash();
        Ok(archive)
    }

    fn compute_pack_hash(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or_default();
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
        let mut unpacked = Unpacked::default();
        for (kind, map, out) in [
            ("components", &archive.components, &mut unpacked.components),
            ("artifacts", &archive.artifacts, &mut unpacked.artifacts),
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
        for (i, episode) in archive.episodes.iter().enumerate() {
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
        }
        let expected = archive.compute_pack_hash();
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

    /// A runtime over a fresh data directory holding exactly this archive's
    /// components, artifacts and policy — with the trust that is not the
    /// archive's to grant taken from this binary and the reviewer: a
    /// component counts as bundled only if this binary bundles it, checker
    /// authorizations come from [`Trust`] (the archive's are dropped; its
    /// revocations stay), and experiment budgets do not apply.
    fn runtime(&self, unpacked: &Unpacked, dir: &Path, trust: &Trust) -> Result<Runtime, ArchiveError> {
        let data = crate::store::DataDir::open(dir).map_err(|e| unavailable("data_dir", e.to_string()))?;
        let mut policy = self.policy.clone();
        policy.checkers.authorized = trust.authorized.clone();
        policy.experiments = Default::default();
        data.write_policy(&policy.to_toml()).map_err(|e| unavailable("policy", e.to_string()))?;
        for (digest, bytes) in &unpacked.artifacts {
            data.put_canonical(bytes)
                .map_err(|e| unavailable(format!("artifacts.{}", digest.to_hex()), e.to_string()))?;
        }
        // What the pack records as bundled keeps that tier (its episodes name
        // it); only what this binary bundles too is trusted as bundled.
        let bundled: Vec<GivenComponent> = unpacked
            .components
            .iter()
            .filter(|(d, _)| self.bundled.contains(d))
            .map(|(d, b)| GivenComponent { name: d.to_hex(), bytes: b.clone(), built_here: Runtime::builds_bundled(d) })
            .collect();
        let open = || {
            Runtime::open(RuntimeConfig {
                portfolio: Portfolio::Given(bundled.clone()),
                ..RuntimeConfig::new(dir.to_path_buf())
            })
            .map_err(|e| unavailable("components", e.to_string()))
        };
        let runtime = open()?;
        let mut installed_any = false;
        for (digest, bytes) in unpacked.components.iter().filter(|(d, _)| !self.bundled.contains(d)) {
            let (_, new) = runtime
                .install(bytes, Some(*digest))
                .map_err(|e| refuse(format!("components.{}", digest.to_hex()), e.to_string()))?;
            installed_any |= new;
        }
        if installed_any {
            drop(runtime);
            return open();
        }
        Ok(runtime)
    }
}

/// An archive's bytes, checked against their digests.
#[derive(Default)]
pub struct Unpacked {
    components: BTreeMap<Digest, Vec<u8>>,
    artifacts: BTreeMap<Digest, Vec<u8>>,
}

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
}

/// One replayed episode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayedEpisode {
    pub ordinal: u64,
    pub capability_id: String,
    pub outcome: ReplayOutcome,
    /// Why it was skipped (SKIPPED only).
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
    /// cancellation, no slot), or run by a component the pack does not carry.
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
    let replayed = episodes.iter().filter(|e| e.outcome != ReplayOutcome::Skipped).count();
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
            });
        } else if let Some(certificate) = episode["check_with"]["certificate_artifact"].as_str() {
            let request = InvokeRequest {
                capability_id: crate::catalog::ROUTER_ID.into(),
                mode: None,
                input: json!({"certificate": certificate}),
                budget: None,
                view: None,
                experiment: Some("verify".into()),
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
            });
        }
    }
    Ok(VerifyReport { pack_hash: archive.pack_hash, verdicts })
}
