//! `certificate.verify`, resolved by rewriting: the request becomes a
//! `VERIFY` call of a checker the operator authorized for the role the
//! certificate needs — the role the host recorded when its producer made it
//! (see `Route::checker_for`) — with the checker's input fields filled
//! from the same-named artifact references inside the certificate (a
//! required one it names none for: the certificate itself). From here on it is an
//! ordinary checker call: `validate` checks the rewritten input once, and no
//! stage runs twice. An artifact no producer made as a certificate is
//! refused; a certificate whose role no visible authorized checker fills is
//! answered without running anything, its obligation named.

use std::borrow::Cow;

use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::catalog::{CatalogEntry, EntryKind};
use crate::contract::{Code, Diagnostic, InvokeRequest, Stage};
use crate::digest::Digest;
use crate::limits::bounded_text;
use crate::policy::Policy;
use crate::store::{CertificateRecord, DbError, StoreError};

use super::Runtime;
use super::diagnostics::error_path;
use super::diagnostics::storage_failed;
use super::resolve::{Components, Router, hidden, installed};
use super::stages::{Call, Certificate, Refusal, Target, Unrouted};

/// What routing reads besides the loaded components: the certificate's
/// bytes as its caller may read them, what the host recorded when it was
/// made, the catalog's checkers and the operator's authorization.
pub(super) trait Certificates: Sync {
    /// An artifact's bytes, if `tenant` may read it (`None`: the operator).
    fn artifact(&self, tenant: Option<&str>, digest: &Digest) -> Result<Vec<u8>, StoreError>;
    /// What the host recorded when a producer's declared route made the certificate.
    fn record(&self, certificate: &Digest) -> Result<Option<CertificateRecord>, DbError>;
    /// The catalog's checkers.
    fn checkers(&self) -> Vec<&CatalogEntry>;
    /// Whether the operator authorizes this checker for exactly `role`.
    fn authorized(&self, policy: &Policy, entry: &CatalogEntry, role: &str) -> bool;
}

/// `certificate.verify`'s routing, as a value holding what it reads.
pub(super) struct Route<'r> {
    pub certificates: &'r dyn Certificates,
    pub components: &'r dyn Components,
}

impl<'r> Route<'r> {
    /// Resolve `certificate.verify` (`router`) to the checker call it stands for.
    pub fn route<'a>(
        &self,
        request: &'a InvokeRequest,
        router: &'a CatalogEntry,
        policy: &Policy,
    ) -> Result<Target<'a>, Refusal>
    where
        'r: 'a,
    {
        let id = router.id.as_str();
        if policy.allowed_modes(id, &router.tags, &router.modes).is_empty() {
            return Err(Refusal::new(request.mode, hidden(id, policy)));
        }
        if request.mode.is_some_and(|m| m != Mode::Verify) {
            let d =
                Diagnostic::new(Code::ModeNotSupported, Stage::Request, format!("{id} runs in VERIFY mode only"), "")
                    .with("path", "mode");
            return Err(Refusal::new(request.mode, d));
        }
        let mode = Some(Mode::Verify);
        if let Some(error) = router.input_validator.iter_errors(&request.input).next() {
            let d = Diagnostic::new(
                Code::InvalidInput,
                Stage::Validation,
                bounded_text(&error),
                "pass {\"certificate\": \"artifact://sha256/...\"}",
            )
            .with("path", error_path(&error));
            return Err(Refusal::new(mode, d));
        }
        let uri = request.input["certificate"].as_str().unwrap_or_default().to_owned();
        let unreadable = |code, message: String| {
            let d = Diagnostic::new(code, Stage::Validation, message, "pass a certificate URI from a result")
                .with("path", "input.certificate");
            Refusal::new(mode, d)
        };
        let digest = Digest::from_artifact_uri(&uri).map_err(|e| unreadable(Code::ArtifactNotFound, e.to_string()))?;
        let bytes = self.certificates.artifact(request.tenant.as_deref(), &digest).map_err(|e| {
            let code = if e.is_unavailable() { Code::StorageFailed } else { Code::ArtifactNotFound };
            unreadable(code, crate::errors::render(&e))
        })?;
        let envelope: Value =
            serde_json::from_slice(&bytes).map_err(|e| unreadable(Code::ArtifactNotFound, e.to_string()))?;
        let schema_uri = envelope["schema_uri"].as_str().unwrap_or_default().to_owned();
        // The role and format were fixed when the certificate was made, by its
        // producer's declared route; the certificate's own content decides nothing.
        let record = self.certificates.record(&digest).map_err(|e| Refusal::new(mode, storage_failed(e)))?;
        let Some(record) = record else {
            let d = Diagnostic::new(
                Code::InvalidInput,
                Stage::Validation,
                format!(
                    "the artifact ({schema_uri}) was not made as a certificate by a producer's declared route, so no \
                     checker role is recorded for it"
                ),
                "pass a certificate artifact, e.g. the certificate_artifact of a result's check_with",
            )
            .with("path", "input.certificate");
            return Err(Refusal::new(mode, d));
        };
        let Some(checker) = self.checker_for(policy, &record, &schema_uri) else {
            return Ok(Target::Unrouted(Unrouted { certificate: uri, schema_uri, record }));
        };
        // Each input field the certificate names an artifact for (a CNF, an
        // uploaded proof file) gets it; a required one it names none for
        // gets the certificate itself.
        let mut input = serde_json::Map::new();
        let required: Vec<&str> =
            checker.input_schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let fields = checker.input_schema["properties"].as_object().into_iter().flat_map(|p| p.keys());
        for field in fields.map(String::as_str).chain(required.iter().copied()) {
            let inside = envelope["content"][field].as_str().filter(|v| v.starts_with("artifact://"));
            match inside {
                Some(named) => input.insert(field.to_owned(), json!(named)),
                None if required.contains(&field) => input.insert(field.to_owned(), json!(uri)),
                None => None,
            };
        }
        let installed = installed(self.components, checker).map_err(|d| Refusal::new(mode, d))?;
        Ok(Target::Call(Call {
            entry: checker,
            installed,
            mode: Mode::Verify,
            input: Cow::Owned(Value::Object(input)),
            routed: Some(Certificate { uri, record }),
        }))
    }

    /// The checker a certificate goes to: a visible checker that fills the
    /// certificate's role, is authorized by the operator for exactly that
    /// role, reads its schema and declares its format. The checker its
    /// producer named comes first; among others, the lowest component digest,
    /// then id (every candidate is one the operator authorized for the role,
    /// so none is chosen by catalog order over an authorized one).
    fn checker_for(&self, policy: &Policy, record: &CertificateRecord, schema_uri: &str) -> Option<&'r CatalogEntry> {
        let role = record.checker_role.as_str();
        let mut candidates: Vec<&CatalogEntry> = self
            .certificates
            .checkers()
            .into_iter()
            .filter(|e| {
                e.kind == EntryKind::Verifier
                    && !policy.allowed_modes(&e.id, &e.tags, &e.modes).is_empty()
                    && self.certificates.authorized(policy, e, role)
                    && e.artifact_types.iter().any(|t| t == schema_uri)
                    && e.certificate_formats.contains(&record.certificate_format)
            })
            .collect();
        candidates.sort_by_key(|e| (e.id != record.verify_capability_id, e.component, e.id.clone()));
        candidates.first().copied()
    }
}

