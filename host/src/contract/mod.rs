//! The agent-facing contract: requests and results of `capability.describe` and `capability.invoke`,
//! and the closed diagnostic vocabulary. The MCP edge and the CLI both serialize exactly these types.

use jacobian_guest::protocol::{InputKind, Mode, Qualifier, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use strum::EnumIter;

use crate::digest::Digest;

mod members;
mod verification;

pub use verification::{
    Quorum, QuorumOutcome, QuorumVerdict, RecallNote, RecalledBy, RecheckNote, VerificationRecord, VerificationStatus,
};

/// Version of the `CapabilityResult` shape.
pub const RESULT_CONTRACT: &str = "jacobian.capability-result/1";
/// Version of the describe response shape.
pub const DESCRIBE_CONTRACT: &str = "jacobian.capability-describe/1";

/// The rule every projection and result carries.
pub const SCOPE_RULE: &str = "An invocation covers only its exact supplied input or claim. Additional finite or \
bounded invocations remain finite evidence and do not establish an all-orders, all-parameters, or otherwise \
unbounded conclusion.";

/// `capability.describe` arguments. With `capability_id`: one capability's
/// exact projection. Without: search (with `query`) or browse (without) the
/// installed catalog.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeRequest {
    /// Read one capability by exact id.
    #[serde(default)]
    pub capability_id: Option<String>,
    /// Projection when reading by id: SUMMARY (default), CONTRACT or FULL.
    #[serde(default)]
    pub view: Option<View>,
    /// Search words over ids, titles, descriptions and tags.
    #[serde(default)]
    pub query: Option<String>,
    /// Domain namespace (the id's first segment) or an exact tag.
    #[serde(default)]
    pub domain: Option<String>,
    /// Only capabilities supporting this mode.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Only capabilities declaring this input kind. NATURAL_LANGUAGE_PROOF
    /// returns routing_status NO_ROUTE unless a provider accepts it.
    #[serde(default)]
    pub input_kind: Option<InputKind>,
    /// Only capabilities taking or producing this exact artifact schema_uri:
    /// those that take it first (`artifact_match` says which, and in which field).
    #[serde(default)]
    pub artifact_type: Option<String>,
    /// Results per page, 1..=20 (default 5).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The `next_cursor` of a previous page (same filters and limit).
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Exact projection of one capability.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum View {
    /// Outcome, modes, tags, availability, field summaries.
    #[default]
    Summary,
    /// Adds the validation-equivalent input schema and validated examples.
    Contract,
    /// Adds the output schema, provider and audit metadata.
    Full,
}

/// `capability.invoke` arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvokeRequest {
    /// The capability id (from `capability.describe`).
    pub capability_id: String,
    /// EXPLORE or VERIFY (default: the capability's first mode).
    #[serde(default)]
    pub mode: Option<Mode>,
    /// The input object, validated against the capability's input schema.
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub input: Value,
    /// Lower the operator's budgets for this call (never raise them).
    #[serde(default)]
    pub budget: Option<BudgetRequest>,
    /// Text projection: STANDARD (default), SUMMARY or FULL. Structured
    /// content always carries the complete result.
    #[serde(default)]
    pub view: Option<ResultView>,
    /// The experiment this invocation belongs to (default: one per MCP
    /// session). 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"))]
    pub experiment: Option<String>,
    /// The tenant the call is made for: set by the host from the caller's
    /// credential (never read from the request, never written to an
    /// episode); `None` is the operator.
    #[serde(skip)]
    #[schemars(skip)]
    pub tenant: Option<String>,
}

/// How much of a result the model-visible text carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ResultView {
    /// Complete when small; large output fields replaced by path, type, bytes and SHA-256.
    #[default]
    Standard,
    /// No operation output in text.
    Summary,
    /// The complete result in text too.
    Full,
}

/// Size and completeness of what crossed to the model, and where the whole is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Transport {
    /// The text projection that was produced.
    pub view: ResultView,
    /// Bytes of the complete result's canonical JSON (the episode).
    pub logical_bytes: u64,
    /// Bytes of the model-visible text.
    pub model_visible_bytes: u64,
    /// Whether the text carries the complete operation output.
    pub output_complete_in_text: bool,
    /// SHA-256 of the complete result's canonical JSON.
    pub full_result_digest: Digest,
    /// Whether the complete result was stored as an episode. A result that
    /// is not (a refused request, a budget or quota stop, a cancelled or
    /// unstarted call) carries its whole self in text instead.
    pub stored: bool,
    /// The durable complete result; null when it was not stored.
    pub full_result_episode_uri: Option<String>,
}

