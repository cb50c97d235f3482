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
use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use crate::database::DbError;
use schemars::JsonSchema;
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
    /// Its episode digest (`sha256:<hex>`), absent when nothing was stored.
    pub episode: Option<String>,
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
    pub policy_digest: String,
}

/// A database failure.
#[derive(Debug, thiserror::Error)]
#[error("experiment store: {0}")]
pub struct ExperimentError(#[from] DbError);

/// What an experiment has spent: invocations that ran, per capability id, and their fuel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spent {
    /// Total fuel of the invocations that ran.
    pub fuel: u64,
    /// Invocations that ran (or are admitted and running here), per capability id.
    pub invocations: HashMap<String, u64>,
}

/// Where experiment records are kept: the data directory's SQLite database,
/// or the shared PostgreSQL database of several hosts.
pub trait ExperimentStore: Send + Sync {
    /// The spend recorded for `experiment`: rows that ran (COMPLETED, FAILED, CANCELLED).
    fn spent(&self, experiment: &str) -> Result<Spent, DbError>;
    /// Append a record; the store assigns the next ordinal atomically and returns it.
    fn append(&self, experiment: &str, record: &InvocationRecord) -> Result<u64, DbError>;
    /// Keep a policy body under its digest (idempotent).
    fn put_policy(&self, digest: &str, body: &str) -> Result<(), DbError>;
    /// A kept policy body.
    fn policy(&self, digest: &str) -> Result<Option<String>, DbError>;
    /// Every record of an experiment, in ordinal order.
    fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, DbError>;
    /// How a store shared by several hosts holds places under the experiment
    /// budgets; `None` for a local store, whose spend this process keeps in
    /// memory (it is the store's only writer).
    fn reservations(&self) -> Option<&dyn Reservations> {
        None
    }
}

/// Admission in a store shared by several hosts: a reservation row per
/// admitted call, taken under a per-experiment lock and swapped for the
/// call's record in one transaction, so caps are exact across hosts.
pub trait Reservations: Send + Sync {
    /// Admit one invocation against `budgets` and hold its place until it is recorded.
    fn reserve(&self, experiment: &str, capability_id: &str, budgets: &ExperimentBudgets)
    -> Result<Admission, DbError>;
    /// Append `record` and release `reservation` in the same transaction; returns the ordinal.
    fn append_reserved(
        &self,
        experiment: &str,
        record: &InvocationRecord,
        reservation: &Reservation,
    ) -> Result<u64, DbError>;
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

/// The experiment service: admission against the operator's budgets, and
/// records. With a local store the spend is kept in memory per experiment,
/// loaded on first use. With a shared store an admission that has a budget
/// to enforce is a reservation in the store ([`Reservations::reserve`]),
/// made under a per-experiment lock and released when the call is recorded,
/// so caps are exact across hosts; one with no budget reads nothing.
pub struct Experiments {
    store: Box<dyn ExperimentStore>,
    spent: Mutex<HashMap<String, Spent>>,
    policies: Mutex<std::collections::HashSet<String>>,
}

/// Whether `id` is an acceptable experiment id: 1–64 of `[A-Za-z0-9._-]`, starting alphanumeric.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_EXPERIMENT_ID
        && id.as_bytes()[0].is_ascii_alphanumeric()
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A fresh experiment id, `exp-<32 hex>`.
pub fn mint_id() -> String {
    format!("exp-{}", uuid::Uuid::new_v4().simple())
}

impl Experiments {
    /// The experiment service over `store`.
    pub fn new(store: Box<dyn ExperimentStore>) -> Self {
        Experiments { store, spent: Mutex::new(HashMap::new()), policies: Mutex::new(Default::default()) }
    }

