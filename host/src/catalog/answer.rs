//! The typed answers of `capability.describe` and the catalog resource:
//! one capability's projection, a page of search or browse results, and
//! the compact entry both listings use. JSON is made from them at the edge.

use jacobian_guest::protocol::{Example, InputKind, Mode};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::EntryKind;
use crate::contract::View;
use crate::digest::Digest;
use crate::registry::Tier;

/// What `capability.describe` answers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum DescribeAnswer {
    /// One capability, by exact id.
    Capability(Box<Projection>),
    /// A page of search or browse results.
    Page(Box<CatalogPage>),
}

/// Whether an agent can use an entry now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, strum::EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Availability {
    /// Invocable in the modes listed.
    Available,
    /// A verifier whose checker no operator has authorized: it cannot verify.
    CheckerNotAuthorized,
}

/// One capability's projection at a view (SUMMARY, CONTRACT or FULL).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Projection {
    /// The describe contract version.
    pub contract: &'static str,
    /// The view answered.
    pub view: View,
    /// Capability id.
    pub capability_id: String,
    /// Producer, verifier or router.
    pub kind: EntryKind,
    /// Title.
    pub title: String,
    /// One-line outcome.
    pub outcome: String,
    /// Description.
    pub description: String,
    /// The modes the policy leaves it.
    pub modes: Vec<Mode>,
    /// Tags.
    pub tags: Vec<String>,
    /// Input kind.
    pub input_kind: InputKind,
    /// Whether it can be used now.
    pub availability: Availability,
    /// Who provides it (more fields at FULL).
    pub provider: ProviderView,
    /// The input schema's top-level fields.
    pub input_fields: Vec<FieldSummary>,
    /// The output schema's top-level fields (producers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_fields: Option<Vec<FieldSummary>>,
    /// Whether CONTRACT lists validated examples.
    pub examples_available: bool,
    /// Checker roles named by results (producers) or filled (verifiers).
    pub checker_roles: Vec<String>,
    /// Digest of the catalog answered from.
    pub catalog_digest: Digest,
    /// Digest of the policy bound.
    pub policy_digest: Digest,
    /// CONTRACT and FULL.
    #[serde(flatten)]
    pub contract_view: Option<ContractView>,
    /// FULL only.
    #[serde(flatten)]
    pub full_view: Option<FullView>,
    /// What an invocation covers.
    pub scope_rule: &'static str,
}

/// Who provides a capability.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProviderView {
    /// Provider name.
    pub name: String,
    /// Provider version.
    pub version: String,
    /// The component's digest.
    pub digest: Digest,
    /// How it was installed.
    pub install_tier: Tier,
    /// Licence (FULL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub licence: Option<String>,
    /// Declared features (FULL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
    /// The digest's algorithm (FULL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest_kind: Option<&'static str>,
    /// The platform it was built for (FULL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<&'static str>,
}

/// One top-level field of a schema.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FieldSummary {
    /// Field name.
    pub name: String,
    /// Its JSON Schema type, as the schema spells it (null when it has none).
    #[serde(rename = "type")]
    #[schemars(schema_with = "json_type_schema")]
    pub json_type: Value,
    /// Whether the schema requires it.
    pub required: bool,
    /// Its description (null when it has none).
    #[schemars(schema_with = "text_or_null_schema")]
    pub description: Value,
}

/// What CONTRACT adds: enough to write a valid request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContractView {
    /// The validation-equivalent input schema (annotations removed).
    #[schemars(schema_with = "crate::descriptor::object_schema")]
    pub input_schema: Value,
    /// Validated examples.
    pub examples: Vec<Example>,
    /// Artifact types produced or read.
    pub artifact_types: Vec<String>,
    /// The input fields that take artifacts, and their types.
    pub accepts: Vec<jacobian_guest::protocol::Accepted>,
    /// The artifact types its results carry.
    pub produces: Vec<String>,
    /// Certificate formats.
    pub certificate_formats: Vec<String>,
    /// Capabilities that check this one's results or whose results this one
    /// checks, that make what it takes or take what it makes.
    pub related_operations: Vec<Related>,
    /// How it runs.
    pub runtime: RuntimeNotes,
}

