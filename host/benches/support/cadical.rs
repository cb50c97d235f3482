//! `-- sat_cadical`: `sat.solve` in the sandbox beside Debian's CaDiCaL
//! (installed here when missing), on seeded random 3-SAT at the threshold
//! (4.26 clauses a variable; 150, 200 and 250 variables) and on the SATLIB
//! families the tests read. Whole invocations (the LRAT proof written and
//! stored as an artifact) against one `cadical -q` process per formula
//! (which writes no proof); the same solver compiled natively beside them.
//! Every answer agrees with CaDiCaL's; every model and proof of the native
//! run is checked by the checker's core.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use jacobian_sat_core::solver;

type Invoke<'a> = &'a dyn Fn(&str, Value) -> jacobian::contract::CapabilityResult;

/// Debian's CaDiCaL, installed here when it is missing.
pub fn install_cadical() {
    let present = Command::new("cadical").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if present.is_ok_and(|s| s.success()) {
        return;
    }
    let status = Command::new("apt-get")
        .args(["install", "-y", "-qq", "cadical"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .expect("apt-get");
    assert!(status.success(), "installing Debian's cadical failed");
}

/// Seeded random 3-SAT: `m` clauses of three distinct variables out of `n`.
pub fn random_3sat(n: u32, m: usize, seed: u64) -> Vec<Vec<i32>> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..m)
        .map(|_| {
            let mut clause: Vec<i32> = Vec::new();
            while clause.len() < 3 {
                let v = (next() % u64::from(n)) as i32 + 1;
                if !clause.iter().any(|l| l.abs() == v) {
                    clause.push(if next() & 1 == 1 { -v } else { v });
                }
            }
            clause
        })
        .collect()
}

pub fn dimacs(n: u32, clauses: &[Vec<i32>]) -> String {
    let mut text = format!("p cnf {n} {}\n", clauses.len());
    for clause in clauses {
        for l in clause {
            text.push_str(&format!("{l} "));
        }
        text.push_str("0\n");
    }
    text
}

/// One formula three ways: (sandbox, native, CaDiCaL) seconds and the answer.
fn measure(invoke: Invoke, dir: &Path, name: &str, text: &str) -> (f64, f64, f64, bool) {
    let formula = parse(text);
    let path = dir.join(format!("{name}.cnf"));
    std::fs::write(&path, text).expect("write cnf");
    let start = Instant::now();
    let status = Command::new("cadical").arg("-q").arg(&path).stdout(Stdio::null()).status().expect("cadical");
    let theirs = start.elapsed().as_secs_f64();
    let satisfiable = match status.code() {
        Some(10) => true,
        Some(20) => false,
        other => panic!("cadical on {name}: exit {other:?}"),
    };
    let start = Instant::now();
    let (mut native, early) = solver::Solver::new(formula.variables, &formula.clauses);
    let answer = early.unwrap_or_else(|| native.solve(u64::MAX));
    let same = start.elapsed().as_secs_f64();
    if let solver::Answer::Sat(model) = &answer {
        jacobian_lrat_core::check_model(&formula, model).expect("the checker's core accepts the model");
    }
    let cnf = invoke("sat.cnf.construct", json!({"dimacs": text})).artifacts[0].uri.clone();
    let start = Instant::now();
    let result = invoke("sat.solve", json!({"cnf": cnf, "max_conflicts": 100_000_000}));
    let ours = start.elapsed().as_secs_f64();
    let output = result.output.unwrap_or_else(|| panic!("{name}: {:?}", result.diagnostic));
    assert_eq!(output["status"], if satisfiable { "SAT" } else { "UNSAT" }, "{name}: the answers differ");
    if !satisfiable {
        jacobian_lrat_core::check_lrat(&formula, &native.proof).expect("the checker's core accepts the proof");
    }
    (ours, same, theirs, satisfiable)
}

fn parse(text: &str) -> jacobian_lrat_core::Formula {
    let cnf = jacobian_sat_core::dimacs::parse(text).expect("dimacs");
    jacobian_lrat_core::Formula { variables: cnf.variables, clauses: cnf.clauses }
}

/// `invoke` must run with room for large proofs (the benchmark raises the
/// policy's output and fuel budgets).
pub fn figures(invoke: Invoke, satlib: &Path) {
    install_cadical();
    let dir = tempfile::tempdir().expect("temp dir");
    println!("| formulas | answers | sandbox | native | CaDiCaL | sandbox / CaDiCaL | where CaDiCaL takes > 0.5 s |");
    println!("|---|---|---|---|---|---|---|");
    for (n, count) in [(150u32, 6u64), (200, 6), (250, 4)] {
        let m = (f64::from(n) * 4.26).round() as usize;
        let (mut ours, mut same, mut theirs, mut sat) = (0.0, 0.0, 0.0, 0);
        let mut slow: Vec<String> = Vec::new();
        for k in 0..count {
            let clauses = random_3sat(n, m, 0x3_5a7 ^ (u64::from(n) << 20) ^ ((k + 1) * 0x9e37_79b9));
            let (o, s, t, answer) = measure(invoke, dir.path(), &format!("r{n}_{k}"), &dimacs(n, &clauses));
            (ours, same, theirs) = (ours + o, same + s, theirs + t);
            sat += usize::from(answer);
            if t > 0.5 {
                slow.push(format!("{:.2}×", o / t));
            }
        }
        println!(
            "| {count} random, {n} variables, {m} clauses | {sat} SAT, {} UNSAT | {ours:.2} s | {same:.2} s | {theirs:.2} s | {:.2} | {} |",
            count as usize - sat,
            ours / theirs,
            if slow.is_empty() { "none".into() } else { slow.join(", ") }
        );
    }
    for set in ["uf50-218", "uuf50-218"] {
        let mut files: Vec<_> = std::fs::read_dir(satlib.join(set))
            .expect("satlib set")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "cnf"))
            .collect();
        files.sort();
        let (mut ours, mut same, mut theirs, mut sat) = (0.0, 0.0, 0.0, 0);
        for (k, file) in files.iter().enumerate() {
            let text = std::fs::read_to_string(file).expect("cnf");
            let (o, s, t, answer) = measure(invoke, dir.path(), &format!("{set}_{k}"), &text);
            (ours, same, theirs) = (ours + o, same + s, theirs + t);
            sat += usize::from(answer);
        }
        println!(
            "| SATLIB {set} ({} files) | {sat} SAT, {} UNSAT | {ours:.2} s | {same:.2} s | {theirs:.2} s | {:.2} | none |",
            files.len(),
            files.len() - sat,
            ours / theirs
        );
    }
}
