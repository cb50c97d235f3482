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

use serde_json::{Map, Value};

use crate::contract::ResultView;
use crate::digest::{Digest, canonical_members, push_canonical_string};

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
    let mut omitted = Omitted::default();
    // (name, text of its value), in canonical order; `None` drops the member.
    let mut members: Vec<(&str, Option<Cow<'_, [u8]>>)> = Vec::with_capacity(episode.spans.len() + 1);
    for (name, span) in &episode.spans {
        let bytes = &episode.bytes[span.clone()];
        let replaced = match (*name, view) {
            // The caller's own request and the event trace stay in the episode only.
            ("request" | "trace", _) => {
                omitted.note(name, bytes);
                None
            }
            ("output", ResultView::Summary) if bytes != b"null" => Some(omitted.marker(name, bytes).into()),
            ("output", ResultView::Standard) if bytes.len() > TEXT_OUTPUT_LIMIT => {
                Some(shrink(&episode.members[*name], bytes, &mut omitted).into())
            }
            ("guest_log", ResultView::Standard) if bytes.len() > TEXT_OUTPUT_LIMIT => {
                Some(omitted.marker(name, bytes).into())
            }
            _ => Some(bytes.into()),
        };
        members.push((name, replaced));
    }
    let output_complete = !omitted.of_output;
    // Every member name of a result is ASCII, so byte order is canonical order.
    let at = members.partition_point(|(name, _)| *name < "mcp_projection");
    members.insert(at, ("mcp_projection", Some(omitted.projection(view, digest, episode_uri).into())));
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
fn shrink(output: &Value, bytes: &[u8], omitted: &mut Omitted) -> Vec<u8> {
    let Value::Object(fields) = output else { return omitted.marker("output", bytes) };
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
            text.extend_from_slice(&omitted.marker(&format!("output.{name}"), field));
        } else {
            text.extend_from_slice(field);
        }
    }
    text.push(b'}');
    text
}

/// The `omitted` entries of a text, each written in canonical form as it
/// is noted (members in canonical order: `bytes`, `path`, `sha256`,
/// `type`), without a JSON value made for it.
#[derive(Default)]
struct Omitted {
    /// `[entry,entry,…` (the closing bracket is written with the projection).
    entries: Vec<u8>,
    /// Whether anything of the output was omitted.
    of_output: bool,
}

impl Omitted {
    /// Note `bytes` (a value's canonical form) as omitted at `path`.
    fn note(&mut self, path: &str, bytes: &[u8]) {
        self.of_output |= path.starts_with("output");
        self.entries.push(if self.entries.is_empty() { b'[' } else { b',' });
        let entry = &mut self.entries;
        entry.extend_from_slice(b"{\"bytes\":");
        entry.extend_from_slice(bytes.len().to_string().as_bytes());
        entry.extend_from_slice(b",\"path\":");
        push_canonical_string(entry, path);
        entry.extend_from_slice(b",\"sha256\":\"");
        entry.extend_from_slice(Digest::of(bytes).to_hex().as_bytes());
        entry.extend_from_slice(b"\",\"type\":\"");
        entry.extend_from_slice(type_name(bytes).as_bytes());
        entry.extend_from_slice(b"\"}");
    }

    /// Note `bytes` as omitted at `path`; the text that stands in for it:
    /// `{"omitted":entry}`.
    fn marker(&mut self, path: &str, bytes: &[u8]) -> Vec<u8> {
        let start = self.entries.len() + 1;
        self.note(path, bytes);
        let mut text = Vec::with_capacity(self.entries.len() - start + 12);
        text.extend_from_slice(b"{\"omitted\":");
        text.extend_from_slice(&self.entries[start..]);
        text.push(b'}');
        text
    }

    /// The `mcp_projection` member's value, in canonical form.
    fn projection(&self, view: ResultView, digest: &Digest, episode_uri: &str) -> Vec<u8> {
        let mut text = Vec::with_capacity(self.entries.len() + 320);
        text.extend_from_slice(b"{\"full_result_digest\":");
        push_canonical_string(&mut text, &digest.to_string());
        text.extend_from_slice(b",\"full_result_episode_uri\":");
        push_canonical_string(&mut text, episode_uri);
        text.extend_from_slice(b",\"note\":");
        push_canonical_string(&mut text, NOTE);
        text.extend_from_slice(b",\"omitted\":");
        match self.entries.is_empty() {
            true => text.extend_from_slice(b"[]"),
            false => {
                text.extend_from_slice(&self.entries);
                text.push(b']');
            }
        }
        text.extend_from_slice(b",\"view\":");
        push_canonical_string(&mut text, view_name(view));
        text.push(b'}');
        text
    }
}

