//! Every host-side cost is bounded, enforced before the work, named in the
//! error, and tested at its boundary: a request or a component can make the
//! host do only bounded work.

use jacobian::contract::{Code, InvokeRequest, Status};
use jacobian::experiments::StopReason;
use jacobian_guest::protocol::Mode;
use serde_json::json;

use crate::mcp_http::resident_kib;
use crate::support::{self, invoke};

/// Without anyone cancelling it, a call that spends host time instead of fuel
/// is stopped at the operator's wall-clock ceiling, typed, and stores nothing.
#[test]
fn a_call_past_the_wall_clock_ceiling_is_stopped_typed_and_not_stored() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    let runtime = support::open(dir.path().to_path_buf());
    runtime.update_policy(|p| p.budgets.wall_ms = 300).unwrap();
    for attack in ["host_time", "bulk_fill"] {
        let result = runtime.invoke(&InvokeRequest {
            capability_id: "test.hostile.attack".into(),
            input: json!({"attack": attack, "argument": "forever"}),
            experiment: Some("deadline".into()),
            ..Default::default()
        });
        let d = result.diagnostic.as_ref().expect("stopped");
        assert_eq!(d.code, Code::DeadlineExceeded, "{attack}: {}", d.message);
        assert_eq!(d.details["wall_ms"], 300, "{attack}");
        assert!(d.message.contains("300 ms") && d.suggestion.contains("not replayable"), "{attack}: {d:?}");
        assert_eq!(result.accounting.stop_reason, Some(StopReason::Cancelled), "{attack}");
    }
    let lines = runtime.experiments().invocations("deadline").unwrap();
    assert!(lines.iter().all(|l| l.stop_reason == StopReason::Cancelled && l.episode.is_none()), "{lines:?}");
    // The host keeps serving, and an ordinary call is not affected.
    let after = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    assert_eq!(after.status, Status::Completed);
    // The ceiling is the operator's, checked when the policy is read.
    let error =
        jacobian::policy::Policy::parse("[budgets]\nfuel = 1\nmemory_bytes = 1\noutput_bytes = 1\nwall_ms = 0\n", 1)
            .unwrap_err();
    assert_eq!(error.to_string(), "policy file: budgets.wall_ms must be positive");
}

fn refusal(runtime: &jacobian::Runtime, id: &str, input: serde_json::Value) -> jacobian::contract::Diagnostic {
    let result = runtime.invoke(&InvokeRequest { capability_id: id.into(), input, ..Default::default() });
    result.diagnostic.unwrap_or_else(|| panic!("refused: {:?}", result.output))
}

/// Artifact references are counted, and the sizes of what they name summed
/// from the store, before any artifact is read: thousands of copies of one
/// large artifact's URI cost the host nothing.
#[test]
fn artifact_references_are_bounded_in_number_and_bytes_before_any_is_read() {
    use jacobian::limits::{MAX_ARTIFACT_BYTES, MAX_ARTIFACT_REFERENCES};
    let (runtime, _dir) = support::runtime();
    let cnf = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    let uri = cnf.artifacts[0].uri.clone();
    // At the limit the references pass (and the schema, which allows no extra field, refuses).
    let at = json!({"cnf": uri, "extra": vec![uri.clone(); MAX_ARTIFACT_REFERENCES - 1]});
    assert_eq!(refusal(&runtime, "sat.solve", at).code, Code::InvalidInput);
    let over = json!({"cnf": uri, "extra": vec![uri.clone(); MAX_ARTIFACT_REFERENCES]});
    let d = refusal(&runtime, "sat.solve", over);
    assert_eq!((d.code, d.details["path"].clone()), (Code::Oversized, json!("input")), "{}", d.message);
    assert_eq!(d.details["limit"], MAX_ARTIFACT_REFERENCES);
    // Bytes: two artifacts of half the limit each pass; a third byte-sized one crosses it.
    let half = MAX_ARTIFACT_BYTES as usize / 2;
    let big = |fill: u8| {
        let mut bytes = vec![b' '; half];
        bytes[0] = b'"';
        bytes[half - 1] = b'"';
        bytes[1] = fill;
        runtime.data().put_canonical(&bytes).unwrap().artifact_uri()
    };
    let (a, b) = (big(b'a'), big(b'b'));
    let small = runtime.data().put_canonical(b"1").unwrap().artifact_uri();
    assert_eq!(refusal(&runtime, "sat.solve", json!({"cnf": a, "more": [b]})).code, Code::InvalidInput);
    let d = refusal(&runtime, "sat.solve", json!({"cnf": a, "more": [b, small]}));
    assert_eq!((d.code, d.details["path"].clone()), (Code::Oversized, json!("input.more.1")), "{}", d.message);
    assert_eq!(d.details["limit"], MAX_ARTIFACT_BYTES);
}