/// Per-call budget overrides; each must not exceed the operator's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetRequest {
    /// Fuel.
    #[serde(default)]
    pub fuel: Option<u64>,
    /// Linear memory in bytes.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
    /// Largest component answer in bytes.
    #[serde(default)]
    pub output_bytes: Option<u64>,
    /// A named share of the operator's budgets (QUICK, STANDARD, DEEP);
    /// the fields above, when given, win over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<crate::budgets::BudgetPreset>,
}

/// Whether the call produced its operation output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// The operation ran to completion (its output may still say "not found").
    Completed,
    /// No mathematical conclusion: see `diagnostic`.
    Failed,
}

/// Assurance of a result. Only an authorized checker's acceptance gives `VERIFIED`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Assurance {
    /// No evidence (failed call, rejected or unconcluded verification).
    #[default]
    None,
    /// A proposed candidate.
    Proposed,
    /// Heuristic evidence.
    Heuristic,
    /// Computed, not independently checked.
    Computed,
    /// Accepted by an operator-authorized independent checker.
    Verified,
}

/// The closed set of diagnostic codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    /// The request itself is malformed (a field of the tool arguments).
    InvalidRequest,
    /// No installed capability has this id.
    CapabilityNotFound,
    /// The operator policy hides this capability or withdraws this mode.
    CapabilityPolicyDenied,
    /// The capability does not support the requested mode.
    ModeNotSupported,
    /// `input` does not satisfy the capability's schema or its cross-field rules.
    InvalidInput,
    /// A referenced artifact is not in the store (or is corrupt).
    ArtifactNotFound,
    /// A budget above the operator's.
    BudgetExceedsPolicy,
    /// The fuel budget ran out.
    FuelExhausted,
    /// The memory budget ran out.
    MemoryLimit,
    /// The component overflowed its stack.
    StackOverflow,
    /// The component trapped (panic, abort, invalid access).
    GuestTrap,
    /// The component's answer exceeded the output budget.
    OutputTooLarge,
    /// The component's answer is not a valid outcome (including a producer claiming VERIFIED).
    MalformedOutput,
    /// The component could not run (e.g. all sandbox slots busy).
    ComponentUnavailable,
    /// Storing the result failed.
    StorageFailed,
    /// No such resource (URI).
    ResourceNotFound,
    /// No workspace has this id.
    WorkspaceNotFound,
    /// No such revision.
    RevisionNotFound,
    /// The base revision is no longer the branch head (`details.current_head`).
    RevisionConflict,
    /// The idempotency key was used with a different payload.
    IdempotencyConflict,
    /// A reference names no card of the workspace nor an earlier client_ref.
    UnknownReference,
    /// A link would close a cycle of explicit links.
    LinkCycle,
    /// A client_ref is used twice in one write.
    DuplicateClientRef,
    /// The lifecycle rules forbid this mark now.
    MarkNotAllowed,
    /// A mark without a reason.
    MissingReason,
    /// A field above its size limit.
    Oversized,
    /// The experiment's budget is spent (`details.stop_reason`); the call did not run.
    ExperimentBudgetSpent,
    /// The caller cancelled the call; the guest was interrupted and nothing was stored.
    Cancelled,
    /// The call ran past the operator's wall-clock ceiling (`details.wall_ms`);
    /// it was stopped, and nothing was stored (a call stopped by time is not replayable).
    DeadlineExceeded,
    /// Every sandbox slot is busy and the wait queue is full; the call did not
    /// start (`details.running`, `details.queued`). Retry after a short delay.
    Overloaded,
    /// A quota of the caller's tenant is spent (`details.quota`, `details.limit`,
    /// and `details.retry_after` in seconds when waiting helps); the call did not run.
    QuotaExceeded,
}

