//! MCP sessions at the edge: the deployment's shared session store as
//! rmcp's, and who opened each session.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::store::{SessionState, SessionStore, SessionStoreError};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::{AppState, envelope};
use crate::auth::Principal;
use crate::contract::ErrorType;

/// The deployment's shared session store, as rmcp's: a session's state
/// crosses the core as the JSON rmcp serializes.
pub(super) struct SharedSessions(pub(super) Arc<dyn crate::store::SessionStore>);

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let text = self.0.load(session_id).await.map_err(|e| Box::new(e) as SessionStoreError)?;
        Ok(text.map(|text| serde_json::from_str(&text)).transpose()?)
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let text = bounded(state)?;
        self.0.store(session_id, &text).await.map_err(|e| Box::new(e) as SessionStoreError)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.0.delete(session_id).await.map_err(|e| Box::new(e) as SessionStoreError)
    }
}

/// The longest string of a client's description kept with a stored session.
const MAX_STORED_TEXT: usize = 256;
/// The most bytes of client capabilities kept with a stored session.
const MAX_STORED_CAPABILITIES: usize = 4 << 10;

/// A session's state as stored: the client's `initialize` parameters within
/// a few KiB, whatever the client sent (they are kept for 24 hours, and a
/// restore replays them to this server, which reads none of them but the
/// protocol version). Dropped: `_meta`, experimental capabilities (all
/// capabilities past [`MAX_STORED_CAPABILITIES`]), the client's icons and
/// description; its name, title, version and website are clipped to
/// [`MAX_STORED_TEXT`] characters.
fn bounded(state: &SessionState) -> Result<String, serde_json::Error> {
    let mut value = serde_json::to_value(state)?;
    if let Some(params) = value.get_mut("initialize_params").and_then(|p| p.as_object_mut()) {
        params.remove("_meta");
        if let Some(version) = params.get_mut("protocolVersion")
            && let Some(text) = version.as_str()
            && text.chars().count() > MAX_STORED_TEXT
        {
            *version = serde_json::Value::String(text.chars().take(MAX_STORED_TEXT).collect());
        }
        if let Some(capabilities) = params.get_mut("capabilities") {
            if let Some(map) = capabilities.as_object_mut() {
                map.remove("experimental");
            }
            if serde_json::to_vec(capabilities).map_or(true, |b| b.len() > MAX_STORED_CAPABILITIES) {
                *capabilities = serde_json::json!({});
            }
        }
        if let Some(info) = params.get_mut("clientInfo").and_then(|i| i.as_object_mut()) {
            info.remove("icons");
            info.remove("description");
            for text in info.values_mut() {
                if let Some(s) = text.as_str()
                    && s.chars().count() > MAX_STORED_TEXT
                {
                    *text = serde_json::Value::String(s.chars().take(MAX_STORED_TEXT).collect());
                }
            }
        }
    }
    serde_json::to_string(&value)
}

/// Who opened each MCP session, when authentication is on: a session is
/// continued (POST, its event stream, DELETE) only by the principal that
/// opened it — its tenant and subject, so a client whose token is renewed
/// keeps its session and nobody else can use a session id they learned.
/// Kept here, and in the shared store when there is one, so every host
/// knows; a session with no recorded owner is nobody's (404).
pub(super) struct SessionOwners {
    local: std::sync::Mutex<std::collections::HashMap<String, String>>,
    shared: Option<Arc<dyn crate::store::SessionStore>>,
}

impl SessionOwners {
    pub(super) fn new(shared: Option<Arc<dyn crate::store::SessionStore>>) -> Self {
        SessionOwners { local: Default::default(), shared }
    }

    /// The identity a session is bound to.
    pub(super) fn identity(principal: &Principal) -> String {
        format!("{}\n{}", principal.tenant, principal.subject)
    }

    /// Record that `owner` opened `session`; `live` prunes the record of
    /// sessions that ended once there are more than `limit`.
    pub(super) async fn record(&self, session: &str, owner: &str, limit: usize, live: impl Fn(&str) -> bool) {
        {
            let mut local = self.local.lock().unwrap_or_else(|e| e.into_inner());
            if local.len() >= limit {
                local.retain(|id, _| live(id));
            }
            local.insert(session.to_owned(), owner.to_owned());
        }
        if let Some(shared) = &self.shared
            && let Err(error) = shared.set_owner(session, owner).await
        {
            tracing::warn!(%error, "could not record a session's owner in the shared store; other hosts refuse it");
        }
    }

    /// How many of the sessions `live` says are open `tenant` opened on this server.
    pub(super) fn held_by(&self, tenant: &str, live: impl Fn(&str) -> bool) -> usize {
        let prefix = format!("{tenant}\n");
        let local = self.local.lock().unwrap_or_else(|e| e.into_inner());
        local.iter().filter(|(id, owner)| owner.starts_with(&prefix) && live(id)).count()
    }

