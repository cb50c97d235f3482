//! Runtime benchmarks. Prints figures; asserts nothing about time.
//!
//! `cargo bench --bench runtime` reports, side by side in one run:
//! - compiling a component vs loading it from the precompiled cache;
//! - instantiate + call of a trivial capability, pooling vs on-demand allocation;
//! - the full core invoke path (validation, JSON, result) for the same call;
//! - an MCP stdio round trip of the same invoke through `jacobian serve`;
//! - `-- finder`: the finite model finder against Debian's z3 (support/finder.rs).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jacobian::budgets::BudgetPreset;
use jacobian::contract::InvokeRequest;
use jacobian::digest::Digest;
use jacobian::engine::{ArtifactAccess, CallBudgets, CallControl, EngineConfig, Entry, Sandbox};
use jacobian::store::StoreConfig;
use jacobian::{Runtime, RuntimeConfig};
use serde_json::json;

// The capabilities' compute cores, linked natively: the same source the
// components compile, for the sandbox-cost comparison (same code, same
// inputs, in and out of the sandbox).
use jacobian_graph_core::enumerate;
use jacobian_polynomial_core::{groebner, poly};
use jacobian_sat_core::solver;

#[path = "support/cadical.rs"]
mod cadical;
#[path = "../../tests/it/classic_ideals.rs"]
mod classic_ideals;
#[path = "support/finder.rs"]
mod finder;
#[path = "support/floor.rs"]
mod floor;
#[path = "support/ideals.rs"]
mod ideals;
#[path = "../../tests/it/mcp_http.rs"]
mod mcp_http;
#[path = "support/proofs.rs"]
mod proofs;
#[path = "../../tests/it/random_laws.rs"]
mod random_laws;
use mcp_http::{HttpClient, resident_kib};

const BUDGETS: CallBudgets = CallBudgets { fuel: 1_000_000_000, memory_bytes: 64 << 20, output_bytes: 1 << 20 };

fn echo_bytes() -> Vec<u8> {
    let path = PathBuf::from(jacobian::bundled::TEST_GUESTS_DIR).join("jacobian_test_echo.wasm");
    std::fs::read(path).expect("echo test guest")
}

fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e6;
    (at(0.50), at(0.99))
}

fn time<T>(mut f: impl FnMut() -> T) -> Duration {
    let start = Instant::now();
    std::hint::black_box(f());
    start.elapsed()
}

fn compile_vs_cache() {
    let sandbox = Sandbox::new(EngineConfig::default()).expect("engine");
    let bundled = jacobian::bundled::BUNDLED
        .iter()
        .find(|c| c.package == "jacobian-universal-algebra")
        .expect("bundled capability");
    let compile: Vec<Duration> = (0..5).map(|_| time(|| sandbox.compile(bundled.bytes).expect("compiles"))).collect();
    let component = sandbox.compile(bundled.bytes).expect("compiles");
    let code = sandbox.serialize(&component).expect("serializes");
    let load: Vec<Duration> = (0..20)
        .map(|_| {
            time(|| {
                let digest = Digest::of(&code);
                // SAFETY: `code` was just produced by this engine.
                (digest, unsafe { sandbox.deserialize(&code) }.expect("loads"))
            })
        })
        .collect();
    let (compile_ms, _) = percentiles(compile);
    let (load_ms, _) = percentiles(load);
    println!(
        "compile vs precompiled cache ({} KiB component): compile p50 {:.1} ms, cache load (re-hash + deserialize) p50 {:.2} ms, ratio {:.0}x",
        bundled.bytes.len() / 1024,
        compile_ms / 1000.0,
        load_ms / 1000.0,
        compile_ms / load_ms
    );
}

/// Every bundled component: its size, and instantiate + `describe()` from a
/// cached `InstancePre` (the pooling allocator; describe is each bundle's
/// cheapest export, so this is close to its instantiation cost).
fn guest_figures() {
    let sandbox = Sandbox::new(EngineConfig::default()).expect("engine");
    println!("bundled components (guest profile: opt-level 3, LTO, one codegen unit, stripped):");
    let mut total = 0;
    for bundled in jacobian::bundled::BUNDLED {
        let component = sandbox.compile(bundled.bytes).expect("compiles");
        let loaded = sandbox.prepare(Digest::of(bundled.bytes), &component).expect("prepares");
        let mut call = || {
            let report = sandbox.call(
                &loaded,
                Entry::Describe,
                &[],
                &BUDGETS,
                ArtifactAccess::default(),
                &CallControl::default(),
            );
            assert!(report.result.is_ok(), "{}", bundled.package);
        };
        for _ in 0..50 {
            call();
        }
        let (p50, p99) = percentiles((0..500).map(|_| time(&mut call)).collect());
        total += bundled.bytes.len();
        println!(
            "  {:<38} {:>5} KiB  instantiate + describe p50 {p50:>6.1} µs  p99 {p99:>6.1} µs",
            bundled.package,
            bundled.bytes.len() / 1024
        );
    }
    println!("  total {} KiB in {} components", total / 1024, jacobian::bundled::BUNDLED.len());
}

fn instantiate_and_call(pooling: bool, iterations: usize) -> (f64, f64) {
    let sandbox = Sandbox::new(EngineConfig { pooling, ..EngineConfig::default() }).expect("engine");
    let bytes = echo_bytes();
    let component = sandbox.compile(&bytes).expect("compiles");
    let loaded = sandbox.prepare(Digest::of(&bytes), &component).expect("prepares");
    let request =
        json!({"capability_id": "test.echo.message", "mode": "EXPLORE", "input": {"message": "hi"}}).to_string();
    let mut call = || {
        let report = sandbox.call(
            &loaded,
            Entry::Run,
            request.as_bytes(),
            &BUDGETS,
            ArtifactAccess::default(),
            &CallControl::default(),
        );
        assert!(report.result.is_ok());
    };
    for _ in 0..200 {
        call();
    }
    percentiles((0..iterations).map(|_| time(&mut call)).collect())
}

fn open(dir: &std::path::Path) -> Runtime {
    Runtime::open(RuntimeConfig::new(dir.to_path_buf())).expect("runtime")
}

/// A runtime over `dir` whose policy allows `fuel` and `output_bytes` a call (256 MiB of memory).
fn open_with_budgets(dir: &std::path::Path, fuel: u64, output_bytes: u64) -> Runtime {
    let policy = format!(
        "[budgets]\nfuel = {fuel}\nmemory_bytes = {}\noutput_bytes = {output_bytes}\nwall_ms = {}\n",
        256 << 20,
        3_600_000
    );
    std::fs::write(dir.join("policy.toml"), policy).expect("policy");
    open(dir)
}

/// One whole invocation with the operator's budgets.
fn call(runtime: &Runtime, id: &str, input: serde_json::Value) -> jacobian::contract::CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: id.into(),
        mode: None,
        input,
        budget: None,
        view: None,
        experiment: None,
        tenant: None,
    })
}

fn runtime_with_echo(dir: &std::path::Path) -> Arc<Runtime> {
    open(dir).install(&echo_bytes(), None).expect("install echo");
    Arc::new(open(dir))
}

fn core_invoke(runtime: &Runtime, iterations: usize) -> (f64, f64) {
    let request = InvokeRequest {
        capability_id: "test.echo.message".into(),
        mode: None,
        input: json!({"message": "hi"}),
        budget: None,
        view: None,
        experiment: None,
        tenant: None,
    };
    for _ in 0..200 {
        runtime.invoke(&request);
    }
    percentiles((0..iterations).map(|_| time(|| runtime.invoke(&request))).collect())
}

