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
use crate::store::EpisodeRow;

use super::Runtime;
use super::diagnostics::storage_failed_text;
use super::experiments::{ExperimentError, RecordFailure};
use super::result::{ResultParts, build, deliver, unrecorded};
use super::stages::{Concluded, Recording, Refusal, Unwritten, Validated};

/// What `record` writes and counts: the experiment's lines, the episodes,
/// the policies lines name, and the metrics.
pub(super) trait Journal: Sync {
    /// Write a line alone (a call whose result is not stored as an episode).
    fn line(
        &self,
        experiment: &str,
        line: &InvocationRecord,
        reservation: Option<&Reservation>,
    ) -> Result<u64, ExperimentError>;
    /// Write an episode and its line: together (one commit where the store can).
    fn episode(
        &self,
        experiment: &str,
        line: &InvocationRecord,
        reservation: Option<&Reservation>,
        row: &EpisodeRow<'_>,
    ) -> Result<u64, RecordFailure>;
    /// Keep the policy a line names (once per digest).
    fn remember_policy(&self, digest: &Digest, body: &dyn Fn() -> String) -> Result<(), ExperimentError>;
    /// Count an answered invocation for `/metrics`.
    fn count(&self, result: &CapabilityResult, stop: StopReason);
}

/// Stage 5, as a value holding exactly what it writes to.
pub(super) struct Record<'r> {
    pub journal: &'r dyn Journal,
    /// The experiment of a request that names none.
    pub default_experiment: &'r str,
}

impl Record<'_> {
    /// Stage 5 up to its writes: the episode, its text view and the line
    /// that names it; a call not stored as an episode is recorded here.
    pub fn record(
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
            return Recording::Done(Box::new(self.unstored(validated, result, stop, reservation, started)));
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
    pub fn write(
        &self,
        validated: &Validated<'_>,
        unwritten: &Unwritten,
        reservation: Option<&Reservation>,
    ) -> Result<u64, RecordFailure> {
        self.journal.episode(&validated.experiment, &unwritten.line, reservation, &unwritten.row())
    }

    /// The end of stage 5, once the episode and its line were written (or
    /// not): an episode that was not written is no answer (`STORAGE_FAILED`,
    /// recorded as a line alone); a line that was not written is logged.
    pub fn written(
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
                return self.unstored(validated, result, StopReason::Unavailable, reservation, started);
            }
        }
        self.journal.count(&result, stop);
        result
    }

    /// The answer to a refused request: a diagnostic, and nothing written.
    pub fn refused(&self, request: &InvokeRequest, refusal: Refusal, started: Instant) -> CapabilityResult {
        let mut result = build(ResultParts::failed(&request.capability_id, refusal.mode, refusal.diagnostic));
        let accounting = Accounting {
            wall_time_us: started.elapsed().as_micros() as u64,
            stop_reason: Some(StopReason::Failed),
            ..Accounting::default()
        };
        let (transport, text) = unrecorded(&result, request.view.unwrap_or_default());
        deliver(&mut result, transport, text, accounting);
        self.journal.count(&result, StopReason::Failed);
        result
    }

    /// Record a call whose result is not stored as an episode.
    fn unstored(
        &self,
        validated: &Validated<'_>,
        mut result: CapabilityResult,
        stop: StopReason,
        reservation: Option<&Reservation>,
        started: Instant,
    ) -> CapabilityResult {
        let (transport, text) = unrecorded(&result, validated.request.view.unwrap_or_default());
        let line = self.account(validated, &mut result, transport, text, stop, started);
        match self.journal.line(&validated.experiment, &line, reservation) {
            Ok(ordinal) => result.accounting.ordinal = Some(ordinal),
            Err(e) => tracing::warn!(error = %crate::errors::render(&e), "experiment record not written"),
        }
        self.journal.count(&result, stop);
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
        let named = validated.request.experiment.as_deref().unwrap_or(self.default_experiment);
        let accounting = Accounting {
            wall_time_us: started.elapsed().as_micros() as u64,
            fuel_consumed: result.fuel_consumed,
            experiment: Some(named.to_owned()),
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
        if let Err(e) = self.journal.remember_policy(&line.policy_digest, &body) {
            tracing::warn!(error = %crate::errors::render(&e), "policy not remembered");
        }
        line
    }
}

