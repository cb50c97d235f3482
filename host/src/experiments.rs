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

use rusqlite::{Connection, params};
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
    /// The caller cancelled it; nothing was stored.
    Cancelled,
    /// The experiment's total fuel was already spent; it did not run.
    ExperimentFuelSpent,
    /// The experiment's cap on this capability's invocations was reached; it did not run.
    InvocationCapReached,
}

impl StopReason {
    fn parse(text: &str) -> StopReason {
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
}

/// A database failure.
#[derive(Debug, thiserror::Error)]
#[error("experiment store: {0}")]
pub struct ExperimentError(#[from] rusqlite::Error);

#[derive(Default)]
struct Spent {
    fuel: u64,
    invocations: HashMap<String, u64>,
    /// The last ordinal assigned.
    ordinal: u64,
}

/// Records written per batch; a read flushes whatever is pending first.
const BATCH: usize = 64;

/// The experiment store. Records are buffered and written in batches (one
/// transaction per [`BATCH`] invocations, or at the next read, or on drop):
/// ordinals are assigned in memory under the same lock as the budgets.
pub struct Experiments {
    conn: Mutex<Connection>,
    spent: Mutex<HashMap<String, Spent>>,
    pending: Mutex<Vec<(String, InvocationRecord)>>,
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
    /// Open (creating) the tables in the database at `path`.
    pub fn open(path: &Path) -> Result<Self, ExperimentError> {
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
                PRIMARY KEY (experiment, ordinal)
            ) STRICT;",
        )?;
        Ok(Experiments { conn: Mutex::new(conn), spent: Mutex::new(HashMap::new()), pending: Mutex::new(Vec::new()) })
    }

    /// Admit one invocation of `capability_id` under `budgets`, reserving its
    /// place against the invocation cap; or say why it may not run.
    pub fn admit(
        &self,
        experiment: &str,
        capability_id: &str,
        budgets: &ExperimentBudgets,
    ) -> Result<(), (StopReason, String)> {
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        let state = self.state(&mut spent, experiment);
        if let Some(limit) = budgets.fuel
            && state.fuel >= limit
        {
            return Err((
                StopReason::ExperimentFuelSpent,
                format!("the experiment has spent {} of its {limit} fuel", state.fuel),
            ));
        }
        let count = state.invocations.entry(capability_id.to_owned()).or_default();
        if let Some(&cap) = budgets.max_invocations.get(capability_id)
            && *count >= cap
        {
            return Err((
                StopReason::InvocationCapReached,
                format!("the experiment's cap of {cap} invocations of {capability_id} is reached"),
            ));
        }
        *count += 1;
        Ok(())
    }

    /// The in-memory state of an experiment, loaded from the store on first use.
    fn state<'a>(&self, spent: &'a mut HashMap<String, Spent>, experiment: &str) -> &'a mut Spent {
        if !spent.contains_key(experiment) {
            let loaded = self.load_spent(experiment).unwrap_or_default();
            spent.insert(experiment.to_owned(), loaded);
        }
        spent.get_mut(experiment).expect("inserted above")
    }

    fn load_spent(&self, experiment: &str) -> Result<Spent, ExperimentError> {
        self.flush()?;
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let mut statement = conn.prepare(
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
        let last: i64 = conn.query_row(
            "SELECT COALESCE(MAX(ordinal), 0) FROM experiment_invocations WHERE experiment = ?1",
            params![experiment],
            |row| row.get(0),
        )?;
        spent.ordinal = last as u64;
        Ok(spent)
    }

    /// Record a finished invocation; returns its ordinal. Fuel of invocations
    /// that ran counts against the experiment's budget.
    pub fn record(&self, experiment: &str, mut record: InvocationRecord) -> Result<u64, ExperimentError> {
        let full = {
            let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
            let state = self.state(&mut spent, experiment);
            if !matches!(record.stop_reason, StopReason::ExperimentFuelSpent | StopReason::InvocationCapReached) {
                state.fuel = state.fuel.saturating_add(record.fuel);
            }
            state.ordinal += 1;
            record.ordinal = state.ordinal;
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.push((experiment.to_owned(), record.clone()));
            pending.len() >= BATCH
        };
        if full {
            self.flush()?;
        }
        Ok(record.ordinal)
    }

    /// Write every pending record, in one transaction.
    pub fn flush(&self) -> Result<(), ExperimentError> {
        let batch = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if batch.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO experiment_invocations (experiment, ordinal, capability_id, stop_reason,
                    episode, fuel, wall_time_us, logical_bytes, model_visible_bytes, wire_bytes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for (experiment, r) in &batch {
                insert.execute(params![
                    experiment,
                    r.ordinal as i64,
                    r.capability_id,
                    r.stop_reason.to_string(),
                    r.episode,
                    r.fuel as i64,
                    r.wall_time_us as i64,
                    r.logical_bytes as i64,
                    r.model_visible_bytes as i64,
                    r.wire_bytes as i64,
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Every invocation of an experiment, in order (empty when it has none).
    pub fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, ExperimentError> {
        self.flush()?;
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let mut statement = conn.prepare(
            "SELECT ordinal, capability_id, stop_reason, episode, fuel, wall_time_us, logical_bytes,
                    model_visible_bytes, wire_bytes
             FROM experiment_invocations WHERE experiment = ?1 ORDER BY ordinal",
        )?;
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
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl Drop for Experiments {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            tracing::warn!(error = %e, "experiment records not written");
        }
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