/// Workspace: writes/second and query latency with 10,000 cards in 200
/// dependency chains of depth 50.
fn workspace_figures() {
    use jacobian::workspace::wire::{OpenRequest, QueryRequest, QueryView, WriteRequest};
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let w = runtime.workspaces();
    let opened = w
        .open(
            runtime.data(),
            &OpenRequest { idempotency_key: "bench".into(), title: "bench".into(), statement: String::new() },
        )
        .expect("open");
    let ws = opened.workspace_id;
    let mut revision = 0u64;
    let mut write = |entries: serde_json::Value, key: String| {
        let request: WriteRequest = serde_json::from_value(json!({
            "workspace_id": ws, "base_revision": format!("rev-{revision}"), "idempotency_key": key, "entries": entries,
        }))
        .expect("request");
        w.write(runtime.data(), &request).expect("write");
        revision += 1;
    };
    // 100 writes of 100 findings: two chains of 50 per write, each link to the previous card.
    let start = Instant::now();
    let mut card = 1u64;
    for batch in 0..100 {
        let entries: Vec<serde_json::Value> = (0..100)
            .map(|i| {
                card += 1;
                let depends_on = if i % 50 == 0 { vec![] } else { vec![format!("card-{}", card - 1)] };
                json!({"type": "finding", "kind": "LEMMA", "title": format!("lemma {card}"), "body": "a short body", "depends_on": depends_on})
            })
            .collect();
        write(json!(entries), format!("batch-{batch}"));
    }
    let batch_seconds = start.elapsed().as_secs_f64();
    // Single-entry writes against the 10,000-card workspace.
    let start = Instant::now();
    for i in 0..200 {
        write(
            json!([{"type": "attempt", "target": format!("card-{}", 2 + i * 50), "method": "m", "outcome": "COMPLETED", "summary": ""}]),
            format!("single-{i}"),
        );
    }
    let single_seconds = start.elapsed().as_secs_f64();
    let query = |view: QueryView, target: Option<String>| {
        let request =
            QueryRequest { workspace_id: ws.clone(), view, revision_id: None, target_card_id: target, limit: Some(50) };
        let samples: Vec<Duration> =
            (0..200).map(|_| time(|| w.query(runtime.data(), &request).expect("query"))).collect();
        percentiles(samples)
    };
    let (context50, context99) = query(QueryView::Context, Some("card-10001".into()));
    let (resume50, resume99) = query(QueryView::Resume, None);
    let (stale50, stale99) = query(QueryView::Stale, None);
    println!("workspace with 10,000 cards in 200 chains of depth 50 (SQLite WAL, synchronous=FULL):");
    println!(
        "  writes of 100 findings: {:.0} writes/s ({:.0} findings/s)",
        100.0 / batch_seconds,
        10_000.0 / batch_seconds
    );
    println!("  single-entry writes at 10,000 cards: {:.0} writes/s", 200.0 / single_seconds);
    println!("  CONTEXT (closure of depth 50): p50 {context50:.0} µs  p99 {context99:.0} µs");
    println!("  RESUME: p50 {resume50:.0} µs  p99 {resume99:.0} µs;  STALE: p50 {stale50:.0} µs  p99 {stale99:.0} µs");
}

/// A minimal DIMACS reader for the native side of the comparison.
fn parse_dimacs(text: &str) -> jacobian_lrat_core::Formula {
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
fn sat_figures() {
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
fn drat_trim_proofs(
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
fn quorum_figures() {
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

/// A runtime whose calls never yield (so cannot be cancelled or report progress).
fn open_plain(dir: &std::path::Path) -> Runtime {
    let engine = EngineConfig { interruptible: false, ..EngineConfig::default() };
    Runtime::open(RuntimeConfig { engine, ..RuntimeConfig::new(dir.to_path_buf()) }).expect("runtime")
}

/// The monomial order a Gröbner case names.
/// The component's default budgets.
const GROEBNER_BUDGET: jacobian_polynomial_core::buchberger::Budget =
    jacobian_polynomial_core::buchberger::Budget { max_pairs: 20_000, max_work: 50_000_000 };

fn order_of(case: &serde_json::Value) -> poly::Order {
    match case["order"].as_str() {
        Some("lex") => poly::Order::Lex,
        Some("grlex") => poly::Order::Grlex,
        _ => poly::Order::Grevlex,
    }
}

/// Twelve seeded random ideals in two or three variables, over the three orders.
fn random_ideals() -> Vec<serde_json::Value> {
    let mut cases = Vec::new();
    let mut seed = 0x0067_726f_6562_6e65_u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for i in 0..12 {
        let vars: Vec<&str> = ["x", "y", "z"][..2 + (i % 2)].to_vec();
        let generators: Vec<String> = (0..2 + next(2))
            .map(|_| {
                (0..2 + next(2))
                    .map(|_| {
                        let c = next(5) as i64 - 2;
                        let m: Vec<String> = vars.iter().map(|v| format!("{v}^{}", next(3))).collect();
                        format!("({})*{}", if c == 0 { 1 } else { c }, m.join("*"))
                    })
                    .collect::<Vec<_>>()
                    .join(" + ")
            })
            .collect();
        let order = ["lex", "grlex", "grevlex"][i % 3];
        cases.push(json!({"generators": generators, "vars": vars, "order": order}));
    }
    cases
}

/// Gröbner bases: the textbook cases and a seeded random set, compute and check.
fn groebner_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let oracle: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/oracles/groebner.json"),
        )
        .expect("groebner.json"),
    )
    .expect("json");
    let mut cases: Vec<serde_json::Value> = oracle["cases"].as_array().expect("cases").clone();
    let textbook = cases.len();
    cases.extend(random_ideals());
    let mut times = [(Duration::ZERO, Duration::ZERO); 2];
    let mut native = [Duration::ZERO; 2];
    for (i, case) in cases.iter().enumerate() {
        let vars: Vec<String> =
            case["vars"].as_array().expect("vars").iter().map(|v| v.as_str().expect("var").to_owned()).collect();
        let order = order_of(case);
        let start = Instant::now();
        let generators: Vec<poly::Poly> = case["generators"]
            .as_array()
            .expect("generators")
            .iter()
            .map(|g| poly::parse(g.as_str().expect("text"), &vars, order, 10).expect("parses"))
            .collect();
        std::hint::black_box(groebner::reduced_basis(&generators, vars.len(), order, GROEBNER_BUDGET).is_ok());
        native[usize::from(i >= textbook)] += start.elapsed();
        let input = json!({"generators": case["generators"], "vars": case["vars"], "order": case["order"]});
        let start = Instant::now();
        let result = call(&runtime, "polynomial.compute.groebner_basis", input);
        let compute = start.elapsed();
        let certificate = result.check_with.and_then(|c| c.certificate_artifact).expect("certificate");
        let start = Instant::now();
        let verified = call(&runtime, "polynomial.groebner_basis.verify", json!({"certificate": certificate}));
        let check = start.elapsed();
        assert_eq!(verified.assurance, jacobian::contract::Assurance::Verified);
        let slot = usize::from(i >= textbook);
        times[slot].0 += compute;
        times[slot].1 += check;
    }
    for (name, count, (compute, check), same) in
        [("textbook", textbook, times[0], native[0]), ("seeded random", cases.len() - textbook, times[1], native[1])]
    {
        println!(
            "Gröbner bases, {name} ({count} ideals): compute with certificate {:.1} ms, independent check {:.1} ms \
(sandboxed, whole calls); the same parser and Buchberger compiled natively {:.1} ms (sandbox/native {:.2})",
            compute.as_secs_f64() * 1e3,
            check.as_secs_f64() * 1e3,
            same.as_secs_f64() * 1e3,
            compute.as_secs_f64() / same.as_secs_f64()
        );
    }
}

/// Maximum induced trees on seeded random graphs: producer time by order,
/// and the exhaustive checker where it applies (order 14).
fn induced_tree_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let invoke = |id: &str, input: serde_json::Value| call(&runtime, id, input);
    let mut next = xorshift(0x6772_6170_6873);
    for order in [14u32, 20, 30, 40] {
        let (mut produce, mut check, mut sizes) = (Duration::ZERO, Duration::ZERO, Vec::new());
        for _ in 0..5 {
            let mut edges: Vec<[u32; 2]> = Vec::new();
            for a in 0..order {
                for b in a + 1..order {
                    if next() % 100 < 25 {
                        edges.push([a, b]);
                    }
                }
            }
            let graph =
                invoke("graph.construct.explicit", json!({"vertices": order, "edges": edges})).artifacts[0].uri.clone();
            let start = Instant::now();
            let result = invoke("graph.induced_tree.maximum", json!({"graph": graph}));
            produce += start.elapsed();
            sizes.push(result.output.as_ref().map(|o| o["size"].clone()).unwrap_or_default());
            if order <= 14 {
                let certificate = result.check_with.and_then(|c| c.certificate_artifact).expect("certificate");
                let start = Instant::now();
                let verified =
                    invoke("graph.induced_tree.maximum.verify", json!({"graph": graph, "certificate": certificate}));
                check += start.elapsed();
                assert_eq!(verified.assurance, jacobian::contract::Assurance::Verified);
            }
        }
        let checker = if order <= 14 {
            format!("{:.1} ms", check.as_secs_f64() * 1e3)
        } else {
            "beyond the checker's bound".into()
        };
        println!(
            "maximum induced tree, 5 random graphs of order {order} (p = 0.25): producer {:.1} ms, checker {checker}; sizes {sizes:?}",
            produce.as_secs_f64() * 1e3
        );
    }
}

