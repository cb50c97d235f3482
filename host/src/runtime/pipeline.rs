//! The invoke pipeline: `resolve → validate → admit → execute → record`.
//!
//! Each stage is a function from one typed value to the next, or to a
//! [`Refusal`] that carries its stage and dot-path in its diagnostic. Each
//! is a value holding exactly what it uses behind narrow traits the runtime
//! implements (`resolve::Resolve` over `Components` and `Router`,
//! `validate::Validate` over `Artifacts`, `admit::Admit` over `Ledger`,
//! `execute::Execute` over `Runner` and `Outputs`, `record::Record` over
//! `Journal`), each unit-tested on fakes with no runtime opened; the stages
//! run synchronously, and only the quick path on the protocol thread
//! awaits, for its group commit.
//!
//! **Invariant: a request is validated completely before anything is
//! written.** A request refused by `resolve` or `validate` is admitted to no
//! experiment, reserves nothing and stores nothing: no experiment row, no
//! reservation, no episode, no entry in any per-experiment map. `admit` is
//! the first stage that writes (a reservation in a shared store), and only
//! for a request that will run; `record` writes the episode and the
//! experiment row.
//!
//! The stop reason travels as data from where the call ended
//! ([`Concluded::stop`]), and the result is built once, from its parts
//! ([`super::result::build`]), at the end.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use jacobian_guest::protocol::Mode;
use serde_json::Value;

use crate::catalog::{CatalogEntry, EntryKind};
use crate::contract::{Accounting, CallBudgets, CapabilityResult, Diagnostic, InvokeRequest};
use crate::digest::Digest;
use crate::engine::{ArtifactAccess, CallControl, InlineLimits};
use crate::experiments::{InvocationRecord, Reservation, StopReason};
use crate::policy::Policy;
use crate::registry::Installed;
use crate::store::{CertificateRecord, EpisodeRow};

use super::Runtime;
use super::diagnostics::names_an_artifact;
use super::experiments::RecordFailure;
use super::record::Journal as _;
use super::result::{ResultParts, build, deliver, unrecorded};

/// How long a capability whose inline attempt went beyond its bounds is not
/// run inline again: its calls run as ordinary calls meanwhile.
pub const NOT_QUICK_FOR: std::time::Duration = std::time::Duration::from_secs(10);

/// Why a request went no further: nothing was admitted, reserved or stored for it.
#[derive(Debug)]
pub(super) struct Refusal {
    /// The mode, once known.
    pub mode: Option<Mode>,
    /// What was wrong, with its stage and (where a field is at fault) `path`.
    pub diagnostic: Diagnostic,
}

impl Refusal {
    pub fn new(mode: Option<Mode>, diagnostic: Diagnostic) -> Self {
        Refusal { mode, diagnostic }
    }
}

/// What `resolve` found: the experiment, the policy, and what will run.
pub(super) struct Resolved<'a> {
    pub request: &'a InvokeRequest,
    pub experiment: String,
    pub policy: Arc<Policy>,
    pub target: Target<'a>,
}

/// What a resolved request will do.
pub(super) enum Target<'a> {
    /// Call a component: the capability named, or the checker
    /// `certificate.verify` chose for the certificate.
    Call(Call<'a>),
    /// `certificate.verify` found no authorized checker for the certificate:
    /// nothing runs, and the answer names the open obligation.
    Unrouted(Unrouted),
}

/// One component call, resolved. `I` is the installed component that runs
/// (a stage's unit tests give a stand-in: nothing of it is read but its
/// install tier, and the sandbox that runs it is behind a trait).
pub(super) struct Call<'a, I = Arc<Installed>> {
    /// The catalog entry that runs (the checker, for a routed request).
    pub entry: &'a CatalogEntry,
    pub installed: I,
    pub mode: Mode,
    /// The request's input, or the checker input `certificate.verify` built.
    pub input: Cow<'a, Value>,
    /// The certificate `certificate.verify` rewrote the request to check.
    pub routed: Option<Certificate>,
}

