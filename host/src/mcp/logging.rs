//! MCP logging: `logging/setLevel` and the `notifications/message` a client
//! shows beside a call.
//!
//! What is logged is what an agent's user would want to see scroll by: each
//! invocation's outcome (`info`; `warning` when it carries a diagnostic) and
//! the lines the component itself logged (at their own level, logger
//! `guest:<capability id>`). The threshold is per session; until a client
//! sets one it is `warning`, so a client that never asks sees only calls that
//! went wrong. Logging costs a call nothing below the threshold (one atomic
//! load). rmcp marks MCP logging deprecated (SEP-2577), as the protocol's
//! next version moves it; the 2025 versions clients speak today have it.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::json;

use crate::contract::CapabilityResult;

/// A session's threshold: messages below it are not sent.
#[derive(Clone)]
pub(super) struct Threshold(Arc<AtomicU8>);

impl Default for Threshold {
    fn default() -> Self {
        Threshold(Arc::new(AtomicU8::new(rank(LoggingLevel::Warning))))
    }
}

impl Threshold {
    /// `logging/setLevel`.
    pub(super) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    /// Whether a message at `level` is sent.
    pub(super) fn admits(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::Relaxed)
    }

    /// The messages one invocation's result makes, at this threshold: the
    /// component's own lines, then the outcome. Built where the result is
    /// (on its thread), sent by [`send`] before the result goes out.
    pub(super) fn messages(&self, result: &CapabilityResult) -> Vec<LoggingMessageNotificationParam> {
        let mut out = Vec::new();
        let guest = format!("guest:{}", crate::limits::clip(&result.capability_id, crate::limits::MAX_ID_BYTES));
        for line in &result.guest_log {
            let level = guest_level(&line.level);
            if self.admits(level) {
                out.push(LoggingMessageNotificationParam::new(level, json!(line.message)).with_logger(guest.clone()));
            }
        }
        let level = if result.diagnostic.is_some() { LoggingLevel::Warning } else { LoggingLevel::Info };
        if self.admits(level) {
            out.push(LoggingMessageNotificationParam::new(level, outcome(result)).with_logger("jacobian.invoke"));
        }
        out
    }
}

/// Send `messages` to the client (a client that has gone is not an error).
pub(super) async fn send(peer: &Peer<RoleServer>, messages: Vec<LoggingMessageNotificationParam>) {
    for message in messages {
        let _ = peer.notify_logging_message(message).await;
    }
}

/// One invocation's outcome as a log message: a line a person reads, and
/// the fields a client can filter on.
fn outcome(result: &CapabilityResult) -> serde_json::Value {
    let capability = crate::limits::clip(&result.capability_id, crate::limits::MAX_ID_BYTES);
    let millis = result.accounting.wall_time_us as f64 / 1000.0;
    let (status, assurance) = (name(&result.status), name(&result.assurance));
    let mut line = format!("{capability}: {status}, {assurance}, {millis:.1} ms, {} fuel", result.fuel_consumed);
    if let Some(diagnostic) = &result.diagnostic {
        line.push_str(&format!(" — {}: {}", name(&diagnostic.code), diagnostic.message));
    }
    json!({
        "message": line,
        "capability_id": capability,
        "status": status,
        "assurance": assurance,
        "code": result.diagnostic.as_ref().map(|d| d.code),
        "experiment": result.accounting.experiment,
        "episode_uri": result.transport.as_ref().and_then(|t| t.full_result_episode_uri.clone()),
    })
}

/// A wire name (`COMPLETED`, `INVALID_INPUT`), as the result spells it.
fn name(value: &impl serde::Serialize) -> String {
    crate::json::name(value)
}

/// A guest's level name as MCP's (unknown names are `info`).
fn guest_level(name: &str) -> LoggingLevel {
    match name.to_ascii_lowercase().as_str() {
        "trace" | "debug" => LoggingLevel::Debug,
        "warn" | "warning" => LoggingLevel::Warning,
        "error" => LoggingLevel::Error,
        "critical" => LoggingLevel::Critical,
        _ => LoggingLevel::Info,
    }
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
