//! Episodes, experiment lines, and reservations under the experiment budgets.

use tokio_postgres::error::SqlState;

use crate::digest::Digest;
use crate::experiments::{Admission, ExperimentBudgets, InvocationRecord, Reservation, Spent, StopReason, judge};
use crate::quotas::Usage;
use crate::store::{
    CertificateRecord, DbError, EpisodeStore, ExperimentStore, QuotaLedger, RECORD_COLUMNS, RecheckRecord,
    Reservations, certificate_record, digest_column, recheck_record,
};

use super::quotas::tenant_usage_at;
use super::{Postgres, RESERVATION_TTL_SQL, begin, pg, query_error};

impl EpisodeStore for Postgres {
    fn put(&self, digest: &Digest, capability_id: &str, body: &[u8]) -> Result<(), DbError> {
        let (pool, hex, id, body) = (self.pool(), digest.to_hex(), capability_id.to_owned(), body.to_vec());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached(
                    "INSERT INTO episodes (digest, capability_id, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                )
                .await
                .map_err(query_error)?;
            client.execute(&statement, &[&hex, &id, &body]).await.map_err(query_error)?;
            Ok(())
        })
    }

    fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>, DbError> {
        let (pool, hex) = (self.pool(), digest.to_hex());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row =
                client.query_opt("SELECT body FROM episodes WHERE digest = $1", &[&hex]).await.map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
    }

    fn put_certificate(&self, certificate: &Digest, record: &CertificateRecord) -> Result<(), DbError> {
        let (pool, hex, record) = (self.pool(), certificate.to_hex(), record.clone());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached(
                    "INSERT INTO certificates (digest, checker_role, certificate_format, verify_capability_id,
                        capability_id, producer) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                )
                .await
                .map_err(query_error)?;
            let producer = record.producer.to_hex();
            client
                .execute(
                    &statement,
                    &[
                        &hex,
                        &record.checker_role,
                        &record.certificate_format,
                        &record.verify_capability_id,
                        &record.capability_id,
                        &producer,
                    ],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
    }

    fn certificate(&self, certificate: &Digest) -> Result<Option<CertificateRecord>, DbError> {
        let (pool, hex) = (self.pool(), certificate.to_hex());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client
                .query_opt(
                    "SELECT checker_role, certificate_format, verify_capability_id, capability_id, producer
                     FROM certificates WHERE digest = $1",
                    &[&hex],
                )
                .await
                .map_err(query_error)?;
            row.map(|row| certificate_record((row.get(0), row.get(1), row.get(2), row.get(3), row.get(4)))).transpose()
        })
    }

    fn verdicts_by(&self, checker: &Digest) -> Result<Vec<Digest>, DbError> {
        let (pool, named) = (self.pool(), checker.to_string());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let rows = client
                .query(
                    "SELECT digest FROM episodes
                     WHERE convert_from(body, 'UTF8')::json -> 'verification' ->> 'checker_digest' = $1
                     ORDER BY digest",
                    &[&named],
                )
                .await
                .map_err(query_error)?;
            rows.iter()
                .map(|row| {
                    Digest::from_hex(row.get::<_, &str>(0))
                        .map_err(|e| DbError::Corrupt(format!("episodes.digest: {e}")))
                })
                .collect()
        })
    }

    fn put_recheck(&self, recheck: &RecheckRecord) -> Result<(), DbError> {
        let (pool, r) = (self.pool(), recheck.clone());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO rechecks (episode, seq, recalled, recheck, status, checker)
                     SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5 FROM rechecks WHERE episode = $1
                     ON CONFLICT DO NOTHING",
                    &[&r.episode.to_hex(), &r.recalled.to_hex(), &r.recheck.to_hex(), &r.status, &r.checker.to_hex()],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
    }

    fn rechecks(&self, episode: &Digest) -> Result<Vec<RecheckRecord>, DbError> {
        let (pool, hex, episode) = (self.pool(), episode.to_hex(), *episode);
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let rows = client
                .query(
                    "SELECT recalled, recheck, status, checker FROM rechecks WHERE episode = $1 ORDER BY seq",
                    &[&hex],
                )
                .await
                .map_err(query_error)?;
            rows.iter().map(|row| recheck_record(&episode, (row.get(0), row.get(1), row.get(2), row.get(3)))).collect()
        })
    }

    fn grant(&self, tenant: &str, uris: &[String]) -> Result<(), DbError> {
        if uris.is_empty() {
            return Ok(());
        }
        let (pool, tenant, uris) = (self.pool(), tenant.to_owned(), uris.to_vec());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO grants (tenant, uri) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING",
                    &[&tenant, &uris],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
    }

    fn granted(&self, tenant: &str, uri: &str) -> Result<bool, DbError> {
        let (pool, tenant, uri) = (self.pool(), tenant.to_owned(), uri.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = match uri.strip_prefix(crate::contract::EPISODE_URI_PREFIX) {
                Some(hex) => client
                    .query_opt(
                        "SELECT 1 FROM experiment_invocations WHERE episode = $1 AND right(experiment, 17) = $2 LIMIT 1",
                        &[&format!("sha256:{hex}"), &format!("@{tenant}")],
                    )
                    .await
                    .map_err(query_error)?,
                None => client
                    .query_opt("SELECT 1 FROM grants WHERE tenant = $1 AND uri = $2", &[&tenant, &uri])
                    .await
                    .map_err(query_error)?,
            };
            Ok(row.is_some())
        })
    }
}

