//! Stage 3, `admit`: a validated request takes its place under its tenant's
//! quota and joins its experiment, within the experiment's budgets. The first stage that may write (a reservation in a
//! shared store), and it runs only for requests that passed validation.

use crate::contract::{Code, Diagnostic, Stage};
use crate::experiments::{Admission, ExperimentBudgets};
use crate::quotas::{Exceeded, Quota, Reserve};

use super::diagnostics::storage_failed;
use super::experiments::ExperimentError;
use super::result::ResultParts;
use super::stages::{Admitted, Concluded, Refusal, Validated, Work};
use super::{QuotaHold, Runtime};

/// What `admit` reads and writes: the server's state, the experiments'
/// budgets and the tenants' quotas.
pub(super) trait Ledger: Sync {
    /// Whether the server is shutting down.
    fn draining(&self) -> bool;
    /// The call joins its experiment, or is refused by a spent budget.
    fn admit(
        &self,
        experiment: &str,
        capability_id: &str,
        budgets: &ExperimentBudgets,
    ) -> Result<Admission, ExperimentError>;
    /// A place under a tenant's quota, or the quota it would exceed.
    fn hold(
        &self,
        tenant: &str,
        quota: &Quota,
        reserve: Reserve,
    ) -> Result<Result<QuotaHold, Exceeded>, ExperimentError>;
    /// A place released with what was spent (`refund`: the call never ran).
    fn release(&self, hold: QuotaHold, fuel: u64, stored_bytes: u64, refund: bool);
    /// An admitted call that did not run after all leaves its experiment.
    fn withdraw(&self, experiment: &str, capability_id: &str);
}

impl Ledger for Runtime {
    fn draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn admit(
        &self,
        experiment: &str,
        capability_id: &str,
        budgets: &ExperimentBudgets,
    ) -> Result<Admission, ExperimentError> {
        self.experiments.admit(experiment, capability_id, budgets)
    }

    fn hold(
        &self,
        tenant: &str,
        quota: &Quota,
        reserve: Reserve,
    ) -> Result<Result<QuotaHold, Exceeded>, ExperimentError> {
        let judged = self.experiments.admit_quota(tenant, quota, reserve)?;
        if let Err(exceeded) = &judged {
            self.metrics.quota_refusal(exceeded.limit);
        }
        Ok(judged)
    }

    fn release(&self, hold: QuotaHold, fuel: u64, stored_bytes: u64, refund: bool) {
        self.release_quota(hold, fuel, stored_bytes, refund);
    }

    fn withdraw(&self, experiment: &str, capability_id: &str) {
        self.experiments.withdraw(experiment, capability_id);
    }
}

/// Stage 3, as a value holding exactly what it reads and writes.
pub(super) struct Admit<'r> {
    pub ledger: &'r dyn Ledger,
}

impl Admit<'_> {
    pub fn admit(&self, validated: &Validated<'_>) -> Result<Admitted, Refusal> {
        let request = validated.request;
        if self.ledger.draining() {
            let d = Diagnostic::new(
                Code::ComponentUnavailable,
                Stage::Request,
                "the server is shutting down and accepts no new invocations",
                "retry against another instance or after the restart",
            );
            return Err(Refusal::new(request.mode, d));
        }
        let hold = self.hold_quota(validated)?;
        let admission =
            match self.ledger.admit(&validated.experiment, &request.capability_id, &validated.policy.experiments) {
                Ok(admission) => admission,
                Err(e) => {
                    if let Some(hold) = hold {
                        self.ledger.release(hold, 0, 0, true);
                    }
                    return Err(Refusal::new(request.mode, storage_failed(e)));
                }
            };
        Ok(match admission {
            Admission::Admitted { reservation } => Admitted::Run { reservation, hold },
            Admission::Refused { stop, message } => {
                // It does not run: its place in flight is free again (its token stays spent).
                if let Some(hold) = hold {
                    self.ledger.release(hold, 0, 0, false);
                }
                let d = Diagnostic::new(
                    Code::ExperimentBudgetSpent,
                    Stage::Policy,
                    message,
                    "start a new experiment, or ask the operator to raise the experiment budgets",
                )
                .with("stop_reason", stop);
                Admitted::Stopped(Box::new(Concluded {
                    parts: ResultParts::failed(&request.capability_id, request.mode, d),
                    stop,
                }))
            }
        })
    }

    /// An admitted call abandoned before it ran (a quick attempt beyond its
    /// bounds): it leaves its experiment and its place is refunded.
    pub fn withdraw(&self, validated: &Validated<'_>, hold: Option<QuotaHold>) {
        self.ledger.withdraw(&validated.experiment, &validated.request.capability_id);
        if let Some(hold) = hold {
            self.ledger.release(hold, 0, 0, true);
        }
    }

    /// A tenant's call's place under its quota (`None`: the operator's, or no quotas).
    pub fn hold_quota(&self, validated: &Validated<'_>) -> Result<Option<QuotaHold>, Refusal> {
        let request = validated.request;
        let Some(tenant) = request.tenant.as_deref().filter(|_| !validated.policy.quotas.is_unlimited()) else {
            return Ok(None);
        };
        let quota = validated.policy.quotas.of(tenant);
        // The call's fuel budget, its input and its output budget are
        // reserved until it is released with what it spent.
        let reserve = match &validated.work {
            Work::Run(prepared) => Reserve {
                fuel: prepared.budgets.fuel,
                bytes: prepared.input_bytes.saturating_add(prepared.budgets.output_bytes),
            },
            Work::Unrouted(_) => Reserve::default(),
        };
        let judged =
            self.ledger.hold(tenant, quota, reserve).map_err(|e| Refusal::new(request.mode, storage_failed(e)))?;
        judged.map(Some).map_err(|exceeded| Refusal::new(request.mode, quota_exceeded(&exceeded)))
    }
}

