//! API tokens in `jacobian.db`, read on their own connection so that a
//! request's authentication never waits for a write of another role.

use rusqlite::{OptionalExtension, Row, params};

use crate::store::{DbError, TokenRecord, TokenStore};

use super::{Role, Sqlite};

const COLUMNS: &str = "id, tenant, scopes, secret_sha256, created_at, expires_at, revoked_at";

fn record(row: &Row<'_>) -> rusqlite::Result<TokenRecord> {
    Ok(TokenRecord {
        id: row.get(0)?,
        tenant: row.get(1)?,
        scopes: row.get(2)?,
        secret_sha256: row.get(3)?,
        created_at: row.get(4)?,
        expires_at: row.get(5)?,
        revoked_at: row.get(6)?,
    })
}

#[async_trait::async_trait]
impl TokenStore for Sqlite {
    async fn create(&self, token: &TokenRecord) -> Result<(), DbError> {
        let conn = self.write(Role::Tokens);
        conn.execute(
            &format!("INSERT INTO api_tokens ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
            params![
                token.id,
                token.tenant,
                token.scopes,
                token.secret_sha256,
                token.created_at,
                token.expires_at,
                token.revoked_at
            ],
        )?;
        Ok(())
    }

    async fn find(&self, id: &str) -> Result<Option<TokenRecord>, DbError> {
        // Read right here, on the thread that serves the request: a read
        // never waits for a writer of the log, and this connection waits at
        // most `TOKENS_BUSY_TIMEOUT` for another process holding the
        // database (then the request is answered 503). A hand-off to a
        // blocking thread cost a fifth of the throughput (README).
        let conn = self.lock(Role::Tokens);
        let mut statement =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM api_tokens WHERE id = CAST(?1 AS TEXT)"))?;
        Ok(statement.query_row(params![id], record).optional()?)
    }

    async fn list(&self) -> Result<Vec<TokenRecord>, DbError> {
        let conn = self.lock(Role::Tokens);
        let mut statement = conn.prepare(&format!("SELECT {COLUMNS} FROM api_tokens ORDER BY created_at, id"))?;
        let rows = statement.query_map([], record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    async fn revoke(&self, id: &str, now: i64) -> Result<bool, DbError> {
        let conn = self.write(Role::Tokens);
        let changed = conn
            .execute("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1", params![id, now])?;
        Ok(changed > 0)
    }
}
