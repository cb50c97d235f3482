//! Experiments, budgets, cancellation, archives, offline replay, verify and
//! compare: through the core API and the real `jacobian` binary.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use jacobian::Runtime;
use jacobian::contract::{CapabilityResult, Code, InvokeRequest, Status};
use jacobian::engine::CallControl;
use jacobian::experiments::StopReason;
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, BIN};

mod tenants;

fn invoke_in(runtime: &Runtime, experiment: &str, id: &str, mode: Option<Mode>, input: Value) -> CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: id.into(),
        mode,
        input,
        experiment: Some(experiment.into()),
        ..Default::default()
    })
}

fn resource(runtime: &Runtime, uri: &str) -> Value {
    let text = jacobian::resources::read(runtime, uri).unwrap_or_else(|d| panic!("{uri}: {}", d.message)).text;
    serde_json::from_str(&text).expect("resource JSON")
}

/// A small experiment: a countermodel and its verification, an UNSAT
/// formula with its LRAT proof checked, the trees on 7 vertices.
fn run_experiment(runtime: &Runtime, experiment: &str) -> Vec<CapabilityResult> {
    let mut results = Vec::new();
    let found = invoke_in(
        runtime,
        experiment,
        support::SEARCH,
        Some(Mode::Explore),
        json!({"hypotheses": ["commutative"], "target": "associative", "max_order": 3}),
    );
    let certificate = found.check_with.as_ref().unwrap().certificate_artifact.clone().unwrap();
    results.push(found);
    results.push(invoke_in(
        runtime,
        experiment,
        support::VERIFY,
        Some(Mode::Verify),
        json!({"countermodel": certificate}),
    ));
    let dimacs = "p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n";
    let cnf = invoke_in(runtime, experiment, "sat.cnf.construct", None, json!({"dimacs": dimacs}));
    let cnf_uri = cnf.artifacts[0].uri.clone();
    results.push(cnf);
    results.push(invoke_in(runtime, experiment, "sat.solve", None, json!({"cnf": cnf_uri})));
    results.push(invoke_in(
        runtime,
        experiment,
        "graph.enumerate.nonisomorphic",
        None,
        json!({"order": 7, "family": "trees"}),
    ));
    for result in &results {
        assert_eq!(result.status, Status::Completed, "{}: {:?}", result.capability_id, result.diagnostic);
    }
    results
}

