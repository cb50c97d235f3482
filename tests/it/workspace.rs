//! The epistemic workspace through the core API: idempotency, conflicts,
//! lifecycle rules, stale warnings, views, bad input, graphs.

use jacobian::Runtime;
use jacobian::contract::Diagnostic;
use jacobian::workspace::wire::{OpenRequest, QueryRequest, QueryView, WriteRequest};
use serde_json::{Value, json};

use crate::support;

fn open(runtime: &Runtime, key: &str) -> Value {
    let request = OpenRequest {
        idempotency_key: key.into(),
        title: "Decide associativity".into(),
        statement: "Is every commutative magma associative?".into(),
    };
    json!(runtime.workspaces().open(runtime.data(), &request).expect("opens"))
}

fn write(runtime: &Runtime, ws: &str, base: &str, key: &str, entries: Value) -> Result<Value, Diagnostic> {
    let request: WriteRequest = serde_json::from_value(json!({
        "workspace_id": ws, "base_revision": base, "idempotency_key": key, "entries": entries,
    }))
    .expect("well-formed request");
    runtime.workspaces().write(runtime.data(), &request).map(|written| json!(written))
}

fn query(runtime: &Runtime, ws: &str, view: QueryView, target: Option<&str>, limit: Option<u32>) -> Value {
    let request = QueryRequest {
        workspace_id: ws.into(),
        view,
        revision_id: None,
        target_card_id: target.map(Into::into),
        limit,
    };
    json!(runtime.workspaces().query(runtime.data(), &request).expect("query").result)
}

fn head(runtime: &Runtime, ws: &str) -> String {
    let request = QueryRequest {
        workspace_id: ws.into(),
        view: QueryView::Resume,
        revision_id: None,
        target_card_id: None,
        limit: None,
    };
    runtime.workspaces().query(runtime.data(), &request).expect("query").head_revision_id
}

#[test]
fn open_creates_one_goal_card_and_is_idempotent_by_key() {
    let (runtime, _dir) = support::runtime();
    let first = open(&runtime, "k");
    assert_eq!(first["problem_card_id"], "card-1");
    assert_eq!(first["revision_id"], "rev-0");
    assert_eq!(first["branch"], "main");
    assert_eq!(open(&runtime, "k"), first, "same key and payload: the original response");
    let other = OpenRequest { idempotency_key: "k".into(), title: "Another".into(), statement: String::new() };
    let conflict = runtime.workspaces().open(runtime.data(), &other).expect_err("same key, other payload");
    assert_eq!(serde_json::to_value(conflict.code).unwrap(), "IDEMPOTENCY_CONFLICT");
    let ws = first["workspace_id"].as_str().unwrap();
    let resume = query(&runtime, ws, QueryView::Resume, None, None);
    assert_eq!(resume["problem"]["kind"], "GOAL");
    assert_eq!(resume["cards_total"], 1);
    assert_eq!(resume["problem"]["provenance"], json!({"recorded_by": "AGENT_RECORDED", "verification": "UNVERIFIED"}));
    let artifact =
        jacobian::resources::read(&runtime, first["revision_artifact_uri"].as_str().unwrap()).expect("artifact");
    let artifact: Value = serde_json::from_str(&artifact.text).unwrap();
    assert_eq!(artifact["schema_uri"], "jacobian:workspace/revision@1");
    assert_eq!(artifact["content"]["entries"][0]["kind"], "GOAL");
}

