//! Stage 1, `resolve`: the request's own fields (experiment id, size), the
//! capability in the catalog, the policy's visibility and modes, and the
//! installed component that will run. `certificate.verify` is resolved here
//! by rewriting the request to the checker it routes to (see `route.rs`).

use std::borrow::Cow;
use std::sync::Arc;

use crate::catalog::{CatalogEntry, EntryKind};
use crate::contract::{Code, Diagnostic, InvokeRequest, Stage};
use crate::limits::{MAX_ID_BYTES, MAX_INPUT_BYTES, MAX_JSON_DEPTH, clip, json_depth, json_size};
use crate::policy::Policy;
use crate::registry::Installed;

use super::Runtime;
use super::stages::{Call, Refusal, Resolved, Target};

/// What `resolve` reads: the catalog and the loaded components.
pub(super) trait Components: Sync {
    /// The catalog entry of a capability id.
    fn entry(&self, id: &str) -> Option<&CatalogEntry>;
    /// The loaded component behind an entry.
    fn loaded(&self, entry: &CatalogEntry) -> Option<Arc<Installed>>;
}

/// `certificate.verify`'s rewriting (`route.rs`), as `resolve` sees it.
pub(super) trait Router: Sync {
    fn route<'a>(
        &'a self,
        request: &'a InvokeRequest,
        router: &'a CatalogEntry,
        policy: &Policy,
    ) -> Result<Target<'a>, Refusal>;
}

/// Stage 1, as a value holding exactly what it reads.
pub(super) struct Resolve<'r> {
    pub components: &'r dyn Components,
    pub router: &'r dyn Router,
    /// The experiment of a request that names none.
    pub default_experiment: &'r str,
}

