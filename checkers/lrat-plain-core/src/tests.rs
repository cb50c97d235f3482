//! The second checker alone: drat-trim's proofs of the examples are accepted
//! in text and binary form (outside truth), the published bogus refutation
//! and its variants are rejected, and each rule holds at its edge. Its
//! soundness harness runs in `jacobian-lrat-core`'s, beside the first
//! checker, on the same instances (brute force, and agreement of the two).

use std::path::PathBuf;

use crate::{Failure, MAX_ID, MAX_VARIABLE, model_satisfies, refutes};

fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata").join(path)
}

/// Clauses of a DIMACS text (comments and the header skipped).
fn clauses(text: &str) -> Vec<Vec<i32>> {
    let numbers = text
        .lines()
        .filter(|l| !l.starts_with('c') && !l.starts_with('p'))
        .flat_map(str::split_whitespace)
        .map(|t| t.parse::<i32>().unwrap());
    let mut out = vec![Vec::new()];
    for n in numbers {
        if n == 0 { out.push(Vec::new()) } else { out.last_mut().unwrap().push(n) }
    }
    out.pop();
    out
}

/// The binary form of a text proof (drat-trim's `compress`).
fn binary(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('c')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let numbers: Vec<&str> = if words[1] == "d" {
            out.push(b'd');
            words[2..].to_vec()
        } else {
            out.push(b'a');
            words
        };
        for n in numbers.iter().map(|w| w.parse::<i64>().unwrap()) {
            let mut u = (n.unsigned_abs() << 1) | u64::from(n < 0);
            while u >= 0x80 {
                out.push((u as u8 & 0x7f) | 0x80);
                u >>= 7;
            }
            out.push(u as u8);
        }
    }
    out
}

fn rejected(formula: &str, proof: &str) -> String {
    match refutes(&clauses(formula), proof.as_bytes()) {
        Ok(accepted) => panic!("accepted: {proof:?} ({accepted:?})"),
        Err(failure) => failure.to_string(),
    }
}

const SATISFIABLE: &str = "p cnf 2 2\n1 2 0\n-1 0\n";
const EVERY_CLAUSE: &str = "p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n";

#[test]
fn drat_trim_proofs_are_accepted_as_text_and_as_binary() {
    let dir = shared("sat/drat-trim-examples");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("outside truth {}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok()?.strip_suffix(".cnf").map(str::to_owned))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    for name in names {
        let formula = clauses(&std::fs::read_to_string(dir.join(format!("{name}.cnf"))).unwrap());
        let proof = std::fs::read_to_string(dir.join(format!("{name}.lrat"))).unwrap();
        let text = refutes(&formula, proof.as_bytes()).unwrap_or_else(|f| panic!("{name}: {f}"));
        assert!(text.lemmas > 0 && text.empty_clause > formula.len() as i64, "{name}: {text:?}");
        let packed = refutes(&formula, binary(&proof).as_slice()).unwrap_or_else(|f| panic!("{name}: {f}"));
        assert_eq!(text, packed, "{name}");
    }
}

#[test]
fn the_published_bogus_refutation_and_its_variants_are_rejected() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/soundness/lrat-variants.json");
    let text = std::fs::read_to_string(path).unwrap();
    // Read without a JSON parser: each proof is a `"proof": "…"` string.
    let proofs: Vec<String> =
        text.split("\"proof\": \"").skip(1).map(|rest| rest[..rest.find('"').unwrap()].replace("\\n", "\n")).collect();
    assert_eq!(proofs.len(), 8);
    let (valid, bogus) = proofs.split_last().unwrap();
    for proof in bogus {
        rejected(SATISFIABLE, proof);
    }
    let accepted = refutes(&clauses(EVERY_CLAUSE), valid.as_bytes()).unwrap();
    assert_eq!((accepted.lemmas, accepted.rat, accepted.empty_clause), (7, 3, 11));
}

