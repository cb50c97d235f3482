//! Runtime benchmarks. Prints figures; asserts nothing about time.
//!
//! `cargo bench --bench runtime` reports, side by side in one run:
//! - compiling a component vs loading it from the precompiled cache;
//! - instantiate + call of a trivial capability, pooling vs on-demand allocation;
//! - the full core invoke path (validation, JSON, result) for the same call;
//! - an MCP stdio round trip of the same invoke through `jacobian serve`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jacobian::contract::InvokeRequest;
use jacobian::digest::Digest;
use jacobian::engine::{ArtifactAccess, CallBudgets, EngineConfig, Entry, Sandbox};
use jacobian::{Runtime, RuntimeConfig};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

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

fn instantiate_and_call(pooling: bool, iterations: usize) -> (f64, f64) {
    let sandbox = Sandbox::new(EngineConfig { pooling, ..EngineConfig::default() }).expect("engine");
    let bytes = echo_bytes();
    let component = sandbox.compile(&bytes).expect("compiles");
    let loaded = sandbox.prepare(Digest::of(&bytes), &component).expect("prepares");
    let request =
        json!({"capability_id": "test.echo.message", "mode": "EXPLORE", "input": {"message": "hi"}}).to_string();
    let mut call = || {
        let report = sandbox.call(&loaded, Entry::Run, request.as_bytes(), &BUDGETS, ArtifactAccess::default());
        assert!(report.result.is_ok());
    };
    for _ in 0..200 {
        call();
    }
    percentiles((0..iterations).map(|_| time(&mut call)).collect())
}

fn runtime_with_echo(dir: &std::path::Path) -> Arc<Runtime> {
    let runtime =
        Runtime::open(RuntimeConfig { data_dir: dir.to_path_buf(), engine: EngineConfig::default() }).expect("runtime");
    runtime.install(&echo_bytes(), None).expect("install echo");
    Arc::new(
        Runtime::open(RuntimeConfig { data_dir: dir.to_path_buf(), engine: EngineConfig::default() }).expect("runtime"),
    )
}

fn core_invoke(runtime: &Runtime, iterations: usize) -> (f64, f64) {
    let request = InvokeRequest {
        capability_id: "test.echo.message".into(),
        mode: None,
        input: json!({"message": "hi"}),
        budget: None,
        view: None,
    };
    for _ in 0..200 {
        runtime.invoke(&request);
    }
    percentiles((0..iterations).map(|_| time(|| runtime.invoke(&request))).collect())
}

fn mcp_round_trip(dir: &std::path::Path, iterations: usize) -> (f64, f64) {
    let rt = tokio::runtime::Runtime::new().expect("tokio");
    rt.block_on(async {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_jacobian"));
        command.arg("--data-dir").arg(dir).arg("serve");
        let client = ().serve(TokioChildProcess::new(command).expect("spawn")).await.expect("initialize");
        let arguments = json!({"capability_id": "test.echo.message", "input": {"message": "hi"}});
        let arguments = arguments.as_object().cloned().expect("object");
        let mut samples = Vec::with_capacity(iterations);
        for i in 0..(iterations + 100) {
            let start = Instant::now();
            let result = client
                .call_tool(CallToolRequestParams::new("capability.invoke").with_arguments(arguments.clone()))
                .await
                .expect("call");
            assert_eq!(result.is_error, Some(false));
            if i >= 100 {
                samples.push(start.elapsed());
            }
        }
        client.cancel().await.expect("shutdown");
        percentiles(samples)
    })
}

fn main() {
    println!("Jacobian runtime benchmarks ({} cores)", std::thread::available_parallelism().map_or(1, |n| n.get()));
    compile_vs_cache();
    let (pool50, pool99) = instantiate_and_call(true, 3000);
    let (heap50, heap99) = instantiate_and_call(false, 3000);
    println!("instantiate + call (trivial capability, fresh Store, deny-by-default WASI):");
    println!("  pooling allocator:   p50 {pool50:.1} µs  p99 {pool99:.1} µs");
    println!(
        "  on-demand allocator: p50 {heap50:.1} µs  p99 {heap99:.1} µs  (pooling is {:.2}x faster at p50)",
        heap50 / pool50
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = runtime_with_echo(dir.path());
    let (core50, core99) = core_invoke(&runtime, 2000);
    println!("core invoke (schema validation + call + result): p50 {core50:.1} µs  p99 {core99:.1} µs");
    drop(runtime);
    let (mcp50, mcp99) = mcp_round_trip(dir.path(), 1000);
    println!("MCP stdio round trip (capability.invoke, sequential client): p50 {mcp50:.1} µs  p99 {mcp99:.1} µs");
}
