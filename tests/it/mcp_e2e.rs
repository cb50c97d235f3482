//! Agent-shaped tests through the real `jacobian serve` over stdio.

use std::path::Path;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::{SEARCH, VERIFY, call, cli, serve};

#[tokio::test(flavor = "multi_thread")]
async fn agent_finds_and_verifies_the_order_two_countermodel_and_revocation_blocks_verification() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;

    let tools: Vec<String> =
        client.list_all_tools().await.expect("tools").into_iter().map(|t| t.name.to_string()).collect();
    let mut tools = tools;
    tools.sort();
    assert_eq!(
        tools,
        ["capability.describe", "capability.invoke", "workspace.open", "workspace.query", "workspace.write"],
        "the five tools, and no authorization tool"
    );

    let (found, _) =
        call(&client, "capability.describe", json!({"query": "counterexample associativity commutative magma"})).await;
    assert_eq!(found["results"][0]["capability_id"], SEARCH, "{found}");
    let (contract, _) =
        call(&client, "capability.describe", json!({"capability_id": SEARCH, "view": "CONTRACT"})).await;
    assert!(contract["input_schema"]["properties"]["target"].is_object(), "{contract}");
    let related = contract["related_operations"].as_array().expect("related operations");
    assert!(related.iter().any(|r| r["capability_id"] == VERIFY && r["relation"] == "CHECKED_BY"), "{related:?}");

    let input = json!({"hypotheses": ["commutative"], "target": "associative", "min_order": 2, "max_order": 2});
    let (result, is_error) =
        call(&client, "capability.invoke", json!({"capability_id": SEARCH, "mode": "EXPLORE", "input": input})).await;
    assert!(!is_error, "{result}");
    assert_eq!(result["output"]["found"], true);
    assert_eq!(result["output"]["order"], 2);
    assert_eq!(result["assurance"], "COMPUTED");
    let certificate = result["check_with"]["certificate_artifact"].as_str().expect("certificate").to_owned();
    assert_eq!(result["check_with"]["verify_capability_id"], VERIFY);

    let verify = json!({"capability_id": VERIFY, "mode": "VERIFY", "input": {"countermodel": certificate}});
    let (verified, _) = call(&client, "capability.invoke", verify.clone()).await;
    assert_eq!(verified["assurance"], "VERIFIED", "{verified}");
    assert_eq!(verified["verification"]["status"], "VERIFIED");
    let checker = verified["verification"]["checker_digest"].as_str().expect("digest").to_owned();
    let role = verified["verification"]["checker_role"].as_str().expect("role").to_owned();

    // The operator revokes the checker while the server runs.
    cli(dir.path(), &["checkers", "revoke", &checker]);
    let (revoked, _) = call(&client, "capability.invoke", verify.clone()).await;
    assert_eq!(revoked["assurance"], "NONE", "{revoked}");
    assert_eq!(revoked["verification"]["status"], "NOT_CONCLUDED");
    assert_eq!(revoked["verification"]["checker_authorized"], false);
    assert!(revoked["obligations"][0].as_str().unwrap_or_default().contains(&role));
    let (browse, _) = call(&client, "capability.describe", json!({"capability_id": VERIFY})).await;
    assert_eq!(browse["availability"], "CHECKER_NOT_AUTHORIZED");

    cli(dir.path(), &["checkers", "authorize", &checker, "--role", &role]);
    let (again, _) = call(&client, "capability.invoke", verify).await;
    assert_eq!(again["assurance"], "VERIFIED");
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_guests_become_typed_diagnostics_and_the_server_keeps_answering() {
    let dir = tempfile::tempdir().expect("temp dir");
    let guests = Path::new(jacobian::bundled::TEST_GUESTS_DIR);
    for guest in ["jacobian_test_hostile.wasm", "jacobian_test_echo.wasm"] {
        let out = cli(dir.path(), &["install", guests.join(guest).to_str().expect("utf-8 path")]);
        assert!(out.starts_with("installed"), "{out}");
    }
    let client = serve(dir.path()).await;
    let attacks: &[(&str, Value, Value, &str)] = &[
        ("loop", json!(null), json!({"fuel": 20_000_000}), "FUEL_EXHAUSTED"),
        ("memory", json!(null), json!({"memory_bytes": 32 << 20}), "MEMORY_LIMIT"),
        ("recursion", json!(null), json!({}), "STACK_OVERFLOW"),
        ("panic", json!(null), json!({}), "GUEST_TRAP"),
        ("output", json!("2000000"), json!({"output_bytes": 1 << 20}), "OUTPUT_TOO_LARGE"),
        ("claim_verified", json!(null), json!({}), "MALFORMED_OUTPUT"),
        ("malformed", json!(null), json!({}), "MALFORMED_OUTPUT"),
        ("off_schema", json!(null), json!({}), "MALFORMED_OUTPUT"),
        ("read_artifact", json!("ab".repeat(32)), json!({}), "INVALID_INPUT"),
    ];
    for (attack, argument, budget, code) in attacks {
        let input = json!({"attack": attack, "argument": argument});
        let args = json!({"capability_id": "test.hostile.attack", "input": input, "budget": budget});
        let (result, is_error) = call(&client, "capability.invoke", args).await;
        assert!(is_error, "{attack}: {result}");
        assert_eq!(result["status"], "FAILED", "{attack}");
        assert_eq!(result["assurance"], "NONE", "{attack}");
        assert_eq!(result["diagnostic"]["code"], *code, "{attack}: {result}");
        assert!(result["artifacts"].as_array().is_some_and(Vec::is_empty));
        if *attack == "panic" {
            let console = result["diagnostic"]["details"]["console"].as_str().unwrap_or_default();
            assert!(console.contains("hostile guest panics on purpose"), "{result}");
        }
        // The server still answers the next request.
        let (echo, is_error) = call(
            &client,
            "capability.invoke",
            json!({"capability_id": "test.echo.message", "input": {"message": attack}}),
        )
        .await;
        assert!(!is_error, "after {attack}: {echo}");
        assert_eq!(echo["output"]["message"], *attack);
    }

    let (flood, _) = call(
        &client,
        "capability.invoke",
        json!({"capability_id": "test.hostile.attack", "input": {"attack": "log_flood"}}),
    )
    .await;
    assert_eq!(flood["status"], "COMPLETED");
    assert_eq!(flood["guest_log"].as_array().map(Vec::len), Some(256), "the log is bounded");

    let (ambient, _) = call(
        &client,
        "capability.invoke",
        json!({"capability_id": "test.hostile.attack", "input": {"attack": "ambient"}}),
    )
    .await;
    let seen: Value = serde_json::from_str(ambient["output"]["result"].as_str().expect("result")).expect("json");
    assert_eq!(seen["env"], json!([]), "no environment");
    assert_eq!(seen["args"], json!([]), "no arguments");
    assert_eq!(seen["unix_seconds"], 0, "the clock is frozen at the epoch");
    assert!(seen["read_dir_root"].as_str().unwrap_or_default().starts_with("Err"), "{seen}");
    assert!(seen["read_etc_passwd"].as_str().unwrap_or_default().starts_with("Err"), "{seen}");
    client.cancel().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_tool_arguments_get_typed_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let (missing, is_error) =
        call(&client, "capability.describe", json!({"capability_id": "no.such.capability"})).await;
    assert!(is_error);
    assert_eq!(missing["diagnostic"]["code"], "CAPABILITY_NOT_FOUND");
    assert_eq!(missing["diagnostic"]["details"]["path"], "capability_id");
    let (limit, _) = call(&client, "capability.describe", json!({"limit": 99})).await;
    assert_eq!(limit["diagnostic"]["details"]["path"], "limit");
    let wrong_field = client
        .call_tool(
            CallToolRequestParams::new("capability.invoke")
                .with_arguments(json!({"capability": SEARCH, "input": {}}).as_object().cloned().expect("object")),
        )
        .await;
    let refused = wrong_field.expect("a tool-level error, not a broken session");
    assert_eq!(refused.is_error, Some(true));
    // In the grammar: a typed diagnostic naming both fields at fault.
    let diagnostic = &refused.structured_content.as_ref().expect("structured")["diagnostic"];
    assert_eq!(
        (&diagnostic["code"], &diagnostic["stage"]),
        (&json!("INVALID_REQUEST"), &json!("REQUEST")),
        "{diagnostic}"
    );
    let paths: Vec<&str> =
        diagnostic["details"]["errors"].as_array().unwrap().iter().filter_map(|e| e["path"].as_str()).collect();
    assert!(paths.contains(&"capability") && paths.contains(&"capability_id"), "{diagnostic}");
    client.cancel().await.expect("shutdown");
}

