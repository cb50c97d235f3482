//! The epistemic workspace: `workspace.open`, `workspace.write`,
//! `workspace.query`.
//!
//! **Invariant:** the workspace is append-only. A write becomes the next
//! revision only when its idempotency key is unused and its base is still the
//! head, in one transaction; otherwise nothing is written. Every recorded item
//! is AGENT_RECORDED and UNVERIFIED: nothing here can set verification,
//! assertion or staleness, and no attempt outcome closes or verifies anything.

pub mod cache;
pub mod graph;
pub mod model;
pub mod query;
pub mod wire;

use std::sync::Arc;

use jacobian_guest::protocol::ARTIFACT_VERSION;
use serde_json::{Value, json};

use crate::contract::{Code, Diagnostic, Stage};
use crate::digest::{Digest, canonical_json};
use crate::store::{Appended, DataDir, Remembered, RevisionRow, StoreFailure, WorkspaceStore};
use crate::tenants::tenant_tag;
use model::{State, WriteError, card_id, parse_numbered, revision_id};
use query::{Queried, Selection};
use wire::{Assigned, OpenRequest, Opened, QueryRequest, QueryView, Recorded, StaleWarnings, WriteRequest, Written};

/// Schema of revision artifacts.
pub const REVISION_SCHEMA: &str = "jacobian:workspace/revision@1";
/// The only branch.
pub const BRANCH: &str = "main";

/// The workspace service over a store.
pub struct Workspaces {
    store: Box<dyn WorkspaceStore>,
    /// Head states of recently used workspaces, and snapshots of earlier revisions.
    cache: cache::StateCache,
}

fn diagnostic(code: Code, stage: Stage, path: &str, message: impl Into<String>, suggestion: &str) -> Diagnostic {
    Diagnostic::new(code, stage, message, suggestion).with("path", path)
}

fn from_write(error: WriteError) -> Diagnostic {
    diagnostic(error.code, Stage::Validation, &error.path, error.message, "fix the named field; nothing was written")
}

fn storage(error: StoreFailure) -> Diagnostic {
    Diagnostic::new(Code::StorageFailed, Stage::Storage, crate::errors::render(&error), "retry; nothing was written")
}

fn check_key(key: &str) -> Result<(), Diagnostic> {
    if key.is_empty() || key.len() > 128 || key.chars().any(char::is_control) {
        return Err(diagnostic(
            Code::InvalidRequest,
            Stage::Request,
            "idempotency_key",
            "must be 1..=128 printable characters",
            "use one fresh key per intended mutation",
        ));
    }
    Ok(())
}

/// SHA-256 (hex) of a request without its idempotency key.
fn payload_digest(request: &impl serde::Serialize) -> String {
    let mut value = crate::json::value(&request);
    if let Some(map) = value.as_object_mut() {
        map.remove("idempotency_key");
    }
    Digest::of_json(&value).to_hex()
}

/// Canonical JSON of a typed answer (strings, lists and numbers: it always serializes).
fn canonical(answer: &impl serde::Serialize) -> Vec<u8> {
    canonical_json(&crate::json::value(&answer))
}

/// The answer remembered for an idempotency key, if the retry asks for the same thing.
fn replay<T: serde::de::DeserializeOwned>(remembered: Remembered, payload: &str, scope: &str) -> Result<T, Diagnostic> {
    if remembered.payload_digest != payload {
        return Err(diagnostic(
            Code::IdempotencyConflict,
            Stage::Commit,
            "idempotency_key",
            format!("this key was already used in {scope} with a different payload"),
            "use a fresh key for a different mutation",
        ));
    }
    serde_json::from_slice(&remembered.response).map_err(|e| {
        Diagnostic::new(
            Code::StorageFailed,
            Stage::Storage,
            format!("the answer remembered for this idempotency key in {scope} does not read back: {e}"),
            "retry; nothing was written",
        )
    })
}

fn envelope(action: &str, payload: &str, content: Value) -> Value {
    json!({
        "artifact_version": ARTIFACT_VERSION,
        "schema_uri": REVISION_SCHEMA,
        "role": "revision",
        "lineage": {"capability_id": action, "input_digest": payload, "provider_digest": ""},
        "content": content,
    })
}

impl Workspaces {
    /// The service over `store`.
    pub fn new(store: Box<dyn WorkspaceStore>) -> Self {
        Workspaces { store, cache: cache::StateCache::new() }
    }