/// What FULL adds.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FullView {
    /// The output schema (null for verifiers and the router).
    #[schemars(schema_with = "crate::descriptor::optional_object_schema")]
    pub output_schema: Option<Value>,
    /// Install audit metadata.
    #[schemars(schema_with = "crate::descriptor::object_schema")]
    pub audit: Value,
}

/// A capability related to the one described.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Related {
    /// Its id.
    pub capability_id: String,
    /// How it relates.
    pub relation: Relation,
    /// The artifact type that links them (INPUT_FROM, OUTPUT_TO).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_uri: Option<String>,
    /// The input field that takes it: this one's for INPUT_FROM, the
    /// other's for OUTPUT_TO (when the descriptor says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// How two capabilities relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, strum::EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Relation {
    /// A verifier that checks this producer's results.
    CheckedBy,
    /// A producer whose results this verifier checks.
    ChecksResultsOf,
    /// The router that routes to this verifier.
    RoutedBy,
    /// A verifier the router routes to.
    RoutesTo,
    /// A capability whose results carry an artifact this one takes.
    InputFrom,
    /// A capability that takes an artifact this one's results carry.
    OutputTo,
}

/// How a capability runs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RuntimeNotes {
    /// The modes the policy leaves it.
    pub modes: Vec<Mode>,
    /// The sandbox.
    pub sandbox: &'static str,
    /// The budgets.
    pub budgets: &'static str,
    /// Determinism.
    pub deterministic: &'static str,
    /// The most it can conclude.
    pub assurance: &'static str,
    /// What each `budget.preset` comes to under the operator's budgets.
    pub budget_presets: Vec<PresetView>,
}

/// One budget preset under the operator's budgets.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PresetView {
    /// QUICK, STANDARD or DEEP.
    pub preset: crate::budgets::BudgetPreset,
    /// Fuel.
    pub fuel: u64,
    /// Linear memory in bytes.
    pub memory_bytes: u64,
    /// Largest answer in bytes.
    pub output_bytes: u64,
    /// Seconds of guest compute that fuel lasts for this capability, at the
    /// benchmark machine's rate (`fuel_per_second`).
    pub typical_seconds: f64,
    /// The rate those seconds are reckoned at: this capability's own, measured
    /// by the presets benchmark (`rate_measured`), else the portfolio's median.
    pub fuel_per_second: u64,
    /// Whether `fuel_per_second` was measured for this capability.
    pub rate_measured: bool,
}

/// A page of search (with a query) or browse (without) results.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CatalogPage {
    /// The describe contract version.
    pub contract: &'static str,
    /// SEARCH or BROWSE.
    pub form: Form,
    /// Digest of the catalog answered from.
    pub catalog_digest: Digest,
    /// The policy profile bound.
    pub policy_profile: String,
    /// Digest of the policy bound.
    pub policy_digest: Digest,
    /// The query's normalized terms.
    pub query_terms: Vec<String>,
    /// How well the portfolio matched the query (null when browsing).
    pub portfolio_fit: Option<PortfolioFit>,
    /// Whether an installed capability accepts the input kind asked for.
    pub routing_status: RoutingStatus,
    /// Why.
    pub routing_basis: RoutingBasis,
    /// Entries matching, over all pages.
    pub total: usize,
    /// This page.
    pub results: Vec<CatalogItem>,
    /// Pass back as `cursor` for the next page (null on the last).
    pub next_cursor: Option<String>,
    /// What the ranking is.
    pub note: &'static str,
    /// What an invocation covers.
    pub scope_rule: &'static str,
}

/// Search or browse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, strum::EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Form {
    /// With a query.
    Search,
    /// Without.
    Browse,
}

/// How well the portfolio matched a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, strum::EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PortfolioFit {
    /// At least one strong lexical match.
    StrongCandidates,
    /// No entry matched any term.
    NoLexicalMatches,
    /// Only weak matches.
    OnlyWeakLexicalMatches,
}

/// Whether the input kind asked for has a capability that accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, strum::EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RoutingStatus {
    /// No input kind was declared or implied.
    Unconstrained,
    /// One was, and some installed capability accepts it.
    RouteAvailable,
    /// One was, and none accepts it.
    NoRoute,
}