/// What every projection says of where the complete result is.
const NOTE: &str = "structured content carries the complete result; read the episode resource for it as text";

/// A view's name as it serializes.
fn view_name(view: ResultView) -> &'static str {
    match view {
        ResultView::Standard => "STANDARD",
        ResultView::Summary => "SUMMARY",
        ResultView::Full => "FULL",
    }
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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use strum::IntoEnumIterator as _;

    use super::*;
    use crate::digest::canonical_json;

    fn projected(members: &Value, view: ResultView) -> (Value, Projection) {
        let members = members.as_object().expect("object");
        let episode = Canonical::of(members);
        let digest = Digest::of(&episode.bytes);
        let projection = project(&episode, view, &digest, "episode://x");
        let text: Value = serde_json::from_str(&projection.text).expect("the text is JSON");
        (text, projection)
    }

    /// The text written piece by piece is canonical JSON, and each
    /// omission names its path, type, size and digest.
    #[test]
    fn a_projection_is_canonical_and_names_what_it_leaves_out() {
        let large = "z".repeat(FIELD_LIMIT + 1);
        let members = json!({
            "capability_id": "a.b", "request": {"input": {"q": "\"quoted\""}}, "trace": [{"event": "stop", "offset": 0}],
            "output": {"big": large.clone(), "list": (0..2000).collect::<Vec<_>>(), "q\"uote": large, "small": 1, "ünï": "\u{1}"},
        });
        for view in ResultView::iter() {
            let (text, projection) = projected(&members, view);
            assert_eq!(canonical_json(&text), projection.text.as_bytes(), "{view:?}");
            if view == ResultView::Full {
                assert!(projection.output_complete && text.get("mcp_projection").is_none());
                continue;
            }
            let meta = &text["mcp_projection"];
            assert_eq!(meta["view"], serde_json::to_value(view).unwrap());
            assert_eq!(meta["full_result_episode_uri"], "episode://x");
            let digest = Digest::of(&Canonical::of(members.as_object().unwrap()).bytes);
            assert_eq!(meta["full_result_digest"], digest.to_string());
            assert_eq!(meta["note"], NOTE);
            let paths: Vec<&str> =
                meta["omitted"].as_array().unwrap().iter().map(|o| o["path"].as_str().unwrap()).collect();
            let expected: &[&str] = match view {
                ResultView::Summary => &["output", "request", "trace"],
                _ => &["output.big", "output.list", "output.q\"uote", "request", "trace"],
            };
            assert_eq!(paths, expected, "{view:?}");
            assert!(!projection.output_complete);
            for entry in meta["omitted"].as_array().unwrap() {
                let path = entry["path"].as_str().unwrap();
                let value = path.split('.').fold(&members, |v, key| &v[key]);
                let bytes = canonical_json(value);
                assert_eq!(entry["bytes"], bytes.len(), "{path}");
                assert_eq!(entry["sha256"], Digest::of(&bytes).to_hex(), "{path}");
                let kind = match value {
                    Value::Object(_) => "object",
                    Value::Array(_) => "array",
                    Value::String(_) => "string",
                    _ => "other",
                };
                assert_eq!(entry["type"], kind, "{path}");
                if path.starts_with("output") {
                    let at = path.split('.').fold(&text, |v, key| &v[key]);
                    assert_eq!(at["omitted"], *entry, "{path}: the marker stands where the value was");
                }
            }
        }
        // A small output stays whole, and nothing of it is omitted.
        let (text, projection) = projected(&json!({"output": {"small": 1}, "trace": []}), ResultView::Standard);
        assert!(projection.output_complete);
        assert_eq!(text["output"], json!({"small": 1}));
        assert_eq!(text["mcp_projection"]["omitted"].as_array().unwrap().len(), 1);
        let (text, _) = projected(&json!({"status": "COMPLETED"}), ResultView::Standard);
        assert_eq!(text["mcp_projection"]["omitted"], json!([]));
    }
}
