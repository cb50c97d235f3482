//! MCP sessions kept where every host of a deployment sees them: a session
//! begun on one host continues on another. The state is the edge's own
//! serialization (opaque here), so the core never depends on the MCP crate.

use super::DbError;

/// Session state by session id.
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync {
    /// The state stored for `session_id`, while it has not expired.
    async fn load(&self, session_id: &str) -> Result<Option<String>, DbError>;
    /// Store (or replace) the state of `session_id`.
    async fn store(&self, session_id: &str, state: &str) -> Result<(), DbError>;
    /// Forget `session_id` (and its owner).
    async fn delete(&self, session_id: &str) -> Result<(), DbError>;
    /// Who opened `session_id` (an authenticated principal's identity), while it has not expired.
    async fn owner(&self, session_id: &str) -> Result<Option<String>, DbError>;
    /// Record who opened `session_id` (the first record stays).
    async fn set_owner(&self, session_id: &str, owner: &str) -> Result<(), DbError>;
}