    /// Whether `owner` opened `session`.
    pub(super) async fn owned_by(&self, session: &str, owner: &str) -> bool {
        let known = self.local.lock().unwrap_or_else(|e| e.into_inner()).get(session).cloned();
        let recorded = match (known, &self.shared) {
            (Some(known), _) => Some(known),
            (None, Some(shared)) => match shared.owner(session).await {
                Ok(found) => {
                    if let Some(found) = &found {
                        let mut local = self.local.lock().unwrap_or_else(|e| e.into_inner());
                        local.insert(session.to_owned(), found.clone());
                    }
                    found
                }
                Err(error) => {
                    tracing::warn!(%error, "could not read a session's owner from the shared store");
                    None
                }
            },
            (None, None) => None,
        };
        recorded.as_deref() == Some(owner)
    }
}

impl AppState {
    /// Refuse a new MCP session beyond the cap, or beyond its tenant's (an
    /// `initialize`: a POST to `/mcp` without a session id). A first check,
    /// before the body is read.
    pub(super) async fn admit(
        &self,
        opens_session: bool,
        tenant: Option<&str>,
        request_id: &str,
    ) -> Result<(), Response> {
        if opens_session {
            self.room_for_session(tenant, request_id).await?;
        }
        Ok(())
    }

    /// The exact check, once the body is here: the guard, held until the
    /// request's session exists, makes the check and the session's creation
    /// one step among all requests that open sessions. Waiting for another
    /// request's handshake is bounded by the client timeout (a stalled
    /// session store then answers 503, not a queue).
    pub(super) async fn open_session(
        &self,
        tenant: Option<&str>,
        request_id: &str,
    ) -> Result<tokio::sync::OwnedMutexGuard<()>, Response> {
        let Ok(opening) = tokio::time::timeout(self.limits.client_timeout, self.opening.clone().lock_owned()).await
        else {
            let message = "another MCP session is still being opened; retry shortly".to_owned();
            return Err(envelope(StatusCode::SERVICE_UNAVAILABLE, ErrorType::Unavailable, message, request_id));
        };
        self.room_for_session(tenant, request_id).await?;
        Ok(opening)
    }

    /// Whether one more session fits: the server's cap, and the tenant's share of it.
    async fn room_for_session(&self, tenant: Option<&str>, request_id: &str) -> Result<(), Response> {
        let live = self.sessions.sessions.read().await;
        if live.len() >= self.limits.max_sessions {
            return Err(self.sessions_full(request_id));
        }
        let limit = self.limits.max_sessions_per_tenant;
        if let Some(tenant) = tenant
            && self.owners.held_by(tenant, |id| live.contains_key(id)) >= limit
        {
            let message = format!(
                "the tenant holds its limit of {limit} MCP sessions on this server; close one (HTTP DELETE) or reuse it"
            );
            let mut response = envelope(StatusCode::TOO_MANY_REQUESTS, ErrorType::QuotaExceeded, message, request_id);
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return Err(response);
        }
        Ok(())
    }

    fn sessions_full(&self, request_id: &str) -> Response {
        let message = format!(
            "the server holds its limit of {} MCP sessions; close one (HTTP DELETE) or retry later",
            self.limits.max_sessions
        );
        envelope(StatusCode::SERVICE_UNAVAILABLE, ErrorType::Unavailable, message, request_id)
    }
}

/// A session's `DELETE` answered as plain success: rmcp answers 202 once it
/// has closed the session, and clients (the Python SDK) take anything but
/// 200 or 204 for a failed termination and warn on every close.
pub(super) fn closed_plainly(
    mut response: axum::response::Response,
    method: &str,
    route: &str,
) -> axum::response::Response {
    if method == "DELETE" && route == "/mcp" && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_session_keeps_a_few_kib_of_what_the_client_sent() {
        let huge = "x".repeat(1 << 20);
        let params = serde_json::json!({
            "_meta": {"padding": huge},
            "protocolVersion": huge,
            "capabilities": {"experimental": {"padding": {"a": huge}}, "roots": {"listChanged": true}},
            "clientInfo": {"name": huge, "version": "1.0", "description": huge, "websiteUrl": huge,
                           "icons": [{"src": huge}]},
        });
        let state: SessionState = serde_json::from_value(serde_json::json!({"initialize_params": params})).unwrap();
        let text = bounded(&state).unwrap();
        assert!(text.len() < 2048, "{} bytes", text.len());
        let restored: SessionState = serde_json::from_str(&text).expect("a state rmcp reads back");
        let restored = serde_json::to_value(&restored.initialize_params).unwrap();
        assert_eq!(restored["protocolVersion"].as_str().map(str::len), Some(MAX_STORED_TEXT));
        assert_eq!(restored["capabilities"], serde_json::json!({"roots": {"listChanged": true}}));
        assert_eq!(restored["clientInfo"]["name"].as_str().map(str::len), Some(MAX_STORED_TEXT));
        assert_eq!(restored["clientInfo"]["version"], "1.0");
    }
}
