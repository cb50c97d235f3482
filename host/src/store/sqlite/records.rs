//! Episodes and experiment lines in `jacobian.db`.

use rusqlite::{OptionalExtension, params};

use crate::digest::Digest;
use crate::experiments::{InvocationRecord, Spent, StopReason};
use crate::quotas::Usage;
use crate::store::{
    CertificateRecord, DbError, EpisodeStore, EpisodeWrite, ExperimentStore, RECORD_COLUMNS, RecheckRecord,
    certificate_record, recheck_record,
};

use super::{Role, Sqlite};

/// An experiment line, its ordinal assigned in the same statement.
///
/// The experiment is compared as `CAST(?1 AS TEXT)`: compared as a bare
/// parameter, the query planner of this SQLite build (with `STAT4`) inspects
/// the bound value, and every new binding expires the prepared statement, so
/// every append was parsed and planned again: a third of its cost at
/// `synchronous=NORMAL`, measured with a bare rusqlite loop.
const APPEND: &str = "INSERT INTO experiment_invocations (experiment, ordinal, capability_id, stop_reason,
        episode, fuel, wall_time_us, logical_bytes, model_visible_bytes, wire_bytes, policy_digest)
    VALUES (?1, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM experiment_invocations WHERE experiment = CAST(?1 AS TEXT)),
        ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

/// The ordinal of the line just appended on this connection. A second
/// statement rather than `RETURNING`, which makes SQLite open a temporary
/// B-tree for every call (a twentieth of a quick call's commit).
const APPENDED: &str = "SELECT ordinal FROM experiment_invocations WHERE rowid = ?1";

/// An episode, kept once per digest.
const PUT_EPISODE: &str = "INSERT OR IGNORE INTO episodes (digest, capability_id, body) VALUES (?1, ?2, ?3)";