    /// `workspace.open`, by the deployment's operator (stdio, the CLI, HTTP
    /// without authentication).
    pub fn open(&self, data: &DataDir, request: &OpenRequest) -> Result<Opened, Diagnostic> {
        self.open_as(data, None, request)
    }

    /// `workspace.write` by the operator.
    pub fn write(&self, data: &DataDir, request: &WriteRequest) -> Result<Written, Diagnostic> {
        self.write_as(data, None, request)
    }

    /// `workspace.query` by the operator.
    pub fn query(&self, data: &DataDir, request: &QueryRequest) -> Result<Queried, Diagnostic> {
        self.query_as(data, None, request)
    }

    /// `workspace.open` for `tenant` (an authenticated caller), or the operator.
    pub fn open_as(&self, data: &DataDir, tenant: Option<&str>, request: &OpenRequest) -> Result<Opened, Diagnostic> {
        check_key(&request.idempotency_key)?;
        let state = State::open(&request.title, &request.statement).map_err(from_write)?;
        let payload = payload_digest(request);
        // A tenant's keys and workspaces are its own: the same key opens
        // another workspace for another tenant (see `crate::tenants::tenant_tag`).
        let (key, workspace_id) = match tenant.map(tenant_tag) {
            None => (
                request.idempotency_key.clone(),
                format!("ws-{}", &Digest::of(request.idempotency_key.as_bytes()).to_hex()[..16]),
            ),
            Some(tag) => {
                let key = format!("{tag}/{}", request.idempotency_key);
                (key.clone(), format!("ws-{}-{tag}", &Digest::of(key.as_bytes()).to_hex()[..16]))
            }
        };
        if let Some(earlier) = self.store.remembered("open", &key).map_err(storage)? {
            return replay(earlier, &payload, "workspace.open");
        }
        let content = json!({
            "workspace_id": workspace_id, "branch": BRANCH, "revision": revision_id(0), "base_revision": null,
            "entries": [{"type": "finding", "id": card_id(1), "kind": "GOAL", "title": request.title, "body": request.statement}],
        });
        let artifact = envelope("workspace.open", &payload, content);
        let artifact_bytes = canonical_json(&artifact);
        let response = Opened {
            workspace_id: workspace_id.clone(),
            problem_card_id: card_id(1),
            branch: BRANCH.into(),
            revision_id: revision_id(0),
            revision_artifact_uri: Digest::of(&artifact_bytes).artifact_uri(),
            provenance: Recorded::default(),
        };
        let row = RevisionRow {
            number: 0,
            request: canonical_json(&json!({"title": request.title, "statement": request.statement})),
            artifact: artifact_bytes.clone(),
        };
        let remember = Remembered { payload_digest: payload.clone(), response: canonical(&response) };
        // The artifact first: once the revision commits, any host may hand out its URI.
        data.put_canonical(&artifact_bytes)
            .map_err(|e| Diagnostic::new(Code::StorageFailed, Stage::Storage, crate::errors::render(&e), "retry"))?;
        if let Some(earlier) = self.store.create(&workspace_id, &row, &key, &remember).map_err(storage)? {
            return replay(earlier, &payload, "workspace.open");
        }
        self.cache_put(&workspace_id, Arc::new(state));
        Ok(response)
    }

