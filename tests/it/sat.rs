//! SAT against outside truth: drat-trim's LRAT proofs (and their corruptions)
//! and the SATLIB benchmark sets, through the producer and the separate checker.

use std::path::Path;

use jacobian::Runtime;
use jacobian::contract::{Assurance, Status, VerificationStatus};
use jacobian_guest::protocol::{Completeness, Mode};
use serde_json::json;

use crate::support::{self, invoke};

fn construct_cnf(runtime: &Runtime, dimacs: &str) -> String {
    let result = invoke(runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": dimacs}));
    assert_eq!(result.status, Status::Completed, "{:?}", result.diagnostic);
    result.artifacts[0].uri.clone()
}

fn construct_lrat(runtime: &Runtime, cnf: &str, lrat: &str) -> String {
    let result = invoke(runtime, "sat.certificate.construct", Mode::Explore, json!({"cnf": cnf, "lrat": lrat}));
    assert_eq!(result.status, Status::Completed, "{:?}", result.diagnostic);
    assert_eq!(result.assurance, Assurance::Proposed);
    result.artifacts[0].uri.clone()
}

fn verify(runtime: &Runtime, cnf: &str, certificate: &str) -> (VerificationStatus, String) {
    let result =
        invoke(runtime, "sat.certificate.verify", Mode::Verify, json!({"cnf": cnf, "certificate": certificate}));
    let record = result.verification.unwrap_or_else(|| panic!("no verification: {:?}", result.diagnostic));
    (record.status, record.reason)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Lemma lines (not deletions) of a proof, by line index.
fn lemma_lines(proof: &[String]) -> Vec<usize> {
    proof
        .iter()
        .enumerate()
        .filter(|(_, l)| l.split_whitespace().nth(1) != Some("d") && !l.trim().is_empty())
        .map(|(i, _)| i)
        .collect()
}

fn corrupt(proof: &[String], index: usize, how: &str) -> String {
    let mut lines = proof.to_vec();
    let tokens: Vec<String> = lines[index].split_whitespace().map(str::to_owned).collect();
    let first_zero = tokens.iter().skip(1).position(|t| t == "0").unwrap() + 1;
    let mut t = tokens.clone();
    match how {
        // The last hint (the clause that yields the conflict) names no clause.
        "hint" => {
            let last_hint = t.len() - 2;
            assert!(last_hint > first_zero, "line {} names a hint after its clause", index + 1);
            t[last_hint] = "999999999".into();
        }
        // The lemma's first literal is negated (skipped for the empty clause).
        "literal" => {
            assert!(first_zero > 1, "line {} has a literal to negate", index + 1);
            let lit: i64 = t[1].parse().unwrap();
            t[1] = (-lit).to_string();
        }
        // The lemma's id no longer increases.
        "id" => t[0] = "1".into(),
        "drop" => {
            lines.remove(index);
            return lines.join("\n");
        }
        _ => unreachable!(),
    }
    assert_ne!(t, tokens, "line {} was corrupted", index + 1);
    lines[index] = t.join(" ");
    lines.join("\n")
}

#[test]
fn drat_trim_proofs_are_accepted_and_every_single_corruption_is_rejected() {
    let (runtime, _dir) = support::runtime();
    let dir = support::testdata("sat/drat-trim-examples");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".lrat").map(str::to_owned))
        .collect();
    names.sort();
    assert_eq!(names.len(), 10);
    let mut rejected = 0;
    for name in names {
        let cnf = construct_cnf(&runtime, &read(&dir.join(format!("{name}.cnf"))));
        let text = read(&dir.join(format!("{name}.lrat")));
        let certificate = construct_lrat(&runtime, &cnf, &text);
        let (status, reason) = verify(&runtime, &cnf, &certificate);
        assert_eq!(status, VerificationStatus::Verified, "{name}: {reason}");

        let proof: Vec<String> = text.lines().map(str::to_owned).collect();
        let lemmas = lemma_lines(&proof);
        let last = *lemmas.last().unwrap();
        let picks = [lemmas[0], lemmas[lemmas.len() / 2], last];
        for &index in &picks {
            for how in ["hint", "literal", "id", "drop"] {
                let is_empty_clause = proof[index].split_whitespace().nth(1) == Some("0");
                if how == "literal" && is_empty_clause {
                    continue;
                }
                if how == "drop" && index != last {
                    continue; // dropping the empty clause: the proof no longer ends
                }
                let bad = construct_lrat(&runtime, &cnf, &corrupt(&proof, index, how));
                let (status, reason) = verify(&runtime, &cnf, &bad);
                assert_eq!(
                    status,
                    VerificationStatus::Rejected,
                    "{name}: corrupting the {how} of line {} was accepted ({reason})",
                    index + 1
                );
                rejected += 1;
            }
        }
    }
    assert!(rejected >= 80, "{rejected} corruptions checked");
}