/// Keep an episode on `conn` (once per digest).
fn put_episode(conn: &rusqlite::Connection, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError> {
    conn.prepare_cached(PUT_EPISODE)?.execute(params![digest.to_hex(), capability_id, body])?;
    Ok(())
}

/// Append an experiment line on `conn`, in a transaction; its ordinal. One
/// statement assigns the ordinal and writes the row atomically; the row's
/// ordinal is then read back by its rowid, which nothing can change before
/// the transaction ends (a `VACUUM` elsewhere could, between two autocommits).
fn append_line(conn: &rusqlite::Connection, experiment: &str, record: &InvocationRecord) -> Result<u64, DbError> {
    conn.prepare_cached(APPEND)?.execute(params![
        experiment,
        record.capability_id,
        record.stop_reason.to_string(),
        record.episode.map(|d| d.to_string()),
        record.fuel as i64,
        record.wall_time_us as i64,
        record.logical_bytes as i64,
        record.model_visible_bytes as i64,
        record.wire_bytes as i64,
        record.policy_digest.to_string(),
    ])?;
    let ordinal: i64 = conn.prepare_cached(APPENDED)?.query_row(params![conn.last_insert_rowid()], |row| row.get(0))?;
    Ok(ordinal as u64)
}

impl EpisodeStore for Sqlite {
    fn writer_free(&self) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(Sqlite::writer_free(self))
    }

    fn put(&self, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError> {
        put_episode(&self.write(Role::Episodes), digest, capability_id, body)
    }

    fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError> {
        let conn = self.lock(Role::Episodes);
        let body = conn
            .query_row("SELECT body FROM episodes WHERE digest = ?1", params![digest.to_hex()], |row| row.get(0))
            .optional()?;
        Ok(body)
    }

    fn put_certificate(&self, certificate: &Digest, record: &CertificateRecord) -> Result<(), DbError> {
        let conn = self.write(Role::Episodes);
        conn.prepare_cached(
            "INSERT OR IGNORE INTO certificates (digest, checker_role, certificate_format, verify_capability_id,
                capability_id, producer) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            certificate.to_hex(),
            record.checker_role,
            record.certificate_format,
            record.verify_capability_id,
            record.capability_id,
            record.producer.to_hex(),
        ])?;
        Ok(())
    }

    fn certificate(&self, certificate: &Digest) -> Result<Option<CertificateRecord>, DbError> {
        let conn = self.lock(Role::Episodes);
        let row = conn
            .prepare_cached(
                "SELECT checker_role, certificate_format, verify_capability_id, capability_id, producer
                 FROM certificates WHERE digest = ?1",
            )?
            .query_row(params![certificate.to_hex()], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get::<_, String>(4)?))
            })
            .optional()?;
        row.map(certificate_record).transpose()
    }

    fn verdicts_by(&self, checker: &Digest) -> Result<Vec<Digest>, DbError> {
        let conn = self.lock(Role::Episodes);
        let mut statement = conn.prepare_cached(
            "SELECT digest FROM episodes
             WHERE json_extract(CAST(body AS TEXT), '$.verification.checker_digest') = ?1 ORDER BY digest",
        )?;
        let rows = statement.query_map(params![checker.to_string()], |row| row.get::<_, String>(0))?;
        rows.map(|hex| Digest::from_hex(&hex?).map_err(|e| DbError::Corrupt(format!("episodes.digest: {e}")))).collect()
    }

    fn put_recheck(&self, recheck: &RecheckRecord) -> Result<(), DbError> {
        let conn = self.write(Role::Episodes);
        conn.prepare_cached(
            "INSERT OR IGNORE INTO rechecks (episode, seq, recalled, recheck, status, checker)
             SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4, ?5 FROM rechecks WHERE episode = ?1",
        )?
        .execute(params![
            recheck.episode.to_hex(),
            recheck.recalled.to_hex(),
            recheck.recheck.to_hex(),
            recheck.status,
            recheck.checker.to_hex(),
        ])?;
        Ok(())
    }

    fn rechecks(&self, episode: &Digest) -> Result<Vec<RecheckRecord>, DbError> {
        let conn = self.lock(Role::Episodes);
        let mut statement = conn.prepare_cached(
            "SELECT recalled, recheck, status, checker FROM rechecks WHERE episode = ?1 ORDER BY seq",
        )?;
        let rows = statement.query_map(params![episode.to_hex()], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?, row.get::<_, String>(3)?))
        })?;
        rows.map(|row| recheck_record(episode, row?)).collect()
    }

    fn grant(&self, tenant: &str, uris: &[String]) -> Result<(), DbError> {
        if uris.is_empty() {
            return Ok(());
        }
        super::immediate(&self.write(Role::Episodes), |conn| {
            let mut statement = conn.prepare_cached("INSERT OR IGNORE INTO grants (tenant, uri) VALUES (?1, ?2)")?;
            for uri in uris {
                statement.execute(params![tenant, uri])?;
            }
            Ok(())
        })
    }

    fn granted(&self, tenant: &str, uri: &str) -> Result<bool, DbError> {
        if let Some(hex) = uri.strip_prefix(crate::contract::EPISODE_URI_PREFIX) {
            let conn = self.lock(Role::Experiments);
            let mut statement = conn.prepare_cached(
                "SELECT 1 FROM experiment_invocations WHERE episode = ?1 AND substr(experiment, -17) = ?2 LIMIT 1",
            )?;
            return Ok(statement.exists(params![format!("sha256:{hex}"), format!("@{tenant}")])?);
        }
        let conn = self.lock(Role::Episodes);
        let mut statement = conn.prepare_cached("SELECT 1 FROM grants WHERE tenant = ?1 AND uri = ?2")?;
        Ok(statement.exists(params![tenant, uri])?)
    }
}