impl Journal for Runtime {
    fn line(
        &self,
        experiment: &str,
        line: &InvocationRecord,
        reservation: Option<&Reservation>,
    ) -> Result<u64, ExperimentError> {
        self.experiments.record(experiment, line, reservation)
    }

    fn episode(
        &self,
        experiment: &str,
        line: &InvocationRecord,
        reservation: Option<&Reservation>,
        row: &EpisodeRow<'_>,
    ) -> Result<u64, RecordFailure> {
        self.experiments.record_with_episode(experiment, line, reservation, row, self.episodes.as_ref())
    }

    fn remember_policy(&self, digest: &Digest, body: &dyn Fn() -> String) -> Result<(), ExperimentError> {
        self.experiments.remember_policy(digest, body)
    }

    fn count(&self, result: &CapabilityResult, stop: StopReason) {
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

#[cfg(test)]
mod tests {
    //! `record` on a fake journal that keeps what it was asked to write: no
    //! runtime, no store.

    use super::super::tests::Asked;
    use super::*;
    use crate::contract::{Code, Diagnostic, Stage};
    use crate::policy::Policy;
    use crate::store::DbError;

    /// What the fake journal was asked, and how its episode writes end.
    #[derive(Default)]
    struct Fake {
        episodes_fail: bool,
        asked: Asked,
    }

    impl Fake {
        fn ask(&self, what: String) {
            self.asked.push(what);
        }

        fn asked(&self) -> Vec<String> {
            self.asked.all()
        }
    }

    fn episode_of(line: &InvocationRecord) -> String {
        line.episode.map_or("none".into(), |d| d.to_hex()[..8].to_owned())
    }

    impl Journal for Fake {
        fn line(
            &self,
            experiment: &str,
            line: &InvocationRecord,
            _: Option<&Reservation>,
        ) -> Result<u64, ExperimentError> {
            self.ask(format!("line {experiment} {:?} episode={}", line.stop_reason, episode_of(line)));
            Ok(3)
        }

        fn episode(
            &self,
            experiment: &str,
            line: &InvocationRecord,
            _: Option<&Reservation>,
            row: &EpisodeRow<'_>,
        ) -> Result<u64, RecordFailure> {
            assert_eq!(line.episode.as_ref(), Some(row.digest), "the line names the episode written with it");
            assert_eq!(Digest::of(row.body), *row.digest, "the episode is named by its bytes");
            self.ask(format!("episode {experiment} episode={}", episode_of(line)));
            if self.episodes_fail { Err(RecordFailure::Episode(DbError::Corrupt("disk".into()))) } else { Ok(7) }
        }

        fn remember_policy(&self, digest: &Digest, body: &dyn Fn() -> String) -> Result<(), ExperimentError> {
            assert_eq!(*digest, Policy::default().digest());
            assert!(!body().is_empty());
            self.ask("policy".into());
            Ok(())
        }

        fn count(&self, result: &CapabilityResult, stop: StopReason) {
            self.ask(format!("count {} {stop:?}", result.capability_id));
        }
    }

    fn validated(request: &InvokeRequest) -> Validated<'_> {
        super::super::tests::unrouted(request, Policy::default())
    }

    fn concluded(stop: StopReason) -> Concluded {
        let diagnostic = Diagnostic::new(Code::InvalidInput, Stage::Execution, "the input is not a formula", "fix it");
        Concluded { parts: ResultParts::failed("sat.solve", None, diagnostic), stop }
    }

    fn record(fake: &Fake, stop: StopReason) -> (Recording, InvokeRequest) {
        let request = InvokeRequest { capability_id: "sat.solve".into(), ..InvokeRequest::default() };
        let stage = Record { journal: fake, default_experiment: "default" };
        let recording = stage.record(&validated(&request), concluded(stop), None, Instant::now());
        (recording, request)
    }

    #[test]
    fn a_replayable_answer_is_an_episode_written_with_the_line_that_names_it() {
        let fake = Fake::default();
        let (recording, request) = record(&fake, StopReason::Failed);
        let Recording::Write(unwritten) = recording else { panic!("a replayable answer is an episode to write") };
        assert_eq!(fake.asked(), ["policy"], "nothing written before the episode");
        let digest = unwritten.digest;
        let stage = Record { journal: &fake, default_experiment: "default" };
        let validated = validated(&request);
        let written = stage.write(&validated, &unwritten, None);
        let result = stage.written(&validated, *unwritten, written, None, Instant::now());
        let short = &digest.to_hex()[..8];
        assert_eq!(
            fake.asked(),
            ["policy".into(), format!("episode e episode={short}"), "count sat.solve Failed".into()]
        );
        let transport = result.transport.as_ref().expect("a transport");
        assert!(transport.stored && transport.full_result_digest == digest);
        assert_eq!(result.accounting.ordinal, Some(7));
        assert_eq!(result.accounting.experiment.as_deref(), Some("default"), "the experiment as the caller named it");
        assert_eq!(result.diagnostic.as_ref().map(|d| d.code), Some(Code::InvalidInput));
    }

    #[test]
    fn an_episode_the_store_did_not_keep_is_no_answer_and_is_recorded_as_a_line_alone() {
        let fake = Fake { episodes_fail: true, ..Fake::default() };
        let (recording, request) = record(&fake, StopReason::Completed);
        let Recording::Write(unwritten) = recording else { panic!("an episode to write") };
        let stage = Record { journal: &fake, default_experiment: "default" };
        let validated = validated(&request);
        let written = stage.write(&validated, &unwritten, None);
        let result = stage.written(&validated, *unwritten, written, None, Instant::now());
        assert_eq!(result.diagnostic.as_ref().map(|d| d.code), Some(Code::StorageFailed));
        assert!(result.transport.as_ref().is_none_or(|t| !t.stored), "no episode URI for an episode not kept");
        assert_eq!(fake.asked()[3..], ["line e Unavailable episode=none", "count sat.solve Unavailable"]);
        assert_eq!(result.accounting.ordinal, Some(3));
    }

    #[test]
    fn an_answer_that_is_not_replayable_is_a_line_alone_and_no_episode() {
        for stop in [StopReason::Cancelled, StopReason::Unavailable, StopReason::ExperimentFuelSpent] {
            let fake = Fake::default();
            let (recording, _) = record(&fake, stop);
            let Recording::Done(result) = recording else { panic!("{stop:?}: nothing to write") };
            assert_eq!(
                fake.asked(),
                ["policy".into(), format!("line e {stop:?} episode=none"), format!("count sat.solve {stop:?}")]
            );
            assert_eq!((result.accounting.ordinal, result.accounting.stop_reason), (Some(3), Some(stop)));
        }
    }

    #[test]
    fn a_line_the_store_did_not_keep_leaves_the_answer_without_an_ordinal() {
        let fake = Fake::default();
        let (recording, request) = record(&fake, StopReason::Failed);
        let Recording::Write(unwritten) = recording else { panic!("an episode to write") };
        let stage = Record { journal: &fake, default_experiment: "default" };
        let lost = RecordFailure::Line(ExperimentError::from(DbError::Corrupt("row".into())));
        let result = stage.written(&validated(&request), *unwritten, Err(lost), None, Instant::now());
        assert_eq!(result.accounting.ordinal, None);
        assert_eq!(result.diagnostic.as_ref().map(|d| d.code), Some(Code::InvalidInput), "the answer stands");
        assert!(result.transport.as_ref().is_some_and(|t| t.stored), "its episode was kept");
        assert_eq!(fake.asked().last().map(String::as_str), Some("count sat.solve Failed"), "and it is counted");
    }
}