/// The stage at which a call stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Stage {
    /// Reading the tool arguments.
    Request,
    /// Budgets and policy.
    Policy,
    /// Validating the input.
    Validation,
    /// Instantiating the component.
    Instantiation,
    /// Running the component.
    Execution,
    /// Reading the component's answer.
    Output,
    /// Storing artifacts.
    Storage,
    /// Committing a workspace revision.
    Commit,
}

/// A typed failure: `{code, stage, message, suggestion, details}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnostic {
    /// Closed code.
    pub code: Code,
    /// Where it stopped.
    pub stage: Stage,
    /// What happened, as a lowercase fragment.
    pub message: String,
    /// What to do about it.
    pub suggestion: String,
    /// Structured details: `path` (dot-path of the offending field),
    /// `errors` (every schema violation), `component` (digest), limits.
    #[schemars(schema_with = "crate::descriptor::object_schema")]
    pub details: Value,
}

impl Diagnostic {
    /// A diagnostic with empty details.
    pub fn new(code: Code, stage: Stage, message: impl Into<String>, suggestion: impl Into<String>) -> Self {
        Diagnostic {
            code,
            stage,
            message: message.into(),
            suggestion: suggestion.into(),
            details: Value::Object(Default::default()),
        }
    }

    /// Add one detail.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        if let Value::Object(map) = &mut self.details {
            map.insert(key.to_owned(), crate::json::value(&value));
        }
        self
    }
}

/// A stored artifact named by a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactRef {
    /// Its role in the result.
    pub role: String,
    /// `artifact://sha256/<hex>`.
    pub uri: String,
    /// Domain-owned schema id.
    pub schema_uri: String,
    /// Size of its canonical JSON.
    pub bytes: u64,
}

/// How two things a result names are related.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Relation {
    /// The artifact was produced from the input with this digest.
    ProducedFrom,
    /// The artifact is the certificate for this checker role.
    CertificateFor,
    /// This result checks the artifact.
    Checks,
}

/// One relationship: `subject relation object`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Relationship {
    /// An artifact URI, or `result` for this result.
    pub subject: String,
    /// The relation.
    pub relation: Relation,
    /// An input digest, a checker role or an artifact URI.
    pub object: String,
}

/// Where and how to check a producer's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckRoute {
    /// Checker role.
    pub checker_role: String,
    /// Capability to invoke in VERIFY mode.
    pub verify_capability_id: String,
    /// Certificate format.
    pub certificate_format: String,
    /// URI of the certificate artifact in this result.
    pub certificate_artifact: Option<String>,
}

/// Provider and execution provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// Provider name.
    pub provider: String,
    /// Provider version.
    pub provider_version: String,
    /// `sha256`.
    pub digest_kind: String,
    /// Component digest.
    pub provider_digest: Digest,
    /// BUNDLED or OPERATOR.
    pub install_tier: String,
    /// SHA-256 of the canonical input.
    pub input_digest: Digest,
    /// Budgets in force.
    pub budgets: CallBudgets,
    /// Contract versions.
    pub contracts: Vec<String>,
}

/// Timings and counters: everything that may differ between identical runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Accounting {
    /// Wall time of the whole invocation, in microseconds.
    pub wall_time_us: u64,
    /// Fuel consumed (deterministic, repeated here for accounting).
    pub fuel_consumed: u64,
    /// The experiment the invocation was recorded in (`experiment://<id>`).
    #[serde(default)]
    pub experiment: Option<String>,
    /// Its position in that experiment, from 1.
    #[serde(default)]
    pub ordinal: Option<u64>,
    /// Why it ended.
    #[serde(default)]
    pub stop_reason: Option<crate::experiments::StopReason>,
}

