//! The core alone, natively: SATLIB answers (outside truth), and on random
//! small formulas, agreement with exhaustive search, models that satisfy
//! every clause, and proofs that are well-formed LRAT ending in the empty
//! clause. (Whether the proofs are valid is the checker's business: no
//! producer crate may depend on a checker crate, so `tests/it/sat.rs` checks
//! them, natively with the checker's core and through the checker component.)

use std::path::PathBuf;

use proptest::prelude::*;

use crate::dimacs::{self, lrat_syntax};
use crate::solver::{Answer, Solver};

fn satlib(set: &str) -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/sat/satlib").join(set);
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("outside truth {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "cnf"))
        .map(|path| (path.display().to_string(), std::fs::read_to_string(&path).unwrap()))
        .collect();
    files.sort();
    files
}

fn satisfies(model: &[i32], clauses: &[Vec<i32>]) -> bool {
    clauses.iter().all(|clause| clause.iter().any(|literal| model.contains(literal)))
}

/// Solve, and check what can be checked without a checker: a model
/// satisfies every clause; a proof is LRAT syntax whose last step adds the
/// empty clause.
fn solve(variables: u32, clauses: &[Vec<i32>]) -> Option<bool> {
    solved(variables, clauses).0
}

fn solved(variables: u32, clauses: &[Vec<i32>]) -> (Option<bool>, Solver) {
    let (mut solver, early) = Solver::new(variables, clauses);
    let answer = early.unwrap_or_else(|| solver.solve(1_000_000));
    match answer {
        Answer::Sat(model) => {
            assert!(satisfies(&model, clauses), "the model satisfies every clause");
            (Some(true), solver)
        }
        Answer::Unsat => {
            lrat_syntax(&solver.proof).expect("the proof is LRAT");
            let last = solver.proof.lines().rev().find(|l| l.split_whitespace().nth(1) != Some("d")).expect("a step");
            assert_eq!(last.split_whitespace().nth(1), Some("0"), "the proof ends with the empty clause: {last}");
            (Some(false), solver)
        }
        Answer::Unknown => (None, solver),
    }
}

#[test]
fn satlib_formulas_get_satlibs_answers() {
    for (set, satisfiable) in [("uf20-91", true), ("uf50-218", true), ("uuf50-218", false)] {
        let files = satlib(set);
        assert!(files.len() >= 100, "{set}");
        for (name, text) in files.iter().take(40) {
            let cnf = dimacs::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(solve(cnf.variables, &cnf.clauses), Some(satisfiable), "{name}");
        }
    }
}

/// Seeded random 3-SAT at the threshold (4.26 clauses a variable): long
/// enough runs that learned clauses are minimized, deleted and the arena
/// compacted, models satisfying and proofs well-formed, both answers met
/// (`tests/it/sat.rs` checks the same formulas' proofs with the checker's core).
#[test]
fn threshold_formulas_get_answers_through_deletion_and_compaction() {
    let mut seed = 0x5a7_0001_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut answers, mut compactions) = (Vec::new(), 0);
    for _ in 0..6 {
        let variables = 200;
        let clauses: Vec<Vec<i32>> = (0..852)
            .map(|_| {
                let mut clause: Vec<i32> = Vec::new();
                while clause.len() < 3 {
                    let v = (next() % variables) as i32 + 1;
                    if !clause.iter().any(|l| l.abs() == v) {
                        clause.push(if next() & 1 == 1 { -v } else { v });
                    }
                }
                clause
            })
            .collect();
        let (answer, solver) = solved(variables as u32, &clauses);
        answers.push(answer.expect("answered within the conflict budget"));
        compactions += solver.stats.compactions;
    }
    assert!(answers.contains(&true) && answers.contains(&false), "{answers:?}");
    assert!(compactions > 0, "no run compacted its arena");
}

#[test]
fn dimacs_errors_name_the_line_and_the_token() {
    for (text, expected) in [
        ("p cnf 2 1\n1 x 0\n", "line 2"),
        ("p cnf 2 1\n1 3 0\n", "line 2"),
        ("p dnf 2 1\n1 0\n", "token \"dnf\""),
        ("p cnf 2 1\np cnf 2 1\n", "a second header"),
    ] {
        let error = dimacs::parse(text).err().unwrap_or_else(|| panic!("{text:?} parsed"));
        assert!(error.contains(expected), "{text:?}: {error}");
    }
}

/// Whether any assignment of `variables` satisfies every clause.
fn brute_force(variables: u32, clauses: &[Vec<i32>]) -> bool {
    (0u32..1 << variables).any(|bits| {
        clauses.iter().all(|clause| {
            clause.iter().any(|&literal| {
                let value = bits >> (literal.unsigned_abs() - 1) & 1 == 1;
                (literal > 0) == value
            })
        })
    })
}

fn formula() -> impl Strategy<Value = (u32, Vec<Vec<i32>>)> {
    (1u32..=8).prop_flat_map(|variables| {
        let literal = (1..=variables as i32, any::<bool>()).prop_map(|(v, negative)| if negative { -v } else { v });
        let clause = prop::collection::vec(literal, 1..=3);
        (Just(variables), prop::collection::vec(clause, 1..=30))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_solver_agrees_with_exhaustive_search((variables, clauses) in formula()) {
        prop_assert_eq!(solve(variables, &clauses), Some(brute_force(variables, &clauses)));
    }
}
