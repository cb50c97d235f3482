//! The bundled reference pack (`references/pack.md`, written for this
//! project, every passage with a stable id and its source) and
//! `knowledge.search`: deterministic retrieval whose every hit is a citation
//! to a real passage. A question the pack does not support gets an empty
//! result, never an invented citation.

use jacobian_guest::{Capability, InputKind, Produced, Qualifier, Refusal, Scope, export_capabilities};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const PACK: &str = include_str!("../references/pack.md");
const SOURCE_PATH: &str = "capabilities/knowledge/references/pack.md";

struct Passage {
    id: String,
    title: String,
    source: String,
    text: String,
}

fn passages() -> Vec<Passage> {
    let mut out = Vec::new();
    for section in PACK.split("\n## ").skip(1) {
        let mut lines = section.lines();
        let heading = lines.next().unwrap_or_default();
        let (id, title) = heading.split_once(" — ").unwrap_or((heading, ""));
        let source = lines.next().unwrap_or_default().trim_start_matches("Source: ").to_owned();
        let text = lines.collect::<Vec<_>>().join("\n").trim().to_owned();
        out.push(Passage { id: id.trim().to_owned(), title: title.trim().to_owned(), source, text });
    }
    out
}

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "does", "every", "for", "from", "how", "in", "is", "it", "of",
    "on", "or", "the", "to", "what", "when", "which", "with", "why",
];

fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1) {
        let lower = word.to_lowercase();
        if STOPWORDS.contains(&lower.as_str()) {
            continue;
        }
        let mut stem = lower.clone();
        for suffix in ["ities", "ity", "ies", "es", "s", "e"] {
            if stem.chars().count() >= suffix.len() + 4 && stem.ends_with(suffix) {
                stem.truncate(stem.len() - suffix.len());
            }
        }
        if !out.contains(&stem) {
            out.push(stem);
        }
    }
    out
}

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
        let mut scored: Vec<(usize, usize, Passage, Vec<String>)> = passages()
            .into_iter()
            .filter_map(|p| {
                let title_terms = terms(&p.title);
                let body_terms = terms(&format!("{} {}", p.id.replace('.', " "), p.text));
                let matched: Vec<String> =
                    query.iter().filter(|t| title_terms.contains(t) || body_terms.contains(t)).cloned().collect();
                let score: usize = matched.iter().map(|t| if title_terms.contains(t) { 3 } else { 1 }).sum();
                (matched.len() * 2 >= query.len() && !matched.is_empty()).then_some((score, matched.len(), p, matched))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then_with(|| a.2.id.cmp(&b.2.id)));
        let citations: Vec<Citation> = scored
            .into_iter()
            .take(input.limit as usize)
            .enumerate()
            .map(|(i, (_, _, p, matched))| Citation {
                marker: format!("[{}]", i + 1),
                source_path: SOURCE_PATH.into(),
                chunk_id: p.id.clone(),
                title: p.title.clone(),
                source: p.source.clone(),
                snippet: best_sentence(&p.text, &matched),
                matched_terms: matched,
            })
            .collect();
        let supported = !citations.is_empty();
        let scope = Scope::exhaustive("every passage of the bundled reference pack was scored");
        Ok(Produced::heuristic(SearchOutput { supported, citations }, scope).qualifiers(&[Qualifier::Deterministic]))
    }
}

/// The sentence of `text` holding the most matched terms (verbatim).
fn best_sentence(text: &str, matched: &[String]) -> String {
    let sentences: Vec<&str> = text.split_inclusive(". ").map(str::trim).filter(|s| !s.is_empty()).collect();
    sentences
        .iter()
        .copied()
        .max_by_key(|s| {
            let words = terms(s);
            (matched.iter().filter(|t| words.contains(t)).count(), std::cmp::Reverse(s.len()))
        })
        .unwrap_or(text)
        .to_owned()
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
        let passages = passages()
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
