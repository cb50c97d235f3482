//! Retrieval over a reference pack written as Markdown: `## id — title`,
//! then `Source: …`, then the passage. Deterministic lexical scoring (title
//! words count three, body words one; a passage must match at least half
//! the question's terms); every hit is a real passage with a verbatim
//! snippet, and a question the pack does not support gets no hit.

/// One passage of the pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// Its stable id (`section.topic`).
    pub id: String,
    pub title: String,
    /// Where the passage comes from.
    pub source: String,
    pub text: String,
}

/// The passages of a pack, in pack order.
pub fn passages(pack: &str) -> Vec<Passage> {
    let mut out = Vec::new();
    for section in pack.split("\n## ").skip(1) {
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

/// The searchable terms of `text`: lowercased words of two or more
/// characters, stop words dropped, common suffixes folded, each once.
pub fn terms(text: &str) -> Vec<String> {
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

/// A passage that answers a question, with the question's terms it matched
/// and its sentence that holds most of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub passage: Passage,
    pub matched: Vec<String>,
    pub snippet: String,
}

/// The passages of `pack` that support `query`, best first (ties by id), at most `limit`.
pub fn search(pack: &str, query: &[String], limit: usize) -> Vec<Hit> {
    let mut scored: Vec<(usize, usize, Passage, Vec<String>)> = passages(pack)
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
    scored
        .into_iter()
        .take(limit)
        .map(|(_, _, passage, matched)| {
            let snippet = best_sentence(&passage.text, &matched);
            Hit { passage, matched, snippet }
        })
        .collect()
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
