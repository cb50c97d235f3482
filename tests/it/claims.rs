//! Claims: propositional structures from formal syntax, conjunction splitting
//! and implication obligations, with grouping preserved and exact
//! reconstruction; prose and printed Lean refused.

use jacobian::Runtime;
use jacobian::contract::{Assurance, Status};
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, invoke};

fn construct(runtime: &Runtime, formula: &str) -> String {
    let result = invoke(runtime, "claim.proposition.construct", Mode::Explore, json!({"formula": formula}));
    assert_eq!(result.status, Status::Completed, "{formula}: {:?}", result.diagnostic);
    result.artifacts[0].uri.clone()
}

fn parts(runtime: &Runtime, id: &str, claim: &str) -> (Value, Vec<String>) {
    let result = invoke(runtime, id, Mode::Explore, json!({"claim": claim}));
    assert_eq!(result.status, Status::Completed, "{:?}", result.diagnostic);
    assert_eq!(result.assurance, Assurance::Computed, "decomposition is never verification");
    let uris = result.artifacts.iter().map(|a| a.uri.clone()).collect();
    (result.output.unwrap(), uris)
}

fn texts(output: &Value) -> Vec<String> {
    output["parts"].as_array().unwrap().iter().map(|p| p["text"].as_str().unwrap().to_owned()).collect()
}

fn reconstruct(output: &Value) -> String {
    let parts = texts(output);
    output["reconstruction"]["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|piece| match piece.get("part") {
            Some(i) => parts[i.as_u64().unwrap() as usize].clone(),
            None => piece["text"].as_str().unwrap().to_owned(),
        })
        .collect()
}

#[test]
fn conjunctions_split_into_immediate_subtrees_with_grouping_preserved() {
    let (runtime, _dir) = support::runtime();
    for (formula, expected) in [
        ("p ∧ q ∧ r", vec!["p", "q", "r"]),
        ("(p ∧ q) ∧ r", vec!["(p ∧ q)", "r"]),
        ("p and (q or ¬r) and (s -> t)", vec!["p", "(q or ¬r)", "(s -> t)"]),
        ("  (a & b)&c  ", vec!["(a & b)", "c"]),
    ] {
        let claim = construct(&runtime, formula);
        let (output, uris) = parts(&runtime, "claim.conjunction.split", &claim);
        assert_eq!(texts(&output), expected, "{formula}");
        assert_eq!(reconstruct(&output), formula, "the pieces rebuild the source exactly");
        assert_eq!(uris.len(), expected.len());
    }
    // A part is itself a structure: the grouped conjunct splits again.
    let claim = construct(&runtime, "(p ∧ q) ∧ r");
    let (_, uris) = parts(&runtime, "claim.conjunction.split", &claim);
    let (inner, _) = parts(&runtime, "claim.conjunction.split", &uris[0]);
    assert_eq!(texts(&inner), vec!["p", "q"]);
    assert_eq!(reconstruct(&inner), "(p ∧ q)");
}

#[test]
fn implications_give_their_antecedent_and_consequent() {
    let (runtime, _dir) = support::runtime();
    let claim = construct(&runtime, "p ∧ q → (r → s)");
    let result = invoke(&runtime, "claim.implication.obligations", Mode::Explore, json!({"claim": claim}));
    let output = result.output.clone().unwrap();
    assert_eq!(texts(&output), vec!["p ∧ q", "(r → s)"]);
    let roles: Vec<&str> = output["parts"].as_array().unwrap().iter().map(|p| p["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["antecedent", "consequent"]);
    assert!(result.obligations[0].contains("consequent"));
    // Right associativity: p → q → r is p → (q → r).
    let chained = construct(&runtime, "p → q → r");
    let (output, _) = parts(&runtime, "claim.implication.obligations", &chained);
    assert_eq!(texts(&output), vec!["p", "q → r"]);
    // The wrong operator is a typed refusal.
    let split = invoke(&runtime, "claim.conjunction.split", Mode::Explore, json!({"claim": claim}));
    let d = split.diagnostic.expect("refused");
    assert_eq!(d.details["path"], "input.claim");
    assert!(d.message.contains("not a conjunction"), "{}", d.message);
}

#[test]
fn prose_and_printed_lean_are_refused() {
    let (runtime, _dir) = support::runtime();
    for text in [
        "every commutative magma is associative",
        "∀ x : ℕ, x + 0 = x",
        "theorem foo : True := trivial",
        "p ∧",
        "(p ∨ q",
    ] {
        let result = invoke(&runtime, "claim.proposition.construct", Mode::Explore, json!({"formula": text}));
        let d = result.diagnostic.unwrap_or_else(|| panic!("{text} accepted"));
        assert_eq!(d.details["path"], "input.formula", "{text}");
        assert!(d.message.contains("outside this contract"), "{text}: {}", d.message);
        assert!(d.message.contains("position"), "{text}: {}", d.message);
    }
    // Other artifacts are not propositions.
    let cnf = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"})).artifacts[0]
        .uri
        .clone();
    let refused = invoke(&runtime, "claim.conjunction.split", Mode::Explore, json!({"claim": cnf}));
    assert_eq!(refused.diagnostic.unwrap().details["path"], "input.claim");
}
