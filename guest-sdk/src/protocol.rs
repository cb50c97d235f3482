//! The JSON wire protocol between the host and a component.
//!
//! These types are the single definition of what crosses the `list<u8>`
//! boundary of the WIT worlds: the host deserializes exactly these shapes, so
//! a component that emits anything else (an unknown field, a `VERIFIED`
//! assurance, a missing scope) produces a typed malformed-output diagnostic
//! rather than a result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Version of this wire protocol; every descriptor names it.
pub const PROTOCOL_VERSION: &str = "jacobian.component/1";

/// What a bundle is. A bundle is exactly one of the two, never both.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BundleKind {
    /// Exports `invoke`: produces evidence (never `VERIFIED`).
    Capability,
    /// Exports `check`: judges evidence produced elsewhere.
    Checker,
}

/// Invocation mode of a capability.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "schema", derive(strum::EnumIter))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Mode {
    /// Returns proposed, heuristic or computed evidence.
    Explore,
    /// May return `VERIFIED`, only through an operator-authorized checker.
    Verify,
}

/// The kind of input a capability accepts, for discovery by input kind.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "schema", derive(strum::EnumIter))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InputKind {
    /// A typed, structured request object.
    StructuredRequest,
    /// A formal proposition in a declared syntax.
    FormalProposition,
    /// A typed artifact identified by its `schema_uri`.
    TypedArtifact,
    /// Natural-language proof prose (no bundled capability accepts it).
    NaturalLanguageProof,
}

/// The provider of a bundle: who made it, which version, under what licence.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    /// Provider name, e.g. `jacobian-universal-algebra`.
    pub name: String,
    /// Exact provider version.
    pub version: String,
    /// SPDX licence expression.
    pub licence: String,
    /// Features the provider detected or was built with.
    #[serde(default)]
    pub features: Vec<String>,
}

/// A validated invocation example published by a capability or checker.
///
/// Where an input takes an artifact, the example is a recipe: `steps` are
/// the calls that make the artifacts, in order, and a string of the form
/// `$steps.N.artifacts.ROLE` in a later step's input or in `input` stands
/// for the URI of the artifact with that role in step `N`'s result. The
/// health probe runs every step and the call itself at install.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// What the example shows.
    pub title: String,
    /// The calls that come first, whose artifacts `input` refers to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
    /// The `input` object of the call; it must validate against the input
    /// schema once its step references are replaced by artifact URIs.
    #[cfg_attr(feature = "schema", schemars(schema_with = "object_schema"))]
    pub input: Value,
}

/// One earlier call of a recipe.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The capability to invoke (this bundle's or any installed one's).
    pub capability_id: String,
    /// Its input; it may refer to the artifacts of the steps before it.
    #[cfg_attr(feature = "schema", schemars(schema_with = "object_schema"))]
    pub input: Value,
}

/// A free-form JSON object, as published schemas say of an input.
#[cfg(feature = "schema")]
fn object_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object"})
}

/// The prefix of a step reference.
pub const STEP_REFERENCE_PREFIX: &str = "$steps.";

/// The reference to the artifact with `role` in step `step`'s result.
pub fn step_reference(step: usize, role: &str) -> String {
    format!("{STEP_REFERENCE_PREFIX}{step}.artifacts.{role}")
}

/// Read a step reference: `Some(Ok((step, role)))` for a well-formed one,
/// `Some(Err(why))` for a string that starts like one but is not, `None`
/// for any other string.
pub fn parse_step_reference(text: &str) -> Option<Result<(usize, &str), String>> {
    let rest = text.strip_prefix(STEP_REFERENCE_PREFIX)?;
    let malformed = || Err(format!("{text:?} is not of the form $steps.N.artifacts.ROLE"));
    let Some((step, role)) = rest.split_once(".artifacts.") else { return Some(malformed()) };
    match step.parse::<usize>() {
        Ok(n) if !role.is_empty() && step.bytes().all(|b| b.is_ascii_digit()) => Some(Ok((n, role))),
        _ => Some(malformed()),
    }
}

/// An input field that takes an artifact, and the artifact type it takes.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(deny_unknown_fields)]
pub struct Accepted {
    /// The top-level input field whose value is the artifact's URI.
    pub field: String,
    /// The artifact type (`schema_uri`) the field takes.
    pub schema_uri: String,
}

