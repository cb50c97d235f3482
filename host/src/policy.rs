//! The operator policy: default budgets and which checker digests may
//! produce `VERIFIED`, per role.
//!
//! **Boundary:** the policy is changed only by the operator (the policy file
//! and `jacobian checkers authorize|revoke`). No MCP tool and no component can
//! write it, so a plugin cannot authorize itself.

use std::collections::BTreeSet;

use jacobian_guest::protocol::Mode;
use serde::{Deserialize, Serialize};

use crate::contract::CallBudgets;
use crate::digest::Digest;

pub mod rules;
pub use rules::RULES;

/// The parsed policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The authorization rules this policy was written under
    /// ([`RULES`] when this binary writes it; see `policy/rules.rs`). Absent
    /// from a policy written before the rules were versioned: a live policy
    /// file is then read under this binary's rules, as every binary since
    /// role binding read it, and an archived one under the rules its writer
    /// had ([`crate::archive::Archive::reading`]). A live policy of other
    /// rules is refused: this binary runs its own only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<u32>,
    /// Policy profile name, bound into catalog and discovery responses.
    #[serde(default = "default_profile")]
    pub profile: String,
    /// Default (and maximum) budgets of one call.
    #[serde(default)]
    pub budgets: Budgets,
    /// Which capabilities are visible and invocable.
    #[serde(default)]
    pub capabilities: Visibility,
    /// Checker authorization.
    #[serde(default)]
    pub checkers: Checkers,
    /// Budgets of one experiment (all its invocations together).
    #[serde(default)]
    pub experiments: crate::experiments::ExperimentBudgets,
    /// Quotas of tenants (authenticated HTTP callers); absent: none.
    #[serde(default, skip_serializing_if = "crate::quotas::Quotas::is_unlimited")]
    pub quotas: crate::quotas::Quotas,
    /// Publishers whose signatures installs accept, and whether installs need one; absent: none.
    #[serde(default, skip_serializing_if = "crate::publishers::Publishers::is_default")]
    pub publishers: crate::publishers::Publishers,
    /// Files brought in above the input limit (`jacobian artifact put`, `PUT /artifacts/…`); absent: the defaults.
    #[serde(default, skip_serializing_if = "Uploads::is_default")]
    pub uploads: Uploads,
    /// [`Policy::digest`], once computed: every invocation records it. A
    /// clone starts without it, so a policy cloned and then changed (as the
    /// runtime does to deny every checker) computes its own. A policy is
    /// shared read-only (`Arc<Policy>`) once its digest is asked for.
    #[serde(skip)]
    digest: DigestCell,
}

/// A digest computed on first use; empty again in a clone, and no part of a
/// policy's equality.
#[derive(Default)]
struct DigestCell(std::sync::OnceLock<Digest>);

impl Clone for DigestCell {
    fn clone(&self) -> Self {
        DigestCell::default()
    }
}

impl PartialEq for DigestCell {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for DigestCell {}

impl std::fmt::Debug for DigestCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("..")
    }
}

/// What an upload may be: `[uploads]` in the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Uploads {
    /// The largest file taken, in bytes; a larger one is refused before it is
    /// stored (by its declared length, or when its bytes pass the bound).
    #[serde(default = "default_upload_bytes")]
    pub max_bytes: u64,
}

/// 1 GiB.
fn default_upload_bytes() -> u64 {
    1 << 30
}

impl Default for Uploads {
    fn default() -> Self {
        Uploads { max_bytes: default_upload_bytes() }
    }
}

impl Uploads {
    fn is_default(&self) -> bool {
        *self == Uploads::default()
    }
}

/// The profiles an operator may select.
pub const PROFILES: &[&str] = &["DEFAULT", "COMPUTE_VERIFY_NO_RETRIEVAL"];

/// Operator constraints on visible and invocable capabilities. They change
/// availability only: they cannot install or authorize a checker.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Visibility {
    /// Hide these exact capability ids.
    #[serde(default)]
    pub deny_ids: BTreeSet<String>,
    /// Hide every capability of these domains (the id's first segment).
    #[serde(default)]
    pub deny_domains: BTreeSet<String>,
    /// Hide every capability carrying one of these tags.
    #[serde(default)]
    pub deny_tags: BTreeSet<String>,
    /// Withdraw these modes everywhere (a capability left with no mode is hidden).
    #[serde(default)]
    pub deny_modes: BTreeSet<Mode>,
}

fn default_profile() -> String {
    "DEFAULT".into()
}

