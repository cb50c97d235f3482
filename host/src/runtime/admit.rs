//! Stage 3, `admit`: a validated request joins its experiment, within the
//! experiment's budgets. The first stage that may write (a reservation in a
//! shared store), and it runs only for requests that passed validation.

use crate::contract::{Code, Diagnostic, Stage};
use crate::experiments::Admission;

use super::Runtime;
use super::diagnostics::storage_failed;
use super::pipeline::{Admitted, Concluded, Refusal, Validated};
use super::result::ResultParts;

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
        let admission = self
            .experiments
            .admit(&validated.experiment, &request.capability_id, &validated.policy.experiments)
            .map_err(|e| Refusal::new(request.mode, storage_failed(e)))?;
        Ok(match admission {
            Admission::Admitted { reservation } => Admitted::Run { reservation },
            Admission::Refused { stop, message } => {
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
