//! Connections and fair shares at the edge.
//!
//! A connection is *unproven* from its accept until a request on it has
//! passed the edge: with authentication on, a request to a guarded route
//! that authenticated; without, any whole request head. Unproven connections
//! have a small pool of their own ([`HttpLimits::max_unproven_connections`])
//! and a short deadline ([`HttpLimits::first_request_timeout`]): when the
//! pool is full the oldest unproven connection is closed to make room, so
//! sockets that never send a request (or never authenticate) cannot keep
//! anyone else from connecting, and are gone after the deadline anyway. A
//! proven connection takes a place among [`HttpLimits::max_connections`]
//! and, when a tenant proved it, among its tenant's
//! [`HttpLimits::max_connections_per_tenant`]; beyond either it is answered
//! once and closed.
//!
//! The tenant's other shares are counted here too: requests being answered
//! ([`HttpLimits::max_in_flight_per_tenant`], bodies being received
//! included) and MCP sessions (`sessions.rs`).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::envelope;
use crate::contract::ErrorType;

/// What one HTTP server takes on at once, and how long it waits for a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Proven connections (a request on them passed the edge); a connection
    /// proven beyond them is answered 503 and closed.
    pub max_connections: usize,
    /// Connections not proven yet; beyond them the oldest is closed to make room.
    pub max_unproven_connections: usize,
    /// Time a new connection has to be proven (send a request that passes
    /// the edge: authenticated, when authentication is on); then it is closed.
    pub first_request_timeout: Duration,
    /// Requests being answered (an open SSE stream counts until it ends);
    /// beyond them a 503 `unavailable` envelope at once.
    pub max_in_flight: usize,
    /// MCP sessions; an `initialize` beyond them is a 503 envelope.
    pub max_sessions: usize,
    /// Proven connections of one tenant; beyond them a 429 envelope and the connection closed.
    pub max_connections_per_tenant: usize,
    /// Requests of one tenant being answered (bodies being received
    /// included); beyond them a 429 envelope.
    pub max_in_flight_per_tenant: usize,
    /// MCP sessions one tenant holds on this server; an `initialize` beyond them is a 429 envelope.
    pub max_sessions_per_tenant: usize,
    /// Time a client has to send a request's headers (then the connection is
    /// closed; a kept-alive connection left idle too), and then its body
    /// (then a 408 envelope).
    pub client_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: 1024,
            max_unproven_connections: 64,
            first_request_timeout: Duration::from_secs(2),
            max_in_flight: 256,
            max_sessions: 1024,
            max_connections_per_tenant: 128,
            max_in_flight_per_tenant: 32,
            max_sessions_per_tenant: 64,
            client_timeout: Duration::from_secs(10),
        }
    }
}

/// Move a body clock past a body of `bytes` read from `now` on (only large bodies cost).
fn advance(clock: &mut Option<Instant>, now: Instant, bytes: usize) {
    if bytes > super::BULK_BODY_BYTES {
        let cost = Duration::from_secs_f64(bytes as f64 / BODY_BYTES_PER_SECOND as f64);
        *clock = Some(clock.map_or(now, |c| c.max(now)) + cost);
    }
}

/// Every connection of a server, and each tenant's share of them and of its requests.
pub(super) struct Connections {
    limits: HttpLimits,
    /// One permit per proven connection.
    proven: Arc<Semaphore>,
    /// Unproven connections, oldest first (some may have been proven or closed since).
    unproven: Mutex<VecDeque<Weak<Connection>>>,
    /// Per tenant: its proven connections and its requests being answered.
    tenants: Mutex<HashMap<String, Share>>,
    /// Per tenant: when its next large body may be read ([`BODY_BYTES_PER_SECOND`]).
    body_clocks: Mutex<HashMap<String, Instant>>,
}

/// Large request bodies (above [`super::BULK_BODY_BYTES`]) one client sends
/// are read at this many bytes per second on average: the protocol thread
/// reads every body, and a client sending megabyte bodies back to back would
/// otherwise take most of it from everyone else. The first is read at once.
pub(super) const BODY_BYTES_PER_SECOND: u64 = 32 << 20;

/// What one tenant holds.
#[derive(Default)]
struct Share {
    connections: usize,
    in_flight: usize,
    uploads: usize,
}

impl Share {
    fn is_empty(&self) -> bool {
        self.connections == 0 && self.in_flight == 0 && self.uploads == 0
    }
}

/// A tenant's uploads received at once (of the server's `uploads::MAX_UPLOADS`).
pub(super) const MAX_UPLOADS_PER_TENANT: usize = 2;