/// What the clients people try first (the MCP Inspector) need: schemas whose
/// formats their validators know, one type per schema, and object arguments
/// sent JSON-encoded.
#[tokio::test(flavor = "multi_thread")]
async fn published_schemas_use_standard_formats_and_one_type_and_json_encoded_objects_are_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    const STANDARD: [&str; 19] = [
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ];
    fn formats(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(format)) = map.get("format") {
                    found.push(format.clone());
                }
                if let Some(Value::Array(types)) = map.get("type") {
                    found.push(format!("type list {types:?}"));
                }
                map.values().for_each(|v| formats(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| formats(v, found)),
            _ => {}
        }
    }
    let tools = client.list_all_tools().await.expect("tools");
    let mut found = Vec::new();
    for tool in &tools {
        formats(&Value::Object((*tool.input_schema).clone()), &mut found);
        if let Some(output) = &tool.output_schema {
            formats(&Value::Object((**output).clone()), &mut found);
        }
    }
    let unknown: Vec<&String> = found.iter().filter(|f| !STANDARD.contains(&f.as_str())).collect();
    assert!(unknown.is_empty(), "non-standard formats or type lists in tools/list: {unknown:?}");
    let input_schema = &tools.iter().find(|t| t.name == "capability.invoke").unwrap().input_schema;
    assert_eq!(input_schema["properties"]["input"]["type"], "object", "the contract's input object");
    let invoke = tools.iter().find(|t| t.name == "capability.invoke").unwrap();
    assert!(invoke.description.as_deref().unwrap_or_default().contains("JSON-encoded string"));

    // The same call with `input` as an object and as its JSON text: one answer.
    let input = json!({"hypotheses": ["commutative"], "target": "associative", "min_order": 2, "max_order": 2});
    let (as_object, _) =
        call(&client, "capability.invoke", json!({"capability_id": SEARCH, "mode": "EXPLORE", "input": input})).await;
    let (as_text, is_error) = call(
        &client,
        "capability.invoke",
        json!({"capability_id": SEARCH, "mode": "EXPLORE", "input": input.to_string()}),
    )
    .await;
    assert!(!is_error, "{as_text}");
    assert_eq!(as_text["output"], as_object["output"]);
    assert_eq!(as_text["output"]["order"], 2);
    // Text that is no object stays a refusal about the arguments as sent.
    let (refused, is_error) =
        call(&client, "capability.invoke", json!({"capability_id": SEARCH, "input": "{not json"})).await;
    assert!(is_error, "{refused}");
    assert_eq!(refused["diagnostic"]["details"]["path"], "input", "{refused}");
    client.cancel().await.expect("shutdown");
}