#[test]
fn writes_advance_only_from_the_head_and_replay_by_key() {
    let (runtime, _dir) = support::runtime();
    let ws = open(&runtime, "k")["workspace_id"].as_str().unwrap().to_owned();
    let entries = json!([{"type": "finding", "client_ref": "l", "kind": "LEMMA", "title": "NOR is commutative", "depends_on": ["card-1"]}]);
    let first = write(&runtime, &ws, "rev-0", "w1", entries.clone()).expect("accepted");
    assert_eq!(first["revision_id"], "rev-1");
    assert_eq!(first["assigned"], json!([{"client_ref": "l", "id": "card-2"}]));
    assert_eq!(write(&runtime, &ws, "rev-0", "w1", entries.clone()).expect("replayed"), first);
    let reused =
        write(&runtime, &ws, "rev-1", "w1", json!([{"type": "scratch", "text": "other"}])).expect_err("reused key");
    assert_eq!(serde_json::to_value(reused.code).unwrap(), "IDEMPOTENCY_CONFLICT");
    let stale_base = write(&runtime, &ws, "rev-0", "w2", entries).expect_err("stale base");
    assert_eq!(serde_json::to_value(stale_base.code).unwrap(), "REVISION_CONFLICT");
    assert_eq!(stale_base.details["current_head"], "rev-1");
    assert_eq!(head(&runtime, &ws), "rev-1", "nothing written by the refused writes");
}

#[test]
fn bad_entries_are_typed_errors_naming_the_field_and_write_nothing() {
    let (runtime, _dir) = support::runtime();
    let ws = open(&runtime, "k")["workspace_id"].as_str().unwrap().to_owned();
    write(&runtime, &ws, "rev-0", "setup", json!([{"type": "finding", "kind": "LEMMA", "title": "a lemma"}]))
        .expect("setup");
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!([{"type": "finding", "kind": "CLAIM", "title": "t", "depends_on": ["card-99"]}]),
            "UNKNOWN_REFERENCE",
            "entries.0.depends_on.0",
        ),
        (
            json!([{"type": "finding", "client_ref": "a", "kind": "CLAIM", "title": "t", "depends_on": ["a"]}]),
            "LINK_CYCLE",
            "entries.0.depends_on.0",
        ),
        (
            json!([{"type": "finding", "client_ref": "a", "kind": "CLAIM", "title": "t", "assumptions": ["b"]},
                {"type": "finding", "client_ref": "b", "kind": "CLAIM", "title": "u", "depends_on": ["a"]}]),
            "LINK_CYCLE",
            "entries.0.assumptions.0",
        ),
        (
            json!([{"type": "finding", "kind": "CLAIM", "title": "t", "depends_on": ["later"]},
                {"type": "finding", "client_ref": "later", "kind": "CLAIM", "title": "u"}]),
            "UNKNOWN_REFERENCE",
            "entries.0.depends_on.0",
        ),
        (
            json!([{"type": "finding", "client_ref": "a", "kind": "CLAIM", "title": "t"},
                {"type": "finding", "client_ref": "a", "kind": "CLAIM", "title": "u"}]),
            "DUPLICATE_CLIENT_REF",
            "entries.1.client_ref",
        ),
        (
            json!([{"type": "mark", "card": "card-2", "mark": "RETRACTED", "reason": "  "}]),
            "MISSING_REASON",
            "entries.0.reason",
        ),
        (
            json!([{"type": "finding", "kind": "CLAIM", "title": "t", "body": "x".repeat(20_000)}]),
            "OVERSIZED",
            "entries.0.body",
        ),
        (
            json!([{"type": "mark", "card": "card-2", "mark": "CLOSED", "reason": "done"}]),
            "MARK_NOT_ALLOWED",
            "entries.0.mark",
        ),
        (
            json!([{"type": "mark", "card": "card-2", "mark": "SUPERSEDED", "reason": "r"}]),
            "INVALID_REQUEST",
            "entries.0.replacement",
        ),
        (
            json!([{"type": "attempt", "target": "card-7", "method": "m", "outcome": "COMPLETED", "summary": ""}]),
            "UNKNOWN_REFERENCE",
            "entries.0.target",
        ),
        (json!([]), "INVALID_REQUEST", "entries"),
    ];
    for (i, (entries, code, path)) in cases.into_iter().enumerate() {
        let error = write(&runtime, &ws, "rev-1", &format!("bad-{i}"), entries).expect_err(code);
        assert_eq!(serde_json::to_value(error.code).unwrap(), code, "case {i}: {error:?}");
        assert_eq!(error.details["path"], path, "case {i}");
        assert_eq!(head(&runtime, &ws), "rev-1", "case {i} wrote something");
    }
    // Drafts have no field for verification, assertion or staleness.
    for field in ["verification", "assertion", "stale"] {
        let request = json!({"workspace_id": ws, "base_revision": "rev-1", "idempotency_key": "x",
                             "entries": [{"type": "finding", "kind": "CLAIM", "title": "t", field: "VERIFIED"}]});
        let error = serde_json::from_value::<WriteRequest>(request).expect_err(field).to_string();
        assert!(error.contains(&format!("unknown field `{field}`")), "{error}");
    }
}

