//! Stage 5, `record`: the episode (for calls that ran to an answer or a
//! diagnostic of their own), the experiment line with its accounting, the
//! text view and the metrics.
//!
//! An episode is the result without accounting and transport, plus the
//! request that produced it and an ordinal event trace: nothing in it
//! depends on the clock or the experiment, so identical invocations
//! serialize identically and a replay re-derives it byte for byte.

use std::time::Instant;

use serde_json::{Map, Value, json};

use crate::contract::{Accounting, CapabilityResult, InvokeRequest, ResultView, Transport, episode_uri};
use crate::digest::Digest;
use crate::experiments::{InvocationRecord, Reservation, StopReason};
use crate::projection::Canonical;

use super::Runtime;
use super::diagnostics::storage_failed_text;
use super::experiments::RecordFailure;
use super::pipeline::{Concluded, Recording, Unwritten, Validated};
use super::result::{ResultParts, build, deliver, unrecorded};

impl Runtime {
    /// Stage 5 up to its writes: the episode, its text view and the line
    /// that names it; a call not stored as an episode is recorded here.
    pub(super) fn record(
        &self,
        validated: &Validated<'_>,
        concluded: Concluded,
        reservation: Option<&Reservation>,
        started: Instant,
    ) -> Recording {
        let request = validated.request;
        let Concluded { parts, stop } = concluded;
        let mut result = build(parts);
        if !stop.replayable() {
            return Recording::Done(Box::new(self.record_unstored(validated, result, stop, reservation, started)));
        }
        let mut members = episode_members(request, &result, validated.request_input_digest());
        let episode = Canonical::of(&members);
        let digest = Digest::of(&episode.bytes);
        let (transport, text) = stored_view(&episode, &digest, request.view.unwrap_or_default());
        let body = episode.bytes;
        // What is left once the request and trace are taken out is the
        // result's own members: the edge's structured content reuses them.
        members.remove("request");
        members.remove("trace");
        result.members.0 = Some(members);
        let line = self.account(validated, &mut result, Some(transport), text, stop, started);
        Recording::Write(Box::new(Unwritten { result, stop, line, digest, body }))
    }

    /// Write an episode and its line on this thread: together (one commit
    /// where the store can), and the answer goes out only after both.
    pub(super) fn write_now(
        &self,
        validated: &Validated<'_>,
        unwritten: &Unwritten,
        reservation: Option<&Reservation>,
    ) -> Result<u64, RecordFailure> {
        self.experiments.record_with_episode(
            &validated.experiment,
            &unwritten.line,
            reservation,
            &unwritten.row(),
            self.episodes.as_ref(),
        )
    }

    /// The end of stage 5, once the episode and its line were written (or not).
    pub(super) fn record_written(
        &self,
        validated: &Validated<'_>,
        unwritten: Unwritten,
        written: Result<u64, RecordFailure>,
        reservation: Option<&Reservation>,
        started: Instant,
    ) -> CapabilityResult {
        let Unwritten { mut result, stop, .. } = unwritten;
        match written {
            Ok(ordinal) => result.accounting.ordinal = Some(ordinal),
            Err(RecordFailure::Line(e)) => {
                tracing::warn!(error = %crate::errors::render(&e), "experiment record not written")
            }
            Err(RecordFailure::Episode(e)) => {
                // An answer without its durable record is no answer.
                let failed = storage_failed_text(format!(
                    "episode store (the episode and its experiment line): {}",
                    crate::errors::render(&e)
                ));
                let result = build(ResultParts::failed(&result.capability_id, result.mode, failed));
                return self.record_unstored(validated, result, StopReason::Unavailable, reservation, started);
            }
        }
        self.count(&result, stop);
        result
    }

    /// Record a call whose result is not stored as an episode.
    fn record_unstored(
        &self,
        validated: &Validated<'_>,
        mut result: CapabilityResult,
        stop: StopReason,
        reservation: Option<&Reservation>,
        started: Instant,
    ) -> CapabilityResult {
        let (transport, text) = unrecorded(&result, validated.request.view.unwrap_or_default());
        let line = self.account(validated, &mut result, transport, text, stop, started);
        match self.experiments.record(&validated.experiment, &line, reservation) {
            Ok(ordinal) => result.accounting.ordinal = Some(ordinal),
            Err(e) => tracing::warn!(error = %crate::errors::render(&e), "experiment record not written"),
        }
        self.count(&result, stop);
        result
    }

