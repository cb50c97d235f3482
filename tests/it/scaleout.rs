//! Several `jacobian serve --http` hosts sharing one PostgreSQL store: real
//! processes on loopback, a real PostgreSQL server (scripts/test.sh starts it).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

use crate::mcp_http::HttpClient;
use crate::support::{BIN, postgres_database};

const SEARCH: &str = "universal_algebra.search.countermodel";
const VERIFY: &str = "universal_algebra.countermodel.verify";
const ECHO: &str = "test.echo.message";

/// A running `jacobian serve --http` with its own data directory (its code cache).
struct Host {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Host {
    fn start(store: &str) -> Host {
        Host::start_with(store, &[])
    }

    /// Start with more `serve` arguments.
    fn start_with(store: &str, args: &[&str]) -> Host {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(BIN)
            .arg("--data-dir")
            .arg(dir.path())
            .args(["--store", store, "serve", "--http", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn jacobian serve --http");
        let addr = crate::http::ready_addr(&mut child);
        Host { child, addr, _dir: dir }
    }

    fn client(&self) -> HttpClient {
        HttpClient::connect(&self.addr)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An operator's shell on a machine of its own: `jacobian --store URL ARGS…`
/// with a private data directory (its code cache survives between commands).
struct Operator {
    store: String,
    dir: tempfile::TempDir,
}

impl Operator {
    fn new(store: &str) -> Operator {
        Operator { store: store.to_owned(), dir: tempfile::tempdir().unwrap() }
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut command = Command::new(BIN);
        command.arg("--data-dir").arg(self.dir.path()).args(["--store", &self.store]).args(args);
        command.output().unwrap()
    }
}

fn echo_guest() -> PathBuf {
    Path::new(jacobian::bundled::TEST_GUESTS_DIR).join("jacobian_test_echo.wasm")
}

fn finding(title: &str) -> Value {
    json!({"type": "finding", "kind": "CLAIM", "title": title})
}

#[test]
fn two_hosts_share_workspaces_artifacts_experiments_and_checker_authority() {
    let store = postgres_database();
    let operator = Operator::new(&store);
    // An operator installs a component before any host has seen it.
    let installed = operator.run(&["install", echo_guest().to_str().unwrap()]);
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));
    // Two hosts start at once (the operator's install migrated the database;
    // concurrent migrations and policy creation are tested in stores.rs).
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| Host::start(&store));
        let b = scope.spawn(|| Host::start(&store));
        (a.join().unwrap(), b.join().unwrap())
    });
    let (mut on_a, mut on_b) = (a.client(), b.client());

    // workspace.open: the same key on the other host is answered, not repeated.
    let open = json!({"idempotency_key": "open-1", "title": "two hosts", "statement": "s"});
    let (opened, is_error) = on_a.call("workspace.open", open.clone());
    assert!(!is_error, "{opened}");
    assert_eq!(on_b.call("workspace.open", open), (opened.clone(), false));
    let ws = opened["workspace_id"].as_str().unwrap().to_owned();