#[test]
fn invocations_are_numbered_and_accounted_within_their_experiment() {
    let (runtime, _dir) = support::runtime();
    let results = run_experiment(&runtime, "exp-accounting");
    let ordinals: Vec<u64> = results.iter().map(|r| r.accounting.ordinal.unwrap()).collect();
    assert_eq!(ordinals, vec![1, 2, 3, 4, 5]);
    assert!(results.iter().all(|r| r.accounting.experiment.as_deref() == Some("exp-accounting")));
    let accounting = resource(&runtime, "experiment://exp-accounting/accounting");
    let total = &accounting["total"];
    assert_eq!(total["invocations"], 5);
    let fuel: u64 = results.iter().map(|r| r.fuel_consumed).sum();
    assert_eq!(total["fuel"], fuel);
    for field in ["logical_bytes", "model_visible_bytes", "wire_bytes", "wall_time_us"] {
        assert!(total[field].as_u64().unwrap() > 0, "{field}");
    }
    // The three byte counts measure different things.
    let (logical, visible, wire) = (
        total["logical_bytes"].as_u64().unwrap(),
        total["model_visible_bytes"].as_u64().unwrap(),
        total["wire_bytes"].as_u64().unwrap(),
    );
    assert!(wire != logical && logical != visible && wire != visible, "{total}");
    assert_eq!(accounting["by_capability"]["sat.solve"]["invocations"], 1);
    assert_eq!(accounting["by_stop_reason"]["COMPLETED"], 5);
    let summary = resource(&runtime, "experiment://exp-accounting");
    assert_eq!(summary["invocations"].as_array().unwrap().len(), 5);
    let scope = resource(&runtime, "experiment://exp-accounting/scope");
    assert_eq!(scope["profile"], "DEFAULT");
    assert!(scope["components"].as_array().unwrap().len() >= 4, "{scope}");
    assert!(scope["contracts"].as_array().unwrap().iter().any(|c| c == "jacobian-archive/1"));
    // Without an explicit id, invocations share the runtime's default experiment.
    let a = support::invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    let b = support::invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n-1 0\n"}));
    assert_eq!(a.accounting.experiment, b.accounting.experiment);
    assert_ne!(a.accounting.experiment.as_deref(), Some("exp-accounting"));
    // A malformed experiment id is a typed request error naming the field.
    let bad = invoke_in(&runtime, "../etc", "sat.cnf.construct", None, json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    let d = bad.diagnostic.unwrap();
    assert_eq!((d.code, d.details["path"].as_str()), (Code::InvalidRequest, Some("experiment")));
    assert!(jacobian::resources::read(&runtime, "experiment://no-such-experiment").is_err());
}

#[test]
fn identical_runs_have_byte_identical_episodes_with_ordinal_traces() {
    let (first, _a) = support::runtime();
    let (second, _b) = support::runtime();
    let left = run_experiment(&first, "exp-left");
    let right = run_experiment(&second, "exp-right");
    for (l, r) in left.iter().zip(&right) {
        let (lt, rt) = (l.transport.as_ref().unwrap(), r.transport.as_ref().unwrap());
        assert_eq!(lt.full_result_digest, rt.full_result_digest, "{}", l.capability_id);
        let bytes = |runtime: &Runtime, uri: &str| jacobian::resources::read(runtime, uri).unwrap().text;
        let uri = |t: &jacobian::contract::Transport| t.full_result_episode_uri.clone().expect("stored");
        let (lb, rb) = (bytes(&first, &uri(lt)), bytes(&second, &uri(rt)));
        assert_eq!(lb, rb);
        let episode: Value = serde_json::from_str(&lb).unwrap();
        let trace = episode["trace"].as_array().unwrap();
        let offsets: Vec<u64> = trace.iter().map(|e| e["offset"].as_u64().unwrap()).collect();
        assert_eq!(offsets, (0..trace.len() as u64).collect::<Vec<_>>());
        assert_eq!(trace.first().unwrap()["event"], "request");
        assert_eq!(trace.last().unwrap()["event"], "stop");
        assert!(!lb.contains("wall_time") && !lb.contains("exp-left"), "no clock or experiment inside an episode");
        assert_eq!(episode["request"]["capability_id"], l.capability_id.as_str());
    }
}

/// Replace the policy file's experiment budgets (the last section) with `section`.
pub fn write_policy_section(dir: &Path, section: &str) {
    let path = dir.join("policy.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let kept = &text[..text.find("[experiments").expect("the default policy lists experiment budgets")];
    std::fs::write(&path, format!("{kept}{section}")).unwrap();
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn spent_experiment_budgets_stop_invocations_with_closed_reasons() {
    let (runtime, dir) = support::runtime();
    drop(runtime);
    write_policy_section(
        dir.path(),
        "\n[experiments]\nfuel = 1\n\n[experiments.max_invocations]\n\"sat.cnf.construct\" = 2\n",
    );
    let runtime = support::open(dir.path().to_path_buf());
    let construct = |experiment: &str, n: u32| {
        invoke_in(&runtime, experiment, "sat.cnf.construct", None, json!({"dimacs": format!("p cnf {n} 1\n1 0\n")}))
    };
    // The fuel budget: the first call may cross the line, the next does not run.
    assert_eq!(construct("exp-fuel", 1).status, Status::Completed);
    let artifacts = count_files(&dir.path().join("artifacts"));
    let stopped = construct("exp-fuel", 2);
    let d = stopped.diagnostic.unwrap();
    assert_eq!(d.code, Code::ExperimentBudgetSpent);
    assert_eq!(d.details["stop_reason"], "EXPERIMENT_FUEL_SPENT");
    assert_eq!(stopped.accounting.stop_reason, Some(StopReason::ExperimentFuelSpent));
    assert_eq!(stopped.fuel_consumed, 0, "it did not run");
    assert_eq!(count_files(&dir.path().join("artifacts")), artifacts, "nothing stored");
    // Another experiment is unaffected.
    assert_eq!(construct("exp-other", 3).status, Status::Completed);
    drop(runtime);

    // The invocation cap alone (fuel unlimited).
    let text = std::fs::read_to_string(dir.path().join("policy.toml")).unwrap().replace("fuel = 1\n", "");
    std::fs::write(dir.path().join("policy.toml"), text).unwrap();
    let runtime = support::open(dir.path().to_path_buf());
    let construct = |n: u32| {
        invoke_in(&runtime, "exp-cap", "sat.cnf.construct", None, json!({"dimacs": format!("p cnf {n} 1\n1 0\n")}))
    };
    assert_eq!(construct(4).status, Status::Completed);
    assert_eq!(construct(5).status, Status::Completed);
    let capped = construct(6);
    assert_eq!(capped.diagnostic.unwrap().details["stop_reason"], "INVOCATION_CAP_REACHED");
    // Other capabilities still run in the same experiment.
    let dimacs = "p cnf 1 1\n1 0\n";
    let cnf = invoke_in(&runtime, "exp-cap", "sat.cnf.construct", None, json!({"dimacs": dimacs}));
    assert!(cnf.diagnostic.is_some(), "still capped");
    let summary = resource(&runtime, "experiment://exp-cap/accounting");
    assert_eq!(summary["by_stop_reason"]["COMPLETED"], 2);
    assert_eq!(summary["by_stop_reason"]["INVOCATION_CAP_REACHED"], 2);
    // The cap survives a restart (it is counted from the store).
    drop(runtime);
    let runtime = support::open(dir.path().to_path_buf());
    let again = invoke_in(&runtime, "exp-cap", "sat.cnf.construct", None, json!({"dimacs": "p cnf 9 1\n1 0\n"}));
    assert_eq!(again.accounting.stop_reason, Some(StopReason::InvocationCapReached));
}

#[test]
fn cancelling_a_running_invocation_interrupts_the_guest_and_stores_nothing() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    let runtime = support::open(dir.path().to_path_buf());
    // Cancelled at its first progress report: while the guest runs, whatever the machine's speed.
    let control = CallControl::default();
    let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut with_progress = control.clone();
    let (sink, canceller) = (reports.clone(), control.clone());
    with_progress.progress = Some(Arc::new(move |used, total| {
        sink.lock().unwrap().push((used, total));
        canceller.cancel();
    }));
    let artifacts = count_files(&dir.path().join("artifacts"));
    let request = InvokeRequest {
        capability_id: "test.hostile.attack".into(),
        input: json!({"attack": "loop"}),
        experiment: Some("exp-cancel".into()),
        ..Default::default()
    };
    let result = runtime.invoke_cancellable(&request, &with_progress);
    let d = result.diagnostic.as_ref().expect("cancelled");
    // Without cancellation the loop would end FUEL_EXHAUSTED, having spent its whole budget.
    assert_eq!(d.code, Code::Cancelled, "{}", d.message);
    let budget = result.provenance.as_ref().unwrap().budgets.fuel;
    assert!(result.fuel_consumed < budget, "interrupted before its budget: {} of {budget}", result.fuel_consumed);
    assert_eq!(result.accounting.stop_reason, Some(StopReason::Cancelled));
    assert!(!result.transport.as_ref().unwrap().stored, "no episode is stored for a cancelled call");
    assert_eq!(count_files(&dir.path().join("artifacts")), artifacts);
    let progress = reports.lock().unwrap().clone();
    assert!(!progress.is_empty(), "progress was reported while the guest ran");
    assert!(progress.windows(2).all(|w| w[0].0 <= w[1].0), "fuel used only grows: {progress:?}");
    let accounting = resource(&runtime, "experiment://exp-cancel/accounting");
    assert_eq!(accounting["by_stop_reason"]["CANCELLED"], 1);
    assert!(accounting["invocations"][0]["episode"].is_null());
    // The runtime still serves.
    let after = support::invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    assert_eq!(after.status, Status::Completed);
}

#[test]
fn cancellation_stops_guests_that_spend_host_time_or_bulk_memory_work_for_little_fuel() {
    // A call is stopped at its next fuel yield or host call. Neither attack
    // spends much fuel on code: one loops over host calls, the other over
    // 16 MiB `memory.fill`s. Both run for many seconds under the default
    // budget, and both must be stopped promptly.
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    let runtime = support::open(dir.path().to_path_buf());
    for attack in ["host_time", "bulk_fill"] {
        // Neither ends on its own: the answer comes only if the call is stopped.
        let control = CallControl::default();
        let canceller = cancel_after(&control, Duration::from_millis(300));
        let request = InvokeRequest {
            capability_id: "test.hostile.attack".into(),
            input: json!({"attack": attack, "argument": "forever"}),
            ..Default::default()
        };
        let result = answered(&runtime, request, control);
        canceller.join().unwrap();
        let d = result.diagnostic.as_ref().expect("cancelled");
        assert_eq!(d.code, Code::Cancelled, "{attack}: {}", d.message);
        let budget = result.provenance.as_ref().unwrap().budgets.fuel;
        assert!(result.fuel_consumed < budget, "{attack}: stopped before its budget");
    }
    // What makes the bulk work stoppable: it is charged per byte, so it
    // reaches a fuel yield as often as ordinary code does.
    let filled = support::invoke(
        &runtime,
        "test.hostile.attack",
        Mode::Explore,
        json!({"attack": "bulk_fill", "argument": "8"}),
    );
    assert_eq!(filled.status, Status::Completed, "{:?}", filled.diagnostic);
    let fuel = filled.accounting.fuel_consumed;
    // At least a fuel per byte; under two, so a `memory.fill` charged per
    // byte and not a byte loop (several instructions per byte).
    assert!((8 << 24..8 << 25).contains(&fuel), "8 fills of 16 MiB cost about a fuel per byte: {fuel}");
}

#[test]
fn a_guest_that_sleeps_is_answered_at_once_not_after_the_hosts_time() {
    // WASI's sleeps would wait on the host's real clock inside one host call,
    // out of reach of cancellation; under the sandbox's frozen clocks every
    // deadline has already passed.
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    let runtime = support::open(dir.path().to_path_buf());
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = support::invoke(&runtime, "test.hostile.attack", Mode::Explore, json!({"attack": "sleep"}));
        send.send(result).ok();
    });
    let result = receive.recv_timeout(Duration::from_secs(60)).expect("a sleep of an hour ends at once");
    assert_eq!(result.status, Status::Completed, "{:?}", result.diagnostic);
    assert_eq!(result.output.as_ref().unwrap()["result"], "slept");
}

/// The answer to `request` under `control`, from a call on another thread.
/// A call that is never stopped fails the test (after a liveness bound far
/// above any machine's speed) rather than hanging the suite.
fn answered(runtime: &Arc<Runtime>, request: InvokeRequest, control: CallControl) -> CapabilityResult {
    let (send, receive) = std::sync::mpsc::channel();
    let runtime = runtime.clone();
    std::thread::spawn(move || send.send(runtime.invoke_cancellable(&request, &control)).ok());
    receive.recv_timeout(Duration::from_secs(600)).expect("the call was stopped")
}

/// Cancel `control` from another thread after `delay` (a trigger, not an assertion).
fn cancel_after(control: &CallControl, delay: Duration) -> std::thread::JoinHandle<()> {
    let control = control.clone();
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        control.cancel();
    })
}