/// All graphs on 8 and 9 vertices: the sandboxed producer and checker beside
/// `nauty-geng` writing the same classes as graph6.
fn enumeration_figures() {
    if std::process::Command::new("nauty-geng").arg("-help").output().is_err() {
        println!("enumeration: nauty-geng is not installed (scripts/test.sh installs it); skipping the comparison");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let invoke = |id: &str, input: serde_json::Value| call(&runtime, id, input);
    // The graph component on its own, to split the invocation's time into the
    // component call (instantiate, compute, the answer's JSON, copy out) and
    // the host's handling of the answer.
    let graph = jacobian::bundled::BUNDLED.iter().find(|c| c.package == "jacobian-graph").expect("graph bundled");
    let sandbox = runtime.sandbox();
    let compiled = sandbox.compile(graph.bytes).expect("graph compiles");
    let loaded = sandbox.prepare(graph.sha256.parse().expect("digest"), &compiled).expect("graph prepares");
    let roomy = CallBudgets { fuel: u64::MAX / 2, memory_bytes: 1 << 30, output_bytes: 1 << 30 };
    for order in [8u32, 9] {
        let request = json!({"capability_id": "graph.enumerate.nonisomorphic", "mode": "EXPLORE",
            "input": {"order": order, "family": "all"}})
        .to_string();
        let start = Instant::now();
        let alone = sandbox.call(
            &loaded,
            Entry::Run,
            request.as_bytes(),
            &roomy,
            ArtifactAccess::default(),
            &CallControl::default(),
        );
        let component = start.elapsed();
        let answer_bytes = alone.result.as_ref().map(Vec::len).expect("the component answers");
        let start = Instant::now();
        let result = invoke("graph.enumerate.nonisomorphic", json!({"order": order, "family": "all"}));
        let produce = start.elapsed();
        let count = result.output.as_ref().map(|o| o["count"].clone()).unwrap_or_default();
        let enumeration = result.check_with.and_then(|c| c.certificate_artifact).expect("enumeration artifact");
        let start = Instant::now();
        let verified = invoke("graph.enumerate.nonisomorphic.verify", json!({"enumeration": enumeration}));
        let check = start.elapsed();
        assert_eq!(verified.assurance, jacobian::contract::Assurance::Verified);
        let plain = open_plain(dir.path());
        let start = Instant::now();
        let unchecked = call(&plain, "graph.enumerate.nonisomorphic", json!({"order": order, "family": "all"}));
        let produce_plain = start.elapsed();
        assert_eq!(unchecked.output.as_ref().map(|o| o["count"].clone()), Some(count.clone()));
        let start = Instant::now();
        let (codes, _) = enumerate::enumerate(enumerate::Family::All, order as usize);
        let listing: Vec<String> =
            codes.iter().map(|&code| enumerate::graph6(&enumerate::decode(order as usize, code))).collect();
        let same = start.elapsed();
        assert_eq!(json!(listing.len()), count);
        // Natively, with the listing serialized as JSON as the component's answer is.
        let start = Instant::now();
        let (codes, _) = enumerate::enumerate(enumerate::Family::All, order as usize);
        let listing: Vec<String> =
            codes.iter().map(|&code| enumerate::graph6(&enumerate::decode(order as usize, code))).collect();
        let as_json = serde_json::to_vec(&listing).expect("json");
        let same_json = start.elapsed();
        assert!(as_json.len() <= answer_bytes);
        let start = Instant::now();
        let geng = std::process::Command::new("nauty-geng").args(["-q", &order.to_string()]).output().expect("geng");
        let native = start.elapsed();
        let listed = geng.stdout.iter().filter(|&&b| b == b'\n').count();
        println!(
            "all graphs on {order} vertices ({count} classes; geng lists {listed}): sandboxed producer {:.0} ms \
(fuel {}; {:.0} ms without yields), the same code compiled natively {:.0} ms (sandbox/native {:.2}), \
nauty-geng {:.0} ms, ratio {:.1}; sandboxed checker {:.0} ms (fuel {})",
            produce.as_secs_f64() * 1e3,
            result.fuel_consumed,
            produce_plain.as_secs_f64() * 1e3,
            same.as_secs_f64() * 1e3,
            produce.as_secs_f64() / same.as_secs_f64(),
            native.as_secs_f64() * 1e3,
            produce.as_secs_f64() / native.as_secs_f64(),
            check.as_secs_f64() * 1e3,
            verified.fuel_consumed,
        );
        println!(
            "  of which the component call alone (instantiate, compute, {answer_bytes}-byte JSON answer, copy out) \
{:.0} ms, natively with the listing as JSON {:.0} ms (sandbox/native {:.2}); the host's handling of the answer \
(parse, schema check, canonical JSON, hashing, artifact and episode) {:.0} ms",
            component.as_secs_f64() * 1e3,
            same_json.as_secs_f64() * 1e3,
            component.as_secs_f64() / same_json.as_secs_f64(),
            produce.saturating_sub(component).as_secs_f64() * 1e3,
        );
    }
}

/// Pipelined `capability.invoke` over stdio: one client keeps `window`
/// requests in flight (a window below the server's queue, so no call is
/// refused with OVERLOADED) until `n` have been answered; invokes per second.
fn mcp_pipelined(dir: &std::path::Path, n: usize, window: usize) -> f64 {
    use std::io::{BufRead as _, Write as _};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jacobian"))
        .arg("--data-dir")
        .arg(dir)
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn jacobian serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
    writeln!(stdin, "{initialize}").expect("write");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("initialize answer");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).expect("write");
    let request = |id: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "capability.invoke",
            "arguments": {"capability_id": "test.echo.message", "input": {"message": "hi"}}}})
        .to_string()
    };
    let start = Instant::now();
    let (mut sent, mut answered) = (0, 0);
    while answered < n {
        while sent < n && sent - answered < window {
            sent += 1;
            writeln!(stdin, "{}", request(sent)).expect("write");
        }
        stdin.flush().expect("flush");
        line.clear();
        if stdout.read_line(&mut line).expect("read") == 0 {
            break;
        }
        if line.contains("\"result\"") {
            assert!(line.contains("\"isError\":false"), "a pipelined call failed: {}", &line[..line.len().min(300)]);
            answered += 1;
        }
    }
    let elapsed = start.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(answered, n, "every pipelined call answered");
    n as f64 / elapsed.as_secs_f64()
}

/// `jacobian serve --http 127.0.0.1:0` on `dir`, once it has printed its ready line.
fn start_http_server(dir: &std::path::Path) -> (std::process::Child, String) {
    start_host(dir, &[])
}

/// `jacobian --data-dir DIR ARGS… serve --http 127.0.0.1:0`, once it is ready.
fn start_host(dir: &std::path::Path, args: &[&str]) -> (std::process::Child, String) {
    floor::until_ready(
        std::process::Command::new(env!("CARGO_BIN_EXE_jacobian"))
            .arg("--data-dir")
            .arg(dir)
            .args(args)
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(std::env::var("BENCH_SERVE_ARGS").unwrap_or_default().split_whitespace()),
    )
}

/// Several hosts on one store: 16 clients spread over the hosts, each with
/// its own keep-alive session; invokes of the echo capability, then
/// sequential workspace writes (one workspace per client). Returns
/// (invokes/s, writes/s).
fn hosts_throughput(store: Option<&str>, hosts: usize, tag: &str) -> (f64, f64) {
    const CLIENTS: usize = 16;
    let dirs: Vec<tempfile::TempDir> = (0..hosts).map(|_| tempfile::tempdir().expect("temp dir")).collect();
    let args: Vec<&str> = store.map_or(vec![], |url| vec!["--store", url]);
    // The echo component, installed once in the shared state.
    let config = |dir: &std::path::Path| RuntimeConfig {
        store: store.map_or(StoreConfig::DataDir, |url| StoreConfig::Postgres(url.to_owned())),
        ..RuntimeConfig::new(dir.to_path_buf())
    };
    Runtime::open(config(dirs[0].path())).expect("runtime").install(&echo_bytes(), None).expect("install echo");
    let mut children = Vec::new();
    let addrs: Vec<String> = std::thread::scope(|scope| {
        let starting: Vec<_> = dirs.iter().map(|dir| scope.spawn(|| start_host(dir.path(), &args))).collect();
        starting
            .into_iter()
            .map(|s| {
                let (child, ready) = s.join().expect("host");
                children.push(child);
                ready.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned()
            })
            .collect()
    });
    let echo = json!({"capability_id": "test.echo.message", "input": {"message": "hi"}});
    let rate = |work: &(dyn Fn(&mut HttpClient, usize) -> usize + Sync)| {
        let start = Instant::now();
        let done: usize = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..CLIENTS)
                .map(|c| {
                    let addr = &addrs[c % hosts];
                    scope.spawn(move || work(&mut HttpClient::connect(addr), c))
                })
                .collect();
            workers.into_iter().map(|w| w.join().expect("client")).sum()
        });
        done as f64 / start.elapsed().as_secs_f64()
    };
    let invokes = rate(&|client, _| {
        for _ in 0..250 {
            let (answer, is_error) = client.call("capability.invoke", echo.clone());
            assert!(!is_error, "{answer}");
        }
        250
    });
    let writes = rate(&|client, c| {
        let (opened, _) = client.call(
            "workspace.open",
            json!({"idempotency_key": format!("{tag}-{c}"), "title": "bench", "statement": ""}),
        );
        let ws = opened["workspace_id"].as_str().expect("workspace").to_owned();
        for i in 0..100 {
            let (answer, is_error) = client.call(
                "workspace.write",
                json!({"workspace_id": ws, "base_revision": format!("rev-{i}"), "idempotency_key": format!("w{i}"),
                       "entries": [{"type": "finding", "kind": "CLAIM", "title": format!("finding {i}")}]}),
            );
            assert!(!is_error, "{answer}");
        }
        100
    });
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    (invokes, writes)
}

