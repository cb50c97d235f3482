//! Retrieval over the bundled pack itself: well-formed passages, citations
//! that quote their passage verbatim, no citation for what the pack does
//! not support.

use proptest::prelude::*;

use crate::pack::{passages, search, terms};

fn pack() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../knowledge/references/pack.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_bundled_pack_has_passages_with_unique_ids_sources_and_text() {
    let pack = pack();
    let all = passages(&pack);
    assert!(all.len() >= 5, "{} passages", all.len());
    let mut ids: Vec<&str> = all.iter().map(|p| p.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "ids are unique");
    assert!(all.iter().all(|p| !p.title.is_empty() && !p.source.is_empty() && !p.text.is_empty()));
}

#[test]
fn a_question_the_pack_does_not_support_gets_no_citation() {
    let pack = pack();
    assert!(search(&pack, &terms("zymurgy of heliotropes"), 5).is_empty());
    assert!(terms("the and of").is_empty(), "stop words are not terms");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn every_citation_quotes_its_passage_and_matches_half_the_question(
        passage in any::<prop::sample::Index>(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..4),
    ) {
        let pack = pack();
        let all = passages(&pack);
        // Words of one passage: a question the pack can answer.
        let words = terms(&passage.get(&all).text);
        let question: Vec<String> = picks.iter().map(|i| i.get(&words).clone()).collect();
        let hits = search(&pack, &question, 5);
        prop_assert!(!hits.is_empty(), "a question in the pack's words is supported: {:?}", question);
        prop_assert_eq!(&hits, &search(&pack, &question, 5), "deterministic");
        for hit in hits {
            prop_assert!(hit.passage.text.contains(&hit.snippet), "the snippet is verbatim");
            prop_assert!(all.contains(&hit.passage), "a real passage");
            prop_assert!(hit.matched.len() * 2 >= question.len());
        }
    }
}
