//! The bundled reference pack (`references/pack.md`, written for this
//! project, every passage with a stable id and its source) and
//! `knowledge.search`: deterministic retrieval whose every hit is a citation
//! to a real passage. A question the pack does not support gets an empty
//! result, never an invented citation.

use jacobian_guest::{Capability, InputKind, Produced, Qualifier, Refusal, Scope, export_capabilities};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use jacobian_knowledge_core::pack::{self, terms};

const PACK: &str = include_str!("../references/pack.md");
const SOURCE_PATH: &str = "capabilities/knowledge/references/pack.md";

/// A question for the reference pack.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// Words to look up.
    #[schemars(length(min = 1, max = 1024))]
    pub query: String,
    /// Most hits (1..=10).
    #[serde(default = "five")]
    #[schemars(range(min = 1, max = 10))]
    pub limit: u32,
}

fn five() -> u32 {
    5
}

/// One citation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Citation {
    /// Citation marker, `[1]`, `[2]`, ...
    pub marker: String,
    /// File of the pack holding the passage.
    pub source_path: String,
    /// Stable passage id.
    pub chunk_id: String,
    /// The passage's title.
    pub title: String,
    /// The bibliographic source the passage relies on.
    pub source: String,
    /// A verbatim sentence of the passage.
    pub snippet: String,
    /// Query terms the passage contains.
    pub matched_terms: Vec<String>,
}

/// The citations found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchOutput {
    /// Whether the pack supports the question at all.
    pub supported: bool,
    /// Hits, best first (empty when unsupported).
    pub citations: Vec<Citation>,
}

pub struct Search;

impl Capability for Search {
    const ID: &'static str = "knowledge.search";
    const TITLE: &'static str = "Search the bundled reference pack";
    const OUTCOME: &'static str = "citations to passages of the bundled reference pack, or an honest empty result";
    const DESCRIPTION: &'static str = "Deterministic lexical retrieval over the bundled reference pack (definitions \
and known results the portfolio relies on, each passage with a stable id and its source). A passage is cited only \
when it contains at least half of the query's terms; every citation names a real passage and quotes one of its \
sentences verbatim. Retrieval, not proof.";
    const TAGS: &'static [&'static str] = &["knowledge", "retrieval", "references", "citations", "search"];
    type Input = SearchInput;
    type Output = SearchOutput;

    fn examples() -> Vec<(&'static str, SearchInput)> {
        vec![("what is an LRAT proof", SearchInput { query: "LRAT proof format hints".into(), limit: 3 })]
    }

    fn run(input: SearchInput) -> Result<Produced<SearchOutput>, Refusal> {
        let query = terms(&input.query);
        if query.is_empty() {
            return Err(Refusal::at("query", "no searchable words"));
        }
        let citations: Vec<Citation> = pack::search(PACK, &query, input.limit as usize)
            .into_iter()
            .enumerate()
            .map(|(i, hit)| Citation {
                marker: format!("[{}]", i + 1),
                source_path: SOURCE_PATH.into(),
                chunk_id: hit.passage.id,
                title: hit.passage.title,
                source: hit.passage.source,
                snippet: hit.snippet,
                matched_terms: hit.matched,
            })
            .collect();
        let supported = !citations.is_empty();
        let scope = Scope::exhaustive("every passage of the bundled reference pack was scored");
        Ok(Produced::heuristic(SearchOutput { supported, citations }, scope).qualifiers(&[Qualifier::Deterministic]))
    }
}

/// Nothing to ask: the whole pack.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogInput {}

/// One passage of the pack.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PassageEntry {
    /// Stable id.
    pub chunk_id: String,
    /// Title.
    pub title: String,
    /// Bibliographic source.
    pub source: String,
    /// File of the pack.
    pub source_path: String,
    /// The passage text.
    pub text: String,
}

/// The pack.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CatalogOutput {
    /// Every passage, in pack order.
    pub passages: Vec<PassageEntry>,
}

pub struct Catalog;

impl Capability for Catalog {
    const ID: &'static str = "knowledge.catalog";
    const TITLE: &'static str = "List the bundled reference pack";
    const OUTCOME: &'static str = "every passage of the bundled reference pack with its id, title, source and text";
    const DESCRIPTION: &'static str = "The complete reference pack; served as the reference://catalog resource.";
    const TAGS: &'static [&'static str] = &["knowledge", "retrieval", "references"];
    const INPUT_KIND: InputKind = InputKind::StructuredRequest;
    type Input = CatalogInput;
    type Output = CatalogOutput;

    fn examples() -> Vec<(&'static str, CatalogInput)> {
        vec![("the whole pack", CatalogInput {})]
    }

    fn run(_input: CatalogInput) -> Result<Produced<CatalogOutput>, Refusal> {
        let passages = pack::passages(PACK)
            .into_iter()
            .map(|p| PassageEntry {
                chunk_id: p.id,
                title: p.title,
                source: p.source,
                source_path: SOURCE_PATH.into(),
                text: p.text,
            })
            .collect();
        Ok(Produced::computed(CatalogOutput { passages }, Scope::exhaustive("the whole bundled pack"))
            .qualifiers(&[Qualifier::Exact, Qualifier::Deterministic]))
    }
}

export_capabilities!(Search, Catalog);