/// One SQLite host beside one, two and four hosts on one PostgreSQL
/// ($JACOBIAN_BENCH_POSTGRES or $JACOBIAN_TEST_POSTGRES: a URL whose role may
/// create databases; scripts/postgres.sh starts a server and prints one).
fn scaleout_figures() {
    let Some(admin) =
        std::env::var("JACOBIAN_BENCH_POSTGRES").or_else(|_| std::env::var("JACOBIAN_TEST_POSTGRES")).ok()
    else {
        println!(
            "scale-out: NOT RUN (set JACOBIAN_BENCH_POSTGRES; scripts/postgres.sh starts a server and prints a URL)"
        );
        return;
    };
    let (invokes, writes) = hosts_throughput(None, 1, "sqlite");
    println!("scale-out, 16 HTTP clients: SQLite, 1 host: {invokes:.0} invokes/s, {writes:.0} workspace writes/s");
    let server = jacobian::store::postgres::Postgres::connect(&admin).expect("the benchmark PostgreSQL server");
    for hosts in [1, 2, 4] {
        let name = format!("jb_{}_{hosts}", std::process::id());
        server.batch_execute(&format!("DROP DATABASE IF EXISTS {name}")).expect("drop database");
        server.batch_execute(&format!("CREATE DATABASE {name}")).expect("create database");
        let url = jacobian::store::postgres::with_database(&admin, &name);
        let (pg_invokes, pg_writes) = hosts_throughput(Some(&url), hosts, &name);
        println!(
            "scale-out, 16 HTTP clients: PostgreSQL, {hosts} host(s): {pg_invokes:.0} invokes/s ({:.2}x SQLite), \
             {pg_writes:.0} workspace writes/s ({:.2}x SQLite)",
            pg_invokes / invokes,
            pg_writes / writes
        );
        server.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).expect("drop database");
    }
}