impl ExperimentStore for Postgres {
    fn spent(&self, experiment: &str) -> Result<Spent, DbError> {
        let (pool, experiment) = (self.pool(), experiment.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client
                .prepare_cached(
                    "SELECT capability_id, COUNT(*), COALESCE(SUM(fuel), 0)::BIGINT FROM experiment_invocations
                     WHERE experiment = $1 AND stop_reason IN ('COMPLETED', 'FAILED', 'CANCELLED')
                     GROUP BY capability_id",
                )
                .await
                .map_err(query_error)?;
            Ok(spent_of(&client.query(&statement, &[&experiment]).await.map_err(query_error)?))
        })
    }

    fn append(&self, experiment: &str, record: &InvocationRecord) -> Result<u64, DbError> {
        let (pool, experiment, record) = (self.pool(), experiment.to_owned(), record.clone());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let statement = client.prepare_cached(INSERT_RECORD).await.map_err(query_error)?;
            // Another host may take the same ordinal first: take the next one.
            let mut attempts = 0;
            loop {
                match insert_record(&client, &statement, &experiment, &record).await {
                    Ok(ordinal) => return Ok(ordinal),
                    Err(e) if attempts < 64 && e.code() == Some(&SqlState::UNIQUE_VIOLATION) => attempts += 1,
                    Err(e) => return Err(query_error(e)),
                }
            }
        })
    }

    fn put_policy(&self, digest: &Digest, body: &str) -> Result<(), DbError> {
        let (pool, digest, body) = (self.pool(), digest.to_string(), body.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client
                .execute(
                    "INSERT INTO experiment_policies (digest, body) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                    &[&digest, &body],
                )
                .await
                .map_err(query_error)?;
            Ok(())
        })
    }

    fn policy(&self, digest: &Digest) -> Result<Option<String>, DbError> {
        let (pool, digest) = (self.pool(), digest.to_string());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client
                .query_opt("SELECT body FROM experiment_policies WHERE digest = $1", &[&digest])
                .await
                .map_err(query_error)?;
            Ok(row.map(|row| row.get(0)))
        })
    }

    fn experiment_keys(&self, pattern: &str, from: &str, limit: usize) -> Result<Vec<String>, DbError> {
        // Keys are ASCII below 0x7f: the range is every key that starts with `from`,
        // read in the byte order of the index migration 8 made.
        let until = format!("{from}\u{7f}");
        let (pool, pattern, from) = (self.pool(), pattern.to_owned(), from.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let scan = crate::store::records::KEY_SCAN_ROWS;
            let rows = client
                .query(
                    "SELECT experiment FROM (SELECT experiment FROM experiment_invocations \
                     WHERE experiment COLLATE \"C\" >= $1 AND experiment COLLATE \"C\" < $2 \
                     ORDER BY experiment COLLATE \"C\" LIMIT $5) window_ \
                     WHERE experiment LIKE $3 ESCAPE '\\' GROUP BY experiment ORDER BY experiment COLLATE \"C\" LIMIT $4",
                    &[&from, &until, &pattern, &(limit as i64), &scan],
                )
                .await
                .map_err(query_error)?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn invocations(&self, experiment: &str) -> Result<Vec<InvocationRecord>, DbError> {
        let (pool, experiment) = (self.pool(), experiment.to_owned());
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let rows = client
                .query(
                    &format!(
                        "SELECT {RECORD_COLUMNS} FROM experiment_invocations WHERE experiment = $1 ORDER BY ordinal"
                    ),
                    &[&experiment],
                )
                .await
                .map_err(query_error)?;
            rows.into_iter()
                .map(|row| {
                    Ok(InvocationRecord {
                        ordinal: row.get::<_, i64>(0) as u64,
                        capability_id: row.get(1),
                        stop_reason: StopReason::parse(row.get(2)),
                        episode: row.get::<_, Option<&str>>(3).map(digest_column).transpose()?,
                        fuel: row.get::<_, i64>(4) as u64,
                        wall_time_us: row.get::<_, i64>(5) as u64,
                        logical_bytes: row.get::<_, i64>(6) as u64,
                        model_visible_bytes: row.get::<_, i64>(7) as u64,
                        wire_bytes: row.get::<_, i64>(8) as u64,
                        policy_digest: digest_column(row.get(9))?,
                    })
                })
                .collect()
        })
    }

    fn reservations(&self) -> Option<&dyn Reservations> {
        Some(self)
    }

    fn tenant_usage(&self, tenant: &str) -> Result<Option<Usage>, DbError> {
        let (pool, tenant) = (self.pool(), tenant.to_owned());
        self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            let (mut usage, now) = tenant_usage_at(&tx, &tenant).await?;
            tx.commit().await.map_err(query_error)?;
            // The day's fuel as of now: a row of an earlier day has spent none today.
            usage.spend(now, 0, 0);
            Ok(Some(usage))
        })
    }

    fn add_tenant_usage(&self, tenant: &str, _day: i64, fuel: u64, stored_bytes: u64) -> Result<(), DbError> {
        // On the database's clock, like every judgement of a shared store.
        QuotaLedger::release(self, tenant, None, (fuel, stored_bytes), false)
    }

    fn quota_ledger(&self) -> Option<&dyn QuotaLedger> {
        Some(self)
    }
}

