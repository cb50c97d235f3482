//! Quick calls answered on the MCP edge's own thread
//! ([`Runtime::try_invoke_quick`]): the answer and the records are those of
//! an ordinary call, and an attempt that goes beyond its bounds leaves no
//! trace (no episode, no experiment record, no place under a cap) before it
//! is run again as an ordinary call.

use std::path::Path;

use jacobian::contract::{BudgetRequest, CapabilityResult, InvokeRequest};
use jacobian::engine::InlineLimits;
use jacobian::runtime::Runtime;
use serde_json::{Value, json};

use crate::support;

fn request(capability_id: &str, input: Value, fuel: Option<u64>, experiment: &str) -> InvokeRequest {
    InvokeRequest {
        capability_id: capability_id.into(),
        mode: None,
        input,
        budget: fuel.map(|fuel| BudgetRequest { fuel: Some(fuel), ..BudgetRequest::default() }),
        view: None,
        experiment: Some(experiment.into()),
        tenant: None,
    }
}

fn code(result: &CapabilityResult) -> String {
    result
        .diagnostic
        .as_ref()
        .map(|d| serde_json::to_value(d.code).unwrap().as_str().unwrap().to_owned())
        .unwrap_or_default()
}

fn episodes(dir: &Path) -> i64 {
    let conn = rusqlite::Connection::open(dir.join("jacobian.db")).expect("database opens");
    conn.query_row("SELECT COUNT(*) FROM episodes", [], |row| row.get(0)).expect("episodes counted")
}

fn records(runtime: &Runtime, experiment: &str) -> Vec<(u64, String)> {
    let records = runtime.experiments().invocations(experiment).expect("records read");
    records.into_iter().map(|r| (r.ordinal, r.capability_id)).collect()
}

fn with_guests() -> (std::sync::Arc<Runtime>, tempfile::TempDir) {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("echo"), None).unwrap();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    drop(runtime);
    (support::open(dir.path().to_path_buf()), dir)
}

#[test]
fn a_quick_call_answered_inline_is_the_ordinary_answer() {
    let (runtime, dir) = with_guests();
    for message in ["hi", "", "ünïcödé", &"x".repeat(1024)] {
        let call = request("test.echo.message", json!({"message": message}), None, "quick");
        let inline = runtime.try_invoke_quick(&call).expect("a quick call is answered inline");
        let ordinary = runtime.invoke(&call);
        assert_eq!(inline.diagnostic, None);
        assert_eq!(support::without_accounting(&inline), support::without_accounting(&ordinary));
        assert_eq!(inline.fuel_consumed, ordinary.fuel_consumed);
        assert!(inline.fuel_consumed > 0 && inline.fuel_consumed < InlineLimits::DEFAULT.fuel);
        let uri = |r: &CapabilityResult| {
            r.transport.as_ref().expect("transport").full_result_episode_uri.clone().expect("stored")
        };
        assert_eq!(uri(&inline), uri(&ordinary), "one episode, stored once");
    }
    // Both ways are recorded in the experiment, in order.
    let ordinals: Vec<u64> = records(&runtime, "quick").into_iter().map(|(o, _)| o).collect();
    assert_eq!(ordinals, (1..=8).collect::<Vec<_>>());
    assert_eq!(episodes(dir.path()), 4);
}

#[test]
fn a_call_beyond_the_inline_fuel_is_abandoned_without_a_trace_and_runs_in_full() {
    let (runtime, dir) = with_guests();
    let before = episodes(dir.path());
    let budget = 5 * InlineLimits::DEFAULT.fuel;
    let call = request("test.hostile.attack", json!({"attack": "loop"}), Some(budget), "long");
    assert!(runtime.try_invoke_quick(&call).is_none(), "a long call is not answered inline");
    assert_eq!(records(&runtime, "long"), vec![]);
    assert_eq!(episodes(dir.path()), before);
    // Run ordinarily, it spends its whole budget, not the inline bound.
    let ordinary = runtime.invoke(&call);
    assert_eq!(code(&ordinary), "FUEL_EXHAUSTED");
    assert_eq!(ordinary.fuel_consumed, budget);
    assert_eq!(records(&runtime, "long").len(), 1);
    // For a while the capability is not run inline at all: a client sending
    // long calls cannot hold the edge's thread with every one of them.
    let small = request("test.hostile.attack", json!({"attack": "loop"}), Some(1_000_000), "long");
    assert!(runtime.try_invoke_quick(&small).is_none(), "not run inline after an attempt went beyond");
    assert_eq!(records(&runtime, "long").len(), 1);
    // A budget within the inline bound is the call's own limit: running out
    // of it is the call's answer, given inline (by a server that has seen no
    // long attempt of this capability).
    drop(runtime);
    let runtime = support::open(dir.path().to_path_buf());
    let inline = runtime.try_invoke_quick(&small).expect("within the inline bound");
    assert_eq!(code(&inline), "FUEL_EXHAUSTED");
    assert_eq!(inline.fuel_consumed, 1_000_000);
    assert_eq!(support::without_accounting(&inline), support::without_accounting(&runtime.invoke(&small)));
}

