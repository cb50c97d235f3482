//! Experiments: every invocation belongs to one (by default one per MCP
//! session or CLI process; callers may name their own). An experiment
//! records, per invocation in order, the episode it produced and its
//! accounting (fuel, wall time, and logical / model-visible / wire bytes
//! counted separately), and enforces the operator's experiment budgets: total
//! fuel and per-capability invocation caps. A spent budget ends the next
//! invocation with a closed stop reason instead of running it.
//!
//! Episodes stay free of experiment ids and timings, so identical runs in
//! different experiments share episodes; everything that may differ between
//! identical runs lives here.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;

use crate::digest::Digest;
use serde::{Deserialize, Serialize};
use strum::EnumIter;

/// The longest experiment id accepted.
pub const MAX_EXPERIMENT_ID: usize = 64;

/// Why an invocation ended: a closed set.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, EnumIter, strum::Display,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum StopReason {
    /// The capability ran and answered.
    Completed,
    /// The call failed with a diagnostic (no conclusion).
    Failed,
    /// No sandbox slot, component or store was available; nothing was stored.
    Unavailable,
    /// The caller cancelled it; nothing was stored.
    Cancelled,
    /// The experiment's total fuel was already spent; it did not run.
    ExperimentFuelSpent,
    /// The experiment's cap on this capability's invocations was reached; it did not run.
    InvocationCapReached,
}

impl StopReason {
    /// The stop reason a store wrote (unknown text reads as FAILED).
    pub fn parse(text: &str) -> StopReason {
        serde_json::from_value(serde_json::Value::String(text.to_owned())).unwrap_or(StopReason::Failed)
    }

    /// Whether the invocation ran in a way a replay reproduces.
    pub fn replayable(self) -> bool {
        matches!(self, StopReason::Completed | StopReason::Failed)
    }
}

/// The operator's experiment budgets (`[experiments]` in `policy.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentBudgets {
    /// Total fuel one experiment may spend; once spent, further invocations
    /// stop with EXPERIMENT_FUEL_SPENT. The call that crosses the line runs to
    /// its own budget (absent: unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
    /// Invocations one experiment may make of each capability id.
    #[serde(default)]
    pub max_invocations: BTreeMap<String, u64>,
}

/// One invocation's line in an experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InvocationRecord {
    /// Position in the experiment, from 1.
    pub ordinal: u64,
    /// Capability invoked.
    pub capability_id: String,
    /// How it ended.
    pub stop_reason: StopReason,
    /// Its episode digest, absent when nothing was stored.
    pub episode: Option<Digest>,
    /// Fuel consumed.
    pub fuel: u64,
    /// Wall time, microseconds.
    pub wall_time_us: u64,
    /// Bytes of the complete result's canonical JSON.
    pub logical_bytes: u64,
    /// Bytes of the model-visible text.
    pub model_visible_bytes: u64,
    /// Bytes of the tool result as serialized for the wire (structured content and text).
    pub wire_bytes: u64,
    /// Digest of the operator policy it ran under.
    pub policy_digest: Digest,
}

/// What an experiment has spent: invocations that ran, per capability id, and their fuel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spent {
    /// Total fuel of the invocations that ran.
    pub fuel: u64,
    /// Invocations that ran (or are admitted and running here), per capability id.
    pub invocations: HashMap<String, u64>,
}

/// Whether an invocation may run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Admission {
    /// It may run. In a shared store `reservation` holds its place under a
    /// cap until [`Experiments::record`] releases it with the call's record.
    Admitted { reservation: Option<Reservation> },
    /// A budget of the experiment is spent: it does not run.
    Refused { stop: StopReason, message: String },
}

/// A place held under an experiment's caps in a shared store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation(pub String);

/// Whether `id` is an acceptable experiment id: 1–64 of `[A-Za-z0-9._-]`, starting alphanumeric.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_EXPERIMENT_ID
        && id.as_bytes()[0].is_ascii_alphanumeric()
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The key an experiment is stored under. The operator's experiments (stdio,
/// the CLI, HTTP without authentication) are kept under their ids; a
/// tenant's experiment `id` is kept as `id@<tag>`, the tenant's tag
/// ([`crate::tenants::tenant_tag`]). `@` is not an id character, so no
/// name a tenant can give reaches another tenant's experiment: the same id
/// names a different experiment per tenant, and another tenant's answers
/// not found. The operator reaches a tenant's experiment by its key.
pub fn key(id: &str, tenant: Option<&str>) -> String {
    match tenant {
        Some(tenant) => format!("{id}@{}", crate::tenants::tenant_tag(tenant)),
        None => id.to_owned(),
    }
}

