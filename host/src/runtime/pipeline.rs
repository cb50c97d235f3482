//! The invoke pipeline: `resolve → validate → admit → execute → record`.
//!
//! Each stage is a function from one typed value to the next, or to a
//! `Refusal` (`stages.rs`, with every value that flows between them) that carries its stage and dot-path in its diagnostic. Each
//! is a value holding exactly what it uses behind narrow traits the runtime
//! implements (`resolve::Resolve` over `Components` and `Router`, the
//! latter `route::Route` over `Certificates`,
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
//! (`Concluded::stop`), and the result is built once, from its parts
//! ([`super::result::build`]), at the end.

use std::sync::Arc;
use std::time::Instant;

use crate::catalog::EntryKind;
use crate::contract::{CapabilityResult, Diagnostic, InvokeRequest};
use crate::engine::{CallControl, CallReport, InlineLimits};
use crate::experiments::Reservation;
use crate::policy::Policy;
use crate::registry::Installed;

use super::Runtime;
use super::admit::{Admit, Ledger};
use super::diagnostics::names_an_artifact;
use super::execute::{Answer, Execute, Runner};
use super::experiments::RecordFailure;
use super::record::Record;
use super::resolve::Resolve;
use super::result::{ResultParts, RunFacts, build};
use super::stages::{Abandoned, Admitted, Prepared, Recording, Refusal, Run, Unwritten, Validated, ordinary};
use super::validate::Validate;
use super::verify::Check;

/// A quick attempt within the default inline bounds.
const ATTEMPT: Run<'static, Abandoned> = Run::Attempt(InlineLimits::DEFAULT, Abandoned);

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
    /// again for `stages::NOT_QUICK_FOR` (its refusals still are): a client sending
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
        let pipeline = self.pipeline();
        let refused =
            |refusal: Refusal| build(ResultParts::failed(&request.capability_id, refusal.mode, refusal.diagnostic));
        let validated = match pipeline.validated(request, self.policy()) {
            Ok(validated) => validated,
            Err(refusal) => return refused(refusal),
        };
        // A tenant's run is admitted under its quota and charged its fuel, as its calls are.
        let hold = match pipeline.admit.hold_quota(&validated) {
            Ok(hold) => hold,
            Err(refusal) => return refused(refusal),
        };
        let Ok(concluded) = pipeline.execute.execute(&validated, ordinary(&CallControl::default()));
        let result = build(concluded.parts);
        if let Some(hold) = hold {
            pipeline.admit.ledger.release(hold, result.fuel_consumed, 0, false);
        }
        result
    }

    /// The pipeline, its writes made on this thread. `Err` only for a quick
    /// attempt that went beyond its bounds (then nothing was stored or counted).
    fn answer<A: Copy>(&self, request: &InvokeRequest, how: Run<'_, A>) -> Result<CapabilityResult, A> {
        let _in_flight = InFlight::enter(&self.in_flight);
        let started = Instant::now();
        let pipeline = self.pipeline();
        let (result, place) = match pipeline.stages(request, self.policy(), how, started)? {
            Staged::Answered(result) => return Ok(*result),
            Staged::Recorded(result, place) => (*result, place),
            Staged::Writing(writing) => {
                let written =
                    pipeline.record.write(&writing.validated, &writing.unwritten, writing.reservation.as_ref());
                pipeline.written(*writing, written)
            }
        };
        Ok(pipeline.settle(place, result))
    }

    /// [`Runtime::answer`] of a quick attempt on the MCP edge's async thread:
    /// its writes join a group commit, and its usage waits, as a future, for
    /// the write lock to be free rather than blocking the thread.
    async fn answer_grouped(&self, request: &InvokeRequest) -> Result<CapabilityResult, Abandoned> {
        let _in_flight = InFlight::enter(&self.in_flight);
        let started = Instant::now();
        let pipeline = self.pipeline();
        let (result, place) = match pipeline.stages(request, self.policy(), ATTEMPT, started)? {
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
                    Some(_) => pipeline.record.write(validated, unwritten, reservation.as_ref()),
                };
                pipeline.written(*writing, written)
            }
        };
        if place.hold.is_some() {
            // Its usage is written next: not while another thread's write
            // would block this one.
            self.episodes.writer_free().await;
        }
        Ok(pipeline.settle(place, result))
    }

    /// This runtime's pipeline: each stage over the runtime's own parts.
    pub(super) fn pipeline(&self) -> Pipeline<'_> {
        Pipeline {
            resolve: Resolve { components: self, router: self, default_experiment: &self.default_experiment },
            validate: Validate { artifacts: self },
            admit: Admit { ledger: self },
            execute: Execute { runner: self, outputs: self },
            record: Record { journal: self, default_experiment: &self.default_experiment },
        }
    }
}

