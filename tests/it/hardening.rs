//! Hardening: request limits at their exact boundaries, hostile bundles that
//! never get installed, and typed back-pressure under a thousand concurrent
//! invocations.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use jacobian::contract::{BudgetRequest, CapabilityResult};
use jacobian::limits::{MAX_INPUT_BYTES, MAX_MESSAGE_BYTES};
use serde_json::{Value, json};

use crate::support;

fn code(result: &CapabilityResult) -> Value {
    serde_json::to_value(result.diagnostic.as_ref().map(|d| d.code)).expect("serializes")
}

#[test]
fn invoke_input_and_output_limits_hold_at_the_exact_boundary() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("echo"), None).expect("install echo");
    let runtime = support::open(dir.path().to_path_buf());
    // {"message":"…"} is 14 bytes of JSON around the message.
    let at_limit = json!({"message": "x".repeat(MAX_INPUT_BYTES - 14)});
    assert_eq!(jacobian::limits::json_size(&at_limit), MAX_INPUT_BYTES);
    // Exactly at the limit the input passes the size check and reaches the
    // schema (echo messages are at most 1024 characters), whose complaint
    // quotes the value only in part.
    let accepted = support::invoke_with(&runtime, "test.echo.message", at_limit, BudgetRequest::default());
    assert_eq!(code(&accepted), "INVALID_INPUT");
    let quoted = serde_json::to_string(&accepted.diagnostic).expect("serializes").len();
    assert!(quoted < 4096, "the diagnostic quotes {quoted} bytes");
    let over = json!({"message": "x".repeat(MAX_INPUT_BYTES - 13)});
    let refused = support::invoke_with(&runtime, "test.echo.message", over, BudgetRequest::default());
    assert_eq!(code(&refused), "OVERSIZED");
    let details = &refused.diagnostic.as_ref().expect("diagnostic").details;
    assert_eq!(details["path"], "input");
    assert_eq!(details["limit"], MAX_INPUT_BYTES);

    // The output budget: learn the answer's exact size, then ask for exactly it and one byte less.
    let input = json!({"message": "a message of known length"});
    let budget = |bytes| BudgetRequest { output_bytes: Some(bytes), ..BudgetRequest::default() };
    let probe = support::invoke_with(&runtime, "test.echo.message", input.clone(), budget(1));
    assert_eq!(code(&probe), "OUTPUT_TOO_LARGE");
    let answer = probe.diagnostic.as_ref().expect("diagnostic").details["answer_bytes"].as_u64().expect("answer_bytes");
    assert!(answer > 1);
    let exact = support::invoke_with(&runtime, "test.echo.message", input.clone(), budget(answer));
    assert_eq!(exact.diagnostic, None, "an answer exactly at the output budget is accepted");
    let short = support::invoke_with(&runtime, "test.echo.message", input, budget(answer - 1));
    assert_eq!(code(&short), "OUTPUT_TOO_LARGE");
    assert!(short.artifacts.is_empty());
}

#[test]
fn a_memory_grow_storm_is_refused_page_by_page_and_the_call_still_ends() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).expect("install hostile");
    let runtime = support::open(dir.path().to_path_buf());
    let budget = BudgetRequest { memory_bytes: Some(32 << 20), ..BudgetRequest::default() };
    let result = support::invoke_with(&runtime, "test.hostile.attack", json!({"attack": "grow_storm"}), budget);
    // memory.grow answers -1 past the budget; a guest that copes with that
    // completes, holding no more than its budget.
    assert_eq!(result.diagnostic, None);
    let text = result.output.as_ref().expect("output")["result"].as_str().expect("text").to_owned();
    let numbers: Vec<u64> = text.split(' ').filter_map(|w| w.parse().ok()).collect();
    let [grown, refused] = numbers[..] else { panic!("{text}") };
    assert!(grown * 65536 <= 32 << 20, "{text}");
    assert!(refused > 199_000, "{text}");
}

