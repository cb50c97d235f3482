//! Workspaces: a row lock per workspace serializes its writers on every host.

use crate::store::{Appended, DbError, Remembered, RevisionRow, StoreFailure, WorkspaceStore};

use super::{Postgres, begin, pg, query_error};

async fn remembered_in(
    client: &impl deadpool_postgres::GenericClient,
    scope: &str,
    key: &str,
) -> Result<Option<Remembered>, DbError> {
    let row = client
        .query_opt("SELECT payload_digest, response FROM idempotency WHERE scope = $1 AND key = $2", &[&scope, &key])
        .await
        .map_err(query_error)?;
    Ok(row.map(|row| Remembered { payload_digest: row.get(0), response: row.get(1) }))
}

impl WorkspaceStore for Postgres {
    fn remembered(&self, scope: &str, key: &str) -> Result<Option<Remembered>, StoreFailure> {
        let (pool, scope, key) = (self.pool(), scope.to_owned(), key.to_owned());
        Ok(self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            remembered_in(&client, &scope, &key).await
        })?)
    }

    fn create(
        &self,
        workspace_id: &str,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Option<Remembered>, StoreFailure> {
        let (pool, id, key) = (self.pool(), workspace_id.to_owned(), key.to_owned());
        let (revision, remember) = (revision.clone(), remember.clone());
        Ok(self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            // Claim the key first: a concurrent claimer makes this wait for its
            // commit, after which its response is the answer.
            let claimed = tx
                .execute(
                    "INSERT INTO idempotency (scope, key, payload_digest, response) VALUES ('open', $1, $2, $3)
                     ON CONFLICT DO NOTHING",
                    &[&key, &remember.payload_digest, &remember.response],
                )
                .await
                .map_err(query_error)?;
            if claimed == 0 {
                let earlier = remembered_in(&tx, "open", &key).await?;
                tx.rollback().await.map_err(query_error)?;
                return Ok(earlier);
            }
            tx.execute("INSERT INTO workspaces (id, head) VALUES ($1, 0)", &[&id]).await.map_err(query_error)?;
            tx.execute(
                "INSERT INTO revisions (workspace_id, number, request, artifact) VALUES ($1, 0, $2, $3)",
                &[&id, &revision.request, &revision.artifact],
            )
            .await
            .map_err(query_error)?;
            tx.commit().await.map_err(query_error)?;
            Ok(None)
        })?)
    }

    fn append(
        &self,
        workspace_id: &str,
        base: u64,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Appended, StoreFailure> {
        let (pool, id, key) = (self.pool(), workspace_id.to_owned(), key.to_owned());
        let (revision, remember) = (revision.clone(), remember.clone());
        Ok(self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            // The row lock serializes every writer of this workspace, on every host.
            let head = tx
                .query_opt("SELECT head FROM workspaces WHERE id = $1 FOR UPDATE", &[&id])
                .await
                .map_err(query_error)?;
            let Some(head) = head.map(|row| row.get::<_, i64>(0) as u64) else {
                return Ok(Appended::NotFound);
            };
            if let Some(earlier) = remembered_in(&tx, &id, &key).await? {
                return Ok(Appended::Remembered(earlier));
            }
            if head != base {
                return Ok(Appended::Conflict { head });
            }
            let number = revision.number as i64;
            tx.execute(
                "INSERT INTO revisions (workspace_id, number, request, artifact) VALUES ($1, $2, $3, $4)",
                &[&id, &number, &revision.request, &revision.artifact],
            )
            .await
            .map_err(query_error)?;
            tx.execute("UPDATE workspaces SET head = $2 WHERE id = $1", &[&id, &number]).await.map_err(query_error)?;
            tx.execute(
                "INSERT INTO idempotency (scope, key, payload_digest, response) VALUES ($1, $2, $3, $4)",
                &[&id, &key, &remember.payload_digest, &remember.response],
            )
            .await
            .map_err(query_error)?;
            tx.commit().await.map_err(query_error)?;
            Ok(Appended::Done)
        })?)
    }

    fn head(&self, workspace_id: &str) -> Result<Option<u64>, StoreFailure> {
        let (pool, id) = (self.pool(), workspace_id.to_owned());
        Ok(self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement =
                client.prepare_cached("SELECT head FROM workspaces WHERE id = $1").await.map_err(query_error)?;
            let row = client.query_opt(&statement, &[&id]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get::<_, i64>(0) as u64))
        })?)
    }

    fn revisions(&self, workspace_id: &str, from: u64, to: u64) -> Result<Vec<RevisionRow>, StoreFailure> {
        let (pool, id) = (self.pool(), workspace_id.to_owned());
        let (from, to) = (from as i64, to as i64);
        Ok(self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let rows = client
                .query(
                    "SELECT number, request, artifact FROM revisions
                     WHERE workspace_id = $1 AND number BETWEEN $2 AND $3 ORDER BY number",
                    &[&id, &from, &to],
                )
                .await
                .map_err(query_error)?;
            Ok(rows
                .into_iter()
                .map(|row| RevisionRow {
                    number: row.get::<_, i64>(0) as u64,
                    request: row.get(1),
                    artifact: row.get(2),
                })
                .collect())
        })?)
    }
}
