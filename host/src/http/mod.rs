//! `jacobian serve --http ADDR`: MCP streamable HTTP at `/mcp` (rmcp), plus
//! `GET /health` (liveness only), `GET /metrics` (Prometheus) and
//! `PUT /artifacts/sha256/<hex>` (uploads, `uploads.rs`).
//!
//! Every response carries `X-Request-ID`: the caller's, when it is safe to
//! echo (1–128 of `[A-Za-z0-9._:-]`), otherwise a minted `req-<32 hex>`.
//! Every HTTP failure — ours or rmcp's — is the [`ErrorEnvelope`]
//! `{"error", "error_type", "request_id"}`, the same object the CLI prints.
//! Hosts: loopback names only unless the operator adds others; the check runs
//! before any route, so a rebinding page cannot reach `/metrics` either. A
//! browser's `Origin` must name an allowed host too (the MCP transport
//! requires servers to validate it).
//!
//! Bounded ([`HttpLimits`]): connections (a new one is unproven until a
//! request on it passes the edge, in a small pool of its own whose oldest is
//! closed to make room: `connections.rs`), the time to send a request's
//! headers and its body (a slow client is cut off), requests in flight and
//! MCP sessions (beyond either, a 503 envelope at once); and each tenant's
//! share of connections, requests in flight, uploads and sessions (beyond
//! it, a 429 envelope), checked as soon as the tenant is known.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::store::SessionStore;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::auth::Authenticator;
use crate::contract::{ErrorEnvelope, ErrorType};
use crate::mcp::{Bulk, ClientGone, JacobianServer, REQUEST_ID, ToolNames};
use crate::runtime::Runtime;

mod authn;
mod coalesce;
mod connections;
mod listener;
mod sessions;
mod uploads;

pub use connections::HttpLimits;
use connections::{Connection, Connections};
use listener::CancelOnDrop;

/// Longest caller request id echoed.
pub const MAX_REQUEST_ID: usize = 128;
/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = crate::limits::MAX_MESSAGE_BYTES;

/// Request bodies above this many bytes are parsed on the background lane
/// ([`crate::lanes`]), not on the protocol threads: parsing a megabyte of JSON
/// takes milliseconds, which every small request queued behind it would wait.
pub const BULK_BODY_BYTES: usize = 64 << 10;

/// Where the protected resource metadata is served (and below it, the
/// resource's own path, RFC 9728 §3.1).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Hosts served by default: loopback only.
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// How to serve.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Address to bind.
    pub addr: SocketAddr,
    /// Host names (without port) accepted in the Host header and in a browser's Origin.
    pub allowed_hosts: Vec<String>,
    /// Tool name spelling.
    pub names: ToolNames,
    /// What one server takes on at once.
    pub limits: HttpLimits,
    /// Who may call (`None`: anyone who reaches the port; `serve` allows that
    /// on loopback addresses only, unless told `--insecure-no-auth`).
    pub auth: Option<Arc<Authenticator>>,
}

/// Whether a caller's request id may be echoed.
pub fn safe_request_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_REQUEST_ID
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// A fresh request id.
pub fn mint_request_id() -> String {
    format!("req-{}", uuid::Uuid::new_v4().simple())
}

#[derive(Clone)]
struct AppState {
    runtime: Arc<Runtime>,
    allowed_hosts: Arc<Vec<String>>,
    limits: HttpLimits,
    /// One permit per request being answered.
    in_flight: Arc<tokio::sync::Semaphore>,
    /// The MCP sessions of this server (counted against the cap).
    sessions: Arc<LocalSessionManager>,
    /// Held by a request that opens a session from its last check of the cap
    /// until its session exists, so concurrent `initialize`s cannot all pass
    /// the same check and exceed the cap together.
    opening: Arc<tokio::sync::Mutex<()>>,
    /// Who may call, when the operator configured authentication.
    auth: Option<Arc<Authenticator>>,
    /// Who opened each MCP session (with authentication on).
    owners: Arc<sessions::SessionOwners>,
    /// One permit per upload being received (`uploads::MAX_UPLOADS`).
    uploads: Arc<tokio::sync::Semaphore>,
    /// The connections, and each tenant's share.
    connections: Arc<Connections>,
}

