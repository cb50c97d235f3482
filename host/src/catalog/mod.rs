//! The installed catalog: entries derived from the installed components'
//! validated descriptors (a producer bundle contributes its capabilities, a
//! checker bundle one `VERIFY` capability per checker role), the policy's
//! binding, and the compact entry every listing uses.
//!
//! - `describe.rs`: `capability.describe` by id (SUMMARY, CONTRACT, FULL).
//! - `search.rs`: search and browse (lexical scoring, fit signals, cursors).

pub mod answer;
mod describe;
mod search;

pub use answer::{CatalogItem, DescribeAnswer, Inventory, InventoryItem};
pub use describe::describe;
pub use search::{stem, terms};

use std::collections::BTreeMap;
use std::sync::Arc;

use jacobian_guest::protocol::{Accepted, DeclaredCheck, Example, InputKind, Mode, Provider};
use serde::Serialize;
use serde_json::{Value, json};

use crate::digest::Digest;
use crate::registry::{Installed, Tier};

/// Producer or verifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema, strum::EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EntryKind {
    /// Runs a capability component's `invoke`.
    Producer,
    /// Runs a checker component's `check` for one role.
    Verifier,
    /// `certificate.verify`: provided by the host, routes a certificate to a
    /// checker the operator authorized for the role the certificate needs.
    Router,
}

/// The id of the host's certificate router.
/// (The first of the ids reserved by the host.)
pub const ROUTER_ID: &str = crate::descriptor::RESERVED_IDS[0];

/// One invocable capability.
pub struct CatalogEntry {
    /// Capability id.
    pub id: String,
    /// Producer or verifier.
    pub kind: EntryKind,
    /// Title.
    pub title: String,
    /// One-line outcome.
    pub outcome: String,
    /// Description.
    pub description: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Modes.
    pub modes: Vec<Mode>,
    /// Input kind.
    pub input_kind: InputKind,
    /// Input schema.
    pub input_schema: Value,
    /// Output schema (producers).
    pub output_schema: Option<Value>,
    /// Validated examples.
    pub examples: Vec<Example>,
    /// Checker roles named by results (producers) or filled (verifiers).
    pub checker_roles: Vec<String>,
    /// The checks a producer's results may be routed to (empty for verifiers,
    /// and for producers whose descriptor predates declared checks).
    pub checks: Vec<DeclaredCheck>,
    /// Artifact types produced or read.
    pub artifact_types: Vec<String>,
    /// The input fields that take artifacts, and their types.
    pub accepts: Vec<Accepted>,
    /// The artifact types its results carry (producers).
    pub produces: Vec<String>,
    /// Certificate formats (verifiers).
    pub certificate_formats: Vec<String>,
    /// Component providing it.
    pub component: Digest,
    /// Install tier.
    pub tier: Tier,
    /// Provider.
    pub provider: Provider,
    /// Install audit metadata (platform, imports, size, health probe).
    pub audit: Value,
    /// Compiled input schema.
    pub input_validator: Arc<jsonschema::Validator>,
    /// Compiled output schema (producers).
    pub output_validator: Option<Arc<jsonschema::Validator>>,
}

/// The installed catalog, in stable id order.
pub struct Catalog {
    entries: BTreeMap<String, CatalogEntry>,
    digest: Digest,
}

