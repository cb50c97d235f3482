//! Model-visible text projections of a `CapabilityResult`.
//!
//! Structured content always carries the complete result. The text is what a
//! model reads: `STANDARD` keeps small outputs complete and replaces large
//! output fields by their JSON path, type, byte count and SHA-256 (of their
//! canonical JSON, so they can be checked against the episode); `SUMMARY`
//! omits the output; `FULL` is the complete result: the episode's own bytes.
//! Every non-`FULL` text carries `mcp_projection`.
//!
//! The text is cut from the episode's canonical bytes rather than written
//! again: a member kept whole is copied from them, and an omitted member's
//! size and digest are those of its span in them, so every byte count and
//! digest a model reads is exactly that of the episode it can fetch. Numbers
//! read as the episode stores them (RFC 8785: as IEEE doubles, so an integer
//! beyond 2^53 is rounded; structured content keeps it exact, and outputs
//! that need such integers exactly carry them as strings).

use std::borrow::Cow;
use std::ops::Range;

use serde_json::{Map, Value, json};

use crate::contract::ResultView;
use crate::digest::{Digest, canonical_json, canonical_members, push_canonical_string};

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

/// An episode in canonical form: its members, its bytes (what is stored and
/// digested) and where each member's value lies in them.
pub struct Canonical<'e> {
    pub members: &'e Map<String, Value>,
    pub bytes: Vec<u8>,
    pub spans: Vec<(&'e str, Range<usize>)>,
}

impl<'e> Canonical<'e> {
    /// Write `episode` (the result without accounting and transport) in canonical form.
    pub fn of(members: &'e Map<String, Value>) -> Self {
        let (bytes, spans) = canonical_members(members);
        Canonical { members, bytes, spans }
    }
}

/// Project an episode for the model.
pub fn project(episode: &Canonical<'_>, view: ResultView, digest: &Digest, episode_uri: &str) -> Projection {
    if view == ResultView::Full {
        return Projection { text: utf8(episode.bytes.clone()), output_complete: true };
    }
    let mut omitted = Vec::new();
    // (name, text of its value), in canonical order; `None` drops the member.
    let mut members: Vec<(&str, Option<Cow<'_, [u8]>>)> = Vec::with_capacity(episode.spans.len() + 1);
    for (name, span) in &episode.spans {
        let bytes = &episode.bytes[span.clone()];
        let replaced = match (*name, view) {
            // The caller's own request and the event trace stay in the episode only.
            ("request" | "trace", _) => {
                marker(name, bytes, &mut omitted);
                None
            }
            ("output", ResultView::Summary) if bytes != b"null" => Some(marker(name, bytes, &mut omitted).into()),
            ("output", ResultView::Standard) if bytes.len() > TEXT_OUTPUT_LIMIT => {
                Some(shrink(&episode.members[*name], bytes, &mut omitted).into())
            }
            ("guest_log", ResultView::Standard) if bytes.len() > TEXT_OUTPUT_LIMIT => {
                Some(marker(name, bytes, &mut omitted).into())
            }
            _ => Some(bytes.into()),
        };
        members.push((name, replaced));
    }
    let output_complete = !omitted.iter().any(|o: &Value| o["path"].as_str().is_some_and(|p| p.starts_with("output")));
    let projection = json!({
        "view": view,
        "omitted": omitted,
        "full_result_digest": digest.to_string(),
        "full_result_episode_uri": episode_uri,
        "note": "structured content carries the complete result; read the episode resource for it as text",
    });
    // Every member name of a result is ASCII, so byte order is canonical order.
    let at = members.partition_point(|(name, _)| *name < "mcp_projection");
    members.insert(at, ("mcp_projection", Some(canonical_json(&projection).into())));
    let mut text = Vec::with_capacity(episode.bytes.len() + 512);
    text.push(b'{');
    for (name, value) in members.iter().filter_map(|(name, value)| Some((name, value.as_ref()?))) {
        if text.len() > 1 {
            text.push(b',');
        }
        push_canonical_string(&mut text, name);
        text.push(b':');
        text.extend_from_slice(value);
    }
    text.push(b'}');
    Projection { text: utf8(text), output_complete }
}

/// Canonical JSON as text: it is UTF-8, written from `str`s and ASCII.
fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Replace the large fields of an object output (the whole output otherwise).
fn shrink(output: &Value, bytes: &[u8], omitted: &mut Vec<Value>) -> Vec<u8> {
    let Value::Object(fields) = output else { return marker("output", bytes, omitted) };
    let (canonical, spans) = canonical_members(fields);
    let mut text = vec![b'{'];
    for (i, (name, span)) in spans.into_iter().enumerate() {
        if i > 0 {
            text.push(b',');
        }
        push_canonical_string(&mut text, name);
        text.push(b':');
        let field = &canonical[span];
        if field.len() > FIELD_LIMIT {
            text.extend_from_slice(&marker(&format!("output.{name}"), field, omitted));
        } else {
            text.extend_from_slice(field);
        }
    }
    text.push(b'}');
    text
}

/// Note `bytes` (a value's canonical form) as omitted at `path`; the text
/// that stands in for it.
fn marker(path: &str, bytes: &[u8], omitted: &mut Vec<Value>) -> Vec<u8> {
    let entry = json!({
        "path": path,
        "type": type_name(bytes),
        "bytes": bytes.len(),
        "sha256": Digest::of(bytes).to_hex(),
    });
    let text = canonical_json(&json!({"omitted": entry}));
    omitted.push(entry);
    text
}

/// The JSON type of a canonical value, from its first byte.
fn type_name(bytes: &[u8]) -> &'static str {
    match bytes.first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "boolean",
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        _ => "number",
    }
}