/// One connection: closed when `close` is cancelled (evicted, or unproven past its deadline).
pub(super) struct Connection {
    owner: Arc<Connections>,
    pub(super) close: CancellationToken,
    proven: AtomicBool,
    /// Its place among proven connections and the tenant that proved it.
    held: Mutex<Option<(OwnedSemaphorePermit, Option<String>)>>,
    /// Without a tenant: when its next large body may be read.
    body_clock: Mutex<Option<Instant>>,
}

/// Why a connection or a request gets no place.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum NoRoom {
    /// Every proven connection's place is taken.
    Connections(usize),
    /// The tenant holds its connections.
    TenantConnections(usize),
    /// The tenant has its requests in flight.
    TenantInFlight(usize),
    /// The tenant has its uploads being received.
    TenantUploads(usize),
}

impl NoRoom {
    /// The answer: 429 for a tenant's own share (retry after a second), 503 for the server's.
    pub(super) fn response(&self, request_id: &str) -> Response {
        let mut response = match self {
            NoRoom::Connections(_) => {
                envelope(StatusCode::SERVICE_UNAVAILABLE, ErrorType::Unavailable, self.message(), request_id)
            }
            _ => envelope(StatusCode::TOO_MANY_REQUESTS, ErrorType::QuotaExceeded, self.message(), request_id),
        };
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    }

    /// What the refusal says.
    pub(super) fn message(&self) -> String {
        match self {
            NoRoom::Connections(n) => format!("the server holds its limit of {n} connections; retry shortly"),
            NoRoom::TenantConnections(n) => {
                format!("the tenant holds its limit of {n} connections to this server; reuse one or close one")
            }
            NoRoom::TenantInFlight(n) => {
                format!("the tenant has its limit of {n} requests in flight on this server; retry when one is answered")
            }
            NoRoom::TenantUploads(n) => {
                format!(
                    "the tenant has its limit of {n} uploads being received by this server; retry when one is stored"
                )
            }
        }
    }
}

impl Connections {
    pub(super) fn new(limits: HttpLimits) -> Arc<Connections> {
        Arc::new(Connections {
            limits,
            proven: Arc::new(Semaphore::new(limits.max_connections)),
            unproven: Mutex::new(VecDeque::new()),
            tenants: Mutex::new(HashMap::new()),
            body_clocks: Mutex::new(HashMap::new()),
        })
    }

    /// A connection just accepted, unproven: when the unproven pool is full,
    /// the oldest unproven connection is closed to make room.
    pub(super) fn accept(self: &Arc<Self>) -> Arc<Connection> {
        let connection = Arc::new(Connection {
            owner: Arc::clone(self),
            close: CancellationToken::new(),
            proven: AtomicBool::new(false),
            held: Mutex::new(None),
            body_clock: Mutex::new(None),
        });
        let mut unproven = self.unproven.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = |c: &Weak<Connection>| {
            c.upgrade().is_some_and(|c| !c.proven.load(Ordering::Acquire) && !c.close.is_cancelled())
        };
        let room = self.limits.max_unproven_connections.max(1);
        if unproven.len() >= room {
            unproven.retain(waiting);
        }
        while unproven.len() >= room {
            // Proven meanwhile (on another thread), it is no longer the pool's to close.
            if let Some(oldest) = unproven.pop_front().filter(waiting).and_then(|c| c.upgrade()) {
                oldest.close.cancel();
            }
        }
        unproven.push_back(Arc::downgrade(&connection));
        connection
    }

    /// Proven connections' places given back by closed connections, once all are back.
    pub(super) async fn all_closed(&self) {
        let _ = self.proven.acquire_many(self.limits.max_connections as u32).await;
    }

    /// A place among the tenant's requests in flight (and, for an upload,
    /// among its uploads), given back when dropped.
    pub(super) fn enter(self: &Arc<Self>, tenant: &str, upload: bool) -> Result<TenantRequest, NoRoom> {
        let limit = self.limits.max_in_flight_per_tenant;
        let mut tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        let share = tenants.entry(tenant.to_owned()).or_default();
        let refused = if share.in_flight >= limit {
            Some(NoRoom::TenantInFlight(limit))
        } else if upload && share.uploads >= MAX_UPLOADS_PER_TENANT {
            Some(NoRoom::TenantUploads(MAX_UPLOADS_PER_TENANT))
        } else {
            None
        };
        if let Some(refused) = refused {
            if share.is_empty() {
                tenants.remove(tenant);
            }
            return Err(refused);
        }
        share.in_flight += 1;
        share.uploads += usize::from(upload);
        Ok(TenantRequest { owner: Arc::clone(self), tenant: tenant.to_owned(), upload })
    }