/// Budgets a request may lower but never raise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    /// Fuel per call.
    pub fuel: u64,
    /// Linear memory per call, in bytes.
    pub memory_bytes: u64,
    /// Largest component answer accepted, in bytes.
    pub output_bytes: u64,
    /// Wall-clock ceiling of one call once it runs, in milliseconds. Fuel
    /// bounds guest work, not time spent in host calls; a call past this is
    /// stopped with `DEADLINE_EXCEEDED` (not replayable: nothing is stored).
    #[serde(default = "default_wall_ms")]
    pub wall_ms: u64,
}

/// The default of [`Budgets::wall_ms`]: five minutes.
pub const DEFAULT_WALL_MS: u64 = 300_000;
/// The largest [`Budgets::wall_ms`] a policy may set: one day.
pub const MAX_WALL_MS: u64 = 86_400_000;

fn default_wall_ms() -> u64 {
    DEFAULT_WALL_MS
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets { fuel: 100_000_000_000, memory_bytes: 256 << 20, output_bytes: 4 << 20, wall_ms: DEFAULT_WALL_MS }
    }
}

impl From<Budgets> for CallBudgets {
    fn from(b: Budgets) -> Self {
        CallBudgets { fuel: b.fuel, memory_bytes: b.memory_bytes, output_bytes: b.output_bytes }
    }
}

/// Which checkers are authorized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkers {
    /// Authorize the checkers bundled in this binary, by their built digests.
    #[serde(default = "yes")]
    pub authorize_bundled: bool,
    /// Explicit authorizations.
    #[serde(default)]
    pub authorized: Vec<Authorization>,
    /// Digests never authorized, whatever else says (wins over everything).
    #[serde(default)]
    pub revoked: BTreeSet<Digest>,
    /// Digests found unsound: never authorized, and every verdict they gave
    /// reads as not concluded, with the reason ([`crate::recall`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<Recall>,
    /// Per role, how many authorized checkers (distinct digests, distinct
    /// providers) must accept a certificate before it is `VERIFIED`
    /// (`[checkers.quorum]`, e.g. `"sat.certificate" = 2`); absent: one.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub quorum: std::collections::BTreeMap<String, u32>,
}

/// A checker digest recalled, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recall {
    /// The checker component's digest.
    pub digest: Digest,
    /// Why it was recalled.
    pub reason: String,
}

/// Checker digests this project shipped and later found unsound: recalled
/// whatever a policy says (the bundled policy's history). Each is the
/// component as built from the named commit (the guest build is
/// reproducible: `host/build.rs`), and the reason names the hole.
pub const BUNDLED_RECALLS: &[(&str, &str)] = &[
    ("sha256:ed80f7c6d6f9f6b96d10058889425dfabdd4f6c1e1a842c654eb61e131cb4a62", SAT_RAT),
    ("sha256:e79d76634cb9b82b726149290357075d9215402f2c2afac1c720f042b7893e14", SAT_RAT),
    ("sha256:676778d30f96d808dee38c0ed912d4de8c8260f94823b784ee0ade7911517c20", GROEBNER_SYNTAX),
    ("sha256:0fb5c520edf9f9baadf7c6f19e570b1744baa5c932a86b929a5537ef37850364", GROEBNER_SYNTAX),
    ("sha256:fdd8723b048104d9dce30718643e79d74bcafbb0fe3aca1f3db773bb080fc363", INDUCED_TREE_EDGES),
    ("sha256:71d07d21bf535445b7bd567777faa3ef5f0ddaa0c530cfaadce74a1b10647dab", INDUCED_TREE_EDGES),
];

const SAT_RAT: &str = "sat.certificate.verify as built at 052cb71 and at 54eee10: it skipped every RAT candidate \
without a hint group (the candidate's own negated pivot is true), so any lemma with one negative hint passed as RAT \
and refutations of satisfiable formulas were accepted";
const GROEBNER_SYNTAX: &str = "polynomial.groebner_basis.verify as built at 052cb71 and at 54eee10: a unary minus \
after '/' took the whole product (1/-2*2 read as -1/4), so a basis of a generator read otherwise than its text says \
was accepted";
const INDUCED_TREE_EDGES: &str = "graph.induced_tree.maximum.verify as built at 052cb71 and at 54eee10: it took the \
edge list as given and counted a repeated edge twice, so an optimum of a graph written with an edge twice (K2 as \
[[0, 1], [1, 0]]) was misjudged and accepted";

/// The bundled recalls, parsed.
pub fn bundled_recalls() -> Vec<Recall> {
    BUNDLED_RECALLS
        .iter()
        .filter_map(|(digest, reason)| Some(Recall { digest: digest.parse().ok()?, reason: (*reason).to_owned() }))
        .collect()
}

