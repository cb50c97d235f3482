//! Stage 1, `resolve`: the request's own fields (experiment id, size), the
//! capability in the catalog, the policy's visibility and modes, and the
//! installed component that will run. `certificate.verify` is resolved here
//! by rewriting the request to the checker it routes to (see `route.rs`).

use std::borrow::Cow;
use std::sync::Arc;

use crate::catalog::EntryKind;
use crate::contract::{Code, Diagnostic, InvokeRequest, Stage};
use crate::limits::{MAX_ID_BYTES, MAX_INPUT_BYTES, MAX_JSON_DEPTH, clip, json_depth, json_size};
use crate::policy::Policy;

use super::Runtime;
use super::pipeline::{Call, Refusal, Resolved, Target};

impl Runtime {
    /// The experiment a request names, as its caller named it (this
    /// runtime's default when it names none).
    pub(super) fn experiment_named<'r>(&'r self, request: &'r InvokeRequest) -> &'r str {
        request.experiment.as_deref().unwrap_or(&self.default_experiment)
    }

    pub(super) fn resolve<'a>(
        &'a self,
        request: &'a InvokeRequest,
        policy: Arc<Policy>,
    ) -> Result<Resolved<'a>, Refusal> {
        let named = self.experiment_named(request);
        let Some(experiment) = crate::experiments::key_named(named, request.tenant.as_deref()) else {
            let d = Diagnostic::new(
                Code::InvalidRequest,
                Stage::Request,
                "an experiment id is 1-64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit",
                "omit experiment to use this session's experiment",
            )
            .with("path", "experiment");
            return Err(Refusal::new(request.mode, d));
        };
        let input_bytes = json_size(&request.input);
        if input_bytes > MAX_INPUT_BYTES {
            let d = Diagnostic::new(
                Code::Oversized,
                Stage::Request,
                format!("input is {input_bytes} bytes of JSON, above the limit of {MAX_INPUT_BYTES}"),
                "reduce the input: reference artifacts of earlier calls by digest instead of inlining them, or split \
                 the problem",
            )
            .with("path", "input")
            .with("limit", MAX_INPUT_BYTES);
            return Err(Refusal::new(request.mode, d));
        }
        let depth = json_depth(&request.input);
        if depth > MAX_JSON_DEPTH {
            let d = Diagnostic::new(
                Code::Oversized,
                Stage::Request,
                format!("input nests {depth} levels deep, above the limit of {MAX_JSON_DEPTH}"),
                "flatten the input; no capability takes structures that deep",
            )
            .with("path", "input")
            .with("limit", MAX_JSON_DEPTH);
            return Err(Refusal::new(request.mode, d));
        }
        let id = request.capability_id.as_str();
        if id.len() > MAX_ID_BYTES {
            let d = Diagnostic::new(
                Code::InvalidRequest,
                Stage::Request,
                format!("capability_id is {} bytes, above the {MAX_ID_BYTES} of any capability id", id.len()),
                "call capability.describe to find installed capability ids",
            )
            .with("path", "capability_id")
            .with("limit", MAX_ID_BYTES);
            return Err(Refusal::new(request.mode, d));
        }
        let entry = self.catalog.get(id).ok_or_else(|| {
            let d = Diagnostic::new(
                Code::CapabilityNotFound,
                Stage::Request,
                format!("no installed capability {:?}", clip(id, 200)),
                "call capability.describe to find installed capability ids",
            )
            .with("path", "capability_id");
            Refusal::new(request.mode, d)
        })?;
        if entry.kind == EntryKind::Router {
            let target = self.route(request, entry, &policy)?;
            return Ok(Resolved { request, experiment, policy, target });
        }
        let allowed = policy.allowed_modes(&entry.id, &entry.tags, &entry.modes);
        if allowed.is_empty() {
            return Err(Refusal::new(request.mode, hidden(id, &policy).with("policy_digest", policy.digest())));
        }
        let mode = request.mode.unwrap_or(allowed[0]);
        if entry.modes.contains(&mode) && !allowed.contains(&mode) {
            let d = Diagnostic::new(
                Code::CapabilityPolicyDenied,
                Stage::Policy,
                format!("the operator policy withdraws mode {mode:?} from {id}"),
                format!("use one of {allowed:?}"),
            )
            .with("path", "mode")
            .with("policy_digest", policy.digest());
            return Err(Refusal::new(Some(mode), d));
        }
        if !entry.modes.contains(&mode) {
            let d = Diagnostic::new(
                Code::ModeNotSupported,
                Stage::Request,
                format!("{id} does not support mode {mode:?}"),
                format!("use one of {:?}", entry.modes),
            )
            .with("path", "mode");
            return Err(Refusal::new(Some(mode), d));
        }
        let installed = self.installed(entry).map_err(|d| Refusal::new(Some(mode), d))?;
        let call = Call { entry, installed, mode, input: Cow::Borrowed(&request.input), routed: None };
        Ok(Resolved { request, experiment, policy, target: Target::Call(call) })
    }

    /// The loaded component behind a catalog entry.
    pub(super) fn installed(
        &self,
        entry: &crate::catalog::CatalogEntry,
    ) -> Result<Arc<crate::registry::Installed>, Diagnostic> {
        self.components.get(&entry.component).cloned().ok_or_else(|| {
            Diagnostic::new(Code::ComponentUnavailable, Stage::Instantiation, "component is not loaded", "")
                .with("component", entry.component)
        })
    }
}

/// The refusal of a capability the policy hides.
pub(super) fn hidden(id: &str, policy: &Policy) -> Diagnostic {
    Diagnostic::new(
        Code::CapabilityPolicyDenied,
        Stage::Policy,
        format!("the operator policy (profile {}) hides {id}", policy.profile),
        "use capability.describe to find the capabilities this policy makes available",
    )
    .with("path", "capability_id")
}
