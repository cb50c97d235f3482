//! How a re-check reads a pack another release may have written: which
//! release wrote it (by the components it records as bundled, as this
//! binary knows releases), the authorization rules its policy was written
//! under and their mapping onto this binary's, and which of its components
//! are trusted as bundled, and the runtime a re-check runs in. `replay` and
//! `verify` print the reading.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::digest::Digest;
use crate::policy::rules::{RULES, mapping};
use crate::releases::{Release, writer_of};
use crate::runtime::{GivenComponent, Portfolio, Runtime, RuntimeConfig};

use super::{Archive, ArchiveError, Trust, Unpacked, belonging_certificate, refuse, unavailable};

/// What a re-check took the pack to be.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reading {
    /// The release that wrote the pack, if this binary knows it
    /// (`host/releases.toml`).
    pub written_by: Option<String>,
    /// The authorization rules its policy was written under.
    pub rules: u32,
    /// How that is known: the policy names them, the writing release had
    /// them, or the pack carries no certificate records (as packs written
    /// before role binding do).
    pub rules_from: &'static str,
    /// How those rules are read under this binary's.
    pub mapping: &'static str,
    /// The pack's components trusted as bundled in this re-check (checkers,
    /// for the roles they declare), by hex digest, each with what vouches for
    /// it: this binary, or a release it knows that vouches for it, with the
    /// reason. A recalled one is never among them.
    pub trusted: BTreeMap<String, String>,
}

impl Archive {
    /// How this binary reads the pack.
    pub fn reading(&self) -> Reading {
        let writer: Option<&Release> = writer_of(&self.bundled);
        let routes = self.completed_episodes().any(|e| e["check_with"]["certificate_artifact"].is_string());
        let (rules, rules_from) = match (self.rules.or(self.policy.rules), writer) {
            (Some(rules), _) => (rules, "the pack names them"),
            (None, Some(release)) => (release.rules, "the release that wrote the pack"),
            (None, None) if routes && self.certificates.is_empty() => {
                (1, "the pack carries no certificate records, as packs written before role binding")
            }
            (None, None) => (RULES, "nothing in the pack says otherwise: this binary's"),
        };
        let recalled = |digest| {
            self.recalled.iter().any(|r| r.checker_digest == digest) || self.policy.recall_of(&digest).is_some()
        };
        let trusted = self
            .bundled
            .iter()
            .filter(|d| !recalled(**d))
            .filter_map(|d| {
                let by = if Runtime::builds_bundled(d) {
                    "this binary".to_owned()
                } else {
                    let (release, why) = crate::releases::vouched_by(d)?;
                    format!("release {}: {why}", release.name)
                };
                Some((d.to_hex(), by))
            })
            .collect();
        Reading { written_by: writer.map(|r| r.name.clone()), rules, rules_from, mapping: mapping(rules), trusted }
    }

    /// Why re-checking an episode of `capability_id` shows `outcome`, if the
    /// release that wrote the pack says (for the episode's certificate format).
    pub fn explained(&self, capability_id: &str, episode: Option<&serde_json::Value>, outcome: &str) -> Option<String> {
        let format = episode.and_then(|e| {
            [&e["verification"]["certificate_format"], &e["check_with"]["certificate_format"]]
                .into_iter()
                .find_map(|f| f.as_str())
        });
        writer_of(&self.bundled).and_then(|release| release.explains(capability_id, outcome, format))
    }

    /// A runtime over a fresh data directory holding exactly this archive's
    /// components, artifacts and policy — with the trust that is not the
    /// archive's to grant taken from this binary and the reviewer: a
    /// component counts as bundled only if this binary bundles it or a
    /// release it knows vouches for it ([`Reading::trusted`]), checker authorizations come from
    /// [`Trust`] (the archive's are dropped; its revocations stay), the
    /// policy is read under this binary's rules through the mapping the
    /// reading states, and experiment budgets do not apply.
    pub(super) fn runtime(
        &self,
        unpacked: &Unpacked,
        dir: &Path,
        trust: &Trust,
        reading: &Reading,
    ) -> Result<Runtime, ArchiveError> {
        let data = crate::store::DataDir::open(dir).map_err(|e| unavailable("data_dir", crate::errors::render(&e)))?;
        let mut policy = self.policy.clone();
        policy.rules = Some(RULES);
        policy.checkers.authorized = trust.authorized.clone();
        policy.experiments = Default::default();
        // A recall the pack names takes away trust, whoever grants it: it is honoured.
        for recalled in &self.recalled {
            policy.recall(recalled.checker_digest, &recalled.recall.reason);
        }
        let text = policy.to_toml().map_err(|e| unavailable("policy", e.to_string()))?;
        data.write_policy(&text).map_err(|e| unavailable("policy", crate::errors::render(&e)))?;
        unpacked.put_into(&data)?;
        // What the pack records as bundled keeps that tier (its episodes name
        // it); only what this binary bundles or vouches for is trusted as bundled.
        let bundled: Vec<GivenComponent> = unpacked
            .components
            .iter()
            .filter(|(d, _)| self.bundled.contains(d))
            .map(|(d, b)| GivenComponent {
                name: d.to_hex(),
                bytes: b.clone(),
                trusted: reading.trusted.contains_key(&d.to_hex()),
            })
            .collect();
        let open = || {
            Runtime::open(RuntimeConfig {
                portfolio: Portfolio::Given(bundled.clone()),
                ..RuntimeConfig::new(dir.to_path_buf())
            })
            .map_err(|e| unavailable("components", crate::errors::render(&e)))
        };
        let runtime = open()?;
        let mut installed_any = false;
        for (digest, bytes) in unpacked.components.iter().filter(|(d, _)| !self.bundled.contains(d)) {
            let (_, new) = runtime
                .install_replayed(bytes, Some(*digest), self.publishers.get(&digest.to_hex()).cloned())
                .map_err(|e| refuse(format!("components.{}", digest.to_hex()), crate::errors::render(&e)))?;
            installed_any |= new;
        }
        let runtime = if installed_any {
            drop(runtime);
            open()?
        } else {
            runtime
        };
        for (hex, record) in &self.certificates {
            let field = format!("certificates.{hex}");
            let digest = Digest::from_hex(hex).map_err(|e| refuse(&field, e.to_string()))?;
            runtime.adopt_certificate(&digest, record).map_err(|e| refuse(&field, e))?;
        }
        // Packs made before certificates had records: a producer episode's
        // route stands for the record when its certificate belongs to it.
        for episode in self.completed_episodes() {
            if let Some((digest, record)) = belonging_certificate(episode, &unpacked.artifacts).ok().flatten() {
                let _ = runtime.adopt_certificate(&digest, &record);
            }
        }
        Ok(runtime)
    }
}
