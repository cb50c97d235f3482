//! Quotas per tenant (`[quotas]` in `policy.toml`): invocations per minute
//! (a token bucket), fuel per UTC day, calls in flight, and stored bytes.
//! A call over a quota is refused before it runs with `QUOTA_EXCEEDED`,
//! naming the quota, its limit and, where waiting helps, `retry_after` in
//! seconds; nothing is stored for it.
//!
//! Quotas bind tenants, the callers an authenticated HTTP deployment names
//! ([`crate::auth::Principal::tenant`]). The operator (stdio, the CLI, HTTP
//! without authentication) has none.
//!
//! One judgement ([`judge`]) serves both stores: a local store keeps the
//! bucket and the calls in flight in memory and the day's fuel and stored
//! bytes in its database; a shared store judges under a per-tenant lock
//! with the database's clock, so a quota is exact across hosts.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Milliseconds in a UTC day.
const DAY_MS: i64 = 86_400_000;

/// The operator's quotas: one for every tenant, and any tenant's own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quotas {
    /// The quota of a tenant not named in `tenants`.
    #[serde(default, skip_serializing_if = "Quota::is_unlimited")]
    pub default: Quota,
    /// A tenant's own quota, in place of the default (whole: a field left
    /// out is unlimited for that tenant).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tenants: BTreeMap<String, Quota>,
}

impl Quotas {
    /// Whether no tenant has any quota.
    pub fn is_unlimited(&self) -> bool {
        self.default.is_unlimited() && self.tenants.values().all(Quota::is_unlimited)
    }

    /// Whether any tenant's stored bytes are limited.
    pub fn of_any_storage(&self) -> bool {
        self.default.stored_bytes.is_some() || self.tenants.values().any(|q| q.stored_bytes.is_some())
    }

    /// The quota of `tenant`.
    pub fn of(&self, tenant: &str) -> &Quota {
        self.tenants.get(tenant).unwrap_or(&self.default)
    }
}

/// One tenant's quota; an absent field is unlimited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// Invocations admitted per minute: a bucket of this many, refilled
    /// continuously at this rate per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocations_per_minute: Option<u64>,
    /// Fuel per UTC day. Admission needs some left after what calls in
    /// flight reserved (each its fuel budget, until it is released with what
    /// it spent): calls at once pass the line by at most one call's budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_per_day: Option<u64>,
    /// Calls of the tenant running at once (on every host together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrent_calls: Option<u64>,
    /// Bytes the tenant's calls, workspace writes and uploads have stored:
    /// the episodes (input and complete result), the written workspace
    /// requests and uploaded files. A call is admitted while some is left
    /// after what is reserved (each call in flight reserves its input and its
    /// output budget), so calls at once pass the line by at most one call's
    /// reservation; an upload or a workspace write reserves its length first
    /// and never passes it. It does not recover by waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_bytes: Option<u64>,
}

impl Quota {
    /// Whether this quota limits nothing.
    pub fn is_unlimited(&self) -> bool {
        *self == Quota::default()
    }
}

/// Which quota refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::Display)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Limit {
    InvocationsPerMinute,
    FuelPerDay,
    ConcurrentCalls,
    StoredBytes,
}

/// A refusal: the quota, its limit, and when a retry may succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exceeded {
    pub limit: Limit,
    pub value: u64,
    /// Seconds until a retry may be admitted; `None` when waiting does not help.
    pub retry_after: Option<u64>,
}

impl Exceeded {
    /// What the refusal says.
    pub fn message(&self) -> String {
        let what = match self.limit {
            Limit::InvocationsPerMinute => format!("{} invocations per minute", self.value),
            Limit::FuelPerDay => format!("{} fuel per day", self.value),
            Limit::ConcurrentCalls => format!("{} calls at once", self.value),
            Limit::StoredBytes => format!("{} stored bytes", self.value),
        };
        format!("the tenant's quota of {what} is spent")
    }
}

