//! `capability.describe` search and browse: deterministic lexical retrieval
//! over published ids, titles, outcomes, descriptions and tags, input-kind
//! routing, opaque cursors and the 16 KiB response bound.
//!
//! Ranking is retrieval, not recommendation: every signal is reported
//! (`matched_on`, `matched_terms`, `relevance_score`, `query_coverage_milli`,
//! `lexical_fit`) so a caller can see why an entry was returned.

use jacobian_guest::protocol::InputKind;
use serde_json::json;

use super::answer::{
    ArtifactMatch, ArtifactRelation, CatalogItem, CatalogPage, Form, LexicalFit, PortfolioFit, Relevance, RoutingBasis,
    RoutingStatus,
};
use super::{Binding, Catalog, CatalogEntry, DescribeError, compact};
use crate::contract::{DESCRIBE_CONTRACT, DescribeRequest, SCOPE_RULE};
use crate::digest::Digest;

/// Upper bound of one search or browse response, in bytes of JSON.
pub const RESPONSE_LIMIT: usize = 16 * 1024;

/// Field weights: an id segment or an exact tag says more than a word of prose.
const FIELDS: &[(&str, u32)] = &[("id", 4), ("tags", 4), ("title", 3), ("outcome", 2), ("description", 1)];

/// Phrases that unambiguously ask for natural-language proof handling.
const PROSE_PHRASES: &[&str] =
    &["informal proof", "proof prose", "natural language proof", "natural-language proof", "prose proof"];

/// Words that carry no retrieval signal.
const STOPWORDS: &[&str] = &[
    "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "find", "for", "from", "how", "in", "is", "it",
    "me", "my", "of", "on", "or", "some", "that", "the", "there", "this", "to", "what", "which", "with",
];

/// Normalize a word: lowercase ASCII, crude suffix folding so that
/// "associativity", "associative" and "associatively" meet.
pub fn stem(word: &str) -> String {
    let mut w = word.to_ascii_lowercase();
    for suffix in ["ly", "ity", "ities", "ies", "es", "s", "e"] {
        if w.len() >= suffix.len() + 3 && w.ends_with(suffix) && !w.ends_with("ss") {
            w.truncate(w.len() - suffix.len());
            if suffix == "ies" {
                w.push('y');
            }
        }
    }
    w
}

/// Split text into normalized terms (ids split on `.` and `_`).
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| t.len() > 1) {
        let lowered = word.to_ascii_lowercase();
        if STOPWORDS.contains(&lowered.as_str()) {
            continue;
        }
        let term = stem(&lowered);
        if !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

struct Hit<'a> {
    entry: &'a CatalogEntry,
    score: u32,
    matched_on: Vec<&'static str>,
    matched_terms: Vec<String>,
    coverage_milli: u32,
    strong: bool,
}

fn score<'a>(entry: &'a CatalogEntry, query: &[String]) -> Option<Hit<'a>> {
    let fields: Vec<(&'static str, u32, Vec<String>)> = FIELDS
        .iter()
        .map(|(name, weight)| {
            let text = match *name {
                "id" => entry.id.clone(),
                "tags" => entry.tags.join(" "),
                "title" => entry.title.clone(),
                "outcome" => entry.outcome.clone(),
                _ => entry.description.clone(),
            };
            (*name, *weight, terms(&text))
        })
        .collect();
    let mut total = 0;
    let mut matched_on = Vec::new();
    let mut matched_terms = Vec::new();
    for term in query {
        let mut best = 0;
        for (name, weight, words) in &fields {
            if words.contains(term) {
                best = best.max(*weight);
                if !matched_on.contains(name) {
                    matched_on.push(*name);
                }
            }
        }
        if best > 0 {
            total += best;
            matched_terms.push(term.clone());
        }
    }
    if matched_terms.is_empty() {
        return None;
    }
    matched_on.sort_by_key(|f| FIELDS.iter().position(|(n, _)| n == f));
    let coverage_milli = (matched_terms.len() * 1000 / query.len()) as u32;
    let strong = coverage_milli >= 500 && matched_on.iter().any(|f| matches!(*f, "id" | "tags" | "title"));
    // Normalized to 0..=1000 against the best possible score.
    let score = total * 1000 / (4 * query.len() as u32);
    Some(Hit { entry, score, matched_on, matched_terms, coverage_milli, strong })
}

