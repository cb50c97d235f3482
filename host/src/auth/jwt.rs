//! JWT access tokens from one OAuth 2.1 authorization server.
//!
//! Keys come from the server's JWKS: its `jwks_uri` (configured, or read
//! from its metadata at `/.well-known/oauth-authorization-server`, then
//! `/.well-known/openid-configuration`), or a file for offline deployments.
//! They are used for `jwks_refresh_seconds` and then read again, so a key
//! the server rotated out stops being accepted within that time; a token
//! naming a key id not yet seen reads them again at once (at most every
//! [`MIN_REFETCH`]), so a key the server rotated in is accepted from its
//! first token. If the keys cannot be read again, the ones held stay in use
//! and a warning says why. Only asymmetric keys and algorithms are used (an
//! `oct` key in a JWKS is ignored: a public document cannot hold a secret),
//! and `none` never verifies anything.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use super::{AuthConfig, Credential, Principal, Rejection, Scopes, SetupError};

/// What JWT tenants' names start with unless the operator says otherwise:
/// API-token tenants' names cannot hold `:`, so the two never meet.
pub const DEFAULT_TENANT_PREFIX: &str = "jwt:";

/// The soonest keys are read again for a token naming an unknown key id.
pub const MIN_REFETCH: Duration = Duration::from_secs(10);
/// The largest metadata or JWKS document read.
const MAX_DOCUMENT_BYTES: u64 = 1 << 20;
/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How long past `jwks_refresh_seconds` keys that cannot be read again stay
/// in use; after that every token is refused (503) until they are read.
pub const MAX_STALE: Duration = Duration::from_secs(15 * 60);
/// The most clock skew an operator may allow, in seconds.
pub const MAX_LEEWAY_SECONDS: u64 = 300;

const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

#[derive(Debug, Clone)]
enum KeySource {
    Url(String),
    File(PathBuf),
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Url(url) => f.write_str(url),
            KeySource::File(path) => write!(f, "{}", path.display()),
        }
    }
}

struct Key {
    kid: Option<String>,
    key: DecodingKey,
    algorithms: Vec<Algorithm>,
}

#[derive(Clone)]
struct KeySet {
    /// When they were last read.
    read_at: Instant,
    /// When they were last read, or tried to be.
    tried_at: Instant,
    /// When to read them again.
    stale_at: Instant,
    keys: Arc<Vec<Key>>,
    /// Which reading of the keys this is (a token verified under another
    /// reading is verified again).
    generation: u64,
}

/// How many verified tokens are remembered.
pub const MAX_REMEMBERED: usize = 4096;

