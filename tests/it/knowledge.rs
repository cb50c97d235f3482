//! The bundled reference pack: citations resolve to real passages, an
//! unsupported question gets nothing, retrieval is denied by the
//! no-retrieval profile.

use jacobian::contract::{Code, Status};
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, invoke};

fn search(runtime: &jacobian::Runtime, query: &str) -> Value {
    let result = invoke(runtime, "knowledge.search", Mode::Explore, json!({"query": query}));
    assert_eq!(result.status, Status::Completed, "{:?}", result.diagnostic);
    result.output.unwrap()
}

#[test]
fn citations_resolve_to_real_passages_and_unsupported_questions_get_none() {
    let (runtime, _dir) = support::runtime();
    let pack: Value =
        serde_json::from_str(&jacobian::resources::read(&runtime, "reference://catalog").unwrap().text).unwrap();
    let passages = pack["passages"].as_array().unwrap();
    for (query, top) in [
        ("LRAT proof hints", "lrat.format"),
        ("reduced Gröbner basis unique", "groebner.reduced"),
        ("Buchberger criterion S-polynomial", "groebner.criterion"),
        ("maximum induced tree Petersen", "induced_tree.definition"),
        ("quasigroup Latin square", "quasigroup.definition"),
    ] {
        let first = search(&runtime, query);
        assert_eq!(first, search(&runtime, query), "deterministic");
        assert_eq!(first["supported"], true, "{query}");
        let citations = first["citations"].as_array().unwrap();
        assert_eq!(citations[0]["chunk_id"], top, "{query}: {first}");
        for (i, citation) in citations.iter().enumerate() {
            assert_eq!(citation["marker"], format!("[{}]", i + 1));
            let passage = passages
                .iter()
                .find(|p| p["chunk_id"] == citation["chunk_id"])
                .unwrap_or_else(|| panic!("{query}: citation {} names no passage", citation["chunk_id"]));
            assert_eq!(passage["source_path"], citation["source_path"]);
            let snippet = citation["snippet"].as_str().unwrap();
            assert!(!snippet.is_empty() && passage["text"].as_str().unwrap().contains(snippet), "{query}: {snippet}");
        }
    }
    for query in ["chocolate cake recipe", "who won the 1998 world cup"] {
        let none = search(&runtime, query);
        assert_eq!(none["supported"], false, "{query}");
        assert_eq!(none["citations"], json!([]));
    }
}

#[test]
fn the_no_retrieval_profile_denies_the_pack() {
    let (runtime, _dir) = support::runtime();
    assert!(jacobian::resources::available(&runtime).iter().any(|r| r.uri == "reference://catalog"));
    runtime.update_policy(|p| p.profile = "COMPUTE_VERIFY_NO_RETRIEVAL".into()).unwrap();
    let denied = invoke(&runtime, "knowledge.search", Mode::Explore, json!({"query": "LRAT"}));
    assert_eq!(denied.diagnostic.unwrap().code, Code::CapabilityPolicyDenied);
    assert!(!jacobian::resources::available(&runtime).iter().any(|r| r.uri == "reference://catalog"));
    assert!(jacobian::resources::read(&runtime, "reference://catalog").is_err());
    // Computation and verification stay available.
    let cnf = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    assert_eq!(cnf.status, Status::Completed);
}