/// `serve --http`: trivial invokes from concurrent clients (one keep-alive
/// connection and session each), and resident memory per idle session.
/// `clients` concurrent keep-alive clients (sessions), each sending
/// `4000 / clients` echo invokes with `bearer`: (invokes/s, p50 µs, p99 µs).
fn http_throughput(addr: &str, clients: usize, bearer: Option<&str>) -> (f64, f64, f64) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capability.invoke",
        "arguments": {"capability_id": "test.echo.message", "input": {"message": "hi"}}}})
    .to_string();
    let per_client = 4000 / clients;
    let start = Instant::now();
    let samples: Vec<Duration> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..clients)
            .map(|_| {
                scope.spawn(|| {
                    let mut client = HttpClient::connect_with(addr, bearer);
                    (0..per_client)
                        .map(|_| {
                            let started = Instant::now();
                            let answer = client.post(&body);
                            assert!(answer.contains("\"isError\":false"), "{answer}");
                            started.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("client")).collect()
    });
    let rate = samples.len() as f64 / start.elapsed().as_secs_f64();
    let (p50, p99) = percentiles(samples);
    (rate, p50, p99)
}

/// An RS256 key made by `openssl` (PKCS#1 DER), as an authorization server
/// signs access tokens, and its public JWK.
fn rsa_signing_key(dir: &std::path::Path) -> (jsonwebtoken::EncodingKey, jsonwebtoken::jwk::Jwk) {
    let pem = dir.join("rsa.pem");
    let der = dir.join("rsa.der");
    let run = |args: &[&str]| {
        let status = std::process::Command::new("openssl").args(args).status().expect("openssl");
        assert!(status.success(), "openssl {args:?}");
    };
    run(&["genpkey", "-quiet", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", pem.to_str().unwrap()]);
    run(&["rsa", "-in", pem.to_str().unwrap(), "-traditional", "-outform", "DER", "-out", der.to_str().unwrap()]);
    let key = jsonwebtoken::EncodingKey::from_rsa_der(&std::fs::read(der).expect("key"));
    let mut jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, jsonwebtoken::Algorithm::RS256).expect("jwk");
    jwk.common.key_id = Some("bench".into());
    (key, jwk)
}

/// The HTTP section's authenticated runs: 16 clients without a token, with
/// an API token and with an RS256 JWT, each against its own server on the
/// same data directory, in one run, twice in turn.
fn http_auth_figures(dir: &std::path::Path) {
    let keys = tempfile::tempdir().expect("temp dir");
    let created = std::process::Command::new(env!("CARGO_BIN_EXE_jacobian"))
        .arg("--data-dir")
        .arg(dir)
        .args(["tokens", "create", "--tenant", "bench", "--scope", "invoke"])
        .output()
        .expect("tokens create");
    let created: serde_json::Value = serde_json::from_slice(&created.stdout).expect("a token");
    let api_token = created["token"].as_str().expect("token").to_owned();
    let (key, jwk) = rsa_signing_key(keys.path());
    let jwks = keys.path().join("jwks.json");
    std::fs::write(&jwks, json!({"keys": [jwk]}).to_string()).expect("jwks");
    let config = keys.path().join("jacobian.toml");
    let (issuer, resource) = ("https://idp.bench", "http://127.0.0.1/mcp");
    std::fs::write(
        &config,
        format!(
            "[auth]\nresource = \"{resource}\"\napi_tokens = true\nissuer = \"{issuer}\"\njwks_file = \"{}\"\n",
            jwks.display()
        ),
    )
    .expect("config");
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({"iss": issuer, "aud": resource, "sub": "bench", "scope": "jacobian:invoke", "exp": now + 3600});
    let header =
        jsonwebtoken::Header { kid: Some("bench".into()), ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256) };
    let jwt = jsonwebtoken::encode(&header, &claims, &key).expect("sign");
    let config_args = ["--config", config.to_str().unwrap()];
    for round in 1..=2 {
        let mut figures = Vec::new();
        for (name, args, bearer) in [
            ("no authentication", &[][..], None),
            ("API token", &config_args[..], Some(api_token.as_str())),
            ("JWT (RS256)", &config_args[..], Some(jwt.as_str())),
        ] {
            let (mut child, ready) = start_host(dir, args);
            let addr = ready.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned();
            figures.push((name, http_throughput(&addr, 16, bearer)));
            let _ = child.kill();
            let _ = child.wait();
        }
        let base = figures[0].1.0;
        let line: Vec<String> = figures
            .iter()
            .map(|(name, (rate, p50, p99))| {
                format!(
                    "{name} {rate:.0} invokes/s (p50 {p50:.0} µs, p99 {p99:.0} µs, {:.1}% of unauthenticated)",
                    rate / base * 100.0
                )
            })
            .collect();
        println!("HTTP, 16 clients, authentication round {round}: {}", line.join("; "));
    }
}

fn http_figures(dir: &std::path::Path) {
    let (mut child, ready) = start_http_server(dir);
    let addr = ready.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned();
    for clients in [1, 4, 16, 64] {
        let (rate, p50, p99) = http_throughput(&addr, clients, None);
        println!(
            "HTTP, {clients} concurrent clients: {rate:.0} invokes/s ({} calls), p50 {p50:.0} µs, p99 {p99:.0} µs",
            4000 / clients * clients
        );
    }
    let before = resident_kib(child.id());
    let idle: Vec<HttpClient> = (0..500).map(|_| HttpClient::connect(&addr)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let after = resident_kib(child.id());
    println!(
        "HTTP idle sessions: {} open, server resident {} MiB -> {} MiB, {:.1} KiB per idle connection and session",
        idle.len(),
        before / 1024,
        after / 1024,
        (after.saturating_sub(before)) as f64 / idle.len() as f64
    );
    drop(idle);
    let _ = child.kill();
    let _ = child.wait();
}

/// One honest client's sequential invokes (the echo capability over HTTP),
/// alone and then while eight clients attack the same server, side by side
/// in one run: a checker of another role asked to verify a SAT certificate,
/// artifact fan-out past the reference limit, capability ids of 1 MiB, host
/// time that spends no fuel (stopped by the wall-clock ceiling), bulk memory
/// work, workspace growth, and slow-loris connections. Returns nothing; prints
/// the honest p50 / p99 alone and under attack, every honest call checked.
/// `tenants`: every client authenticates with an API token of its own
/// tenant, and the attackers' tenants are under quotas (60 invocations a
/// minute, one call at a time, 64 MiB stored) while the honest tenant has none.
fn attack_figures(tenants: bool) {
    let honest_calls: usize = std::env::var("BENCH_HONEST_CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(1500);
    let dir = tempfile::tempdir().expect("temp dir");
    let token = |tenant: &str| -> Option<String> {
        if !tenants {
            return None;
        }
        let created = std::process::Command::new(env!("CARGO_BIN_EXE_jacobian"))
            .arg("--data-dir")
            .arg(dir.path())
            .args(["tokens", "create", "--tenant", tenant, "--scope", "invoke", "--scope", "workspace"])
            .output()
            .expect("tokens create");
        let created: serde_json::Value = serde_json::from_slice(&created.stdout).expect("a token");
        Some(created["token"].as_str().expect("token").to_owned())
    };
    {
        let runtime = open(dir.path());
        let guest = |name: &str| {
            std::fs::read(PathBuf::from(jacobian::bundled::TEST_GUESTS_DIR).join(format!("jacobian_test_{name}.wasm")))
                .expect("test guest")
        };
        runtime.install(&echo_bytes(), None).expect("install echo");
        runtime.install(&guest("hostile"), None).expect("install hostile");
        let (checkers, _) = runtime.install(&guest("yes_checker"), None).expect("install yes-checker");
        runtime
            .update_policy(|p| {
                p.budgets.wall_ms = 1000;
                p.authorize("acme.lint", checkers.digest);
                if tenants {
                    use jacobian::quotas::Quota;
                    p.quotas.default = Quota {
                        invocations_per_minute: Some(60),
                        concurrent_calls: Some(1),
                        stored_bytes: Some(64 << 20),
                        ..Quota::default()
                    };
                    p.quotas.tenants.insert("honest".into(), Quota::default());
                }
            })
            .expect("policy");
    }
    let honest_token = token("honest");
    let attacker_tokens: Vec<Option<String>> = (0..8).map(|a| token(&format!("attacker-{a}"))).collect();
    let config = dir.path().join("jacobian.toml");
    std::fs::write(&config, "[auth]\nresource = \"http://127.0.0.1/mcp\"\napi_tokens = true\n").expect("config");
    let auth = ["--config", config.to_str().expect("a UTF-8 path")];
    let (mut child, ready) = start_host(dir.path(), if tenants { &auth[..] } else { &[] });
    let addr = ready.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned();
    let honest = |addr: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capability.invoke",
            "arguments": {"capability_id": "test.echo.message", "input": {"message": "hi"}}}})
        .to_string();
        let mut client = HttpClient::connect_with(addr, honest_token.as_deref());
        (0..honest_calls)
            .map(|_| {
                let started = Instant::now();
                let answer = client.post(&body);
                assert!(answer.contains("\"isError\":false"), "an honest call failed: {answer}");
                started.elapsed()
            })
            .collect::<Vec<_>>()
    };
    let (alone50, alone99) = percentiles(honest(&addr));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let attacks = std::sync::atomic::AtomicUsize::new(0);
    let under_attack = std::thread::scope(|scope| {
        let only: Option<Vec<usize>> =
            std::env::var("BENCH_ATTACKERS").ok().map(|v| v.split(',').filter_map(|a| a.parse().ok()).collect());
        for attacker in (0..8).filter(|a| only.as_ref().is_none_or(|o| o.contains(a))) {
            let (addr, stop, attacks, attacker_tokens) = (&addr, &stop, &attacks, &attacker_tokens);
            scope.spawn(move || {
                let running = || !stop.load(std::sync::atomic::Ordering::Relaxed);
                let count = || attacks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if attacker == 7 {
                    jacobian::lanes::idle_class().expect("SCHED_IDLE");
                    // Slow loris: connections that never finish their headers.
                    while running() {
                        let mut streams: Vec<std::net::TcpStream> = (0..16)
                            .filter_map(|_| std::net::TcpStream::connect(addr).ok())
                            .collect();
                        for stream in &mut streams {
                            use std::io::Write as _;
                            let _ = stream.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Slow: ");
                        }
                        count();
                        std::thread::sleep(Duration::from_millis(500));
                    }
                    return;
                }
                let mut client = HttpClient::connect_with(addr, attacker_tokens[attacker].as_deref());
                let cnf = client.call("capability.invoke", json!({"capability_id": "sat.cnf.construct",
                    "input": {"dimacs": "p cnf 2 1\n1 2 0\n"}})).0["artifacts"][0]["uri"].as_str().unwrap_or("").to_owned();
                let (bogus, _) = client.call("capability.invoke", json!({"capability_id": "sat.certificate.construct",
                    "input": {"cnf": cnf, "lrat": "2 0 1 0\n"}}));
                let certificate = bogus["artifacts"][0]["uri"].as_str().unwrap_or("").to_owned();
                let workspace = client
                    .call("workspace.open", json!({"idempotency_key": format!("attack-{attacker}"), "title": "grow", "statement": ""}))
                    .0["workspace_id"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                // The attackers share the machine's two cores with the server:
                // their own work (building and reading megabytes of JSON) runs
                // at the lowest priority, and each request body is built once.
                jacobian::lanes::idle_class().expect("SCHED_IDLE");
                let invoke = |arguments: serde_json::Value| {
                    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "capability.invoke", "arguments": arguments}})
                    .to_string()
                };
                let body = match attacker {
                    0 => invoke(json!({"capability_id": "aaa.lint.verify", "input": {"cnf": cnf, "certificate": certificate}})),
                    1 => invoke(json!({"capability_id": "certificate.verify", "input": {"certificate": certificate}})),
                    2 => invoke(json!({"capability_id": "sat.solve", "input": {"cnf": cnf, "copies": vec![cnf.clone(); 12_000]}})),
                    3 => invoke(json!({"capability_id": "x".repeat(1 << 20), "input": {}})),
                    4 => invoke(json!({"capability_id": "test.hostile.attack", "input": {"attack": "host_time", "argument": "forever"}})),
                    5 => invoke(json!({"capability_id": "test.hostile.attack", "input": {"attack": "bulk_fill", "argument": "forever"}})),
                    _ => String::new(),
                };
                let mut round = 0u64;
                while running() {
                    if attacker == 6 {
                        let entry = json!({"type": "finding", "kind": "CLAIM", "title": format!("growth {round}"), "body": "x".repeat(8192)});
                        let (answer, _) = client.call("workspace.write", json!({"workspace_id": workspace,
                            "base_revision": format!("rev-{round}"), "idempotency_key": format!("g{round}"), "entries": [entry]}));
                        if answer["revision_id"].is_string() {
                            round += 1;
                        }
                    } else {
                        let answer = client.post(&body);
                        assert!(!answer.contains("\"assurance\":\"VERIFIED\""), "an attack was verified: {answer}");
                    }
                    count();
                }
            });
        }
        std::thread::sleep(Duration::from_millis(500));
        let samples = honest(&addr);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        samples
    });
    let (attacked50, attacked99) = percentiles(under_attack);
    let resident = resident_kib(child.id());
    let who = if tenants { "tenants with API tokens, attackers under quotas" } else { "no authentication" };
    println!(
        "{who}: honest client, {honest_calls} sequential invokes over HTTP: alone p50 {alone50:.0} µs p99 {alone99:.0} µs; \
         under 8 attackers ({} attacks answered) p50 {attacked50:.0} µs p99 {attacked99:.0} µs ({:.2}x at p99), \
         no honest call failed; server resident {} MiB",
        attacks.load(std::sync::atomic::Ordering::Relaxed),
        attacked99 / alone99,
        resident / 1024
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// `jacobian serve --http 127.0.0.1:0` from exec to its ready line, on a fresh data directory
/// (compiling every bundled component) and then from the precompiled cache.
fn startup_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let start_server = || {
        let started = Instant::now();
        let (mut child, line) = start_http_server(dir.path());
        let ready = started.elapsed();
        assert!(line.starts_with("listening on"), "{line}");
        let _ = child.kill();
        let _ = child.wait();
        ready
    };
    let first = start_server();
    let warm: Vec<Duration> = (0..10).map(|_| start_server()).collect();
    let (p50, p99) = percentiles(warm);
    println!(
        "server start to ready (serve --http, {} bundled components): first start (compiling) {:.0} ms; \
from the precompiled cache p50 {:.1} ms, max {:.1} ms (10 starts)",
        jacobian::bundled::BUNDLED.len(),
        first.as_secs_f64() * 1e3,
        p50 / 1e3,
        p99 / 1e3
    );
}