/// A certificate artifact and what the host recorded when it was made.
#[derive(Debug, Clone)]
pub(super) struct Certificate {
    pub uri: String,
    pub record: CertificateRecord,
}

/// A certificate `certificate.verify` has no checker for: no visible
/// checker is authorized for its role (or reads its schema and format).
pub(super) struct Unrouted {
    pub certificate: String,
    pub schema_uri: String,
    pub record: CertificateRecord,
}

/// What `validate` hands on: everything the call needs, checked.
pub(super) struct Validated<'a, I = Arc<Installed>> {
    pub request: &'a InvokeRequest,
    pub experiment: String,
    pub policy: Arc<Policy>,
    pub work: Work<'a, I>,
}

impl<I> Validated<'_, I> {
    /// The digest of the request's own input, when validation computed it
    /// (the input a call runs on is the request's, not one that
    /// `certificate.verify` built): the episode's trace names it too, and a
    /// large input is not canonicalized and hashed twice.
    pub fn request_input_digest(&self) -> Option<Digest> {
        match &self.work {
            Work::Run(prepared) if std::ptr::eq(&*prepared.call.input, &self.request.input) => {
                Some(prepared.input_digest)
            }
            _ => None,
        }
    }
}

/// The work of a validated request.
pub(super) enum Work<'a, I = Arc<Installed>> {
    Run(Prepared<'a, I>),
    Unrouted(Unrouted),
}

/// A component call with its budgets and the artifacts it may read.
pub(super) struct Prepared<'a, I = Arc<Installed>> {
    pub call: Call<'a, I>,
    pub budgets: CallBudgets,
    /// The operator's wall-clock ceiling of an ordinary call (`budgets.wall_ms`).
    pub wall: std::time::Duration,
    pub access: ArtifactAccess,
    /// The artifact URIs the input names, in input order.
    pub references: Vec<String>,
    pub input_digest: Digest,
    /// The length of the input's canonical bytes (what its episode stores of it).
    pub input_bytes: u64,
    /// The tenant the call runs for (`None`: the operator): its outputs are granted to it.
    pub tenant: Option<&'a str>,
}

/// How a component call runs: to its end, or as a quick attempt on a thread
/// that must not be held long. `A` is what an abandoned call answers:
/// [`Abandoned`] for an attempt; for an ordinary call [`Infallible`], so
/// that a call that cannot be abandoned says so in its type (an
/// `Attempt` cannot be made without an `A`).
#[derive(Clone, Copy)]
pub(super) enum Run<'c, A> {
    /// Waits for a slot, runs to its end; the caller may cancel it.
    Ordinary(&'c CallControl),
    /// Runs within these bounds, or is abandoned with nothing of it kept.
    Attempt(InlineLimits, A),
}

/// A call that runs to its end.
pub(super) fn ordinary(control: &CallControl) -> Run<'_, Infallible> {
    Run::Ordinary(control)
}

/// A quick attempt within the default inline bounds.
const ATTEMPT: Run<'static, Abandoned> = Run::Attempt(InlineLimits::DEFAULT, Abandoned);

/// A quick attempt went beyond its bounds: nothing of it was kept.
#[derive(Debug, Clone, Copy)]
pub(super) struct Abandoned;

/// How an invocation ended: its parts and its stop reason.
pub(super) struct Concluded {
    pub parts: ResultParts,
    pub stop: StopReason,
}

/// What `admit` decided for a request that will be recorded.
pub(super) enum Admitted {
    /// Run it; `reservation` holds its place in a shared store until it is
    /// recorded, `hold` its place under its tenant's quota.
    Run { reservation: Option<Reservation>, hold: Option<super::QuotaHold> },
    /// An experiment budget is spent: recorded, not run.
    Stopped(Box<Concluded>),
}

