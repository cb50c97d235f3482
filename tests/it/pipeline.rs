//! The invoke pipeline's invariant: a request refused by `resolve` or
//! `validate` admits nothing, reserves nothing and stores nothing, on the
//! data directory's SQLite store and on a shared PostgreSQL store.

use std::path::Path;

use jacobian::contract::{BudgetRequest, Code, InvokeRequest, Stage, Status};
use jacobian::experiments::StopReason;
use jacobian::store::StoreConfig;
use jacobian::{Runtime, RuntimeConfig};
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support;

const EXPERIMENT: &str = "exp-invalid";

/// 1,000 requests that `resolve` or `validate` refuse, each with the code,
/// stage and path it must be refused with.
fn invalid_requests(cnf: &str) -> Vec<(InvokeRequest, Code, Stage, &'static str)> {
    let request = |id: &str, input: Value| InvokeRequest {
        capability_id: id.into(),
        input,
        experiment: Some(EXPERIMENT.into()),
        ..Default::default()
    };
    let long_id = "x".repeat(1 << 20);
    let missing = format!("artifact://sha256/{}", "ab".repeat(32));
    let mut requests = Vec::new();
    for i in 0..250 {
        let mut unknown = long_id.clone();
        unknown.push_str(&i.to_string());
        requests.push((request(&unknown, json!({})), Code::InvalidRequest, Stage::Request, "capability_id"));
        requests.push((
            request("sat.cnf.construct", json!({"dimacs": "p cnf 1 1\n1 0\n", "extra": i})),
            Code::InvalidInput,
            Stage::Validation,
            "input.extra",
        ));
        requests.push((
            request("sat.solve", json!({"cnf": missing})),
            Code::ArtifactNotFound,
            Stage::Validation,
            "input.cnf",
        ));
        let mut over = request("sat.solve", json!({"cnf": cnf}));
        over.budget = Some(BudgetRequest { fuel: Some(u64::MAX - i), ..Default::default() });
        requests.push((over, Code::BudgetExceedsPolicy, Stage::Policy, "budget.fuel"));
    }
    requests
}