    /// Admit one invocation of `capability_id` under `budgets`, holding its
    /// place against the invocation cap until [`Experiments::record`]; or say
    /// why it may not run. A store that cannot be read refuses the call rather
    /// than forgetting the spend.
    pub fn admit(
        &self,
        experiment: &str,
        capability_id: &str,
        budgets: &ExperimentBudgets,
    ) -> Result<Admission, ExperimentError> {
        if let Some(shared) = self.store.reservations() {
            // Nothing to enforce: no read of the shared spend at all.
            if budgets.fuel.is_none() && !budgets.max_invocations.contains_key(capability_id) {
                return Ok(Admission::Admitted { reservation: None });
            }
            return Ok(shared.reserve(experiment, capability_id, budgets)?);
        }
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        if !spent.contains_key(experiment) {
            let loaded = self.store.spent(experiment)?;
            spent.insert(experiment.to_owned(), loaded);
        }
        let state = spent.get_mut(experiment).expect("inserted above");
        Ok(judge(state, capability_id, budgets))
    }

    /// Whether this process is the store's only writer (a local SQLite
    /// store): then admission and records never wait on a network.
    pub fn local(&self) -> bool {
        self.store.reservations().is_none()
    }

    /// The experiments whose spend this process keeps in memory (local
    /// stores: each one admitted a call here).
    pub fn tracked(&self) -> usize {
        self.spent.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Give back the place of an admitted call that will be admitted again
    /// (an abandoned inline attempt, local stores only): nothing was spent.
    pub fn withdraw(&self, experiment: &str, capability_id: &str) {
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = spent.get_mut(experiment).and_then(|s| s.invocations.get_mut(capability_id)) {
            *count = count.saturating_sub(1);
        }
    }

    /// Record a finished invocation, releasing the place its admission held;
    /// returns its ordinal. Fuel of invocations that ran counts against the
    /// experiment's budget.
    pub fn record(
        &self,
        experiment: &str,
        record: &InvocationRecord,
        reservation: Option<&Reservation>,
    ) -> Result<u64, ExperimentError> {
        if let (Some(shared), Some(reservation)) = (self.store.reservations(), reservation) {
            // The row (or, for a call that never ran, nothing) takes the reservation's place.
            return Ok(shared.append_reserved(experiment, record, reservation)?);
        }
        let admitted =
            !matches!(record.stop_reason, StopReason::ExperimentFuelSpent | StopReason::InvocationCapReached);
        if admitted && self.local() {
            let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(state) = spent.get_mut(experiment) {
                state.fuel = state.fuel.saturating_add(record.fuel);
                // A call that never ran (OVERLOADED, storage) gives back the
                // place admit() reserved, as a reload would count it.
                if record.stop_reason == StopReason::Unavailable
                    && let Some(count) = state.invocations.get_mut(&record.capability_id)
                {
                    *count = count.saturating_sub(1);
                }
            }
        }
        Ok(self.store.append(experiment, record)?)
    }

    /// Keep the policy an invocation ran under (once per digest), so an
    /// archive can carry exactly that policy later.
    /// The body is serialized only the first time a digest is seen.
    pub fn remember_policy(&self, digest: &str, body: impl FnOnce() -> String) -> Result<(), ExperimentError> {
        let mut known = self.policies.lock().unwrap_or_else(|e| e.into_inner());
        if known.contains(digest) {
            return Ok(());
        }
        self.store.put_policy(digest, &body())?;
        known.insert(digest.to_owned());
        Ok(())
    }

    /// A policy remembered by [`Experiments::remember_policy`].
    pub fn policy(&self, digest: &str) -> Result<Option<String>, ExperimentError> {
        Ok(self.store.policy(digest)?)
    }

    /// Every invocation of an experiment, in order (empty when it has none).
    pub fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, ExperimentError> {
        Ok(self.store.invocations(experiment)?)
    }
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

/// Experiment records in the data directory's SQLite database.
pub struct SqliteExperiments {
    conn: Mutex<Connection>,
}

impl SqliteExperiments {
    /// Open (creating) the tables in the database at `path`.
    pub fn open(path: &Path) -> Result<Self, DbError> {
        let conn = crate::database::open(
            path,
            crate::database::Durability::Normal,
            "CREATE TABLE IF NOT EXISTS experiment_invocations (
                experiment TEXT NOT NULL,
                ordinal INTEGER NOT NULL,
                capability_id TEXT NOT NULL,
                stop_reason TEXT NOT NULL,
                episode TEXT,
                fuel INTEGER NOT NULL,
                wall_time_us INTEGER NOT NULL,
                logical_bytes INTEGER NOT NULL,
                model_visible_bytes INTEGER NOT NULL,
                wire_bytes INTEGER NOT NULL,
                policy_digest TEXT NOT NULL,
                PRIMARY KEY (experiment, ordinal)
            ) STRICT;
            CREATE TABLE IF NOT EXISTS experiment_policies (
                digest TEXT PRIMARY KEY,
                body TEXT NOT NULL
            ) STRICT;",
        )?;
        Ok(SqliteExperiments { conn: Mutex::new(conn) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The columns of an invocation record, in the order both stores select them.
pub const RECORD_COLUMNS: &str = "ordinal, capability_id, stop_reason, episode, fuel, wall_time_us, logical_bytes, \
    model_visible_bytes, wire_bytes, policy_digest";

impl ExperimentStore for SqliteExperiments {
    fn spent(&self, experiment: &str) -> Result<Spent, DbError> {
        let conn = self.lock();
        let mut statement = conn.prepare_cached(
            "SELECT capability_id, COUNT(*), SUM(fuel) FROM experiment_invocations
             WHERE experiment = ?1 AND stop_reason IN ('COMPLETED', 'FAILED', 'CANCELLED') GROUP BY capability_id",
        )?;
        let mut spent = Spent::default();
        let rows = statement.query_map(params![experiment], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
        })?;
        for row in rows {
            let (id, count, fuel) = row?;
            spent.invocations.insert(id, count as u64);
            spent.fuel += fuel as u64;
        }
        Ok(spent)
    }

    fn append(&self, experiment: &str, record: &InvocationRecord) -> Result<u64, DbError> {
        // One statement: the ordinal is assigned and the row written atomically.
        let ordinal: i64 = self
            .lock()
            .prepare_cached(
                "INSERT INTO experiment_invocations (experiment, ordinal, capability_id, stop_reason, episode, fuel,
                wall_time_us, logical_bytes, model_visible_bytes, wire_bytes, policy_digest)
             VALUES (?1, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM experiment_invocations WHERE experiment = ?1),
                ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             RETURNING ordinal",
            )?
            .query_row(
                params![
                    experiment,
                    record.capability_id,
                    record.stop_reason.to_string(),
                    record.episode,
                    record.fuel as i64,
                    record.wall_time_us as i64,
                    record.logical_bytes as i64,
                    record.model_visible_bytes as i64,
                    record.wire_bytes as i64,
                    record.policy_digest,
                ],
                |row| row.get(0),
            )?;
        Ok(ordinal as u64)
    }

    fn put_policy(&self, digest: &str, body: &str) -> Result<(), DbError> {
        self.lock().execute(
            "INSERT OR IGNORE INTO experiment_policies (digest, body) VALUES (?1, ?2)",
            params![digest, body],
        )?;
        Ok(())
    }

    fn policy(&self, digest: &str) -> Result<Option<String>, DbError> {
        Ok(self
            .lock()
            .query_row("SELECT body FROM experiment_policies WHERE digest = ?1", params![digest], |row| row.get(0))
            .optional()?)
    }

    fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, DbError> {
        let conn = self.lock();
        let mut statement = conn.prepare(&format!(
            "SELECT {RECORD_COLUMNS} FROM experiment_invocations WHERE experiment = ?1 ORDER BY ordinal"
        ))?;
        let rows = statement.query_map(params![experiment], |row| {
            Ok(InvocationRecord {
                ordinal: row.get::<_, i64>(0)? as u64,
                capability_id: row.get(1)?,
                stop_reason: StopReason::parse(&row.get::<_, String>(2)?),
                episode: row.get(3)?,
                fuel: row.get::<_, i64>(4)? as u64,
                wall_time_us: row.get::<_, i64>(5)? as u64,
                logical_bytes: row.get::<_, i64>(6)? as u64,
                model_visible_bytes: row.get::<_, i64>(7)? as u64,
                wire_bytes: row.get::<_, i64>(8)? as u64,
                policy_digest: row.get(9)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
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