impl Catalog {
    /// Build from installed components (their descriptors were validated at install).
    pub fn build<'a>(components: impl IntoIterator<Item = &'a Installed>) -> Catalog {
        let mut entries = BTreeMap::new();
        for installed in components {
            let record = &installed.record;
            let mut audit = json!({
                "digest_kind": record.digest_kind,
                "platform": record.platform,
                "install_tier": record.tier,
                "size_bytes": record.size_bytes,
                "imports": record.imports,
                "health": record.health,
                "protocol": record.descriptor.protocol,
            });
            if let Some(p) = &record.publisher {
                audit["publisher"] = json!({"name": p.name, "key_id": p.key_id, "trusted_comment": p.trusted_comment});
            }
            for c in &record.descriptor.capabilities {
                let Ok(input) = crate::registry::compile_schema(&c.input_schema) else { continue };
                let output = crate::registry::compile_schema(&c.output_schema).ok().map(Arc::new);
                entries.insert(
                    c.id.clone(),
                    CatalogEntry {
                        id: c.id.clone(),
                        kind: EntryKind::Producer,
                        title: c.title.clone(),
                        outcome: c.outcome.clone(),
                        description: c.description.clone(),
                        tags: c.tags.clone(),
                        modes: c.modes.clone(),
                        input_kind: c.input_kind,
                        input_schema: c.input_schema.clone(),
                        output_schema: Some(c.output_schema.clone()),
                        examples: c.examples.clone(),
                        checker_roles: c.checker_roles.clone(),
                        checks: c.checks.clone(),
                        artifact_types: c.artifact_types.clone(),
                        accepts: c.accepts.clone(),
                        produces: c.artifact_types.clone(),
                        certificate_formats: Vec::new(),
                        component: record.digest,
                        tier: record.tier,
                        provider: record.provider.clone(),
                        input_validator: Arc::new(input),
                        audit: audit.clone(),
                        output_validator: output,
                    },
                );
            }
            for k in &record.descriptor.checkers {
                let Ok(input) = crate::registry::compile_schema(&k.input_schema) else { continue };
                entries.insert(
                    k.capability_id.clone(),
                    CatalogEntry {
                        id: k.capability_id.clone(),
                        kind: EntryKind::Verifier,
                        title: k.title.clone(),
                        outcome: k.outcome.clone(),
                        description: k.description.clone(),
                        tags: k.tags.clone(),
                        modes: vec![Mode::Verify],
                        input_kind: k.input_kind,
                        input_schema: k.input_schema.clone(),
                        output_schema: None,
                        examples: k.examples.clone(),
                        checker_roles: vec![k.role.clone()],
                        checks: Vec::new(),
                        artifact_types: k.artifact_types.clone(),
                        accepts: k.accepts.clone(),
                        produces: Vec::new(),
                        certificate_formats: k.certificate_formats.clone(),
                        component: record.digest,
                        tier: record.tier,
                        provider: record.provider.clone(),
                        input_validator: Arc::new(input),
                        audit: audit.clone(),
                        output_validator: None,
                    },
                );
            }
        }
        if let Some(router) = router_entry(&entries) {
            entries.insert(router.id.clone(), router);
        }
        let listing: Vec<Value> = entries.values().map(full_listing).collect();
        let digest = Digest::of_json(&Value::Array(listing));
        Catalog { entries, digest }
    }

    /// Look up one capability.
    pub fn get(&self, id: &str) -> Option<&CatalogEntry> {
        self.entries.get(id)
    }

    /// Every entry in id order.
    pub fn entries(&self) -> impl Iterator<Item = &CatalogEntry> {
        self.entries.values()
    }

    /// Digest of the catalog's complete content.
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// The complete machine-readable inventory (`capability://catalog`).
    pub fn inventory(&self, binding: &Binding, start: usize) -> Inventory {
        let visible: Vec<&CatalogEntry> = self.entries.values().filter(|e| binding.visible(e)).collect();
        let mut page = Inventory {
            catalog_digest: self.digest,
            policy_profile: binding.profile.clone(),
            policy_digest: binding.policy_digest,
            capabilities: Vec::new(),
            total: visible.len(),
            next: None,
        };
        let mut bytes = serde_json::to_vec(&page).map_or(0, |b| b.len()) + 64;
        for e in visible.iter().skip(start) {
            let item = InventoryItem {
                item: compact(e, binding),
                provider: clip(&e.provider.name, 80),
                provider_version: clip(&e.provider.version, 40),
                component_digest: e.component,
                input_schema: describe::strip_annotations(&e.input_schema),
                accepts: e.accepts.clone(),
                produces: e.produces.clone(),
            };
            let size = serde_json::to_vec(&item).map_or(0, |b| b.len()) + 1;
            // At least one entry per page, whatever its size: the cursor always moves.
            if !page.capabilities.is_empty() && bytes + size > INVENTORY_PAGE_BYTES {
                break;
            }
            bytes += size;
            page.capabilities.push(item);
        }
        let next = start + page.capabilities.len();
        page.next = (next < visible.len()).then(|| format!("capability://catalog?cursor={next}"));
        page
    }
}