impl Reservations for Postgres {
    fn reserve(
        &self,
        experiment: &str,
        capability_id: &str,
        budgets: &ExperimentBudgets,
    ) -> Result<Admission, DbError> {
        let (pool, experiment, capability) = (self.pool(), experiment.to_owned(), capability_id.to_owned());
        let budgets = budgets.clone();
        self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            // One admission per experiment at a time, on every host.
            tx.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", &[&experiment])
                .await
                .map_err(query_error)?;
            // One statement, one snapshot: a call is counted as its row or as
            // its reservation, never neither (they swap in one transaction).
            let rows = tx
                .query(
                    &format!(
                        "SELECT capability_id, COUNT(*), COALESCE(SUM(fuel), 0)::BIGINT FROM (
                            SELECT capability_id, fuel FROM experiment_invocations
                            WHERE experiment = $1 AND stop_reason IN ('COMPLETED', 'FAILED', 'CANCELLED')
                            UNION ALL
                            SELECT capability_id, 0 FROM experiment_reservations
                            WHERE experiment = $1 AND created_at > now() - {RESERVATION_TTL_SQL}
                         ) spend GROUP BY capability_id"
                    ),
                    &[&experiment],
                )
                .await
                .map_err(query_error)?;
            let mut spent = spent_of(&rows);
            if let refused @ Admission::Refused { .. } = judge(&mut spent, &capability, &budgets) {
                tx.rollback().await.map_err(query_error)?;
                return Ok(refused);
            }
            let id = uuid::Uuid::new_v4().simple().to_string();
            tx.execute(
                "INSERT INTO experiment_reservations (id, experiment, capability_id) VALUES ($1, $2, $3)",
                &[&id, &experiment, &capability],
            )
            .await
            .map_err(query_error)?;
            tx.commit().await.map_err(query_error)?;
            Ok(Admission::Admitted { reservation: Some(Reservation(id)) })
        })
    }

    fn append_reserved(
        &self,
        experiment: &str,
        record: &InvocationRecord,
        reservation: &Reservation,
    ) -> Result<u64, DbError> {
        let (pool, experiment, record, reservation) =
            (self.pool(), experiment.to_owned(), record.clone(), reservation.0.clone());
        self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let mut attempts = 0;
            loop {
                let tx = begin(&mut client).await?;
                tx.execute("DELETE FROM experiment_reservations WHERE id = $1", &[&reservation])
                    .await
                    .map_err(query_error)?;
                let statement = tx.prepare_cached(INSERT_RECORD).await.map_err(query_error)?;
                match insert_record(&tx, &statement, &experiment, &record).await {
                    Ok(ordinal) => {
                        tx.commit().await.map_err(query_error)?;
                        return Ok(ordinal);
                    }
                    // Another host took the ordinal: the transaction is void, start again.
                    Err(e) if attempts < 64 && e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                        tx.rollback().await.map_err(query_error)?;
                        attempts += 1;
                    }
                    Err(e) => return Err(query_error(e)),
                }
            }
        })
    }
}

