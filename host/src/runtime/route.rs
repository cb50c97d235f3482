//! `certificate.verify`, resolved by rewriting: the request becomes a
//! `VERIFY` call of a checker the operator authorized for the role the
//! certificate needs — the role the host recorded when its producer made it
//! (see [`Runtime::checker_for`]) — with the checker's input fields filled
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
use crate::store::CertificateRecord;

use super::Runtime;
use super::diagnostics::error_path;
use super::diagnostics::storage_failed;
use super::resolve::hidden;
use super::stages::{Call, Certificate, Refusal, Target, Unrouted};

impl Runtime {
    /// Resolve `certificate.verify` (`router`) to the checker call it stands for.
    pub(super) fn route_certificate<'a>(
        &'a self,
        request: &'a InvokeRequest,
        router: &'a CatalogEntry,
        policy: &Policy,
    ) -> Result<Target<'a>, Refusal> {
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
        let bytes = self.read_artifact_as(request.tenant.as_deref(), &digest).map_err(|e| {
            let code = if e.is_unavailable() { Code::StorageFailed } else { Code::ArtifactNotFound };
            unreadable(code, crate::errors::render(&e))
        })?;
        let envelope: Value =
            serde_json::from_slice(&bytes).map_err(|e| unreadable(Code::ArtifactNotFound, e.to_string()))?;
        let schema_uri = envelope["schema_uri"].as_str().unwrap_or_default().to_owned();
        // The role and format were fixed when the certificate was made, by its
        // producer's declared route; the certificate's own content decides nothing.
        let record = self.episodes.certificate(&digest).map_err(|e| Refusal::new(mode, storage_failed(e)))?;
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
        let installed = self.installed(checker).map_err(|d| Refusal::new(mode, d))?;
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
    fn checker_for<'a>(
        &'a self,
        policy: &Policy,
        record: &CertificateRecord,
        schema_uri: &str,
    ) -> Option<&'a CatalogEntry> {
        let role = record.checker_role.as_str();
        let mut candidates: Vec<&CatalogEntry> = self
            .catalog
            .entries()
            .filter(|e| {
                e.kind == EntryKind::Verifier
                    && !policy.allowed_modes(&e.id, &e.tags, &e.modes).is_empty()
                    && self.checker_authorized_for(policy, e, role)
                    && e.artifact_types.iter().any(|t| t == schema_uri)
                    && e.certificate_formats.contains(&record.certificate_format)
            })
            .collect();
        candidates.sort_by_key(|e| (e.id != record.verify_capability_id, e.component, e.id.clone()));
        candidates.first().copied()
    }
}