pub(crate) fn satlib(set: &str) -> Vec<(String, String)> {
    let dir = support::testdata(&format!("sat/satlib/{set}"));
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_string_lossy().into_owned();
            (path.extension()? == "cnf").then(|| (name, read(&path)))
        })
        .collect();
    files.sort();
    files
}

fn solve_and_check(runtime: &Runtime, name: &str, dimacs: &str, expected: &str) {
    let cnf = construct_cnf(runtime, dimacs);
    let result = invoke(runtime, "sat.solve", Mode::Explore, json!({"cnf": cnf}));
    assert_eq!(result.status, Status::Completed, "{name}: {:?}", result.diagnostic);
    let output = result.output.as_ref().unwrap();
    assert_eq!(output["status"], expected, "{name}");
    assert_eq!(result.assurance, Assurance::Computed, "a solver never verifies itself");
    let route = result.check_with.as_ref().expect("check_with");
    assert_eq!(route.certificate_format, if expected == "SAT" { "model" } else { "lrat" });
    let certificate = route.certificate_artifact.clone().unwrap();
    let (status, reason) = verify(runtime, &cnf, &certificate);
    assert_eq!(status, VerificationStatus::Verified, "{name}: {reason}");
}

#[test]
fn satlib_satisfiable_sets_are_answered_sat_with_checked_models() {
    let (runtime, _dir) = support::runtime();
    for set in ["uf20-91", "uf50-218"] {
        let files = satlib(set);
        assert_eq!(files.len(), 100, "{set}");
        for (name, dimacs) in files {
            solve_and_check(&runtime, &name, &dimacs, "SAT");
        }
    }
}

#[test]
fn satlib_uuf50_is_answered_unsat_with_checked_lrat_proofs() {
    let (runtime, _dir) = support::runtime();
    let files = satlib("uuf50-218");
    assert_eq!(files.len(), 100);
    for (name, dimacs) in files {
        solve_and_check(&runtime, &name, &dimacs, "UNSAT");
    }
}

#[test]
fn budgets_bad_dimacs_and_mismatched_certificates_are_honest() {
    let (runtime, _dir) = support::runtime();
    let uuf = &satlib("uuf50-218")[0].1;
    let cnf = construct_cnf(&runtime, uuf);
    let unknown = invoke(&runtime, "sat.solve", Mode::Explore, json!({"cnf": cnf, "max_conflicts": 1}));
    assert_eq!(unknown.output.as_ref().unwrap()["status"], "UNKNOWN");
    assert_eq!(unknown.scope.as_ref().unwrap().completeness, Completeness::Partial);
    assert!(unknown.artifacts.is_empty() && unknown.check_with.is_none());

    for (dimacs, needle) in [
        ("1 2 0\n", "header"),
        ("p cnf 2 1\n1 x 0\n", "token \"x\""),
        ("p cnf 2 1\n1 3 0\n", "token \"3\""),
        ("p cnf 2 2\n1 2 0\n", "declares 2 clauses"),
        ("p cnf 2 1\n1 2\n", "not terminated"),
    ] {
        let result = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": dimacs}));
        let d = result.diagnostic.expect("refused");
        assert_eq!(d.details["path"], "input.dimacs");
        assert!(d.message.contains(needle), "{needle}: {}", d.message);
    }

    // A model for one formula presented as a certificate for another concludes nothing: the host
    // does not even run the checker on a formula the certificate does not name.
    let sat_cnf = construct_cnf(&runtime, "p cnf 1 1\n1 0\n");
    let solved = invoke(&runtime, "sat.solve", Mode::Explore, json!({"cnf": sat_cnf}));
    let model = solved.check_with.unwrap().certificate_artifact.unwrap();
    let other = construct_cnf(&runtime, "p cnf 1 1\n-1 0\n");
    let (status, reason) = verify(&runtime, &other, &model);
    assert_eq!(status, VerificationStatus::NotConcluded);
    assert!(reason.contains(&other) && reason.contains("nor an artifact its certificate names"), "{reason}");
}