/// One JSON-RPC line of exactly `size` bytes: a `capability.invoke` whose
/// message pads it out.
fn invoke_line_of(size: usize, id: u64) -> String {
    let line = |pad: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "capability.invoke",
               "arguments": {"capability_id": "test.echo.message", "input": {"message": "x".repeat(pad)}}}})
        .to_string()
    };
    let overhead = line(0).len();
    let text = line(size - overhead);
    assert_eq!(text.len(), size);
    text
}

#[test]
fn a_stdio_message_above_the_limit_ends_the_session_with_a_typed_envelope() {
    let dir = tempfile::tempdir().expect("temp dir");
    let guest = std::path::Path::new(jacobian::bundled::TEST_GUESTS_DIR).join("jacobian_test_echo.wasm");
    support::cli(dir.path(), &["install", guest.to_str().expect("utf-8")]);
    let mut child = Command::new(support::BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    };
    send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                 "capabilities": {}, "clientInfo": {"name": "limits", "version": "0"}}})
        .to_string(),
    );
    send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    // Exactly at the message limit: framed and parsed; the input inside it is
    // then above the input limit, which is the typed answer.
    send(&invoke_line_of(MAX_MESSAGE_BYTES, 2));
    let answer = loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).expect("read") > 0, "the server closed before answering");
        let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
        if message["id"] == 2 {
            break message;
        }
    };
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["diagnostic"]["code"], "OVERSIZED");
    assert_eq!(answer["result"]["structuredContent"]["diagnostic"]["details"]["path"], "input");
    // One byte more cannot be framed: the session ends with the envelope
    // (possibly before the whole line is written, so write errors are expected).
    let over = invoke_line_of(MAX_MESSAGE_BYTES + 1, 3);
    let _ = stdin.write_all(over.as_bytes()).and_then(|()| stdin.write_all(b"\n")).and_then(|()| stdin.flush());
    drop(stdin);
    let output = child.wait_with_output().expect("the server exits");
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let envelope: Value =
        serde_json::from_str(stderr.lines().last().unwrap_or_default()).unwrap_or_else(|_| panic!("{stderr}"));
    assert_eq!(envelope["error_type"], "payload_too_large", "{envelope}");
    assert!(envelope["error"].as_str().unwrap_or_default().contains(&MAX_MESSAGE_BYTES.to_string()), "{envelope}");
}

