//! Where invocations are recorded: episodes by digest, and experiments'
//! lines with the operator's budgets held across hosts.

use crate::digest::Digest;
use crate::experiments::{Admission, ExperimentBudgets, InvocationRecord, Reservation, Spent};
use crate::quotas::{Exceeded, Quota, Reserve, Storing, Usage};

use super::DbError;

/// What the host recorded when a producer made a certificate: the check its
/// declared route names. Written by the host from the producer's validated
/// route (never from the certificate's own content), read when the
/// certificate is checked: the role is the one an operator must have
/// authorized the checker for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CertificateRecord {
    /// The checker role the certificate needs.
    pub checker_role: String,
    /// Its format, as the route declared it.
    pub certificate_format: String,
    /// The checker capability the producer named for it.
    pub verify_capability_id: String,
    /// The producer capability that made it.
    pub capability_id: String,
    /// The producer's component.
    pub producer: Digest,
}

/// An episode as stored: its digest, the capability that answered, and its
/// canonical bytes.
#[derive(Debug, Clone, Copy)]
pub struct EpisodeRow<'a> {
    pub digest: &'a Digest,
    pub capability_id: &'a str,
    pub body: &'a [u8],
}

/// An episode and the experiment line that names it, written together.
pub struct EpisodeWrite<'a> {
    pub experiment: &'a str,
    pub record: &'a InvocationRecord,
    pub episode: EpisodeRow<'a>,
}

/// Where episodes are kept: the data directory's SQLite database, or the
/// shared PostgreSQL database of several hosts. Certificates' records are
/// kept beside them.
pub trait EpisodeStore: Send + Sync {
    /// Ready when a write could begin without waiting for another writer of
    /// this process (at once where writers do not wait for one another
    /// here): an async caller waits here rather than blocking its thread.
    fn writer_free(&self) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(std::future::ready(()))
    }
    /// Store canonical episode bytes under `digest` (idempotent).
    fn put(&self, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError>;
    /// The episode's canonical bytes.
    fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError>;
    /// Record the check a certificate artifact needs; the first record of a
    /// digest stays (a digest names one envelope, lineage included, so one
    /// producer on one input).
    fn put_certificate(&self, certificate: &Digest, record: &CertificateRecord) -> Result<(), DbError>;
    /// The record of a certificate artifact, if a producer made it as one.
    fn certificate(&self, certificate: &Digest) -> Result<Option<CertificateRecord>, DbError>;
    /// The stored episodes whose verdict checker `checker` gave, in digest order.
    fn verdicts_by(&self, checker: &Digest) -> Result<Vec<Digest>, DbError>;
    /// Record a re-check of a recalled verdict beside it (idempotent).
    fn put_recheck(&self, recheck: &RecheckRecord) -> Result<(), DbError>;
    /// The re-checks recorded beside episode `episode`, oldest first.
    fn rechecks(&self, episode: &Digest) -> Result<Vec<RecheckRecord>, DbError>;
    /// Let the tenant of tag `tenant` read the artifacts `uris` (idempotent).
    fn grant(&self, tenant: &str, uris: &[String]) -> Result<(), DbError>;
    /// Whether the tenant of tag `tenant` may read `uri`: an artifact granted
    /// to it, or an episode that one of its experiments names.
    fn granted(&self, tenant: &str, uri: &str) -> Result<bool, DbError>;
}

/// A re-check of a verdict whose checker was recalled: the new verdict,
/// recorded beside the old one (which stays as it was stored).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecheckRecord {
    /// The episode whose verdict was recalled.
    pub episode: Digest,
    /// The recalled checker that gave it.
    pub recalled: Digest,
    /// The episode of the re-check.
    pub recheck: Digest,
    /// Its verdict (`VERIFIED`, `REJECTED`, `UNSUPPORTED` or `NOT_CONCLUDED`).
    pub status: String,
    /// The checker that gave it (the router's digest when none could).
    pub checker: Digest,
}

/// The most invocation rows one experiment-key lookup reads (completions are hints).
pub const KEY_SCAN_ROWS: i64 = 50_000;