/// The closed set of error types of the error envelope (HTTP and CLI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// The request was malformed or a field was out of range.
    ValidationError,
    /// No such route, resource or file.
    NotFound,
    /// The route does not answer this method.
    MethodNotAllowed,
    /// The request body is above the limit.
    PayloadTooLarge,
    /// The Host header names a host this server does not serve.
    HostNotAllowed,
    /// No bearer token, or one that is not (or no longer) valid (HTTP 401).
    Unauthorized,
    /// A valid token without the scope the request needs (HTTP 403).
    InsufficientScope,
    /// An archive's bytes do not match their digests.
    ArchiveInvalid,
    /// A store or the runtime could not be opened or used.
    Unavailable,
    /// The database's schema is newer than this binary understands.
    SchemaTooNew,
    /// Bytes (a bundle, a registry layer, an upload) do not hash to the digest they were asked for by.
    DigestMismatch,
    /// A tenant's quota is spent (an upload over the stored-bytes quota: HTTP 429).
    QuotaExceeded,
    /// The policy requires a trusted publisher's signature on installs, and none was given.
    SignatureRequired,
    /// A bundle's signature is malformed or does not verify for its bytes.
    SignatureInvalid,
    /// A bundle is signed by a key the policy does not trust.
    UntrustedPublisher,
    /// A defect in this service.
    InternalError,
    /// Any other HTTP-level refusal.
    HttpError,
}

/// The one shape every HTTP failure and every CLI failure is reported in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorEnvelope {
    /// What went wrong, in one sentence.
    pub error: String,
    /// Stable slug a caller may branch on.
    pub error_type: ErrorType,
    /// Correlation id of the request that failed, when one was established.
    pub request_id: Option<String>,
}

/// Every contract version this runtime speaks.
pub fn contracts() -> Vec<String> {
    vec![
        RESULT_CONTRACT.into(),
        DESCRIBE_CONTRACT.into(),
        jacobian_guest::protocol::PROTOCOL_VERSION.into(),
        jacobian_guest::protocol::ARTIFACT_VERSION.into(),
        ARCHIVE_FORMAT.into(),
    ]
}

/// The canonical result of `capability.invoke`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityResult {
    /// Shape version.
    pub contract: String,
    /// Capability invoked.
    pub capability_id: String,
    /// Mode.
    pub mode: Option<Mode>,
    /// Completed or failed.
    pub status: Status,
    /// Operation output (completed calls).
    #[schemars(schema_with = "crate::descriptor::optional_object_schema")]
    pub output: Option<Value>,
    /// Stored artifacts.
    pub artifacts: Vec<ArtifactRef>,
    /// How the artifacts relate to the input, to checkers and to this result.
    pub relationships: Vec<Relationship>,
    /// Scope and completeness.
    pub scope: Option<Scope>,
    /// Qualifiers.
    pub qualifiers: Vec<Qualifier>,
    /// Assurance.
    pub assurance: Assurance,
    /// Open proof obligations.
    pub obligations: Vec<String>,
    /// How to check this result (producers).
    pub check_with: Option<CheckRoute>,
    /// The verification record (VERIFY calls).
    pub verification: Option<VerificationRecord>,
    /// Why nothing was concluded (failed calls).
    pub diagnostic: Option<Diagnostic>,
    /// Provenance (absent when the capability was never resolved).
    pub provenance: Option<Provenance>,
    /// Fuel consumed (deterministic).
    pub fuel_consumed: u64,
    /// Lines the component logged.
    pub guest_log: Vec<LogLine>,
    /// The scope rule.
    pub scope_rule: String,
    /// Transport metadata (not part of the episode).
    pub transport: Option<Transport>,
    /// The model-visible text projection (carried beside, never inside, the result).
    #[serde(skip)]
    #[schemars(skip)]
    pub text: String,
    /// Non-deterministic figures; excluded from byte-identity.
    pub accounting: Accounting,
    /// Kept from making its episode, for [`CapabilityResult::into_value`].
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) members: members::EpisodeMembers,
}

/// Budgets of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CallBudgets {
    /// Fuel (deterministic instruction budget).
    pub fuel: u64,
    /// Linear memory, in bytes, summed over the component's memories.
    pub memory_bytes: u64,
    /// Largest answer accepted from the component, in bytes.
    pub output_bytes: u64,
}

/// One line a guest logged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LogLine {
    /// Severity.
    pub level: String,
    /// Text (truncated to 1 KiB).
    pub message: String,
}

/// The URI scheme prefix of episodes.
pub const EPISODE_URI_PREFIX: &str = "episode://sha256/";

/// `episode://sha256/<hex>`.
pub fn episode_uri(digest: &Digest) -> String {
    format!("{EPISODE_URI_PREFIX}{}", digest.to_hex())
}

/// The format tag of an experiment archive.
pub const ARCHIVE_FORMAT: &str = "jacobian-archive/1";