/// Answer a search (with `query`) or browse (without).
pub fn search(catalog: &Catalog, binding: &Binding, request: &DescribeRequest) -> Result<CatalogPage, DescribeError> {
    let limit = request.limit.unwrap_or(5);
    if !(1..=20).contains(&limit) {
        return Err(DescribeError::field("limit", format!("must be between 1 and 20, got {limit}")));
    }
    let query_text = request.query.clone().unwrap_or_default();
    if query_text.len() > 1024 {
        return Err(DescribeError::field("query", "is longer than 1024 bytes".into()));
    }
    let query = terms(&query_text);
    if query.is_empty() && !query_text.trim().is_empty() {
        return Err(DescribeError::field(
            "query",
            "has only stop words or punctuation, so it matches nothing; name what the capability does, or omit query \
             to browse"
                .into(),
        ));
    }
    let searching = !query.is_empty();

    let candidates = catalog.entries().filter(|e| binding.visible(e)).filter(|e| {
        request.domain.as_ref().is_none_or(|d| e.id.split('.').next() == Some(d.as_str()) || e.tags.contains(d))
            && request.mode.is_none_or(|m| binding.modes(e).contains(&m))
            && request.input_kind.is_none_or(|k| e.input_kind == k)
            && request.artifact_type.as_ref().is_none_or(|t| artifact_match(e, t).is_some())
    });
    let mut hits: Vec<Hit<'_>> = if searching {
        candidates.filter_map(|e| score(e, &query)).collect()
    } else {
        candidates
            .map(|entry| Hit {
                entry,
                score: 0,
                matched_on: Vec::new(),
                matched_terms: Vec::new(),
                coverage_milli: 0,
                strong: false,
            })
            .collect()
    };
    // Holding an artifact, what takes it comes first, then where it comes from.
    let relation =
        |hit: &Hit<'_>| request.artifact_type.as_ref().and_then(|t| artifact_match(hit.entry, t)).map(|m| m.relation);
    hits.sort_by(|a, b| {
        relation(a).cmp(&relation(b)).then(b.score.cmp(&a.score)).then_with(|| a.entry.id.cmp(&b.entry.id))
    });

    let (routing_status, routing_basis) = routing(catalog, binding, request, &query_text);
    let portfolio_fit = if !searching {
        None
    } else if hits.iter().any(|h| h.strong) {
        Some(PortfolioFit::StrongCandidates)
    } else if hits.is_empty() {
        Some(PortfolioFit::NoLexicalMatches)
    } else {
        Some(PortfolioFit::OnlyWeakLexicalMatches)
    };

    let filters = crate::json::value(&DescribeRequest { cursor: None, ..request.clone() });
    let tag = Digest::of_json(&json!([filters, catalog.digest().to_string(), binding.policy_digest.to_string()]))
        .to_hex()[..16]
        .to_owned();
    let offset = match &request.cursor {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("c1.")
            .and_then(|rest| rest.split_once('.'))
            .filter(|(t, _)| *t == tag)
            .and_then(|(_, offset)| offset.parse::<usize>().ok())
            .filter(|offset| *offset <= hits.len())
            .ok_or_else(|| {
                DescribeError::field(
                    "cursor",
                    "not a cursor returned for these filters, this limit, catalog and policy".into(),
                )
            })?,
    };
    let results: Vec<CatalogItem> = hits
        .iter()
        .skip(offset)
        .take(limit as usize)
        .map(|hit| CatalogItem {
            relevance: searching.then(|| Relevance {
                matched_on: hit.matched_on.clone(),
                matched_terms: hit.matched_terms.clone(),
                relevance_score: hit.score,
                query_coverage_milli: hit.coverage_milli,
                lexical_fit: if hit.strong { LexicalFit::Strong } else { LexicalFit::Weak },
            }),
            artifact_match: request.artifact_type.as_ref().and_then(|t| artifact_match(hit.entry, t)),
            ..compact(hit.entry, binding)
        })
        .collect();
    let mut page = CatalogPage {
        contract: DESCRIBE_CONTRACT,
        form: if searching { Form::Search } else { Form::Browse },
        catalog_digest: catalog.digest(),
        policy_profile: binding.profile.clone(),
        policy_digest: binding.policy_digest,
        query_terms: query,
        portfolio_fit,
        routing_status,
        routing_basis,
        total: hits.len(),
        results,
        next_cursor: None,
        note: "ranking is deterministic lexical retrieval, not a recommendation or a judgement of fit",
        scope_rule: SCOPE_RULE,
    };
    // Fewer results rather than more bytes: the cursor continues after the last one sent.
    loop {
        let next = offset + page.results.len();
        page.next_cursor = (next < page.total).then(|| format!("c1.{tag}.{next}"));
        if page.results.len() <= 1 || serde_json::to_vec(&page).map_or(0, |b| b.len()) <= RESPONSE_LIMIT {
            return Ok(page);
        }
        page.results.pop();
    }
}

