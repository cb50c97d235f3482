//! Bundles in OCI registries: `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`.
//!
//! A bundle travels as the CNCF TAG Runtime's WebAssembly OCI artifact (the
//! layout `wkg`, Spin and wasmCloud use): an OCI image manifest whose config
//! has media type `application/vnd.wasm.config.v0+json` (architecture
//! `wasm`, os `wasip2`, the layer digests, the component's imports and
//! exports) and whose one layer, `application/wasm`, is the component. The
//! layer's digest is therefore the component's digest. A publisher's
//! minisign signature rides in the manifest's annotation
//! [`SIGNATURE_ANNOTATION`]: no extra round trip, works with every registry
//! (the OCI 1.1 referrers API is not everywhere yet), and a pinned manifest
//! digest pins the signature too.
//!
//! Pulling checks every byte against the digest it was asked for by: the
//! manifest against `@sha256:…` when pinned, the layer against the
//! manifest's digest and size (the size before anything is read). Plain
//! HTTP is used for a registry on this machine only (`localhost`,
//! `127.0.0.0/8`, `[::1]`); every other registry is HTTPS. Credentials, when
//! a registry wants them, come from `JACOBIAN_REGISTRY_USER` and
//! `JACOBIAN_REGISTRY_PASSWORD` and go only to the registry
//! `JACOBIAN_REGISTRY_HOST` names (Basic, or for a Bearer token to the token
//! service its challenge names, over HTTPS); no `Authorization` goes to
//! another origin (a redirect, an upload `Location` elsewhere).

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use crate::digest::Digest;

/// The manifest's media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The manifest annotation that carries the minisign signature file.
pub const SIGNATURE_ANNOTATION: &str = "dev.jacobian.signature.minisign";
/// The largest manifest or config read.
pub const MAX_DOCUMENT_BYTES: u64 = 4 << 20;
/// The largest component layer pulled.
pub const MAX_LAYER_BYTES: u64 = 512 << 20;
const TIMEOUT: Duration = Duration::from_secs(300);

/// Why a pull or push failed.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error("{0}")]
    Reference(String),
    #[error("registry {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("registry {url} answered {status}: {message}")]
    Refused { url: String, status: u16, message: String },
    #[error("{what} {expected}: the bytes the registry sent hash to {actual}")]
    DigestMismatch { what: &'static str, expected: String, actual: Digest },
    #[error("{reference}: {message}")]
    NotABundle { reference: String, message: String },
}

/// A parsed `oci://` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host[:port]`.
    pub registry: String,
    /// The repository path.
    pub repository: String,
    /// The tag (`latest` when neither tag nor digest is given).
    pub tag: Option<String>,
    /// The manifest digest it is pinned to.
    pub digest: Option<Digest>,
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

impl Reference {
    /// Parse `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`.
    pub fn parse(text: &str) -> Result<Reference, OciError> {
        let bad = |why: &str| {
            OciError::Reference(format!("{text:?} is not oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]: {why}"))
        };
        let rest = text.strip_prefix("oci://").ok_or_else(|| bad("it does not start with oci://"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((rest, digest)) => {
                let hex = digest.strip_prefix("sha256:").ok_or_else(|| bad("a digest is sha256:HEX"))?;
                (rest, Some(Digest::from_hex(hex).map_err(|e| bad(&e.to_string()))?))
            }
            None => (rest, None),
        };
        let (registry, path) = rest.split_once('/').ok_or_else(|| bad("no repository"))?;
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag.to_owned())),
            _ => (path, None),
        };
        let component = |c: &str| {
            !c.is_empty()
                && c.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
                && c.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        };
        if registry.is_empty() || !registry.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b)) {
            return Err(bad("the registry is not HOST[:PORT]"));
        }
        if !repository.split('/').all(component) {
            return Err(bad("a repository is lowercase path components of a-z 0-9 . _ -"));
        }
        if let Some(tag) = &tag
            && (tag.is_empty()
                || tag.len() > 128
                || !tag.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
                || tag.starts_with(['.', '-']))
        {
            return Err(bad("a tag is 1-128 of A-Z a-z 0-9 . _ -, not starting with . or -"));
        }
        let tag = if tag.is_none() && digest.is_none() { Some("latest".into()) } else { tag };
        Ok(Reference { registry: registry.to_owned(), repository: repository.to_owned(), tag, digest })
    }

    fn base(&self) -> String {
        let plain = crate::auth::jwt::fetchable(&format!("http://{}/", self.registry));
        format!("{}://{}/v2/{}", if plain { "http" } else { "https" }, self.registry, self.repository)
    }

    /// What the manifest is fetched by: the digest when pinned, else the tag.
    fn manifest_ref(&self) -> String {
        self.digest.map(|d| d.to_string()).or_else(|| self.tag.clone()).unwrap_or_else(|| "latest".into())
    }
}

