//! Stage 2, `validate`: budgets against the policy (lower only), the input
//! against the capability's JSON Schema, and every `artifact://` reference
//! in it (each must exist and re-hash). What passes is everything a call
//! needs; nothing has been written.

use std::sync::Arc;

use serde_json::Value;

use crate::contract::{BudgetRequest, CallBudgets, Code, Diagnostic, Stage};
use crate::digest::Digest;
use crate::engine::ArtifactAccess;
use crate::limits::{MAX_ARTIFACT_BYTES, MAX_ARTIFACT_REFERENCES};
use crate::policy::Policy;

use crate::store::{StoreError, StoredFile};

use super::Runtime;
use super::diagnostics::{
    artifact_references, count_artifact_references, schema_violations, storage_failed, violation,
};
use super::stages::{Prepared, Refusal, Resolved, Target, Validated, Work};

/// What `validate` reads: the artifacts a request names, as its tenant may read them.
pub(super) trait Artifacts: Sync {
    /// An artifact's stored size; not found (as one never stored) when `tenant` may not read it.
    fn size_as(&self, tenant: Option<&str>, digest: &Digest) -> Result<u64, StoreError>;
    /// An artifact's bytes, re-hashed.
    fn read(&self, digest: &Digest) -> Result<Vec<u8>, StoreError>;
    /// An uploaded file, readable by offset.
    fn open_file(&self, file: &Digest) -> Result<Box<dyn StoredFile>, StoreError>;
}

impl Artifacts for Runtime {
    fn size_as(&self, tenant: Option<&str>, digest: &Digest) -> Result<u64, StoreError> {
        self.artifact_size_as(tenant, digest)
    }

    fn read(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.data.read_artifact(digest)
    }

    fn open_file(&self, file: &Digest) -> Result<Box<dyn StoredFile>, StoreError> {
        self.data.open_file(file)
    }
}

/// Stage 2, as a value holding exactly what it reads.
pub(super) struct Validate<'r> {
    pub artifacts: &'r dyn Artifacts,
}

