//! The experiment service: admission of a validated call against its
//! experiment's budgets, and the call's line when it is recorded.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::digest::Digest;
use crate::experiments::{Admission, ExperimentBudgets, InvocationRecord, Reservation, Spent, StopReason, judge};
use crate::quotas::{Exceeded, Quota, Reserve, Storing, Usage, judge as judge_quota, judge_storage, now_ms};
use crate::store::{DbError, EpisodeRow, EpisodeStore, EpisodeWrite, ExperimentStore};

/// Why a call and its episode were not both recorded.
#[derive(Debug)]
pub enum RecordFailure {
    /// The episode was not stored, nor (where they are written together) the line.
    Episode(DbError),
    /// The episode was stored; its line was not.
    Line(ExperimentError),
}

/// A failure of the experiment store.
#[derive(Debug, thiserror::Error)]
#[error("experiment store")]
pub struct ExperimentError(#[from] DbError);

/// The experiment service: admission against the operator's budgets, and
/// records. With a local store the spend is kept in memory per experiment,
/// loaded on first use. With a shared store an admission that has a budget
/// to enforce is a reservation in the store ([`Reservations::reserve`](crate::store::Reservations::reserve)),
/// made under a per-experiment lock and released when the call is recorded,
/// so caps are exact across hosts; one with no budget reads nothing.
pub struct Experiments {
    store: Box<dyn ExperimentStore>,
    spent: Mutex<HashMap<String, Spent>>,
    policies: Mutex<std::collections::HashSet<Digest>>,
    /// Tenants' usage under their quotas (local stores), loaded on first use.
    usage: Mutex<HashMap<String, Usage>>,
}

/// A call's place under its tenant's quota, or the room reserved for an
/// upload or a workspace write, held until it is released with what was
/// spent.
#[derive(Debug)]
#[must_use]
pub struct QuotaHold {
    tenant: String,
    /// Its row in a shared store.
    row: Option<String>,
    /// A call's (a place in flight), not a store's outside a call.
    call: bool,
    /// What it reserved, given back when it is released.
    reserved: Reserve,
}

impl QuotaHold {
    /// A call's hold as a fake ledger hands it out (stage unit tests).
    #[cfg(test)]
    pub(super) fn fake(tenant: &str, reserved: Reserve) -> QuotaHold {
        QuotaHold { tenant: tenant.to_owned(), row: None, call: true, reserved }
    }

    /// The bytes it reserved: what an upload may store under it.
    pub fn bytes(&self) -> u64 {
        self.reserved.bytes
    }
}

impl Experiments {
    /// The experiment service over `store`.
    pub fn new(store: Box<dyn ExperimentStore>) -> Self {
        Experiments {
            store,
            spent: Mutex::new(HashMap::new()),
            policies: Mutex::new(Default::default()),
            usage: Mutex::new(HashMap::new()),
        }
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
        self.count_spend(experiment, record);
        Ok(self.store.append(experiment, record)?)
    }

    /// Store the episode a line names, then record the line as
    /// [`Experiments::record`] does: in one commit where the store can.
    /// On [`RecordFailure::Episode`] nothing of the call was recorded.
    pub fn record_with_episode(
        &self,
        experiment: &str,
        record: &InvocationRecord,
        reservation: Option<&Reservation>,
        episode: &EpisodeRow<'_>,
        episodes: &dyn EpisodeStore,
    ) -> Result<u64, RecordFailure> {
        // A reservation is only ever held in a shared store, whose line takes its place.
        if reservation.is_none() {
            let write = EpisodeWrite { experiment, record, episode: *episode };
            if let Some(mut written) = self.store.append_batch(std::slice::from_ref(&write)) {
                let ordinal = written.pop().unwrap_or(Err(DbError::Corrupt("no write reported".into())));
                let ordinal = ordinal.map_err(RecordFailure::Episode)?;
                self.count_spend(experiment, record);
                return Ok(ordinal);
            }
        }
        episodes.put(episode.digest, episode.capability_id, episode.body).map_err(RecordFailure::Episode)?;
        self.record(experiment, record, reservation).map_err(RecordFailure::Line)
    }

    /// Count the fuel of a call whose writes wait for a group commit
    /// ([`Experiments::record_batch`]), so that calls admitted meanwhile see
    /// it: otherwise every call answered together could run past a spent
    /// budget.
    pub fn count_ahead(&self, experiment: &str, record: &InvocationRecord) {
        self.count_spend(experiment, record);
    }

    /// Record several calls with their episodes, as [`Experiments::record_with_episode`]
    /// does each (no reservation), in one commit where the store can (a
    /// group commit); each one's ordinal or failure, in order. Their fuel was
    /// counted ahead; a call whose writes fail gives it back.
    pub fn record_batch(
        &self,
        writes: &[EpisodeWrite<'_>],
        episodes: &dyn EpisodeStore,
    ) -> Vec<Result<u64, RecordFailure>> {
        let Some(written) = self.store.append_batch(writes) else {
            return writes
                .iter()
                .map(|w| {
                    self.give_back(w.experiment, w.record);
                    self.record_with_episode(w.experiment, w.record, None, &w.episode, episodes)
                })
                .collect();
        };
        writes
            .iter()
            .zip(written)
            .map(|(write, ordinal)| {
                ordinal.map_err(|e| {
                    self.give_back(write.experiment, write.record);
                    RecordFailure::Episode(e)
                })
            })
            .collect()
    }

    /// Give back fuel counted ahead for a call whose writes failed.
    fn give_back(&self, experiment: &str, record: &InvocationRecord) {
        if self.local() {
            let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(state) = spent.get_mut(experiment) {
                state.fuel = state.fuel.saturating_sub(record.fuel);
            }
        }
    }

    /// Count a recorded call's spend in the memory of a local store.
    fn count_spend(&self, experiment: &str, record: &InvocationRecord) {
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
    }

    /// Keep the policy an invocation ran under (once per digest), so an
    /// archive can carry exactly that policy later.
    /// The body is serialized only the first time a digest is seen.
    pub fn remember_policy(&self, digest: &Digest, body: impl FnOnce() -> String) -> Result<(), ExperimentError> {
        let mut known = self.policies.lock().unwrap_or_else(|e| e.into_inner());
        if known.contains(digest) {
            return Ok(());
        }
        self.store.put_policy(digest, &body())?;
        known.insert(*digest);
        Ok(())
    }

    /// A policy remembered by [`Experiments::remember_policy`].
    pub fn policy(&self, digest: &Digest) -> Result<Option<String>, ExperimentError> {
        Ok(self.store.policy(digest)?)
    }

    /// Admit one call of `tenant` under `quota`, holding its place in flight
    /// and `reserve` until [`Experiments::release`]; or the quota that
    /// refuses it.
    pub fn admit_quota(
        &self,
        tenant: &str,
        quota: &Quota,
        reserve: Reserve,
    ) -> Result<Result<QuotaHold, Exceeded>, ExperimentError> {
        let hold = |row| QuotaHold { tenant: tenant.to_owned(), row, call: true, reserved: reserve };
        if let Some(ledger) = self.store.quota_ledger() {
            return Ok(ledger.admit(tenant, quota, reserve)?.map(|row| hold(Some(row))));
        }
        let now = now_ms();
        let judged = self.with_usage(tenant, now, |usage| judge_quota(usage, quota, now, reserve))?;
        Ok(judged.map(|()| hold(None)))
    }

    /// Reserve room for `tenant` to store bytes outside a call (an upload, a
    /// workspace write) under `quota` until [`Experiments::release`]; or the
    /// refusal when the quota has not that much left.
    pub fn reserve_storage(
        &self,
        tenant: &str,
        quota: &Quota,
        storing: Storing,
    ) -> Result<Result<QuotaHold, Exceeded>, ExperimentError> {
        let hold = |row, bytes| QuotaHold {
            tenant: tenant.to_owned(),
            row,
            call: false,
            reserved: Reserve { fuel: 0, bytes },
        };
        if let Some(ledger) = self.store.quota_ledger() {
            return Ok(ledger.reserve_storage(tenant, quota, storing)?.map(|(row, bytes)| hold(Some(row), bytes)));
        }
        let judged = self.with_usage(tenant, now_ms(), |usage| judge_storage(usage, quota, storing))?;
        Ok(judged.map(|bytes| hold(None, bytes)))
    }

    /// Release a hold under its tenant's quota and count what was spent.
    /// `refund`: the call never ran and will be admitted again (an abandoned
    /// inline attempt), so its token goes back too.
    pub fn release(&self, hold: QuotaHold, fuel: u64, stored_bytes: u64, refund: bool) -> Result<(), ExperimentError> {
        let QuotaHold { tenant, row, call, reserved } = hold;
        if let Some(ledger) = self.store.quota_ledger() {
            return Ok(ledger.release(&tenant, row.as_deref(), (fuel, stored_bytes), refund)?);
        }
        let now = now_ms();
        let day = self.with_usage(&tenant, now, |usage| {
            if call {
                usage.in_flight = usage.in_flight.saturating_sub(1);
            }
            usage.reserved_fuel = usage.reserved_fuel.saturating_sub(reserved.fuel);
            usage.reserved_bytes = usage.reserved_bytes.saturating_sub(reserved.bytes);
            if refund {
                usage.tokens += 1.0;
            }
            usage.spend(now, fuel, stored_bytes);
            usage.day
        })?;
        if fuel > 0 || stored_bytes > 0 {
            self.store.add_tenant_usage(&tenant, day, fuel, stored_bytes)?;
        }
        Ok(())
    }

    /// `f` over a tenant's usage in memory (a local store), loaded from the
    /// store the first time.
    fn with_usage<T>(&self, tenant: &str, now: i64, f: impl FnOnce(&mut Usage) -> T) -> Result<T, ExperimentError> {
        let mut all = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        if !all.contains_key(tenant) {
            let recorded = self.store.tenant_usage(tenant)?;
            let usage = match recorded {
                Some(r) => Usage { day: r.day, fuel: r.fuel, stored_bytes: r.stored_bytes, ..Usage::fresh(now) },
                None => Usage::fresh(now),
            };
            all.insert(tenant.to_owned(), usage);
        }
        Ok(f(all.get_mut(tenant).expect("inserted above")))
    }

    /// Every invocation of an experiment, in order (empty when it has none).
    pub fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, ExperimentError> {
        Ok(self.store.invocations(experiment)?)
    }

    /// At most `limit` ids of experiments that have records and whose id
    /// starts with `prefix`, in byte order: `tenant`'s own (`None`: every
    /// key, as the operator names them).
    pub fn ids(&self, prefix: &str, tenant: Option<&str>, limit: usize) -> Result<Vec<String>, ExperimentError> {
        let (pattern, from) = crate::experiments::key_pattern(prefix, tenant);
        let keys = self.store.experiment_keys(&pattern, &from, limit)?;
        Ok(keys.into_iter().map(|key| crate::experiments::id_of(&key, tenant).to_owned()).collect())
    }
}
