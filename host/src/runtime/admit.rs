//! Stage 3, `admit`: a validated request joins its experiment, within the
//! experiment's budgets. The first stage that may write (a reservation in a
//! shared store), and it runs only for requests that passed validation.

use crate::contract::{Code, Diagnostic, Stage};
use crate::experiments::Admission;
use crate::quotas::{Exceeded, Reserve, Storing};

use super::diagnostics::storage_failed;
use super::pipeline::{Admitted, Concluded, Refusal, Validated};
use super::result::ResultParts;
use super::{QuotaHold, Runtime};

impl Runtime {
    pub(super) fn admit(&self, validated: &Validated<'_>) -> Result<Admitted, Refusal> {
        let request = validated.request;
        if self.draining.load(std::sync::atomic::Ordering::SeqCst) {
            let d = Diagnostic::new(
                Code::ComponentUnavailable,
                Stage::Request,
                "the server is shutting down and accepts no new invocations",
                "retry against another instance or after the restart",
            );
            return Err(Refusal::new(request.mode, d));
        }
        let hold = self.hold_quota(validated)?;
        let admission = match self.experiments.admit(
            &validated.experiment,
            &request.capability_id,
            &validated.policy.experiments,
        ) {
            Ok(admission) => admission,
            Err(e) => {
                if let Some(hold) = hold {
                    self.release_quota(hold, 0, 0, true);
                }
                return Err(Refusal::new(request.mode, storage_failed(e)));
            }
        };
        Ok(match admission {
            Admission::Admitted { reservation } => Admitted::Run { reservation, hold },
            Admission::Refused { stop, message } => {
                // It does not run: its place in flight is free again (its token stays spent).
                if let Some(hold) = hold {
                    self.release_quota(hold, 0, 0, false);
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
}

impl Runtime {
    /// A tenant's call's place under its quota (`None`: the operator's, or no quotas).
    pub(super) fn hold_quota(&self, validated: &Validated<'_>) -> Result<Option<QuotaHold>, Refusal> {
        let request = validated.request;
        let Some(tenant) = request.tenant.as_deref().filter(|_| !validated.policy.quotas.is_unlimited()) else {
            return Ok(None);
        };
        let quota = validated.policy.quotas.of(tenant);
        // The call's fuel budget, its input and its output budget are
        // reserved until it is released with what it spent.
        let reserve = match &validated.work {
            super::pipeline::Work::Run(prepared) => Reserve {
                fuel: prepared.budgets.fuel,
                bytes: prepared.input_bytes.saturating_add(prepared.budgets.output_bytes),
            },
            super::pipeline::Work::Unrouted(_) => Reserve::default(),
        };
        let judged = self
            .experiments
            .admit_quota(tenant, quota, reserve)
            .map_err(|e| Refusal::new(request.mode, storage_failed(e)))?;
        judged.map(Some).map_err(|exceeded| {
            self.metrics.quota_refusal(exceeded.limit);
            Refusal::new(request.mode, quota_exceeded(&exceeded))
        })
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
    /// `workspace.open` for `tenant` (`None`: the operator), under the
    /// tenant's stored-bytes quota (see [`Runtime::storing_as`]).
    pub fn open_workspace_as(
        &self,
        tenant: Option<&str>,
        request: &crate::workspace::wire::OpenRequest,
    ) -> Result<crate::workspace::wire::Opened, Diagnostic> {
        let opened =
            self.storing_as(tenant, request, |tenant| self.workspaces().open_as(self.data(), tenant, request))?;
        self.grant_to(tenant, std::slice::from_ref(&opened.revision_artifact_uri)).map_err(storage_failed)?;
        Ok(opened)
    }

    /// `workspace.write` for `tenant` (`None`: the operator), under the
    /// tenant's stored-bytes quota (see [`Runtime::storing_as`]).
    pub fn write_workspace_as(
        &self,
        tenant: Option<&str>,
        request: &crate::workspace::wire::WriteRequest,
    ) -> Result<crate::workspace::wire::Written, Diagnostic> {
        let written =
            self.storing_as(tenant, request, |tenant| self.workspaces().write_as(self.data(), tenant, request))?;
        // The tenant reads its revisions (see `grants.rs`).
        self.grant_to(tenant, std::slice::from_ref(&written.revision_artifact_uri)).map_err(storage_failed)?;
        Ok(written)
    }

    /// A workspace request of `tenant`: its size reserved under the tenant's
    /// stored-bytes quota first (refused with `QUOTA_EXCEEDED` when it has
    /// not that much left), and counted once it is done.
    fn storing_as<T>(
        &self,
        tenant: Option<&str>,
        request: &impl serde::Serialize,
        store: impl FnOnce(Option<&str>) -> Result<T, Diagnostic>,
    ) -> Result<T, Diagnostic> {
        let policy = self.policy();
        let Some(tenant) = tenant.filter(|_| policy.quotas.of_any_storage()) else {
            return store(tenant);
        };
        let bytes = serde_json::to_vec(request).map_or(0, |b| b.len() as u64);
        let hold = self
            .experiments
            .reserve_storage(tenant, policy.quotas.of(tenant), Storing::Exactly(bytes))
            .map_err(storage_failed)?
            .map_err(|e| {
                self.metrics.quota_refusal(e.limit);
                quota_exceeded(&e)
            })?;
        let done = store(Some(tenant));
        self.release_quota(hold, 0, if done.is_ok() { bytes } else { 0 }, false);
        done
    }

    /// Release a hold under its tenant's quota with what was spent; a store
    /// that cannot be written is logged (the call's answer stands).
    pub(super) fn release_quota(&self, hold: QuotaHold, fuel: u64, stored_bytes: u64, refund: bool) {
        if let Err(e) = self.experiments.release(hold, fuel, stored_bytes, refund) {
            tracing::warn!(error = %crate::errors::render(&e), "quota usage not recorded");
        }
    }
}