/// Each bundled capability's guest fuel per second on this machine, on an
/// input that runs for a tenth of a second or more (a shorter call measures
/// the call, not the guest's rate), against the rate CONTRACT reckons its
/// presets' typical seconds with (`budgets::fuel_per_second`); and each
/// preset's seconds at the rates measured here.
fn preset_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let invoke = |id: &str, input: serde_json::Value| call(&runtime, id, input);
    let artifact = |result: &jacobian::contract::CapabilityResult, role: &str| {
        result.artifacts.iter().find(|a| a.role == role).map(|a| a.uri.clone()).expect("artifact")
    };
    let (vars, generators) = classic_ideals::classic("katsura", 5);
    let katsura5 = json!({"generators": generators, "vars": vars, "order": "grevlex"});
    let basis = invoke("polynomial.compute.groebner_basis", katsura5.clone());
    let enumeration = invoke("graph.enumerate.nonisomorphic", json!({"order": 9, "family": "connected"}));
    // Seeded random graphs (edge probability 1/k) for the induced-tree search and its checker.
    let mut next = xorshift(0x7072_6573_6574);
    let mut random_graph = |order: u32, k: u64| {
        let edges: Vec<[u32; 2]> =
            (0..order).flat_map(|a| (a + 1..order).map(move |b| [a, b])).filter(|_| next().is_multiple_of(k)).collect();
        artifact(&invoke("graph.construct.explicit", json!({"vertices": order, "edges": edges})), "graph")
    };
    let (large, small) = (random_graph(50, 8), random_graph(14, 4));
    let small_tree = invoke("graph.induced_tree.maximum", json!({"graph": small}));
    // The first unsatisfiable one of seeded random 3-SAT formulas at the threshold.
    let (cnf, proof) = (0..20u64)
        .find_map(|k| {
            let text = random_3sat(200, 852, 0x5341_5400 + k);
            let cnf = artifact(&invoke("sat.cnf.construct", json!({"dimacs": text})), "cnf");
            let solved = invoke("sat.solve", json!({"cnf": cnf}));
            (solved.output.as_ref()?["status"] == "UNSAT").then(|| (cnf, artifact(&solved, "certificate")))
        })
        .expect("an unsatisfiable formula among twenty");
    let work = [
        ("graph.enumerate.nonisomorphic", json!({"order": 9, "family": "connected"})),
        ("graph.enumerate.nonisomorphic.verify", json!({"enumeration": artifact(&enumeration, "enumeration")})),
        // A law the search does not settle: it runs until its work budget stops it at order 5.
        (
            "universal_algebra.search.countermodel",
            json!({"hypotheses": ["x = (((y*z)*((z*y)*(y*x)))*(x*z))"], "target": "x = y", "max_order": 7, "max_work": 30_000_000}),
        ),
        ("polynomial.compute.groebner_basis", katsura5),
        ("polynomial.groebner_basis.verify", json!({"certificate": artifact(&basis, "certificate")})),
        ("graph.induced_tree.maximum", json!({"graph": large})),
        (
            "graph.induced_tree.maximum.verify",
            json!({"graph": small, "certificate": artifact(&small_tree, "certificate")}),
        ),
        ("sat.solve", json!({"cnf": cnf})),
        ("sat.certificate.verify", json!({"cnf": cnf, "certificate": proof})),
    ];
    let mut rates = Vec::new();
    for (id, input) in work {
        // The better of two runs: the rate of the work, not of a disturbance.
        let (seconds, fuel) = (0..2)
            .map(|_| {
                let start = Instant::now();
                let result = invoke(id, input.clone());
                assert!(result.diagnostic.is_none(), "{id}: {:?}", result.diagnostic);
                (start.elapsed().as_secs_f64(), result.fuel_consumed)
            })
            .fold((f64::INFINITY, 0), |best, run| if run.0 < best.0 { run } else { best });
        let rate = fuel as f64 / seconds;
        let assumed = jacobian::budgets::fuel_per_second(id) as f64;
        println!(
            "presets: {id}: {fuel} fuel in {seconds:.3} s, {rate:.2e} fuel/s, {:.2}x the rate CONTRACT assumes{}",
            rate / assumed,
            if fuel < 500_000_000 { " (too short to measure the rate: left out)" } else { "" }
        );
        if fuel >= 500_000_000 {
            rates.push((id, rate));
        }
    }
    let mut sorted: Vec<f64> = rates.iter().map(|(_, r)| *r).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    println!(
        "presets: median rate {median:.2e} fuel/s (budgets::FUEL_PER_SECOND is {:.2e}); as a table:",
        jacobian::budgets::FUEL_PER_SECOND as f64
    );
    for (id, rate) in &rates {
        println!("presets:     (\"{id}\", {}_000_000),", (rate / 1e6).round() as u64);
    }
    let fuel = jacobian::policy::Budgets::default().fuel;
    let (slowest, fastest) = (sorted[0], sorted[sorted.len() - 1]);
    for preset in [BudgetPreset::Quick, BudgetPreset::Standard, BudgetPreset::Deep] {
        let f = preset.fuel(fuel);
        println!(
            "presets: {preset:?}: {f} fuel = {:.3}–{:.3} s across the capabilities measured here",
            f as f64 / fastest,
            f as f64 / slowest
        );
    }
}

/// A seeded xorshift generator (not for anything but reproducible inputs).
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// A seeded random 3-SAT formula in DIMACS.
fn random_3sat(variables: u32, clauses: usize, seed: u64) -> String {
    let mut next = xorshift(seed);
    let mut text = format!("p cnf {variables} {clauses}\n");
    for _ in 0..clauses {
        let mut clause: Vec<i64> = Vec::new();
        while clause.len() < 3 {
            let v = (next() % u64::from(variables)) as i64 + 1;
            if !clause.iter().any(|l| l.abs() == v) {
                clause.push(if next().is_multiple_of(2) { v } else { -v });
            }
        }
        text.push_str(&format!("{} {} {} 0\n", clause[0], clause[1], clause[2]));
    }
    text
}

/// `capability.invoke` of the echo capability, as every transport figure sends it.
fn echo_arguments() -> serde_json::Value {
    json!({"capability_id": "test.echo.message", "input": {"message": "hi"}})
}

/// `jacobian --data-dir DIR serve` (stdio).
fn jacobian_stdio(dir: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_jacobian"));
    command.arg("--data-dir").arg(dir).arg("serve");
    command
}