/// The route template a path belongs to (a closed set: metrics labels).
fn route_of(path: &str) -> &'static str {
    match path {
        "/health" => "/health",
        "/metrics" => "/metrics",
        p if p.starts_with(METADATA_PATH) => METADATA_PATH,
        p if p == "/mcp" || p.starts_with("/mcp/") => "/mcp",
        p if p == uploads::UPLOADS_PATH || p.starts_with("/artifacts/") => uploads::UPLOADS_PATH,
        _ => "other",
    }
}

fn host_allowed(host: Option<&str>, allowed: &[String]) -> bool {
    let Some(host) = host else { return false };
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':')
            .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host })
    };
    allowed.iter().any(|a| a.eq_ignore_ascii_case(name))
}

fn error_type_of(status: StatusCode) -> ErrorType {
    match status.as_u16() {
        400 | 422 => ErrorType::ValidationError,
        403 => ErrorType::HostNotAllowed,
        404 => ErrorType::NotFound,
        405 => ErrorType::MethodNotAllowed,
        413 => ErrorType::PayloadTooLarge,
        500..=599 => ErrorType::InternalError,
        _ => ErrorType::HttpError,
    }
}

/// An envelope response.
pub fn envelope(status: StatusCode, error_type: ErrorType, error: String, request_id: &str) -> Response {
    let body = ErrorEnvelope { error, error_type, request_id: Some(request_id.to_owned()) };
    let mut response = (status, crate::json::text(&body)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Whether a browser's `Origin` (absent for other clients) names an allowed host.
fn origin_allowed(origin: Option<&str>, allowed: &[String]) -> bool {
    let Some(origin) = origin else { return true };
    let Some((_, rest)) = origin.split_once("://") else { return false };
    let authority = rest.split('/').next().unwrap_or_default();
    host_allowed(Some(authority), allowed)
}

/// Request id, Host and Origin checks, the request limits, envelope for
/// every failure, metrics and a tracing span.
async fn edge(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let offered = request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()).filter(|id| safe_request_id(id));
    let request_id = offered.map(str::to_owned).unwrap_or_else(mint_request_id);
    let value = HeaderValue::from_str(&request_id).unwrap_or_else(|_| HeaderValue::from_static("req-invalid"));
    request.headers_mut().insert(REQUEST_ID, value.clone());
    let method = request.method().as_str().to_owned();
    let route = route_of(request.uri().path());
    let opens_session = request.method() == axum::http::Method::POST
        && request.uri().path() == "/mcp"
        && !request.headers().contains_key("mcp-session-id");
    let span =
        tracing::info_span!("http", request_id = %request_id, method = %method, route, tenant = tracing::field::Empty);
    let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok());
    let origin = request.headers().get(header::ORIGIN).map(|v| v.to_str().unwrap_or("?"));
    let refusal = if !host_allowed(host, &state.allowed_hosts) {
        Some("this server does not serve that Host (loopback only unless the operator allows more)")
    } else if !origin_allowed(origin, &state.allowed_hosts) {
        Some("this server does not serve pages from that Origin (loopback only unless the operator allows more)")
    } else {
        None
    };
    if let Some(message) = refusal {
        let response = envelope(StatusCode::FORBIDDEN, ErrorType::HostNotAllowed, message.into(), &request_id);
        tracing::info!(parent: &span, status = 403, "http request");
        return finish(response, &state, &method, route, value);
    }
    // Who is calling, before anything else looks at the request.
    let principal = match &state.auth {
        Some(auth) if authn::guarded(route) => {
            match authn::authenticate(auth, authn::authorization(&request), &request_id).await {
                Ok(principal) => {
                    span.record("tenant", principal.tenant.as_str());
                    Some(principal)
                }
                Err(response) => {
                    tracing::info!(parent: &span, status = response.status().as_u16(), "http request");
                    return finish(response, &state, &method, route, value);
                }
            }
        }
        _ => None,
    };
    // A session is continued only by whoever opened it.
    let owner = principal.as_ref().map(sessions::SessionOwners::identity);
    let session = request.headers().get("mcp-session-id").map(|v| v.to_str().unwrap_or("?").to_owned());
    if let (Some(owner), Some(session)) = (&owner, &session)
        && !state.owners.owned_by(session, owner).await
    {
        let response = envelope(
            StatusCode::NOT_FOUND,
            ErrorType::NotFound,
            "no such MCP session for this caller".into(),
            &request_id,
        );
        tracing::info!(parent: &span, status = 404, "http request");
        return finish(response, &state, &method, route, value);
    }
    // The connection is proven by a request that passed this far (authenticated, with
    // authentication on): it takes its place, and its tenant's, or is answered once and closed.
    let connection = request.extensions().get::<Arc<Connection>>().cloned();
    let tenant = principal.as_ref().map(|p| p.tenant.as_str());
    if let Some(connection) = &connection
        && (state.auth.is_none() || principal.is_some())
        && let Err(no_room) = connection.prove(tenant)
    {
        let mut response = no_room.response(&request_id);
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        tracing::info!(parent: &span, status = response.status().as_u16(), "http request");
        return finish(response, &state, &method, route, value);
    }
    // Requests that compute count in flight; liveness, metrics, closing a
    // session and a session's event stream (bounded by the session cap) do not.
    let exempt = matches!(route, "/health" | "/metrics")
        || request.method() == axum::http::Method::DELETE
        || (request.method() == axum::http::Method::GET && route == "/mcp");
    // The tenant's share of requests in flight, held until its response has been sent.
    let share = match tenant.filter(|_| !exempt) {
        Some(tenant) => match state.connections.enter(tenant, route == uploads::UPLOADS_PATH) {
            Ok(share) => Some(share),
            Err(no_room) => {
                let response = no_room.response(&request_id);
                tracing::info!(parent: &span, status = response.status().as_u16(), "http request");
                return finish(response, &state, &method, route, value);
            }
        },
        None => None,
    };
    // An upload streams its body into the store: none of the limits below on a message's body.
    if route == uploads::UPLOADS_PATH {
        let response = uploads::put(&state, request, principal.as_ref(), &request_id).await;
        drop(share);
        tracing::info!(parent: &span, status = response.status().as_u16(), "http request");
        return finish(response, &state, &method, route, value);
    }
    let over_sessions = state.admit(opens_session, tenant, &request_id).await.err();
    let _entered = span.enter();
    let mut response = if request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
        .is_some_and(|n| n > MAX_BODY_BYTES)
    {
        envelope(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorType::PayloadTooLarge,
            format!("request bodies are limited to {MAX_BODY_BYTES} bytes"),
            &request_id,
        )
    } else if let Some(refusal) = over_sessions {
        refusal
    } else {
        drop(_entered);
        // The client's turn for its body, before it holds a place in flight: its large bodies
        // so far paid for (`connections::BODY_BYTES_PER_SECOND`), or a 429 if that is far off.
        let declared =
            request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
        match state.connections.body_turn(tenant, connection.as_deref(), declared, state.limits.client_timeout) {
            Ok(wait) if wait.is_zero() => {}
            Ok(wait) => tokio::time::sleep(wait).await,
            Err(wait) => {
                let message = format!(
                    "this client's large request bodies are read at {} MiB/s: the next in {} ms",
                    connections::BODY_BYTES_PER_SECOND >> 20,
                    wait.as_millis()
                );
                let mut response =
                    envelope(StatusCode::TOO_MANY_REQUESTS, ErrorType::QuotaExceeded, message, &request_id);
                let seconds = wait.as_secs() + 1;
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
                return finish(response, &state, &method, route, value);
            }
        }
        let permit = match if exempt { None } else { Some(state.in_flight.clone().try_acquire_owned()) } {
            None => None,
            Some(Ok(permit)) => Some(permit),
            Some(Err(_)) => {
                let message = format!(
                    "the server is answering its limit of {} requests; retry shortly",
                    state.limits.max_in_flight
                );
                let mut response =
                    envelope(StatusCode::SERVICE_UNAVAILABLE, ErrorType::Unavailable, message, &request_id);
                response.headers_mut().insert(REQUEST_ID, value);
                state.runtime.metrics().request(&method, route, response.status().as_u16());
                return response;
            }
        };
        // The body within the client timeout and the size limit, before anything parses it.
        let (parts, body) = request.into_parts();
        let bytes = match tokio::time::timeout(state.limits.client_timeout, axum::body::to_bytes(body, MAX_BODY_BYTES))
            .await
        {
            Ok(Ok(bytes)) => {
                if declared.is_none() {
                    state.connections.body_read(tenant, connection.as_deref(), bytes.len());
                }
                bytes
            }
            Ok(Err(_)) => {
                let message = format!("request bodies are limited to {MAX_BODY_BYTES} bytes");
                return finish(
                    envelope(StatusCode::PAYLOAD_TOO_LARGE, ErrorType::PayloadTooLarge, message, &request_id),
                    &state,
                    &method,
                    route,
                    value,
                );
            }
            Err(_) => {
                let message =
                    format!("the request body did not arrive within {} ms", state.limits.client_timeout.as_millis());
                return finish(
                    envelope(StatusCode::REQUEST_TIMEOUT, ErrorType::HttpError, message, &request_id),
                    &state,
                    &method,
                    route,
                    value,
                );
            }
        };
        // Only a message of an open session: rmcp starts a session's tasks on
        // the runtime that handles its `initialize`, which must not be the lane.
        let bulk = bytes.len() > BULK_BODY_BYTES && parts.headers.contains_key("mcp-session-id");
        let _opening = if opens_session {
            match state.open_session(tenant, &request_id).await {
                Ok(guard) => Some(guard),
                Err(refusal) => return finish(refusal, &state, &method, route, value),
            }
        } else {
            None
        };
        // What the request asks, against what its token allows (a large
        // body is read for this on the lane, below). Only a JSON-RPC message
        // asks for anything: a GET (the event stream, metrics) or a DELETE
        // needs a valid token and no scope.
        let scoped = route == "/mcp" && method == "POST";
        if scoped
            && !bulk
            && let (Some(auth), Some(principal)) = (&state.auth, &principal)
            && let Some(refusal) = authn::check_scopes(auth, principal, &bytes, &request_id)
        {
            return finish(refusal, &state, &method, route, value);
        }
        let scopes = if scoped && bulk { state.auth.clone().zip(principal.clone()) } else { None };
        let mut request = Request::from_parts(parts, axum::body::Body::from(bytes));
        if let Some(principal) = principal {
            request.extensions_mut().insert(principal);
        }
        // Tied to this HTTP exchange: cancelled when its response body is
        // dropped, which is when the client goes away (or the response ends);
        // the request's place among those in flight is given back then too.
        let gone = ClientGone(CancellationToken::new());
        request.extensions_mut().insert(gone.clone());
        let response = if bulk {
            // A large body is parsed (and its call validated) off the protocol
            // threads, so that it never delays a small request behind it.
            request.extensions_mut().insert(Bulk);
            // Should the client go away while the lane parses, its call is cancelled all the same.
            let abandoned = gone.0.clone().drop_guard();
            let id = request_id.clone();
            let parsed = crate::lanes::background()
                .spawn(async move {
                    if let Some((auth, principal)) = scopes {
                        let body = std::mem::take(request.body_mut());
                        let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES).await.unwrap_or_default();
                        if let Some(refusal) = authn::check_scopes(&auth, &principal, &bytes, &id) {
                            return refusal;
                        }
                        *request.body_mut() = axum::body::Body::from(bytes);
                    }
                    next.run(request).await
                })
                .await;
            abandoned.disarm();
            match parsed {
                Ok(response) => response,
                Err(e) => envelope(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorType::InternalError,
                    format!("the request's thread failed: {e}"),
                    &request_id,
                ),
            }
        } else {
            next.run(request).await
        };
        // The session exists now, counted for its owner: other requests may
        // open theirs while this answer is held.
        if opens_session
            && let Some(owner) = &owner
            && let Some(id) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())
        {
            let live = state.sessions.sessions.read().await;
            state.owners.record(id, owner, 2 * state.limits.max_sessions, |id| live.contains_key(id)).await;
        }
        drop(_opening);
        // A quick call's answer in one write (`coalesce.rs`); a client gone meanwhile cancels its call.
        let response = if scoped {
            let abandoned = gone.0.clone().drop_guard();
            let response = coalesce::coalesced(response).await;
            abandoned.disarm();
            response
        } else {
            response
        };
        let response = sessions::closed_plainly(response, &method, route);
        let response = response.map(|body| axum::body::Body::new(CancelOnDrop::new(body, gone.0, (permit, share))));
        let status = response.status();
        let is_envelope = response.extensions().get::<Enveloped>().is_some();
        if (status.is_client_error() || status.is_server_error()) && !is_envelope {
            // rmcp's and axum's own refusals: keep the status, speak the envelope.
            let (_, body) = response.into_parts();
            let bytes = axum::body::to_bytes(body, 64 << 10).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).trim().chars().take(300).collect::<String>();
            let message = if text.is_empty() {
                status.canonical_reason().unwrap_or("request failed").to_lowercase()
            } else {
                text
            };
            envelope(status, error_type_of(status), message, &request_id)
        } else {
            response
        }
    };
    response.headers_mut().insert(REQUEST_ID, value);
    state.runtime.metrics().request(&method, route, response.status().as_u16());
    tracing::info!(parent: &span, status = response.status().as_u16(), "http request");
    response
}