/// Seeded random 3-SAT near the threshold, so both answers occur.
fn random_cnf(seed: &mut u64, variables: u32) -> String {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    let clauses = (variables as f64 * 4.26).round() as u32;
    let mut text = format!("p cnf {variables} {clauses}\n");
    for _ in 0..clauses {
        for _ in 0..3 {
            let var = (next() % u64::from(variables)) as i64 + 1;
            let lit = if next() % 2 == 0 { var } else { -var };
            text.push_str(&format!("{lit} "));
        }
        text.push_str("0\n");
    }
    text
}

#[test]
fn seeded_random_formulas_get_the_same_answers_as_minisat() {
    let (runtime, dir) = support::runtime();
    let minisat = std::process::Command::new("minisat").arg("--help").output();
    assert!(minisat.is_ok(), "minisat is not installed (scripts/test.sh installs it with apt-get)");
    let mut seed = 0x6a61_636f_6269_616e_u64;
    let (mut sat, mut unsat) = (0, 0);
    for i in 0..40 {
        let dimacs = random_cnf(&mut seed, 30 + i % 31);
        let file = dir.path().join(format!("random-{i}.cnf"));
        std::fs::write(&file, &dimacs).unwrap();
        let status = std::process::Command::new("minisat").arg(&file).output().expect("minisat runs").status.code();
        let expected = match status {
            Some(10) => "SAT",
            Some(20) => "UNSAT",
            other => panic!("minisat exited with {other:?}"),
        };
        if expected == "SAT" {
            sat += 1
        } else {
            unsat += 1
        }
        solve_and_check(&runtime, &format!("random-{i}"), &dimacs, expected);
    }
    assert!(sat > 5 && unsat > 5, "both answers occur ({sat} SAT, {unsat} UNSAT)");
}

/// The solver natively, its proofs checked by the checker's core (a producer
/// crate may not depend on a checker crate, so this lives here): seeded
/// 200-variable formulas at the threshold, run long enough that learned
/// clauses are minimized (their reasons become hints), deleted and the
/// arena compacted; models satisfy every clause, every proof is accepted.
/// Outside truth for the answers: Debian's `minisat` on the same formulas.
#[test]
fn the_solver_s_proofs_through_minimization_deletion_and_compaction_satisfy_the_checker_s_core() {
    use jacobian_sat_core::solver::{Answer, Solver};
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 0x5a7_c0de_u64;
    let (mut sat, mut unsat, mut compactions) = (0, 0, 0);
    for i in 0..6 {
        let dimacs = random_cnf(&mut seed, 200);
        let cnf = jacobian_sat_core::dimacs::parse(&dimacs).unwrap();
        let (mut solver, early) = Solver::new(cnf.variables, &cnf.clauses);
        let answer = early.unwrap_or_else(|| solver.solve(10_000_000));
        compactions += solver.stats.compactions;
        let file = dir.path().join(format!("threshold-{i}.cnf"));
        std::fs::write(&file, &dimacs).unwrap();
        let minisat = std::process::Command::new("minisat").arg(&file).output().expect("minisat runs").status.code();
        match answer {
            Answer::Sat(model) => {
                assert_eq!(minisat, Some(10), "formula {i}: SAT here");
                assert!(cnf.clauses.iter().all(|c| c.iter().any(|l| model.contains(l))), "formula {i}: the model");
                sat += 1;
            }
            Answer::Unsat => {
                assert_eq!(minisat, Some(20), "formula {i}: UNSAT here");
                let formula = jacobian_lrat_core::Formula { variables: cnf.variables, clauses: cnf.clauses.clone() };
                if let Err(rejection) = jacobian_lrat_core::check_lrat(&formula, &solver.proof) {
                    panic!("formula {i}: the checker's core rejects the proof: {rejection:?}");
                }
                unsat += 1;
            }
            Answer::Unknown => panic!("formula {i}: no answer within 10^7 conflicts"),
        }
    }
    assert!(sat > 0 && unsat > 0, "both answers occur ({sat} SAT, {unsat} UNSAT)");
    assert!(compactions > 0, "no run compacted its clause arena");
}