    /// `workspace.write` for `tenant`, or the operator.
    pub fn write_as(
        &self,
        data: &DataDir,
        tenant: Option<&str>,
        request: &WriteRequest,
    ) -> Result<Written, Diagnostic> {
        check_key(&request.idempotency_key)?;
        if !reaches(tenant, &request.workspace_id) {
            return Err(not_found(&request.workspace_id));
        }
        let base = parse_numbered(&request.base_revision, "rev").ok_or_else(|| {
            diagnostic(
                Code::InvalidRequest,
                Stage::Request,
                "base_revision",
                "is not a revision id (rev-<n>)",
                "pass the revision_id of the head you read",
            )
        })?;
        let payload = payload_digest(request);
        let ws = request.workspace_id.as_str();
        if ws.len() > crate::limits::MAX_ID_BYTES {
            return Err(not_found(ws));
        }
        if let Some(earlier) = self.store.remembered(ws, &request.idempotency_key).map_err(storage)? {
            return replay(earlier, &payload, ws);
        }
        let state = self.state(data, ws, None)?;
        if base != state.revision {
            return Err(conflict(state.revision));
        }
        let model::Applied { state: next, assigned, entries: resolved } =
            state.apply(&request.entries).map_err(from_write)?;
        next.within_limits().map_err(from_write)?;
        let content = json!({
            "workspace_id": ws, "branch": BRANCH, "revision": revision_id(next.revision),
            "base_revision": revision_id(base), "entries": resolved,
        });
        let artifact = envelope("workspace.write", &payload, content);
        let artifact_bytes = canonical_json(&artifact);
        let stale = next.stale();
        let new_stale: Vec<String> =
            stale.keys().filter(|n| !state.stale().contains_key(n)).map(|n| card_id(*n)).collect();
        let response = Written {
            workspace_id: ws.to_owned(),
            branch: BRANCH.into(),
            revision_id: revision_id(next.revision),
            base_revision: revision_id(base),
            revision_artifact_uri: Digest::of(&artifact_bytes).artifact_uri(),
            assigned: assigned.into_iter().map(|(client_ref, id)| Assigned { client_ref, id }).collect(),
            stale_warnings: StaleWarnings { newly_stale: new_stale, stale_total: stale.len() },
            provenance: Recorded::default(),
        };
        let row = RevisionRow {
            number: next.revision,
            request: canonical_json(&crate::json::value(&request.entries)),
            artifact: artifact_bytes.clone(),
        };
        let remember = Remembered { payload_digest: payload.clone(), response: canonical(&response) };
        // The artifact first (content-addressed, so a write that then loses the
        // race leaves only an unreferenced copy): a committed revision's URI
        // always resolves, on every host, even if this process dies next.
        data.put_canonical(&artifact_bytes)
            .map_err(|e| Diagnostic::new(Code::StorageFailed, Stage::Storage, crate::errors::render(&e), "retry"))?;
        match self.store.append(ws, base, &row, &request.idempotency_key, &remember).map_err(storage)? {
            Appended::Done => {
                self.cache_put(ws, Arc::new(next));
                Ok(response)
            }
            Appended::Conflict { head } => Err(conflict(head)),
            Appended::Remembered(earlier) => replay(earlier, &payload, ws),
            Appended::NotFound => Err(not_found(ws)),
        }
    }

    /// `workspace.query` for `tenant`, or the operator.
    pub fn query_as(
        &self,
        data: &DataDir,
        tenant: Option<&str>,
        request: &QueryRequest,
    ) -> Result<Queried, Diagnostic> {
        if !reaches(tenant, &request.workspace_id) {
            return Err(not_found(&request.workspace_id));
        }
        let limit = request.limit.unwrap_or(query::DEFAULT_LIMIT as u32) as usize;
        if !(1..=query::MAX_LIMIT).contains(&limit) {
            return Err(diagnostic(
                Code::InvalidRequest,
                Stage::Request,
                "limit",
                format!("must be 1..={}", query::MAX_LIMIT),
                "",
            ));
        }
        let revision = match &request.revision_id {
            Some(text) => Some(parse_numbered(text, "rev").ok_or_else(|| {
                diagnostic(Code::InvalidRequest, Stage::Request, "revision_id", "is not a revision id (rev-<n>)", "")
            })?),
            None => None,
        };
        let head = self.head(&request.workspace_id)?;
        let state = self.state(data, &request.workspace_id, revision)?;
        let target = match &request.target_card_id {
            Some(text) => Some(parse_numbered(text, "card").and_then(|n| state.card(n)).ok_or_else(|| {
                diagnostic(
                    Code::UnknownReference,
                    Stage::Validation,
                    "target_card_id",
                    format!("{text:?} is not a card of this workspace at {}", revision_id(state.revision)),
                    "use a card id from RESUME or FRONTIER",
                )
            })?),
            None => None,
        };
        let selection = match (request.view, target) {
            (QueryView::Resume, _) => Selection::Resume,
            (QueryView::Frontier, _) => Selection::Frontier,
            (QueryView::Attempts, target) => Selection::Attempts(target.map(|card| card.number)),
            (QueryView::Context, Some(card)) => Selection::Context(card),
            (QueryView::Context, None) => {
                return Err(diagnostic(
                    Code::InvalidRequest,
                    Stage::Request,
                    "target_card_id",
                    "CONTEXT requires target_card_id",
                    "",
                ));
            }
            (QueryView::Stale, _) => Selection::Stale,
        };
        Ok(Queried {
            workspace_id: request.workspace_id.clone(),
            branch: BRANCH.into(),
            view: request.view,
            revision_id: revision_id(state.revision),
            head_revision_id: revision_id(head),
            at_head: state.revision == head,
            result: query::view(&state, selection, limit),
            provenance: Recorded::default(),
        })
    }