/// A bundle pulled from a registry.
#[derive(Debug)]
pub struct Pulled {
    /// The component's bytes (checked against the layer digest).
    pub bytes: Vec<u8>,
    /// The minisign signature file the manifest carries, if any.
    pub signature: Option<String>,
    /// The manifest's digest (what `@sha256:…` pins).
    pub manifest_digest: Digest,
}

/// A session with one registry: its agent, its origin, and the
/// `Authorization` it last answered a challenge with.
struct Session {
    agent: ureq::Agent,
    registry: String,
    origin: String,
    authorization: Option<String>,
    answered: Option<String>,
}

/// The operator's credentials for `registry`: `JACOBIAN_REGISTRY_USER` and
/// `JACOBIAN_REGISTRY_PASSWORD`, which go to the one registry
/// `JACOBIAN_REGISTRY_HOST` names (`host[:port]`) and to no other.
fn credentials(registry: &str) -> Option<(String, String)> {
    let host = std::env::var("JACOBIAN_REGISTRY_HOST").ok()?;
    if !host.eq_ignore_ascii_case(registry) {
        return None;
    }
    Some((std::env::var("JACOBIAN_REGISTRY_USER").ok()?, std::env::var("JACOBIAN_REGISTRY_PASSWORD").ok()?))
}

/// `scheme://authority` of a URL.
fn origin(url: &str) -> &str {
    let authority = url.find("://").map_or(0, |i| i + 3);
    &url[..url[authority..].find('/').map_or(url.len(), |i| authority + i)]
}

/// A `WWW-Authenticate` challenge: its scheme and its `key="value"` parameters
/// (a quoted value may hold commas, as a scope's `pull,push` does).
pub fn parse_challenge(header: &str) -> (String, Vec<(String, String)>) {
    let header = header.trim();
    let (scheme, mut rest) = header.split_once(' ').unwrap_or((header, ""));
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some((key, after)) = rest.split_once('=') else { break };
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => {
                let (mut value, mut escaped, mut end) = (String::new(), false, quoted.len());
                for (i, c) in quoted.char_indices() {
                    match c {
                        _ if escaped => {
                            value.push(c);
                            escaped = false;
                        }
                        '\\' => escaped = true,
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end.min(quoted.len())..])
            }
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_owned(), &after[end..])
            }
        };
        params.push((key.trim().to_ascii_lowercase(), value));
        rest = next;
    }
    (scheme.to_owned(), params)
}

impl Session {
    fn new(reference: &Reference) -> Session {
        let base = reference.base();
        let config = ureq::Agent::config_builder()
            .https_only(base.starts_with("https://"))
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .max_redirects(5)
            .build();
        Session {
            agent: ureq::Agent::new_with_config(config),
            registry: reference.registry.clone(),
            origin: origin(&base).to_owned(),
            authorization: None,
            answered: None,
        }
    }

