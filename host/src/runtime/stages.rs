//! The values that flow between the invoke pipeline's stages
//! (`pipeline.rs` composes the stages): what `resolve` found, what
//! `validate` hands on, how a call runs, how it ended, what `admit`
//! decided and what `record` has left to write. The stages and the
//! pipeline import these; this module imports none of them.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;

use jacobian_guest::protocol::Mode;
use serde_json::Value;

use crate::catalog::CatalogEntry;
use crate::contract::{CallBudgets, CapabilityResult, Diagnostic, InvokeRequest};
use crate::digest::Digest;
use crate::engine::{ArtifactAccess, CallControl, InlineLimits};
use crate::experiments::{InvocationRecord, Reservation, StopReason};
use crate::policy::Policy;
use crate::registry::Installed;
use crate::store::{CertificateRecord, EpisodeRow};

use super::result::ResultParts;

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
