//! Operator-issued API tokens, kept where every host of a deployment reads
//! them: a token made on one host is accepted by all, and a revocation is
//! seen by each host's next request (every request reads its token's row;
//! nothing is cached).
//!
//! Only a token's digest is stored; the token itself is printed once, when
//! it is made (`jacobian tokens create`).

use super::DbError;

/// One API token as stored.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TokenRecord {
    /// The token's public id (also the token's second part).
    pub id: String,
    /// The tenant the token names its holder by.
    pub tenant: String,
    /// Its scopes, space-separated (`jacobian:invoke jacobian:read`).
    pub scopes: String,
    /// SHA-256 (hex) of the whole token.
    #[serde(skip)]
    pub secret_sha256: String,
    /// When it was made (seconds since the Unix epoch).
    pub created_at: i64,
    /// When it stops being accepted, if ever.
    pub expires_at: Option<i64>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<i64>,
}

/// API tokens by id.
#[async_trait::async_trait]
pub trait TokenStore: Send + Sync {
    /// Store a new token (its id is fresh: a repeated id is an error).
    async fn create(&self, token: &TokenRecord) -> Result<(), DbError>;
    /// The token with `id`, revoked and expired ones included.
    async fn find(&self, id: &str) -> Result<Option<TokenRecord>, DbError>;
    /// Every token, oldest first.
    async fn list(&self) -> Result<Vec<TokenRecord>, DbError>;
    /// Revoke `id` at `now` (seconds); false if no such token. Revoking a
    /// revoked token keeps its first revocation time.
    async fn revoke(&self, id: &str, now: i64) -> Result<bool, DbError>;
}