    // Eight writers against rev-0, four per host, each on its own connection.
    let write = |w: usize| {
        json!({"workspace_id": ws, "base_revision": "rev-0", "idempotency_key": format!("w-{w}"),
               "entries": [finding(&format!("writer {w}"))]})
    };
    let answers: Vec<(usize, Value)> = std::thread::scope(|scope| {
        let tasks: Vec<_> = (0..8)
            .map(|w| {
                let host = if w % 2 == 0 { &a } else { &b };
                let request = write(w);
                scope.spawn(move || (w, host.client().call("workspace.write", request).0))
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let winners: Vec<&(usize, Value)> = answers.iter().filter(|(_, a)| a.get("revision_id").is_some()).collect();
    assert_eq!(winners.len(), 1, "exactly one write wins rev-1 across hosts: {answers:?}");
    for (_, answer) in answers.iter().filter(|(_, a)| a.get("revision_id").is_none()) {
        assert_eq!(answer["diagnostic"]["code"], "REVISION_CONFLICT", "{answer}");
        assert_eq!(answer["diagnostic"]["details"]["current_head"], "rev-1", "{answer}");
    }
    let (winner, won) = winners[0];
    // The winner's retry on the other host gets the same answer; the artifact is there too.
    let other = if winner % 2 == 0 { &mut on_b } else { &mut on_a };
    assert_eq!(other.call("workspace.write", write(*winner)), (won.clone(), false));
    let uri = won["revision_artifact_uri"].as_str().unwrap();
    let artifact: Value = serde_json::from_str(&other.read_resource(uri)).unwrap();
    assert_eq!(artifact["content"]["revision"], "rev-1", "{artifact}");
    let (resumed, _) = other.call("workspace.query", json!({"workspace_id": ws, "view": "RESUME"}));
    assert_eq!(resumed["head_revision_id"], "rev-1", "{resumed}");

    // One experiment across hosts: ordinals and totals sum over both.
    let echo = json!({"capability_id": ECHO, "input": {"message": "hi"}, "experiment": "exp-two-hosts"});
    for on_host_a in [true, false, true] {
        let client = if on_host_a { &mut on_a } else { &mut on_b };
        let (result, is_error) = client.call("capability.invoke", echo.clone());
        assert!(!is_error, "the component installed by the operator runs on every host: {result}");
    }
    let accounting: Value = serde_json::from_str(&on_b.read_resource("experiment://exp-two-hosts/accounting")).unwrap();
    assert_eq!(accounting["total"]["invocations"], 3, "{accounting}");
    let ordinals: Vec<u64> =
        accounting["invocations"].as_array().unwrap().iter().map(|r| r["ordinal"].as_u64().unwrap()).collect();
    assert_eq!(ordinals, [1, 2, 3]);
    // A session started on A continues on B (no stickiness needed): B restores
    // it from the store, and its default experiment is the same on both.
    let session = on_a.session().unwrap().to_owned();
    let (first, _) = on_a.call("capability.invoke", json!({"capability_id": ECHO, "input": {"message": "a"}}));
    let mut moved = HttpClient::resume(&b.addr, &session);
    let (second, is_error) = moved.call("capability.invoke", json!({"capability_id": ECHO, "input": {"message": "b"}}));
    assert!(!is_error, "{second}");
    let experiment = first["accounting"]["experiment"].as_str().unwrap();
    assert_eq!(second["accounting"]["experiment"], experiment, "one session, one experiment, two hosts");
    assert_eq!(second["accounting"]["ordinal"], 2, "{second}");
    // The experiment, run on two hosts, archives from a third machine and
    // replays offline byte for byte.
    let pack = tempfile::tempdir().unwrap();
    let pack_file = pack.path().join("pack.json");
    let archived = operator.run(&["archive", "exp-two-hosts", "--out", pack_file.to_str().unwrap()]);
    assert!(archived.status.success(), "{}", String::from_utf8_lossy(&archived.stderr));
    let replayed = Command::new(BIN).arg("replay").arg(&pack_file).output().unwrap();
    assert!(
        replayed.status.success(),
        "{}{}",
        String::from_utf8_lossy(&replayed.stdout),
        String::from_utf8_lossy(&replayed.stderr)
    );
    // An operator caps the experiment at four echoes: the spend on both hosts counts.
    let policy_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(policy_file.path(), "[experiments.max_invocations]\n\"test.echo.message\" = 4\n").unwrap();
    let set = operator.run(&["policy", "set", policy_file.path().to_str().unwrap()]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    let (fourth, is_error) = on_b.call("capability.invoke", echo.clone());
    assert!(!is_error, "the fourth echo runs: {fourth}");
    let (capped, is_error) = on_a.call("capability.invoke", echo.clone());
    assert!(is_error, "{capped}");
    assert_eq!(capped["accounting"]["stop_reason"], "INVOCATION_CAP_REACHED", "{capped}");
    let bad = operator.run(&["policy", "set", "/dev/null/none"]);
    assert_eq!(bad.status.code(), Some(3));
    std::fs::write(policy_file.path(), "[budgets]\nfuel = \"lots\"\n").unwrap();
    let invalid = operator.run(&["policy", "set", policy_file.path().to_str().unwrap()]);
    assert_eq!(invalid.status.code(), Some(3), "an invalid policy is refused");
    let shown = operator.run(&["policy", "show"]);
    assert!(String::from_utf8_lossy(&shown.stdout).contains("\"test.echo.message\" = 4"), "and changes nothing");

    // A countermodel found on A is verified on B (B reads A's artifact).
    let explore = json!({"capability_id": SEARCH, "input": {"hypotheses": ["commutative"], "target": "associative", "max_order": 2}});
    let (found, _) = on_a.call("capability.invoke", explore);
    let verify = json!({"capability_id": VERIFY, "mode": "VERIFY",
                        "input": {"countermodel": found["check_with"]["certificate_artifact"]}});
    let (verified, _) = on_b.call("capability.invoke", verify.clone());
    assert_eq!(verified["assurance"], "VERIFIED", "{verified}");
    let checker = verified["verification"]["checker_digest"].as_str().unwrap().to_owned();

    // Revoked by an operator on a third machine: refused by both hosts on their next call.
    let revoked = operator.run(&["checkers", "revoke", &checker]);
    assert!(revoked.status.success(), "{}", String::from_utf8_lossy(&revoked.stderr));
    for client in [&mut on_a, &mut on_b] {
        let (refused, _) = client.call("capability.invoke", verify.clone());
        assert_ne!(refused["assurance"], "VERIFIED", "{refused}");
        assert_ne!(refused["verification"]["status"], "VERIFIED", "{refused}");
    }
}

#[test]
fn a_host_killed_mid_write_loses_nothing_acknowledged_and_the_other_keeps_serving() {
    let store = postgres_database();
    let (a, b) = (Host::start(&store), Host::start(&store));
    let (opened, _) =
        a.client().call("workspace.open", json!({"idempotency_key": "k", "title": "kill", "statement": ""}));
    let ws = opened["workspace_id"].as_str().unwrap().to_owned();
    let mut a = a;
    // Four writers hammer host A, each retrying against the head it last saw;
    // A is killed once they have had 20 writes acknowledged, so writes are in
    // flight when it dies.
    let acks = std::sync::atomic::AtomicUsize::new(0);
    let acknowledged: Vec<Value> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let (addr, ws, acks) = (a.addr.clone(), ws.clone(), &acks);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    let mut client = HttpClient::connect(&addr);
                    let mut base = "rev-0".to_owned();
                    for i in 0.. {
                        let request = json!({"workspace_id": ws, "base_revision": base,
                            "idempotency_key": format!("w{w}-{i}"), "entries": [finding(&format!("w{w} {i}"))]});
                        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            client.call("workspace.write", request)
                        }));
                        match answer {
                            Ok((answer, false)) => {
                                base = answer["revision_id"].as_str().unwrap().to_owned();
                                done.push(answer);
                                acks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            }
                            Ok((answer, true)) => {
                                base = answer["diagnostic"]["details"]["current_head"].as_str().unwrap().to_owned();
                            }
                            Err(_) => break, // the host is gone
                        }
                    }
                    done
                })
            })
            .collect();
        let started = std::time::Instant::now();
        while acks.load(std::sync::atomic::Ordering::SeqCst) < 20 {
            assert!(started.elapsed() < std::time::Duration::from_secs(60), "the writers made no progress");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        a.child.kill().unwrap();
        a.child.wait().unwrap();
        writers.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    assert!(acknowledged.len() >= 20, "{}", acknowledged.len());
    let mut on_b = b.client();
    for ack in &acknowledged {
        let revision = ack["revision_id"].as_str().unwrap();
        let (at, is_error) =
            on_b.call("workspace.query", json!({"workspace_id": ws, "view": "RESUME", "revision_id": revision}));
        assert!(!is_error, "acknowledged {revision} is readable on the surviving host: {at}");
        let artifact = on_b.read_resource(ack["revision_artifact_uri"].as_str().unwrap());
        assert!(artifact.contains(revision), "{artifact}");
    }
    // The survivor keeps serving writes against the head.
    let (head, _) = on_b.call("workspace.query", json!({"workspace_id": ws, "view": "RESUME"}));
    let base = head["head_revision_id"].as_str().unwrap();
    let (next, is_error) = on_b.call(
        "workspace.write",
        json!({"workspace_id": ws, "base_revision": base, "idempotency_key": "after", "entries": [finding("after")]}),
    );
    assert!(!is_error, "{next}");
}