impl Certificates for Runtime {
    fn artifact(&self, tenant: Option<&str>, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.read_artifact_as(tenant, digest)
    }

    fn record(&self, certificate: &Digest) -> Result<Option<CertificateRecord>, DbError> {
        self.episodes.certificate(certificate)
    }

    fn checkers(&self) -> Vec<&CatalogEntry> {
        self.catalog.entries().filter(|e| e.kind == EntryKind::Verifier).collect()
    }

    fn authorized(&self, policy: &Policy, entry: &CatalogEntry, role: &str) -> bool {
        self.checker_authorized_for(policy, entry, role)
    }
}

impl Router for Runtime {
    fn route<'a>(
        &'a self,
        request: &'a InvokeRequest,
        router: &'a CatalogEntry,
        policy: &Policy,
    ) -> Result<Target<'a>, Refusal> {
        Route { certificates: self, components: self }.route(request, router, policy)
    }
}

#[cfg(test)]
mod tests {
    //! Routing on fakes: a catalog of checkers, the operator's authorizations
    //! and one certificate, no component loaded (so a chosen checker is
    //! refused as not loaded, naming it). No runtime is opened.

    use std::sync::Arc;

    use super::super::tests::catalog_entry;
    use super::*;
    use crate::registry::Installed;

    const URI: &str = "artifact://sha256/0000000000000000000000000000000000000000000000000000000000000002";

    struct Fake {
        checkers: Vec<CatalogEntry>,
        /// `(checker id, role)` pairs the operator authorizes.
        authorized: Vec<(&'static str, &'static str)>,
        record: Option<CertificateRecord>,
        artifact: fn() -> Result<Vec<u8>, StoreError>,
    }

    impl Certificates for Fake {
        fn artifact(&self, _: Option<&str>, _: &Digest) -> Result<Vec<u8>, StoreError> {
            (self.artifact)()
        }

        fn record(&self, _: &Digest) -> Result<Option<CertificateRecord>, DbError> {
            Ok(self.record.clone())
        }

        fn checkers(&self) -> Vec<&CatalogEntry> {
            self.checkers.iter().collect()
        }

        fn authorized(&self, _: &Policy, entry: &CatalogEntry, role: &str) -> bool {
            self.authorized.contains(&(entry.id.as_str(), role))
        }
    }

    impl Components for Fake {
        fn entry(&self, id: &str) -> Option<&CatalogEntry> {
            self.checkers.iter().find(|e| e.id == id)
        }

        fn loaded(&self, _: &CatalogEntry) -> Option<Arc<Installed>> {
            None
        }
    }