/// One capability of a capability bundle.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CapabilityDescriptor {
    /// Namespaced id, `domain.verb.object`, e.g. `universal_algebra.search.countermodel`.
    pub id: String,
    /// Short title.
    pub title: String,
    /// The one agent-visible mathematical outcome, in one line.
    pub outcome: String,
    /// Longer description: what it does, its bounds, what it does not claim.
    pub description: String,
    /// Retrieval tags.
    pub tags: Vec<String>,
    /// Supported modes.
    pub modes: Vec<Mode>,
    /// Declared input kind.
    pub input_kind: InputKind,
    /// JSON Schema of `input`.
    pub input_schema: Value,
    /// JSON Schema of `output`.
    pub output_schema: Value,
    /// Invocation examples.
    pub examples: Vec<Example>,
    /// Checker roles this capability's results name.
    pub checker_roles: Vec<String>,
    /// Artifact types this capability produces, as `schema_uri`s.
    pub artifact_types: Vec<String>,
    /// The input fields that take artifacts, and of which type. (Empty in
    /// descriptors written before they were declared.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepts: Vec<Accepted>,
    /// The checkers its results are routed to: a result's route must name
    /// one of these roles, with its verify capability and one of its formats.
    /// (Empty in descriptors written before routes were declared: then only
    /// the role is held to `checker_roles`.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<DeclaredCheck>,
}

/// A checker a capability's results are routed to, as its descriptor declares it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DeclaredCheck {
    /// The checker role.
    pub checker_role: String,
    /// The capability agents invoke in `VERIFY` mode for that role.
    pub verify_capability_id: String,
    /// The certificate formats results carry for it.
    pub certificate_formats: Vec<String>,
}

/// One checker role of a checker bundle, exposed as a `VERIFY` capability.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CheckerDescriptor {
    /// The role this checker fills, e.g. `universal_algebra.countermodel.witness`.
    pub role: String,
    /// The capability id under which agents invoke it in `VERIFY` mode.
    pub capability_id: String,
    /// Short title.
    pub title: String,
    /// The one-line outcome.
    pub outcome: String,
    /// What it checks and what it does not.
    pub description: String,
    /// Retrieval tags.
    pub tags: Vec<String>,
    /// Declared input kind.
    pub input_kind: InputKind,
    /// JSON Schema of `input`.
    pub input_schema: Value,
    /// Certificate formats it accepts.
    pub certificate_formats: Vec<String>,
    /// Artifact types it reads, as `schema_uri`s.
    pub artifact_types: Vec<String>,
    /// The input fields that take artifacts, and of which type. (Empty in
    /// descriptors written before they were declared.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepts: Vec<Accepted>,
    /// Invocation examples, usually recipes whose steps make the evidence.
    /// (Empty in descriptors written before checkers published examples.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
}

/// What `describe()` returns.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BundleDescriptor {
    /// Always [`PROTOCOL_VERSION`].
    pub protocol: String,
    /// Capability bundle or checker bundle.
    pub kind: BundleKind,
    /// Who provides it.
    pub provider: Provider,
    /// Capabilities (capability bundles only).
    #[serde(default)]
    pub capabilities: Vec<CapabilityDescriptor>,
    /// Checker roles (checker bundles only).
    #[serde(default)]
    pub checkers: Vec<CheckerDescriptor>,
}

/// The request the host passes to `invoke`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InvokeRequest {
    /// Which capability of the bundle.
    pub capability_id: String,
    /// The requested mode.
    pub mode: Mode,
    /// The validated input object.
    pub input: Value,
}

/// The request the host passes to `check`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// Which checker role of the bundle.
    pub role: String,
    /// The validated input object.
    pub input: Value,
}

/// Assurance a producer may claim. There is deliberately no `VERIFIED`:
/// search, generation and computation never certify their own conclusions.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProducerAssurance {
    /// A candidate, not yet evaluated.
    Proposed,
    /// Found by a method with no completeness or soundness guarantee.
    Heuristic,
    /// Computed by a deterministic procedure; not independently checked.
    Computed,
}

/// How much of the stated scope a result covers.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "schema", derive(strum::EnumIter))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Completeness {
    /// Every case within the stated bounds was examined.
    Exhaustive,
    /// A witness was found; nothing is claimed about the rest of the space.
    WitnessOnly,
    /// Only part of the bounded space was examined (e.g. a budget ran out).
    Partial,
}

/// Qualifiers of a result.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "schema", derive(strum::EnumIter))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Qualifier {
    /// Exact arithmetic / exact objects.
    Exact,
    /// Approximate values.
    Approximate,
    /// Restricted to stated finite bounds.
    Bounded,
    /// Every case within the bounds examined.
    Exhaustive,
    /// Same input, same output.
    Deterministic,
    /// No completeness guarantee.
    Heuristic,
}

/// The scope of one result: what it covers and how completely.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// How completely the bounded space was covered.
    pub completeness: Completeness,
    /// The exact statement of what was covered, in one or two sentences.
    pub statement: String,
}

/// An artifact a producer returns inline; the host stores it content-addressed
/// and replaces it by its `artifact://sha256/<digest>` URI.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArtifactDraft {
    /// Its role in the result, e.g. `countermodel`.
    pub role: String,
    /// Versioned, domain-owned schema identifier.
    pub schema_uri: String,
    /// The artifact's JSON content.
    pub content: Value,
}