    /// The client's turn to have a body read — the client is `tenant`, or
    /// without one the connection: how long it waits first (until the large
    /// bodies it sent before are paid for at [`BODY_BYTES_PER_SECOND`]), or
    /// `Err` with that wait when it is longer than `longest`. A large
    /// `declared` length is paid for now, so bodies sent at once wait their
    /// turns; one of unknown length is paid for once read ([`Connections::body_read`]).
    pub(super) fn body_turn(
        &self,
        tenant: Option<&str>,
        connection: Option<&Connection>,
        declared: Option<usize>,
        longest: Duration,
    ) -> Result<Duration, Duration> {
        let now = Instant::now();
        self.with_body_clock(tenant, connection, |clock| {
            let wait = clock.map_or(Duration::ZERO, |next| next.saturating_duration_since(now));
            if wait > longest {
                return Err(wait);
            }
            if let Some(bytes) = declared {
                advance(clock, now, bytes);
            }
            Ok(wait)
        })
        .unwrap_or(Ok(Duration::ZERO))
    }

    /// Pay for a body of unknown length once read.
    pub(super) fn body_read(&self, tenant: Option<&str>, connection: Option<&Connection>, bytes: usize) {
        self.with_body_clock(tenant, connection, |clock| advance(clock, Instant::now(), bytes));
    }

    /// `f` over the client's body clock (`None` when there is no client to pace).
    fn with_body_clock<T>(
        &self,
        tenant: Option<&str>,
        connection: Option<&Connection>,
        f: impl FnOnce(&mut Option<Instant>) -> T,
    ) -> Option<T> {
        match (tenant, connection) {
            (Some(tenant), _) => {
                let mut clocks = self.body_clocks.lock().unwrap_or_else(|e| e.into_inner());
                if clocks.len() >= 1024 {
                    let now = Instant::now();
                    clocks.retain(|_, next| *next > now);
                }
                let mut clock = clocks.get(tenant).copied();
                let answer = f(&mut clock);
                if let Some(clock) = clock {
                    clocks.insert(tenant.to_owned(), clock);
                }
                Some(answer)
            }
            (None, Some(connection)) => Some(f(&mut connection.body_clock.lock().unwrap_or_else(|e| e.into_inner()))),
            (None, None) => None,
        }
    }

    fn leave(&self, tenant: &str, f: impl FnOnce(&mut Share)) {
        let mut tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(share) = tenants.get_mut(tenant) {
            f(share);
            if share.is_empty() {
                tenants.remove(tenant);
            }
        }
    }
}

impl Connection {
    /// Whether a request on it has passed the edge.
    pub(super) fn is_proven(&self) -> bool {
        self.proven.load(Ordering::Acquire)
    }

    /// A request on this connection passed the edge (`tenant`: the one it
    /// authenticated as): the connection takes its place among proven ones,
    /// and its tenant's, the first time; beyond them it gets none.
    pub(super) fn prove(&self, tenant: Option<&str>) -> Result<(), NoRoom> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.is_some() {
            return Ok(());
        }
        let owner = &self.owner;
        if let Some(tenant) = tenant {
            let limit = owner.limits.max_connections_per_tenant;
            let mut tenants = owner.tenants.lock().unwrap_or_else(|e| e.into_inner());
            let share = tenants.entry(tenant.to_owned()).or_default();
            if share.connections >= limit {
                let empty = share.is_empty();
                if empty {
                    tenants.remove(tenant);
                }
                return Err(NoRoom::TenantConnections(limit));
            }
            share.connections += 1;
        }
        let Ok(permit) = owner.proven.clone().try_acquire_owned() else {
            if let Some(tenant) = tenant {
                owner.leave(tenant, |share| share.connections -= 1);
            }
            return Err(NoRoom::Connections(owner.limits.max_connections));
        };
        *held = Some((permit, tenant.map(str::to_owned)));
        self.proven.store(true, Ordering::Release);
        Ok(())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let held = self.held.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((_permit, Some(tenant))) = held {
            self.owner.leave(&tenant, |share| share.connections -= 1);
        }
    }
}

/// A tenant's request in flight, counted until dropped (with its response body).
pub(super) struct TenantRequest {
    owner: Arc<Connections>,
    tenant: String,
    upload: bool,
}

