//! Episodes and experiment lines in `jacobian.db`.

use rusqlite::{OptionalExtension, params};

use crate::digest::Digest;
use crate::experiments::{InvocationRecord, Spent, StopReason};
use crate::store::{CertificateRecord, DbError, EpisodeStore, ExperimentStore, RECORD_COLUMNS, certificate_record};

use super::{Role, Sqlite};

impl EpisodeStore for Sqlite {
    fn put(&self, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError> {
        let conn = self.write(Role::Episodes);
        conn.prepare_cached("INSERT OR IGNORE INTO episodes (digest, capability_id, body) VALUES (?1, ?2, ?3)")?
            .execute(params![digest.to_hex(), capability_id, body])?;
        Ok(())
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
        // One statement: the ordinal is assigned and the row written atomically.
        let ordinal: i64 = self
            .write(Role::Experiments)
            .prepare_cached(
                "INSERT INTO experiment_invocations (experiment, ordinal, capability_id, stop_reason, episode, fuel,
                wall_time_us, logical_bytes, model_visible_bytes, wire_bytes, policy_digest)
             VALUES (?1, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM experiment_invocations WHERE experiment = ?1),
                ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             RETURNING ordinal",
            )?
            .query_row(
                params![
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
                ],
                |row| row.get(0),
            )?;
        Ok(ordinal as u64)
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