/// A trivial invoke against the MCP transport's own floor, side by side in
/// one run: the no-op rmcp server (`support/floor.rs`) and `jacobian serve`
/// in alternating rounds under the same outside-style clients (rmcp's client
/// over stdio; the keep-alive HTTP client over streamable HTTP), each round
/// a fresh server: ready time (exec to `initialize` and `tools/list`
/// answered), sequential p50 and p99, and throughput with 16 calls in flight.
/// Prints each round and the ratios (targets: p50 ≤ 1.3×, p99 ≤ 1.5×,
/// throughput ≥ 0.7× the floor's; ready ≤ 50 ms), and what the invariants
/// alone cost a call (a fresh Store's instantiate + call, one commit at the
/// host's durability) against what the p50 target leaves for an invocation.
fn floor_figures() {
    const ROUNDS: usize = 3;
    let dir = tempfile::tempdir().expect("temp dir");
    drop(runtime_with_echo(dir.path()));
    let servers = [floor::floor_stdio(), floor::Stdio { name: "jacobian", command: jacobian_stdio(dir.path()) }];
    let mut ratios: Vec<[f64; 3]> = Vec::new();
    let mut ready: Vec<f64> = Vec::new();
    let mut floors: Vec<f64> = Vec::new();
    for round in 1..=ROUNDS {
        let [floor, ours] = [0, 1].map(|i| floor::stdio_round(&servers[i], &echo_arguments(), 3000, 4000));
        for (name, r) in [("floor", &floor), ("jacobian", &ours)] {
            println!(
                "floor: stdio round {round}: {name:8} ready {:.1} ms, sequential p50 {:.0} µs p99 {:.0} µs (server CPU {:.0} µs a call), 16 in flight {:.0}/s",
                r.ready.as_secs_f64() * 1e3,
                r.p50,
                r.p99,
                r.cpu_per_call,
                r.in_flight
            );
        }
        ratios.push([ours.p50 / floor.p50, ours.p99 / floor.p99, ours.in_flight / floor.in_flight]);
        floors.push(floor.p50);
        ready.push(ours.ready.as_secs_f64() * 1e3);
    }
    let range = |k: usize, rows: &[[f64; 3]]| {
        let (lo, hi) = rows.iter().map(|r| r[k]).fold((f64::INFINITY, 0.0_f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
        format!("{lo:.2}–{hi:.2}×")
    };
    println!(
        "floor: stdio, jacobian / floor over {ROUNDS} rounds: p50 {} (target ≤ 1.3×), p99 {} (≤ 1.5×), 16 in flight {} (≥ 0.7×)",
        range(0, &ratios),
        range(1, &ratios),
        range(2, &ratios)
    );
    let (lo, hi) = ready.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    println!(
        "floor: stdio, jacobian ready (exec to initialize + tools/list answered) {lo:.1}–{hi:.1} ms (target ≤ 50 ms)"
    );
    // What the invariants alone cost a call, measured beside the floor: a
    // fresh Store's instantiate + call, and one commit at the host's
    // durability (the cheapest SQLite allows). The p50 target leaves 0.3 ×
    // the floor's p50 above it.
    let (store50, _) = instantiate_and_call(true, 3000);
    let (commit50, _) = floor::bare_commit(3000);
    let floor50 = floors.iter().copied().fold(0.0_f64, f64::max);
    println!(
        "floor: the invariants' own cost a call: a fresh Store's instantiate + call p50 {store50:.1} µs and the cheapest \
         SQLite commit of one row at the host's durability (WAL, synchronous=NORMAL) p50 {commit50:.1} µs, together {:.1} µs of the {:.1} µs \
         the p50 target leaves for all of an invocation's work (0.3 × the floor's slowest p50, {floor50:.0} µs)",
        store50 + commit50,
        0.3 * floor50
    );
    let mut http: Vec<[f64; 3]> = Vec::new();
    for round in 1..=ROUNDS {
        let mut measured = Vec::new();
        for name in ["floor", "jacobian"] {
            let (mut child, line) = if name == "floor" { floor::floor_http() } else { start_http_server(dir.path()) };
            let addr = line.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned();
            let (_, p50, p99) = http_throughput(&addr, 1, None);
            let (rate, _, _) = http_throughput(&addr, 16, None);
            println!(
                "floor: HTTP round {round}: {name:8} sequential p50 {p50:.0} µs p99 {p99:.0} µs, 16 clients {rate:.0}/s"
            );
            measured.push((p50, p99, rate));
            let _ = child.kill();
            let _ = child.wait();
        }
        let (f, o) = (measured[0], measured[1]);
        http.push([o.0 / f.0, o.1 / f.1, o.2 / f.2]);
    }
    println!(
        "floor: HTTP, jacobian / floor over {ROUNDS} rounds: p50 {} (target ≤ 1.3×), p99 {} (≤ 1.5×), 16 clients {} (≥ 0.7×)",
        range(0, &http),
        range(1, &http),
        range(2, &http)
    );
}

/// `cargo bench --bench runtime [-- SECTION…]`: every section, or those named (enumeration,
/// induced_tree, startup, compile, instantiate, invoke, http, guests, workspace, sat, groebner, ideals,
/// finder, finder_large, finder_textbook, split, presets, floor, sat_cadical). `core_profile`, named alone, runs 30,000 core invokes for a profiler.
fn main() {
    floor::serve_if_asked();
    let wanted: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let run = |section: &str| wanted.is_empty() || wanted.iter().any(|w| section.contains(w.as_str()));
    println!("Jacobian runtime benchmarks ({} cores)", std::thread::available_parallelism().map_or(1, |n| n.get()));
    if run("enumeration") {
        enumeration_figures();
    }
    if run("induced_tree") {
        induced_tree_figures();
    }
    if run("startup") {
        startup_figures();
    }
    if run("guests") {
        guest_figures();
    }
    if run("compile") {
        compile_vs_cache();
    }
    if run("instantiate") {
        let (pool50, pool99) = instantiate_and_call(true, 3000);
        let (heap50, heap99) = instantiate_and_call(false, 3000);
        println!("instantiate + call (trivial capability, fresh Store, deny-by-default WASI):");
        println!("  pooling allocator:   p50 {pool50:.1} µs  p99 {pool99:.1} µs");
        println!(
            "  on-demand allocator: p50 {heap50:.1} µs  p99 {heap99:.1} µs  (pooling is {:.2}x faster at p50)",
            heap50 / pool50
        );
    }
    if run("invoke") {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = runtime_with_echo(dir.path());
        let (core50, core99) = core_invoke(&runtime, 2000);
        println!("core invoke (schema validation + call + result): p50 {core50:.1} µs  p99 {core99:.1} µs");
        drop(runtime);
        let serve = floor::Stdio { name: "jacobian", command: jacobian_stdio(dir.path()) };
        let round = floor::stdio_round(&serve, &echo_arguments(), 1000, 1600);
        println!(
            "MCP stdio round trip (capability.invoke, sequential client): p50 {:.1} µs  p99 {:.1} µs",
            round.p50, round.p99
        );
        let rate = mcp_pipelined(dir.path(), 5000, 64);
        println!("MCP stdio, 5000 capability.invoke calls pipelined 64 deep from one client: {rate:.0} invokes/s");
    }
    if wanted.iter().any(|w| w == "core_profile") {
        // For profilers: a long run of the core invoke alone.
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = runtime_with_echo(dir.path());
        let (p50, p99) = core_invoke(&runtime, 30_000);
        println!("core invoke, 30,000 calls: p50 {p50:.1} µs  p99 {p99:.1} µs");
    }
    if run("http") {
        let dir = tempfile::tempdir().expect("temp dir");
        drop(runtime_with_echo(dir.path()));
        http_figures(dir.path());
        http_auth_figures(dir.path());
    }
    if run("floor") {
        floor_figures();
    }
    if run("presets") {
        preset_figures();
    }
    if run("attack") {
        attack_figures(false);
        attack_figures(true);
    }
    if run("workspace") {
        workspace_figures();
    }
    if run("scaleout") {
        scaleout_figures();
    }
    if run("sat") {
        sat_figures();
    }
    if run("groebner") {
        groebner_figures();
    }
    if run("quorum") {
        quorum_figures();
    }
    if run("sat_cadical") {
        // Proofs of 250-variable formulas run to tens of MB: room for them.
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = open_with_budgets(dir.path(), 2_000_000_000_000, 256 << 20);
        let satlib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/sat/satlib");
        cadical::figures(&|id, input| call(&runtime, id, input), &satlib);
    }
    if run("sat_proofs") {
        // A check of a few hundred MB: room for its fuel.
        let dir = tempfile::tempdir().expect("temp dir");
        proofs::figures(&open_with_budgets(dir.path(), 20_000_000_000_000, 4 << 20));
    }
    if run("ideals") {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = open(dir.path());
        ideals::figures(&|id, input| call(&runtime, id, input));
    }
    if run("finder") {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = open(dir.path());
        finder::figures(&|id, input| call(&runtime, id, input));
    }
    if run("finder_textbook") {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = open(dir.path());
        finder::textbook_figures(&|id, input| call(&runtime, id, input));
    }
    if run("finder_large") {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = open(dir.path());
        finder::larger_orders(&|id, input| call(&runtime, id, input));
    }
    if run("split") {
        split_figures();
    }
}

/// Where the sandbox's cost on real work comes from. The bundled components'
/// own exports are called on bench-local engines that differ only in their
/// instrumentation: none (what Cranelift's code costs against LLVM's), fuel
/// (what the runtime compiles in), epoch checks alone, and fuel with epoch
/// checks (the alternative for cancellation; ARCHITECTURE.md). Each call
/// instantiates the component afresh, as the runtime does; host imports read
/// the call's input artifacts and drop log lines.
mod split {
    use std::collections::HashMap;
    use std::time::{Duration, Instant};

    use wasmtime::component::{Component, InstancePre, Linker, ResourceTable, Val};
    use wasmtime::{Config, Engine, Store};
    use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

    /// One component call: the request bytes and the artifacts it may read.
    pub struct Call {
        pub request: Vec<u8>,
        pub artifacts: HashMap<String, Vec<u8>>,
    }

    struct State {
        wasi: WasiCtx,
        table: ResourceTable,
        artifacts: HashMap<String, Vec<u8>>,
    }

    impl WasiView for State {
        fn ctx(&mut self) -> WasiCtxView<'_> {
            WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
        }
    }

    /// The four instrumentation settings, in the order they are reported.
    pub const SETTINGS: [(&str, bool, bool); 4] = [
        ("no instrumentation", false, false),
        ("fuel", true, false),
        ("epoch checks", false, true),
        ("fuel + epoch checks", true, true),
    ];

    fn prepare(bytes: &[u8], fuel: bool, epochs: bool) -> (Engine, InstancePre<State>) {
        let mut config = Config::new();
        config.wasm_component_model(true).consume_fuel(fuel).epoch_interruption(epochs);
        let engine = Engine::new(&config).expect("engine");
        let component = Component::new(&engine, bytes).expect("component compiles");
        let mut linker = Linker::<State>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("wasi");
        let mut host = linker.instance("jacobian:runtime/host@0.1.0").expect("host interface");
        host.func_new("log", |_, _, _, _| Ok(())).expect("log");
        host.func_new("read-artifact", |store, _, params, results| {
            let Val::String(digest) = &params[0] else { wasmtime::bail!("read-artifact takes a string") };
            let bytes = store.data().artifacts.get(digest.as_str()).cloned().expect("the call's artifact");
            results[0] = Val::Result(Ok(Some(Box::new(Val::List(bytes.into_iter().map(Val::U8).collect())))));
            Ok(())
        })
        .expect("read-artifact");
        let pre = linker.instantiate_pre(&component).expect("imports resolve");
        (engine, pre)
    }

    /// The best of `rounds` runs of every call in turn, for each setting.
    pub fn measure(bytes: &[u8], calls: &[Call], rounds: usize) -> [Duration; 4] {
        SETTINGS.map(|(_, fuel, epochs)| {
            let (engine, pre) = prepare(bytes, fuel, epochs);
            (0..rounds)
                .map(|_| {
                    let mut total = Duration::ZERO;
                    for call in calls {
                        let state = State {
                            wasi: WasiCtx::builder().build(),
                            table: ResourceTable::new(),
                            artifacts: call.artifacts.clone(),
                        };
                        let mut store = Store::new(&engine, state);
                        if fuel {
                            store.set_fuel(u64::MAX / 2).expect("fuel");
                        }
                        if epochs {
                            store.set_epoch_deadline(u64::MAX / 2);
                        }
                        let start = Instant::now();
                        let instance = pre.instantiate(&mut store).expect("instantiates");
                        let invoke = instance
                            .get_typed_func::<(&[u8],), (Result<Vec<u8>, String>,)>(&mut store, "invoke")
                            .expect("invoke export");
                        let (answer,) = invoke.call(&mut store, (&call.request,)).expect("runs");
                        total += start.elapsed();
                        assert!(answer.is_ok(), "the component answers: {answer:?}");
                    }
                    total
                })
                .min()
                .expect("one round")
        })
    }

    /// One line of the split: native, each setting, and the ratios to native.
    pub fn report(workload: &str, native: Duration, settings: [Duration; 4], whole: Duration) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mut line = format!("  {workload}: native {:.1} ms", ms(native));
        for ((name, _, _), time) in SETTINGS.iter().zip(settings) {
            line += &format!("; {name} {:.1} ms ({:.2}x)", ms(time), time.as_secs_f64() / native.as_secs_f64());
        }
        line +=
            &format!("; whole invocations {:.1} ms ({:.2}x)", ms(whole), whole.as_secs_f64() / native.as_secs_f64());
        println!("{line}");
    }
}