impl Validate<'_> {
    pub fn validate<'a>(&self, resolved: Resolved<'a>) -> Result<Validated<'a>, Refusal> {
        let Resolved { request, experiment, policy, target } = resolved;
        let work = match target {
            Target::Unrouted(unrouted) => Work::Unrouted(unrouted),
            Target::Call(call) => {
                let mode = Some(call.mode);
                let refuse = |d| Refusal::new(mode, d);
                let budgets = resolve_budgets(&policy, request.budget).map_err(refuse)?;
                // Bounded before anything else looks at them (sizes only: nothing is read yet).
                let named = self.bound_references(&call.input, request.tenant.as_deref()).map_err(refuse)?;
                let errors: Vec<Value> =
                    call.entry.input_validator.iter_errors(&call.input).take(20).map(|e| violation(&e)).collect();
                if !errors.is_empty() {
                    return Err(refuse(schema_violations(&call.entry.id, errors)));
                }
                let (access, references) = self.read_references(named).map_err(refuse)?;
                let canonical = crate::digest::canonical_json(&call.input);
                let (input_digest, input_bytes) = (Digest::of(&canonical), canonical.len() as u64);
                let wall = std::time::Duration::from_millis(policy.budgets.wall_ms);
                Work::Run(Prepared {
                    call,
                    budgets,
                    wall,
                    access,
                    references,
                    input_digest,
                    input_bytes,
                    tenant: request.tenant.as_deref(),
                })
            }
        };
        Ok(Validated { request, experiment, policy, work })
    }

    /// The distinct artifacts the input names (path, URI, digest), in input
    /// order, after bounding the number of references and the total size of
    /// what they name from the store's sizes: nothing is read. An artifact
    /// not granted to `tenant` is not found, as one never stored.
    fn bound_references(
        &self,
        input: &Value,
        tenant: Option<&str>,
    ) -> Result<Vec<(String, String, Digest)>, Diagnostic> {
        let count = count_artifact_references(input);
        if count > MAX_ARTIFACT_REFERENCES {
            return Err(Diagnostic::new(
                Code::Oversized,
                Stage::Validation,
                format!("input names {count} artifact references, above the limit of {MAX_ARTIFACT_REFERENCES}"),
                "name each artifact once, or split the problem",
            )
            .with("path", "input")
            .with("limit", MAX_ARTIFACT_REFERENCES));
        }
        let mut distinct: Vec<(String, String, Digest)> = Vec::new();
        let mut total = 0u64;
        for (path, uri) in artifact_references(input, "input") {
            let not_found = |message: String| {
                Diagnostic::new(
                    Code::ArtifactNotFound,
                    Stage::Validation,
                    message,
                    "pass an artifact URI returned by an earlier result",
                )
                .with("path", &path)
            };
            let digest = Digest::from_artifact_uri(&uri).map_err(|e| not_found(e.to_string()))?;
            if distinct.iter().any(|(_, _, d)| *d == digest) {
                continue;
            }
            let size = self.artifacts.size_as(tenant, &digest).map_err(|e| {
                if e.is_unavailable() {
                    storage_failed(e).with("path", &path)
                } else {
                    not_found(crate::errors::render(&e))
                }
            })?;
            total = total.saturating_add(size);
            if total > MAX_ARTIFACT_BYTES {
                return Err(Diagnostic::new(
                    Code::Oversized,
                    Stage::Validation,
                    format!(
                        "the artifacts named up to here total {total} bytes, above the limit of {MAX_ARTIFACT_BYTES}"
                    ),
                    "split the problem so that one call reads less",
                )
                .with("path", &path)
                .with("limit", MAX_ARTIFACT_BYTES));
            }
            distinct.push((path, uri, digest));
        }
        Ok(distinct)
    }

    /// Read the named artifacts, each once: what the call may read, and their URIs.
    fn read_references(
        &self,
        distinct: Vec<(String, String, Digest)>,
    ) -> Result<(ArtifactAccess, Vec<String>), Diagnostic> {
        let mut access = ArtifactAccess::default();
        let mut references = Vec::with_capacity(distinct.len());
        for (path, uri, digest) in distinct {
            // Missing or corrupt is the caller's to fix; a store that fails is STORAGE_FAILED.
            let refused = |e: crate::store::StoreError, context: &str, suggestion: &str| {
                let d = if e.is_unavailable() {
                    storage_failed(e)
                } else {
                    Diagnostic::new(
                        Code::ArtifactNotFound,
                        Stage::Validation,
                        format!("{context}{}", crate::errors::render(&e)),
                        suggestion,
                    )
                };
                d.with("path", &path)
            };
            let bytes = self
                .artifacts
                .read(&digest)
                .map_err(|e| refused(e, "", "pass an artifact URI returned by an earlier result"))?;
            // An upload: the file it names becomes readable in ranges (re-hashed at the first read).
            if let Some((file, size)) = super::uploads::carried_file(&bytes) {
                let again = "upload the file again (jacobian artifact put, or PUT /artifacts/sha256/<hex>)";
                let opened =
                    self.artifacts.open_file(&file).map_err(|e| refused(e, "the file of an upload: ", again))?;
                if opened.len() != size {
                    let message = format!("file {file} is corrupt: {} bytes stored, {size} recorded", opened.len());
                    return Err(
                        Diagnostic::new(Code::ArtifactNotFound, Stage::Validation, message, again).with("path", &path)
                    );
                }
                access.allow_file(&digest, file, opened);
            }
            access.allow(&digest, Arc::new(bytes));
            references.push(uri);
        }
        Ok((access, references))
    }
}

/// The operator's budgets, lowered where the request asks (never raised).
pub(super) fn resolve_budgets(policy: &Policy, request: Option<BudgetRequest>) -> Result<CallBudgets, Diagnostic> {
    let mut budgets: CallBudgets = policy.budgets.into();
    let Some(request) = request else { return Ok(budgets) };
    if let Some(preset) = request.preset {
        budgets.fuel = preset.fuel(policy.budgets.fuel);
    }
    for (field, asked, limit, slot) in [
        ("fuel", request.fuel, policy.budgets.fuel, &mut budgets.fuel),
        ("memory_bytes", request.memory_bytes, policy.budgets.memory_bytes, &mut budgets.memory_bytes),
        ("output_bytes", request.output_bytes, policy.budgets.output_bytes, &mut budgets.output_bytes),
    ] {
        if let Some(asked) = asked {
            if asked == 0 || asked > limit {
                return Err(Diagnostic::new(
                    Code::BudgetExceedsPolicy,
                    Stage::Policy,
                    format!("budget.{field} must be between 1 and the operator's {limit}, got {asked}"),
                    "a request may lower the operator's budgets but never raise them",
                )
                .with("path", format!("budget.{field}"))
                .with("limit", limit));
            }
            *slot = asked;
        }
    }
    Ok(budgets)
}

#[cfg(test)]
mod tests {
    //! `validate`'s reference bounds and reads on a fake store of artifacts:
    //! no runtime is opened (the budgets: `runtime/tests.rs`).

    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    /// Artifacts by digest with their sizes; `bob` may read none of them; a
    /// failing store fails every read.
    #[derive(Default)]
    struct Fake {
        sizes: BTreeMap<Digest, u64>,
        corrupt: Option<Digest>,
        failing: bool,
    }