/// Why a routing status was given.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RoutingBasis {
    /// DECLARED_INPUT_KIND, UNAMBIGUOUS_PHRASE, or NO_INPUT_KIND (nothing constrained the route).
    pub reason: &'static str,
    /// The phrase that implied the input kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phrase: Option<&'static str>,
    /// The input kind declared or implied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_kind: Option<InputKind>,
    /// The capabilities that accept it (the first twenty by id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub providers: Option<Vec<String>>,
    /// How many capabilities accept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub providers_total: Option<usize>,
    /// Why there is no route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<&'static str>,
}

/// The compact entry of every listing.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CatalogItem {
    /// Capability id.
    pub capability_id: String,
    /// Producer, verifier or router.
    pub kind: EntryKind,
    /// Title (clipped).
    pub title: String,
    /// One-line outcome (clipped).
    pub outcome: String,
    /// The modes the policy leaves it.
    pub modes: Vec<Mode>,
    /// Up to twelve tags (each clipped).
    pub tags: Vec<String>,
    /// Input kind.
    pub input_kind: InputKind,
    /// Whether it can be used now.
    pub availability: Availability,
    /// Why a search returned it (searches only).
    #[serde(flatten)]
    pub relevance: Option<Relevance>,
    /// How it relates to the `artifact_type` asked for (only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_match: Option<ArtifactMatch>,
}

/// How a capability relates to an artifact type: it takes one (in `field`)
/// or its results carry one.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ArtifactMatch {
    /// ACCEPTS or PRODUCES.
    pub relation: ArtifactRelation,
    /// The input field that takes it (ACCEPTS; absent when the descriptor does not say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// Whether a capability takes or makes an artifact type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema, strum::EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ArtifactRelation {
    /// An input field takes it: a next step for whoever holds one.
    Accepts,
    /// Its results carry one: where such an artifact comes from.
    Produces,
}

/// Why a search returned an entry.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Relevance {
    /// Fields a term matched, strongest first.
    pub matched_on: Vec<&'static str>,
    /// Query terms that matched.
    pub matched_terms: Vec<String>,
    /// 0..=1000 against the best possible score.
    pub relevance_score: u32,
    /// Share of the query's terms matched, in thousandths.
    pub query_coverage_milli: u32,
    /// STRONG_LEXICAL_MATCH or WEAK_LEXICAL_MATCH (the contract's classes).
    pub lexical_fit: LexicalFit,
}

/// A match's strength, in the contract's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, strum::EnumIter)]
pub enum LexicalFit {
    /// Most terms, in the id, tags or title.
    #[serde(rename = "STRONG_LEXICAL_MATCH")]
    Strong,
    /// Anything less: its place in the ranking is no sign of fit.
    #[serde(rename = "WEAK_LEXICAL_MATCH")]
    Weak,
}

/// The whole catalog as the policy shows it (`capability://catalog`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Inventory {
    /// Digest of the catalog.
    pub catalog_digest: Digest,
    /// The policy profile bound.
    pub policy_profile: String,
    /// Digest of the policy bound.
    pub policy_digest: Digest,
    /// Visible entries in id order, from the page's start, within
    /// [`super::INVENTORY_PAGE_BYTES`].
    pub capabilities: Vec<InventoryItem>,
    /// How many entries are visible in all.
    pub total: usize,
    /// The URI of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// One entry of the inventory: the compact entry, who provides it, and
/// enough to call it without a `describe` per capability.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InventoryItem {
    /// The compact entry.
    #[serde(flatten)]
    pub item: CatalogItem,
    /// Provider name.
    pub provider: String,
    /// Provider version.
    pub provider_version: String,
    /// The component's digest.
    pub component_digest: Digest,
    /// The validation-equivalent input schema (annotations removed).
    #[schemars(schema_with = "crate::descriptor::object_schema")]
    pub input_schema: Value,
    /// The input fields that take artifacts, and their types.
    pub accepts: Vec<jacobian_guest::protocol::Accepted>,
    /// The artifact types its results carry.
    pub produces: Vec<String>,
}

/// A schema's `type` as it spells it: one type name, a list of them, or null.
fn json_type_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "array", "null"], "items": {"type": "string"}})
}

/// Text, or null.
fn text_or_null_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "null"]})
}