    fn checker(id: &str, format: &str) -> CatalogEntry {
        let mut entry = catalog_entry(id, EntryKind::Verifier, &[Mode::Verify]);
        entry.checker_roles = vec!["sat".into()];
        entry.artifact_types = vec!["cert/1".into()];
        entry.certificate_formats = vec![format.into()];
        entry
    }

    fn record(named: &str) -> Option<CertificateRecord> {
        Some(CertificateRecord {
            checker_role: "sat".into(),
            certificate_format: "lrat".into(),
            verify_capability_id: named.into(),
            capability_id: "sat.solve".into(),
            producer: Digest::of(b"producer"),
        })
    }

    fn certificate() -> Result<Vec<u8>, StoreError> {
        Ok(crate::json::bytes(&json!({"schema_uri": "cert/1", "content": {"format": "lrat"}})))
    }

    fn fake(checkers: Vec<CatalogEntry>, authorized: Vec<(&'static str, &'static str)>, named: &str) -> Fake {
        Fake { checkers, authorized, record: record(named), artifact: certificate }
    }

    /// Where `certificate.verify` in `mode` goes: `Ok(Some(id))` the checker
    /// chosen, `Ok(None)` no checker (nothing runs), `Err(code)` refused.
    fn route(fake: &Fake, mode: Option<Mode>) -> Result<Option<String>, Code> {
        let router = catalog_entry("certificate.verify", EntryKind::Router, &[Mode::Verify]);
        let request = InvokeRequest {
            capability_id: router.id.clone(),
            mode,
            input: json!({"certificate": URI}),
            ..InvokeRequest::default()
        };
        match (Route { certificates: fake, components: fake }).route(&request, &router, &Policy::default()) {
            Ok(Target::Unrouted(unrouted)) => {
                assert_eq!((unrouted.certificate.as_str(), unrouted.schema_uri.as_str()), (URI, "cert/1"));
                Ok(None)
            }
            Ok(Target::Call(call)) => panic!("{} routed without being loaded", call.entry.id),
            // A chosen checker is refused only because the fake loads none.
            Err(refusal) if refusal.diagnostic.code == Code::ComponentUnavailable => {
                let digest = refusal.diagnostic.details["component"].as_str().unwrap().to_owned();
                Ok(fake.checkers.iter().find(|c| c.component.to_string() == digest).map(|c| c.id.clone()))
            }
            Err(refusal) => Err(refusal.diagnostic.code),
        }
    }

    #[test]
    fn a_certificate_goes_to_the_authorized_checker_its_producer_named_first() {
        let both = vec![("a.verify", "sat"), ("b.verify", "sat")];
        let checkers = || vec![checker("a.verify", "lrat"), checker("b.verify", "lrat")];
        assert_eq!(route(&fake(checkers(), both.clone(), "b.verify"), None), Ok(Some("b.verify".into())));
        assert_eq!(route(&fake(checkers(), both.clone(), "a.verify"), Some(Mode::Verify)), Ok(Some("a.verify".into())));
        // The one it named is not authorized: another authorized one, never it.
        let only_a = vec![("a.verify", "sat")];
        assert_eq!(route(&fake(checkers(), only_a, "b.verify"), None), Ok(Some("a.verify".into())));
        // Named none that fits: the lowest component digest among the authorized.
        let lowest = checkers().into_iter().min_by_key(|c| c.component).unwrap().id;
        assert_eq!(route(&fake(checkers(), both, "z.verify"), None), Ok(Some(lowest)));
    }

    #[test]
    fn without_an_authorized_checker_that_reads_its_format_nothing_runs() {
        let unauthorized = fake(vec![checker("a.verify", "lrat")], vec![("a.verify", "smt")], "a.verify");
        assert_eq!(route(&unauthorized, None), Ok(None));
        let other_format = fake(vec![checker("a.verify", "drat")], vec![("a.verify", "sat")], "a.verify");
        assert_eq!(route(&other_format, None), Ok(None));
        let none = fake(Vec::new(), Vec::new(), "a.verify");
        assert_eq!(route(&none, None), Ok(None));
    }

    #[test]
    fn what_is_not_a_readable_recorded_certificate_or_not_verify_is_refused() {
        let mut unrecorded = fake(vec![checker("a.verify", "lrat")], vec![("a.verify", "sat")], "a.verify");
        unrecorded.record = None;
        assert_eq!(route(&unrecorded, None), Err(Code::InvalidInput), "no role recorded: its content decides nothing");
        let mut missing = fake(vec![checker("a.verify", "lrat")], vec![("a.verify", "sat")], "a.verify");
        missing.artifact = || Err(StoreError::NotFound { what: "artifact", digest: Digest::of(b"x") });
        assert_eq!(route(&missing, None), Err(Code::ArtifactNotFound));
        missing.artifact = || Err(StoreError::Io { what: "reading".into(), source: std::io::Error::other("disk") });
        assert_eq!(route(&missing, None), Err(Code::StorageFailed));
        let explore = fake(vec![checker("a.verify", "lrat")], vec![("a.verify", "sat")], "a.verify");
        assert_eq!(route(&explore, Some(Mode::Explore)), Err(Code::ModeNotSupported));
    }
}
