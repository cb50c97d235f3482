//! Authentication at the HTTP edge, as the MCP authorization specification
//! asks of a resource server: `/mcp` and `/metrics` need a bearer token when
//! the operator configured authentication; without one the answer is `401`
//! with `WWW-Authenticate: Bearer resource_metadata="…"`, pointing to this
//! server's protected resource metadata (RFC 9728), served unauthenticated
//! at `/.well-known/oauth-protected-resource` and at that path followed by
//! the resource's path (`/artifacts`, uploads, is guarded alike). A valid token whose scopes do not allow what the
//! request asks (read from its JSON-RPC body before anything runs it) is
//! answered `403` with `error="insufficient_scope"` and the scope needed.
//! `/health` stays open (liveness only). The token itself goes nowhere: the
//! request carries on with the [`Principal`] it proved, in its extensions,
//! which rmcp hands to the MCP handler.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::auth::{Authenticator, Operation, Principal, Rejection, Scope, operations_of};
use crate::contract::ErrorType;

use super::{AppState, Enveloped, envelope};

/// Whether a route needs a token when authentication is on.
pub(super) fn guarded(route: &str) -> bool {
    matches!(route, "/mcp" | "/metrics" | "/artifacts")
}

/// The `Authorization` header of a request, owned (a request, its body,
/// cannot be held across an await by a future that must be `Send`).
pub(super) fn authorization(request: &Request) -> Option<String> {
    request.headers().get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or("?").to_owned())
}

/// The principal of a request to a guarded route, or the `401`/`503` answer.
pub(super) async fn authenticate(
    auth: &Authenticator,
    authorization: Option<String>,
    request_id: &str,
) -> Result<Principal, Response> {
    match auth.authenticate(authorization.as_deref()).await {
        Ok(principal) => Ok(principal),
        Err(Rejection::Unavailable(message)) => {
            tracing::warn!(%message, "authentication could not read the token store");
            Err(envelope(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorType::Unavailable,
                "the token store cannot be read; retry shortly".into(),
                request_id,
            ))
        }
        Err(rejection) => {
            let mut challenge = format!("Bearer resource_metadata=\"{}\"", auth.metadata_url());
            if let Rejection::Invalid(reason) = &rejection {
                challenge.push_str(&format!(", error=\"invalid_token\", error_description=\"{}\"", quoted(reason)));
            } else {
                let all: Vec<&str> = Scope::ALL.iter().map(|s| s.name()).collect();
                challenge.push_str(&format!(", scope=\"{}\"", all.join(" ")));
            }
            let mut response =
                envelope(StatusCode::UNAUTHORIZED, ErrorType::Unauthorized, rejection.to_string(), request_id);
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
            }
            Err(response)
        }
    }
}

/// The `403 insufficient_scope` answer if `principal` may not do everything `body` asks.
pub(super) fn check_scopes(
    auth: &Authenticator,
    principal: &Principal,
    body: &[u8],
    request_id: &str,
) -> Option<Response> {
    let operation = operations_of(body).into_iter().find(|op| !principal.may(*op))?;
    let needed: Vec<&str> = operation.allowed_by().iter().map(|s| s.name()).collect();
    let what = match operation {
        Operation::Invoke => "capability.invoke",
        Operation::WorkspaceWrite => "writing a workspace",
        Operation::WorkspaceRead => "workspace.query",
        Operation::ReadRecords => "reading experiments",
        Operation::Any => "this request",
        Operation::Unread => "a body that is no JSON-RPC message this check can read",
    };
    let either = if operation == Operation::Unread { " and " } else { " or " };
    let message =
        format!("{what} needs the scope {} (the token has: {:?})", needed.join(either), principal.scopes.names());
    let challenge = format!(
        "Bearer resource_metadata=\"{}\", error=\"insufficient_scope\", scope=\"{}\", error_description=\"{}\"",
        auth.metadata_url(),
        needed.join(" "),
        quoted(&message)
    );
    let mut response = envelope(StatusCode::FORBIDDEN, ErrorType::InsufficientScope, message, request_id);
    // Already the envelope: the edge must not wrap it again (it may come back from the lane).
    response.extensions_mut().insert(Enveloped);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    Some(response)
}

/// The protected resource metadata (RFC 9728); `404` when authentication is off.
pub(super) async fn metadata(State(state): State<AppState>, request: Request) -> Response {
    let Some(auth) = &state.auth else {
        let id = request.headers().get(crate::mcp::REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        let mut response =
            envelope(StatusCode::NOT_FOUND, ErrorType::NotFound, "this server does not authenticate".into(), &id);
        response.extensions_mut().insert(Enveloped);
        return response;
    };
    let mut response = auth.metadata().to_string().into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Text safe inside a quoted-string of a header: printable ASCII without `"` or `\`.
fn quoted(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '\'' }).collect()
}