    /// Give `result` its transport, text and accounting; its experiment line
    /// (the policy it ran under remembered).
    fn account(
        &self,
        validated: &Validated<'_>,
        result: &mut CapabilityResult,
        transport: Option<Transport>,
        text: String,
        stop: StopReason,
        started: Instant,
    ) -> InvocationRecord {
        let accounting = Accounting {
            wall_time_us: started.elapsed().as_micros() as u64,
            fuel_consumed: result.fuel_consumed,
            experiment: Some(self.experiment_named(validated.request).to_owned()),
            ordinal: None,
            stop_reason: Some(stop),
        };
        deliver(result, transport, text, accounting);
        let transport = result.transport.as_ref().filter(|t| t.stored);
        let policy = &validated.policy;
        let line = InvocationRecord {
            ordinal: 0,
            capability_id: result.capability_id.clone(),
            stop_reason: stop,
            episode: transport.map(|t| t.full_result_digest),
            fuel: result.fuel_consumed,
            wall_time_us: result.accounting.wall_time_us,
            logical_bytes: transport.map_or(0, |t| t.logical_bytes),
            model_visible_bytes: transport.map_or(0, |t| t.model_visible_bytes),
            wire_bytes: crate::limits::json_size(&*result) as u64 + result.text.len() as u64,
            policy_digest: policy.digest(),
        };
        let body = || policy.recorded().to_string();
        if let Err(e) = self.experiments.remember_policy(&line.policy_digest, body) {
            tracing::warn!(error = %crate::errors::render(&e), "policy not remembered");
        }
        line
    }

    /// Count an answered invocation for `/metrics` (its id only if installed).
    pub(super) fn count(&self, result: &CapabilityResult, stop: StopReason) {
        let known = self.catalog.get(&result.capability_id).is_some();
        self.metrics.invocation(
            if known { &result.capability_id } else { "unknown" },
            stop,
            result.fuel_consumed,
            result.verification.as_ref().map(|v| v.status),
        );
    }
}

/// A stored episode's transport metadata and text view.
fn stored_view(episode: &Canonical<'_>, digest: &Digest, view: ResultView) -> (Transport, String) {
    let uri = episode_uri(digest);
    let projection = crate::projection::project(episode, view, digest, &uri);
    let transport = Transport {
        view,
        logical_bytes: episode.bytes.len() as u64,
        model_visible_bytes: projection.text.len() as u64,
        output_complete_in_text: projection.output_complete,
        full_result_digest: *digest,
        stored: true,
        full_result_episode_uri: Some(uri),
    };
    (transport, projection.text)
}

/// The result as an episode: everything but accounting, transport and text,
/// plus the request that produced it (what a replay re-executes) and its
/// ordinal event trace.
pub fn episode_value(request: &InvokeRequest, result: &CapabilityResult) -> Value {
    Value::Object(episode_members(request, result, None))
}

/// [`episode_value`]'s members; `input_digest` is the request's input's
/// digest when it is known already (computed here otherwise).
fn episode_members(
    request: &InvokeRequest,
    result: &CapabilityResult,
    input_digest: Option<Digest>,
) -> Map<String, Value> {
    let mut map = crate::json::members(result);
    map.remove("accounting");
    map.remove("transport");
    map.insert(
        "request".into(),
        json!({
            "capability_id": request.capability_id,
            "mode": request.mode,
            "input": request.input,
            "budget": request.budget,
        }),
    );
    map.insert("trace".into(), Value::Array(trace(request, result, input_digest)));
    map
}

/// What happened, in order; `offset` is an ordinal, never a timestamp.
fn trace(request: &InvokeRequest, result: &CapabilityResult, input_digest: Option<Digest>) -> Vec<Value> {
    let input_digest = input_digest.unwrap_or_else(|| Digest::of_json(&request.input));
    let mut events = vec![json!({"event": "request", "payload": {
        "capability_id": request.capability_id, "mode": request.mode,
        "input_digest": input_digest.to_string(),
    }})];
    if let Some(p) = &result.provenance {
        events.push(json!({"event": "component_resolved", "payload": {
            "component": p.provider_digest, "install_tier": p.install_tier, "budgets": p.budgets,
        }}));
        events.push(json!({"event": "component_returned", "payload": {
            "fuel_consumed": result.fuel_consumed, "log_lines": result.guest_log.len(),
        }}));
    }
    for artifact in &result.artifacts {
        events.push(json!({"event": "artifact_stored", "payload": {
            "role": artifact.role, "uri": artifact.uri, "schema_uri": artifact.schema_uri,
        }}));
    }
    if let Some(v) = &result.verification {
        events.push(json!({"event": "verdict", "payload": {
            "status": v.status, "checker": v.checker_digest, "authorized": v.checker_authorized,
        }}));
    }
    events.push(json!({"event": "stop", "payload": {
        "status": result.status, "assurance": result.assurance,
        "code": result.diagnostic.as_ref().map(|d| d.code),
    }}));
    events
        .into_iter()
        .enumerate()
        .map(|(offset, mut event)| {
            event["offset"] = json!(offset);
            event
        })
        .collect()
}