fn cnf(runtime: &Runtime) -> String {
    let result = support::invoke(runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    result.artifacts[0].uri.clone()
}

/// Send every invalid request and check each refusal.
fn refuse_all(runtime: &Runtime, cnf: &str) {
    let requests = invalid_requests(cnf);
    assert_eq!(requests.len(), 1000);
    for (request, code, stage, path) in &requests {
        let result = runtime.invoke(request);
        let d = result.diagnostic.as_ref().expect("refused");
        assert_eq!((d.code, d.stage, d.details["path"].as_str()), (*code, *stage, Some(*path)), "{}", d.message);
        assert!(d.message.len() < 4096, "a 1 MiB id is not quoted back whole: {} bytes", d.message.len());
        let transport = result.transport.as_ref().expect("every result has its transport");
        assert!(!transport.stored && transport.full_result_episode_uri.is_none(), "no episode");
        assert!(transport.output_complete_in_text && transport.model_visible_bytes == result.text.len() as u64);
        assert_eq!((result.accounting.experiment.as_deref(), result.accounting.ordinal), (None, None));
        assert!(!result.text.is_empty(), "the refusal is readable as text");
    }
    assert!(runtime.experiments().invocations(EXPERIMENT).expect("readable").is_empty());
}

/// A valid `sat.solve` in the experiment; returns its ordinal there.
fn solve(runtime: &Runtime, cnf: &str) -> Option<u64> {
    let valid = runtime.invoke(&InvokeRequest {
        capability_id: "sat.solve".into(),
        input: json!({"cnf": cnf}),
        experiment: Some(EXPERIMENT.into()),
        ..Default::default()
    });
    assert_eq!(valid.status, Status::Completed, "{:?}", valid.diagnostic);
    valid.accounting.ordinal
}

fn sqlite_count(dir: &Path, sql: &str) -> i64 {
    let db = rusqlite::Connection::open(dir.join(jacobian::store::DATABASE_FILE)).expect("jacobian.db");
    db.query_row(sql, [], |row| row.get(0)).expect(sql)
}

#[test]
fn a_thousand_invalid_requests_leave_no_row_episode_or_admission_on_sqlite() {
    let (runtime, dir) = support::runtime();
    // Experiment budgets: every admission counts against them.
    runtime
        .update_policy(|p| {
            p.experiments.fuel = Some(u64::MAX / 2);
            p.experiments.max_invocations.insert("sat.solve".into(), 2);
        })
        .unwrap();
    let cnf = cnf(&runtime);
    let (episodes, tracked) =
        (sqlite_count(dir.path(), "SELECT count(*) FROM episodes"), runtime.experiments().tracked());
    refuse_all(&runtime, &cnf);
    assert_eq!(runtime.experiments().tracked(), tracked, "no experiment entered the admission map");
    assert_eq!(sqlite_count(dir.path(), "SELECT count(*) FROM episodes"), episodes);
    let rows = format!("SELECT count(*) FROM experiment_invocations WHERE experiment = '{EXPERIMENT}'");
    assert_eq!(sqlite_count(dir.path(), &rows), 0);
    // The cap of two sat.solve calls is untouched by 500 refused ones, and
    // the rows and episodes above were observable.
    assert_eq!(solve(&runtime, &cnf), Some(1));
    assert_eq!(solve(&runtime, &cnf), Some(2));
    assert_eq!(sqlite_count(dir.path(), &rows), 2);
    assert_eq!(
        sqlite_count(dir.path(), "SELECT count(*) FROM episodes"),
        episodes + 1,
        "two identical calls, one episode"
    );
    assert_eq!(runtime.experiments().tracked(), tracked + 1);
}

#[test]
fn a_thousand_invalid_requests_leave_no_row_reservation_or_episode_on_postgres() {
    let url = support::postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::open(RuntimeConfig {
        store: StoreConfig::Postgres(url.clone()),
        ..RuntimeConfig::new(dir.path().to_path_buf())
    })
    .expect("runtime on PostgreSQL");
    // With an experiment budget every admission is a reservation row.
    runtime.update_policy(|p| p.experiments.fuel = Some(u64::MAX / 2)).unwrap();
    let db = jacobian::store::postgres::Postgres::connect(&url).unwrap();
    let count = |sql: &str| db.query_i64(sql).unwrap();
    let cnf = cnf(&runtime);
    let rows = format!("SELECT count(*) FROM experiment_invocations WHERE experiment = '{EXPERIMENT}'");
    let episodes = count("SELECT count(*) FROM episodes");
    refuse_all(&runtime, &cnf);
    assert_eq!(count(&rows), 0);
    assert_eq!(count("SELECT count(*) FROM experiment_reservations"), 0);
    assert_eq!(count("SELECT count(*) FROM episodes"), episodes);
    assert_eq!(solve(&runtime, &cnf), Some(1));
    assert_eq!(count(&rows), 1, "the valid call is recorded: the tables above were observable");
    assert_eq!(count("SELECT count(*) FROM experiment_reservations"), 0, "its reservation went with its record");
    assert_eq!(count("SELECT count(*) FROM episodes"), episodes + 1);
}

/// Quick calls answered on one thread share one commit: each call's writes
/// wait for the leader's, nothing is answered before it is written, and a
/// leader cancelled before it wrote still writes the calls that joined it.
#[test]
fn quick_calls_answered_together_are_written_in_one_commit() {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};
    type Call<'a> = Pin<Box<dyn Future<Output = Option<jacobian::contract::CapabilityResult>> + 'a>>;
    let poll = |call: &mut Call<'_>| call.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    let (installing, dir) = support::runtime();
    installing.install(&support::test_guest("echo"), None).expect("echo installs");
    drop(installing);
    let runtime = support::open(dir.path().to_path_buf());
    let requests: Vec<InvokeRequest> = (0..10)
        .map(|i| InvokeRequest {
            capability_id: "test.echo.message".into(),
            input: json!({"message": format!("call {i}")}),
            experiment: Some("grouped".into()),
            ..InvokeRequest::default()
        })
        .collect();
    let lines = || runtime.experiments().invocations("grouped").unwrap().len();
    let mut calls: Vec<Call<'_>> =
        requests[..8].iter().map(|r| Box::pin(runtime.invoke_quick(r)) as Call<'_>).collect();
    // Each runs up to its writes and waits: the first leads.
    for call in &mut calls {
        match poll(call) {
            Poll::Pending => {}
            Poll::Ready(result) => panic!("answered before written: {:?}", result.map(|r| r.text)),
        }
    }
    assert_eq!(lines(), 0, "nothing is written before the leader writes");
    let mut ordinals = Vec::new();
    for (i, call) in calls.iter_mut().enumerate() {
        if i == 1 {
            assert_eq!(lines(), 8, "the leader wrote every call that joined it");
        }
        let Poll::Ready(Some(result)) = poll(call) else { panic!("a quick call is answered once written") };
        assert_eq!(result.status, Status::Completed, "{}", result.text);
        let transport = result.transport.as_ref().filter(|t| t.stored).expect("stored as an episode");
        assert!(runtime.episode(&transport.full_result_digest).unwrap().is_some(), "resolvable when answered");
        ordinals.push(result.accounting.ordinal.expect("an ordinal"));
    }
    assert_eq!(ordinals, (1..=8).collect::<Vec<u64>>());
    assert_eq!(lines(), 8);
    // The leader dropped (its client went away) after the other joined.
    let mut leader: Call<'_> = Box::pin(runtime.invoke_quick(&requests[8]));
    let mut joined: Call<'_> = Box::pin(runtime.invoke_quick(&requests[9]));
    assert!(poll(&mut leader).is_pending());
    assert!(poll(&mut joined).is_pending());
    drop(leader);
    let Poll::Ready(Some(result)) = poll(&mut joined) else { panic!("the call that joined is answered") };
    assert_eq!(result.accounting.ordinal, Some(10));
    assert_eq!(lines(), 10, "the cancelled leader's own writes stand too");
}

/// A call waiting for a group commit has its fuel counted already: a call
/// admitted meanwhile sees a spent experiment budget and does not run.
#[test]
fn a_call_waiting_for_its_commit_counts_against_its_experiment_budget() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let (installing, dir) = support::runtime();
    installing.install(&support::test_guest("echo"), None).expect("echo installs");
    drop(installing);
    crate::operations::write_policy_section(dir.path(), "\n[experiments]\nfuel = 1\n");
    let runtime = support::open(dir.path().to_path_buf());
    let request = |i: u32| InvokeRequest {
        capability_id: "test.echo.message".into(),
        input: json!({"message": format!("call {i}")}),
        experiment: Some("budgeted".into()),
        ..InvokeRequest::default()
    };
    let (first, second) = (request(1), request(2));
    let mut waiting = Box::pin(runtime.invoke_quick(&first));
    assert!(waiting.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
    let mut admitted = Box::pin(runtime.invoke_quick(&second));
    let Poll::Ready(Some(stopped)) = admitted.as_mut().poll(&mut Context::from_waker(Waker::noop())) else {
        panic!("a call past a spent budget is answered at once, without running")
    };
    assert_eq!(stopped.accounting.stop_reason, Some(StopReason::ExperimentFuelSpent));
    assert_eq!(stopped.fuel_consumed, 0);
    let Poll::Ready(Some(ran)) = waiting.as_mut().poll(&mut Context::from_waker(Waker::noop())) else {
        panic!("the first call is answered once written")
    };
    assert_eq!(ran.status, Status::Completed);
}

/// The edge's structured content is built from the members the runtime made
/// for the episode, not by serializing the result again: it must be exactly
/// what serializing the result makes, for a completed call, a guest's own
/// failure, a verifying call, a stop by the call's fuel budget and a refusal.
#[test]
fn structured_content_from_the_episode_members_is_the_result_serialized() {
    let (runtime, _dir) = support::runtime();
    let found = support::invoke(
        &runtime,
        support::SEARCH,
        Mode::Explore,
        json!({"hypotheses": ["commutative"], "target": "associative", "max_order": 3}),
    );
    let certificate = found.check_with.as_ref().and_then(|c| c.certificate_artifact.clone()).expect("certificate");
    let results = [
        support::invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"})),
        support::invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n7 0\n"})),
        support::invoke(&runtime, support::VERIFY, Mode::Verify, json!({"countermodel": certificate})),
        support::invoke_with(
            &runtime,
            support::SEARCH,
            json!({"hypotheses": ["commutative", "quasigroup"], "target": "associative", "max_order": 6}),
            BudgetRequest { fuel: Some(10_000), ..Default::default() },
        ),
        support::invoke(&runtime, "no.such.capability", Mode::Explore, json!({})),
        found,
    ];
    let mut kept = 0;
    for result in results {
        let expected = serde_json::to_value(&result).expect("serializes");
        kept += usize::from(result.members_kept());
        let context = format!("{:?} {:?}", result.status, result.diagnostic.as_ref().map(|d| d.code));
        let tool = jacobian::mcp::invoke_tool_result(result);
        assert_eq!(tool.structured_content, Some(expected), "{context}");
    }
    assert!(kept >= 4, "the stored episodes' members are reused: {kept} of 6");
}