/// The last steps of every answer the edge makes itself: the request id and the metrics.
fn finish(mut response: Response, state: &AppState, method: &str, route: &'static str, id: HeaderValue) -> Response {
    response.headers_mut().insert(REQUEST_ID, id);
    state.runtime.metrics().request(method, route, response.status().as_u16());
    response
}

/// Marks a response that is already an envelope.
#[derive(Clone, Copy)]
pub(super) struct Enveloped;

async fn health() -> Response {
    let body = serde_json::json!({"status": "ok", "service": "jacobian", "version": env!("CARGO_PKG_VERSION")});
    let mut response = body.to_string().into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

async fn metrics(State(state): State<AppState>) -> Response {
    let mut response = state.runtime.metrics().render().into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    response
}

async fn not_found(request: Request) -> Response {
    let id = request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let mut response = envelope(StatusCode::NOT_FOUND, ErrorType::NotFound, "no such route".into(), &id);
    response.extensions_mut().insert(Enveloped);
    response
}

/// The application: routes and the edge middleware.
///
/// `in_flight` holds one permit per computing request until its response body
/// has been sent in full (graceful shutdown waits for all of them back).
fn app(
    runtime: Arc<Runtime>,
    config: &HttpConfig,
    shutdown: CancellationToken,
    in_flight: Arc<tokio::sync::Semaphore>,
    connections: Arc<Connections>,
) -> Router {
    let mut mcp_config = StreamableHttpServerConfig::default().with_allowed_hosts(config.allowed_hosts.clone());
    mcp_config.cancellation_token = shutdown;
    mcp_config.max_request_body_bytes = MAX_BODY_BYTES;
    // Several hosts on one PostgreSQL store share MCP sessions: a session
    // reaching a host that never saw it is restored from the store.
    mcp_config.session_store =
        runtime.sessions().map(|shared| Arc::new(sessions::SharedSessions(shared)) as Arc<dyn SessionStore>);
    let names = config.names;
    let factory_runtime = runtime.clone();
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(
        move || Ok(JacobianServer::new(factory_runtime.clone(), names)),
        sessions.clone(),
        mcp_config,
    );
    let owners = Arc::new(sessions::SessionOwners::new(runtime.sessions()));
    let state = AppState {
        runtime,
        allowed_hosts: Arc::new(config.allowed_hosts.clone()),
        limits: config.limits,
        in_flight,
        sessions,
        opening: Default::default(),
        auth: config.auth.clone(),
        owners,
        uploads: Arc::new(tokio::sync::Semaphore::new(uploads::MAX_UPLOADS)),
        connections,
    };
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route(METADATA_PATH, get(authn::metadata))
        .route(&format!("{METADATA_PATH}/{{*resource}}"), get(authn::metadata))
        .route_service("/mcp", service)
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), edge))
        .with_state(state)
}

