//! Where invocations are recorded: episodes by digest, and experiments'
//! lines with the operator's budgets held across hosts.

use crate::digest::Digest;
use crate::experiments::{Admission, ExperimentBudgets, InvocationRecord, Reservation, Spent};

use super::DbError;

/// Where episodes are kept: the data directory's SQLite database, or the
/// shared PostgreSQL database of several hosts.
pub trait EpisodeStore: Send + Sync {
    /// Store canonical episode bytes under `digest` (idempotent).
    fn put(&self, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError>;
    /// The episode's canonical bytes.
    fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError>;
}

/// Where experiment records are kept: the data directory's SQLite database,
/// or the shared PostgreSQL database of several hosts.
pub trait ExperimentStore: Send + Sync {
    /// The spend recorded for `experiment`: rows that ran (COMPLETED, FAILED, CANCELLED).
    fn spent(&self, experiment: &str) -> Result<Spent, DbError>;
    /// Append a record; the store assigns the next ordinal atomically and returns it.
    fn append(&self, experiment: &str, record: &InvocationRecord) -> Result<u64, DbError>;
    /// Keep a policy body under its digest (idempotent).
    fn put_policy(&self, digest: &Digest, body: &str) -> Result<(), DbError>;
    /// A kept policy body.
    fn policy(&self, digest: &Digest) -> Result<Option<String>, DbError>;
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

/// A digest column as the stores keep it (`sha256:<hex>`); one that does not
/// parse is a corrupt row.
pub fn digest_column(text: &str) -> Result<Digest, DbError> {
    text.parse().map_err(|e| DbError::Corrupt(format!("a stored digest: {e}")))
}

/// The columns of an invocation record, in the order both stores select them.
pub const RECORD_COLUMNS: &str = "ordinal, capability_id, stop_reason, episode, fuel, wall_time_us, logical_bytes, \
    model_visible_bytes, wire_bytes, policy_digest";