#[test]
fn each_rule_holds_at_its_edge() {
    let f = EVERY_CLAUSE;
    // RUP: a hint with two open literals, a hint that is no clause, a conflict.
    assert!(rejected(f, "5 0 1 0\n").contains("2 literals that are not false"));
    assert!(rejected(f, "5 2 0 9 0\n").contains("hint 9 is no active clause"));
    assert!(refutes(&clauses(f), "5 2 0 1 2 0\n6 0 5 3 4 0\n".as_bytes()).is_ok());
    // A tautological lemma holds as it is; a repeated literal is one literal.
    assert!(refutes(&clauses(f), "5 1 -1 0 0\n6 2 2 0 1 2 0\n7 0 6 3 4 0\n".as_bytes()).is_ok());
    // Ids rise, deletions name active clauses, the empty clause needs a conflict.
    assert!(rejected(f, "4 2 0 1 2 0\n").contains("not above 4"));
    assert!(rejected(f, "5 d 5 0\n").contains("clause 5 is deleted but not active"));
    assert!(rejected(SATISFIABLE, "3 0 2 0\n").contains("reach no conflict"));
    assert!(rejected(f, "5 2 0 1 2 0\n").contains("no empty clause"));
    assert!(rejected(f, &format!("{} 2 0 1 2 0\n", i64::from(i32::MAX) + 1)).contains("at most"));
    assert!(rejected(f, &format!("5 {} 0 0\n", (1i64 << 30) + 1)).contains("out of range"));
    // RAT on x3 (fresh): no clause holds -3, so no group is needed.
    assert!(refutes(&clauses(f), "5 3 0 0\n6 2 0 1 2 0\n7 0 6 3 4 0\n".as_bytes()).is_ok());
    // RAT on 1 of (1 3): clauses 2 and 4 hold -1.
    let rat = "5 1 3 0 -2 -4 0\n";
    assert!(rejected(f, rat).contains("the resolvent with clause 2 is not refuted"));
    assert!(rejected(f, "5 1 3 0 -2 0\n").contains("clause 4 holds -1 but has no RAT group"));
    assert!(rejected(f, "5 1 3 0 -4 -2 0\n").contains("out of increasing order"));
    assert!(rejected(f, "5 1 3 0 -1 -2 -4 0\n").contains("clause 1 does not hold -1"));
    assert!(rejected(f, "5 3 0 -9 0\n").contains("RAT group -9 is no active clause"));
    // A group is settled by a true literal other than the pivot's negation
    // (clause 1 under the lemma (1 -3)), else its hints must refute it.
    let g = "p cnf 3 3\n-1 3 0\n-1 -3 0\n2 0\n";
    assert!(refutes(&clauses(g), "4 1 -3 0 -1 -2 0\n".as_bytes()).is_err());
    assert!(rejected(g, "4 1 2 0 -1 -2 0\n").contains("the resolvent with clause 1 is not refuted"));
    let settled = "4 1 2 0 -1 3 -2 3 0\n";
    assert!(rejected(g, settled).contains("no empty clause"), "the lemma itself is judged RAT");
    // A group's clause holding a literal and its negation is settled.
    let h = "p cnf 3 2\n-1 2 -2 0\n3 0\n";
    assert!(rejected(h, "3 1 0 -1 0\n").contains("no empty clause"));
    // Malformed steps.
    assert!(rejected(f, "5 2 0 1 2\n").contains("its hints, 0"));
    assert!(rejected(f, "5 d 1 0 2\n").contains("ends at its only 0"));
    assert!(rejected(f, "-5 2 0 1 2 0\n").contains("positive id"));
    assert!(rejected(f, "5 x 0 0\n").contains("not a number"));
    assert!(rejected(f, "a").contains("ends inside a step"));
    assert!(refutes(&clauses(f), "c a comment\n\n5 2 0 1 2 0\n6 0 5 3 4 0\n".as_bytes()).is_ok());
}

#[test]
fn a_proof_that_cannot_be_read_is_not_judged() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("the store went away"))
        }
    }
    assert!(matches!(refutes(&clauses(EVERY_CLAUSE), Broken), Err(Failure::Unreadable(_))));
}

#[test]
fn models_are_judged_clause_by_clause() {
    let f = clauses("p cnf 3 2\n1 -2 0\n2 3 0\n");
    assert!(model_satisfies(3, &f, &[1, 2, -3]).is_ok());
    assert!(model_satisfies(3, &f, &[1, 3]).is_ok());
    assert!(model_satisfies(3, &f, &[1, -2, -3]).unwrap_err().to_string().contains("clause 2"));
    assert!(model_satisfies(3, &f, &[1, -1, 3]).unwrap_err().to_string().contains("both"));
    assert!(model_satisfies(3, &f, &[4]).unwrap_err().to_string().contains("no variable"));
    assert!(model_satisfies(3, &f, &[0]).unwrap_err().to_string().contains("no variable"));
}

#[test]
fn steps_counts_and_bounds_are_exact() {
    let f = EVERY_CLAUSE;
    let step = |proof: &str| match refutes(&clauses(f), proof.as_bytes()) {
        Err(Failure::Wrong { step, .. }) => step,
        other => panic!("{proof:?}: {other:?}"),
    };
    assert_eq!(step("5 2 0 1 2 0\n6 1 0 0\n"), 2, "a rejection names its step");
    assert_eq!(step("c x\n5 2 0 1 2 0\n5 d 5 0\n6 d 5 0\n"), 3);
    let two = refutes(&clauses(f), "5 2 0 1 2 0\n5 d 1 2 0\n6 0 5 3 4 0\n".as_bytes()).unwrap();
    assert_eq!((two.lemmas, two.deleted, two.empty_clause), (2, 2, 6));
    // The largest id and the largest variable are allowed, one more is not.
    let top = format!("{} 2 0 1 2 0\n{} 0 {} 3 4 0\n", MAX_ID - 1, MAX_ID, MAX_ID - 1);
    assert_eq!(refutes(&clauses(f), top.as_bytes()).unwrap().empty_clause, MAX_ID);
    let widest = format!("5 {MAX_VARIABLE} 0 0\n6 2 0 1 2 0\n7 0 6 3 4 0\n");
    assert!(refutes(&clauses(f), widest.as_bytes()).is_ok());
    assert!(rejected(f, &format!("5 {} 0 0\n", MAX_VARIABLE + 1)).contains("out of range"));
    // Malformed: a binary step without an id, a deletion step of id 0, a number after the hints' 0.
    assert!(rejected(f, "a\0\0").contains("without an id"));
    let spare = "p cnf 3 5\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n3 0\n";
    assert!(refutes(&clauses(spare), "6 d 5 0\n6 2 0 1 2 0\n7 0 6 3 4 0\n".as_bytes()).is_ok());
    assert!(rejected(spare, "0 d 5 0\n6 2 0 1 2 0\n7 0 6 3 4 0\n").contains("positive id"));
    assert!(rejected(f, "5 2 0 1 2 0 7\n6 0 5 3 4 0\n").contains("its hints, 0"));
}