    /// Send a request (with the session's `Authorization` only to the
    /// registry's own origin), answering a challenge the session has not
    /// answered yet: a token for pulling is challenged again for pushing.
    fn send(
        &mut self,
        url: &str,
        request: impl Fn(&ureq::Agent, Option<&str>) -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<ureq::http::Response<ureq::Body>, OciError> {
        let unreachable = |e: ureq::Error| OciError::Unreachable { url: url.to_owned(), message: e.to_string() };
        let ours = origin(url).eq_ignore_ascii_case(&self.origin);
        let authorization = |session: &Session| session.authorization.clone().filter(|_| ours);
        let response = request(&self.agent, authorization(self).as_deref()).map_err(unreachable)?;
        let challenge =
            response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        if response.status() != 401 || !ours || self.answered.as_deref() == Some(challenge.as_str()) {
            return Ok(response);
        }
        self.authorization = Some(self.answer(url, &challenge)?);
        self.answered = Some(challenge);
        request(&self.agent, authorization(self).as_deref()).map_err(unreachable)
    }

    /// The `Authorization` header that answers a `WWW-Authenticate` challenge.
    fn answer(&self, url: &str, challenge: &str) -> Result<String, OciError> {
        let refused = |message: String| OciError::Refused { url: url.to_owned(), status: 401, message };
        let basic = credentials(&self.registry)
            .map(|(user, password)| format!("Basic {}", BASE64.encode(format!("{user}:{password}"))));
        let (scheme, params) = parse_challenge(challenge);
        if scheme.eq_ignore_ascii_case("basic") {
            return basic.ok_or_else(|| {
                refused(format!(
                    "the registry wants credentials: set JACOBIAN_REGISTRY_HOST={} with JACOBIAN_REGISTRY_USER and \
                     JACOBIAN_REGISTRY_PASSWORD",
                    self.registry
                ))
            });
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(refused(format!("unsupported authentication challenge {challenge:?}")));
        }
        let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let realm = param("realm").ok_or_else(|| refused("a Bearer challenge without a realm".into()))?;
        // Credentials go to a token service over HTTPS (or on this machine) only.
        if !crate::auth::jwt::fetchable(&realm) {
            return Err(refused(format!("the token service {realm} is neither https nor on this machine")));
        }
        let query: Vec<String> = ["service", "scope"]
            .into_iter()
            .filter_map(|name| Some(format!("{name}={}", encode(&param(name)?))))
            .collect();
        let separator = if realm.contains('?') { '&' } else { '?' };
        let token_url = if query.is_empty() { realm } else { format!("{realm}{separator}{}", query.join("&")) };
        let mut get = self.agent.get(&token_url);
        if let Some(basic) = &basic {
            get = get.header("Authorization", basic);
        }
        let mut response =
            get.call().map_err(|e| OciError::Unreachable { url: token_url.clone(), message: e.to_string() })?;
        if response.status() != 200 {
            let status = response.status().as_u16();
            return Err(OciError::Refused {
                url: token_url,
                status,
                message: "the token service gave no token".into(),
            });
        }
        let body = read(&mut response, MAX_DOCUMENT_BYTES, &token_url)?;
        let value: Value = serde_json::from_slice(&body).unwrap_or_default();
        let token = value["token"]
            .as_str()
            .or(value["access_token"].as_str())
            .ok_or_else(|| refused("the token service sent no token".into()))?;
        Ok(format!("Bearer {token}"))
    }
}

/// `request` with the session's `Authorization`, when [`Session::send`] gives one.
fn authorized<B>(request: ureq::RequestBuilder<B>, auth: Option<&str>) -> ureq::RequestBuilder<B> {
    match auth {
        Some(auth) => request.header("Authorization", auth),
        None => request,
    }
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn read(response: &mut ureq::http::Response<ureq::Body>, limit: u64, url: &str) -> Result<Vec<u8>, OciError> {
    response
        .body_mut()
        .with_config()
        .limit(limit)
        .read_to_vec()
        .map_err(|e| OciError::Unreachable { url: url.to_owned(), message: e.to_string() })
}

/// A refusal carrying the registry's own error text (its `errors[].message`).
fn refused(url: &str, response: &mut ureq::http::Response<ureq::Body>) -> OciError {
    let status = response.status().as_u16();
    let body = read(response, 64 << 10, url).unwrap_or_default();
    let value: Value = serde_json::from_slice(&body).unwrap_or_default();
    let message = value["errors"]
        .as_array()
        .map(|errors| errors.iter().filter_map(|e| e["message"].as_str()).collect::<Vec<_>>().join("; "))
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned());
    OciError::Refused { url: url.to_owned(), status, message }
}

/// A descriptor of the manifest: media type, digest and size.
fn descriptor(value: &Value) -> Option<(&str, Digest, u64)> {
    Some((value["mediaType"].as_str()?, value["digest"].as_str()?.parse().ok()?, value["size"].as_u64()?))
}

/// Pull a bundle: the manifest (checked against a pinned digest), then the one
/// `application/wasm` layer (checked against the manifest's digest for it).
pub fn pull(reference: &Reference) -> Result<Pulled, OciError> {
    let mut session = Session::new(reference);
    let not_bundle = |message: String| OciError::NotABundle { reference: reference.to_string(), message };
    let url = format!("{}/manifests/{}", reference.base(), reference.manifest_ref());
    let mut response = session
        .send(&url, |agent, auth| authorized(agent.get(&url).header("Accept", MANIFEST_MEDIA_TYPE), auth).call())?;
    if response.status() != 200 {
        return Err(refused(&url, &mut response));
    }
    let manifest_bytes = read(&mut response, MAX_DOCUMENT_BYTES, &url)?;
    let manifest_digest = Digest::of(&manifest_bytes);
    if let Some(expected) = reference.digest
        && expected != manifest_digest
    {
        return Err(OciError::DigestMismatch {
            what: "manifest",
            expected: expected.to_string(),
            actual: manifest_digest,
        });
    }
    let manifest: Value =
        serde_json::from_slice(&manifest_bytes).map_err(|e| not_bundle(format!("the manifest is not JSON: {e}")))?;
    if manifest["config"]["mediaType"] != CONFIG_MEDIA_TYPE {
        return Err(not_bundle(format!(
            "the manifest's config is {}, not a WebAssembly artifact's {CONFIG_MEDIA_TYPE}",
            manifest["config"]["mediaType"]
        )));
    }
    let layers = manifest["layers"].as_array().map(Vec::as_slice).unwrap_or_default();
    let [layer] = layers else {
        return Err(not_bundle(format!(
            "a bundle is one {LAYER_MEDIA_TYPE} layer, the manifest lists {}",
            layers.len()
        )));
    };
    let Some((LAYER_MEDIA_TYPE, layer_digest, size)) = descriptor(layer) else {
        return Err(not_bundle(format!("its layer is {}, not {LAYER_MEDIA_TYPE}", layer["mediaType"])));
    };
    if size > MAX_LAYER_BYTES {
        return Err(not_bundle(format!("its layer is {size} bytes, above the {MAX_LAYER_BYTES} pulled")));
    }
    let url = format!("{}/blobs/{layer_digest}", reference.base());
    let mut response = session.send(&url, |agent, auth| authorized(agent.get(&url), auth).call())?;
    if response.status() != 200 {
        return Err(refused(&url, &mut response));
    }
    // Read into room for the declared size: no doubling past it for a large layer.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    std::io::Read::read_to_end(&mut response.body_mut().with_config().limit(size + 1).reader(), &mut bytes)
        .map_err(|e| OciError::Unreachable { url: url.clone(), message: e.to_string() })?;
    let actual = Digest::of(&bytes);
    if actual != layer_digest || bytes.len() as u64 != size {
        return Err(OciError::DigestMismatch { what: "layer", expected: layer_digest.to_string(), actual });
    }
    let signature = manifest["annotations"][SIGNATURE_ANNOTATION].as_str().map(str::to_owned);
    Ok(Pulled { bytes, signature, manifest_digest })
}

/// What a push sends beside the component: the WIT names it imports and exports.
pub struct Interface {
    /// Its imports.
    pub imports: Vec<String>,
    /// Its exports.
    pub exports: Vec<String>,
}

/// Push a bundle under the reference's tag (and its signature, if any, as
/// the manifest's annotation); returns the manifest's digest.
pub fn push(
    reference: &Reference,
    bytes: &[u8],
    signature: Option<&str>,
    interface: &Interface,
) -> Result<Digest, OciError> {
    let Some(tag) = &reference.tag else {
        return Err(OciError::Reference(format!("{reference}: a push names a tag, not a digest")));
    };
    let mut session = Session::new(reference);
    let layer = Digest::of(bytes);
    // Reproducible: the same bytes and signature make the same manifest digest.
    let created = "1970-01-01T00:00:00Z";
    let config = crate::json::bytes(&json!({
        "created": created, "author": null, "architecture": "wasm", "os": "wasip2",
        "layerDigests": [layer.to_string()],
        "component": {"imports": interface.imports, "exports": interface.exports, "target": null},
    }));
    upload_blob(&mut session, reference, &config)?;
    upload_blob(&mut session, reference, bytes)?;
    let mut manifest = json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": "application/vnd.wasm.component.v1+wasm",
        "config": {"mediaType": CONFIG_MEDIA_TYPE, "digest": Digest::of(&config).to_string(), "size": config.len()},
        "layers": [{"mediaType": LAYER_MEDIA_TYPE, "digest": layer.to_string(), "size": bytes.len()}],
    });
    if let Some(signature) = signature {
        manifest["annotations"] = json!({ SIGNATURE_ANNOTATION: signature });
    }
    let body = crate::json::bytes(&manifest);
    let url = format!("{}/manifests/{tag}", reference.base());
    let mut response = session.send(&url, |agent, auth| {
        authorized(agent.put(&url).header("Content-Type", MANIFEST_MEDIA_TYPE), auth).send(&body[..])
    })?;
    if response.status() != 201 {
        return Err(refused(&url, &mut response));
    }
    Ok(Digest::of(&body))
}

