//! MCP sessions at the edge: the deployment's shared session store as
//! rmcp's, and who opened each session.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::store::{SessionState, SessionStore, SessionStoreError};

use crate::auth::Principal;

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
        let text = serde_json::to_string(state)?;
        self.0.store(session_id, &text).await.map_err(|e| Box::new(e) as SessionStoreError)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.0.delete(session_id).await.map_err(|e| Box::new(e) as SessionStoreError)
    }
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
