//! Workspaces, revisions and idempotency keys in `jacobian.db`: one
//! `BEGIN IMMEDIATE` transaction per accepted write, made durable before it
//! is acknowledged (`Sqlite::sync_log`).

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::store::{Appended, DbError, Remembered, RevisionRow, StoreFailure, WorkspaceStore};

use super::{Role, Sqlite};

fn remembered_in(conn: &Connection, scope: &str, key: &str) -> Result<Option<Remembered>, rusqlite::Error> {
    conn.query_row(
        "SELECT payload_digest, response FROM idempotency WHERE scope = ?1 AND key = ?2",
        params![scope, key],
        |row| Ok(Remembered { payload_digest: row.get(0)?, response: row.get(1)? }),
    )
    .optional()
}

impl WorkspaceStore for Sqlite {
    fn remembered(&self, scope: &str, key: &str) -> Result<Option<Remembered>, StoreFailure> {
        Ok(remembered_in(&self.lock(Role::Workspaces), scope, key)?)
    }

    fn create(
        &self,
        workspace_id: &str,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Option<Remembered>, StoreFailure> {
        let mut conn = self.write(Role::Workspaces);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if let Some(earlier) = remembered_in(&tx, "open", key)? {
            return Ok(Some(earlier));
        }
        tx.execute("INSERT INTO workspaces (id, head) VALUES (?1, 0)", params![workspace_id])?;
        tx.execute(
            "INSERT INTO revisions (workspace_id, number, request, artifact) VALUES (?1, 0, ?2, ?3)",
            params![workspace_id, revision.request, revision.artifact],
        )?;
        tx.execute(
            "INSERT INTO idempotency (scope, key, payload_digest, response) VALUES ('open', ?1, ?2, ?3)",
            params![key, remember.payload_digest, remember.response],
        )?;
        tx.commit()?;
        let _conn = conn.release_writer();
        self.sync_log().map_err(|e| StoreFailure(DbError::Log(e)))?;
        Ok(None)
    }

    fn append(
        &self,
        workspace_id: &str,
        base: u64,
        revision: &RevisionRow,
        key: &str,
        remember: &Remembered,
    ) -> Result<Appended, StoreFailure> {
        let mut conn = self.write(Role::Workspaces);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if let Some(earlier) = remembered_in(&tx, workspace_id, key)? {
            return Ok(Appended::Remembered(earlier));
        }
        let head: Option<i64> = tx
            .query_row("SELECT head FROM workspaces WHERE id = ?1", params![workspace_id], |r| r.get(0))
            .optional()?;
        let Some(head) = head else { return Ok(Appended::NotFound) };
        if head as u64 != base {
            return Ok(Appended::Conflict { head: head as u64 });
        }
        tx.execute(
            "INSERT INTO revisions (workspace_id, number, request, artifact) VALUES (?1, ?2, ?3, ?4)",
            params![workspace_id, revision.number as i64, revision.request, revision.artifact],
        )?;
        tx.execute("UPDATE workspaces SET head = ?2 WHERE id = ?1", params![workspace_id, revision.number as i64])?;
        tx.execute(
            "INSERT INTO idempotency (scope, key, payload_digest, response) VALUES (?1, ?2, ?3, ?4)",
            params![workspace_id, key, remember.payload_digest, remember.response],
        )?;
        tx.commit()?;
        let _conn = conn.release_writer();
        self.sync_log().map_err(|e| StoreFailure(DbError::Log(e)))?;
        Ok(Appended::Done)
    }

    fn head(&self, workspace_id: &str) -> Result<Option<u64>, StoreFailure> {
        let head: Option<i64> = self
            .lock(Role::Workspaces)
            .query_row("SELECT head FROM workspaces WHERE id = ?1", params![workspace_id], |r| r.get(0))
            .optional()?;
        Ok(head.map(|h| h as u64))
    }

    fn revisions(&self, workspace_id: &str, from: u64, to: u64) -> Result<Vec<RevisionRow>, StoreFailure> {
        let conn = self.lock(Role::Workspaces);
        let mut statement = conn.prepare(
            "SELECT number, request, artifact FROM revisions
             WHERE workspace_id = ?1 AND number BETWEEN ?2 AND ?3 ORDER BY number",
        )?;
        let rows = statement.query_map(params![workspace_id, from as i64, to as i64], |row| {
            Ok(RevisionRow { number: row.get::<_, i64>(0)? as u64, request: row.get(1)?, artifact: row.get(2)? })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}
