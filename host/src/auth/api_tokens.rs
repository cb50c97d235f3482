//! Operator-issued API tokens: `jacobian_<id>_<secret>`, where the id
//! (16 hex digits) names the stored row and the secret is 32 random bytes
//! (base64url). The store keeps the SHA-256 of the whole token, never the
//! token; a guess must match a 256-bit secret, so a plain hash (no slow KDF)
//! is enough, and the comparison takes the same time whatever matches.

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use crate::store::{TokenRecord, TokenStore};

use super::{Credential, Principal, Rejection, Scopes};

const PREFIX: &str = "jacobian_";

/// Whether `token` is spelled like an API token (a JWT has two dots).
pub fn looks_like(token: &str) -> bool {
    token.starts_with(PREFIX)
}

/// A tenant name: 1–64 of `a-z 0-9 . _ -`, starting with a letter or digit.
pub fn valid_tenant(tenant: &str) -> bool {
    !tenant.is_empty()
        && tenant.len() <= 64
        && tenant.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        && tenant.as_bytes()[0].is_ascii_alphanumeric()
}

fn digest_hex(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new token for `tenant` with `scopes`, expiring at `expires_at`: the
/// token (to print once) and the record to store.
pub fn mint(tenant: &str, scopes: Scopes, now: i64, expires_at: Option<i64>) -> std::io::Result<(String, TokenRecord)> {
    let mut id = [0u8; 8];
    let mut secret = [0u8; 32];
    getrandom::fill(&mut id).map_err(|e| std::io::Error::other(e.to_string()))?;
    getrandom::fill(&mut secret).map_err(|e| std::io::Error::other(e.to_string()))?;
    let id = hex::encode(id);
    let token = format!("{PREFIX}{id}_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret));
    let record = TokenRecord {
        id,
        tenant: tenant.to_owned(),
        scopes: scopes.names(),
        secret_sha256: digest_hex(&token),
        created_at: now,
        expires_at,
        revoked_at: None,
    };
    Ok((token, record))
}

/// The principal `token` proves at `now`, reading its row from `store`.
pub async fn verify(store: &dyn TokenStore, token: &str, now: i64) -> Result<Principal, Rejection> {
    let invalid = || Rejection::Invalid("the API token is not valid".into());
    let id = token.strip_prefix(PREFIX).and_then(|rest| rest.split_once('_')).map(|(id, _)| id).ok_or_else(invalid)?;
    if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid());
    }
    let record = store.find(id).await.map_err(|e| Rejection::Unavailable(e.to_string()))?.ok_or_else(invalid)?;
    if !constant_time_eq(record.secret_sha256.as_bytes(), digest_hex(token).as_bytes()) {
        return Err(invalid());
    }
    if record.revoked_at.is_some() {
        return Err(Rejection::Invalid(format!("API token {id} was revoked")));
    }
    if record.expires_at.is_some_and(|at| at <= now) {
        return Err(Rejection::Invalid(format!("API token {id} has expired")));
    }
    Ok(Principal {
        tenant: record.tenant,
        subject: format!("token:{id}"),
        scopes: Scopes::from_names(record.scopes.split(' ')),
        credential: Credential::ApiToken { id: record.id },
    })
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `30d`, `12h`, `90m` or `3600s` in seconds.
pub fn parse_duration(text: &str) -> Option<i64> {
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let number: i64 = number.parse().ok().filter(|n| *n > 0)?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return None,
    };
    number.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenants_durations_and_token_spelling() {
        assert!(valid_tenant("acme") && valid_tenant("team-1.b_c"));
        for bad in ["", "Acme", "-x", "a b", &"a".repeat(65)] {
            assert!(!valid_tenant(bad), "{bad}");
        }
        assert_eq!(parse_duration("30d"), Some(30 * 86_400));
        assert_eq!(parse_duration("90m"), Some(5_400));
        for bad in ["", "d", "0s", "5w", "-1h", "1.5h"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        let (token, record) = mint("acme", Scopes::ALL, 100, None).expect("mint");
        assert!(looks_like(&token) && token.contains(&record.id));
        assert_eq!(record.secret_sha256, digest_hex(&token));
        assert_eq!(record.scopes, "jacobian:invoke jacobian:workspace jacobian:read");
        let (other, _) = mint("acme", Scopes::ALL, 100, None).expect("mint");
        assert_ne!(token, other, "every token is fresh");
    }
}