#[test]
fn hostile_bundles_are_refused_at_install_with_the_component_named() {
    let (runtime, dir) = support::runtime();
    // A describe answer of 64 MiB: cut off at the output budget, typed.
    let bloated = support::test_guest("bloated");
    let error = jacobian::errors::render(&runtime.install(&bloated, None).expect_err("bloated describe"));
    let digest = jacobian::digest::Digest::of(&bloated).to_string();
    assert!(
        error.ends_with(&format!(
            "{digest}: describe() answered with {} bytes, above the output budget of 4194304",
            (64 << 20) + 137
        )),
        "{error}"
    );
    // A bundle written against std::net imports wasi:sockets: refused before any of its code runs.
    let overreach = support::test_guest("overreach");
    let error = jacobian::errors::render(&runtime.install(&overreach, None).expect_err("sockets import"));
    assert!(error.contains("wasi:sockets/"), "{error}");
    assert!(error.contains("allowlist"), "{error}");
    // Neither left anything behind, and the runtime still serves.
    let listed = support::cli(dir.path(), &["components"]);
    assert!(!listed.contains("overreach") && !listed.contains(&digest), "{listed}");
    runtime.install(&support::test_guest("echo"), None).expect("install echo");
    let runtime = support::open(dir.path().to_path_buf());
    let echo = support::invoke_with(&runtime, "test.echo.message", json!({"message": "hi"}), BudgetRequest::default());
    assert_eq!(echo.diagnostic, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_concurrent_invokes_get_answers_or_typed_back_pressure() {
    const CALLS: usize = 1000;
    let dir = tempfile::tempdir().expect("temp dir");
    let guests = std::path::Path::new(jacobian::bundled::TEST_GUESTS_DIR);
    for guest in ["jacobian_test_hostile.wasm", "jacobian_test_echo.wasm"] {
        support::cli(dir.path(), &["install", guests.join(guest).to_str().expect("utf-8")]);
    }
    let mut command = tokio::process::Command::new(support::BIN);
    command.arg("--data-dir").arg(dir.path()).args([
        "serve",
        "--max-concurrent-calls",
        "2",
        "--max-queued-calls",
        "16",
    ]);
    let transport = rmcp::transport::TokioChildProcess::new(command).expect("spawn serve");
    let pid = transport.id().expect("pid");
    let client = rmcp::ServiceExt::serve((), transport).await.expect("initialize");
    // Each call burns 10^8 fuel (about 5-100 ms), far longer than a request
    // takes to arrive, so the two slots and the queue stay full.
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..CALLS {
        let peer = client.peer().clone();
        let arguments = json!({"capability_id": "test.hostile.attack", "input": {"attack": "loop"},
                               "budget": {"fuel": 100_000_000}});
        calls.spawn(async move {
            let params = rmcp::model::CallToolRequestParams::new("capability.invoke")
                .with_arguments(arguments.as_object().cloned().expect("object"));
            let result = peer.call_tool(params).await.expect("answered at the protocol level");
            (result.structured_content.expect("structured"), result.is_error == Some(true))
        });
    }
    let results = calls.join_all().await;
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for (result, is_error) in &results {
        assert!(is_error);
        let code = result["diagnostic"]["code"].as_str().expect("a typed diagnostic").to_owned();
        if code == "OVERLOADED" {
            assert_eq!(result["diagnostic"]["details"]["running"], 2, "{result}");
            assert_eq!(result["diagnostic"]["details"]["queued"], 16, "{result}");
            assert_eq!(result["accounting"]["stop_reason"], "UNAVAILABLE");
            assert_eq!(result["accounting"]["fuel_consumed"], 0);
        }
        *counts.entry(code).or_default() += 1;
    }
    println!("{CALLS} concurrent invokes: {counts:?}");
    assert_eq!(counts.keys().map(String::as_str).collect::<Vec<_>>(), ["FUEL_EXHAUSTED", "OVERLOADED"], "{counts:?}");
    assert!(counts["FUEL_EXHAUSTED"] >= 18, "at least the running and queued calls ran: {counts:?}");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    println!("server peak resident memory: {} MiB", peak_kib / 1024);
    assert!(peak_kib < 512 * 1024, "peak resident memory {peak_kib} KiB");
    // Back-pressure is recorded in the accounting (stop reason UNAVAILABLE,
    // no episode), apart from the calls that ran.
    let (echo, is_error) = support::call(
        &client,
        "capability.invoke",
        json!({"capability_id": "test.echo.message", "input": {"message": "still here"}}),
    )
    .await;
    assert!(!is_error, "{echo}");
    let experiment = echo["accounting"]["experiment"].as_str().expect("experiment").to_owned();
    let text = support::read_resource(&client, &format!("experiment://{experiment}/accounting")).await;
    let accounting: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        accounting["by_stop_reason"],
        json!({"COMPLETED": 1, "FAILED": counts["FUEL_EXHAUSTED"], "UNAVAILABLE": counts["OVERLOADED"]})
    );
    client.cancel().await.expect("shutdown");
}

/// The fuzz targets' committed inputs: the seeds (valid examples the fuzzer
/// mutates) and every input that once crashed a target, replayed on each run.
#[test]
fn fuzz_seeds_are_valid_and_regression_inputs_still_pass() {
    use jacobian::fuzzing;
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    type Target = fn(&[u8]);
    let targets: [(&str, Target); 3] = [
        ("invoke_request", fuzzing::invoke_request),
        ("descriptor", fuzzing::descriptor),
        ("workspace_write", fuzzing::workspace_write),
    ];
    for (name, target) in targets {
        let seeds = fuzzing::replay(target, &fuzz.join("seeds").join(name));
        assert!(seeds > 0, "{name} has seeds");
        fuzzing::replay(target, &fuzz.join("regressions").join(name));
    }
    // The seeds are accepted, so the fuzzer starts from the interesting side of every check.
    for entry in std::fs::read_dir(fuzz.join("seeds/descriptor")).expect("seeds").flatten() {
        let bytes = std::fs::read(entry.path()).expect("seed");
        let kind = if bytes[0] & 1 == 0 {
            jacobian_guest::protocol::BundleKind::Capability
        } else {
            jacobian_guest::protocol::BundleKind::Checker
        };
        jacobian::descriptor::validate(&bytes[1..], kind, &Default::default())
            .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
    }
    let write: jacobian::workspace::wire::WriteRequest =
        serde_json::from_slice(&std::fs::read(fuzz.join("seeds/workspace_write/mixed.json")).expect("seed"))
            .expect("parses");
    let state = jacobian::workspace::model::State::open("fuzz", "seed").expect("opens");
    state.apply(&write.entries).unwrap_or_else(|e| panic!("{e:?}"));
    for entry in std::fs::read_dir(fuzz.join("seeds/invoke_request")).expect("seeds").flatten() {
        serde_json::from_slice::<jacobian::contract::InvokeRequest>(&std::fs::read(entry.path()).expect("seed"))
            .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
    }
}

/// A table-growth storm: Rust guests never emit `table.grow`, so this
/// component is written by hand. It grows its table 1,000 elements at a time
/// until refused, then answers the table's size.
const TABLE_STORM: &str = r#"
(component
  (core module $m
    (table $t 1 funcref)
    (memory (export "memory") 1)
    (global $bump (mut i32) (i32.const 1024))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (global.get $bump))
      (global.set $bump (i32.add (global.get $bump) (local.get 3)))
      (local.get $p))
    (func (export "describe") (result i32)
      (i32.store (i32.const 0) (i32.const 0))
      (i32.store (i32.const 4) (i32.const 0))
      (i32.const 0))
    (func (export "invoke") (param i32 i32) (result i32)
      (block $refused
        (loop $grow
          (br_if $refused (i32.eq (table.grow $t (ref.null func) (i32.const 1000)) (i32.const -1)))
          (br $grow)))
      (i32.store (i32.const 32) (table.size $t))
      (i32.store8 (i32.const 16) (i32.const 0))
      (i32.store (i32.const 20) (i32.const 32))
      (i32.store (i32.const 24) (i32.const 4))
      (i32.const 16)))
  (core instance $i (instantiate $m))
  (func (export "describe") (result (list u8))
    (canon lift (core func $i "describe") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (func (export "invoke") (param "request" (list u8)) (result (result (list u8) (error string)))
    (canon lift (core func $i "invoke") (memory (core memory $i "memory")) (realloc (core func $i "realloc")))))
"#;

#[test]
fn a_table_growth_storm_is_refused_at_the_bound() {
    use jacobian::engine::{ArtifactAccess, CallBudgets, CallControl, EngineConfig, Entry, Sandbox};
    let bytes = wat::parse_str(TABLE_STORM).expect("component text");
    let sandbox = Sandbox::new(EngineConfig::default()).expect("engine");
    let component = sandbox.compile(&bytes).expect("compiles");
    let loaded = sandbox.prepare(jacobian::digest::Digest::of(&bytes), &component).expect("prepares");
    let budgets = CallBudgets { fuel: 10_000_000, memory_bytes: 1 << 20, output_bytes: 1 << 10 };
    for _ in 0..3 {
        let report =
            sandbox.call(&loaded, Entry::Run, b"{}", &budgets, ArtifactAccess::default(), &CallControl::default());
        let answer = report.result.expect("the guest saw table.grow refused and answered");
        let size = u32::from_le_bytes(answer[..4].try_into().expect("four bytes"));
        // Refused well below the limiter's ceiling of 2^20 elements: the
        // pooling allocator's per-table bound bites first.
        println!("table refused at {size} elements");
        assert!((1_000..1 << 20).contains(&size), "table grew to {size}");
    }
}