/// How `e` relates to the artifact type `t`: it takes one (first), or makes one.
fn artifact_match(e: &CatalogEntry, t: &str) -> Option<ArtifactMatch> {
    if let Some(field) = e.accepts_type(t) {
        let field = (!field.is_empty()).then(|| field.to_owned());
        return Some(ArtifactMatch { relation: ArtifactRelation::Accepts, field });
    }
    e.produces.iter().any(|p| p == t).then_some(ArtifactMatch { relation: ArtifactRelation::Produces, field: None })
}

fn routing(
    catalog: &Catalog,
    binding: &Binding,
    request: &DescribeRequest,
    query: &str,
) -> (RoutingStatus, RoutingBasis) {
    let lowered = query.to_ascii_lowercase();
    let phrase = PROSE_PHRASES.iter().find(|p| lowered.contains(*p)).copied();
    // A declared input kind constrains the route; without one, a phrase that
    // can only mean proof prose implies it.
    let (reason, kind) = match (request.input_kind, phrase) {
        (Some(kind), _) => ("DECLARED_INPUT_KIND", kind),
        (None, Some(_)) => ("UNAMBIGUOUS_PHRASE", InputKind::NaturalLanguageProof),
        (None, None) => {
            let basis = RoutingBasis {
                reason: "NO_INPUT_KIND",
                phrase: None,
                input_kind: None,
                providers: None,
                providers_total: None,
                explanation: Some("no input_kind was given and the query implies none: every input kind is searched"),
            };
            return (RoutingStatus::Unconstrained, basis);
        }
    };
    let providers: Vec<String> =
        catalog.entries().filter(|e| binding.visible(e) && e.input_kind == kind).map(|e| e.id.clone()).collect();
    let none = providers.is_empty();
    let providers_total = providers.len();
    let explanation = match kind {
        _ if !none => None,
        InputKind::NaturalLanguageProof => Some(
            "no installed capability accepts natural-language proof prose; formal artifacts (e.g. a \
             PROPOSITIONAL_STRUCTURE or a Cayley table) are a different input kind",
        ),
        _ => Some("no installed capability the policy shows accepts this input kind"),
    };
    let basis = RoutingBasis {
        reason,
        phrase: if reason == "UNAMBIGUOUS_PHRASE" { phrase } else { None },
        input_kind: Some(kind),
        // The first twenty by id, and how many there are: the page stays bounded.
        providers: Some(providers.into_iter().take(20).collect()),
        providers_total: Some(providers_total),
        explanation,
    };
    (if none { RoutingStatus::NoRoute } else { RoutingStatus::RouteAvailable }, basis)
}