/// Upload one blob (monolithically), unless the registry has it already.
fn upload_blob(session: &mut Session, reference: &Reference, bytes: &[u8]) -> Result<(), OciError> {
    let digest = Digest::of(bytes);
    let url = format!("{}/blobs/{digest}", reference.base());
    let response = session.send(&url, |agent, auth| authorized(agent.head(&url), auth).call())?;
    if response.status() == 200 {
        return Ok(());
    }
    let url = format!("{}/blobs/uploads/", reference.base());
    let mut response = session.send(&url, |agent, auth| authorized(agent.post(&url), auth).send_empty())?;
    if response.status() != 202 {
        return Err(refused(&url, &mut response));
    }
    let Some(location) = response.headers().get("location").and_then(|v| v.to_str().ok()).filter(|l| !l.is_empty())
    else {
        return Err(OciError::Refused {
            url,
            status: 202,
            message: "the upload was started without a Location".into(),
        });
    };
    let location = match location {
        absolute if absolute.contains("://") => absolute.to_owned(),
        path => format!("{}/{}", origin(&reference.base()), path.trim_start_matches('/')),
    };
    let separator = if location.contains('?') { '&' } else { '?' };
    let url = format!("{location}{separator}digest={}", encode(&digest.to_string()));
    let mut response = session.send(&url, |agent, auth| {
        authorized(agent.put(&url).header("Content-Type", "application/octet-stream"), auth).send(bytes)
    })?;
    if response.status() != 201 {
        return Err(refused(&url, &mut response));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_keep_quoted_commas_and_escapes() {
        // The distribution spec's example, with a push scope.
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:samalba/my-app:pull,push""#,
        );
        assert_eq!(scheme, "Bearer");
        let expected = [
            ("realm", "https://auth.docker.io/token"),
            ("service", "registry.docker.io"),
            ("scope", "repository:samalba/my-app:pull,push"),
        ];
        assert_eq!(params, expected.map(|(k, v)| (k.to_owned(), v.to_owned())));
        let (scheme, params) = parse_challenge(r#"Basic realm="a \"quoted\" realm", charset=UTF-8"#);
        assert_eq!(scheme, "Basic");
        assert_eq!(params[0].1, "a \"quoted\" realm");
        assert_eq!(params[1], ("charset".to_owned(), "UTF-8".to_owned()));
    }

    #[test]
    fn references_and_origins() {
        let pinned = format!("oci://127.0.0.1:5000/a/b@sha256:{}", "0".repeat(64));
        let reference = Reference::parse(&pinned).unwrap();
        assert_eq!((reference.repository.as_str(), reference.tag.as_deref()), ("a/b", None));
        assert_eq!(Reference::parse("oci://ghcr.io/org/x").unwrap().tag.as_deref(), Some("latest"));
        for bad in ["ghcr.io/x:1", "oci://ghcr.io", "oci://ghcr.io/Upper:1", "oci://ghcr.io/x:-bad", "oci://h/x@abc"] {
            assert!(Reference::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(origin("https://r.example:5000/v2/x/blobs/uploads/"), "https://r.example:5000");
        assert_eq!(reference.base(), "http://127.0.0.1:5000/v2/a/b");
        assert_eq!(Reference::parse("oci://ghcr.io/org/x:1").unwrap().base(), "https://ghcr.io/v2/org/x");
    }
}