/// The most bytes of one page of `capability://catalog`.
pub const INVENTORY_PAGE_BYTES: usize = 64 << 10;

/// The router's examples, one per checker with a recipe: the checker's
/// steps, then the certificate it reads (its `certificate` field, or else the
/// first field taking a type the router takes) handed to the router instead.
fn router_examples(checkers: &[&CatalogEntry], takes: &[Accepted]) -> Vec<Example> {
    let routed = |field: &str, checker: &CatalogEntry| {
        checker.accepts.iter().any(|a| a.field == field && takes.iter().any(|t| t.schema_uri == a.schema_uri))
    };
    checkers
        .iter()
        .filter_map(|checker| {
            let example = checker.examples.iter().find(|e| !e.steps.is_empty())?;
            let field = std::iter::once("certificate")
                .chain(checker.accepts.iter().map(|a| a.field.as_str()))
                .find(|f| routed(f, checker) && example.input.get(*f).is_some_and(Value::is_string))?;
            Some(Example {
                title: format!("{} (routed to {})", example.title, checker.id),
                steps: example.steps.clone(),
                input: json!({"certificate": example.input[field]}),
            })
        })
        .take(crate::descriptor::MAX_EXAMPLES)
        .collect()
}

/// The host's `certificate.verify`, present when any checker is installed.
fn router_entry(entries: &BTreeMap<String, CatalogEntry>) -> Option<CatalogEntry> {
    let checkers: Vec<&CatalogEntry> = entries.values().filter(|e| e.kind == EntryKind::Verifier).collect();
    if checkers.is_empty() {
        return None;
    }
    let union = |f: fn(&CatalogEntry) -> &Vec<String>| -> Vec<String> {
        let mut all: Vec<String> = checkers.iter().flat_map(|e| f(e).iter().cloned()).collect();
        all.sort();
        all.dedup();
        all
    };
    // It takes the certificates producers route to checkers: the types a
    // producer with declared checks makes and some checker reads.
    let mut accepts: Vec<Accepted> = entries
        .values()
        .filter(|e| e.kind == EntryKind::Producer && !e.checks.is_empty())
        .flat_map(|e| e.produces.iter())
        .filter(|t| checkers.iter().any(|k| k.accepts_type(t).is_some()))
        .map(|t| Accepted { field: "certificate".into(), schema_uri: t.clone() })
        .collect();
    accepts.sort();
    accepts.dedup();
    let input_schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": false,
        "required": ["certificate"],
        "properties": {"certificate": {
            "type": "string",
            "pattern": "^artifact://sha256/[0-9a-f]{64}$",
            "description": "URI of a certificate artifact, e.g. the certificate_artifact of a result's check_with"
        }},
    });
    let validator = crate::registry::compile_schema(&input_schema).ok()?;
    let examples = router_examples(&checkers, &accepts);
    Some(CatalogEntry {
        id: ROUTER_ID.into(),
        kind: EntryKind::Router,
        title: "Verify a certificate with a checker authorized for its role".into(),
        outcome: "the verdict of a checker the operator authorized for the role the certificate needs".into(),
        description: "Reads the checker role, format and checker that were recorded for the certificate when its \
producer made it, picks a visible checker that fills that role, is authorized by the operator for exactly it and \
reads the certificate's schema and format (the checker the producer named first), fills the checker's required \
input fields from the same-named artifact references inside the certificate (otherwise with the certificate \
itself), and returns that checker's verification. No authorized checker for the role means nothing is concluded, \
never a pass; an artifact that was not made as a certificate is refused."
            .into(),
        tags: vec!["certificate".into(), "verification".into(), "checker".into(), "router".into()],
        modes: vec![Mode::Verify],
        input_kind: InputKind::TypedArtifact,
        input_schema,
        output_schema: None,
        examples,
        checker_roles: union(|e| &e.checker_roles),
        checks: Vec::new(),
        artifact_types: union(|e| &e.artifact_types),
        accepts,
        produces: Vec::new(),
        certificate_formats: union(|e| &e.certificate_formats),
        component: router_component(),
        tier: Tier::Bundled,
        provider: Provider {
            name: "jacobian".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            licence: "Apache-2.0".into(),
            features: vec!["host-provided".into()],
        },
        audit: json!({"provided_by": "host"}),
        input_validator: Arc::new(validator),
        output_validator: None,
    })
}