/// Spend from `(capability_id, count, fuel)` rows.
fn spent_of(rows: &[tokio_postgres::Row]) -> Spent {
    let mut spent = Spent::default();
    for row in rows {
        let (id, count, fuel): (String, i64, i64) = (row.get(0), row.get(1), row.get(2));
        spent.invocations.insert(id, count.max(0) as u64);
        spent.fuel = spent.fuel.saturating_add(fuel.max(0) as u64);
    }
    spent
}

/// An invocation record with the experiment's next ordinal, in one statement.
const INSERT_RECORD: &str = "INSERT INTO experiment_invocations (experiment, ordinal, capability_id, stop_reason,
        episode, fuel, wall_time_us, logical_bytes, model_visible_bytes, wire_bytes, policy_digest)
     SELECT $1, COALESCE(MAX(ordinal), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9, $10
     FROM experiment_invocations WHERE experiment = $1
     RETURNING ordinal";

/// Run [`INSERT_RECORD`] (prepared by the caller, so it is cached per connection).
async fn insert_record(
    client: &impl deadpool_postgres::GenericClient,
    statement: &tokio_postgres::Statement,
    experiment: &str,
    record: &InvocationRecord,
) -> Result<u64, tokio_postgres::Error> {
    let numbers = [
        record.fuel as i64,
        record.wall_time_us as i64,
        record.logical_bytes as i64,
        record.model_visible_bytes as i64,
        record.wire_bytes as i64,
    ];
    let row = client
        .query_one(
            statement,
            &[
                &experiment,
                &record.capability_id,
                &record.stop_reason.to_string(),
                &record.episode.map(|d| d.to_string()),
                &numbers[0],
                &numbers[1],
                &numbers[2],
                &numbers[3],
                &numbers[4],
                &record.policy_digest.to_string(),
            ],
        )
        .await?;
    Ok(row.get::<_, i64>(0) as u64)
}
