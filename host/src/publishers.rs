//! Publishers: who signed a bundle, and which signers the operator trusts.
//!
//! A publisher signs a bundle's bytes with [minisign] (an Ed25519 key; the
//! signature file is `BUNDLE.wasm.minisig`, both of minisign's algorithms
//! read: the prehashed `ED`, its default, and the legacy `Ed`). The policy's
//! `[publishers]` names the keys the operator trusts and whether an install
//! must carry a signature by one of them. A signature that is given is
//! always checked: one that does not verify, or whose key the policy does not
//! trust, refuses the install whether or not signatures are required.
//!
//! Why minisign rather than a Sigstore bundle: verification needs nothing but
//! the bytes, the signature and a 56-character key the operator pastes into
//! the policy — no certificate authority, transparency log or trusted-root
//! file to keep current, which an offline install and an offline replay
//! cannot reach anyway — and authors sign with a tool Debian and every other
//! distribution ship.
//!
//! [minisign]: https://jedisct1.github.io/minisign/

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use blake2::Digest as _;
use serde::{Deserialize, Serialize};

/// The policy's `[publishers]`: whom the operator trusts to sign bundles.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Publishers {
    /// Refuse an operator install that carries no signature by a trusted publisher.
    #[serde(default)]
    pub require_signature: bool,
    /// The trusted publishers.
    #[serde(default)]
    pub trusted: Vec<TrustedPublisher>,
}

/// One publisher the operator trusts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedPublisher {
    /// The name installs record and `describe` shows.
    pub name: String,
    /// Its minisign public key: the base64 line of its `.pub` file.
    pub public_key: String,
}

/// Who signed an installed bundle, as its install record keeps it (and an
/// archive carries it, so a replay re-verifies the signature offline).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Publisher {
    /// The trusted publisher's name in the policy at install.
    pub name: String,
    /// The key's id, as minisign prints it (16 hex digits).
    pub key_id: String,
    /// The public key (the base64 line of its `.pub` file).
    pub public_key: String,
    /// The signature's trusted comment (signed with it).
    pub trusted_comment: String,
    /// The whole signature file.
    pub signature: String,
}

/// Why a bundle's signature refuses its install.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureRefusal {
    #[error("the policy requires a signature by a trusted publisher, and none was given (sign it with minisign)")]
    Required,
    #[error("signature: {0}")]
    Invalid(String),
    #[error("signature: key {key_id} signed it, which is not among the policy's trusted publishers")]
    Untrusted { key_id: String },
}

/// The most a signature file may hold (its comments included).
pub const MAX_SIGNATURE_BYTES: usize = 16 << 10;

/// A minisign public key.
#[derive(Debug, Clone)]
pub struct PublicKey {
    key_id: [u8; 8],
    key: ed25519_dalek::VerifyingKey,
}

impl PublicKey {
    /// Read a key: the base64 line, or a whole `.pub` file (its comment line skipped).
    pub fn parse(text: &str) -> Result<PublicKey, String> {
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("untrusted comment:"))
            .ok_or("no key line")?;
        let raw = BASE64.decode(line).map_err(|e| format!("the key is not base64: {e}"))?;
        if raw.len() != 42 {
            return Err(format!("a minisign public key is 42 bytes, this is {}", raw.len()));
        }
        if &raw[..2] != b"Ed" {
            return Err("not a minisign Ed25519 public key".into());
        }
        let key_id: [u8; 8] = raw[2..10].try_into().unwrap_or_default();
        let key: [u8; 32] = raw[10..].try_into().unwrap_or_default();
        let key = ed25519_dalek::VerifyingKey::from_bytes(&key).map_err(|e| format!("not an Ed25519 key: {e}"))?;
        Ok(PublicKey { key_id, key })
    }

    /// The key's id as minisign prints it.
    pub fn id(&self) -> String {
        key_id_text(&self.key_id)
    }

    /// The key as its `.pub` file's second line.
    pub fn to_base64(&self) -> String {
        let mut raw = b"Ed".to_vec();
        raw.extend_from_slice(&self.key_id);
        raw.extend_from_slice(self.key.as_bytes());
        BASE64.encode(raw)
    }
}

fn key_id_text(id: &[u8; 8]) -> String {
    format!("{:016X}", u64::from_le_bytes(*id))
}

/// A parsed minisign signature file.
struct SignatureFile {
    prehashed: bool,
    key_id: [u8; 8],
    signature: ed25519_dalek::Signature,
    trusted_comment: String,
    global: ed25519_dalek::Signature,
}