/// A capability id longer than any, and an input nested deeper than any
/// capability takes, are refused before any lookup or validation.
#[test]
fn ids_and_nesting_are_bounded_before_lookup() {
    use jacobian::limits::{MAX_ID_BYTES, MAX_JSON_DEPTH};
    let (runtime, _dir) = support::runtime();
    let d = refusal(&runtime, &"a".repeat(MAX_ID_BYTES), json!({}));
    assert_eq!(d.code, Code::CapabilityNotFound, "at the limit the id is looked up");
    let d = refusal(&runtime, &"a".repeat(1 << 20), json!({}));
    assert_eq!((d.code, d.details["path"].clone()), (Code::InvalidRequest, json!("capability_id")));
    assert!(d.message.len() < 200, "the id is not echoed: {}", d.message);
    let result = runtime.invoke(&InvokeRequest { capability_id: "a".repeat(1 << 20), ..Default::default() });
    assert_eq!(result.capability_id, format!("{}…", "a".repeat(MAX_ID_BYTES)), "the result echoes a prefix");
    let nested = |depth: usize| (0..depth).fold(json!(1), |inner, _| json!([inner]));
    let d = refusal(&runtime, "sat.solve", json!({"cnf": nested(MAX_JSON_DEPTH - 1)}));
    assert_eq!(d.code, Code::InvalidInput, "at the limit the input reaches validation");
    let d = refusal(&runtime, "sat.solve", json!({"cnf": nested(MAX_JSON_DEPTH)}));
    assert_eq!((d.code, d.details["path"].clone()), (Code::Oversized, json!("input")), "{}", d.message);
}

/// An archive built for an MCP reader stops as soon as what it would carry
/// passes its bound, before reading the rest; the CLI has no such bound.
#[test]
fn an_archive_is_refused_past_its_bound_before_the_rest_is_read() {
    use jacobian::archive::{Archive, ArchiveErrorKind};
    let (runtime, _dir) = support::runtime();
    let experiment = "bounded-archive";
    let result = runtime.invoke(&InvokeRequest {
        capability_id: "sat.cnf.construct".into(),
        input: json!({"dimacs": "p cnf 2 1\n1 2 0\n"}),
        experiment: Some(experiment.into()),
        ..Default::default()
    });
    assert_eq!(result.status, Status::Completed);
    let whole = Archive::build(&runtime, experiment).expect("unbounded");
    let carried: u64 = whole.components.values().chain(whole.artifacts.values()).map(|b| b.len() as u64 * 3 / 4).sum();
    let error = Archive::build_within(&runtime, experiment, carried / 2).expect_err("refused");
    assert_eq!(error.kind, ArchiveErrorKind::TooLarge);
    assert!(error.reason.contains("jacobian archive"), "{}", error.reason);
    let within = Archive::build_within(&runtime, experiment, carried * 2).expect("within its bound");
    assert_eq!(within.pack_hash, whole.pack_hash);
}

