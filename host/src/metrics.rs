//! Process-local counters in the Prometheus text exposition format.
//!
//! **Invariant:** labels are drawn from closed sets (routes, methods, status
//! codes, stop reasons, verdicts) or from installed capability ids; no
//! request content, request id, experiment or workspace id, or configuration
//! value is ever a label or a value here.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::contract::VerificationStatus;
use crate::experiments::StopReason;

/// The counters.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, &'static str, u16), u64>>,
    invocations: Mutex<BTreeMap<(String, StopReason), u64>>,
    verdicts: Mutex<BTreeMap<VerificationStatus, u64>>,
    quota_refusals: Mutex<BTreeMap<String, u64>>,
    fuel: AtomicU64,
    component_calls: AtomicU64,
}

impl Metrics {
    /// Count one HTTP request by method, route template and status.
    pub fn request(&self, method: &str, route: &'static str, status: u16) {
        let method = match method {
            "GET" | "POST" | "DELETE" | "PUT" | "HEAD" | "OPTIONS" | "PATCH" => method,
            _ => "OTHER",
        };
        *self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((method.to_owned(), route, status))
            .or_default() += 1;
    }

    /// Count one invocation (`capability` must be an installed id or `unknown`).
    pub fn invocation(&self, capability: &str, stop: StopReason, fuel: u64, verdict: Option<VerificationStatus>) {
        *self
            .invocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((capability.to_owned(), stop))
            .or_default() += 1;
        self.fuel.fetch_add(fuel, Ordering::Relaxed);
        if let Some(verdict) = verdict {
            *self.verdicts.lock().unwrap_or_else(|e| e.into_inner()).entry(verdict).or_default() += 1;
        }
    }

    /// Count one component called for a request (a producer, a checker, a
    /// quorum's member): the place every such call passes, after admission.
    pub fn component_call(&self) {
        self.component_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// Components called for requests so far.
    pub fn component_calls(&self) -> u64 {
        self.component_calls.load(Ordering::Relaxed)
    }

    /// Count one call refused by a tenant's quota, by quota.
    pub fn quota_refusal(&self, quota: crate::quotas::Limit) {
        *self.quota_refusals.lock().unwrap_or_else(|e| e.into_inner()).entry(quota.to_string()).or_default() += 1;
    }

    /// The exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# HELP jacobian_process_up Whether this process is serving.");
        let _ = writeln!(out, "# TYPE jacobian_process_up gauge\njacobian_process_up 1");
        let _ = writeln!(out, "# HELP jacobian_http_requests_total HTTP requests by method, route and status.");
        let _ = writeln!(out, "# TYPE jacobian_http_requests_total counter");
        for ((method, route, status), n) in self.requests.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(
                out,
                "jacobian_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        let _ =
            writeln!(out, "# HELP jacobian_invocations_total Capability invocations by capability and stop reason.");
        let _ = writeln!(out, "# TYPE jacobian_invocations_total counter");
        for ((capability, stop), n) in self.invocations.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ =
                writeln!(out, "jacobian_invocations_total{{capability=\"{capability}\",stop_reason=\"{stop}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP jacobian_fuel_consumed_total Fuel consumed by all invocations.");
        let _ = writeln!(out, "# TYPE jacobian_fuel_consumed_total counter");
        let _ = writeln!(out, "jacobian_fuel_consumed_total {}", self.fuel.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP jacobian_component_calls_total Components called for requests.");
        let _ = writeln!(out, "# TYPE jacobian_component_calls_total counter");
        let _ = writeln!(out, "jacobian_component_calls_total {}", self.component_calls());
        let _ = writeln!(out, "# HELP jacobian_checker_verdicts_total Verification outcomes.");
        let _ = writeln!(out, "# TYPE jacobian_checker_verdicts_total counter");
        for (verdict, n) in self.verdicts.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let name = crate::json::name(verdict);
            let _ = writeln!(out, "jacobian_checker_verdicts_total{{status=\"{name}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP jacobian_quota_refusals_total Calls refused by a tenant's quota, by quota.");
        let _ = writeln!(out, "# TYPE jacobian_quota_refusals_total counter");
        for (quota, n) in self.quota_refusals.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "jacobian_quota_refusals_total{{quota=\"{quota}\"}} {n}");
        }
        out
    }
}
