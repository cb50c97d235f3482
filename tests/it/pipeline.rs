//! The invoke pipeline's invariant: a request refused by `resolve` or
//! `validate` admits nothing, reserves nothing and stores nothing, on the
//! data directory's SQLite store and on a shared PostgreSQL store.

use std::path::Path;

use jacobian::contract::{BudgetRequest, Code, InvokeRequest, Stage, Status};
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