/// The runtime runs `execute`'s components: a producer's call in its
/// sandbox, a checker's through `verify.rs`'s `Check` (here, where both
/// stages meet, so that neither imports the other).
impl Runner<Arc<Installed>> for Runtime {
    fn call<A: Copy>(&self, prepared: &Prepared<'_>, request: &[u8], how: Run<'_, A>) -> Result<CallReport, A> {
        self.call_component(prepared, request, how)
    }

    fn check<A: Copy>(
        &self,
        prepared: &Prepared<'_>,
        policy: &Policy,
        how: Run<'_, A>,
    ) -> Result<(RunFacts, Answer), A> {
        Check { verifier: self }.check(prepared, policy, how)
    }
}

/// The five stages composed, each a value over what it uses: a request
/// through them up to its writes, and what follows the writes.
pub(super) struct Pipeline<'r> {
    pub resolve: Resolve<'r>,
    pub validate: Validate<'r>,
    pub admit: Admit<'r>,
    pub execute: Execute<'r, Runtime>,
    pub record: Record<'r>,
}

impl<'r> Pipeline<'r> {
    /// `resolve → validate`: a request checked completely, nothing written.
    pub fn validated<'a>(&self, request: &'a InvokeRequest, policy: Arc<Policy>) -> Result<Validated<'a>, Refusal>
    where
        'r: 'a,
    {
        self.resolve.resolve(request, policy).and_then(|resolved| self.validate.validate(resolved))
    }

    /// `resolve → validate → admit → execute → record` up to the writes.
    fn stages<'a, A: Copy>(
        &self,
        request: &'a InvokeRequest,
        policy: Arc<Policy>,
        how: Run<'_, A>,
        started: Instant,
    ) -> Result<Staged<'a>, A>
    where
        'r: 'a,
    {
        let refused = |refusal| Ok(Staged::Answered(Box::new(self.record.refused(request, refusal, started))));
        let validated = match self.validated(request, policy) {
            Ok(validated) => validated,
            Err(refusal) => return refused(refusal),
        };
        let (concluded, reservation, hold) = match self.admit.admit(&validated) {
            Err(refusal) => return refused(refusal),
            Ok(Admitted::Stopped(concluded)) => (*concluded, None, None),
            Ok(Admitted::Run { reservation, hold }) => match self.execute.execute(&validated, how) {
                Ok(concluded) => (concluded, reservation, hold),
                Err(abandoned) => {
                    self.admit.withdraw(&validated, hold);
                    return Err(abandoned);
                }
            },
        };
        let place = Place { ledger: self.admit.ledger, hold, fuel: concluded.parts.run.fuel_consumed };
        Ok(match self.record.record(&validated, concluded, reservation.as_ref(), started) {
            Recording::Done(result) => Staged::Recorded(result, place),
            Recording::Write(unwritten) => {
                Staged::Writing(Box::new(Writing { validated, unwritten: *unwritten, reservation, place, started }))
            }
        })
    }

    /// The answer of a call whose writes were made (or failed), and its quota place.
    fn written<'a>(&self, writing: Writing<'a>, written: Result<u64, RecordFailure>) -> (CapabilityResult, Place<'a>) {
        let Writing { validated, unwritten, reservation, place, started } = writing;
        (self.record.written(&validated, unwritten, written, reservation.as_ref(), started), place)
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
            place.ledger.release(hold, result.fuel_consumed, stored, false);
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
    ledger: &'r dyn Ledger,
    hold: Option<super::QuotaHold>,
    fuel: u64,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if let Some(hold) = self.hold.take() {
            let stored = hold.bytes();
            self.ledger.release(hold, self.fuel, stored, false);
        }
    }
}

impl Runtime {
    /// The answer to `capability.invoke` arguments that are no request (the
    /// edge could not read them): refused like any request, nothing written.
    pub fn refuse_arguments(&self, diagnostic: Diagnostic) -> CapabilityResult {
        self.pipeline().record.refused(&InvokeRequest::default(), Refusal::new(None, diagnostic), Instant::now())
    }
}
