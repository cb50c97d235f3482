//! Components, artifacts, install records and the versioned policy row.

use crate::digest::Digest;
use crate::store::{DbError, ObjectKind, ObjectStore, PolicyStamp, StoreError};

use super::{Postgres, pg, query_error};

fn database_error(what: impl Into<String>) -> impl FnOnce(DbError) -> StoreError {
    let what = what.into();
    move |source| StoreError::Database { what, source }
}

impl Postgres {
    /// Whether an object is stored (without fetching it).
    fn contains(&self, kind: ObjectKind, digest: &Digest) -> Result<bool, StoreError> {
        let (pool, hex) = (self.pool(), digest.to_hex());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client
                .query_opt("SELECT 1 FROM objects WHERE kind = $1 AND digest = $2", &[&kind.as_str(), &hex])
                .await
                .map_err(query_error)?;
            Ok(row.is_some())
        })
        .map_err(database_error(format!("{} {digest}", kind.as_str())))
    }
}

impl ObjectStore for Postgres {
    fn put(&self, kind: ObjectKind, digest: &Digest, bytes: &[u8]) -> Result<(), StoreError> {
        // Every host re-stores the bundled components at start: a component
        // already there (the usual case) is not sent again. Artifacts are
        // small and mostly new, so they go straight to the insert.
        if kind == ObjectKind::Component && self.contains(kind, digest)? {
            return Ok(());
        }
        let (pool, hex, body) = (self.pool(), digest.to_hex(), bytes.to_vec());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached(
                    "INSERT INTO objects (kind, digest, body) VALUES ($1, $2, $3) ON CONFLICT (kind, digest) \
                     DO UPDATE SET body = EXCLUDED.body WHERE objects.body IS DISTINCT FROM EXCLUDED.body",
                )
                .await
                .map_err(query_error)?;
            client.execute(&statement, &[&kind.as_str(), &hex, &body]).await.map_err(query_error)?;
            Ok(())
        })
        .map_err(database_error(format!("{} {digest}", kind.as_str())))
    }

    fn get(&self, kind: ObjectKind, digest: &Digest) -> Result<Option<Vec<u8>>, StoreError> {
        let (pool, hex) = (self.pool(), digest.to_hex());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached("SELECT body FROM objects WHERE kind = $1 AND digest = $2")
                .await
                .map_err(query_error)?;
            let row = client.query_opt(&statement, &[&kind.as_str(), &hex]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
        .map_err(database_error(format!("{} {digest}", kind.as_str())))
    }

    fn size(&self, kind: ObjectKind, digest: &Digest) -> Result<Option<u64>, StoreError> {
        let (pool, hex) = (self.pool(), digest.to_hex());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached("SELECT octet_length(body) FROM objects WHERE kind = $1 AND digest = $2")
                .await
                .map_err(query_error)?;
            let row = client.query_opt(&statement, &[&kind.as_str(), &hex]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get::<_, i32>(0) as u64))
        })
        .map_err(database_error(format!("{} {digest}", kind.as_str())))
    }

    fn put_record(&self, digest: &Digest, record: &serde_json::Value) -> Result<(), StoreError> {
        let (pool, hex, text) = (self.pool(), digest.to_hex(), crate::json::text(&record));
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO install_records (digest, record) VALUES ($1, $2)
                     ON CONFLICT (digest) DO UPDATE SET record = EXCLUDED.record",
                    &[&hex, &text],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .map_err(database_error(format!("install record {digest}")))
    }

    fn records(&self) -> Result<Vec<serde_json::Value>, StoreError> {
        let pool = self.pool();
        let texts: Vec<String> = self
            .block(async move {
                let client = pool.get().await.map_err(pg)?;
                let rows = client
                    .query("SELECT record FROM install_records ORDER BY digest", &[])
                    .await
                    .map_err(query_error)?;
                Ok(rows.into_iter().map(|row| row.get(0)).collect())
            })
            .map_err(database_error("install records"))?;
        texts
            .iter()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| StoreError::Database {
                    what: "install records".into(),
                    source: DbError::Postgres(format!("a record is not JSON: {e}")),
                })
            })
            .collect()
    }

    fn read_policy(&self) -> Result<Option<String>, StoreError> {
        let pool = self.pool();
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client.query_opt("SELECT body FROM policy WHERE id = 1", &[]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
        .map_err(database_error("policy"))
    }

    fn write_policy(&self, text: &str) -> Result<(), StoreError> {
        let (pool, text) = (self.pool(), text.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO policy (id, body, version) VALUES (1, $1, 1)
                     ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, version = policy.version + 1",
                    &[&text],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .map_err(database_error("policy"))
    }

    fn write_policy_if(&self, expected: PolicyStamp, text: &str) -> Result<bool, StoreError> {
        let (pool, text) = (self.pool(), text.to_owned());
        let expected = expected.map(|v| v as i64);
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let changed = match expected {
                Some(version) => client
                    .execute(
                        "UPDATE policy SET body = $2, version = version + 1 WHERE id = 1 AND version = $1",
                        &[&version, &text],
                    )
                    .await
                    .map_err(query_error)?,
                None => client
                    .execute(
                        "INSERT INTO policy (id, body, version) VALUES (1, $1, 1) ON CONFLICT DO NOTHING",
                        &[&text],
                    )
                    .await
                    .map_err(query_error)?,
            };
            Ok(changed == 1)
        })
        .map_err(database_error("policy"))
    }

    fn create_policy(&self, text: &str) -> Result<(), StoreError> {
        let (pool, text) = (self.pool(), text.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute("INSERT INTO policy (id, body, version) VALUES (1, $1, 1) ON CONFLICT DO NOTHING", &[&text])
                .await
                .map_err(query_error)?;
            Ok(())
        })
        .map_err(database_error("policy"))
    }

    fn put_file(
        &self,
        source: &mut dyn std::io::Read,
        limit: u64,
        expect: Option<&Digest>,
    ) -> Result<(Digest, u64), crate::store::FileError> {
        self.put_file_rows(source, limit, expect)
    }

    fn open_file(&self, digest: &Digest) -> Result<Option<Box<dyn crate::store::StoredFile>>, StoreError> {
        self.open_file_rows(digest)
    }

    fn policy_stamp(&self) -> PolicyStamp {
        let pool = self.pool();
        let version: Option<i64> = self
            .block(async move {
                let client = pool.get().await.map_err(pg)?;
                let statement =
                    client.prepare_cached("SELECT version FROM policy WHERE id = 1").await.map_err(query_error)?;
                let row = client.query_opt(&statement, &[]).await.map_err(query_error)?;
                Ok(row.map(|row| row.get(0)))
            })
            .ok()
            .flatten();
        // Unreadable: no stamp, so the caller re-reads and fails closed.
        version.map(|v| v as u128)
    }
}
