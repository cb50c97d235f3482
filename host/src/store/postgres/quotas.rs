//! Tenants' quotas in the shared store: usage, the bucket and the holds
//! in flight (`tenant_calls`), judged under a per-tenant advisory lock on
//! the database's clock ([`QuotaLedger`]).

use crate::quotas::{Exceeded, Quota, Reserve, Storing, Usage, judge as judge_quota, judge_storage};
use crate::store::{DbError, QuotaLedger};

use super::{Postgres, RESERVATION_TTL_SQL, begin, pg, query_error};

/// A tenant's usage and bucket, and the database's clock in milliseconds since the epoch.
const TENANT_USAGE: &str = "SELECT u.day, u.fuel, u.stored_bytes, b.tokens, b.refilled_ms,
        (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT
    FROM (SELECT $1::TEXT AS tenant) one
    LEFT JOIN tenant_usage u ON u.tenant = one.tenant
    LEFT JOIN tenant_buckets b ON b.tenant = one.tenant";

/// Write a tenant's usage row whole.
const PUT_TENANT_USAGE: &str = "INSERT INTO tenant_usage (tenant, day, fuel, stored_bytes) VALUES ($1, $2, $3, $4)
    ON CONFLICT (tenant) DO UPDATE SET day = excluded.day, fuel = excluded.fuel, stored_bytes = excluded.stored_bytes";

/// Write a tenant's bucket whole.
const PUT_TENANT_BUCKET: &str = "INSERT INTO tenant_buckets (tenant, tokens, refilled_ms) VALUES ($1, $2, $3)
    ON CONFLICT (tenant) DO UPDATE SET tokens = excluded.tokens, refilled_ms = excluded.refilled_ms";

/// The tenant's usage (fresh when it has no row) and the database's clock.
pub(super) async fn tenant_usage_at(
    tx: &deadpool_postgres::Transaction<'_>,
    tenant: &str,
) -> Result<(Usage, i64), DbError> {
    let row = tx.query_one(TENANT_USAGE, &[&tenant]).await.map_err(query_error)?;
    let now: i64 = row.get(5);
    let mut usage = Usage::fresh(now);
    if let Some(day) = row.get::<_, Option<i64>>(0) {
        usage.day = day;
        usage.fuel = row.get::<_, i64>(1).max(0) as u64;
        usage.stored_bytes = row.get::<_, i64>(2).max(0) as u64;
    }
    if let Some(tokens) = row.get::<_, Option<f64>>(3) {
        usage.tokens = tokens;
        usage.refilled_ms = row.get(4);
    }
    Ok((usage, now))
}

async fn put_tenant_usage(tx: &deadpool_postgres::Transaction<'_>, tenant: &str, usage: &Usage) -> Result<(), DbError> {
    tx.execute(PUT_TENANT_USAGE, &[&tenant, &usage.day, &clamp(usage.fuel), &clamp(usage.stored_bytes)])
        .await
        .map_err(query_error)?;
    if usage.tokens.is_finite() {
        tx.execute(PUT_TENANT_BUCKET, &[&tenant, &usage.tokens, &usage.refilled_ms]).await.map_err(query_error)?;
    }
    Ok(())
}

/// One judgement per tenant at a time, on every host.
async fn lock_tenant(tx: &deadpool_postgres::Transaction<'_>, tenant: &str) -> Result<(), DbError> {
    tx.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 1))", &[&tenant]).await.map_err(query_error)?;
    Ok(())
}

/// A count as a BIGINT column holds it.
fn clamp(n: u64) -> i64 {
    n.min(i64::MAX as u64) as i64
}

/// A tenant's usage with what its holds in flight reserve, under its lock.
async fn usage_in_flight(tx: &deadpool_postgres::Transaction<'_>, tenant: &str) -> Result<(Usage, i64), DbError> {
    let (mut usage, now) = tenant_usage_at(tx, tenant).await?;
    let in_flight = tx
        .query_one(
            &format!(
                "SELECT COUNT(*) FILTER (WHERE is_call), COALESCE(SUM(fuel), 0)::BIGINT,
                        COALESCE(SUM(bytes), 0)::BIGINT
                 FROM tenant_calls WHERE tenant = $1 AND created_at > now() - {RESERVATION_TTL_SQL}"
            ),
            &[&tenant],
        )
        .await
        .map_err(query_error)?;
    usage.in_flight = in_flight.get::<_, i64>(0).max(0) as u64;
    usage.reserved_fuel = in_flight.get::<_, i64>(1).max(0) as u64;
    usage.reserved_bytes = in_flight.get::<_, i64>(2).max(0) as u64;
    Ok((usage, now))
}

