//! Wire-shape snapshots: `tools/list`, the three describe projections and the
//! three invoke text views. Digests, cursors and fuel figures are redacted so
//! the snapshots change only when a shape or a published text changes.
//! Update with `UPDATE_EXPECT=1 cargo test --release --test it snapshots`.

use expect_test::{ExpectFile, expect_file};
use serde_json::{Value, json};

use crate::support::{SEARCH, serve};

fn redact(value: &mut Value) {
    match value {
        Value::String(s) => {
            let digest_like = |t: &str| t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit());
            if let Some((prefix, tail)) = s.rsplit_once(['/', ':'])
                && digest_like(tail)
            {
                *s = format!("{prefix}/<digest>");
            } else if s.starts_with("c1.") {
                *s = "<cursor>".into();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if matches!(
                    key.as_str(),
                    "fuel_consumed" | "wall_time_us" | "nodes" | "model_visible_bytes" | "logical_bytes"
                ) {
                    *v = json!("<redacted>");
                } else {
                    redact(v);
                }
            }
        }
        _ => {}
    }
}

fn check(mut value: Value, expected: ExpectFile) {
    redact(&mut value);
    expected.assert_eq(&format!("{}\n", serde_json::to_string_pretty(&value).unwrap()));
}

#[tokio::test(flavor = "multi_thread")]
async fn wire_shapes_are_stable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = serve(dir.path()).await;
    let tools = serde_json::to_value(client.list_all_tools().await.expect("tools")).unwrap();
    check(tools, expect_file!["snapshots/tools_list.json"]);

    for (view, file) in [
        ("SUMMARY", expect_file!["snapshots/describe_summary.json"]),
        ("CONTRACT", expect_file!["snapshots/describe_contract.json"]),
        ("FULL", expect_file!["snapshots/describe_full.json"]),
    ] {
        let (value, _) =
            crate::support::call(&client, "capability.describe", json!({"capability_id": SEARCH, "view": view})).await;
        check(value, file);
    }
    let (search, _) = crate::support::call(
        &client,
        "capability.describe",
        json!({"query": "counterexample associativity", "limit": 2}),
    )
    .await;
    check(search, expect_file!["snapshots/describe_search.json"]);

    for (view, file) in [
        ("STANDARD", expect_file!["snapshots/invoke_text_standard.json"]),
        ("SUMMARY", expect_file!["snapshots/invoke_text_summary.json"]),
        ("FULL", expect_file!["snapshots/invoke_text_full.json"]),
    ] {
        let args = json!({"capability_id": SEARCH, "view": view,
                          "input": {"hypotheses": ["commutative"], "target": "associative", "max_order": 2}});
        let result = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new("capability.invoke")
                    .with_arguments(args.as_object().cloned().unwrap()),
            )
            .await
            .expect("call");
        let text = match &result.content[0] {
            rmcp::model::ContentBlock::Text(t) => t.text.clone(),
            other => panic!("{other:?}"),
        };
        check(serde_json::from_str(&text).expect("text is JSON"), file);
    }
    client.cancel().await.expect("shutdown");
}
