//! SHA-256 digests, canonical JSON (RFC 8785) and artifact URIs.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

mod canonical;
pub use canonical::{canonical_json, canonical_members, push_canonical_string};

/// A SHA-256 digest. Displayed as `sha256:<64 lowercase hex>`; parsed from
/// that form or from bare hex.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest([u8; 32]);

/// The URI scheme prefix of stored artifacts.
pub const ARTIFACT_URI_PREFIX: &str = "artifact://sha256/";

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Digest(Sha256::digest(bytes).into())
    }

    /// A digest computed elsewhere (a hash of bytes streamed past).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Digest(bytes)
    }

    /// The digest of the canonical JSON form of `value`.
    pub fn of_json(value: &serde_json::Value) -> Self {
        Digest::of(&canonical_json(value))
    }

    /// The 32 bytes.
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        // Valid UTF-8: every byte is an ASCII hex digit.
        String::from_utf8(self.hex_digits().to_vec()).unwrap_or_default()
    }

    /// The 64 hex digits, on the stack (a digest is shown several times a call).
    fn hex_digits(&self) -> [u8; 64] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 64];
        for (pair, byte) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 15)];
        }
        out
    }

    /// `artifact://sha256/<hex>`.
    pub fn artifact_uri(&self) -> String {
        format!("{ARTIFACT_URI_PREFIX}{}", self.to_hex())
    }

    /// Parse 64 lowercase hex digits.
    pub fn from_hex(text: &str) -> Result<Self, DigestError> {
        if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(DigestError(text.chars().take(80).collect()));
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(text, &mut out).map_err(|_| DigestError(text.to_owned()))?;
        Ok(Digest(out))
    }

    /// Parse `artifact://sha256/<hex>`.
    pub fn from_artifact_uri(uri: &str) -> Result<Self, DigestError> {
        uri.strip_prefix(ARTIFACT_URI_PREFIX)
            .ok_or_else(|| DigestError(uri.chars().take(80).collect()))
            .and_then(Digest::from_hex)
    }
}

/// Not a SHA-256 digest in one of the accepted spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a sha256 digest (expected sha256:<64 lowercase hex>): {0:?}")]
pub struct DigestError(pub String);

impl FromStr for Digest {
    type Err = DigestError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Digest::from_hex(text.strip_prefix("sha256:").unwrap_or(text))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.hex_digits();
        f.write_str("sha256:")?;
        f.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Digest {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Digest".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"})
    }
}

#[cfg(test)]
mod tests;