fn envelope_of(output: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|_| panic!("not an envelope: {stderr}"))
}

#[test]
fn bad_store_urls_unreachable_databases_and_newer_schemas_are_typed_start_up_errors() {
    let dir = tempfile::tempdir().unwrap();
    let serve = |store: &str| {
        Command::new(BIN)
            .arg("--data-dir")
            .arg(dir.path())
            .args(["--store", store, "serve", "--http", "127.0.0.1:0"])
            .output()
            .unwrap()
    };
    for bad in ["mysql://root@localhost/db", "postgres://user:pw@host:notaport/db", "postgres://u:pw@ss@127.0.0.1:9/x"]
    {
        let output = serve(bad);
        assert_eq!(output.status.code(), Some(3), "{bad}");
        let envelope = envelope_of(&output);
        assert_eq!(envelope["error_type"], "validation_error", "{envelope}");
        assert!(envelope["error"].as_str().unwrap().starts_with("--store:"), "{envelope}");
        assert!(!envelope["error"].as_str().unwrap().contains("pw"), "the password is never echoed: {envelope}");
        assert!(!envelope["error"].as_str().unwrap().contains("ss@"), "nor any part of it: {envelope}");
    }
    // Nothing listens on port 9 of loopback.
    let output = serve("postgres://jacobian:secret-pw@127.0.0.1:9/none");
    assert_eq!(output.status.code(), Some(3));
    let envelope = envelope_of(&output);
    assert_eq!(envelope["error_type"], "unavailable", "{envelope}");
    let error = envelope["error"].as_str().unwrap();
    assert!(error.contains("127.0.0.1:9/none") && !error.contains("secret-pw"), "{envelope}");

    // A database migrated by a newer binary: refused, and left as it was.
    let store = postgres_database();
    let operator = Operator::new(&store);
    let migrated = operator.run(&["migrate"]);
    assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    let report: Value = serde_json::from_slice(&migrated.stdout).unwrap();
    assert_eq!(report["applied"], json!((1..=jacobian::store::postgres::SCHEMA_VERSION).collect::<Vec<_>>()));
    let database = jacobian::store::postgres::Postgres::connect(&store).unwrap();
    database
        .batch_execute("INSERT INTO jacobian_schema (version, description) VALUES (99, 'from the future')")
        .unwrap();
    let output = serve(&store);
    assert_eq!(output.status.code(), Some(3));
    let envelope = envelope_of(&output);
    assert_eq!(envelope["error_type"], "schema_too_new", "{envelope}");
    assert!(envelope["error"].as_str().unwrap().contains("schema version 99"), "{envelope}");
    let again = operator.run(&["migrate"]);
    assert_eq!(envelope_of(&again)["error_type"], "schema_too_new");
    // Every command on that store is refused alike.
    let untouched = operator.run(&["checkers", "list"]);
    assert_eq!(untouched.status.code(), Some(3), "the CLI is refused alike");
}