/// Whether the operator may name `key`: an experiment id, or a tenant's
/// experiment key `id@<16 hex>`.
pub fn valid_key(key: &str) -> bool {
    match key.split_once('@') {
        Some((id, tag)) => {
            valid_id(id) && tag.len() == 16 && tag.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        }
        None => valid_id(key),
    }
}

/// The key `name` stands for when `tenant` names it (`None`: the operator),
/// or `None` when that caller cannot name it (not an id it may use).
pub fn key_named(name: &str, tenant: Option<&str>) -> Option<String> {
    match tenant {
        Some(_) => valid_id(name).then(|| key(name, tenant)),
        None => valid_key(name).then(|| name.to_owned()),
    }
}

/// The `LIKE` pattern (escape `\\`) of the keys whose id starts with
/// `prefix`, `tenant`'s own (`None`: every key), and the pattern's literal head.
pub fn key_pattern(prefix: &str, tenant: Option<&str>) -> (String, String) {
    let mut pattern: String = prefix
        .chars()
        .flat_map(|c| match c {
            '\\' | '%' | '_' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    pattern.push('%');
    if let Some(tenant) = tenant {
        pattern.push_str(&format!("@{}", crate::tenants::tenant_tag(tenant)));
    }
    (pattern, prefix.to_owned())
}

/// The tag of the tenant whose experiment `key` is (`None`: the operator's).
pub fn owner_tag(key: &str) -> Option<&str> {
    key.rsplit_once('@').map(|(_, tag)| tag)
}

/// The id a tenant names `key` by (the key itself for the operator).
pub fn id_of<'k>(key: &'k str, tenant: Option<&str>) -> &'k str {
    match tenant {
        Some(_) => key.rsplit_once('@').map_or(key, |(id, _)| id),
        None => key,
    }
}

/// A fresh experiment id, `exp-<32 hex>`.
pub fn mint_id() -> String {
    format!("exp-{}", uuid::Uuid::new_v4().simple())
}

/// Admit one more invocation of `capability_id` against `spent` (counting
/// it), or say why not. The judgement of both the local and the shared store.
pub fn judge(spent: &mut Spent, capability_id: &str, budgets: &ExperimentBudgets) -> Admission {
    if let Some(limit) = budgets.fuel
        && spent.fuel >= limit
    {
        let message = format!("the experiment has spent its {limit} fuel");
        return Admission::Refused { stop: StopReason::ExperimentFuelSpent, message };
    }
    let count = spent.invocations.entry(capability_id.to_owned()).or_default();
    if let Some(&cap) = budgets.max_invocations.get(capability_id)
        && *count >= cap
    {
        let message = format!("the experiment's cap of {cap} invocations of {capability_id} is reached");
        return Admission::Refused { stop: StopReason::InvocationCapReached, message };
    }
    *count += 1;
    Admission::Admitted { reservation: None }
}

/// Totals over invocation records.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    pub invocations: u64,
    pub fuel: u64,
    pub wall_time_us: u64,
    pub logical_bytes: u64,
    pub model_visible_bytes: u64,
    pub wire_bytes: u64,
}

impl Totals {
    fn add(&mut self, r: &InvocationRecord) {
        self.invocations += 1;
        self.fuel += r.fuel;
        self.wall_time_us += r.wall_time_us;
        self.logical_bytes += r.logical_bytes;
        self.model_visible_bytes += r.model_visible_bytes;
        self.wire_bytes += r.wire_bytes;
    }
}

/// `experiment://<id>/accounting`: totals, per capability, per stop reason, and every line.
pub fn accounting(experiment: &str, records: &[InvocationRecord]) -> serde_json::Value {
    let mut total = Totals::default();
    let mut by_capability: BTreeMap<&str, Totals> = BTreeMap::new();
    let mut by_stop_reason: BTreeMap<String, u64> = BTreeMap::new();
    for r in records {
        total.add(r);
        by_capability.entry(&r.capability_id).or_default().add(r);
        *by_stop_reason.entry(r.stop_reason.to_string()).or_default() += 1;
    }
    serde_json::json!({
        "experiment": experiment,
        "bytes": "logical = the complete result's canonical JSON; model_visible = the text view; wire = the tool \
    result as serialized (structured content and text)",
        "total": total,
        "by_capability": by_capability,
        "by_stop_reason": by_stop_reason,
        "invocations": records,
    })
}