impl<'r> Resolve<'r> {
    /// The experiment a request names, as its caller named it (the default
    /// when it names none).
    pub fn experiment_named<'a>(&self, request: &'a InvokeRequest) -> &'a str
    where
        'r: 'a,
    {
        request.experiment.as_deref().unwrap_or(self.default_experiment)
    }

    pub fn resolve<'a>(&self, request: &'a InvokeRequest, policy: Arc<Policy>) -> Result<Resolved<'a>, Refusal>
    where
        'r: 'a,
    {
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
        let entry = self.components.entry(id).ok_or_else(|| {
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
            let target = self.router.route(request, entry, &policy)?;
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
        let installed = installed(self.components, entry).map_err(|d| Refusal::new(Some(mode), d))?;
        let call = Call { entry, installed, mode, input: Cow::Borrowed(&request.input), routed: None };
        Ok(Resolved { request, experiment, policy, target: Target::Call(call) })
    }
}

/// The loaded component behind a catalog entry, or the diagnostic saying it is not loaded.
pub(super) fn installed(components: &dyn Components, entry: &CatalogEntry) -> Result<Arc<Installed>, Diagnostic> {
    components.loaded(entry).ok_or_else(|| {
        Diagnostic::new(Code::ComponentUnavailable, Stage::Instantiation, "component is not loaded", "")
            .with("component", entry.component)
    })
}

impl Components for Runtime {
    fn entry(&self, id: &str) -> Option<&CatalogEntry> {
        self.catalog.get(id)
    }

    fn loaded(&self, entry: &CatalogEntry) -> Option<Arc<Installed>> {
        self.components.get(&entry.component).cloned()
    }
}

impl Runtime {
    /// The loaded component behind a catalog entry.
    pub(super) fn installed(&self, entry: &CatalogEntry) -> Result<Arc<Installed>, Diagnostic> {
        installed(self, entry)
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

#[cfg(test)]
mod tests {
    //! `resolve` on fakes: a catalog of two entries, no component loaded, a
    //! router that answers with a marker. No runtime is opened.

    use std::collections::BTreeMap;

    use jacobian_guest::protocol::Mode;
    use serde_json::json;

    use super::super::tests::catalog_entry as entry;
    use super::*;

    /// A catalog without loaded components.
    struct Catalog(BTreeMap<String, CatalogEntry>);

    impl Components for Catalog {
        fn entry(&self, id: &str) -> Option<&CatalogEntry> {
            self.0.get(id)
        }
        fn loaded(&self, _: &CatalogEntry) -> Option<Arc<Installed>> {
            None
        }
    }

    /// A router that refuses every certificate with a marker.
    struct Marker;

    impl Router for Marker {
        fn route<'a>(
            &'a self,
            request: &'a InvokeRequest,
            _: &'a CatalogEntry,
            _: &Policy,
        ) -> Result<Target<'a>, Refusal> {
            Err(Refusal::new(request.mode, Diagnostic::new(Code::InvalidInput, Stage::Validation, "routed", "")))
        }
    }

    fn catalog() -> Catalog {
        Catalog(BTreeMap::from([
            ("algebra.search".to_owned(), entry("algebra.search", EntryKind::Producer, &[Mode::Explore, Mode::Verify])),
            ("algebra.explore".to_owned(), entry("algebra.explore", EntryKind::Producer, &[Mode::Explore])),
            ("certificate.verify".to_owned(), entry("certificate.verify", EntryKind::Router, &[Mode::Verify])),
        ]))
    }

    /// What `resolve` answers `request` under `policy`: the refusal's code, path and mode.
    fn refused(request: InvokeRequest, policy: Policy) -> (Code, Option<String>, Option<Mode>) {
        let catalog = catalog();
        let stage = Resolve { components: &catalog, router: &Marker, default_experiment: "default" };
        let refusal = match stage.resolve(&request, Arc::new(policy)) {
            Ok(_) => panic!("resolved without a loaded component"),
            Err(refusal) => refusal,
        };
        let path = refusal.diagnostic.details.get("path").and_then(|p| p.as_str()).map(str::to_owned);
        (refusal.diagnostic.code, path, refusal.mode)
    }

    fn request(id: &str, input: serde_json::Value) -> InvokeRequest {
        InvokeRequest { capability_id: id.into(), input, ..InvokeRequest::default() }
    }

    #[test]
    fn the_requests_own_fields_are_checked_first() {
        let mut bad = request("algebra.search", json!({}));
        bad.experiment = Some("not an id!".into());
        assert_eq!(refused(bad, Policy::default()), (Code::InvalidRequest, Some("experiment".into()), None));
        let deep = (0..=MAX_JSON_DEPTH).fold(json!(1), |inner, _| json!([inner]));
        assert_eq!(refused(request("algebra.search", deep), Policy::default()).1.as_deref(), Some("input"));
        let long = "x".repeat(MAX_ID_BYTES + 1);
        assert_eq!(refused(request(&long, json!({})), Policy::default()).0, Code::InvalidRequest);
        assert_eq!(refused(request("graph.nothing", json!({})), Policy::default()).0, Code::CapabilityNotFound);
    }

    #[test]
    fn the_policy_hides_capabilities_and_withdraws_modes() {
        let mut hiding = Policy::default();
        hiding.capabilities.deny_tags.insert("algebra".into());
        assert_eq!(refused(request("algebra.search", json!({})), hiding).0, Code::CapabilityPolicyDenied);
        let mut no_verify = Policy::default();
        no_verify.capabilities.deny_modes.insert(Mode::Verify);
        let mut verifying = request("algebra.search", json!({}));
        verifying.mode = Some(Mode::Verify);
        let withdrawn = (Code::CapabilityPolicyDenied, Some("mode".into()), Some(Mode::Verify));
        assert_eq!(refused(verifying.clone(), no_verify), withdrawn);
        verifying.capability_id = "algebra.explore".into();
        let unsupported = (Code::ModeNotSupported, Some("mode".into()), Some(Mode::Verify));
        assert_eq!(refused(verifying, Policy::default()), unsupported);
    }

    #[test]
    fn a_capability_without_its_component_is_unavailable_in_its_first_allowed_mode() {
        let (code, _, mode) = refused(request("algebra.search", json!({})), Policy::default());
        assert_eq!((code, mode), (Code::ComponentUnavailable, Some(Mode::Explore)));
        let mut no_explore = Policy::default();
        no_explore.capabilities.deny_modes.insert(Mode::Explore);
        assert_eq!(refused(request("algebra.search", json!({})), no_explore).2, Some(Mode::Verify));
    }

    #[test]
    fn the_router_entry_goes_to_the_router_and_its_answer_is_passed_on() {
        let (code, _, _) = refused(request("certificate.verify", json!({})), Policy::default());
        assert_eq!(code, Code::InvalidInput, "the marker router's refusal");
    }
}
