//! RFC 8785 canonical JSON, written straight from a [`Value`] into one
//! buffer.
//!
//! Every stored episode, artifact and policy is named by the SHA-256 of
//! these bytes, so they must never change: the module is checked byte for
//! byte against the RFC's own examples and, on random values, against an
//! independent implementation (`serde_json_canonicalizer`, kept as a test
//! dependency). It exists because that implementation buffers every member
//! of every object separately and parses each key back to sort it, which was
//! a quarter of a trivial invoke's time.
//!
//! The rules: no whitespace; object members sorted by the UTF-16 code units
//! of their names; strings with only `"`, `\` and the controls below U+0020
//! escaped (`\b \t \n \f \r` by name, the rest as `\u00xx`); every number
//! written as the ECMAScript `Number.prototype.toString` of its `f64` value
//! (so `1.0` is `1`, `1e21` is `1e+21`, and integers beyond 2^53 round as
//! IEEE doubles do).

use std::ops::Range;

use serde_json::{Map, Number, Value};

/// RFC 8785 canonical JSON bytes of `value`.
pub fn canonical_json(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(&mut out, value);
    out
}

/// The canonical bytes of an object, with where each member's value lies in
/// them (in canonical order): a member's canonical form is `bytes[range]`,
/// with no need to write it again.
pub fn canonical_members(map: &Map<String, Value>) -> (Vec<u8>, Vec<(&str, Range<usize>)>) {
    let mut out = Vec::with_capacity(1024);
    let mut spans = Vec::with_capacity(map.len());
    write_object(&mut out, map, |name, range| spans.push((name, range)));
    (out, spans)
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => push_canonical_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(out, map, |_, _| {}),
    }
}

/// An object, members in UTF-16 order; `member` learns each value's span.
fn write_object<'m>(out: &mut Vec<u8>, map: &'m Map<String, Value>, mut member: impl FnMut(&'m str, Range<usize>)) {
    let mut write = |out: &mut Vec<u8>, first: bool, name: &'m str, value: &Value| {
        if !first {
            out.push(b',');
        }
        push_canonical_string(out, name);
        out.push(b':');
        let start = out.len();
        write_value(out, value);
        member(name, start..out.len());
    };
    out.push(b'{');
    // A map iterates in code point order, which is UTF-16 order unless a
    // name holds a character at or above U+E000 (UTF-8 lead byte 0xEE or
    // more): those sort after the surrogate pairs of characters beyond
    // U+FFFF in UTF-16, before them by code point.
    if map.keys().any(|k| k.bytes().any(|b| b >= 0xEE)) {
        let mut members: Vec<(&'m String, &'m Value)> = map.iter().collect();
        members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
        for (i, (name, value)) in members.into_iter().enumerate() {
            write(out, i == 0, name, value);
        }
    } else {
        for (i, (name, value)) in map.iter().enumerate() {
            write(out, i == 0, name, value);
        }
    }
    out.push(b'}');
}

fn write_number(out: &mut Vec<u8>, n: &Number) {
    // Without serde_json's arbitrary_precision every number is an i64, a u64
    // or a finite f64, and `as_f64` gives its double.
    let double = n.as_f64().unwrap_or_default();
    let mut buffer = ryu_js::Buffer::new();
    out.extend_from_slice(buffer.format_finite(double).as_bytes());
}

/// Append `text` to `out` as a canonical JSON string.
pub fn push_canonical_string(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut plain = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => &[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 0xf) as usize]],
            _ => continue,
        };
        out.extend_from_slice(&bytes[plain..i]);
        out.extend_from_slice(escape);
        plain = i + 1;
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}