static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn next_generation() -> u64 {
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A token verified once: whom it proves, until when (its `exp` plus the
/// leeway), under which reading of the keys.
struct Verified {
    principal: Principal,
    until: i64,
    generation: u64,
}

/// Verifies one issuer's access tokens for one audience.
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    tenant_claim: String,
    /// Whether the operator named the claim (then every token must carry it).
    tenant_required: bool,
    /// Prepended to every tenant this issuer names (`AuthConfig::jwt_tenant_prefix`).
    tenant_prefix: String,
    leeway: u64,
    refresh_every: Duration,
    source: KeySource,
    keys: RwLock<Arc<KeySet>>,
    /// One reader of the keys at a time.
    reading: tokio::sync::Mutex<()>,
    /// Tokens already verified, by SHA-256: a client sends the same token
    /// with every request, and checking an RS256 signature costs tens of
    /// microseconds a time. An entry serves only under the reading of the
    /// keys it was verified with (a rotation verifies it again) and until
    /// the token expires.
    verified: std::sync::Mutex<std::collections::HashMap<[u8; 32], Verified>>,
}

impl JwtVerifier {
    /// A verifier of `issuer`'s tokens for `audience`, its keys read now.
    pub fn new(config: &AuthConfig, issuer: &str, audience: &str) -> Result<Self, SetupError> {
        let leeway = config.leeway_seconds.unwrap_or(60);
        if leeway > MAX_LEEWAY_SECONDS {
            return Err(SetupError::Invalid {
                field: "leeway_seconds",
                message: format!("{leeway} is more than {MAX_LEEWAY_SECONDS}"),
            });
        }
        let tenant_prefix = config.jwt_tenant_prefix.clone().unwrap_or_else(|| DEFAULT_TENANT_PREFIX.into());
        if tenant_prefix.len() > 32 || !tenant_prefix.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(SetupError::Invalid {
                field: "jwt_tenant_prefix",
                message: "at most 32 printable ASCII characters, no blanks".into(),
            });
        }
        let refresh = config.jwks_refresh_seconds.unwrap_or(300);
        if refresh == 0 {
            return Err(SetupError::Invalid { field: "jwks_refresh_seconds", message: "must be at least 1".into() });
        }
        let source = match (&config.jwks_file, &config.jwks_uri) {
            (Some(_), Some(_)) => {
                return Err(SetupError::Invalid {
                    field: "jwks_file",
                    message: "name the keys by jwks_file or by jwks_uri, not both".into(),
                });
            }
            (Some(path), None) => KeySource::File(path.clone()),
            (None, Some(uri)) => KeySource::Url(uri.clone()),
            (None, None) => KeySource::Url(discover_jwks_uri(issuer)?),
        };
        let keys = read_keys(&source, Duration::from_secs(refresh))?;
        Ok(JwtVerifier {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            tenant_claim: config.tenant_claim.clone().unwrap_or_else(|| "tenant".into()),
            tenant_required: config.tenant_claim.is_some(),
            tenant_prefix,
            leeway,
            refresh_every: Duration::from_secs(refresh),
            source,
            keys: RwLock::new(Arc::new(keys)),
            reading: tokio::sync::Mutex::new(()),
            verified: Default::default(),
        })
    }

    /// The issuer whose tokens it accepts.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    fn current(&self) -> Arc<KeySet> {
        self.keys.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Read the keys again unless someone tried since `seen`. With `wait`
    /// false, a request that finds another one reading goes on with the
    /// keys held instead of waiting for the fetch.
    async fn reread(&self, seen: Instant, wait: bool) -> Arc<KeySet> {
        let _reading = if wait {
            self.reading.lock().await
        } else {
            match self.reading.try_lock() {
                Ok(guard) => guard,
                Err(_) => return self.current(),
            }
        };
        let held = self.current();
        if held.tried_at > seen {
            return held;
        }
        let source = self.source.clone();
        let refresh_every = self.refresh_every;
        let read = tokio::task::spawn_blocking(move || read_keys(&source, refresh_every)).await;
        let keys = Arc::new(match read.map_err(|e| e.to_string()).and_then(|r| r.map_err(|e| e.to_string())) {
            Ok(keys) => keys,
            Err(error) => {
                tracing::warn!(source = %self.source, %error, "could not read the authorization server's keys again; the keys held stay in use");
                let now = Instant::now();
                KeySet {
                    read_at: held.read_at,
                    tried_at: now,
                    stale_at: now + MIN_REFETCH.min(self.refresh_every),
                    keys: held.keys.clone(),
                    generation: held.generation,
                }
            }
        });
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys.clone();
        keys
    }

    /// The principal an access token proves.
    pub async fn verify(&self, token: &str) -> Result<Principal, Rejection> {
        use sha2::Digest as _;
        let mut keys = self.current();
        if Instant::now() >= keys.stale_at {
            keys = self.reread(keys.tried_at, false).await;
        }
        if keys.read_at.elapsed() > self.refresh_every + MAX_STALE {
            return Err(Rejection::Unavailable(format!(
                "the authorization server's keys could not be read for {} s ({})",
                keys.read_at.elapsed().as_secs(),
                self.source
            )));
        }
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let now = jsonwebtoken::get_current_timestamp() as i64;
        {
            let verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(hit) = verified.get(&digest)
                && hit.generation == keys.generation
                && now <= hit.until
            {
                return Ok(hit.principal.clone());
            }
        }
        let (principal, exp, generation) = self.verify_signature(token, keys).await?;
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= MAX_REMEMBERED {
            verified.retain(|_, v| v.generation == generation && now <= v.until);
            if verified.len() >= MAX_REMEMBERED {
                verified.clear();
            }
        }
        let until = exp.saturating_add(self.leeway as i64);
        verified.insert(digest, Verified { principal: principal.clone(), until, generation });
        Ok(principal)
    }

    /// Verify `token` under `keys` (read again for a key id not seen yet):
    /// whom it proves, its `exp`, and the reading of the keys that verified it.
    async fn verify_signature(&self, token: &str, keys: Arc<KeySet>) -> Result<(Principal, i64, u64), Rejection> {
        let mut keys = keys;
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| Rejection::Invalid(format!("the bearer token is not a JWT: {e}")))?;
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(Rejection::Invalid(format!("tokens signed with {:?} are not accepted", header.alg)));
        }
        let matching = |keys: &KeySet| -> Vec<(DecodingKey, Algorithm)> {
            keys.keys
                .iter()
                .filter(|k| header.kid.is_none() || k.kid.is_none() || k.kid == header.kid)
                .filter(|k| k.algorithms.contains(&header.alg))
                .map(|k| (k.key.clone(), header.alg))
                .collect()
        };
        let mut candidates = matching(&keys);
        if candidates.is_empty() && header.kid.is_some() && keys.tried_at.elapsed() >= MIN_REFETCH {
            keys = self.reread(keys.tried_at, true).await;
            candidates = matching(&keys);
        }
        if candidates.is_empty() {
            return Err(Rejection::Invalid(match &header.kid {
                Some(kid) => format!("the token's key {kid:?} is not among the authorization server's keys"),
                None => "no key of the authorization server verifies this token".into(),
            }));
        }
        let mut last = None;
        for (key, alg) in candidates {
            let mut validation = Validation::new(alg);
            validation.set_issuer(&[&self.issuer]);
            validation.set_audience(&[&self.audience]);
            validation.set_required_spec_claims(&["exp", "iss", "aud"]);
            validation.leeway = self.leeway;
            validation.validate_nbf = true;
            match jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(token, &key, &validation) {
                Ok(data) => {
                    let exp = data.claims.get("exp").and_then(serde_json::Value::as_f64).unwrap_or(0.0) as i64;
                    return Ok((self.principal(&data.claims)?, exp, keys.generation));
                }
                Err(e) if matches!(e.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature) => last = Some(e),
                Err(e) => return Err(Rejection::Invalid(describe(&e))),
            }
        }
        Err(Rejection::Invalid(last.map_or_else(|| "the token's signature does not verify".into(), |e| describe(&e))))
    }

    fn principal(&self, claims: &serde_json::Map<String, serde_json::Value>) -> Result<Principal, Rejection> {
        let text = |name: &str| claims.get(name).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
        let subject = text("sub").or_else(|| text("client_id"));
        let claim = &self.tenant_claim;
        let tenant = match claims.get(claim) {
            Some(serde_json::Value::String(named)) if !named.is_empty() => named.as_str(),
            Some(_) => {
                return Err(Rejection::Invalid(format!(
                    "the token's tenant claim {claim:?} is not a non-empty string"
                )));
            }
            None if self.tenant_required => {
                return Err(Rejection::Invalid(format!(
                    "the token names no tenant: the operator requires the claim {claim:?}"
                )));
            }
            None => subject.ok_or_else(|| {
                Rejection::Invalid(format!("the token names no tenant (no {claim:?} claim and no sub)"))
            })?,
        };
        if tenant.len() > 128 || tenant.chars().any(char::is_control) {
            return Err(Rejection::Invalid(
                "the token's tenant is longer than 128 bytes or has control characters".into(),
            ));
        }
        let scopes = match (claims.get("scope"), claims.get("scp")) {
            (Some(serde_json::Value::String(s)), _) | (None, Some(serde_json::Value::String(s))) => {
                Scopes::from_names(s.split(' '))
            }
            (None, Some(serde_json::Value::Array(items))) => {
                Scopes::from_names(items.iter().filter_map(|v| v.as_str()))
            }
            _ => Scopes::default(),
        };
        Ok(Principal {
            tenant: format!("{}{tenant}", self.tenant_prefix),
            subject: subject.unwrap_or(tenant).to_owned(),
            scopes,
            credential: Credential::Jwt { issuer: self.issuer.clone() },
        })
    }
}