    impl Fake {
        fn with(sizes: &[(&str, u64)]) -> (Fake, Vec<String>) {
            let mut fake = Fake::default();
            let uris = sizes
                .iter()
                .map(|(name, size)| {
                    let digest = Digest::of(name.as_bytes());
                    fake.sizes.insert(digest, *size);
                    digest.artifact_uri()
                })
                .collect();
            (fake, uris)
        }

        fn fail(&self) -> Result<(), StoreError> {
            match self.failing {
                true => Err(StoreError::Io { what: "objects".into(), source: std::io::Error::other("disk") }),
                false => Ok(()),
            }
        }
    }

    impl Artifacts for Fake {
        fn size_as(&self, tenant: Option<&str>, digest: &Digest) -> Result<u64, StoreError> {
            self.fail()?;
            let not_found = StoreError::NotFound { what: "artifact", digest: *digest };
            if tenant == Some("bob") {
                return Err(not_found);
            }
            self.sizes.get(digest).copied().ok_or(not_found)
        }

        fn read(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
            self.fail()?;
            if self.corrupt == Some(*digest) {
                return Err(StoreError::DigestMismatch {
                    what: "artifact",
                    expected: *digest,
                    actual: Digest::of(b""),
                });
            }
            Ok(format!("{{\"content\":{}}}", self.sizes[digest]).into_bytes())
        }

        fn open_file(&self, file: &Digest) -> Result<Box<dyn StoredFile>, StoreError> {
            Err(StoreError::NotFound { what: "file", digest: *file })
        }
    }

    fn path(d: &Diagnostic) -> Option<&str> {
        d.details.get("path").and_then(|p| p.as_str())
    }

    #[test]
    fn references_are_named_once_in_input_order_and_read_as_named() {
        let (fake, uris) = Fake::with(&[("a", 10), ("b", 20)]);
        let stage = Validate { artifacts: &fake };
        let input = json!({"x": uris[1], "y": [uris[0], uris[1]]});
        let named = stage.bound_references(&input, Some("alice")).unwrap();
        let paths: Vec<&str> = named.iter().map(|(path, _, _)| path.as_str()).collect();
        assert_eq!(paths, ["input.x", "input.y.0"], "each artifact once, where it is first named");
        let (_, references) = stage.read_references(named).unwrap();
        assert_eq!(references, [uris[1].clone(), uris[0].clone()]);
    }

    #[test]
    fn an_artifact_the_tenant_may_not_read_is_not_found_and_a_failing_store_is_storage_failed() {
        let (fake, uris) = Fake::with(&[("a", 10)]);
        let stage = Validate { artifacts: &fake };
        let input = json!({"cnf": uris[0]});
        let refused = stage.bound_references(&input, Some("bob")).unwrap_err();
        assert_eq!((refused.code, path(&refused)), (Code::ArtifactNotFound, Some("input.cnf")));
        let refused = stage.bound_references(&json!({"cnf": "artifact://sha256/zz"}), None).unwrap_err();
        assert_eq!((refused.code, path(&refused)), (Code::ArtifactNotFound, Some("input.cnf")));
        let failing = Fake { failing: true, ..Fake::with(&[("a", 10)]).0 };
        let refused = Validate { artifacts: &failing }.bound_references(&input, None).unwrap_err();
        assert_eq!((refused.code, path(&refused)), (Code::StorageFailed, Some("input.cnf")));
        assert!(refused.message.ends_with("objects: disk"), "the cause is said: {}", refused.message);
    }

    #[test]
    fn references_are_bounded_by_number_and_by_what_they_name_before_anything_is_read() {
        let (fake, uris) = Fake::with(&[("a", MAX_ARTIFACT_BYTES / 2), ("b", MAX_ARTIFACT_BYTES / 2 + 1)]);
        let stage = Validate { artifacts: &fake };
        let refused = stage.bound_references(&json!({"a": uris[0], "b": uris[1]}), None).unwrap_err();
        assert_eq!((refused.code, path(&refused)), (Code::Oversized, Some("input.b")), "the one that crosses");
        let many = vec![uris[0].clone(); MAX_ARTIFACT_REFERENCES + 1];
        let refused = stage.bound_references(&json!({"list": many}), None).unwrap_err();
        assert_eq!((refused.code, path(&refused)), (Code::Oversized, Some("input")));
    }

    #[test]
    fn a_corrupt_artifact_is_not_found_with_its_path() {
        let (mut fake, uris) = Fake::with(&[("a", 10)]);
        fake.corrupt = Some(Digest::of(b"a"));
        let stage = Validate { artifacts: &fake };
        let named = stage.bound_references(&json!({"proof": uris[0]}), None).unwrap();
        let Err(refused) = stage.read_references(named) else { panic!("a corrupt artifact is refused") };
        assert_eq!((refused.code, path(&refused)), (Code::ArtifactNotFound, Some("input.proof")));
        assert!(refused.message.contains("corrupt"), "{}", refused.message);
    }
}