#[test]
fn lifecycle_marks_stale_warnings_and_completion_follow_the_rules() {
    let (runtime, _dir) = support::runtime();
    let ws = open(&runtime, "k")["workspace_id"].as_str().unwrap().to_owned();
    write(&runtime, &ws, "rev-0", "1", json!([
        {"type": "finding", "client_ref": "q", "kind": "OPEN_QUESTION", "title": "is NOR associative?"},
        {"type": "finding", "client_ref": "l", "kind": "LEMMA", "title": "NOR is commutative"},
        {"type": "finding", "client_ref": "c", "kind": "CLAIM", "title": "NOR refutes it", "depends_on": ["l"], "assumptions": ["q"]},
        {"type": "finding", "client_ref": "d", "kind": "CLAIM", "title": "hence the goal fails", "depends_on": ["c"]},
        {"type": "attempt", "target": "card-1", "method": "countermodel search", "outcome": "COMPLETED", "summary": "found NOR"},
    ])).expect("write");
    // A COMPLETED attempt closes nothing.
    let frontier = query(&runtime, &ws, QueryView::Frontier, None, None);
    let ids: Vec<&str> = frontier["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["card-1", "card-2"]);
    assert_eq!(frontier["items"][0]["attempts"], 1);

    let retract = write(
        &runtime,
        &ws,
        "rev-1",
        "2",
        json!([{"type": "mark", "card": "card-3", "mark": "RETRACTED", "reason": "wrong table"}]),
    )
    .unwrap();
    assert_eq!(retract["stale_warnings"]["newly_stale"], json!(["card-4", "card-5"]));
    let stale = query(&runtime, &ws, QueryView::Stale, None, None);
    assert_eq!(stale["total"], 2);
    assert_eq!(stale["stale"][1]["roots"][0]["path"], json!(["card-5", "card-4", "card-3"]));
    // A retracted card must be restored before it can be archived.
    let refused = write(
        &runtime,
        &ws,
        "rev-2",
        "3",
        json!([{"type": "mark", "card": "card-3", "mark": "ARCHIVED", "reason": "tidy"}]),
    )
    .unwrap_err();
    assert_eq!(serde_json::to_value(refused.code).unwrap(), "MARK_NOT_ALLOWED");
    write(
        &runtime,
        &ws,
        "rev-2",
        "4",
        json!([{"type": "mark", "card": "card-3", "mark": "ACTIVE", "reason": "fixed"}]),
    )
    .unwrap();
    assert_eq!(query(&runtime, &ws, QueryView::Stale, None, None)["total"], 0, "restored: nothing is stale");
    // Superseding invalidates the old dependents and reconnects nothing.
    write(
        &runtime,
        &ws,
        "rev-3",
        "5",
        json!([
            {"type": "finding", "client_ref": "n", "kind": "LEMMA", "title": "NOR is commutative, restated"},
            {"type": "mark", "card": "card-3", "mark": "SUPERSEDED", "reason": "restated", "replacement": "n"},
        ]),
    )
    .unwrap();
    assert_eq!(query(&runtime, &ws, QueryView::Stale, None, None)["total"], 2);
    // An archived stale card leaves the STALE view; the question can be closed.
    write(
        &runtime,
        &ws,
        "rev-4",
        "6",
        json!([
            {"type": "mark", "card": "card-5", "mark": "ARCHIVED", "reason": "not needed"},
            {"type": "mark", "card": "card-2", "mark": "CLOSED", "reason": "answered"},
        ]),
    )
    .unwrap();
    let stale = query(&runtime, &ws, QueryView::Stale, None, None);
    assert_eq!(stale["total"], 1);
    assert_eq!(stale["stale"][0]["card"], "card-4");
    let frontier = query(&runtime, &ws, QueryView::Frontier, None, None);
    assert_eq!(frontier["total"], 1, "only the goal is open; CLOSED applied to the question only");
}

#[test]
fn context_is_a_bounded_dependency_first_closure_and_queries_read_past_revisions() {
    let (runtime, _dir) = support::runtime();
    let ws = open(&runtime, "k")["workspace_id"].as_str().unwrap().to_owned();
    // A chain card-2 <- card-3 <- ... <- card-31, plus an unrelated card.
    let mut entries = vec![json!({"type": "finding", "client_ref": "c0", "kind": "DEFINITION", "title": "base"})];
    for i in 1..30 {
        entries.push(json!({"type": "finding", "client_ref": format!("c{i}"), "kind": "LEMMA", "title": format!("step {i}"), "depends_on": [format!("c{}", i - 1)]}));
    }
    entries.push(json!({"type": "finding", "kind": "NOTE", "title": "unrelated"}));
    entries
        .push(json!({"type": "attempt", "target": "c29", "method": "check", "outcome": "INCONCLUSIVE", "summary": ""}));
    write(&runtime, &ws, "rev-0", "chain", json!(entries)).unwrap();
    let context = query(&runtime, &ws, QueryView::Context, Some("card-31"), Some(10));
    assert_eq!(context["total_dependency_count"], 29);
    assert_eq!(context["truncated"], true);
    let ids: Vec<&str> =
        context["dependencies"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    // Bounded to the ten nearest premises (the remotest ancestors are dropped), listed dependencies first.
    assert_eq!(ids, (21..31).map(|n| format!("card-{n}")).collect::<Vec<_>>(), "the nearest, dependencies first");
    assert_eq!(context["recent_target_attempts"][0]["outcome"], "INCONCLUSIVE");
    let missing = runtime.workspaces().query(
        runtime.data(),
        &QueryRequest {
            workspace_id: ws.clone(),
            view: QueryView::Context,
            revision_id: None,
            target_card_id: None,
            limit: None,
        },
    );
    assert_eq!(missing.unwrap_err().details["path"], "target_card_id");

    let past = runtime
        .workspaces()
        .query(
            runtime.data(),
            &QueryRequest {
                workspace_id: ws.clone(),
                view: QueryView::Resume,
                revision_id: Some("rev-0".into()),
                target_card_id: None,
                limit: None,
            },
        )
        .unwrap();
    let past = json!(past);
    assert_eq!(past["revision_id"], "rev-0");
    assert_eq!(past["head_revision_id"], "rev-1");
    assert_eq!(past["at_head"], false, "a past revision says it is not the head");
    assert_eq!(past["result"]["cards_total"], 1);
    // The state survives a restart: folded again from SQLite.
    let reopened = support::open(_dir.path().to_path_buf());
    assert_eq!(query(&reopened, &ws, QueryView::Resume, None, None)["cards_total"], 32);
}

#[test]
fn graphs_show_cards_links_marks_and_stale_paths() {
    let (runtime, _dir) = support::runtime();
    let ws = open(&runtime, "k")["workspace_id"].as_str().unwrap().to_owned();
    write(
        &runtime,
        &ws,
        "rev-0",
        "1",
        json!([
            {"type": "finding", "client_ref": "l", "kind": "LEMMA", "title": "a <lemma>"},
            {"type": "finding", "kind": "CLAIM", "title": "a claim", "depends_on": ["l"], "assumptions": ["card-1"]},
            {"type": "mark", "card": "l", "mark": "RETRACTED", "reason": "wrong"},
        ]),
    )
    .unwrap();
    let state = runtime.workspaces().state(runtime.data(), &ws, None).unwrap();
    let dot = jacobian::workspace::graph::dot(&state);
    assert!(dot.contains("\"card-3\" -> \"card-2\" [label=\"depends on\"]"), "{dot}");
    assert!(dot.contains("\"card-3\" -> \"card-1\" [label=\"assumes\", style=dashed]"), "{dot}");
    assert!(dot.contains("[RETRACTED]") && dot.contains("[ACTIVE, STALE]"), "{dot}");
    let svg = jacobian::workspace::graph::svg(&state, Default::default());
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<rect x=").count(), 3, "one box per card");
    assert!(svg.contains("a &lt;lemma&gt;"), "titles are escaped");
}

#[test]
fn text_limits_hold_at_the_exact_boundary() {
    use jacobian::workspace::model::{MAX_BODY, MAX_TITLE};
    let (runtime, _dir) = support::runtime();
    let ws = open(&runtime, "k")["workspace_id"].as_str().unwrap().to_owned();
    let at_limit =
        json!([{"type": "finding", "kind": "CLAIM", "title": "é".repeat(MAX_TITLE / 2), "body": "x".repeat(MAX_BODY)}]);
    write(&runtime, &ws, "rev-0", "at-limit", at_limit).expect("exactly at the limits is accepted");
    for (i, (entry, path)) in [
        (json!({"type": "finding", "kind": "CLAIM", "title": "t", "body": "x".repeat(MAX_BODY + 1)}), "entries.0.body"),
        // Limits count bytes: one two-byte character past the title limit.
        (
            json!({"type": "finding", "kind": "CLAIM", "title": format!("{}é", "x".repeat(MAX_TITLE - 1))}),
            "entries.0.title",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let error = write(&runtime, &ws, "rev-1", &format!("over-{i}"), json!([entry])).expect_err("one byte over");
        assert_eq!(serde_json::to_value(error.code).unwrap(), "OVERSIZED", "{error:?}");
        assert_eq!(error.details["path"], path);
        assert_eq!(head(&runtime, &ws), "rev-1", "nothing written");
    }
}

#[test]
fn sub_goals_join_the_frontier_close_and_stay_visible_while_stale() {
    let (runtime, _dir) = support::runtime();
    let ws = open(&runtime, "sub-goals")["workspace_id"].as_str().unwrap().to_owned();
    let entries = json!([
        {"type": "finding", "client_ref": "lemma", "kind": "CLAIM", "title": "x*y = y*x in every model"},
        {"type": "finding", "client_ref": "sub", "kind": "GOAL", "title": "find a non-associative model",
         "depends_on": ["lemma"]},
        {"type": "finding", "client_ref": "side", "kind": "GOAL", "title": "bound the smallest order"},
    ]);
    write(&runtime, &ws, "rev-0", "w1", entries).expect("GOAL findings are sub-goals");
    let frontier = query(&runtime, &ws, QueryView::Frontier, None, None);
    let titles: Vec<&str> =
        frontier["items"].as_array().unwrap().iter().map(|i| i["title"].as_str().unwrap()).collect();
    assert_eq!(frontier["total"], 3, "the problem card and two open sub-goals: {frontier}");
    assert!(titles.contains(&"find a non-associative model") && titles.contains(&"bound the smallest order"));
    // A closed sub-goal leaves the frontier; the problem card is still card-1.
    let close = json!([{"type": "mark", "card": "card-4", "mark": "CLOSED", "reason": "bounded by 3"}]);
    write(&runtime, &ws, "rev-1", "w2", close).expect("CLOSED applies to a sub-goal");
    assert_eq!(query(&runtime, &ws, QueryView::Frontier, None, None)["total"], 2);
    assert_eq!(query(&runtime, &ws, QueryView::Resume, None, None)["problem"]["id"], "card-1");
    // Its premise retracted, the sub-goal is an active stale goal: on the frontier and in STALE until marked.
    let retract = json!([{"type": "mark", "card": "card-2", "mark": "RETRACTED", "reason": "wrong"}]);
    write(&runtime, &ws, "rev-2", "w3", retract).unwrap();
    let stale = query(&runtime, &ws, QueryView::Stale, None, None);
    assert_eq!((stale["total"].as_u64(), &stale["stale"][0]["card"]), (Some(1), &json!("card-3")), "{stale}");
    let frontier = query(&runtime, &ws, QueryView::Frontier, None, None);
    let sub = frontier["items"].as_array().unwrap().iter().find(|i| i["id"] == "card-3").expect("visible");
    assert_eq!(sub["stale"], true, "{sub}");
    let archive = json!([{"type": "mark", "card": "card-3", "mark": "ARCHIVED", "reason": "premise gone"}]);
    write(&runtime, &ws, "rev-3", "w4", archive).unwrap();
    assert_eq!(query(&runtime, &ws, QueryView::Stale, None, None)["total"], 0, "an archived goal is no longer active");
}

/// `jacobian ARGS` with `stdin` on its standard input: (exit code, stdout, stderr).
fn jacobian_with_stdin(data: &std::path::Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write as _;
    let mut child = std::process::Command::new(support::BIN)
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run jacobian");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

#[test]
fn the_cli_reads_requests_as_its_help_says_and_refuses_them_as_the_tools_do() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // `-` is standard input, as `--help` says; `--file` still works.
    let open = r#"{"idempotency_key": "k", "title": "T", "statement": "S"}"#;
    let (code, stdout, stderr) = jacobian_with_stdin(&data, &["workspace", "open", "-"], open);
    assert_eq!(code, 0, "{stderr}");
    let ws = serde_json::from_str::<Value>(&stdout).unwrap()["workspace_id"].as_str().unwrap().to_owned();
    let file = dir.path().join("open.json");
    std::fs::write(&file, open).unwrap();
    let again: Value =
        serde_json::from_str(&support::cli(&data, &["workspace", "open", "--file", file.to_str().unwrap()])).unwrap();
    assert_eq!(again["workspace_id"], ws.as_str(), "idempotent by key");

    // A request that does not fit names the field by its dot-path, as over MCP,
    // inside a oneOf of entry types too, and writes nothing.
    let entry = |extra: Value| {
        let mut entry = json!({"type": "attempt", "target": "card-1", "outcome": "COMPLETED", "summary": "s"});
        entry.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        entry
    };
    let finding = json!({"type": "finding", "kind": "LEMMA", "title": "a lemma"});
    let cases = [
        (json!([finding, finding, finding, entry(json!({}))]), "entries.3.method"),
        (json!([finding, {"type": "finding", "kind": "LEMMA"}]), "entries.1.title"),
        (json!([entry(json!({"method": "m", "capability": "x"}))]), "entries.0.capability"),
        (json!([{"type": "finding", "kind": "LEMMA", "title": 7}]), "entries.0.title"),
    ];
    for (entries, path) in cases {
        let request = json!({"workspace_id": ws, "base_revision": "rev-0", "idempotency_key": "w", "entries": entries});
        let (code, stdout, stderr) = jacobian_with_stdin(&data, &["workspace", "write", "-"], &request.to_string());
        assert_eq!(code, 2, "{stdout}{stderr}");
        let diagnostic = &serde_json::from_str::<Value>(&stdout).unwrap()["diagnostic"];
        assert_eq!((&diagnostic["code"], &diagnostic["details"]["path"]), (&json!("INVALID_REQUEST"), &json!(path)));
    }
    let (code, stdout, _) = jacobian_with_stdin(
        &data,
        &["workspace", "write", "-"],
        &json!({
            "workspace_id": ws, "base_revision": "rev-0", "idempotency_key": "w",
            "entries": [entry(json!({"method": "by hand"}))],
        })
        .to_string(),
    );
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap()["revision_id"], "rev-1", "nothing was written before");

    // A missing argument: clap's whole message, the argument's name included.
    let (code, _, stderr) = jacobian_with_stdin(&data, &["workspace", "open"], "");
    let envelope: Value = serde_json::from_str(stderr.trim()).unwrap_or_else(|_| panic!("{stderr}"));
    assert_eq!((code, &envelope["error_type"]), (3, &json!("validation_error")), "{envelope}");
    let message = envelope["error"].as_str().unwrap();
    assert!(message.contains("required arguments") && message.contains("<FILE|--file <FILE>>"), "{message}");
    // Not JSON at all: the file named.
    let (code, _, stderr) = jacobian_with_stdin(&data, &["workspace", "query", "-"], "{");
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("-: not valid JSON"), "{stderr}");
}