/// A rejection's reason in words (never the token).
fn describe(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match error.kind() {
        K::ExpiredSignature => "the token has expired".into(),
        K::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        K::InvalidAudience => "the token is not meant for this server (aud)".into(),
        K::InvalidIssuer => "the token is from another issuer (iss)".into(),
        K::InvalidSignature => "the token's signature does not verify".into(),
        K::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
        K::InvalidAlgorithm => "the token's algorithm does not match its key".into(),
        other => format!("the token is not valid: {other:?}"),
    }
}

/// Whether keys may be fetched from `url`: HTTPS, or plain HTTP to this
/// machine only (anyone on a network path could otherwise swap the keys and
/// forge every token).
pub fn fetchable(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else { return url.starts_with("https://") };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    matches!(host, "localhost" | "::1") || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

fn fetch(url: &str, what: &'static str) -> Result<String, SetupError> {
    let unreachable = |message: String| SetupError::Unreachable { what, location: url.to_owned(), message };
    if !fetchable(url) {
        return Err(SetupError::Invalid {
            field: if what == "keys" { "jwks_uri" } else { "issuer" },
            message: format!("{url} is neither https nor on this machine: its keys could be swapped on the way"),
        });
    }
    let config = ureq::Agent::config_builder()
        // No redirect from HTTPS to plain HTTP.
        .https_only(url.starts_with("https://"))
        .timeout_global(Some(FETCH_TIMEOUT))
        .http_status_as_error(true)
        .max_redirects(3)
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let mut response = agent.get(url).call().map_err(|e| unreachable(e.to_string()))?;
    response.body_mut().with_config().limit(MAX_DOCUMENT_BYTES).read_to_string().map_err(|e| unreachable(e.to_string()))
}

/// The `jwks_uri` of `issuer`'s metadata (RFC 8414, then OpenID Connect Discovery).
fn discover_jwks_uri(issuer: &str) -> Result<String, SetupError> {
    let trimmed = issuer.trim_end_matches('/');
    let (origin, path) = match trimmed.split_once("://").and_then(|(_, rest)| rest.find('/')) {
        Some(i) => trimmed.split_at(trimmed.find("://").map_or(0, |s| s + 3) + i),
        None => (trimmed, ""),
    };
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{trimmed}/.well-known/openid-configuration"),
    ];
    let mut last = None;
    for url in candidates {
        match fetch(&url, "metadata") {
            Ok(text) => {
                let metadata: serde_json::Value = serde_json::from_str(&text).map_err(|e| SetupError::Unreachable {
                    what: "metadata",
                    location: url.clone(),
                    message: e.to_string(),
                })?;
                if metadata["issuer"].as_str() != Some(issuer) {
                    return Err(SetupError::Unreachable {
                        what: "metadata",
                        location: url,
                        message: format!("it names issuer {}, not {issuer}", metadata["issuer"]),
                    });
                }
                return metadata["jwks_uri"].as_str().map(str::to_owned).ok_or(SetupError::Unreachable {
                    what: "metadata",
                    location: url,
                    message: "it has no jwks_uri".into(),
                });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or(SetupError::Invalid { field: "issuer", message: "no metadata location".into() }))
}

fn read_keys(source: &KeySource, refresh_every: Duration) -> Result<KeySet, SetupError> {
    let text = match source {
        KeySource::Url(url) => fetch(url, "keys")?,
        KeySource::File(path) => std::fs::read_to_string(path).map_err(|e| SetupError::Unreachable {
            what: "keys",
            location: path.display().to_string(),
            message: e.to_string(),
        })?,
    };
    let invalid = |message: String| SetupError::Unreachable { what: "keys", location: source.to_string(), message };
    let set: JwkSet = serde_json::from_str(&text).map_err(|e| invalid(format!("not a JWK set: {e}")))?;
    let keys: Vec<Key> = set
        .keys
        .iter()
        .filter(|jwk| !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)))
        .filter(|jwk| {
            jwk.common.public_key_use.as_ref().is_none_or(|u| *u == jsonwebtoken::jwk::PublicKeyUse::Signature)
        })
        .filter_map(|jwk| {
            let key = DecodingKey::from_jwk(jwk).ok()?;
            let family = key.family();
            // A key declared for anything but one of these signatures (an
            // encryption algorithm, an unknown one) verifies nothing.
            let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm {
                Some(declared) => vec![algorithm_of(declared)?],
                None => ASYMMETRIC.into_iter().filter(|a| a.family() == family).collect(),
            };
            let verifies = jwk
                .common
                .key_operations
                .as_ref()
                .is_none_or(|ops| ops.iter().any(|op| matches!(op, jsonwebtoken::jwk::KeyOperations::Verify)));
            if !verifies {
                return None;
            }
            Some(Key { kid: jwk.common.key_id.clone(), key, algorithms })
        })
        .collect();
    if keys.is_empty() {
        return Err(invalid("it holds no signing key this server can use".into()));
    }
    let now = Instant::now();
    Ok(KeySet {
        read_at: now,
        tried_at: now,
        stale_at: now + refresh_every,
        keys: Arc::new(keys),
        generation: next_generation(),
    })
}