#[test]
fn the_config_file_names_the_store_and_flags_win_over_it() {
    let store = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("jacobian.toml");
    let cache = dir.path().join("cache");
    std::fs::write(&config, format!("data_dir = {:?}\nstore = {store:?}\n", cache.display().to_string())).unwrap();
    let run = |args: &[&str]| Command::new(BIN).arg("--config").arg(&config).args(args).output().unwrap();
    let migrated = run(&["migrate"]);
    assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    let shown = run(&["policy", "show"]);
    assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
    assert!(cache.join("cache").is_dir(), "the config file's data_dir holds the code cache");
    assert!(!cache.join("jacobian.db").exists(), "and no shared state");
    // A flag wins: --store pointing nowhere is what is tried.
    let overridden = run(&["--store", "postgres://u:p@127.0.0.1:9/x", "migrate"]);
    assert_eq!(envelope_of(&overridden)["error_type"], "unavailable");
    // An unknown key is a validation error naming the file and the key.
    std::fs::write(&config, "stor = \"postgres://x\"\n").unwrap();
    let refused = run(&["migrate"]);
    assert_eq!(refused.status.code(), Some(3));
    let envelope = envelope_of(&refused);
    assert_eq!(envelope["error_type"], "validation_error", "{envelope}");
    let error = envelope["error"].as_str().unwrap();
    assert!(error.contains("jacobian.toml") && error.contains("stor"), "{envelope}");
}