/// A tenant's usage, as the judgement sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    /// Tokens in the invocation bucket (infinite: never judged, so full).
    pub tokens: f64,
    /// When the bucket was last refilled, ms since the epoch.
    pub refilled_ms: i64,
    /// The UTC day (days since the epoch) `fuel` counts.
    pub day: i64,
    /// Fuel spent that day.
    pub fuel: u64,
    /// Bytes stored, ever.
    pub stored_bytes: u64,
    /// Calls admitted and not yet released.
    pub in_flight: u64,
    /// The fuel budgets of those calls, reserved until each is released
    /// with what it spent: fuel per day is judged on spent plus reserved.
    pub reserved_fuel: u64,
    /// The bytes reserved by calls, uploads and workspace writes in flight:
    /// stored bytes are judged on stored plus reserved.
    pub reserved_bytes: u64,
}

/// What an admitted call reserves until it is released with what it spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reserve {
    /// Its fuel budget.
    pub fuel: u64,
    /// What it may store: its input and its output budget.
    pub bytes: u64,
}

/// The bytes a store outside a call (an upload, a workspace write) asks to reserve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storing {
    /// Exactly this many (a declared length, a request's size).
    Exactly(u64),
    /// At most this many (a body of unknown length): as many of them as are left.
    AtMost(u64),
}

impl Usage {
    /// The usage of a tenant seen for the first time at `now_ms`.
    pub fn fresh(now_ms: i64) -> Usage {
        Usage {
            tokens: f64::INFINITY,
            refilled_ms: now_ms,
            day: now_ms.div_euclid(DAY_MS),
            fuel: 0,
            stored_bytes: 0,
            in_flight: 0,
            reserved_fuel: 0,
            reserved_bytes: 0,
        }
    }

    /// Add what a finished call spent (on `now_ms`'s day).
    pub fn spend(&mut self, now_ms: i64, fuel: u64, stored_bytes: u64) {
        self.roll(now_ms);
        self.fuel = self.fuel.saturating_add(fuel);
        self.stored_bytes = self.stored_bytes.saturating_add(stored_bytes);
    }

    fn roll(&mut self, now_ms: i64) {
        let today = now_ms.div_euclid(DAY_MS);
        if today != self.day {
            self.day = today;
            self.fuel = 0;
        }
    }
}

/// Admit one call under `quota` at `now_ms` (taking a token, a place in
/// flight and the reservation `reserve`), or say which quota refuses it.
/// Fuel per day and stored bytes admit a call while what was spent and what
/// is reserved stay under the limit, so calls at once never pass it by more
/// than one call's reservation. The judgement of both stores.
pub fn judge(usage: &mut Usage, quota: &Quota, now_ms: i64, reserve: Reserve) -> Result<(), Exceeded> {
    usage.roll(now_ms);
    if let Some(rate) = quota.invocations_per_minute {
        let elapsed = (now_ms - usage.refilled_ms).max(0) as f64;
        usage.tokens = (usage.tokens + elapsed * rate as f64 / 60_000.0).min(rate as f64);
        usage.refilled_ms = now_ms;
    }
    if let Some(limit) = quota.concurrent_calls
        && usage.in_flight >= limit
    {
        return Err(Exceeded { limit: Limit::ConcurrentCalls, value: limit, retry_after: Some(1) });
    }
    if let Some(limit) = quota.stored_bytes
        && usage.stored_bytes.saturating_add(usage.reserved_bytes) >= limit
    {
        return Err(stored_bytes_refusal(usage, limit));
    }
    if let Some(limit) = quota.fuel_per_day
        && usage.fuel.saturating_add(usage.reserved_fuel) >= limit
    {
        let until_tomorrow = (usage.day + 1) * DAY_MS - now_ms;
        let retry_after = Some((until_tomorrow as u64).div_ceil(1000).max(1));
        return Err(Exceeded { limit: Limit::FuelPerDay, value: limit, retry_after });
    }
    if let Some(rate) = quota.invocations_per_minute {
        if usage.tokens < 1.0 {
            let wait_ms = if rate == 0 { None } else { Some((1.0 - usage.tokens) * 60_000.0 / rate as f64) };
            let retry_after = wait_ms.map(|ms| ((ms / 1000.0).ceil() as u64).max(1));
            return Err(Exceeded { limit: Limit::InvocationsPerMinute, value: rate, retry_after });
        }
        usage.tokens -= 1.0;
    }
    usage.in_flight += 1;
    usage.reserved_fuel = usage.reserved_fuel.saturating_add(reserve.fuel);
    usage.reserved_bytes = usage.reserved_bytes.saturating_add(reserve.bytes);
    Ok(())
}

