//! The tenancy corpus: what an attacker holding a valid token tried, one
//! test per finding, each asserting the typed refusal and that nothing of
//! another tenant was read, stored or charged.

use jacobian::Runtime;
use jacobian::archive::Archive;
use jacobian::contract::{CapabilityResult, Code, InvokeRequest, Status, VerificationStatus};
use jacobian::digest::Digest;
use jacobian::resources::read_as;
use serde_json::{Value, json};

use crate::support;

const LRAT_FILE: &str = "jacobian:sat/lrat-file@1";

fn call(runtime: &Runtime, tenant: &str, experiment: &str, capability_id: &str, input: Value) -> CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: capability_id.into(),
        input,
        experiment: Some(experiment.into()),
        tenant: Some(tenant.into()),
        ..Default::default()
    })
}

/// A runtime whose policy gives every tenant the quota `line` (TOML), and its directory.
fn runtime_with_quota(line: &str) -> (std::sync::Arc<Runtime>, tempfile::TempDir) {
    let (runtime, dir) = support::runtime();
    drop(runtime);
    crate::operations::write_policy_section(dir.path(), &format!("\n[quotas.default]\n{line}\n"));
    (support::open(dir.path().to_path_buf()), dir)
}

fn example(name: &str) -> String {
    let path = support::testdata(&format!("sat/drat-trim-examples/{name}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The refusal of a reference at `path`: `ARTIFACT_NOT_FOUND` with the
/// words a digest never stored gets (the one named swapped for it), before
/// anything ran.
fn not_found_as_never_stored(refused: &CapabilityResult, path: &str, uri: &str, never: &CapabilityResult) {
    let d = refused.diagnostic.as_ref().unwrap_or_else(|| panic!("not refused: {:?}", refused.status));
    let n = never.diagnostic.as_ref().expect("a digest never stored is refused");
    assert_eq!((d.code, n.code), (Code::ArtifactNotFound, Code::ArtifactNotFound), "{}", d.message);
    assert_eq!(d.details["path"], path, "{d:?}");
    let hex = uri.trim_start_matches("artifact://sha256/");
    assert_eq!(d.message.replace(hex, "<digest>"), n.message.replace(&"0".repeat(64), "<digest>"));
    assert_eq!(refused.fuel_consumed, 0, "nothing ran");
}

#[test]
fn another_tenants_upload_output_and_episode_are_not_found_by_digest_and_not_archived() {
    let (runtime, _dir) = support::runtime();
    let never = format!("artifact://sha256/{}", "0".repeat(64));
    // Alice's evidence: her CNF, her proof uploaded, the certificate binding them.
    let proof = example("example-4-vars.lrat");
    let upload = runtime
        .upload_as(Some("alice"), &mut proof.as_bytes(), LRAT_FILE, Some(proof.len() as u64), None)
        .expect("alice uploads");
    let cnf = call(&runtime, "alice", "work", "sat.cnf.construct", json!({"dimacs": example("example-4-vars.cnf")}));
    assert_eq!(cnf.status, Status::Completed, "{:?}", cnf.diagnostic);
    let cnf = cnf.artifacts[0].uri.clone();
    let made = call(&runtime, "alice", "work", "sat.certificate.construct", json!({"cnf": cnf, "proof": upload.uri}));
    assert_eq!(made.status, Status::Completed, "{:?}", made.diagnostic);
    let certificate = made.artifacts[0].uri.clone();
    let checked = call(&runtime, "alice", "work", "certificate.verify", json!({"certificate": certificate}));
    assert_eq!(checked.verification.as_ref().map(|v| v.status), Some(VerificationStatus::Verified));
    let episode =
        made.transport.as_ref().and_then(|t| t.full_result_episode_uri.clone()).expect("alice's episode is stored");

    // Bob knows every URI (an upload's follows from its schema, size and file hash).
    let own_cnf = call(&runtime, "bob", "exfil", "sat.cnf.construct", json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    let own_cnf = own_cnf.artifacts[0].uri.clone();
    let missing = call(&runtime, "bob", "exfil", "sat.certificate.construct", json!({"cnf": own_cnf, "proof": never}));
    let direct =
        call(&runtime, "bob", "exfil", "sat.certificate.construct", json!({"cnf": own_cnf, "proof": upload.uri}));
    not_found_as_never_stored(&direct, "input.proof", &upload.uri, &missing);
    let borrowed = call(&runtime, "bob", "exfil", "sat.certificate.construct", json!({"cnf": cnf, "proof": own_cnf}));
    let missing_cnf =
        call(&runtime, "bob", "exfil", "sat.certificate.construct", json!({"cnf": never, "proof": own_cnf}));
    not_found_as_never_stored(&borrowed, "input.cnf", &cnf, &missing_cnf);
    let routed = call(&runtime, "bob", "exfil", "certificate.verify", json!({"certificate": certificate}));
    let routed_never = call(&runtime, "bob", "exfil", "certificate.verify", json!({"certificate": never}));
    not_found_as_never_stored(&routed, "input.certificate", &certificate, &routed_never);
    let direct_check =
        call(&runtime, "bob", "exfil", "sat.certificate.verify", json!({"cnf": cnf, "certificate": certificate}));
    assert_eq!(direct_check.diagnostic.map(|d| d.code), Some(Code::ArtifactNotFound));
    // The reported exfiltration: a URI inside a search query is text.
    let query = json!({"query": format!("see {} and {} and {}", upload.uri, certificate, cnf)});
    let searched = call(&runtime, "bob", "exfil", "knowledge.search", query);
    assert_eq!(searched.status, Status::Completed, "{:?}", searched.diagnostic);

    // Resources: not found for Bob, exactly as a digest never stored; Alice and the operator read them.
    let never_episode = format!("episode://sha256/{}", "0".repeat(64));
    for uri in [&upload.uri, &cnf, &certificate, &episode] {
        let refused = read_as(&runtime, uri, Some("bob")).map(|_| ()).expect_err("bob may not read it");
        let never = if uri.starts_with("episode://") { &never_episode } else { &never };
        let unknown = read_as(&runtime, never, Some("bob")).map(|_| ()).expect_err("never stored");
        assert_eq!(refused.code, Code::ResourceNotFound, "{uri}: {}", refused.message);
        let hex = &uri[uri.len() - 64..];
        assert_eq!(refused.message.replace(hex, "<digest>"), unknown.message.replace(&"0".repeat(64), "<digest>"));
        read_as(&runtime, uri, Some("alice")).unwrap_or_else(|d| panic!("alice reads {uri}: {}", d.message));
        read_as(&runtime, uri, None).unwrap_or_else(|d| panic!("the operator reads {uri}: {}", d.message));
    }

    // Bob's archive (over MCP, and the operator's of the same experiment) carries none of Alice's bytes.
    let archive: Value =
        serde_json::from_str(&read_as(&runtime, "experiment://exfil/archive", Some("bob")).expect("archives").text)
            .unwrap();
    let key = format!("exfil@{}", jacobian::tenants::tenant_tag("bob"));
    let operators = serde_json::to_value(Archive::build(&runtime, &key).expect("archives")).unwrap();
    let text = |v: &Value| v.to_string();
    for pack in [&archive, &operators] {
        let searched_too = pack["episodes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["capability_id"] == "knowledge.search" && e["episode"]["status"] == "COMPLETED");
        assert!(searched_too, "bob's search is packed");
        assert!(pack.get("files").is_none(), "no uploaded file: {}", text(&pack["files"]));
        for uri in [&upload.uri, &cnf, &certificate] {
            let hex = uri.trim_start_matches("artifact://sha256/");
            assert!(pack["artifacts"].get(hex).is_none(), "{uri} is packed");
        }
        assert!(pack["artifacts"].get(own_cnf.trim_start_matches("artifact://sha256/")).is_some(), "bob's own CNF");
    }
    // Alice's archive carries her file.
    let alice: Value =
        serde_json::from_str(&read_as(&runtime, "experiment://work/archive", Some("alice")).expect("archives").text)
            .unwrap();
    assert!(alice["files"].get(upload.file.to_hex()).is_some(), "{}", text(&alice["artifacts"]));

    // The operator shares the certificate: with it, what it names (the CNF, the proof upload).
    let shared = runtime.share("bob", &Digest::from_artifact_uri(&certificate).unwrap()).expect("shares");
    for uri in [&certificate, &cnf, &upload.uri] {
        assert!(shared.contains(uri), "{uri} not in {shared:?}");
        read_as(&runtime, uri, Some("bob")).unwrap_or_else(|d| panic!("bob reads {uri} once shared: {}", d.message));
    }
    let rechecked = call(&runtime, "bob", "exfil", "certificate.verify", json!({"certificate": certificate}));
    assert_eq!(rechecked.verification.map(|v| v.status), Some(VerificationStatus::Verified));
    // Still not another tenant's, nor Alice's episode.
    assert!(read_as(&runtime, &certificate, Some("carol")).is_err());
    assert!(read_as(&runtime, &episode, Some("bob")).is_err());
}

#[test]
fn the_operator_shares_an_upload_by_cli_and_a_bad_tenant_or_uri_is_refused_by_name() {
    let (runtime, dir) = support::runtime();
    let proof = example("example-5-vars.lrat");
    let upload = runtime
        .upload_as(Some("alice"), &mut proof.as_bytes(), LRAT_FILE, Some(proof.len() as u64), None)
        .expect("alice uploads");
    drop(runtime);
    let share = |uri: &str, tenant: &str| {
        let out = std::process::Command::new(support::BIN)
            .arg("--data-dir")
            .arg(dir.path())
            .args(["artifact", "share", uri, "--tenant", tenant])
            .output()
            .expect("run jacobian");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let never = format!("artifact://sha256/{}", "0".repeat(64));
    for (uri, tenant, named) in [
        (upload.uri.as_str(), "Bob Smith", "--tenant"),
        ("artifact://sha256/zz", "bob", "URI"),
        (never.as_str(), "bob", "not found"),
    ] {
        let (ok, _, stderr) = share(uri, tenant);
        assert!(!ok && stderr.contains(named), "{uri} {tenant}: {stderr}");
    }
    let runtime = support::open(dir.path().to_path_buf());
    assert!(read_as(&runtime, &upload.uri, Some("bob")).is_err(), "nothing was granted by a refusal");
    drop(runtime);
    let (ok, stdout, stderr) = share(&upload.uri, "bob");
    assert!(ok, "{stderr}");
    let printed: Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(printed, json!({"tenant": "bob", "granted": [upload.uri]}));
    let runtime = support::open(dir.path().to_path_buf());
    read_as(&runtime, &upload.uri, Some("bob")).unwrap_or_else(|d| panic!("bob reads it once shared: {}", d.message));
    assert!(read_as(&runtime, &upload.uri, Some("carol")).is_err());
}

#[test]
fn the_upgrade_grants_each_tenant_the_outputs_of_its_stored_episodes() {
    let (runtime, dir) = support::runtime();
    let made = call(&runtime, "alice", "before", "sat.cnf.construct", json!({"dimacs": "p cnf 2 1\n1 2 0\n"}));
    let output = made.artifacts[0].uri.clone();
    let proof = example("example-4-vars.lrat");
    let upload = runtime
        .upload_as(Some("alice"), &mut proof.as_bytes(), LRAT_FILE, Some(proof.len() as u64), None)
        .expect("alice uploads");
    drop(runtime);
    // The data directory as schema 5 left it: no grants, no index of episodes.
    let db = rusqlite::Connection::open(dir.path().join(jacobian::store::DATABASE_FILE)).unwrap();
    db.execute_batch(
        "DROP TABLE grants; DROP INDEX experiment_invocations_by_episode; DELETE FROM jacobian_schema WHERE version = 6;",
    )
    .unwrap();
    drop(db);
    let runtime = support::open(dir.path().to_path_buf());
    read_as(&runtime, &output, Some("alice")).unwrap_or_else(|d| panic!("alice's output is hers: {}", d.message));
    assert!(read_as(&runtime, &output, Some("bob")).is_err(), "and not bob's");
    // An upload's uploader was not recorded before: the operator's until uploaded again or shared.
    assert!(read_as(&runtime, &upload.uri, Some("alice")).is_err());
    read_as(&runtime, &upload.uri, None).expect("the operator reads it");
    let again = runtime
        .upload_as(Some("alice"), &mut proof.as_bytes(), LRAT_FILE, Some(proof.len() as u64), None)
        .expect("alice uploads again");
    assert_eq!(again.uri, upload.uri);
    read_as(&runtime, &upload.uri, Some("alice")).expect("hers again");
}

#[test]
fn reading_the_reference_pack_runs_a_component_so_it_is_admitted_under_the_tenants_quota() {
    let (runtime, _dir) = runtime_with_quota("invocations_per_minute = 2");
    for _ in 0..2 {
        read_as(&runtime, "reference://catalog", Some("alice")).unwrap_or_else(|d| panic!("{}", d.message));
    }
    let refused = read_as(&runtime, "reference://catalog", Some("alice")).map(|_| ()).expect_err("over the quota");
    assert_eq!(refused.code, Code::QuotaExceeded, "{}", refused.message);
    assert_eq!(refused.details["quota"], "invocations_per_minute");
    // Its bucket is spent for its calls too; another tenant's and the operator's are not.
    let spent = call(&runtime, "alice", "after", "sat.cnf.construct", json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    assert_eq!(spent.diagnostic.map(|d| d.code), Some(Code::QuotaExceeded));
    read_as(&runtime, "reference://catalog", Some("bob")).expect("bob's own bucket");
    read_as(&runtime, "reference://catalog", None).expect("the operator has no quota");
}

#[test]
fn calls_at_once_under_fuel_per_day_reserve_their_budgets_and_one_runs() {
    let (runtime, _dir) = runtime_with_quota("fuel_per_day = 1");
    let runtime = &runtime;
    // Eight at once (the finding: all eight ran, 3.5·10⁹ fuel against a day of 1).
    let results: Vec<CapabilityResult> = std::thread::scope(|scope| {
        let running: Vec<_> = (0..8)
            .map(|n| {
                scope.spawn(move || {
                    let dimacs = format!("p cnf {} 1\n1 0\n", n + 1);
                    call(runtime, "alice", "burst", "sat.cnf.construct", json!({"dimacs": dimacs}))
                })
            })
            .collect();
        running.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let ran: Vec<&CapabilityResult> = results.iter().filter(|r| r.diagnostic.is_none()).collect();
    assert_eq!(ran.len(), 1, "the first reserves its budget; the rest wait for tomorrow");
    for refused in results.iter().filter(|r| r.diagnostic.is_some()) {
        let d = refused.diagnostic.as_ref().unwrap();
        assert_eq!((d.code, d.details["quota"].as_str()), (Code::QuotaExceeded, Some("fuel_per_day")), "{}", d.message);
        assert_eq!(refused.fuel_consumed, 0, "it did not run");
    }
    // Another tenant's day is its own.
    let other = call(runtime, "bob", "burst", "sat.cnf.construct", json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    assert_eq!(other.status, Status::Completed, "{:?}", other.diagnostic);
}

/// Row "upload quota overshoot": eight PUTs of 4 MiB at once against 1,000
/// stored bytes all came back 201 (33 MB stored). A declared length is
/// reserved before the body is read: all eight are refused and nothing is
/// stored.
#[test]
fn uploads_at_once_over_http_reserve_their_declared_length_and_none_passes_the_quota() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let made: Value =
        serde_json::from_str(support::cli(data, &["tokens", "create", "--tenant", "acme", "--scope", "invoke"]).trim())
            .unwrap();
    let bearer = format!("Bearer {}", made["token"].as_str().unwrap());
    let policy = support::cli(data, &["policy", "show"]);
    let policy_file = data.join("policy.in.toml");
    std::fs::write(&policy_file, format!("{policy}\n[quotas.default]\nstored_bytes = 1000\n")).unwrap();
    support::cli(data, &["policy", "set", policy_file.to_str().unwrap()]);
    let server =
        crate::http::Server::start_with(data, None, &["--auth-api-tokens", "--auth-resource", "http://127.0.0.1/mcp"]);
    let (server, bearer) = (&server, bearer.as_str());
    let answers: Vec<(u16, String)> = std::thread::scope(|scope| {
        let sending: Vec<_> = (0..8u8)
            .map(|n| {
                scope.spawn(move || {
                    let bytes = vec![b'0' + n; 4 << 20];
                    let path = format!("/artifacts/sha256/{}?schema={LRAT_FILE}", Digest::of(&bytes).to_hex());
                    let (status, _, body) =
                        server.request_with_body("PUT", &path, &[("Authorization", bearer)], &bytes);
                    (status, body)
                })
            })
            .collect();
        sending.into_iter().map(|t| t.join().unwrap()).collect()
    });
    // Each is refused: by the stored bytes, or (beyond two at once) by the tenant's share of uploads.
    for (status, body) in &answers {
        assert_eq!(*status, 429, "{body}");
        let why = body.contains("1000 stored bytes") || body.contains("limit of 2 uploads being received");
        assert!(body.contains("quota_exceeded") && why, "{body}");
    }
    assert!(answers.iter().any(|(_, body)| body.contains("1000 stored bytes")), "{answers:?}");
    let files = std::fs::read_dir(data.join("files")).map_or(0, |d| d.count());
    assert_eq!(files, 0, "nothing stored");
    // The whole quota is still there: 1,000 bytes are taken, then not one more.
    let bytes = vec![b'7'; 1000];
    let path = format!("/artifacts/sha256/{}?schema={LRAT_FILE}", Digest::of(&bytes).to_hex());
    let (status, _, body) = server.request_with_body("PUT", &path, &[("Authorization", bearer)], &bytes);
    assert_eq!(status, 201, "{body}");
    let (status, _, body) = server.request_with_body("PUT", "/artifacts/sha256/0000000000000000000000000000000000000000000000000000000000000000?schema=jacobian:sat/lrat-file@1", &[("Authorization", bearer)], b"1");
    assert_eq!(status, 429, "{body}");
}

/// Bodies of unknown length at once (a pipe, a chunked PUT): each reserves
/// what is left when it starts and is cut off there, so together they never
/// store more than the quota, and what was refused left no file.
#[test]
fn uploads_of_unknown_length_at_once_are_cut_off_at_what_is_left() {
    let (runtime, dir) = runtime_with_quota("stored_bytes = 1000");
    let runtime = &runtime;
    /// 400 bytes, the first of them after a pause (so that the uploads overlap).
    struct Slow(std::io::Cursor<Vec<u8>>, bool);
    impl std::io::Read for Slow {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if !std::mem::replace(&mut self.1, true) {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let n = buf.len().min(50);
            self.0.read(&mut buf[..n])
        }
    }
    let outcomes: Vec<_> = std::thread::scope(|scope| {
        let sending: Vec<_> = (0..8u8)
            .map(|n| {
                scope.spawn(move || {
                    let mut source = Slow(std::io::Cursor::new(vec![b'a' + n; 400]), false);
                    runtime.upload_as(Some("acme"), &mut source, LRAT_FILE, None, None)
                })
            })
            .collect();
        sending.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let stored: u64 = outcomes.iter().filter_map(|o| o.as_ref().ok()).map(|u| u.bytes).sum();
    assert!(stored <= 1000, "{stored} bytes stored against 1000");
    assert!(stored >= 400, "the first upload fits whole: {stored}");
    for outcome in &outcomes {
        match outcome {
            Ok(uploaded) => assert_eq!(uploaded.bytes, 400),
            Err(jacobian::runtime::UploadError::Quota(exceeded)) => {
                assert_eq!(exceeded.limit, jacobian::quotas::Limit::StoredBytes)
            }
            Err(e) => panic!("not a quota refusal: {e}"),
        }
    }
    let files = std::fs::read_dir(dir.path().join("files")).map_or(0, |d| d.count());
    assert_eq!(files as u64, stored / 400, "a refused upload left no file");
}

/// Every surface a tenant reaches that could run a component goes through
/// admission: once its quota is spent, reading each resource and template,
/// completing each variable and argument, rendering each prompt and
/// describing capabilities run no component at all, and the two that would
/// (an invocation, `reference://catalog`) are refused `QUOTA_EXCEEDED`.
#[test]
fn once_a_tenants_quota_is_spent_no_surface_runs_a_component_for_it() {
    use jacobian::resources::{self, Completing};
    let (runtime, _dir) = runtime_with_quota("invocations_per_minute = 1");
    let made = call(&runtime, "alice", "spent", "sat.cnf.construct", json!({"dimacs": "p cnf 1 1\n1 0\n"}));
    assert_eq!(made.status, Status::Completed, "{:?}", made.diagnostic);
    let episode = made.transport.as_ref().and_then(|t| t.full_result_episode_uri.clone()).expect("an episode");
    let artifact = made.artifacts[0].uri.clone();
    let before = runtime.metrics().component_calls();
    assert!(before >= 1, "the call ran its component");

    let alice = Some("alice");
    for uri in [
        "jacobian://instructions",
        "capability://catalog",
        "capability://sat.cnf.construct",
        &artifact,
        &episode,
        "experiment://spent",
        "experiment://spent/accounting",
        "experiment://spent/scope",
        "experiment://spent/archive",
    ] {
        read_as(&runtime, uri, alice).unwrap_or_else(|d| panic!("{uri}: {}", d.message));
    }
    let refused = read_as(&runtime, "reference://catalog", alice).map(|_| ()).expect_err("over the quota");
    assert_eq!((refused.code, &refused.details["quota"]), (Code::QuotaExceeded, &json!("invocations_per_minute")));
    for template in resources::TEMPLATES {
        for variable in ["id", "digest"] {
            resources::complete(&runtime, Completing::Template(template.uri), variable, "s", alice, "spent")
                .unwrap_or_else(|d| panic!("{}: {}", template.uri, d.message));
        }
    }
    let arguments: serde_json::Map<String, Value> =
        [("task".to_owned(), json!("count trees")), ("result".to_owned(), json!(episode))].into_iter().collect();
    for prompt in resources::PROMPTS {
        for (argument, _, _) in prompt.arguments {
            resources::complete(&runtime, Completing::Prompt(prompt.name), argument, "e", alice, "spent")
                .unwrap_or_else(|d| panic!("{}: {}", prompt.name, d.message));
        }
        resources::prompt(prompt.name, &arguments).unwrap_or_else(|d| panic!("{}: {}", prompt.name, d.message));
    }
    runtime.describe(&Default::default()).expect("the catalog");
    let again = call(&runtime, "alice", "spent", "sat.cnf.construct", json!({"dimacs": "p cnf 2 1\n1 0\n"}));
    assert_eq!(again.diagnostic.map(|d| d.code), Some(Code::QuotaExceeded));
    assert_eq!(runtime.metrics().component_calls(), before, "no component ran for a tenant whose quota is spent");
    // The count is live: the operator's read of the reference pack runs its component.
    read_as(&runtime, "reference://catalog", None).expect("the operator has no quota");
    assert_eq!(runtime.metrics().component_calls(), before + 1);
}

/// A server with API-token tenants `alice` and `bob` (scopes invoke and
/// read) and `serve` arguments `args`: the server and the two bearers.
fn server_with_tenants(dir: &std::path::Path, args: &[&str]) -> (crate::http::Server, String, String) {
    let bearer = |tenant: &str| -> String {
        let made: Value = serde_json::from_str(
            support::cli(dir, &["tokens", "create", "--tenant", tenant, "--scope", "invoke", "--scope", "read"]).trim(),
        )
        .unwrap();
        format!("Bearer {}", made["token"].as_str().unwrap())
    };
    let (alice, bob) = (bearer("alice"), bearer("bob"));
    let mut all = vec!["--auth-api-tokens", "--auth-resource", "http://127.0.0.1/mcp"];
    all.extend_from_slice(args);
    (crate::http::Server::start_with(dir, None, &all), alice, bob)
}

/// One request on a connection kept alive: its status and the answer's text.
fn kept_alive(stream: &mut std::net::TcpStream, head: &str) -> (u16, String) {
    use std::io::{Read, Write};
    stream.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).unwrap_or(0);
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
                .and_then(|v| v.parse::<usize>().ok());
            if n == 0 || length.is_some_and(|length| body.len() >= length) {
                let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
                return (status, text);
            }
        } else if n == 0 {
            return (0, text);
        }
    }
}

/// Row "one tenant fills the server-wide session cap": a read-only token
/// opened 1,030 sessions and alice's `initialize` was then refused. A
/// tenant's sessions are its share of the cap: beyond it, 429 for that
/// tenant only.
#[test]
fn one_tenant_opens_its_share_of_sessions_and_another_still_opens_hers() {
    let dir = tempfile::tempdir().unwrap();
    let (server, alice, bob) = server_with_tenants(dir.path(), &["--max-sessions-per-tenant", "3"]);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "share", "version": "0"}}})
    .to_string();
    let open = |bearer: &str| {
        let headers = [
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("authorization", bearer),
        ];
        let (status, headers, body) = server.request_with_body("POST", "/mcp", &headers, initialize.as_bytes());
        (status, crate::http::header(&headers, "mcp-session-id").map(str::to_owned), body)
    };
    // Eight at once: exactly his three open (each is counted before the next is judged).
    let open = &open;
    let answers: Vec<(u16, Option<String>, String)> = std::thread::scope(|scope| {
        let opening: Vec<_> = (0..8).map(|_| scope.spawn(|| open(&bob))).collect();
        opening.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let bobs: Vec<String> = answers.iter().filter(|a| a.0 == 200).filter_map(|a| a.1.clone()).collect();
    assert_eq!(bobs.len(), 3, "{answers:?}");
    assert!(answers.iter().all(|a| a.0 == 200 || a.0 == 429), "{answers:?}");
    let (status, session, body) = open(&bob);
    assert_eq!((status, session), (429, None), "{body}");
    assert!(body.contains("quota_exceeded") && body.contains("limit of 3 MCP sessions"), "{body}");
    let (status, session, body) = open(&alice);
    assert_eq!(status, 200, "alice's own share: {body}");
    assert!(session.is_some());
    // Closing one of bob's gives him room again.
    let close = [("mcp-session-id", bobs[0].as_str()), ("authorization", bob.as_str())];
    assert_eq!(server.request("DELETE", "/mcp", &close).0, 204);
    assert_eq!(open(&bob).0, 200, "room again");
}

/// Row "idle connections starve everyone before authentication": 1,030 idle
/// TCP connections held every connection and `/health` timed out. A
/// connection is unproven until a request on it authenticates, in a small
/// pool whose oldest is closed to make room: forty idle sockets (and one
/// that sends requests with a bad token) hold nothing, and an authenticated
/// client and `/health` are answered beside them.
#[test]
fn idle_and_unauthenticated_connections_cannot_starve_authenticated_ones() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let (server, alice, _) = server_with_tenants(dir.path(), &["--max-unproven-connections", "8"]);
    let idle: Vec<std::net::TcpStream> = (0..40)
        .map(|_| {
            let stream = std::net::TcpStream::connect(&server.addr).unwrap();
            stream.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
            stream
        })
        .collect();
    // A client with a bad token: refused, and its connection stays unproven.
    let mut forged = std::net::TcpStream::connect(&server.addr).unwrap();
    forged.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
    let head = format!("GET /metrics HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer jac_nope\r\n\r\n", server.addr);
    assert_eq!(kept_alive(&mut forged, &head).0, 401);
    let waited = std::time::Instant::now();
    assert_eq!(server.request("GET", "/health", &[]).0, 200);
    let (status, _, body) = server.request("GET", "/metrics", &[("authorization", alice.as_str())]);
    assert_eq!(status, 200, "{body}");
    assert!(waited.elapsed() < std::time::Duration::from_secs(2), "waited {:?}", waited.elapsed());
    // Every idle socket and the forged client's connection are closed, unserved.
    for mut stream in idle.into_iter().chain([forged]) {
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    }
}

/// A tenant's share of connections and of requests in flight: beyond them
/// 429 for that tenant (its extra connection closed), while another's go on.
#[test]
fn a_tenant_holds_its_share_of_connections_and_requests_in_flight() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let args =
        ["--max-connections-per-tenant", "2", "--max-in-flight-per-tenant", "1", "--client-timeout-seconds", "5"];
    let (server, alice, bob) = server_with_tenants(dir.path(), &args);
    let metrics =
        |bearer: &str| format!("GET /metrics HTTP/1.1\r\nHost: {}\r\nAuthorization: {bearer}\r\n\r\n", server.addr);
    let connect = || {
        let stream = std::net::TcpStream::connect(&server.addr).unwrap();
        stream.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
        stream
    };
    // Alice's two connections, kept alive, are her share; a third is answered 429 and closed.
    let mut held: Vec<std::net::TcpStream> = (0..2).map(|_| connect()).collect();
    for stream in &mut held {
        assert_eq!(kept_alive(stream, &metrics(&alice)).0, 200);
    }
    let mut third = connect();
    let (status, text) = kept_alive(&mut third, &metrics(&alice));
    assert_eq!(status, 429, "{text}");
    assert!(text.contains("limit of 2 connections") && text.to_ascii_lowercase().contains("connection: close"));
    let mut rest = Vec::new();
    let _ = third.read_to_end(&mut rest);
    assert!(rest.is_empty(), "closed");
    assert_eq!(server.request("GET", "/metrics", &[("authorization", bob.as_str())]).0, 200, "bob's own share");
    // On one of her connections, a body that does not arrive holds her one request in flight.
    let stalled = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {alice}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{",
        server.addr
    );
    held[0].write_all(stalled.as_bytes()).unwrap();
    let refused = (0..40).find_map(|_| {
        std::thread::sleep(std::time::Duration::from_millis(25));
        let (status, text) = kept_alive(
            &mut held[1],
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {alice}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{{}}",
                server.addr
            ),
        );
        (status == 429).then_some(text)
    });
    let refused = refused.expect("her second request in flight is refused");
    assert!(refused.contains("quota_exceeded") && refused.contains("limit of 1 requests in flight"), "{refused}");
    let headers = [("authorization", bob.as_str()), ("content-type", "application/json")];
    let (status, _, body) = server.request_with_body("POST", "/mcp", &headers, b"{}");
    assert_ne!(status, 429, "bob's requests are his own: {body}");
}