fn yes() -> bool {
    true
}

impl Default for Checkers {
    fn default() -> Self {
        Checkers {
            authorize_bundled: true,
            authorized: Vec::new(),
            revoked: BTreeSet::new(),
            recalled: Vec::new(),
            quorum: Default::default(),
        }
    }
}

/// One checker digest authorized for one role.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Authorization {
    /// The checker role.
    pub role: String,
    /// The checker component's digest.
    pub digest: Digest,
}

/// A policy file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("policy file: {0}")]
    Parse(String),
    #[error("policy file: budgets.{field} is {value}, above the engine ceiling {ceiling}")]
    AboveCeiling { field: &'static str, value: u64, ceiling: u64 },
    #[error("policy file: budgets.{field} must be positive")]
    Zero { field: &'static str },
    #[error("policy file: profile {0:?} is not one of DEFAULT, COMPUTE_VERIFY_NO_RETRIEVAL")]
    UnknownProfile(String),
    #[error("policy file: {0}")]
    Publishers(String),
    #[error("policy file: checkers.quorum.\"{role}\" is {k}: a quorum is at least 1 and at most {MAX_QUORUM} checkers")]
    Quorum { role: String, k: u32 },
    #[error(
        "policy file: rules = {0}: this binary runs authorization rules {RULES} only (earlier rules are read \
         only in archives; remove the line to run these)"
    )]
    Rules(u32),
    #[error("policy file: cannot be written: {0}")]
    Unwritable(String),
}

/// The largest quorum a policy may ask of one role.
pub const MAX_QUORUM: u32 = 8;

impl Default for Policy {
    fn default() -> Self {
        Policy {
            rules: Some(RULES),
            profile: default_profile(),
            budgets: Budgets::default(),
            capabilities: Visibility::default(),
            checkers: Checkers::default(),
            experiments: Default::default(),
            quotas: Default::default(),
            publishers: Default::default(),
            uploads: Default::default(),
            digest: DigestCell::default(),
        }
    }
}

impl Policy {
    /// Parse and check a policy file.
    pub fn parse(text: &str, memory_ceiling: u64) -> Result<Self, PolicyError> {
        let policy: Policy = toml::from_str(text).map_err(|e| PolicyError::Parse(e.to_string()))?;
        if let Some(rules) = policy.rules.filter(|r| *r != RULES) {
            return Err(PolicyError::Rules(rules));
        }
        if !PROFILES.contains(&policy.profile.as_str()) {
            return Err(PolicyError::UnknownProfile(policy.profile));
        }
        let b = policy.budgets;
        let fields = [
            ("fuel", b.fuel),
            ("memory_bytes", b.memory_bytes),
            ("output_bytes", b.output_bytes),
            ("wall_ms", b.wall_ms),
        ];
        for (field, value) in fields {
            if value == 0 {
                return Err(PolicyError::Zero { field });
            }
        }
        if let Some((role, &k)) = policy.checkers.quorum.iter().find(|(_, k)| !(1..=MAX_QUORUM).contains(*k)) {
            return Err(PolicyError::Quorum { role: role.clone(), k });
        }
        if policy.uploads.max_bytes == 0 {
            return Err(PolicyError::Zero { field: "uploads.max_bytes" });
        }
        policy.publishers.validate().map_err(PolicyError::Publishers)?;
        if b.wall_ms > MAX_WALL_MS {
            return Err(PolicyError::AboveCeiling { field: "wall_ms", value: b.wall_ms, ceiling: MAX_WALL_MS });
        }
        if b.memory_bytes > memory_ceiling {
            return Err(PolicyError::AboveCeiling {
                field: "memory_bytes",
                value: b.memory_bytes,
                ceiling: memory_ceiling,
            });
        }
        Ok(policy)
    }

    /// The policy file text, or why TOML cannot hold it (an error, rather
    /// than an empty file that would put the defaults in force).
    pub fn to_toml(&self) -> Result<String, PolicyError> {
        let body = toml::to_string_pretty(self).map_err(|e| PolicyError::Unwritable(e.to_string()))?;
        Ok(format!(
            "# Jacobian operator policy. Edit by hand or with `jacobian checkers authorize|revoke`.\n\
             # A request may lower these budgets but never raise them.\n{body}"
        ))
    }

    /// Stable digest of the policy's meaning (not its formatting), as
    /// recorded with each invocation: [`Policy::recorded`].
    pub fn digest(&self) -> Digest {
        *self.digest.0.get_or_init(|| Digest::of_json(&self.recorded()))
    }