#[test]
fn an_abandoned_attempt_takes_no_place_under_an_invocation_cap() {
    let (runtime, dir) = with_guests();
    drop(runtime);
    let path = dir.path().join("policy.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let kept = &text[..text.find("[experiments").expect("the default policy lists experiment budgets")];
    std::fs::write(&path, format!("{kept}[experiments.max_invocations]\n\"test.hostile.attack\" = 1\n")).unwrap();
    let runtime = support::open(dir.path().to_path_buf());
    let call =
        request("test.hostile.attack", json!({"attack": "loop"}), Some(3 * InlineLimits::DEFAULT.fuel), "capped");
    for _ in 0..3 {
        assert!(runtime.try_invoke_quick(&call).is_none());
    }
    // Three abandoned attempts spent nothing: the one admitted call runs.
    assert_eq!(code(&runtime.invoke(&call)), "FUEL_EXHAUSTED");
    let capped = runtime.try_invoke_quick(&call).expect("a refusal is quick");
    assert_eq!(code(&capped), "EXPERIMENT_BUDGET_SPENT");
    assert_eq!(records(&runtime, "capped").len(), 2);
}

#[test]
fn large_answers_inputs_and_artifact_references_are_not_tried_inline() {
    let (runtime, dir) = with_guests();
    let small = request("test.hostile.attack", json!({"attack": "output", "argument": "1000"}), None, "big");
    assert!(runtime.try_invoke_quick(&small).is_some());
    let before = episodes(dir.path());
    // An answer above the inline bound: abandoned, then given in full.
    let bytes = InlineLimits::DEFAULT.output_bytes as usize + 1000;
    let big = request("test.hostile.attack", json!({"attack": "output", "argument": bytes.to_string()}), None, "big");
    assert!(runtime.try_invoke_quick(&big).is_none());
    assert_eq!(episodes(dir.path()), before);
    let answer = runtime.invoke(&big);
    assert_eq!(answer.diagnostic, None);
    assert_eq!(answer.output.as_ref().unwrap()["result"].as_str().unwrap().len(), bytes);
    assert!(runtime.try_invoke_quick(&small).is_none(), "not run inline for a while after one went beyond");
    // An input above the inline bound goes straight to an ordinary call.
    let message = "y".repeat(jacobian::limits::INLINE_INPUT_BYTES);
    assert!(
        runtime.try_invoke_quick(&request("test.echo.message", json!({"message": message}), None, "big")).is_none()
    );
    // So does one that names an artifact (reading it is not bounded by fuel).
    let digest = "0".repeat(64);
    let reads = json!({"attack": "read_artifact", "argument": format!("artifact://sha256/{digest}")});
    assert!(runtime.try_invoke_quick(&request("test.hostile.attack", reads, None, "big")).is_none());
    assert_eq!(records(&runtime, "big").len(), 2);
}

#[test]
fn an_inline_attempt_never_waits_for_a_busy_slot() {
    let (runtime, dir) = with_guests();
    drop(runtime);
    let runtime = support::open_with_slots(dir.path().to_path_buf(), 1);
    let busy = jacobian::engine::CallControl::default();
    std::thread::scope(|scope| {
        let holder = scope.spawn(|| {
            runtime
                .invoke_cancellable(&request("test.hostile.attack", json!({"attack": "loop"}), None, "holder"), &busy)
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        // The only slot is taken: the attempt gives up at once instead of
        // holding the edge's thread (waiting, it would never answer before
        // the holder is cancelled below), and leaves no trace.
        let (sender, receiver) = std::sync::mpsc::channel();
        let runtime = &runtime;
        scope.spawn(move || {
            let call = request("test.echo.message", json!({"message": "hi"}), None, "waiting");
            sender.send(runtime.try_invoke_quick(&call).is_none()).unwrap();
        });
        let gave_up = receiver.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(gave_up, Ok(true), "the attempt waited for the busy slot");
        assert_eq!(records(runtime, "waiting"), vec![]);
        busy.cancel();
        assert_eq!(code(&holder.join().unwrap()), "CANCELLED");
    });
    let call = request("test.echo.message", json!({"message": "hi"}), None, "waiting");
    assert!(runtime.try_invoke_quick(&call).is_some(), "with the slot free again, the call is quick");
}

#[test]
fn a_guest_that_writes_its_console_on_the_async_thread_is_run_again_off_it() {
    // A panicking Rust guest prints its message, which wasmtime-wasi's
    // synchronous bindings cannot do on a thread that drives a tokio runtime:
    // the attempt is abandoned (not a host panic) and the ordinary call gives
    // the guest's own diagnostic with its console.
    let (runtime, dir) = with_guests();
    let before = episodes(dir.path());
    let call = request("test.hostile.attack", json!({"attack": "panic"}), None, "console");
    let edge = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert!(edge.block_on(async { runtime.try_invoke_quick(&call) }).is_none());
    assert_eq!(episodes(dir.path()), before);
    assert_eq!(records(&runtime, "console"), vec![]);
    let ordinary = runtime.invoke(&call);
    assert_eq!(code(&ordinary), "GUEST_TRAP");
    let console = ordinary.diagnostic.unwrap().details["console"].as_str().unwrap_or_default().to_owned();
    assert!(console.contains("hostile guest panics on purpose"), "{console}");
    // Off any runtime the same attempt is answered inline, identically (by a
    // server that has not just seen it go beyond).
    drop(runtime);
    let runtime = support::open(dir.path().to_path_buf());
    let inline = runtime.try_invoke_quick(&call).expect("no runtime on this thread");
    assert_eq!(code(&inline), "GUEST_TRAP");
}

#[test]
fn an_attempt_that_spends_host_time_instead_of_fuel_is_abandoned_at_its_deadline() {
    // 16 MiB log lines sent to the host without end: little fuel per line,
    // and host work the attempt's fuel does not bound. The attempt stops at
    // its wall-clock deadline and leaves no trace; the ordinary call then
    // runs to the operator's wall-clock ceiling.
    let (runtime, dir) = with_guests();
    runtime.update_policy(|p| p.budgets.wall_ms = 500).unwrap();
    let before = episodes(dir.path());
    let call = request("test.hostile.attack", json!({"attack": "host_time", "argument": "forever"}), None, "host-time");
    let quick = runtime.try_invoke_quick(&call);
    assert!(quick.is_none(), "the attempt outlived its deadline: {:?}", quick.map(|r| r.diagnostic));
    assert_eq!(episodes(dir.path()), before);
    assert_eq!(records(&runtime, "host-time"), vec![]);
    let ordinary = runtime.invoke(&call);
    assert_eq!(ordinary.diagnostic.map(|d| d.code), Some(jacobian::contract::Code::DeadlineExceeded));
    assert_eq!(episodes(dir.path()), before, "a call stopped by time stores nothing");
}

#[test]
fn running_out_of_fuel_after_a_refused_grow_is_told_apart_and_abandoned_inline() {
    // The guest has memory.grow refused at its budget, copes, and then spins:
    // the call ends by fuel, not by memory (so says the ordinary call), and
    // the attempt (ended by its fuel or its deadline) is abandoned, not
    // answered.
    let (runtime, dir) = with_guests();
    let budget = 5 * InlineLimits::DEFAULT.fuel;
    let call = InvokeRequest {
        budget: Some(BudgetRequest { memory_bytes: Some(32 << 20), fuel: Some(budget), ..BudgetRequest::default() }),
        ..request("test.hostile.attack", json!({"attack": "grow_storm", "argument": "then_spin"}), None, "grow")
    };
    let before = episodes(dir.path());
    assert!(runtime.try_invoke_quick(&call).is_none());
    assert_eq!(episodes(dir.path()), before);
    let ordinary = runtime.invoke(&call);
    assert_eq!(code(&ordinary), "FUEL_EXHAUSTED");
    assert_eq!(ordinary.fuel_consumed, budget);
}

#[test]
fn an_attempt_that_needs_more_memory_than_its_bound_is_abandoned() {
    // grow_storm under the default memory budget: the attempt's 32 MiB are
    // refused sooner than the budget would be, so the attempt is abandoned
    // even though the guest copes; the ordinary call grows to the budget.
    let (runtime, dir) = with_guests();
    let before = episodes(dir.path());
    let call = request("test.hostile.attack", json!({"attack": "grow_storm"}), None, "memory");
    assert!(runtime.try_invoke_quick(&call).is_none());
    assert_eq!(episodes(dir.path()), before);
    assert_eq!(records(&runtime, "memory"), vec![]);
    let ordinary = runtime.invoke(&call);
    assert_eq!(ordinary.diagnostic, None);
    let text = ordinary.output.as_ref().unwrap()["result"].as_str().unwrap().to_owned();
    let grown: u64 = text.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("grew N pages");
    assert!(grown * 65536 > InlineLimits::DEFAULT.memory_bytes, "{text}");
}