/// `jacobian ARGS…` with its exit code, stdout and stderr.
fn jacobian(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(BIN).args(args).output().expect("run jacobian");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn archive_of(dir: &Path, experiment: &str) -> (std::path::PathBuf, Value) {
    let file = dir.join(format!("{experiment}.json"));
    let data = dir.join("data");
    let (code, _, stderr) =
        jacobian(&["--data-dir", data.to_str().unwrap(), "archive", experiment, "--out", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    (file, value)
}

#[test]
fn archives_replay_byte_identically_and_verify_offline_and_tampering_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let runtime = support::open(work.path().join("data"));
    run_experiment(&runtime, "exp-archive");
    drop(runtime);
    let (file, archive) = archive_of(work.path(), "exp-archive");
    assert_eq!(archive["format"], "jacobian-archive/1");
    assert_eq!(archive["episodes"].as_array().unwrap().len(), 5);
    assert!(archive["pack_hash"].as_str().unwrap().starts_with("sha256:"));
    // Archiving is stable: the same experiment packs to the same hash.
    let (_, again) = archive_of(work.path(), "exp-archive");
    assert_eq!(archive["pack_hash"], again["pack_hash"]);

    // Replay from the archive alone (the CLI uses a fresh temporary data directory).
    let (code, stdout, stderr) = jacobian(&["replay", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["identical"], true);
    assert_eq!((report["replayed"].as_u64(), report["skipped"].as_u64()), (Some(5), Some(0)));
    // Pinning the pack hash: the right one passes, any other is refused.
    let pinned = archive["pack_hash"].as_str().unwrap();
    assert_eq!(jacobian(&["replay", file.to_str().unwrap(), "--expect-pack-hash", pinned]).0, 0);
    let other = format!("sha256:{}", "0".repeat(64));
    assert_eq!(jacobian(&["replay", file.to_str().unwrap(), "--expect-pack-hash", &other]).0, 2);
    assert!(report["episodes"].as_array().unwrap().iter().all(|e| e["outcome"] == "IDENTICAL"));

    // Checkers re-run offline: the countermodel's and the LRAT proof's certificates, and the VERIFY episode.
    let (code, stdout, stderr) = jacobian(&["verify", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let verdicts: Value = serde_json::from_str(&stdout).unwrap();
    let verdicts = verdicts["verdicts"].as_array().unwrap().clone();
    assert!(verdicts.len() >= 3, "{verdicts:?}");
    assert!(verdicts.iter().all(|v| v["status"] == "VERIFIED"), "{verdicts:?}");
    assert!(verdicts.iter().any(|v| v["matches_archive"] == true));
    assert!(verdicts.iter().any(|v| v["capability_id"] == "sat.solve"));

    // One tampered byte anywhere is refused, naming the field that failed.
    let text = std::fs::read_to_string(&file).unwrap();
    let component = archive["components"].as_object().unwrap().keys().next().unwrap().clone();
    let artifact = archive["artifacts"].as_object().unwrap().keys().next().unwrap().clone();
    let flip_in = |key: &str| -> String {
        // Flip one base64 character in the middle of the value stored under `key`.
        let start = text.find(&format!("\"{key}\":\"")).unwrap() + key.len() + 4;
        let at = start + 40;
        let mut bytes = text.clone().into_bytes();
        bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
        String::from_utf8(bytes).unwrap()
    };
    let episode_count = archive["episodes"][4]["episode"]["output"]["count"].as_u64().unwrap();
    assert_eq!(episode_count, 11, "OEIS A000055(7)");
    let needle = format!("\"count\":{episode_count},\"family\"");
    let tampered_episode = text.replacen(&needle, &format!("\"count\":{},\"family\"", episode_count + 1), 1);
    assert_ne!(tampered_episode, text);
    let tampered_hash = {
        let hash = archive["pack_hash"].as_str().unwrap();
        let last = hash.chars().last().unwrap();
        text.replace(hash, &format!("{}{}", &hash[..hash.len() - 1], if last == '0' { '1' } else { '0' }))
    };
    for (tampered, field) in [
        (flip_in(&component), format!("components.{component}")),
        (flip_in(&artifact), format!("artifacts.{artifact}")),
        (tampered_episode, "episodes.4.episode".to_owned()),
        (tampered_hash, "pack_hash".to_owned()),
    ] {
        let bad = work.path().join("tampered.json");
        std::fs::write(&bad, tampered).unwrap();
        for command in ["replay", "verify"] {
            let (code, stdout, stderr) = jacobian(&[command, bad.to_str().unwrap()]);
            assert_eq!(code, 2, "{command} {field}: {stdout}");
            let envelope: Value = serde_json::from_str(stderr.trim()).expect("the error envelope");
            assert_eq!(envelope["error_type"], "archive_invalid");
            assert!(envelope["error"].as_str().unwrap().starts_with(&format!("{field}:")), "{field}: {envelope}");
            assert!(envelope["request_id"].is_null());
        }
    }
}

#[test]
fn compare_reports_a_typed_byte_stable_field_diff_of_payloads() {
    let work = tempfile::tempdir().unwrap();
    let runtime = support::open(work.path().join("data"));
    let six =
        invoke_in(&runtime, "exp-c", "graph.enumerate.nonisomorphic", None, json!({"order": 6, "family": "trees"}));
    let seven =
        invoke_in(&runtime, "exp-c", "graph.enumerate.nonisomorphic", None, json!({"order": 7, "family": "trees"}));
    let episode = |r: &CapabilityResult| {
        let uri = r.transport.as_ref().unwrap().full_result_episode_uri.clone().expect("stored");
        jacobian::resources::read(&runtime, &uri).unwrap().text
    };
    let (a, b) = (work.path().join("a.json"), work.path().join("b.json"));
    std::fs::write(&a, episode(&six)).unwrap();
    std::fs::write(&b, episode(&seven)).unwrap();
    let (code, same, _) = jacobian(&["compare", a.to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<Value>(&same).unwrap(), json!({"identical": true, "diffs": []}));
    let (code, first, _) = jacobian(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 1);
    let (_, second, _) = jacobian(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(first, second, "byte-stable");
    let diff: Value = serde_json::from_str(&first).unwrap();
    let fields: Vec<&str> = diff["diffs"].as_array().unwrap().iter().map(|d| d["field"].as_str().unwrap()).collect();
    assert!(fields.contains(&"output.count") && fields.contains(&"request.input.order"), "{fields:?}");
    let count = diff["diffs"].as_array().unwrap().iter().find(|d| d["field"] == "output.count").unwrap();
    assert_eq!((count["left"].as_u64(), count["right"].as_u64()), (Some(6), Some(11)));
    let mut sorted = fields.clone();
    sorted.sort();
    assert_eq!(fields, sorted, "diffs in path order");
    // A missing file is the error envelope, not a backtrace (exit 3: an error, not an answer).
    let (code, _, stderr) = jacobian(&["compare", "/nonexistent/a.json", b.to_str().unwrap()]);
    assert_eq!(code, 3);
    let envelope: Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(envelope["error_type"], "not_found");
}

#[test]
fn an_archive_cannot_authorize_its_own_checkers() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let runtime = support::open(data.clone());
    // The operator authorizes the bundled LRAT checker explicitly and turns off the bundled default.
    let lrat = runtime.catalog().get("sat.certificate.verify").map(|e| e.component).expect("the bundled LRAT checker");
    runtime
        .update_policy(|p| {
            p.checkers.authorize_bundled = false;
            p.authorize("sat.certificate", lrat);
        })
        .unwrap();
    let dimacs = "p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n";
    let cnf =
        invoke_in(&runtime, "exp-trust", "sat.cnf.construct", None, json!({"dimacs": dimacs})).artifacts[0].uri.clone();
    let solved = invoke_in(&runtime, "exp-trust", "sat.solve", None, json!({"cnf": cnf}));
    let certificate = solved.check_with.unwrap().certificate_artifact.unwrap();
    let verified = invoke_in(
        &runtime,
        "exp-trust",
        "sat.certificate.verify",
        Some(Mode::Verify),
        json!({"cnf": cnf, "certificate": certificate}),
    );
    assert_eq!(verified.verification.unwrap().status, jacobian::contract::VerificationStatus::Verified);
    drop(runtime);
    let (file, _) = archive_of(work.path(), "exp-trust");
    // Offline, the archive's own authorization is not trusted: the verdict is not reproduced.
    let (code, stdout, _) = jacobian(&["replay", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let different = &report["episodes"][2];
    assert_eq!(different["outcome"], "DIFFERENT");
    assert!(different["diffs"].as_array().unwrap().iter().any(|d| d["field"] == "verification.status"));
    // The reviewer grants it: byte-identical.
    let grant = format!("sat.certificate={lrat}");
    let (code, stdout, _) = jacobian(&["replay", file.to_str().unwrap(), "--authorize", &grant]);
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn calls_refused_as_overloaded_do_not_use_up_an_invocation_cap() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    runtime.install(&support::test_guest("echo"), None).unwrap();
    drop(runtime);
    write_policy_section(dir.path(), "[experiments.max_invocations]\n\"test.echo.message\" = 2\n");
    // One slot, one queue place.
    let runtime = support::open_with_queue(dir.path().to_path_buf(), 1, 1);
    let request = |capability_id: &str, input: Value, experiment: &str| InvokeRequest {
        capability_id: capability_id.into(),
        mode: None,
        input,
        budget: None,
        view: None,
        experiment: Some(experiment.into()),
        tenant: None,
    };
    let echo = |experiment: &str, control: &CallControl| {
        runtime.invoke_cancellable(&request("test.echo.message", json!({"message": "hi"}), experiment), control)
    };
    let busy = CallControl::default();
    let queued = CallControl::default();
    std::thread::scope(|scope| {
        // A long call holds the slot until it is cancelled.
        let holder = scope.spawn(|| {
            runtime.invoke_cancellable(&request("test.hostile.attack", json!({"attack": "loop"}), "other"), &busy)
        });
        let occupied = |want: (u32, u32)| {
            while runtime.sandbox().occupancy() != want {
                std::thread::yield_now();
            }
        };
        occupied((1, 0));
        // A queued echo, cancelled while it waits: it leaves the queue at once.
        let waiter = scope.spawn(|| echo("capped", &queued));
        occupied((1, 1));
        // The queue is full now: the next call is refused at once.
        let refused = echo("capped", &CallControl::default());
        assert_eq!(serde_json::to_value(refused.diagnostic.unwrap().code).unwrap(), "OVERLOADED");
        queued.cancel.store(true, std::sync::atomic::Ordering::SeqCst);
        let cancelled = waiter.join().unwrap();
        assert_eq!(serde_json::to_value(cancelled.diagnostic.unwrap().code).unwrap(), "CANCELLED");
        busy.cancel.store(true, std::sync::atomic::Ordering::SeqCst);
        holder.join().unwrap();
    });
    // The cancelled call counts (as every cancellation does, and as a restart
    // would count it); the refused one does not: the cap of two admits one more.
    let ran = echo("capped", &CallControl::default());
    assert_eq!(ran.diagnostic, None);
    let capped = echo("capped", &CallControl::default());
    assert_eq!(serde_json::to_value(capped.diagnostic.unwrap().code).unwrap(), "EXPERIMENT_BUDGET_SPENT");
}