/// `QUOTA_EXCEEDED`: which quota, its limit, and when to retry.
pub(super) fn quota_exceeded(exceeded: &Exceeded) -> Diagnostic {
    let suggestion = match exceeded.retry_after {
        Some(seconds) => format!("retry after {seconds} s"),
        None => "ask the operator to raise the tenant's quota".to_owned(),
    };
    let d = Diagnostic::new(Code::QuotaExceeded, Stage::Policy, exceeded.message(), suggestion)
        .with("quota", exceeded.limit.to_string())
        .with("limit", exceeded.value);
    match exceeded.retry_after {
        Some(seconds) => d.with("retry_after", seconds),
        None => d,
    }
}

impl Runtime {
    /// Release a hold under its tenant's quota with what was spent; a store
    /// that cannot be written is logged (the call's answer stands).
    pub(super) fn release_quota(&self, hold: QuotaHold, fuel: u64, stored_bytes: u64, refund: bool) {
        if let Err(e) = self.experiments.release(hold, fuel, stored_bytes, refund) {
            tracing::warn!(error = %crate::errors::render(&e), "quota usage not recorded");
        }
    }
}

#[cfg(test)]
mod tests {
    //! `admit` on a fake ledger that records what it was asked: no runtime,
    //! no store.

    use super::super::tests::Asked;
    use super::*;
    use crate::contract::InvokeRequest;
    use crate::experiments::StopReason;
    use crate::policy::Policy;

    /// What the fake ledger answers, and what it was asked.
    #[derive(Default)]
    struct Fake {
        draining: bool,
        /// The experiment's answer: `None` is a store that fails.
        admission: Option<fn() -> Admission>,
        exceeded: Option<Exceeded>,
        asked: Asked,
    }

    impl Ledger for Fake {
        fn draining(&self) -> bool {
            self.draining
        }

        fn admit(&self, experiment: &str, _: &str, _: &ExperimentBudgets) -> Result<Admission, ExperimentError> {
            self.asked.push(format!("admit {experiment}"));
            let failed = || ExperimentError::from(crate::store::DbError::Corrupt("row".into()));
            self.admission.map(|admission| admission()).ok_or_else(failed)
        }

        fn hold(
            &self,
            tenant: &str,
            _: &Quota,
            reserve: Reserve,
        ) -> Result<Result<QuotaHold, Exceeded>, ExperimentError> {
            self.asked.push(format!("hold {tenant}"));
            Ok(self.exceeded.clone().map_or_else(|| Ok(QuotaHold::fake(tenant, reserve)), Err))
        }

        fn release(&self, _: QuotaHold, fuel: u64, stored: u64, refund: bool) {
            let charged = if fuel > 0 || stored > 0 { format!(" fuel={fuel} stored={stored}") } else { String::new() };
            self.asked.push(format!("release refund={refund}{charged}"));
        }

        fn withdraw(&self, experiment: &str, _: &str) {
            self.asked.push(format!("withdraw {experiment}"));
        }
    }

    fn admitted() -> Admission {
        Admission::Admitted { reservation: None }
    }

    fn spent() -> Admission {
        Admission::Refused { stop: StopReason::ExperimentFuelSpent, message: "the experiment's fuel is spent".into() }
    }