fn algorithm_of(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::jwk::Jwk;
    use jsonwebtoken::{EncodingKey, Header};

    fn ed25519() -> (EncodingKey, Jwk) {
        let mut der =
            vec![0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("random");
        der.extend_from_slice(&seed);
        let key = EncodingKey::from_ed_der(&der);
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::EdDSA).expect("jwk");
        jwk.common.key_id = Some("k".into());
        (key, jwk)
    }

    #[test]
    fn keys_come_over_https_or_from_this_machine_and_the_leeway_is_bounded() {
        for url in
            ["https://login.example.org/jwks", "http://127.0.0.1:8080/jwks", "http://localhost/x", "http://[::1]:9/"]
        {
            assert!(fetchable(url), "{url}");
        }
        for url in
            ["http://login.example.org/jwks", "http://127.0.0.1.evil.org/", "ftp://localhost/", "http://10.0.0.1/"]
        {
            assert!(!fetchable(url), "{url}");
        }
        let config = AuthConfig { leeway_seconds: Some(301), ..AuthConfig::default() };
        assert!(matches!(
            JwtVerifier::new(&config, "https://idp", "https://rs/mcp"),
            Err(SetupError::Invalid { field: "leeway_seconds", .. })
        ));
    }

    #[test]
    fn a_remembered_token_is_refused_once_it_expires() {
        let dir = tempfile::tempdir().expect("dir");
        let (key, jwk) = ed25519();
        let file = dir.path().join("jwks.json");
        std::fs::write(&file, serde_json::to_vec(&JwkSet { keys: vec![jwk] }).unwrap()).unwrap();
        let config = AuthConfig { jwks_file: Some(file), leeway_seconds: Some(0), ..AuthConfig::default() };
        let verifier = JwtVerifier::new(&config, "https://idp", "https://rs/mcp").expect("verifier");
        let now = jsonwebtoken::get_current_timestamp();
        let claims = serde_json::json!({"iss": "https://idp", "aud": "https://rs/mcp", "sub": "s", "exp": now + 1});
        let token =
            jsonwebtoken::encode(&Header { kid: Some("k".into()), ..Header::new(Algorithm::EdDSA) }, &claims, &key)
                .expect("sign");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        assert_eq!(rt.block_on(verifier.verify(&token)).expect("valid").tenant, "jwt:s");
        assert_eq!(rt.block_on(verifier.verify(&token)).expect("remembered").tenant, "jwt:s");
        assert_eq!(verifier.verified.lock().unwrap().len(), 1);
        std::thread::sleep(Duration::from_millis(2100));
        let refused = rt.block_on(verifier.verify(&token)).expect_err("expired");
        assert!(refused.to_string().contains("expired"), "{refused}");
    }

    #[test]
    fn the_tenant_claim_is_a_string_required_when_named_and_kept_apart_from_api_token_tenants() {
        let dir = tempfile::tempdir().expect("dir");
        let (key, jwk) = ed25519();
        let file = dir.path().join("jwks.json");
        std::fs::write(&file, serde_json::to_vec(&JwkSet { keys: vec![jwk] }).unwrap()).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let now = jsonwebtoken::get_current_timestamp();
        let tenant_of = |config: &AuthConfig, extra: serde_json::Value| {
            let verifier = JwtVerifier::new(config, "https://idp", "https://rs/mcp").expect("verifier");
            let mut claims =
                serde_json::json!({"iss": "https://idp", "aud": "https://rs/mcp", "sub": "s", "exp": now + 60});
            claims.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let header = Header { kid: Some("k".into()), ..Header::new(Algorithm::EdDSA) };
            let token = jsonwebtoken::encode(&header, &claims, &key).expect("sign");
            rt.block_on(verifier.verify(&token)).map(|p| p.tenant).map_err(|e| e.to_string())
        };
        let plain = AuthConfig { jwks_file: Some(file.clone()), ..AuthConfig::default() };
        assert_eq!(tenant_of(&plain, serde_json::json!({"tenant": "alice"})), Ok("jwt:alice".into()));
        assert_eq!(tenant_of(&plain, serde_json::json!({})), Ok("jwt:s".into()), "sub when no claim is named");
        for odd in [serde_json::json!(7), serde_json::json!(["alice"]), serde_json::json!(""), serde_json::Value::Null]
        {
            let refused = tenant_of(&plain, serde_json::json!({"tenant": odd})).expect_err("not a tenant");
            assert!(refused.contains("\"tenant\" is not a non-empty string"), "{refused}");
        }
        let named = AuthConfig { tenant_claim: Some("org".into()), ..plain.clone() };
        let refused =
            tenant_of(&named, serde_json::json!({"tenant": "alice"})).expect_err("the named claim is missing");
        assert!(refused.contains("requires the claim \"org\""), "{refused}");
        assert_eq!(tenant_of(&named, serde_json::json!({"org": "acme"})), Ok("jwt:acme".into()));
        let mapped = AuthConfig { jwt_tenant_prefix: Some(String::new()), ..plain.clone() };
        assert_eq!(tenant_of(&mapped, serde_json::json!({"tenant": "alice"})), Ok("alice".into()));
        let bad = AuthConfig { jwt_tenant_prefix: Some("a b".into()), ..plain };
        assert!(matches!(
            JwtVerifier::new(&bad, "https://idp", "https://rs/mcp"),
            Err(SetupError::Invalid { field: "jwt_tenant_prefix", .. })
        ));
    }
}
