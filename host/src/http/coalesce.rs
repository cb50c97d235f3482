//! One write for a quick call's answer. The event stream that answers an MCP
//! request over HTTP opens with a priming event (an event id to resume
//! from), which rmcp sends before the call has answered. Written alone, it
//! woke the client once for it and once more for the answer, and the
//! client's work in between ran beside the call's on the same two cores.
//! So the answer to a POST waits up to [`HOLD`] for its stream to end and
//! then goes out whole: headers and every event in one write, with its
//! length. A stream still open then sends what it holds and goes on as
//! before: a long call's client sees its headers and priming event `HOLD`
//! later, and nothing else changes.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use http_body::{Body as _, Frame, SizeHint};

/// How long an answer's event stream is held for its end.
pub(super) const HOLD: Duration = Duration::from_millis(5);

/// `response`, its event stream held for up to [`HOLD`] (other responses as they are).
pub(super) async fn coalesced(response: Response) -> Response {
    let event_stream =
        response.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !event_stream || !response.status().is_success() {
        return response;
    }
    let (mut parts, mut body) = response.into_parts();
    let mut held = Vec::new();
    let deadline = tokio::time::sleep(HOLD);
    tokio::pin!(deadline);
    let pending = loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx));
        tokio::select! {
            biased;
            frame = next => match frame {
                None => {
                    // Ended: the whole answer, with its length.
                    parts.headers.remove(header::TRANSFER_ENCODING);
                    parts.headers.remove(header::CONTENT_LENGTH);
                    return Response::from_parts(parts, Body::from(held));
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => held.extend_from_slice(&data),
                    Err(frame) => break Some(Ok(frame)),
                },
                Some(Err(error)) => break Some(Err(error)),
            },
            () = &mut deadline => break None,
        }
    };
    let first = (!held.is_empty()).then(|| Bytes::from(held));
    Response::from_parts(parts, Body::new(Held { first, pending, rest: body }))
}

/// A stream that was held: what it sent meanwhile, in one frame, then the
/// frame that ended the holding (if one did), then the rest.
struct Held {
    first: Option<Bytes>,
    pending: Option<Result<Frame<Bytes>, axum::Error>>,
    rest: Body,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        if let Some(pending) = self.pending.take() {
            return Poll::Ready(Some(pending));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.first.is_none() && self.pending.is_none() && self.rest.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        if self.first.is_some() || self.pending.is_some() { SizeHint::default() } else { self.rest.size_hint() }
    }
}