/// Reserve room under `quota` for bytes stored outside a call: the bytes
/// reserved (at most what is left, for [`Storing::AtMost`]), or the refusal
/// when none is left or a length is declared beyond it. What is stored this
/// way never passes the limit. The judgement of both stores.
pub fn judge_storage(usage: &mut Usage, quota: &Quota, storing: Storing) -> Result<u64, Exceeded> {
    let reserved = match quota.stored_bytes {
        None => match storing {
            Storing::Exactly(n) | Storing::AtMost(n) => n,
        },
        Some(limit) => {
            let left = limit.saturating_sub(usage.stored_bytes.saturating_add(usage.reserved_bytes));
            match storing {
                Storing::Exactly(n) if n <= left && left > 0 => n,
                Storing::AtMost(n) if left > 0 => n.min(left),
                _ => return Err(stored_bytes_refusal(usage, limit)),
            }
        }
    };
    usage.reserved_bytes = usage.reserved_bytes.saturating_add(reserved);
    Ok(reserved)
}

/// The refusal of the stored-bytes quota `limit` (waiting does not help).
pub fn stored_bytes_spent(limit: u64) -> Exceeded {
    Exceeded { limit: Limit::StoredBytes, value: limit, retry_after: None }
}

/// The refusal of the stored-bytes quota `limit` under `usage`: for good
/// when what is stored reaches it, otherwise a retry in a second (calls,
/// uploads or writes in flight hold the rest, and give back what they do
/// not store).
fn stored_bytes_refusal(usage: &Usage, limit: u64) -> Exceeded {
    let retry_after = (usage.stored_bytes < limit).then_some(1);
    Exceeded { retry_after, ..stored_bytes_spent(limit) }
}

