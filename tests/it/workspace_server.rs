//! The workspace through the real server: racing writers and a killed process.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::support::{self, BIN, call, serve};

async fn open_workspace(client: &rmcp::service::RunningService<rmcp::RoleClient, ()>) -> String {
    let (opened, is_error) =
        call(client, "workspace.open", json!({"idempotency_key": "open", "title": "race", "statement": ""})).await;
    assert!(!is_error, "{opened}");
    opened["workspace_id"].as_str().unwrap().to_owned()
}

fn finding(title: &str) -> Value {
    json!({"type": "finding", "kind": "CLAIM", "title": title})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_writers_get_exactly_one_winner_per_revision() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let ws = open_workspace(&client).await;
    const WRITERS: usize = 12;

    // Round one: everyone writes against rev-0 at once.
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..WRITERS {
        let peer = client.peer().clone();
        let args = json!({"workspace_id": ws, "base_revision": "rev-0", "idempotency_key": format!("first-{w}"), "entries": [finding(&format!("first {w}"))]});
        tasks.spawn(async move {
            let result = peer
                .call_tool(
                    CallToolRequestParams::new("workspace.write").with_arguments(args.as_object().cloned().unwrap()),
                )
                .await
                .expect("call");
            result.structured_content.expect("structured")
        });
    }
    let mut winners = 0;
    while let Some(answer) = tasks.join_next().await {
        let answer = answer.expect("task");
        if answer.get("revision_id").is_some() {
            winners += 1;
            assert_eq!(answer["revision_id"], "rev-1");
        } else {
            assert_eq!(answer["diagnostic"]["code"], "REVISION_CONFLICT", "{answer}");
            assert_eq!(answer["diagnostic"]["details"]["current_head"], "rev-1");
        }
    }
    assert_eq!(winners, 1, "exactly one write wins rev-1");

    // Round two: every writer retries against the head until it lands.
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..WRITERS {
        let peer = client.peer().clone();
        let ws = ws.clone();
        tasks.spawn(async move {
            let mut conflicts = 0;
            loop {
                let query = json!({"workspace_id": ws, "view": "RESUME"});
                let head = peer
                    .call_tool(CallToolRequestParams::new("workspace.query").with_arguments(query.as_object().cloned().unwrap()))
                    .await
                    .expect("query")
                    .structured_content
                    .unwrap()["head_revision_id"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                let args = json!({"workspace_id": ws, "base_revision": head, "idempotency_key": format!("second-{w}-{conflicts}"), "entries": [finding(&format!("second {w}"))]});
                let answer = peer
                    .call_tool(CallToolRequestParams::new("workspace.write").with_arguments(args.as_object().cloned().unwrap()))
                    .await
                    .expect("write")
                    .structured_content
                    .unwrap();
                if answer.get("revision_id").is_some() {
                    return answer["revision_id"].as_str().unwrap().to_owned();
                }
                assert_eq!(answer["diagnostic"]["code"], "REVISION_CONFLICT");
                conflicts += 1;
            }
        });
    }
    let mut revisions = Vec::new();
    while let Some(revision) = tasks.join_next().await {
        revisions.push(revision.expect("task"));
    }
    revisions.sort_by_key(|r| r[4..].parse::<u64>().unwrap());
    let expected: Vec<String> = (2..2 + WRITERS).map(|n| format!("rev-{n}")).collect();
    assert_eq!(revisions, expected, "one winner per revision, none lost");
    client.cancel().await.expect("shutdown");

    // Nothing torn: every revision holds exactly one finding.
    let runtime = support::open(dir.path().to_path_buf());
    let state = runtime.workspaces().state(runtime.data(), &ws, None).expect("state");
    assert_eq!(state.revision, 1 + WRITERS as u64);
    assert_eq!(state.cards.len(), 2 + WRITERS);
    assert!(state.revision_sizes[1..].iter().all(|&n| n == 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_server_leaves_every_write_whole_and_reopens_cleanly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let echo = std::path::Path::new(jacobian::bundled::TEST_GUESTS_DIR).join("jacobian_test_echo.wasm");
    support::cli(dir.path(), &["install", echo.to_str().expect("utf-8")]);
    let mut command = tokio::process::Command::new(BIN);
    command.arg("--data-dir").arg(dir.path()).arg("serve");
    let transport = TokioChildProcess::new(command).expect("spawn");
    let pid = transport.id().expect("pid");
    let client = ().serve(transport).await.expect("initialize");
    let ws = open_workspace(&client).await;

    let killer = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(700)).await;
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
    });
    // Invocations store episodes while the workspace writes run.
    let invoker = {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            let mut episodes = Vec::new();
            for i in 0.. {
                let args = json!({"capability_id": "test.echo.message", "input": {"message": format!("m{i}")}});
                let call = peer.call_tool(
                    CallToolRequestParams::new("capability.invoke").with_arguments(args.as_object().cloned().unwrap()),
                );
                match tokio::time::timeout(std::time::Duration::from_secs(10), call).await {
                    Ok(Ok(result)) => match result
                        .structured_content
                        .as_ref()
                        .and_then(|s| s["transport"]["full_result_episode_uri"].as_str().map(str::to_owned))
                    {
                        Some(uri) => episodes.push(uri),
                        None => break,
                    },
                    _ => break,
                }
            }
            episodes
        })
    };
    let mut acknowledged = 0u64;
    let big: Vec<Value> = (0..60)
        .map(|i| json!({"type": "finding", "kind": "NOTE", "title": format!("n{i}"), "body": "x".repeat(4000)}))
        .collect();
    loop {
        let args = json!({"workspace_id": ws, "base_revision": format!("rev-{acknowledged}"), "idempotency_key": format!("k{acknowledged}"), "entries": big});
        let call = client.call_tool(
            CallToolRequestParams::new("workspace.write").with_arguments(args.as_object().cloned().unwrap()),
        );
        match tokio::time::timeout(std::time::Duration::from_secs(10), call).await {
            Ok(Ok(result)) if result.structured_content.as_ref().is_some_and(|s| s.get("revision_id").is_some()) => {
                acknowledged += 1
            }
            _ => break,
        }
    }
    killer.await.expect("killer");
    let episodes = invoker.await.expect("invoker");
    assert!(acknowledged > 0, "the server acknowledged writes before it was killed");
    assert!(!episodes.is_empty(), "the server acknowledged invocations before it was killed");

    let database = dir.path().join("jacobian.db");
    let conn = rusqlite::Connection::open(&database).expect("database opens");
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("check");
    assert_eq!(integrity, "ok");
    drop(conn);
    let runtime = support::open(dir.path().to_path_buf());
    for uri in &episodes {
        let episode = jacobian::resources::read(&runtime, uri).unwrap_or_else(|e| panic!("acknowledged {uri}: {e:?}"));
        assert!(episode.text.contains("test.echo.message"), "{uri}");
    }
    let state = runtime.workspaces().state(runtime.data(), &ws, None).expect("every stored revision folds");
    assert!(
        state.revision == acknowledged || state.revision == acknowledged + 1,
        "head {} after {acknowledged} acknowledged writes",
        state.revision
    );
    assert_eq!(state.cards.len() as u64, 1 + 60 * state.revision, "no revision is partial");
    // Folding restored any revision artifact the kill left unwritten.
    let conn = rusqlite::Connection::open(&database).expect("database opens");
    let mut rows = conn.prepare("SELECT artifact FROM revisions WHERE workspace_id = ?1").unwrap();
    let artifacts: Vec<Vec<u8>> = rows.query_map([&ws], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert_eq!(artifacts.len() as u64, state.revision + 1);
    for artifact in artifacts {
        let file =
            dir.path().join("artifacts").join(format!("{}.json", jacobian::digest::Digest::of(&artifact).to_hex()));
        assert_eq!(std::fs::read(&file).expect("artifact file"), artifact);
    }
}
