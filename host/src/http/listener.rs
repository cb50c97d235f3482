//! The listener: hyper's HTTP/1.1 with a header-read timeout, each
//! connection unproven until a request on it passes the edge
//! (`connections.rs`), closed gracefully at shutdown.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio_util::sync::CancellationToken;

use super::HttpLimits;
use super::connections::{Connection, Connections};

/// Accept connections until `stopped`. Each is unproven at first: the
/// oldest unproven one is closed when their pool is full, and one still
/// unproven after `limits.first_request_timeout` is closed; a proven one
/// holds its place until it closes. Each request's headers must come within
/// `limits.client_timeout` (an idle kept-alive connection is closed then).
/// At `stopped`, close them gracefully and wait for them.
pub(super) async fn accept(
    listener: tokio::net::TcpListener,
    router: Router,
    connections: Arc<Connections>,
    limits: HttpLimits,
    stopped: CancellationToken,
) {
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(limits.client_timeout);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stopped.cancelled() => break,
        };
        // Responses go out in several writes (headers, SSE event, end of
        // stream): without TCP_NODELAY, Nagle's algorithm and the client's
        // delayed ACK add about 40 ms to every call.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::warn!(%error, "could not set TCP_NODELAY");
        }
        let connection = connections.accept();
        // Every request on the connection carries it, so the edge can prove it.
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let carried = Arc::clone(&connection);
        let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(Arc::clone(&carried));
            hyper::service::Service::call(&service, request)
        });
        let serving = http1.serve_connection(hyper_util::rt::TokioIo::new(tcp), service);
        let stopped = stopped.clone();
        let first_request = limits.first_request_timeout;
        tokio::spawn(async move {
            let mut serving = std::pin::pin!(serving);
            tokio::select! {
                _ = serving.as_mut() => {}
                () = connection.close.cancelled() => {}
                () = unproven_after(&connection, first_request) => {}
                () = stopped.cancelled() => {
                    serving.as_mut().graceful_shutdown();
                    let _ = serving.await;
                }
            }
        });
    }
    // New clients are refused from now on; every connection gives its place
    // back when it has closed (a client that never reads its answer is not waited for long).
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(10), connections.all_closed()).await.is_err() {
        tracing::warn!("connections still open 10 s after shutdown began; closing");
    }
}

/// Ready when `connection` is still unproven `after` its accept (never, once proven).
async fn unproven_after(connection: &Connection, after: Duration) {
    tokio::time::sleep(after).await;
    if connection.is_proven() {
        std::future::pending::<()>().await;
    }
}

/// A response body that cancels a token when dropped, and holds the
/// request's places (among requests in flight, its tenant's) until then.
pub(super) struct CancelOnDrop {
    inner: axum::body::Body,
    _guard: tokio_util::sync::DropGuard,
    _held: Box<dyn Send>,
}

impl CancelOnDrop {
    pub(super) fn new(inner: axum::body::Body, token: CancellationToken, held: impl Send + 'static) -> Self {
        CancelOnDrop { inner, _guard: token.drop_guard(), _held: Box::new(held) }
    }
}

impl http_body::Body for CancelOnDrop {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
