//! MCP sessions shared by every host, so a load balancer needs no stickiness.

use crate::store::{DbError, SessionStore};

use super::{Postgres, SESSION_TTL_SQL, pg, query_error};

#[async_trait::async_trait]
impl SessionStore for Postgres {
    async fn load(&self, session_id: &str) -> Result<Option<String>, DbError> {
        let (pool, id) = (self.pool(), session_id.to_owned());
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client
                .query_opt(
                    &format!("SELECT state FROM mcp_sessions WHERE id = $1 AND created_at > now() - {SESSION_TTL_SQL}"),
                    &[&id],
                )
                .await
                .map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
        .await
    }

    async fn store(&self, session_id: &str, state: &str) -> Result<(), DbError> {
        let (pool, id, text) = (self.pool(), session_id.to_owned(), state.to_owned());
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO mcp_sessions (id, state) VALUES ($1, $2)
                         ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state",
                    &[&id, &text],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .await
    }

    async fn delete(&self, session_id: &str) -> Result<(), DbError> {
        let (pool, id) = (self.pool(), session_id.to_owned());
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            client.execute("DELETE FROM mcp_sessions WHERE id = $1", &[&id]).await.map_err(query_error)?;
            client.execute("DELETE FROM mcp_session_owners WHERE id = $1", &[&id]).await.map_err(query_error)?;
            Ok(())
        })
        .await
    }

    async fn owner(&self, session_id: &str) -> Result<Option<String>, DbError> {
        let (pool, id) = (self.pool(), session_id.to_owned());
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client
                .query_opt(
                    &format!(
                        "SELECT owner FROM mcp_session_owners WHERE id = $1 AND created_at > now() - {SESSION_TTL_SQL}"
                    ),
                    &[&id],
                )
                .await
                .map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
        .await
    }

    async fn set_owner(&self, session_id: &str, owner: &str) -> Result<(), DbError> {
        let (pool, id, owner) = (self.pool(), session_id.to_owned(), owner.to_owned());
        self.run(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO mcp_session_owners (id, owner) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
                    &[&id, &owner],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .await
    }
}