#[test]
fn an_api_token_revoked_on_one_host_is_refused_by_every_host() {
    let store = postgres_database();
    let operator = Operator::new(&store);
    let made = operator.run(&["tokens", "create", "--tenant", "acme", "--scope", "invoke"]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let made: Value = serde_json::from_slice(&made.stdout).unwrap();
    let (token, id) = (made["token"].as_str().unwrap(), made["id"].as_str().unwrap());
    let auth = ["--auth-api-tokens", "--auth-resource", "http://127.0.0.1/mcp"];
    let hosts = [Host::start_with(&store, &auth), Host::start_with(&store, &auth)];
    let invoke = json!({"capability_id": "sat.cnf.construct", "input": {"dimacs": "p cnf 1 1\n1 0\n"}});
    let mut clients: Vec<HttpClient> = hosts.iter().map(|h| HttpClient::connect_with(&h.addr, Some(token))).collect();
    for client in &mut clients {
        let (result, is_error) = client.call("capability.invoke", invoke.clone());
        assert!(!is_error, "{result}");
    }
    // A session opened on one host continues on the other for its owner only.
    let other = operator.run(&["tokens", "create", "--tenant", "beta", "--scope", "invoke"]);
    let other: Value = serde_json::from_slice(&other.stdout).unwrap();
    let session = clients[0].session().unwrap().to_owned();
    let mut resumed = HttpClient::resume(&hosts[1].addr, &session);
    resumed.set_bearer(token);
    let (result, is_error) = resumed.call("capability.invoke", invoke.clone());
    assert!(!is_error, "{result}");
    let mut borrowed = HttpClient::resume(&hosts[1].addr, &session);
    borrowed.set_bearer(other["token"].as_str().unwrap());
    let (status, answer) = borrowed.exchange(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "capability.invoke", "arguments": invoke}})
        .to_string(),
    );
    assert_eq!(status, 404, "another tenant's token cannot continue the session: {answer}");
    let revoked = operator.run(&["tokens", "revoke", id]);
    assert!(revoked.status.success(), "{}", String::from_utf8_lossy(&revoked.stderr));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "capability.invoke", "arguments": invoke}})
    .to_string();
    for client in &mut clients {
        let (status, answer) = client.exchange(&body);
        assert_eq!(status, 401, "{answer}");
        assert!(answer.contains("revoked"), "{answer}");
    }
}

/// `resources/read` that must fail: the JSON-RPC error's message.
fn unreadable(client: &mut HttpClient, uri: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": uri}}).to_string();
    let (status, answer) = client.exchange(&body);
    assert_eq!(status, 200, "{answer}");
    let message: Value = answer
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .chain(serde_json::from_str(&answer).ok())
        .find(|m: &Value| m["id"] == json!(7))
        .unwrap_or_else(|| panic!("no answer in {answer}"));
    message["error"]["message"].as_str().unwrap_or_else(|| panic!("{uri} was readable: {message}")).to_owned()
}