/// Every attack of the hostile guest costs the host only what it keeps: the
/// resident memory of the process running the call (`jacobian invoke`, alone
/// in its process) stays within the call's memory budget plus a constant,
/// sampled while it runs, and the call ends in its typed answer. Among them
/// 16 MiB strings sent to the host again and again (each lifted line was
/// once copied whole and kept at its full capacity: gigabytes) and pollables
/// made and never dropped (the resource table stops them at 4,096).
#[test]
fn component_attacks_cost_the_host_only_their_budget_and_a_constant() {
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    runtime.update_policy(|p| p.budgets.wall_ms = 3000).unwrap();
    let budget_kib = runtime.policy().budgets.memory_bytes / 1024;
    drop(runtime);
    /// What the host may hold beyond the call's memory: the runtime, the log's 256 lines of 1 KiB, the pool's slack.
    const SLACK_KIB: u64 = 128 << 10;
    let completed = "\"COMPLETED\"";
    // An endless attack ends at its fuel or at the wall-clock ceiling, whichever this machine
    // reaches first (bulk memory work is charged fuel per byte): either is its typed answer.
    let stopped: &[&str] = &["DEADLINE_EXCEEDED", "FUEL_EXHAUSTED"];
    let attacks: [(&str, &str, &[&str]); 7] = [
        ("host_time", "forever", stopped),
        ("subscribe_storm", "forever", &["GUEST_TRAP"]),
        ("bulk_fill", "forever", stopped),
        // Refused memory, then the guest's allocator gives up (a typed memory failure) or spins.
        ("memory", "", &["MEMORY_LIMIT", "DEADLINE_EXCEEDED", "FUEL_EXHAUSTED"]),
        ("grow_storm", "", &[completed]),
        ("log_flood", "", &[completed]),
        ("loop", "", stopped),
    ];
    for (attack, argument, expected) in attacks {
        let input = dir.path().join("attack.json");
        let argument = if argument.is_empty() { json!(null) } else { json!(argument) };
        std::fs::write(&input, json!({"attack": attack, "argument": argument}).to_string()).unwrap();
        // The answer (with its 256 log lines) goes to a file: a pipe nobody reads until the end would fill.
        let answer = dir.path().join("answer.json");
        let mut child = std::process::Command::new(support::BIN)
            .arg("--data-dir")
            .arg(dir.path())
            .args(["invoke", "test.hostile.attack", "--mode", "EXPLORE", "--input"])
            .arg(&input)
            .stdout(std::fs::File::create(&answer).unwrap())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut peak = 0;
        while child.try_wait().unwrap().is_none() {
            peak = peak.max(resident_kib(child.id()));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let out = std::fs::read_to_string(&answer).unwrap();
        assert!(expected.iter().any(|e| out.contains(e)), "{attack}: {}", &out[..out.len().min(2000)]);
        assert!(peak > 0, "{attack}: sampled");
        assert!(
            peak <= budget_kib + SLACK_KIB,
            "{attack}: resident {peak} KiB, above the call's {budget_kib} KiB plus {SLACK_KIB} KiB"
        );
    }
}

/// A call holds at most `MAX_RESOURCES` host resources at once: a guest
/// keeping pollables it never drops completes below the cap and traps past it.
#[test]
fn the_resource_table_is_bounded() {
    use jacobian::engine::MAX_RESOURCES;
    let (runtime, dir) = support::runtime();
    runtime.install(&support::test_guest("hostile"), None).unwrap();
    drop(runtime);
    let runtime = support::open(dir.path().to_path_buf());
    let storm = |rounds: usize| {
        runtime.invoke(&InvokeRequest {
            capability_id: "test.hostile.attack".into(),
            input: json!({"attack": "subscribe_storm", "argument": rounds.to_string()}),
            ..Default::default()
        })
    };
    // Each pollable of `subscribe-duration` takes two places: the pollable and its deadline.
    let below = storm(MAX_RESOURCES / 2 - 64);
    assert_eq!(below.status, Status::Completed, "{:?}", below.diagnostic);
    let over = storm(MAX_RESOURCES / 2 + 64);
    assert_eq!(over.diagnostic.map(|d| d.code), Some(Code::GuestTrap));
}

/// A workspace holds a bounded number of cards: the write that would pass
/// the limit is refused whole and names it; earlier revisions are still read
/// exactly (from the nearest snapshot, not from rev-0).
#[test]
fn a_workspace_grows_to_its_limit_and_no_further() {
    use jacobian::workspace::model::MAX_ITEMS;
    use jacobian::workspace::wire::{OpenRequest, WriteRequest};
    let (runtime, _dir) = support::runtime();
    let open: OpenRequest =
        serde_json::from_value(json!({"idempotency_key": "grow", "title": "grow", "statement": ""})).unwrap();
    let ws = runtime.workspaces().open(runtime.data(), &open).unwrap().workspace_id;
    let write = |revision: usize, count: usize| {
        let entries: Vec<serde_json::Value> = (0..count)
            .map(|i| json!({"type": "finding", "kind": "CLAIM", "title": format!("r{revision} f{i}")}))
            .collect();
        let request: WriteRequest =
            serde_json::from_value(json!({"workspace_id": ws, "base_revision": format!("rev-{revision}"),
            "idempotency_key": format!("w{revision}-{count}"), "entries": entries}))
            .unwrap();
        runtime.workspaces().write(runtime.data(), &request)
    };
    // The goal card and 99 writes of 100 findings leave room for exactly 99 more.
    for revision in 0..99 {
        write(revision, 100).unwrap();
    }
    let room = MAX_ITEMS - 1 - 99 * 100;
    let refused = write(99, room + 1).unwrap_err();
    assert_eq!((refused.code, refused.details["path"].clone()), (Code::Oversized, json!("entries")));
    assert!(refused.message.contains(&MAX_ITEMS.to_string()), "{}", refused.message);
    write(99, room).expect("up to the limit");
    let head = runtime.workspaces().state(runtime.data(), &ws, None).unwrap();
    assert_eq!(head.cards.len(), MAX_ITEMS);
    for revision in [1, 63, 64, 65, 99] {
        let old = runtime.workspaces().state(runtime.data(), &ws, Some(revision)).unwrap();
        assert_eq!((old.revision, old.cards.len() as u64), (revision, 1 + 100 * revision.min(99)), "rev-{revision}");
    }
}
