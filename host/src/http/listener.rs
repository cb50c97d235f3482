//! The listener: hyper's HTTP/1.1 under a connection cap, with a
//! header-read timeout, closed gracefully at shutdown.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio_util::sync::CancellationToken;

use super::HttpLimits;

/// Accept connections until `stopped`, each under a permit of
/// `limits.max_connections` (beyond them the next accept waits, and clients
/// wait in the kernel's backlog) and with `limits.client_timeout` to send
/// each request's headers; then close them gracefully and wait for them.
pub(super) async fn accept(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: HttpLimits,
    stopped: CancellationToken,
) {
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(limits.client_timeout);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => match permit { Ok(permit) => permit, Err(_) => break },
            () = stopped.cancelled() => break,
        };
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
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let connection = http1.serve_connection(hyper_util::rt::TokioIo::new(tcp), service);
        let stopped = stopped.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopped.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(permit);
        });
    }
    // New clients are refused from now on; every connection gives its permit
    // back when it has closed (a client that never reads its answer is not waited for long).
    drop(listener);
    let all = permits.acquire_many(limits.max_connections as u32);
    if tokio::time::timeout(Duration::from_secs(10), all).await.is_err() {
        tracing::warn!("connections still open 10 s after shutdown began; closing");
    }
}

/// A response body that cancels a token when dropped.
pub(super) struct CancelOnDrop {
    inner: axum::body::Body,
    _guard: tokio_util::sync::DropGuard,
    _in_flight: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl CancelOnDrop {
    pub(super) fn new(
        inner: axum::body::Body,
        token: CancellationToken,
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
    ) -> Self {
        CancelOnDrop { inner, _guard: token.drop_guard(), _in_flight: permit }
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