#[test]
fn two_tenants_on_two_hosts_keep_their_experiments_workspaces_and_quotas_apart() {
    let store = postgres_database();
    let operator = Operator::new(&store);
    let policy_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(policy_file.path(), "[quotas.default]\ninvocations_per_minute = 4\n").unwrap();
    let set = operator.run(&["policy", "set", policy_file.path().to_str().unwrap()]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    let token = |tenant: &str| {
        let made = operator.run(&[
            "tokens",
            "create",
            "--tenant",
            tenant,
            "--scope",
            "invoke",
            "--scope",
            "workspace",
            "--scope",
            "read",
        ]);
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        serde_json::from_slice::<Value>(&made.stdout).unwrap()["token"].as_str().unwrap().to_owned()
    };
    let (acme, beta) = (token("acme"), token("beta"));
    let auth = ["--auth-api-tokens", "--auth-resource", "http://127.0.0.1/mcp"];
    let hosts = [Host::start_with(&store, &auth), Host::start_with(&store, &auth)];
    let invoke = |n: usize| {
        json!({"capability_id": "sat.cnf.construct", "experiment": "shared",
               "input": {"dimacs": format!("p cnf {} 1\n1 0\n", n + 1)}})
    };

    // acme sends ten calls at once, five to each host: the bucket of four admits four.
    let outcomes: Vec<(Value, bool)> = std::thread::scope(|scope| {
        let running: Vec<_> = (0..10)
            .map(|n| {
                let (addr, acme, call) = (hosts[n % 2].addr.clone(), acme.clone(), invoke(n));
                scope.spawn(move || HttpClient::connect_with(&addr, Some(&acme)).call("capability.invoke", call))
            })
            .collect();
        running.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let admitted = outcomes.iter().filter(|(_, is_error)| !is_error).count();
    assert_eq!(admitted, 4, "exactly the bucket across both hosts: {outcomes:?}");
    for (refused, _) in outcomes.iter().filter(|(_, is_error)| *is_error) {
        assert_eq!(refused["diagnostic"]["code"], "QUOTA_EXCEEDED", "{refused}");
        assert_eq!(refused["diagnostic"]["details"]["quota"], "invocations_per_minute");
        assert!(refused["diagnostic"]["details"]["retry_after"].as_u64().is_some_and(|s| (1..=15).contains(&s)));
    }

    // beta's bucket is its own, and so is its experiment "shared".
    let (mut beta_a, mut beta_b) =
        (HttpClient::connect_with(&hosts[0].addr, Some(&beta)), HttpClient::connect_with(&hosts[1].addr, Some(&beta)));
    let (own, is_error) = beta_a.call("capability.invoke", invoke(0));
    assert!(!is_error, "acme's spent quota is not beta's: {own}");
    assert_eq!(own["accounting"]["experiment"], "shared");
    let beta_view: Value = serde_json::from_str(&beta_b.read_resource("experiment://shared/accounting")).unwrap();
    assert_eq!(beta_view["total"]["invocations"], 1, "only beta's own line: {beta_view}");
    let mut acme_b = HttpClient::connect_with(&hosts[1].addr, Some(&acme));
    let acme_view: Value = serde_json::from_str(&acme_b.read_resource("experiment://shared/accounting")).unwrap();
    assert_eq!(acme_view["total"]["invocations"], 4, "acme's four, read on the other host: {acme_view}");
    // Reads follow ownership on every host: acme's output is acme's on the other host, not beta's
    // (one that beta did not make too: the same CNF is the same artifact, and each may read its own).
    let made = outcomes
        .iter()
        .filter(|(_, is_error)| !is_error)
        .map(|(r, _)| r["artifacts"][0]["uri"].clone())
        .find(|uri| *uri != own["artifacts"][0]["uri"])
        .expect("an output of acme's that beta did not make");
    let made = made.as_str().expect("an output URI").to_owned();
    assert!(acme_b.read_resource(&made).contains("schema_uri"), "acme reads its output on the other host");
    let message = unreadable(&mut beta_b, &made);
    assert!(message.contains("not found"), "{message}");
    let acme_key = format!("shared@{}", jacobian::tenants::tenant_tag("acme"));
    for uri in [format!("experiment://{acme_key}/archive"), "experiment://no-such/archive".to_owned()] {
        let message = unreadable(&mut beta_b, &uri);
        assert!(message.contains("no invocations") || message.contains("experiment ids"), "{message}");
    }
    // Completions offer a tenant its own experiment ids only, on either host.
    let (other, _) = beta_a.call(
        "capability.invoke",
        json!({"capability_id": "sat.cnf.construct", "experiment": "sh_beta", "input": {"dimacs": "p cnf 1 1\n1 0\n"}}),
    );
    assert_eq!(other["accounting"]["experiment"], "sh_beta", "{other}");
    let completions = |client: &mut HttpClient, value: &str| {
        let params = json!({"ref": {"type": "ref/resource", "uri": "experiment://{id}/accounting"},
                            "argument": {"name": "id", "value": value}});
        client.request(7, "completion/complete", params)["completion"]["values"].clone()
    };
    assert_eq!(completions(&mut beta_b, "sh"), json!(["sh_beta", "shared"]), "beta's own two");
    assert_eq!(completions(&mut acme_b, "sh"), json!(["shared"]), "acme never sees beta's sh_beta");
    // `_` is a character of ids, not a wildcard: "sh_" is beta's sh_beta only.
    assert_eq!(completions(&mut beta_a, "sh_"), json!(["sh_beta"]));
    assert_eq!(completions(&mut acme_b, "sha"), json!(["shared"]));
    assert_eq!(completions(&mut acme_b, "x"), json!([]));

    // The operator reaches a tenant's experiment by its key.
    let pack = tempfile::tempdir().unwrap();
    let pack_file = pack.path().join("pack.json");
    let archived = operator.run(&["archive", &acme_key, "--out", pack_file.to_str().unwrap()]);
    assert!(archived.status.success(), "{}", String::from_utf8_lossy(&archived.stderr));
    let archive: Value = serde_json::from_slice(&std::fs::read(&pack_file).unwrap()).unwrap();
    assert_eq!(archive["episodes"].as_array().map(Vec::len), Some(4));

    // A workspace acme opened on one host is not found by beta on the other.
    let (opened, _) =
        acme_b.call("workspace.open", json!({"idempotency_key": "open-1", "title": "acme's", "statement": "s"}));
    let workspace = opened["workspace_id"].as_str().unwrap().to_owned();
    let (query, is_error) = beta_a.call("workspace.query", json!({"workspace_id": workspace, "view": "RESUME"}));
    assert!(is_error && query["diagnostic"]["code"] == "WORKSPACE_NOT_FOUND", "{query}");
    let write = json!({"workspace_id": workspace, "base_revision": "rev-0", "idempotency_key": "w",
                       "entries": [finding("beta was here")]});
    let (written, is_error) = beta_a.call("workspace.write", write);
    assert!(is_error && written["diagnostic"]["code"] == "WORKSPACE_NOT_FOUND", "{written}");
}