/// A recorded call's writes, made but not yet durable: its episode and its
/// experiment line, to be written together (`Record::write`, or a
/// group commit on the MCP edge's thread), then `Record::written`.
pub(super) struct Unwritten {
    pub result: CapabilityResult,
    pub stop: StopReason,
    pub line: InvocationRecord,
    pub digest: Digest,
    pub body: Vec<u8>,
}

impl Unwritten {
    /// The episode row to write.
    pub fn row(&self) -> EpisodeRow<'_> {
        EpisodeRow { digest: &self.digest, capability_id: &self.result.capability_id, body: &self.body }
    }
}

/// What `record` has to do next.
pub(super) enum Recording {
    /// Nothing more: the result as answered (nothing to store, or only a line, written).
    Done(Box<CapabilityResult>),
    /// Write the episode and its line, then `Record::written`.
    Write(Box<Unwritten>),
}

/// Counts an invocation as in flight while alive.
struct InFlight<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a std::sync::atomic::AtomicUsize) -> Self {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Runtime {
    /// Answer `capability.invoke` and record it: the episode (when the call ran
    /// to an answer or a diagnostic of its own) and its line in the experiment.
    /// Never panics on anything a request can influence; every failure is a
    /// typed diagnostic in the result.
    pub fn invoke(&self, request: &InvokeRequest) -> CapabilityResult {
        self.invoke_cancellable(request, &CallControl::default())
    }

    /// [`Runtime::invoke`] under the caller's control: `control` cancels the
    /// call (then nothing is stored) and receives progress reports.
    pub fn invoke_cancellable(&self, request: &InvokeRequest, control: &CallControl) -> CapabilityResult {
        let Ok(result) = self.answer(request, ordinary(control));
        result
    }

    /// Answer `capability.invoke` on the calling thread if it is quick: a
    /// local store, an input of at most [`crate::limits::INLINE_INPUT_BYTES`]
    /// that names no artifact, and a component call within
    /// [`InlineLimits::DEFAULT`]. The MCP edge calls this on its async thread
    /// before handing the call to a blocking thread, which costs two thread
    /// switches. `None`: the call is not quick, nothing of it was stored or
    /// counted, and it must be run with [`Runtime::invoke_cancellable`]. A
    /// quick call's answer and records are exactly those of an ordinary call
    /// (fuel is deterministic).
    ///
    /// A capability whose attempt went beyond its bounds is not run inline
    /// again for [`NOT_QUICK_FOR`] (its refusals still are): a client sending
    /// calls that run past the attempt's bounds would otherwise hold the
    /// protocol thread for up to [`crate::engine::INLINE_DEADLINE`] with every
    /// one of them.
    pub fn try_invoke_quick(&self, request: &InvokeRequest) -> Option<CapabilityResult> {
        if !self.quick(request) {
            return None;
        }
        self.answer(request, ATTEMPT).ok()
    }

    /// [`Runtime::try_invoke_quick`] on the MCP edge's async thread: the
    /// call's episode and line join a group commit with the other quick calls
    /// answered meanwhile (see `commits`), and the answer comes once they are
    /// written.
    pub async fn invoke_quick(&self, request: &InvokeRequest) -> Option<CapabilityResult> {
        if !self.quick(request) {
            return None;
        }
        self.answer_grouped(request).await.ok()
    }

    /// Whether a request may be tried as a quick call.
    fn quick(&self, request: &InvokeRequest) -> bool {
        self.experiments.local()
            && crate::limits::json_size(&request.input) <= crate::limits::INLINE_INPUT_BYTES
            && !names_an_artifact(&request.input)
            && self.catalog.get(&request.capability_id).is_none_or(|e| e.kind != EntryKind::Router)
    }