impl SignatureFile {
    fn parse(text: &str) -> Result<SignatureFile, String> {
        if text.len() > MAX_SIGNATURE_BYTES {
            return Err(format!("the signature file is over {MAX_SIGNATURE_BYTES} bytes"));
        }
        let mut lines = text.lines();
        let mut next = |what: &str| lines.next().ok_or_else(|| format!("the signature file ends before its {what}"));
        if !next("untrusted comment")?.starts_with("untrusted comment:") {
            return Err("the first line is not minisign's `untrusted comment:`".into());
        }
        let raw = BASE64.decode(next("signature")?.trim()).map_err(|e| format!("the signature is not base64: {e}"))?;
        let trusted = next("trusted comment")?;
        let trusted_comment = trusted
            .strip_prefix("trusted comment: ")
            .ok_or("the third line is not minisign's `trusted comment: `")?
            .to_owned();
        let global = BASE64
            .decode(next("global signature")?.trim())
            .map_err(|e| format!("the global signature is not base64: {e}"))?;
        if raw.len() != 74 {
            return Err(format!("a minisign signature is 74 bytes, this is {}", raw.len()));
        }
        let prehashed = match &raw[..2] {
            b"ED" => true,
            b"Ed" => false,
            _ => return Err("not a minisign Ed25519 signature (neither ED nor Ed)".into()),
        };
        let global = <[u8; 64]>::try_from(global.as_slice())
            .map_err(|_| format!("a global signature is 64 bytes, this is {}", global.len()))?;
        Ok(SignatureFile {
            prehashed,
            key_id: raw[2..10].try_into().unwrap_or_default(),
            signature: ed25519_dalek::Signature::from_bytes(raw[10..].try_into().unwrap_or(&[0; 64])),
            trusted_comment,
            global: ed25519_dalek::Signature::from_bytes(&global),
        })
    }

    /// Whether `key` signed `bytes` and this trusted comment.
    fn verify(&self, key: &PublicKey, bytes: &[u8]) -> Result<(), String> {
        if self.key_id != key.key_id {
            return Err(format!("key {} signed it, not key {}", key_id_text(&self.key_id), key.id()));
        }
        let digest;
        let message = if self.prehashed {
            digest = blake2::Blake2b512::digest(bytes);
            digest.as_slice()
        } else {
            bytes
        };
        key.key
            .verify_strict(message, &self.signature)
            .map_err(|_| "it does not verify: the bytes are not the ones signed".to_owned())?;
        let mut global = self.signature.to_bytes().to_vec();
        global.extend_from_slice(self.trusted_comment.as_bytes());
        key.key.verify_strict(&global, &self.global).map_err(|_| "its trusted comment does not verify".to_owned())
    }
}

impl Publishers {
    /// Nothing configured (the policy file then leaves the section out).
    pub fn is_default(&self) -> bool {
        *self == Publishers::default()
    }

    /// Check the section: names unique and non-empty, every key readable and listed once.
    pub fn validate(&self) -> Result<(), String> {
        let mut ids = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        for (n, p) in self.trusted.iter().enumerate() {
            let key = PublicKey::parse(&p.public_key).map_err(|e| format!("publishers.trusted.{n}.public_key: {e}"))?;
            if p.name.trim().is_empty() || p.name.len() > 200 {
                return Err(format!("publishers.trusted.{n}.name: must be 1-200 characters"));
            }
            if !names.insert(p.name.as_str()) {
                return Err(format!("publishers.trusted.{n}.name: {:?} is listed twice", p.name));
            }
            if !ids.insert(key.key_id) {
                return Err(format!("publishers.trusted.{n}.public_key: key {} is listed twice", key.id()));
            }
        }
        Ok(())
    }

    /// Trust `key` under `name`, in place of `name`'s key and of any other
    /// name `key` was trusted under.
    pub fn trust(&mut self, name: &str, key: &PublicKey) {
        let id = key.id();
        self.trusted.retain(|p| p.name != name && PublicKey::parse(&p.public_key).map_or(true, |k| k.id() != id));
        self.trusted.push(TrustedPublisher { name: name.to_owned(), public_key: key.to_base64() });
        self.trusted.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Stop trusting `name`; whether it was trusted.
    pub fn distrust(&mut self, name: &str) -> bool {
        let before = self.trusted.len();
        self.trusted.retain(|p| p.name != name);
        self.trusted.len() != before
    }

    /// Who signed `bytes`: `None` when unsigned and the policy allows it; a
    /// refusal when unsigned and required, or the signature is malformed,
    /// does not verify, or is by a key the policy does not trust.
    pub fn admit(&self, bytes: &[u8], signature: Option<&str>) -> Result<Option<Publisher>, SignatureRefusal> {
        let Some(text) = signature else {
            return if self.require_signature { Err(SignatureRefusal::Required) } else { Ok(None) };
        };
        let file = SignatureFile::parse(text).map_err(SignatureRefusal::Invalid)?;
        let trusted = self.trusted.iter().find_map(|p| {
            let key = PublicKey::parse(&p.public_key).ok()?;
            (key.key_id == file.key_id).then_some((p, key))
        });
        let Some((trusted, key)) = trusted else {
            return Err(SignatureRefusal::Untrusted { key_id: key_id_text(&file.key_id) });
        };
        file.verify(&key, bytes).map_err(SignatureRefusal::Invalid)?;
        Ok(Some(Publisher {
            name: trusted.name.clone(),
            key_id: key.id(),
            public_key: key.to_base64(),
            trusted_comment: file.trusted_comment,
            signature: text.to_owned(),
        }))
    }
}

impl Publisher {
    /// Re-verify a recorded signature against the key recorded with it (an
    /// archive's replay: the reviewer's trust is not the archive's to grant,
    /// but the signature either holds for these bytes or it does not).
    pub fn reverify(&self, bytes: &[u8]) -> Result<(), String> {
        let key = PublicKey::parse(&self.public_key)?;
        let file = SignatureFile::parse(&self.signature)?;
        file.verify(&key, bytes)?;
        if key.id() != self.key_id || file.trusted_comment != self.trusted_comment {
            return Err("the recorded key id or trusted comment is not the signature's".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