/// Where experiment records are kept: the data directory's SQLite database,
/// or the shared PostgreSQL database of several hosts.
pub trait ExperimentStore: Send + Sync {
    /// The spend recorded for `experiment`: rows that ran (COMPLETED, FAILED, CANCELLED).
    fn spent(&self, experiment: &str) -> Result<Spent, DbError>;
    /// Append a record; the store assigns the next ordinal atomically and returns it.
    fn append(&self, experiment: &str, record: &InvocationRecord) -> Result<u64, DbError>;
    /// Store each write's episode and append its record, which names it, in
    /// one commit for all (a group commit): a call's two writes cost one,
    /// and a line never names an episode that is not stored. Each write's
    /// ordinal or failure, in order: when one write fails, only that one
    /// fails (the others are written without it, in one commit still).
    /// `None` when this store writes them apart (the caller then puts each
    /// episode first, then appends). Only a store that is also the runtime's [`EpisodeStore`]
    /// may write them together (`store::open` builds both from one database).
    fn append_batch(&self, _writes: &[EpisodeWrite<'_>]) -> Option<Vec<Result<u64, DbError>>> {
        None
    }
    /// Keep a policy body under its digest (idempotent).
    fn put_policy(&self, digest: &Digest, body: &str) -> Result<(), DbError>;
    /// A kept policy body.
    fn policy(&self, digest: &Digest) -> Result<Option<String>, DbError>;
    /// Every record of an experiment, in ordinal order.
    fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, DbError>;
    /// At most `limit` experiment keys that have records, in byte order,
    /// matching `pattern` (a `LIKE` pattern with `\\` as its escape, from
    /// [`crate::experiments::key_pattern`]) and starting with `from` (the
    /// pattern's literal head: the store reads only that range of its key
    /// index, and at most [`KEY_SCAN_ROWS`] rows of it, so a completion costs
    /// the same in a store of any size; it may then find fewer keys).
    fn experiment_keys(&self, pattern: &str, from: &str, limit: usize) -> Result<Vec<String>, DbError>;
    /// How a store shared by several hosts holds places under the experiment
    /// budgets; `None` for a local store, whose spend this process keeps in
    /// memory (it is the store's only writer).
    fn reservations(&self) -> Option<&dyn Reservations> {
        None
    }
    /// A tenant's recorded usage: its day's fuel and its stored bytes
    /// ([`crate::quotas::Usage`] with nothing in flight and a full bucket);
    /// `None` when nothing was recorded for it.
    fn tenant_usage(&self, tenant: &str) -> Result<Option<Usage>, DbError>;
    /// Add `fuel` to a tenant's fuel of the UTC day `day` (the count starts
    /// again on a new day) and `stored_bytes` to its stored bytes.
    fn add_tenant_usage(&self, tenant: &str, day: i64, fuel: u64, stored_bytes: u64) -> Result<(), DbError>;
    /// How a store shared by several hosts judges tenants' quotas; `None`
    /// for a local store, whose bucket and calls in flight this process keeps
    /// in memory.
    fn quota_ledger(&self) -> Option<&dyn QuotaLedger> {
        None
    }
}

/// Quotas in a store shared by several hosts: one judgement at a time per
/// tenant, on the database's clock, with a row per call in flight, so a
/// quota is exact across hosts.
pub trait QuotaLedger: Send + Sync {
    /// Admit one call of `tenant` under `quota` with `reserve`: its place in
    /// flight (an id to release, which frees the reservation too), or the
    /// quota that refuses it.
    fn admit(&self, tenant: &str, quota: &Quota, reserve: Reserve) -> Result<Result<String, Exceeded>, DbError>;
    /// Reserve room for `tenant` to store bytes outside a call
    /// ([`crate::quotas::judge_storage`]): an id to release and the bytes
    /// reserved, or the refusal.
    fn reserve_storage(
        &self,
        tenant: &str,
        quota: &Quota,
        storing: Storing,
    ) -> Result<Result<(String, u64), Exceeded>, DbError>;
    /// Release a hold (a call's place, a store's room; when it had one) and
    /// add what was spent; `refund`: the call never ran, its token goes back
    /// to the bucket.
    fn release(&self, tenant: &str, call: Option<&str>, spent: (u64, u64), refund: bool) -> Result<(), DbError>;
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

/// A certificate's record from its columns (role, format, checker, producer
/// capability, producer digest in hex); a digest that does not parse is a
/// corrupt row.
pub fn certificate_record(
    (checker_role, certificate_format, verify_capability_id, capability_id, producer): (
        String,
        String,
        String,
        String,
        String,
    ),
) -> Result<CertificateRecord, DbError> {
    let producer =
        Digest::from_hex(&producer).map_err(|e| DbError::Corrupt(format!("a certificate's producer: {e}")))?;
    Ok(CertificateRecord { checker_role, certificate_format, verify_capability_id, capability_id, producer })
}

/// The columns of an invocation record, in the order both stores select them.
pub const RECORD_COLUMNS: &str = "ordinal, capability_id, stop_reason, episode, fuel, wall_time_us, logical_bytes, \
    model_visible_bytes, wire_bytes, policy_digest";

/// A `rechecks` row as read (hex digests), checked.
pub fn recheck_record(
    episode: &Digest,
    (recalled, recheck, status, checker): (String, String, String, String),
) -> Result<RecheckRecord, DbError> {
    let digest =
        |field: &str, hex: &str| Digest::from_hex(hex).map_err(|e| DbError::Corrupt(format!("rechecks.{field}: {e}")));
    Ok(RecheckRecord {
        episode: *episode,
        recalled: digest("recalled", &recalled)?,
        recheck: digest("recheck", &recheck)?,
        status,
        checker: digest("checker", &checker)?,
    })
}
