//! SAT solving and LRAT checking, in the sandbox beside minisat and natively; the second checker's cost.

use crate::*;

/// A minimal DIMACS reader for the native side of the comparison.
pub(crate) fn parse_dimacs(text: &str) -> jacobian_lrat_core::Formula {
    let mut variables = 0;
    let mut clauses = Vec::new();
    let mut current = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('%') {
            break;
        }
        if line.is_empty() || line.starts_with('c') {
            continue;
        }
        if let Some(header) = line.strip_prefix("p cnf") {
            variables = header.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0);
            continue;
        }
        for lit in line.split_whitespace().filter_map(|t| t.parse::<i32>().ok()) {
            if lit == 0 {
                clauses.push(std::mem::take(&mut current));
            } else {
                current.push(lit);
            }
        }
    }
    jacobian_lrat_core::Formula { variables, clauses }
}

/// sat.solve in the sandbox vs native minisat; LRAT checking in the sandbox vs natively.
pub(crate) fn sat_figures() {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/sat");
    if std::process::Command::new("minisat").arg("--help").output().is_err() {
        println!("sat: minisat is not installed (scripts/test.sh installs it); skipping the SAT comparison");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let invoke = |id: &str, input: serde_json::Value| call(&runtime, id, input);
    let mut proofs: Vec<(jacobian_lrat_core::Formula, String, String, String)> = Vec::new();
    for set in ["uf50-218", "uuf50-218"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("satlib").join(set))
            .expect("satlib set")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        files.sort();
        let (mut ours, mut theirs, mut same) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for file in &files {
            let text = std::fs::read_to_string(file).expect("cnf");
            let formula = parse_dimacs(&text);
            let start = Instant::now();
            let (mut native, early) = solver::Solver::new(formula.variables, &formula.clauses);
            std::hint::black_box(early.unwrap_or_else(|| native.solve(1_000_000)));
            same += start.elapsed();
            let cnf = invoke("sat.cnf.construct", json!({"dimacs": text})).artifacts[0].uri.clone();
            let start = Instant::now();
            let result = invoke("sat.solve", json!({"cnf": cnf}));
            ours += start.elapsed();
            let start = Instant::now();
            let status = std::process::Command::new("minisat").arg(file).output().expect("minisat").status;
            theirs += start.elapsed();
            assert!(matches!(status.code(), Some(10 | 20)));
            if let Some(route) = result.check_with.filter(|r| r.certificate_format == "lrat") {
                let certificate = route.certificate_artifact.expect("certificate");
                let envelope: serde_json::Value = serde_json::from_slice(
                    &runtime
                        .data()
                        .read_artifact(&Digest::from_artifact_uri(&certificate).expect("uri"))
                        .expect("artifact"),
                )
                .expect("json");
                let proof = envelope["content"]["proof"].as_str().unwrap_or_default().to_owned();
                proofs.push((parse_dimacs(&text), proof, cnf.clone(), certificate));
            }
        }
        println!(
            "sat.solve on SATLIB {set} ({} files): sandbox {:.0} ms (whole invocations), the same solver compiled \
natively {:.0} ms (sandbox/native {:.2}), native minisat (one process per file) {:.0} ms (ratio {:.2})",
            files.len(),
            ours.as_secs_f64() * 1e3,
            same.as_secs_f64() * 1e3,
            ours.as_secs_f64() / same.as_secs_f64(),
            theirs.as_secs_f64() * 1e3,
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
    }
    // drat-trim's larger instances and proofs too.
    let (mut ours, mut same) = (Duration::ZERO, Duration::ZERO);
    for name in ["uuf-100-1", "uuf-100-2", "uuf-100-3", "uuf-100-4", "uuf-100-5"] {
        let base = shared.join("drat-trim-examples");
        let text = std::fs::read_to_string(base.join(format!("{name}.cnf"))).expect("cnf");
        let formula = parse_dimacs(&text);
        let start = Instant::now();
        let (mut native, early) = solver::Solver::new(formula.variables, &formula.clauses);
        std::hint::black_box(early.unwrap_or_else(|| native.solve(1_000_000)));
        same += start.elapsed();
        let cnf = invoke("sat.cnf.construct", json!({"dimacs": text.clone()})).artifacts[0].uri.clone();
        let start = Instant::now();
        invoke("sat.solve", json!({"cnf": cnf}));
        ours += start.elapsed();
    }
    println!(
        "sat.solve on drat-trim's uuf-100 instances (5, UNSAT): sandbox {:.0} ms (whole invocations), the same solver \
compiled natively {:.0} ms (sandbox/native {:.2})",
        ours.as_secs_f64() * 1e3,
        same.as_secs_f64() * 1e3,
        ours.as_secs_f64() / same.as_secs_f64()
    );
    proofs.extend(drat_trim_proofs(&invoke));
    let lines: usize = proofs.iter().map(|(_, p, _, _)| p.lines().count()).sum();
    let start = Instant::now();
    for (formula, proof, _, _) in &proofs {
        jacobian_lrat_core::check_lrat(formula, proof).expect("native check accepts");
    }
    let native = start.elapsed();
    let start = Instant::now();
    for (_, _, cnf, certificate) in &proofs {
        let result = invoke("sat.certificate.verify", json!({"cnf": cnf, "certificate": certificate}));
        assert_eq!(result.assurance, jacobian::contract::Assurance::Verified);
    }
    let sandboxed = start.elapsed();
    // The same calls on an engine whose calls never yield (no cancellation or progress).
    let plain = open_plain(dir.path());
    let start = Instant::now();
    for (_, _, cnf, certificate) in &proofs {
        let result = call(&plain, "sat.certificate.verify", json!({"cnf": cnf, "certificate": certificate}));
        assert_eq!(result.assurance, jacobian::contract::Assurance::Verified);
    }
    let fuel_only = start.elapsed();
    println!(
        "LRAT checking ({} proofs, {lines} lines): sandbox {:.0} lines/s (whole verify call), \
{:.0} lines/s (calls that never yield), native {:.0} lines/s; ratios to native {:.2} and {:.2}",
        proofs.len(),
        lines as f64 / sandboxed.as_secs_f64(),
        lines as f64 / fuel_only.as_secs_f64(),
        lines as f64 / native.as_secs_f64(),
        sandboxed.as_secs_f64() / native.as_secs_f64(),
        fuel_only.as_secs_f64() / native.as_secs_f64(),
    );
}

/// drat-trim's LRAT proofs of its uuf-100 examples, each as (formula,
/// proof, CNF artifact, certificate artifact).
pub(crate) fn drat_trim_proofs(
    invoke: &dyn Fn(&str, serde_json::Value) -> jacobian::contract::CapabilityResult,
) -> Vec<(jacobian_lrat_core::Formula, String, String, String)> {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/sat/drat-trim-examples");
    (1..=5)
        .map(|k| {
            let text = std::fs::read_to_string(base.join(format!("uuf-100-{k}.cnf"))).expect("cnf");
            let proof = std::fs::read_to_string(base.join(format!("uuf-100-{k}.lrat"))).expect("lrat");
            let cnf = invoke("sat.cnf.construct", json!({"dimacs": text})).artifacts[0].uri.clone();
            let certificate =
                invoke("sat.certificate.construct", json!({"cnf": cnf, "lrat": proof})).artifacts[0].uri.clone();
            (parse_dimacs(&text), proof, cnf, certificate)
        })
        .collect()
}

/// What the second SAT checker costs: natively, `jacobian-lrat-plain-core`
/// beside `jacobian-lrat-core` on the same LRAT proofs (drat-trim's uuf-100
/// proofs and the solver's own for SATLIB uuf50); in the sandbox, a routed
/// check with one checker beside the same check under a 2-of-2 quorum.
pub(crate) fn quorum_figures() {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/sat");
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let invoke = |id: &str, input: serde_json::Value| call(&runtime, id, input);
    let mut proofs: Vec<(jacobian_lrat_core::Formula, String, String)> = Vec::new();
    let uuf100 = drat_trim_proofs(&invoke).into_iter();
    proofs.extend(uuf100.map(|(formula, proof, _, certificate)| (formula, proof, certificate)));
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("satlib/uuf50-218"))
        .expect("satlib uuf50")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for file in files.iter().take(20) {
        let text = std::fs::read_to_string(file).expect("cnf");
        let cnf = invoke("sat.cnf.construct", json!({"dimacs": text})).artifacts[0].uri.clone();
        let route = invoke("sat.solve", json!({"cnf": cnf})).check_with.expect("a certificate");
        let certificate = route.certificate_artifact.expect("an LRAT certificate");
        let digest = jacobian::digest::Digest::from_artifact_uri(&certificate).expect("uri");
        let envelope: serde_json::Value =
            serde_json::from_slice(&runtime.data().read_artifact(&digest).expect("stored")).expect("json");
        let proof = envelope["content"]["proof"].as_str().expect("an inline proof").to_owned();
        proofs.push((parse_dimacs(&text), proof, certificate));
    }
    let lines: usize = proofs.iter().map(|(_, p, _)| p.lines().count()).sum();
    let timed = |check: &dyn Fn(&jacobian_lrat_core::Formula, &str)| {
        let start = Instant::now();
        for _ in 0..3 {
            for (formula, proof, _) in &proofs {
                check(formula, proof);
            }
        }
        start.elapsed() / 3
    };
    let first = timed(&|f, p| {
        jacobian_lrat_core::check_lrat(f, p).expect("the first checker accepts");
    });
    let second = timed(&|f, p| {
        jacobian_lrat_plain_core::refutes(&f.clauses, p.as_bytes()).expect("the second checker accepts");
    });
    println!(
        "second SAT checker, native ({} LRAT proofs, {lines} lines): lrat-core {:.1} ms, lrat-plain-core {:.1} ms, ratio {:.2}",
        proofs.len(),
        first.as_secs_f64() * 1e3,
        second.as_secs_f64() * 1e3,
        second.as_secs_f64() / first.as_secs_f64()
    );
    let routed = |runtime: &Runtime| {
        let (start, mut fuel) = (Instant::now(), 0u64);
        for (_, _, certificate) in &proofs {
            let result = call(runtime, "certificate.verify", json!({"certificate": certificate}));
            assert_eq!(result.assurance, jacobian::contract::Assurance::Verified);
            fuel += result.fuel_consumed;
        }
        (start.elapsed(), fuel)
    };
    let (alone, alone_fuel) = routed(&runtime);
    runtime.update_policy(|p| p.set_quorum("sat.certificate", 2)).expect("policy");
    let (both, both_fuel) = routed(&runtime);
    println!(
        "certificate.verify on the same proofs: one checker {:.1} ms ({alone_fuel} fuel), 2-of-2 quorum {:.1} ms \
({both_fuel} fuel), ratio {:.2} in time, {:.2} in fuel",
        alone.as_secs_f64() * 1e3,
        both.as_secs_f64() * 1e3,
        both.as_secs_f64() / alone.as_secs_f64(),
        both_fuel as f64 / alone_fuel as f64
    );
}