    /// Run a request to its answer without recording it: no episode, no
    /// experiment line (`reference://catalog` reads the reference pack this
    /// way, under the same policy as any call). A tenant's run is admitted
    /// under its quotas and charged its fuel like any call of its.
    pub(crate) fn run_unrecorded(&self, request: &InvokeRequest) -> CapabilityResult {
        let policy = self.policy();
        let refused =
            |refusal: Refusal| build(ResultParts::failed(&request.capability_id, refusal.mode, refusal.diagnostic));
        let validated = match self.resolve(request, policy).and_then(|resolved| self.validate(resolved)) {
            Ok(validated) => validated,
            Err(refusal) => return refused(refusal),
        };
        // A tenant's run is admitted under its quota and charged its fuel, as its calls are.
        let hold = match self.hold_quota(&validated) {
            Ok(hold) => hold,
            Err(refusal) => return refused(refusal),
        };
        let Ok(concluded) = self.execute(&validated, ordinary(&CallControl::default()));
        let result = build(concluded.parts);
        if let Some(hold) = hold {
            self.release_quota(hold, result.fuel_consumed, 0, false);
        }
        result
    }

    /// The pipeline, its writes made on this thread. `Err` only for a quick
    /// attempt that went beyond its bounds (then nothing was stored or counted).
    fn answer<A: Copy>(&self, request: &InvokeRequest, how: Run<'_, A>) -> Result<CapabilityResult, A> {
        let _in_flight = InFlight::enter(&self.in_flight);
        let (result, place) = match self.stages(request, how, Instant::now())? {
            Staged::Answered(result) => return Ok(*result),
            Staged::Recorded(result, place) => (*result, place),
            Staged::Writing(writing) => {
                let written =
                    self.recorder().write(&writing.validated, &writing.unwritten, writing.reservation.as_ref());
                self.written(*writing, written)
            }
        };
        Ok(self.settle(place, result))
    }

    /// [`Runtime::answer`] of a quick attempt on the MCP edge's async thread:
    /// its writes join a group commit, and its usage waits, as a future, for
    /// the write lock to be free rather than blocking the thread.
    async fn answer_grouped(&self, request: &InvokeRequest) -> Result<CapabilityResult, Abandoned> {
        let _in_flight = InFlight::enter(&self.in_flight);
        let (result, place) = match self.stages(request, ATTEMPT, Instant::now())? {
            Staged::Answered(result) => return Ok(*result),
            Staged::Recorded(result, place) => (*result, place),
            Staged::Writing(writing) => {
                let Writing { validated, unwritten, reservation, .. } = &*writing;
                let written = match reservation {
                    None => {
                        let (experiments, episodes) = (&self.experiments, self.episodes.as_ref());
                        let row = unwritten.row();
                        self.commits.write(experiments, episodes, &validated.experiment, &unwritten.line, &row).await
                    }
                    Some(_) => self.recorder().write(validated, unwritten, reservation.as_ref()),
                };
                self.written(*writing, written)
            }
        };
        if place.hold.is_some() {
            // Its usage is written next: not while another thread's write
            // would block this one.
            self.episodes.writer_free().await;
        }
        Ok(self.settle(place, result))
    }