/// Milliseconds since the epoch on this machine's clock.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_of_n_admits_n_then_one_per_refill() {
        let quota = Quota { invocations_per_minute: Some(3), ..Quota::default() };
        let mut usage = Usage::fresh(0);
        for _ in 0..3 {
            judge(&mut usage, &quota, 0, Reserve::default()).expect("within the bucket");
        }
        let refused = judge(&mut usage, &quota, 0, Reserve::default()).unwrap_err();
        assert_eq!((refused.limit, refused.retry_after), (Limit::InvocationsPerMinute, Some(20)));
        assert!(judge(&mut usage, &quota, 19_999, Reserve::default()).is_err(), "one token takes 20 s at 3 per minute");
        judge(&mut usage, &quota, 20_000, Reserve::default()).expect("refilled one");
        assert!(judge(&mut usage, &quota, 20_000, Reserve::default()).is_err());
        // The bucket never holds more than its size.
        for _ in 0..3 {
            judge(&mut usage, &quota, 3_600_000, Reserve::default()).expect("full again");
        }
        assert!(judge(&mut usage, &quota, 3_600_000, Reserve::default()).is_err());
    }

    #[test]
    fn fuel_per_day_recovers_at_utc_midnight_and_stored_bytes_never() {
        let quota = Quota { fuel_per_day: Some(100), stored_bytes: Some(1_000), ..Quota::default() };
        let noon = 10 * DAY_MS + DAY_MS / 2;
        let mut usage = Usage::fresh(noon);
        judge(&mut usage, &quota, noon, Reserve::default()).unwrap();
        usage.in_flight -= 1;
        usage.spend(noon, 150, 10);
        let refused = judge(&mut usage, &quota, noon, Reserve::default()).unwrap_err();
        assert_eq!((refused.limit, refused.retry_after), (Limit::FuelPerDay, Some(43_200)));
        judge(&mut usage, &quota, 11 * DAY_MS, Reserve::default()).expect("a new day");
        usage.in_flight -= 1;
        usage.spend(11 * DAY_MS, 0, 990);
        let refused = judge(&mut usage, &quota, 30 * DAY_MS, Reserve::default()).unwrap_err();
        assert_eq!((refused.limit, refused.retry_after), (Limit::StoredBytes, None));
    }

    fn fuel(fuel: u64) -> Reserve {
        Reserve { fuel, bytes: 0 }
    }

    #[test]
    fn fuel_in_flight_is_reserved_until_it_is_spent() {
        let quota = Quota { fuel_per_day: Some(100), ..Quota::default() };
        let mut usage = Usage::fresh(0);
        judge(&mut usage, &quota, 0, fuel(60)).expect("60 reserved of 100");
        judge(&mut usage, &quota, 0, fuel(60)).expect("60 reserved is under 100");
        assert_eq!(judge(&mut usage, &quota, 0, fuel(60)).unwrap_err().limit, Limit::FuelPerDay, "120 reserved");
        // The first spent 10 of its 60: 10 spent and 60 reserved leave room for one more.
        usage.in_flight -= 1;
        usage.reserved_fuel -= 60;
        usage.spend(0, 10, 0);
        judge(&mut usage, &quota, 0, fuel(60)).expect("70 of 100");
        assert_eq!(judge(&mut usage, &quota, 0, fuel(1)).unwrap_err().limit, Limit::FuelPerDay);
    }

    #[test]
    fn stored_bytes_in_flight_are_reserved_and_uploads_never_pass_the_line() {
        let quota = Quota { stored_bytes: Some(100), ..Quota::default() };
        let mut usage = Usage::fresh(0);
        // A call reserves its input and output budget; calls are admitted while some is left.
        judge(&mut usage, &quota, 0, Reserve { fuel: 0, bytes: 60 }).expect("60 of 100 reserved");
        judge(&mut usage, &quota, 0, Reserve { fuel: 0, bytes: 60 }).expect("60 reserved is under 100");
        // Held by calls in flight, not stored: worth a retry in a second.
        let held = Exceeded { retry_after: Some(1), ..stored_bytes_spent(100) };
        assert_eq!(judge(&mut usage, &quota, 0, Reserve::default()), Err(held.clone()));
        assert_eq!(judge_storage(&mut usage, &quota, Storing::AtMost(1)), Err(held.clone()));
        usage.reserved_bytes = 0;
        usage.spend(0, 0, 70);
        // 30 left: a declared 31 is refused whole, a declared 30 reserved, then nothing is left.
        assert_eq!(judge_storage(&mut usage, &quota, Storing::Exactly(31)), Err(held));
        assert_eq!(judge_storage(&mut usage, &quota, Storing::Exactly(30)), Ok(30));
        assert!(judge_storage(&mut usage, &quota, Storing::AtMost(1_000)).is_err());
        assert!(judge_storage(&mut usage, &quota, Storing::Exactly(0)).is_err(), "a spent quota takes nothing");
        usage.reserved_bytes = 0;
        usage.spend(0, 0, 30);
        assert_eq!(judge_storage(&mut usage, &quota, Storing::AtMost(1)), Err(stored_bytes_spent(100)), "for good");
        usage.stored_bytes = 70;
        // A body of unknown length gets what is left.
        usage.reserved_bytes = 10;
        assert_eq!(judge_storage(&mut usage, &quota, Storing::AtMost(1_000)), Ok(20));
        assert_eq!(usage.reserved_bytes, 30);
        // Unlimited: reserved as asked.
        let mut free = Usage::fresh(0);
        assert_eq!(judge_storage(&mut free, &Quota::default(), Storing::AtMost(7)), Ok(7));
    }

    #[test]
    fn calls_in_flight_are_bounded_and_free_their_place() {
        let quota = Quota { concurrent_calls: Some(2), ..Quota::default() };
        let mut usage = Usage::fresh(0);
        judge(&mut usage, &quota, 0, Reserve::default()).unwrap();
        judge(&mut usage, &quota, 0, Reserve::default()).unwrap();
        assert_eq!(judge(&mut usage, &quota, 0, Reserve::default()).unwrap_err().limit, Limit::ConcurrentCalls);
        usage.in_flight -= 1;
        judge(&mut usage, &quota, 0, Reserve::default()).expect("a place was freed");
    }

    #[test]
    fn a_named_tenant_has_its_own_quota_whole() {
        let text = "[default]\ninvocations_per_minute = 10\nfuel_per_day = 5\n[tenants.big]\nfuel_per_day = 50\n";
        let quotas: Quotas = toml::from_str(text).unwrap();
        assert_eq!(quotas.of("small").invocations_per_minute, Some(10));
        assert_eq!(quotas.of("big"), &Quota { fuel_per_day: Some(50), ..Quota::default() });
        assert!(toml::from_str::<Quotas>("[default]\nfuel_per_hour = 1\n").is_err(), "unknown fields are refused");
    }
}