#[test]
fn stdio_over_a_socket_pair_serves_pipelined_calls() {
    // Some clients (those built on libuv, e.g. Node) give a server socket
    // pairs, not pipes, for stdin and stdout; the server polls either.
    use std::io::{BufRead as _, Write as _};
    use std::os::unix::net::UnixStream;
    let dir = tempfile::tempdir().expect("temp dir");
    let (ours, input) = UnixStream::pair().expect("socket pair");
    let (theirs, output) = UnixStream::pair().expect("socket pair");
    // The same open file description as the server's stdin, as a parent that
    // passed its own stdin on would hold it.
    let shared = input.try_clone().expect("dup");
    let shared_out = output.try_clone().expect("dup");
    let nonblocking = |fd: &UnixStream| {
        use std::os::fd::AsRawFd as _;
        // SAFETY: F_GETFL on a descriptor this test owns.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        assert!(flags >= 0);
        flags & libc::O_NONBLOCK != 0
    };
    assert!(!nonblocking(&shared) && !nonblocking(&shared_out));
    let mut child = std::process::Command::new(crate::support::BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .arg("serve")
        .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(input)))
        .stdout(std::process::Stdio::from(std::os::fd::OwnedFd::from(output)))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn jacobian serve");
    let mut writer = ours;
    let mut reader = std::io::BufReader::new(theirs);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "socket", "version": "0"}}});
    writeln!(writer, "{initialize}").unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.contains("\"serverInfo\""), "{line}");
    assert!(nonblocking(&shared), "the server polls its socket stdin (non-blocking) instead of reading it on a thread");
    assert!(nonblocking(&shared_out), "and writes its socket stdout the same way");
    writeln!(writer, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    // Eight calls written at once, answered each under its own id.
    let input = json!({"hypotheses": ["commutative"], "target": "associative", "min_order": 2, "max_order": 2});
    for id in 1..=8 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "capability.invoke", "arguments": {"capability_id": SEARCH, "input": input}}});
        writeln!(writer, "{call}").unwrap();
    }
    let mut ids = Vec::new();
    while ids.len() < 8 {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the server closed its stdout");
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        assert_eq!(answer["result"]["structuredContent"]["output"]["order"], 2, "{answer}");
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, (1..=8).collect::<Vec<u64>>());
    drop(writer);
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the server did not exit when its stdin closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success());
    assert!(
        !nonblocking(&shared) && !nonblocking(&shared_out),
        "the server put the flags of the shared descriptions back"
    );
}