impl Drop for TenantRequest {
    fn drop(&mut self) {
        let upload = usize::from(self.upload);
        self.owner.leave(&self.tenant, |share| {
            share.in_flight -= 1;
            share.uploads -= upload;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> HttpLimits {
        HttpLimits {
            max_connections: 3,
            max_unproven_connections: 2,
            max_connections_per_tenant: 2,
            max_in_flight_per_tenant: 1,
            ..HttpLimits::default()
        }
    }

    #[test]
    fn the_oldest_unproven_connection_makes_room_and_proven_ones_are_never_evicted() {
        let connections = Connections::new(limits());
        let first = connections.accept();
        let second = connections.accept();
        first.prove(None).unwrap();
        // The pool holds `second` only now: a third fits, a fourth evicts `second`.
        let third = connections.accept();
        assert!(!first.close.is_cancelled() && !second.close.is_cancelled());
        let fourth = connections.accept();
        assert!(second.close.is_cancelled(), "the oldest unproven one");
        assert!(!first.close.is_cancelled() && !third.close.is_cancelled() && !fourth.close.is_cancelled());
        // A closed connection leaves no trace: the pool has room for one more without evicting.
        drop(third);
        let _fifth = connections.accept();
        assert!(!fourth.close.is_cancelled());
    }

    #[test]
    fn a_tenant_holds_its_connections_and_requests_and_gives_them_back() {
        let connections = Connections::new(limits());
        let (a, b, c) = (connections.accept(), connections.accept(), connections.accept());
        a.prove(Some("acme")).unwrap();
        a.prove(Some("acme")).unwrap();
        b.prove(Some("acme")).unwrap();
        assert_eq!(c.prove(Some("acme")), Err(NoRoom::TenantConnections(2)));
        c.prove(Some("beta")).expect("another tenant's share");
        let d = connections.accept();
        assert_eq!(d.prove(Some("gamma")), Err(NoRoom::Connections(3)), "every place is taken");
        drop(a);
        d.prove(Some("acme")).expect("acme's connection closed: its place and its share came back");
        let request = connections.enter("acme", false).unwrap();
        assert!(matches!(connections.enter("acme", false), Err(NoRoom::TenantInFlight(1))));
        connections.enter("beta", true).expect("beta's own");
        drop(request);
        connections.enter("acme", false).expect("answered: its place came back");
        drop((b, c, d));
        assert!(connections.tenants.lock().unwrap().is_empty(), "nothing kept for tenants holding nothing");
    }

    #[test]
    fn large_bodies_are_paced_per_client_and_small_ones_cost_nothing() {
        let connections = Connections::new(limits());
        let connection = connections.accept();
        let (acme, none, long) = (Some("acme"), None, Duration::from_secs(10));
        let turn = |tenant, connection: &Connection, declared| {
            connections.body_turn(tenant, Some(connection), declared, long).unwrap()
        };
        assert_eq!(turn(acme, &connection, Some(4 << 20)), Duration::ZERO, "the first is read at once");
        // Declared lengths are paid for before they are read: bodies sent at once wait their turns.
        let second = turn(acme, &connection, Some(4 << 20));
        assert!(second > Duration::from_millis(100) && second <= Duration::from_millis(125), "{second:?}");
        let third = turn(acme, &connection, None);
        assert!(third > Duration::from_millis(225) && third <= Duration::from_millis(250), "{third:?}");
        // A wait beyond the longest is refused, and not paid for.
        assert!(connections.body_turn(acme, Some(&connection), Some(4 << 20), Duration::from_millis(50)).is_err());
        assert!(turn(acme, &connection, None) <= third);
        assert_eq!(turn(Some("beta"), &connection, None), Duration::ZERO, "another tenant's pace");
        // Without a tenant, the connection is the client; a body of unknown length is paid for once read.
        assert_eq!(turn(none, &connection, None), Duration::ZERO);
        connections.body_read(none, Some(&connection), super::super::BULK_BODY_BYTES);
        assert_eq!(turn(none, &connection, None), Duration::ZERO, "a small body costs nothing");
        connections.body_read(none, Some(&connection), 4 << 20);
        assert!(turn(none, &connection, None) > Duration::from_millis(100));
        assert_eq!(turn(none, &connections.accept(), None), Duration::ZERO);
    }

    #[test]
    fn a_tenant_receives_at_most_two_uploads_at_once() {
        let connections = Connections::new(HttpLimits::default());
        let uploads: Vec<TenantRequest> = (0..2).map(|_| connections.enter("acme", true).unwrap()).collect();
        assert!(matches!(connections.enter("acme", true), Err(NoRoom::TenantUploads(2))));
        connections.enter("acme", false).expect("other requests still go");
        connections.enter("beta", true).expect("another tenant's");
        drop(uploads);
        connections.enter("acme", true).expect("stored: room again");
        assert!(connections.tenants.lock().unwrap().is_empty(), "nothing kept for tenants holding nothing");
    }
}