/// Serve until `stop` completes; then drain: new invocations are refused
/// (`COMPONENT_UNAVAILABLE`, "shutting down") while the connections stay
/// open, in-flight invocations finish (up to `drain`) and deliver their
/// results, and only then does the server stop accepting and close sessions.
pub async fn serve(
    runtime: Arc<Runtime>,
    config: HttpConfig,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
    drain: Duration,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    let local = listener.local_addr()?;
    // The one line a supervisor (or a test) reads to find the port.
    println!("listening on http://{local}/mcp");
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let sessions = CancellationToken::new();
    let all = config.limits.max_in_flight;
    let responding = Arc::new(tokio::sync::Semaphore::new(all));
    let connections = Connections::new(config.limits);
    let router = app(runtime.clone(), &config, sessions.clone(), responding.clone(), connections.clone());
    let stopped = CancellationToken::new();
    {
        let stopped = stopped.clone();
        let runtime = runtime.clone();
        tokio::spawn(async move {
            stop.await;
            runtime.start_draining();
            let deadline = tokio::time::Instant::now() + drain;
            // Every invocation finished and every computing request's response
            // sent in full (its permit back), however slowly the machine runs.
            while (runtime.in_flight() > 0 || responding.available_permits() < all)
                && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            stopped.cancel();
            sessions.cancel();
        });
    }
    listener::accept(listener, router, connections, config.limits, stopped).await;
    Ok(())
}