/// Insert a hold's row: its id.
async fn hold_row(
    tx: &deadpool_postgres::Transaction<'_>,
    tenant: &str,
    reserve: Reserve,
    is_call: bool,
) -> Result<String, DbError> {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (fuel, bytes) = (clamp(reserve.fuel), clamp(reserve.bytes));
    tx.execute(
        "INSERT INTO tenant_calls (id, tenant, fuel, bytes, is_call) VALUES ($1, $2, $3, $4, $5)",
        &[&id, &tenant, &fuel, &bytes, &is_call],
    )
    .await
    .map_err(query_error)?;
    Ok(id)
}

impl Postgres {
    /// One judgement under the tenant's row lock, across hosts: `judge`
    /// looks at its usage (with what is in flight) and says what to reserve,
    /// or why not; a hold row is written for what it reserves. A call's
    /// judgement also spends a token of its bucket, so its usage is written back.
    fn judged_hold<T: Send + 'static>(
        &self,
        tenant: &str,
        is_call: bool,
        judge: impl FnOnce(&mut Usage, i64) -> Result<(Reserve, T), Exceeded> + Send + 'static,
    ) -> Result<Result<(String, T), Exceeded>, DbError> {
        let (pool, tenant) = (self.pool(), tenant.to_owned());
        self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            lock_tenant(&tx, &tenant).await?;
            let (mut usage, now) = usage_in_flight(&tx, &tenant).await?;
            let (reserve, judged) = match judge(&mut usage, now) {
                Ok(judged) => judged,
                Err(exceeded) => {
                    tx.rollback().await.map_err(query_error)?;
                    return Ok(Err(exceeded));
                }
            };
            if is_call {
                put_tenant_usage(&tx, &tenant, &usage).await?;
            }
            let id = hold_row(&tx, &tenant, reserve, is_call).await?;
            tx.commit().await.map_err(query_error)?;
            Ok(Ok((id, judged)))
        })
    }
}

impl QuotaLedger for Postgres {
    fn admit(&self, tenant: &str, quota: &Quota, reserve: Reserve) -> Result<Result<String, Exceeded>, DbError> {
        let quota = quota.clone();
        let judged = self.judged_hold(tenant, true, move |usage, now| {
            judge_quota(usage, &quota, now, reserve).map(|()| (reserve, ()))
        })?;
        Ok(judged.map(|(id, ())| id))
    }

    fn reserve_storage(
        &self,
        tenant: &str,
        quota: &Quota,
        storing: Storing,
    ) -> Result<Result<(String, u64), Exceeded>, DbError> {
        let quota = quota.clone();
        self.judged_hold(tenant, false, move |usage, _| {
            judge_storage(usage, &quota, storing).map(|bytes| (Reserve { fuel: 0, bytes }, bytes))
        })
    }

    fn release(&self, tenant: &str, call: Option<&str>, spent: (u64, u64), refund: bool) -> Result<(), DbError> {
        let (fuel, stored_bytes) = spent;
        let (pool, tenant, call) = (self.pool(), tenant.to_owned(), call.map(str::to_owned));
        self.block(async move {
            let mut client = pool.get().await.map_err(pg)?;
            let tx = begin(&mut client).await?;
            lock_tenant(&tx, &tenant).await?;
            if let Some(call) = &call {
                tx.execute("DELETE FROM tenant_calls WHERE id = $1", &[call]).await.map_err(query_error)?;
            }
            if fuel > 0 || stored_bytes > 0 || refund {
                let (mut usage, now) = tenant_usage_at(&tx, &tenant).await?;
                usage.spend(now, fuel, stored_bytes);
                if refund {
                    usage.tokens += 1.0;
                }
                put_tenant_usage(&tx, &tenant, &usage).await?;
            }
            tx.commit().await.map_err(query_error)?;
            Ok(())
        })
    }
}
