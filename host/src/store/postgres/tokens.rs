//! API tokens shared by every host: each request reads its token's row, so
//! a revocation made anywhere holds at every host's next request.

use tokio_postgres::Row;

use crate::store::{DbError, TokenRecord, TokenStore};

use super::{Postgres, pg, query_error};

const COLUMNS: &str = "id, tenant, scopes, secret_sha256, created_at, expires_at, revoked_at";

fn record(row: &Row) -> TokenRecord {
    TokenRecord {
        id: row.get(0),
        tenant: row.get(1),
        scopes: row.get(2),
        secret_sha256: row.get(3),
        created_at: row.get(4),
        expires_at: row.get(5),
        revoked_at: row.get(6),
    }
}

#[async_trait::async_trait]
impl TokenStore for Postgres {
    async fn create(&self, token: &TokenRecord) -> Result<(), DbError> {
        let (pool, token) = (self.pool(), token.clone());
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    &format!("INSERT INTO api_tokens ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"),
                    &[
                        &token.id,
                        &token.tenant,
                        &token.scopes,
                        &token.secret_sha256,
                        &token.created_at,
                        &token.expires_at,
                        &token.revoked_at,
                    ],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .await
    }

    async fn find(&self, id: &str) -> Result<Option<TokenRecord>, DbError> {
        let (pool, id) = (self.pool(), id.to_owned());
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached(&format!("SELECT {COLUMNS} FROM api_tokens WHERE id = $1"))
                .await
                .map_err(query_error)?;
            Ok(client.query_opt(&statement, &[&id]).await.map_err(query_error)?.as_ref().map(record))
        })
        .await
    }

    async fn list(&self) -> Result<Vec<TokenRecord>, DbError> {
        let pool = self.pool();
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            let rows = client
                .query(&format!("SELECT {COLUMNS} FROM api_tokens ORDER BY created_at, id"), &[])
                .await
                .map_err(query_error)?;
            Ok(rows.iter().map(record).collect())
        })
        .await
    }

    async fn revoke(&self, id: &str, now: i64) -> Result<bool, DbError> {
        let (pool, id) = (self.pool(), id.to_owned());
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            let changed = client
                .execute("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1", &[&id, &now])
                .await
                .map_err(query_error)?;
            Ok(changed > 0)
        })
        .await
    }
}
