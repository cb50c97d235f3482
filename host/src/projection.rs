//! Model-visible text projections of a `CapabilityResult`.
//!
//! Structured content always carries the complete result. The text is what a
//! model reads: `STANDARD` keeps small outputs complete and replaces large
//! output fields by their JSON path, type, byte count and SHA-256 (of their
//! canonical JSON, so they can be checked against the episode); `SUMMARY`
//! omits the output; `FULL` is the complete result. Every non-`FULL` text
//! carries `mcp_projection`.

use serde_json::{Map, Value, json};

use crate::contract::ResultView;
use crate::digest::{Digest, canonical_json};

/// Outputs up to this many bytes stay complete in `STANDARD` text.
pub const TEXT_OUTPUT_LIMIT: usize = 4096;
/// In a larger output, fields up to this many bytes stay; larger ones are replaced.
pub const FIELD_LIMIT: usize = 512;

/// The text and whether it carries the complete operation output.
pub struct Projection {
    /// Model-visible text (JSON).
    pub text: String,
    /// Whether nothing of the output was omitted.
    pub output_complete: bool,
}

/// Project `episode` (the result without accounting and transport).
pub fn project(episode: &Value, view: ResultView, digest: &Digest, episode_uri: &str) -> Projection {
    let mut text_value = episode.clone();
    let mut omitted = Vec::new();
    if let Some(map) = text_value.as_object_mut() {
        if view == ResultView::Full {
            let text = serde_json::to_string(&text_value).unwrap_or_default();
            return Projection { text, output_complete: true };
        }
        // The caller's own request and the event trace stay in the episode only.
        for key in ["request", "trace"] {
            if let Some(value) = map.remove(key) {
                marker(key, &value, &mut omitted);
            }
        }
        match view {
            ResultView::Full => {}
            ResultView::Summary => {
                if let Some(output) = map.get_mut("output").filter(|o| !o.is_null()) {
                    *output = marker("output", output, &mut omitted);
                }
            }
            ResultView::Standard => {
                if let Some(output) = map.get_mut("output")
                    && canonical_json(output).len() > TEXT_OUTPUT_LIMIT
                {
                    shrink(output, "output", &mut omitted);
                }
                if let Some(log) = map.get_mut("guest_log")
                    && canonical_json(log).len() > TEXT_OUTPUT_LIMIT
                {
                    *log = marker("guest_log", log, &mut omitted);
                }
            }
        }
        map.insert(
            "mcp_projection".into(),
            json!({
                "view": view,
                "omitted": omitted,
                "full_result_digest": digest.to_string(),
                "full_result_episode_uri": episode_uri,
                "note": "structured content carries the complete result; read the episode resource for it as text",
            }),
        );
    }
    let output_complete = !omitted.iter().any(|o: &Value| o["path"].as_str().is_some_and(|p| p.starts_with("output")));
    Projection { text: serde_json::to_string(&text_value).unwrap_or_default(), output_complete }
}

/// Replace the large fields of an object output (the whole output otherwise).
fn shrink(output: &mut Value, path: &str, omitted: &mut Vec<Value>) {
    match output {
        Value::Object(fields) => {
            let replaced: Map<String, Value> = fields
                .iter()
                .map(|(name, value)| {
                    let field_path = format!("{path}.{name}");
                    if canonical_json(value).len() > FIELD_LIMIT {
                        (name.clone(), marker(&field_path, value, omitted))
                    } else {
                        (name.clone(), value.clone())
                    }
                })
                .collect();
            *fields = replaced;
        }
        other => *other = marker(path, other, omitted),
    }
}

fn marker(path: &str, value: &Value, omitted: &mut Vec<Value>) -> Value {
    let bytes = canonical_json(value);
    let entry = json!({
        "path": path,
        "type": type_name(value),
        "bytes": bytes.len(),
        "sha256": Digest::of(&bytes).to_hex(),
    });
    omitted.push(entry.clone());
    json!({"omitted": entry})
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
