//! `PUT /artifacts/sha256/<hex>?schema=<schema URI>`: a file above the
//! request limit (a proof of hundreds of megabytes) streamed into the store
//! (`Runtime::upload`). Content-addressed: the path names the SHA-256 of the
//! bytes, which are hashed on the way in and refused (`digest_mismatch`,
//! nothing stored) if they have another; a `Content-Length` above the
//! policy's `[uploads] max_bytes` is refused before a byte is read, and a
//! body without one is cut off once past the bound (`payload_too_large`).
//! With authentication on, the caller needs the `jacobian:invoke` scope, and
//! the file counts against its tenant's stored-bytes quota (`429
//! quota_exceeded` once spent).
//! Each chunk must come within the client timeout, and the whole within 50
//! minutes. The answer is `201` with
//! `{uri, file, bytes, schema_uri}`; the `uri` is what capabilities take.

use std::io;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::auth::{Operation, Principal};
use crate::contract::ErrorType;
use crate::digest::Digest;
use crate::runtime::UploadError;

use super::{AppState, envelope};

/// Where uploads go.
pub(super) const UPLOADS_PATH: &str = "/artifacts";

/// Uploads received at once; beyond them a 503 at once. Each holds a
/// blocking thread and its partial file (at most the policy's bound) until
/// it ends, and also counts among the requests in flight.
pub(super) const MAX_UPLOADS: usize = 8;

/// The longest an upload may take, whole: under the hour after which a
/// shared store stops counting a hold (its reservation of stored bytes), so
/// an upload never outlives what it reserved.
pub(super) const UPLOAD_DEADLINE: std::time::Duration = std::time::Duration::from_secs(50 * 60);

/// Answer an upload request (any method on the route: only `PUT` stores).
pub(super) async fn put(
    state: &AppState,
    request: Request,
    principal: Option<&Principal>,
    request_id: &str,
) -> Response {
    if request.method() != Method::PUT {
        let message = "uploads are PUT /artifacts/sha256/<hex of the bytes>?schema=<schema URI>".to_owned();
        return envelope(StatusCode::METHOD_NOT_ALLOWED, ErrorType::MethodNotAllowed, message, request_id);
    }
    if let Some(principal) = principal
        && !principal.may(Operation::Invoke)
    {
        let message =
            format!("uploading a file needs the scope jacobian:invoke (the token has: {:?})", principal.scopes.names());
        return envelope(StatusCode::FORBIDDEN, ErrorType::InsufficientScope, message, request_id);
    }
    let hex = request.uri().path().strip_prefix("/artifacts/sha256/").unwrap_or_default();
    let Ok(expected) = Digest::from_hex(hex) else {
        let message = format!(
            "the path must be /artifacts/sha256/<64 lowercase hex digits of the bytes>, not {:?}",
            request.uri().path().chars().take(120).collect::<String>()
        );
        return envelope(StatusCode::BAD_REQUEST, ErrorType::ValidationError, message, request_id);
    };
    let schema = request
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("schema="))
        .map(percent_decoded);
    let Some(schema) = schema else {
        let message = "name what the bytes are: ?schema=<schema URI>, e.g. jacobian:sat/lrat-file@1".to_owned();
        return envelope(StatusCode::BAD_REQUEST, ErrorType::ValidationError, message, request_id);
    };
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    // Over the bound by its declared length: refused before the body is read (no `100 Continue`).
    let limit = state.runtime.policy().uploads.max_bytes;
    if declared.is_some_and(|n| n > limit) {
        let message = UploadError::TooLarge { limit }.to_string();
        return envelope(StatusCode::PAYLOAD_TOO_LARGE, ErrorType::PayloadTooLarge, message, request_id);
    }
    let Ok(_upload) = state.uploads.clone().try_acquire_owned() else {
        let message = format!("the server is receiving its limit of {MAX_UPLOADS} uploads; retry shortly");
        return envelope(StatusCode::SERVICE_UNAVAILABLE, ErrorType::Unavailable, message, request_id);
    };
    let Ok(_permit) = state.in_flight.clone().try_acquire_owned() else {
        let message =
            format!("the server is answering its limit of {} requests; retry shortly", state.limits.max_in_flight);
        return envelope(StatusCode::SERVICE_UNAVAILABLE, ErrorType::Unavailable, message, request_id);
    };
    // The store reads on a blocking thread; the body is handed over chunk by chunk.
    let (send, receive) = tokio::sync::mpsc::channel::<io::Result<Bytes>>(4);
    let runtime = Arc::clone(&state.runtime);
    let tenant = principal.map(|p| p.tenant.clone());
    let storing = tokio::task::spawn_blocking(move || {
        let mut source = Chunks { receive, current: Bytes::new() };
        runtime.upload_as(tenant.as_deref(), &mut source, &schema, declared, Some(&expected))
    });
    let mut body = request.into_body();
    let deadline = tokio::time::Instant::now() + UPLOAD_DEADLINE;
    loop {
        let frame = std::future::poll_fn(|cx| http_body::Body::poll_frame(std::pin::Pin::new(&mut body), cx));
        let within = state.limits.client_timeout.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
        let next = match tokio::time::timeout(within, frame).await {
            Ok(None) => break,
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => Ok(data),
                Err(_) => continue,
            },
            Ok(Some(Err(e))) => Err(io::Error::other(e.to_string())),
            Err(_) if tokio::time::Instant::now() >= deadline => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the upload did not end within {} minutes", UPLOAD_DEADLINE.as_secs() / 60),
            )),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no part of the body came within {} ms", state.limits.client_timeout.as_millis()),
            )),
        };
        let failed = next.is_err();
        // The store stopped reading (a refusal): the rest is not wanted.
        if send.send(next).await.is_err() || failed {
            break;
        }
    }
    drop(send);
    let outcome = match storing.await {
        Ok(outcome) => outcome,
        Err(e) => {
            let message = format!("the upload's thread failed: {e}");
            return envelope(StatusCode::INTERNAL_SERVER_ERROR, ErrorType::InternalError, message, request_id);
        }
    };
    match outcome {
        Ok(uploaded) => {
            let mut response = (StatusCode::CREATED, crate::json::text(&uploaded)).into_response();
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        Err(e) => {
            let (status, error_type) = match &e {
                UploadError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, ErrorType::PayloadTooLarge),
                UploadError::Mismatch { .. } => (StatusCode::BAD_REQUEST, ErrorType::DigestMismatch),
                UploadError::Schema(_) => (StatusCode::BAD_REQUEST, ErrorType::ValidationError),
                UploadError::Source(e) if e.kind() == io::ErrorKind::TimedOut => {
                    (StatusCode::REQUEST_TIMEOUT, ErrorType::HttpError)
                }
                UploadError::Source(_) => (StatusCode::BAD_REQUEST, ErrorType::HttpError),
                UploadError::Store(_) => (StatusCode::SERVICE_UNAVAILABLE, ErrorType::Unavailable),
                UploadError::Quota(_) => (StatusCode::TOO_MANY_REQUESTS, ErrorType::QuotaExceeded),
            };
            envelope(status, error_type, crate::errors::render(&e), request_id)
        }
    }
}

/// The body's chunks as a reader, on the blocking thread that stores them.
struct Chunks {
    receive: tokio::sync::mpsc::Receiver<io::Result<Bytes>>,
    current: Bytes,
}

impl io::Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.receive.blocking_recv() {
                None => return Ok(0),
                Some(chunk) => self.current = chunk?,
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

/// `%XX` escapes decoded (a schema URI's `:`, `/` and `@` may come escaped).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