    /// A validated request (nothing to run: an unrouted certificate) under
    /// a policy with or without quotas.
    fn validated(request: &InvokeRequest, quotas: bool) -> Validated<'_> {
        let mut policy = Policy::default();
        if quotas {
            policy.quotas.default.fuel_per_day = Some(1_000);
        }
        super::super::tests::unrouted(request, policy)
    }

    /// `admit` of a validated request of `tenant` (nothing to run: an
    /// unrouted certificate) under a policy with or without quotas, and
    /// what the ledger was asked.
    fn admit(fake: &Fake, tenant: Option<&str>, quotas: bool) -> (Result<Admitted, Refusal>, Vec<String>) {
        let request = InvokeRequest { tenant: tenant.map(str::to_owned), ..InvokeRequest::default() };
        let validated = validated(&request, quotas);
        let answer = Admit { ledger: fake }.admit(&validated);
        (answer, fake.asked.all())
    }

    fn code(answer: &Result<Admitted, Refusal>) -> Option<Code> {
        match answer {
            Err(refusal) => Some(refusal.diagnostic.code),
            Ok(Admitted::Stopped(concluded)) => match &concluded.parts.body {
                super::super::result::Body::Failed(d) => Some(d.code),
                _ => None,
            },
            Ok(Admitted::Run { .. }) => None,
        }
    }

    #[test]
    fn a_draining_server_admits_nothing_and_asks_nothing() {
        let fake = Fake { draining: true, admission: Some(admitted), ..Fake::default() };
        let (answer, asked) = admit(&fake, Some("alice"), true);
        assert_eq!((code(&answer), asked), (Some(Code::ComponentUnavailable), Vec::<String>::new()));
    }

    #[test]
    fn a_tenant_under_quotas_holds_a_place_first_and_the_operator_none() {
        let fake = Fake { admission: Some(admitted), ..Fake::default() };
        let (answer, asked) = admit(&fake, Some("alice"), true);
        assert!(matches!(answer, Ok(Admitted::Run { hold: Some(_), .. })));
        assert_eq!(asked, ["hold alice", "admit e"]);
        let fake = Fake { admission: Some(admitted), ..Fake::default() };
        let (answer, asked) = admit(&fake, None, true);
        assert!(matches!(answer, Ok(Admitted::Run { hold: None, .. })));
        assert_eq!(asked, ["admit e"]);
        let fake = Fake { admission: Some(admitted), ..Fake::default() };
        assert_eq!(admit(&fake, Some("alice"), false).1, ["admit e"], "no quotas: no place to hold");
    }

    #[test]
    fn a_spent_quota_refuses_before_the_experiment_is_asked() {
        let exceeded = Exceeded { limit: crate::quotas::Limit::FuelPerDay, value: 1_000, retry_after: Some(60) };
        let fake = Fake { admission: Some(admitted), exceeded: Some(exceeded), ..Fake::default() };
        let (answer, asked) = admit(&fake, Some("alice"), true);
        assert_eq!(code(&answer), Some(Code::QuotaExceeded));
        let Err(refusal) = answer else { unreachable!() };
        assert_eq!(refusal.diagnostic.details["retry_after"], 60);
        assert_eq!(asked, ["hold alice"]);
    }

    #[test]
    fn a_spent_experiment_stops_the_call_and_frees_its_place_and_a_failing_store_refunds_it() {
        let fake = Fake { admission: Some(spent), ..Fake::default() };
        let (answer, asked) = admit(&fake, Some("alice"), true);
        assert_eq!(code(&answer), Some(Code::ExperimentBudgetSpent), "recorded, not run");
        assert_eq!(asked, ["hold alice", "admit e", "release refund=false"], "its token stays spent");
        let fake = Fake::default();
        let (answer, asked) = admit(&fake, Some("alice"), true);
        assert_eq!(code(&answer), Some(Code::StorageFailed));
        assert_eq!(asked, ["hold alice", "admit e", "release refund=true"]);
    }

    #[test]
    fn a_call_abandoned_after_admission_leaves_its_experiment_and_is_refunded() {
        let fake = Fake::default();
        let request = InvokeRequest { tenant: Some("alice".into()), ..InvokeRequest::default() };
        let hold = QuotaHold::fake("alice", Reserve::default());
        Admit { ledger: &fake }.withdraw(&validated(&request, true), Some(hold));
        assert_eq!(fake.asked.all(), ["withdraw e", "release refund=true"]);
    }
}