    /// `resolve → validate → admit → execute → record` up to the writes.
    fn stages<'a, A: Copy>(
        &'a self,
        request: &'a InvokeRequest,
        how: Run<'_, A>,
        started: Instant,
    ) -> Result<Staged<'a>, A> {
        let refused = |refusal| Ok(Staged::Answered(Box::new(self.refused(request, refusal, started))));
        let policy = self.policy();
        let validated = match self.resolve(request, policy).and_then(|resolved| self.validate(resolved)) {
            Ok(validated) => validated,
            Err(refusal) => return refused(refusal),
        };
        let (concluded, reservation, hold) = match self.admit(&validated) {
            Err(refusal) => return refused(refusal),
            Ok(Admitted::Stopped(concluded)) => (*concluded, None, None),
            Ok(Admitted::Run { reservation, hold }) => match self.execute(&validated, how) {
                Ok(concluded) => (concluded, reservation, hold),
                Err(abandoned) => {
                    self.experiments.withdraw(&validated.experiment, &request.capability_id);
                    if let Some(hold) = hold {
                        self.release_quota(hold, 0, 0, true);
                    }
                    return Err(abandoned);
                }
            },
        };
        let place = Place { runtime: self, hold, fuel: concluded.parts.run.fuel_consumed };
        Ok(match self.recorder().record(&validated, concluded, reservation.as_ref(), started) {
            Recording::Done(result) => Staged::Recorded(result, place),
            Recording::Write(unwritten) => {
                Staged::Writing(Box::new(Writing { validated, unwritten: *unwritten, reservation, place, started }))
            }
        })
    }

    /// The answer of a call whose writes were made (or failed), and its quota place.
    fn written<'a>(&self, writing: Writing<'a>, written: Result<u64, RecordFailure>) -> (CapabilityResult, Place<'a>) {
        let Writing { validated, unwritten, reservation, place, started } = writing;
        (self.recorder().written(&validated, unwritten, written, reservation.as_ref(), started), place)
    }

    /// The tenant's quota place released with what the call spent: its fuel,
    /// and what it stored (the episode, its input and complete result, and
    /// the artifacts the call wrote).
    fn settle(&self, mut place: Place<'_>, result: CapabilityResult) -> CapabilityResult {
        if let Some(hold) = place.hold.take() {
            let stored = result
                .transport
                .as_ref()
                .filter(|t| t.stored)
                .map_or(0, |t| result.artifacts.iter().fold(t.logical_bytes, |sum, a| sum.saturating_add(a.bytes)));
            self.release_quota(hold, result.fuel_consumed, stored, false);
        }
        result
    }
}

/// A request through its stages up to its writes.
enum Staged<'a> {
    /// Refused: answered, nothing written, no quota place.
    Answered(Box<CapabilityResult>),
    /// Recorded without an episode to write (or only a line, written).
    Recorded(Box<CapabilityResult>, Place<'a>),
    /// Its episode and line to write.
    Writing(Box<Writing<'a>>),
}

/// A call whose episode and line are still to be written.
struct Writing<'a> {
    validated: Validated<'a>,
    unwritten: Unwritten,
    reservation: Option<Reservation>,
    place: Place<'a>,
    started: Instant,
}

/// A call's place under its tenant's quota once it has run: released with
/// what it spent. Dropped with the call while its writes wait (they are
/// written all the same), it is released here, charged the bytes it
/// reserved: the most the call could have stored.
struct Place<'r> {
    runtime: &'r Runtime,
    hold: Option<super::QuotaHold>,
    fuel: u64,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if let Some(hold) = self.hold.take() {
            let stored = hold.bytes();
            self.runtime.release_quota(hold, self.fuel, stored, false);
        }
    }
}

impl Runtime {
    /// The answer to `capability.invoke` arguments that are no request (the
    /// edge could not read them): refused like any request, nothing written.
    pub fn refuse_arguments(&self, diagnostic: Diagnostic) -> CapabilityResult {
        self.refused(&InvokeRequest::default(), Refusal::new(None, diagnostic), Instant::now())
    }

    /// The answer to a refused request: a diagnostic, and nothing written.
    fn refused(&self, request: &InvokeRequest, refusal: Refusal, started: Instant) -> CapabilityResult {
        let mut result = build(ResultParts::failed(&request.capability_id, refusal.mode, refusal.diagnostic));
        let accounting = Accounting {
            wall_time_us: started.elapsed().as_micros() as u64,
            stop_reason: Some(StopReason::Failed),
            ..Accounting::default()
        };
        let (transport, text) = unrecorded(&result, request.view.unwrap_or_default());
        deliver(&mut result, transport, text, accounting);
        self.count(&result, StopReason::Failed);
        result
    }
}