impl ArtifactDraft {
    /// The stored form of this artifact, made by the call `lineage` names:
    /// the envelope whose canonical JSON the store hashes.
    pub fn into_envelope(self, lineage: &Lineage) -> Value {
        let mut envelope = serde_json::json!({
            "artifact_version": ARTIFACT_VERSION,
            "schema_uri": self.schema_uri,
            "role": self.role,
            "lineage": lineage,
        });
        // Moved, not copied: an artifact can be megabytes of JSON.
        envelope["content"] = self.content;
        envelope
    }
}

/// Where a producer's result should be checked.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct VerificationRoute {
    /// Checker role that can judge this result.
    pub checker_role: String,
    /// The verify capability id to invoke in `VERIFY` mode.
    pub verify_capability_id: String,
    /// Certificate format of the evidence.
    pub certificate_format: String,
    /// Role of the artifact (in this result) that carries the certificate.
    pub certificate_artifact_role: String,
}

/// What `invoke` returns on success.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    /// Operation-specific output (matches the descriptor's output schema).
    pub output: Value,
    /// Artifacts to store.
    #[serde(default)]
    pub artifacts: Vec<ArtifactDraft>,
    /// Scope and completeness.
    pub scope: Scope,
    /// Qualifiers.
    #[serde(default)]
    pub qualifiers: Vec<Qualifier>,
    /// Producer assurance (never `VERIFIED`).
    pub assurance: ProducerAssurance,
    /// Proof obligations that remain open.
    #[serde(default)]
    pub obligations: Vec<String>,
    /// How to check this result, when a checker role exists.
    #[serde(default)]
    pub verification: Option<VerificationRoute>,
}

/// A checker's judgement.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "schema", derive(strum::EnumIter))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VerdictKind {
    /// The evidence establishes the claim within its stated scope.
    Accepted,
    /// The evidence does not establish the claim.
    Rejected,
    /// The checker cannot judge this input (e.g. beyond its bounds).
    Unsupported,
}

/// What `check` returns on success.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// The judgement.
    pub verdict: VerdictKind,
    /// Why, in one sentence.
    pub reason: String,
    /// What the checker established (each a short statement).
    #[serde(default)]
    pub checked: Vec<String>,
    /// Obligations that remain open.
    #[serde(default)]
    pub remaining_obligations: Vec<String>,
    /// The claim the verdict is about, as the checker read it (JSON).
    pub claim: Value,
    /// The semantics under which the claim was judged (JSON).
    pub semantics: Value,
    /// The candidate the verdict is about, as the checker read it (JSON).
    pub candidate: Value,
    /// The scope the verdict covers.
    pub scope: Scope,
}

/// What a checker's verdicts are about: the claim, the semantics it was judged
/// under and the candidate, each as the checker read them.
#[derive(Clone, Debug)]
pub struct Judged {
    /// The claim (becomes `Verdict::claim`).
    pub claim: Value,
    /// The semantics (becomes `Verdict::semantics`).
    pub semantics: Value,
    /// The candidate (becomes `Verdict::candidate`).
    pub candidate: Value,
}

impl Judged {
    /// A verdict about this claim and candidate, with no obligations left open.
    pub fn verdict(
        &self,
        verdict: VerdictKind,
        reason: impl Into<String>,
        checked: Vec<String>,
        scope: Scope,
    ) -> Verdict {
        Verdict {
            verdict,
            reason: reason.into(),
            checked,
            remaining_obligations: Vec::new(),
            claim: self.claim.clone(),
            semantics: self.semantics.clone(),
            candidate: self.candidate.clone(),
            scope,
        }
    }
}

/// Why a component refused a request it could not validate. Crosses the
/// boundary as the JSON error string of `invoke` / `check`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    /// Dot-path of the offending field within `input` (empty for the whole input).
    pub path: String,
    /// What is wrong, as a lowercase fragment.
    pub message: String,
}

impl Refusal {
    /// A refusal naming the field at `path`.
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Self {
        Refusal { path: path.into(), message: message.into() }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() { f.write_str(&self.message) } else { write!(f, "{}: {}", self.path, self.message) }
    }
}

/// Version of the stored artifact envelope.
pub const ARTIFACT_VERSION: &str = "jacobian.artifact/1";

/// How a stored artifact came to be.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Lineage {
    /// The capability that produced it.
    pub capability_id: String,
    /// SHA-256 (hex) of the canonical JSON of the complete producer input.
    pub input_digest: String,
    /// SHA-256 (hex) of the producer component.
    pub provider_digest: String,
}

/// What the artifact store holds: a manifest around the content a producer
/// returned. Content-addressed by SHA-256 over its canonical JSON (RFC 8785).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArtifactEnvelope<T = Value> {
    /// Always [`ARTIFACT_VERSION`].
    pub artifact_version: String,
    /// Versioned, domain-owned schema identifier of `content`.
    pub schema_uri: String,
    /// The artifact's role in the producing result.
    pub role: String,
    /// Who produced it from what.
    pub lineage: Lineage,
    /// The content itself.
    pub content: T,
}