/// The digest standing for `certificate.verify`, which the host provides
/// (no component has it: it names the host's router, never a checker).
pub fn router_component() -> Digest {
    Digest::of(b"jacobian:host/certificate.verify")
}

/// What discovery responses bind: the active policy, the modes it leaves
/// each capability, and checker authorization.
pub struct Binding {
    /// Policy profile name.
    pub profile: String,
    /// Policy digest.
    pub policy_digest: Digest,
    /// Modes each capability may be invoked in (absent or empty: hidden).
    pub modes: BTreeMap<String, Vec<Mode>>,
    /// Whether each verifier's checker is authorized, by capability id.
    pub authorized: BTreeMap<String, bool>,
    /// The operator's budgets of one call.
    pub budgets: crate::policy::Budgets,
}

impl Binding {
    /// Whether the policy lets agents see and invoke `entry` at all.
    pub fn visible(&self, entry: &CatalogEntry) -> bool {
        !self.modes(entry).is_empty()
    }

    /// The modes the policy leaves `entry`.
    pub fn modes(&self, entry: &CatalogEntry) -> &[Mode] {
        self.modes.get(&entry.id).map(Vec::as_slice).unwrap_or(&[])
    }

    fn availability(&self, entry: &CatalogEntry) -> answer::Availability {
        match (entry.kind, self.authorized.get(&entry.id)) {
            (EntryKind::Verifier, Some(false) | None) => answer::Availability::CheckerNotAuthorized,
            _ => answer::Availability::Available,
        }
    }
}

fn full_listing(e: &CatalogEntry) -> Value {
    json!({
        "id": e.id, "kind": e.kind, "title": e.title, "outcome": e.outcome, "description": e.description,
        "tags": e.tags, "modes": e.modes, "input_kind": e.input_kind, "input_schema": e.input_schema,
        "output_schema": e.output_schema, "examples": e.examples, "checker_roles": e.checker_roles,
        "artifact_types": e.artifact_types, "accepts": e.accepts, "produces": e.produces,
        "certificate_formats": e.certificate_formats,
        "component": e.component.to_string(), "provider": e.provider,
    })
}

impl CatalogEntry {
    /// The input field that takes an artifact of type `schema_uri`, if any
    /// ("" for a checker whose descriptor predates declared fields and
    /// lists the type among those it reads).
    pub fn accepts_type(&self, schema_uri: &str) -> Option<&str> {
        match self.accepts.iter().find(|a| a.schema_uri == schema_uri) {
            Some(accepted) => Some(&accepted.field),
            None => (self.kind == EntryKind::Verifier
                && self.accepts.is_empty()
                && self.artifact_types.iter().any(|t| t == schema_uri))
            .then_some(""),
        }
    }
}

/// The compact search/browse entry. Long publisher-supplied strings are
/// clipped so one entry can never break the response bound.
pub fn compact(e: &CatalogEntry, binding: &Binding) -> CatalogItem {
    CatalogItem {
        capability_id: e.id.clone(),
        kind: e.kind,
        title: clip(&e.title, 160),
        outcome: clip(&e.outcome, 320),
        modes: binding.modes(e).to_vec(),
        tags: e.tags.iter().take(12).map(|t| clip(t, 40)).collect(),
        input_kind: e.input_kind,
        availability: binding.availability(e),
        relevance: None,
        artifact_match: None,
    }
}

fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

/// Error of a describe request, with the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribeError {
    /// Field path.
    pub path: &'static str,
    /// What is wrong.
    pub message: String,
    /// Whether the field named an unknown capability.
    pub not_found: bool,
}

impl DescribeError {
    /// An invalid field.
    pub fn field(path: &'static str, message: String) -> Self {
        DescribeError { path, message, not_found: false }
    }
}
