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

mod sections;
use sections::*;

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

/// A runtime whose calls never yield (so cannot be cancelled or report progress).
fn open_plain(dir: &std::path::Path) -> Runtime {
    let engine = EngineConfig { interruptible: false, ..EngineConfig::default() };
    Runtime::open(RuntimeConfig { engine, ..RuntimeConfig::new(dir.to_path_buf()) }).expect("runtime")
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