/// The sandbox's cost split by instrumentation, for the three compute-heavy
/// capabilities: the component's own `invoke` on engines with and without fuel
/// and epoch checks ([`split`]), the same source natively producing the same
/// answer (its JSON included), and the whole invocation through the runtime.
fn split_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let bundled = |package: &str| {
        jacobian::bundled::BUNDLED.iter().find(|c| c.package == package).expect("bundled component").bytes
    };
    let request = |id: &str, input: serde_json::Value| {
        json!({"capability_id": id, "mode": "EXPLORE", "input": input}).to_string().into_bytes()
    };
    let best = |rounds: usize, f: &mut dyn FnMut()| (0..rounds).map(|_| time(&mut *f)).min().expect("one round");
    println!("sandbox cost split by instrumentation (best of 3; ratios to native):");

    // All graphs on 9 vertices.
    let input = json!({"order": 9, "family": "all"});
    let calls = [split::Call {
        request: request("graph.enumerate.nonisomorphic", input.clone()),
        artifacts: Default::default(),
    }];
    let settings = split::measure(bundled("jacobian-graph"), &calls, 3);
    let native = best(3, &mut || {
        let (codes, _) = enumerate::enumerate(enumerate::Family::All, 9);
        let listing: Vec<String> = codes.iter().map(|&code| enumerate::graph6(&enumerate::decode(9, code))).collect();
        std::hint::black_box(serde_json::to_vec(&json!({"graphs": listing})).expect("json"));
    });
    let whole = best(3, &mut || drop(call(&runtime, "graph.enumerate.nonisomorphic", input.clone())));
    split::report("all graphs on 9 vertices", native, settings, whole);

    // drat-trim's five uuf-100 instances (UNSAT, with LRAT proofs).
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/sat/drat-trim-examples");
    let mut calls = Vec::new();
    let mut envelopes = Vec::new();
    for i in 1..=5 {
        let text = std::fs::read_to_string(shared.join(format!("uuf-100-{i}.cnf"))).expect("cnf");
        let uri = call(&runtime, "sat.cnf.construct", json!({"dimacs": text})).artifacts[0].uri.clone();
        let digest = Digest::from_artifact_uri(&uri).expect("uri");
        let envelope = runtime.data().read_artifact(&digest).expect("cnf artifact");
        calls.push(split::Call {
            request: request("sat.solve", json!({"cnf": uri})),
            artifacts: [(digest.to_hex(), envelope.clone())].into(),
        });
        envelopes.push((uri, envelope));
    }
    let settings = split::measure(bundled("jacobian-sat"), &calls, 3);
    let native = best(3, &mut || {
        #[derive(serde::Deserialize)]
        struct Cnf {
            variables: u32,
            clauses: Vec<Vec<i32>>,
        }
        for (uri, envelope) in &envelopes {
            let envelope: serde_json::Value = serde_json::from_slice(envelope).expect("json");
            let cnf: Cnf = serde_json::from_value(envelope["content"].clone()).expect("cnf");
            let (mut solver, early) = solver::Solver::new(cnf.variables, &cnf.clauses);
            assert!(early.is_none() && matches!(solver.solve(1_000_000), solver::Answer::Unsat));
            let answer = json!({"cnf": uri, "format": "lrat", "proof": solver.proof});
            std::hint::black_box(serde_json::to_vec(&answer).expect("json"));
        }
    });
    let whole = best(3, &mut || {
        for (uri, _) in &envelopes {
            drop(call(&runtime, "sat.solve", json!({"cnf": uri})));
        }
    });
    split::report("sat.solve, 5 uuf-100 instances", native, settings, whole);

    // Twelve seeded random ideals, with their certificates.
    let ideals = random_ideals();
    let calls: Vec<split::Call> = ideals
        .iter()
        .map(|input| split::Call {
            request: request("polynomial.compute.groebner_basis", input.clone()),
            artifacts: Default::default(),
        })
        .collect();
    let settings = split::measure(bundled("jacobian-polynomial"), &calls, 3);
    let native = best(3, &mut || {
        for case in &ideals {
            let vars: Vec<String> = serde_json::from_value(case["vars"].clone()).expect("vars");
            let order = order_of(case);
            let texts: Vec<String> = serde_json::from_value(case["generators"].clone()).expect("generators");
            let generators: Vec<poly::Poly> =
                texts.iter().map(|g| poly::parse(g, &vars, order, 10).expect("parses")).collect();
            let result = groebner::reduced_basis(&generators, vars.len(), order, GROEBNER_BUDGET).expect("finishes");
            let show = |p: &poly::Poly| p.show(&vars);
            let steps: Vec<Vec<usize>> = result
                .trace
                .iter()
                .map(|s| [s.pair.0, s.pair.1].into_iter().chain(s.by.iter().copied()).collect())
                .collect();
            let certificate = json!({
                "vars": vars, "order": case["order"],
                "generators": generators.iter().map(show).collect::<Vec<_>>(),
                "basis": result.basis.iter().map(show).collect::<Vec<_>>(),
                "trace": {"steps": steps},
            });
            std::hint::black_box(serde_json::to_vec(&certificate).expect("json"));
        }
    });
    let whole = best(3, &mut || {
        for input in &ideals {
            drop(call(&runtime, "polynomial.compute.groebner_basis", input.clone()));
        }
    });
    split::report("Gröbner bases, 12 seeded random ideals", native, settings, whole);
}