    /// The policy as an invocation records it and an archive carries it:
    /// everything that bears on what a call computes and how it is judged,
    /// without the quotas, which name other tenants and only decide whether
    /// a call runs (changing a quota neither splits an experiment nor shows
    /// one tenant's quota in another's archive), and without the publishers,
    /// which only decide what may be installed (an archive carries each
    /// component's own signature instead), and without the upload bound,
    /// which only decides what may be stored (an upload is named by its digest).
    pub fn recorded(&self) -> serde_json::Value {
        let mut value = crate::json::value(self);
        if let Some(map) = value.as_object_mut() {
            map.remove("quotas");
            map.remove("publishers");
            map.remove("uploads");
            // This binary's rules are what an unversioned policy meant, so
            // naming them changes no digest (an archive names its rules itself).
            if self.rules() == RULES {
                map.remove("rules");
            }
        }
        value
    }

    /// The authorization rules the policy is read under: those it names,
    /// else this binary's.
    pub fn rules(&self) -> u32 {
        self.rules.unwrap_or(RULES)
    }

    /// Whether `digest` may produce `VERIFIED` for `role`, a role the caller
    /// has seen the checker declare. `bundled` is true when the digest is a
    /// checker trusted as bundled (built by this binary; in an offline
    /// re-check, also one a release it knows bundled and it vouches for).
    pub fn authorizes(&self, role: &str, digest: &Digest, bundled: bool) -> bool {
        if self.checkers.revoked.contains(digest) || self.recall_of(digest).is_some() {
            return false;
        }
        (bundled && self.checkers.authorize_bundled)
            || self.checkers.authorized.iter().any(|a| a.role == role && a.digest == *digest)
    }

    /// The modes in which a capability is visible and invocable under this
    /// policy; empty means hidden.
    pub fn allowed_modes(&self, id: &str, tags: &[String], modes: &[Mode]) -> Vec<Mode> {
        let v = &self.capabilities;
        let domain = id.split('.').next().unwrap_or(id);
        let denied_by_profile = self.profile == "COMPUTE_VERIFY_NO_RETRIEVAL"
            && (id == "knowledge.search" || tags.iter().any(|t| t == "retrieval"));
        if denied_by_profile
            || v.deny_ids.contains(id)
            || v.deny_domains.contains(domain)
            || tags.iter().any(|t| v.deny_tags.contains(t))
        {
            return Vec::new();
        }
        modes.iter().copied().filter(|m| !v.deny_modes.contains(m)).collect()
    }

    /// Authorize `digest` for `role` (and lift any revocation of it).
    pub fn authorize(&mut self, role: &str, digest: Digest) {
        self.checkers.revoked.remove(&digest);
        let entry = Authorization { role: role.to_owned(), digest };
        if !self.checkers.authorized.contains(&entry) {
            self.checkers.authorized.push(entry);
            self.checkers.authorized.sort();
        }
    }

    /// Revoke `digest` for every role.
    pub fn revoke(&mut self, digest: Digest) {
        self.checkers.authorized.retain(|a| a.digest != digest);
        self.checkers.revoked.insert(digest);
    }

    /// Recall `digest`: it is revoked, and every verdict it gave reads as
    /// not concluded, for `reason` (a later recall of it keeps the first reason).
    pub fn recall(&mut self, digest: Digest, reason: &str) {
        self.revoke(digest);
        if !self.checkers.recalled.iter().any(|r| r.digest == digest) {
            self.checkers.recalled.push(Recall { digest, reason: reason.to_owned() });
            self.checkers.recalled.sort();
        }
    }

    /// How many authorized checkers must accept a certificate of `role`
    /// before it is `VERIFIED` (1 unless the policy asks for more).
    pub fn quorum(&self, role: &str) -> usize {
        self.checkers.quorum.get(role).map_or(1, |&k| k as usize)
    }

    /// Ask `k` checkers of `role` to accept (1 removes the requirement).
    pub fn set_quorum(&mut self, role: &str, k: u32) {
        if k <= 1 {
            self.checkers.quorum.remove(role);
        } else {
            self.checkers.quorum.insert(role.to_owned(), k);
        }
    }

    /// Why `digest` is recalled, if it is: by this policy, or by the bundled policy's history.
    pub fn recall_of(&self, digest: &Digest) -> Option<Recall> {
        self.checkers.recalled.iter().find(|r| r.digest == *digest).cloned().or_else(|| {
            BUNDLED_RECALLS
                .iter()
                .find(|(hex, _)| digest.to_string() == *hex)
                .map(|(_, reason)| Recall { digest: *digest, reason: (*reason).to_owned() })
        })
    }
}

#[cfg(test)]
mod tests;
