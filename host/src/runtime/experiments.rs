//! The experiment service: admission of a validated call against its
//! experiment's budgets, and the call's line when it is recorded.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::digest::Digest;
use crate::experiments::{Admission, ExperimentBudgets, InvocationRecord, Reservation, Spent, StopReason, judge};
use crate::store::{DbError, ExperimentStore};

/// A failure of the experiment store.
#[derive(Debug, thiserror::Error)]
#[error("experiment store: {0}")]
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

    /// Every invocation of an experiment, in order (empty when it has none).
    pub fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, ExperimentError> {
        Ok(self.store.invocations(experiment)?)
    }
}
