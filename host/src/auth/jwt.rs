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

/// The soonest keys are read again for a token naming an unknown key id.
pub const MIN_REFETCH: Duration = Duration::from_secs(10);
/// The largest metadata or JWKS document read.
const MAX_DOCUMENT_BYTES: u64 = 1 << 20;
/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
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
    /// When they were last read, or tried to be.
    tried_at: Instant,
    /// When to read them again.
    stale_at: Instant,
    keys: Arc<Vec<Key>>,
}

/// Verifies one issuer's access tokens for one audience.
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    tenant_claim: String,
    leeway: u64,
    refresh_every: Duration,
    source: KeySource,
    keys: RwLock<Arc<KeySet>>,
    /// One reader of the keys at a time.
    reading: tokio::sync::Mutex<()>,
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
            leeway,
            refresh_every: Duration::from_secs(refresh),
            source,
            keys: RwLock::new(Arc::new(keys)),
            reading: tokio::sync::Mutex::new(()),
        })
    }

    /// The issuer whose tokens it accepts.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    fn current(&self) -> Arc<KeySet> {
        self.keys.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Read the keys again unless someone tried since `seen`.
    async fn reread(&self, seen: Instant) -> Arc<KeySet> {
        let _reading = self.reading.lock().await;
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
                KeySet { tried_at: now, stale_at: now + MIN_REFETCH.min(self.refresh_every), keys: held.keys.clone() }
            }
        });
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys.clone();
        keys
    }

    /// The principal an access token proves.
    pub async fn verify(&self, token: &str) -> Result<Principal, Rejection> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| Rejection::Invalid(format!("the bearer token is not a JWT: {e}")))?;
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(Rejection::Invalid(format!("tokens signed with {:?} are not accepted", header.alg)));
        }
        let mut keys = self.current();
        if Instant::now() >= keys.stale_at {
            keys = self.reread(keys.tried_at).await;
        }
        let matching = |keys: &KeySet| -> Vec<(DecodingKey, Algorithm)> {
            keys.keys
                .iter()
                .filter(|k| header.kid.is_none() || k.kid == header.kid)
                .filter(|k| k.algorithms.contains(&header.alg))
                .map(|k| (k.key.clone(), header.alg))
                .collect()
        };
        let mut candidates = matching(&keys);
        if candidates.is_empty() && header.kid.is_some() && keys.tried_at.elapsed() >= MIN_REFETCH {
            keys = self.reread(keys.tried_at).await;
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
                Ok(data) => return self.principal(&data.claims),
                Err(e) if matches!(e.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature) => last = Some(e),
                Err(e) => return Err(Rejection::Invalid(describe(&e))),
            }
        }
        Err(Rejection::Invalid(last.map_or_else(|| "the token's signature does not verify".into(), |e| describe(&e))))
    }

    fn principal(&self, claims: &serde_json::Map<String, serde_json::Value>) -> Result<Principal, Rejection> {
        let text = |name: &str| claims.get(name).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
        let subject = text("sub").or_else(|| text("client_id"));
        let tenant = text(&self.tenant_claim).or(subject).ok_or_else(|| {
            Rejection::Invalid(format!("the token names no tenant (no {:?} claim and no sub)", self.tenant_claim))
        })?;
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
            tenant: tenant.to_owned(),
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

fn fetch(url: &str, what: &'static str) -> Result<String, SetupError> {
    let unreachable = |message: String| SetupError::Unreachable { what, location: url.to_owned(), message };
    let config = ureq::Agent::config_builder()
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
                if metadata["issuer"].as_str().map(|i| i.trim_end_matches('/')) != Some(trimmed) {
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
            let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm.and_then(algorithm_of) {
                Some(alg) => vec![alg],
                None => ASYMMETRIC.into_iter().filter(|a| a.family() == family).collect(),
            };
            Some(Key { kid: jwk.common.key_id.clone(), key, algorithms })
        })
        .collect();
    if keys.is_empty() {
        return Err(invalid("it holds no signing key this server can use".into()));
    }
    let now = Instant::now();
    Ok(KeySet { tried_at: now, stale_at: now + refresh_every, keys: Arc::new(keys) })
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