    fn head(&self, workspace_id: &str) -> Result<u64, Diagnostic> {
        // Longer than any workspace id: nothing to look up.
        if workspace_id.len() > crate::limits::MAX_ID_BYTES {
            return Err(not_found(workspace_id));
        }
        self.store.head(workspace_id).map_err(storage)?.ok_or_else(|| not_found(workspace_id))
    }

    /// The workspace at `revision` (default: the head), folded from storage.
    /// Folding also restores any revision artifact file a crash left
    /// missing between a commit and its file write.
    pub fn state(&self, data: &DataDir, workspace_id: &str, revision: Option<u64>) -> Result<Arc<State>, Diagnostic> {
        let head = self.head(workspace_id)?;
        let target = revision.unwrap_or(head);
        if target > head {
            return Err(diagnostic(
                Code::RevisionNotFound,
                Stage::Request,
                "revision_id",
                format!("{} does not exist; the head is {}", revision_id(target), revision_id(head)),
                "",
            ));
        }
        // The nearest known state at or before the target: the cached head, or a snapshot.
        let cached = self.cache.head(workspace_id).filter(|state| state.revision <= target);
        let snapshot = self.cache.snapshot_before(workspace_id, target);
        let start = match (cached, snapshot) {
            (Some(cached), Some(snapshot)) => Some(if snapshot.revision > cached.revision { snapshot } else { cached }),
            (cached, snapshot) => cached.or(snapshot),
        };
        if let Some(state) = start.as_ref().filter(|s| s.revision == target) {
            return Ok(state.clone());
        }
        let from = start.as_ref().map_or(0, |s| s.revision + 1);
        let rows = self.store.revisions(workspace_id, from, target).map_err(storage)?;
        let mut state = start.map(|s| (*s).clone());
        for row in rows {
            data.put_canonical(&row.artifact)
                .map_err(|e| Diagnostic::new(Code::StorageFailed, Stage::Storage, crate::errors::render(&e), ""))?;
            let folded = fold(state, &row).map_err(|message| {
                Diagnostic::new(
                    Code::StorageFailed,
                    Stage::Storage,
                    format!("{workspace_id} {}: {message}", revision_id(row.number)),
                    "",
                )
            })?;
            if folded.revision.is_multiple_of(cache::SNAPSHOT_EVERY) {
                self.cache.maybe_snapshot(workspace_id, &Arc::new(folded.clone()));
            }
            state = Some(folded);
        }
        let state = Arc::new(state.ok_or_else(|| not_found(workspace_id))?);
        if target == head {
            self.cache_put(workspace_id, state.clone());
        }
        Ok(state)
    }

    fn cache_put(&self, workspace_id: &str, state: Arc<State>) {
        self.cache.maybe_snapshot(workspace_id, &state);
        self.cache.put_head(workspace_id, state);
    }
}

fn fold(state: Option<State>, row: &RevisionRow) -> Result<State, String> {
    match state {
        None if row.number == 0 => {
            let opened: Value = serde_json::from_slice(&row.request).map_err(|e| e.to_string())?;
            State::open(opened["title"].as_str().unwrap_or_default(), opened["statement"].as_str().unwrap_or_default())
                .map_err(|e| e.message)
        }
        Some(state) if row.number == state.revision + 1 => {
            let entries: Vec<wire::Entry> = serde_json::from_slice(&row.request).map_err(|e| e.to_string())?;
            state.apply(&entries).map(|applied| applied.state).map_err(|e| format!("{}: {}", e.path, e.message))
        }
        _ => Err(format!("revision {} is out of sequence", row.number)),
    }
}

fn conflict(head: u64) -> Diagnostic {
    diagnostic(
        Code::RevisionConflict,
        Stage::Commit,
        "base_revision",
        format!("the branch head is {}; nothing was written", revision_id(head)),
        "query the workspace at the head, then write again against it",
    )
    .with("current_head", revision_id(head))
}

/// Whether `tenant` (`None`: the operator) may read or write `workspace_id`.
fn reaches(tenant: Option<&str>, workspace_id: &str) -> bool {
    tenant.is_none_or(|tenant| {
        workspace_id
            .strip_prefix("ws-")
            .and_then(|rest| rest.split_once('-'))
            .is_some_and(|(_, tag)| tag == tenant_tag(tenant))
    })
}

fn not_found(workspace_id: &str) -> Diagnostic {
    diagnostic(
        Code::WorkspaceNotFound,
        Stage::Request,
        "workspace_id",
        format!("no workspace {:?}", workspace_id.chars().take(80).collect::<String>()),
        "use the workspace_id returned by workspace.open",
    )
}