impl ExperimentStore for Sqlite {
    fn spent(&self, experiment: &str) -> Result<Spent, DbError> {
        let conn = self.lock(Role::Experiments);
        let mut statement = conn.prepare_cached(
            "SELECT capability_id, COUNT(*), SUM(fuel) FROM experiment_invocations
             WHERE experiment = ?1 AND stop_reason IN ('COMPLETED', 'FAILED', 'CANCELLED') GROUP BY capability_id",
        )?;
        let mut spent = Spent::default();
        let rows = statement.query_map(params![experiment], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
        })?;
        for row in rows {
            let (id, count, fuel) = row?;
            spent.invocations.insert(id, count as u64);
            spent.fuel += fuel as u64;
        }
        Ok(spent)
    }

    fn append(&self, experiment: &str, record: &InvocationRecord) -> Result<u64, DbError> {
        super::immediate(&self.write(Role::Experiments), |conn| append_line(conn, experiment, record))
    }

    fn append_batch(&self, writes: &[EpisodeWrite<'_>]) -> Option<Vec<Result<u64, DbError>>> {
        // One transaction. Tried first with no savepoints: when every write
        // succeeds (all but always) it pays for none. When one fails, the
        // transaction is rolled back whole and the batch written again, each
        // write in a savepoint of its own, so that the one that fails is
        // undone alone and the others are committed. (A write alone needs no
        // savepoint: its failure rolls back the transaction.)
        let write = |conn: &rusqlite::Connection, call: &EpisodeWrite<'_>| {
            let episode = &call.episode;
            put_episode(conn, episode.digest, episode.capability_id, episode.body)?;
            append_line(conn, call.experiment, call.record)
        };
        let conn = self.write(Role::Experiments);
        // Whether a write failed, rather than the transaction's `BEGIN` or
        // `COMMIT` (which fails every write, and is not tried again).
        let mut a_write_failed = false;
        let plain: Result<Vec<u64>, DbError> = super::immediate(&conn, |tx| {
            writes.iter().map(|w| write(tx, w).inspect_err(|_| a_write_failed = true)).collect()
        });
        match plain {
            Ok(ordinals) => return Some(ordinals.into_iter().map(Ok).collect()),
            Err(error) if writes.len() == 1 || !a_write_failed => {
                return Some(writes.iter().map(|_| Err(error.for_each())).collect());
            }
            Err(_) => {}
        }
        // The outer error: the savepoint itself failed, and the whole batch with it.
        type Written = Result<Result<u64, DbError>, DbError>;
        let one = |conn: &rusqlite::Connection, call: &EpisodeWrite<'_>| -> Written {
            conn.prepare_cached("SAVEPOINT episode_write")?.execute([])?;
            let written = write(conn, call);
            if written.is_err() {
                conn.prepare_cached("ROLLBACK TO episode_write")?.execute([])?;
            }
            conn.prepare_cached("RELEASE episode_write")?.execute([])?;
            Ok(written)
        };
        let committed: Result<Vec<Result<u64, DbError>>, DbError> =
            super::immediate(&conn, |tx| writes.iter().map(|call| one(tx, call)).collect());
        Some(match committed {
            Ok(results) => results,
            // Nothing of the batch was kept (it could not begin or commit): every write fails so.
            Err(error) => writes.iter().map(|_| Err(error.for_each())).collect(),
        })
    }

    fn tenant_usage(&self, tenant: &str) -> Result<Option<Usage>, DbError> {
        let conn = self.lock(Role::Experiments);
        let mut statement =
            conn.prepare_cached("SELECT day, fuel, stored_bytes FROM tenant_usage WHERE tenant = ?1")?;
        let row = statement
            .query_row(params![tenant], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?)))
            .optional()?;
        Ok(row.map(|(day, fuel, stored)| Usage {
            day,
            fuel: fuel.max(0) as u64,
            stored_bytes: stored.max(0) as u64,
            ..Usage::fresh(day * 86_400_000)
        }))
    }

    fn add_tenant_usage(&self, tenant: &str, day: i64, fuel: u64, stored_bytes: u64) -> Result<(), DbError> {
        self.write(Role::Experiments).prepare_cached(ADD_TENANT_USAGE)?.execute(params![
            tenant,
            day,
            fuel.min(i64::MAX as u64) as i64,
            stored_bytes.min(i64::MAX as u64) as i64
        ])?;
        Ok(())
    }

    fn put_policy(&self, digest: &Digest, body: &str) -> Result<(), DbError> {
        self.write(Role::Experiments).execute(
            "INSERT OR IGNORE INTO experiment_policies (digest, body) VALUES (?1, ?2)",
            params![digest.to_string(), body],
        )?;
        Ok(())
    }

    fn policy(&self, digest: &Digest) -> Result<Option<String>, DbError> {
        Ok(self
            .lock(Role::Experiments)
            .query_row("SELECT body FROM experiment_policies WHERE digest = ?1", params![digest.to_string()], |row| {
                row.get(0)
            })
            .optional()?)
    }

    fn experiment_keys(&self, pattern: &str, from: &str, limit: usize) -> Result<Vec<String>, DbError> {
        let conn = self.lock(Role::Experiments);
        // Keys are ASCII below 0x7f: the range is every key that starts with `from`.
        let until = format!("{from}\u{7f}");
        let mut statement = conn.prepare_cached(
            "SELECT DISTINCT experiment FROM (SELECT experiment FROM experiment_invocations \
             WHERE experiment >= ?1 AND experiment < ?2 ORDER BY experiment LIMIT ?5) \
             WHERE experiment LIKE ?3 ESCAPE '\\' ORDER BY experiment LIMIT ?4",
        )?;
        let scan = crate::store::records::KEY_SCAN_ROWS;
        let rows = statement.query_map(params![from, until, pattern, limit as i64, scan], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, DbError> {
        let conn = self.lock(Role::Experiments);
        let mut statement = conn.prepare(&format!(
            "SELECT {RECORD_COLUMNS} FROM experiment_invocations WHERE experiment = ?1 ORDER BY ordinal"
        ))?;
        // A digest column that does not parse is a corrupt row.
        let digest = |index: usize, text: String| {
            text.parse::<Digest>()
                .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(e)))
        };
        let rows = statement.query_map(params![experiment], |row| {
            Ok(InvocationRecord {
                ordinal: row.get::<_, i64>(0)? as u64,
                capability_id: row.get(1)?,
                stop_reason: StopReason::parse(&row.get::<_, String>(2)?),
                episode: row.get::<_, Option<String>>(3)?.map(|text| digest(3, text)).transpose()?,
                fuel: row.get::<_, i64>(4)? as u64,
                wall_time_us: row.get::<_, i64>(5)? as u64,
                logical_bytes: row.get::<_, i64>(6)? as u64,
                model_visible_bytes: row.get::<_, i64>(7)? as u64,
                wire_bytes: row.get::<_, i64>(8)? as u64,
                policy_digest: digest(9, row.get(9)?)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Add a call's fuel (to its day's, or starting a new day) and stored bytes to a tenant's usage.
const ADD_TENANT_USAGE: &str = "INSERT INTO tenant_usage (tenant, day, fuel, stored_bytes) VALUES (?1, ?2, ?3, ?4)
    ON CONFLICT (tenant) DO UPDATE SET
        fuel = CASE WHEN day = excluded.day THEN fuel + excluded.fuel ELSE excluded.fuel END,
        day = excluded.day,
        stored_bytes = stored_bytes + excluded.stored_bytes";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::StopReason;

    /// Appends to different experiments reuse one prepared statement: the
    /// planner does not depend on the bound experiment (see [`APPEND`]).
    #[test]
    fn an_append_is_planned_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Sqlite::open(&dir.path().join("jacobian.db")).expect("open");
        let record = |id: &str| InvocationRecord {
            ordinal: 0,
            capability_id: id.into(),
            stop_reason: StopReason::Completed,
            episode: None,
            fuel: 1,
            wall_time_us: 1,
            logical_bytes: 0,
            model_visible_bytes: 0,
            wire_bytes: 0,
            policy_digest: Digest::of(b"policy"),
        };
        for round in 1..=3u64 {
            for experiment in ["exp-a", "exp-b", "exp-c"] {
                assert_eq!(db.append(experiment, &record("test.echo.message")).expect("append"), round);
            }
        }
        let conn = db.lock(Role::Experiments);
        let statement = conn.prepare_cached(APPEND).expect("cached");
        assert_eq!(statement.get_status(rusqlite::StatementStatus::RePrepare), 0, "re-planned on a new binding");
        // And the check above can fail: the bare parameter is re-planned.
        let bare = APPEND.replace("CAST(?1 AS TEXT)", "?1");
        for experiment in ["exp-a", "exp-b"] {
            conn.prepare_cached(&bare)
                .expect("bare")
                .execute(params![experiment, "x", "COMPLETED", None::<String>, 0, 0, 0, 0, 0, "p"])
                .expect("bare append");
        }
        assert!(conn.prepare_cached(&bare).expect("bare").get_status(rusqlite::StatementStatus::RePrepare) > 0);
    }
}
