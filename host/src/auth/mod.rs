//! Who is calling `serve --http`, and what they may do.
//!
//! Two kinds of bearer token are accepted, each only if the operator turned
//! it on:
//! - **JWT access tokens** from an OAuth 2.1 authorization server
//!   ([`jwt`]): signature by a key of the server's JWKS, `iss` the configured
//!   issuer, `aud` this server's resource URI (RFC 8707), `exp`/`nbf` within
//!   a bounded leeway; the tenant is a configured claim (`tenant`) or else
//!   `sub`; scopes from `scope` (or `scp`).
//! - **Operator-issued API tokens** ([`api_tokens`]), `jacobian_<id>_<secret>`,
//!   made by `jacobian tokens create`; only their digest is stored, in the
//!   deployment's store, and every request reads its row, so a revocation
//!   holds at every host's next request.
//!
//! A request without a valid token is refused before anything else reads
//! it (`401` with `WWW-Authenticate: Bearer resource_metadata=…`); a token
//! without the scope an operation needs is refused before the operation
//! runs (`403`, `insufficient_scope`). Tokens are never logged, stored or
//! passed on: the host keeps only the [`Principal`] it derived.
//!
//! Nothing here knows HTTP: the edge (`http/authn.rs`) maps these answers to
//! statuses and headers.

pub mod api_tokens;
pub mod jwt;

use std::sync::Arc;

use crate::store::TokenStore;

/// What a token may be allowed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// `capability.invoke`.
    Invoke,
    /// `workspace.open`, `workspace.write` and `workspace.query`.
    Workspace,
    /// Experiments (`experiment://…`, archives included), episodes, and
    /// `workspace.query`.
    Read,
}

impl Scope {
    /// Every scope, in order.
    pub const ALL: [Scope; 3] = [Scope::Invoke, Scope::Workspace, Scope::Read];

    /// Its name in tokens and in the protected resource metadata.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Invoke => "jacobian:invoke",
            Scope::Workspace => "jacobian:workspace",
            Scope::Read => "jacobian:read",
        }
    }

    /// A scope by its full name (`jacobian:invoke`), as tokens carry it.
    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.name() == name)
    }

    /// A scope by its full name or its short name (`invoke`): the command line only.
    pub fn parse_short(name: &str) -> Option<Scope> {
        Scope::parse(name).or_else(|| Scope::ALL.into_iter().find(|s| s.name().strip_prefix("jacobian:") == Some(name)))
    }
}

/// A set of scopes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scopes(u8);

impl Scopes {
    /// Every scope.
    pub const ALL: Scopes = Scopes(0b111);

    fn bit(scope: Scope) -> u8 {
        1 << (scope as u8)
    }

    /// Whether `scope` is in the set.
    pub fn contains(self, scope: Scope) -> bool {
        self.0 & Self::bit(scope) != 0
    }

    /// The set with `scope` added.
    pub fn with(self, scope: Scope) -> Scopes {
        Scopes(self.0 | Self::bit(scope))
    }

    /// The scopes among space-separated names; names of other resources are ignored.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Scopes {
        names.into_iter().filter_map(Scope::parse).fold(Scopes::default(), Scopes::with)
    }

    /// Space-separated names, in order.
    pub fn names(self) -> String {
        Scope::ALL.into_iter().filter(|s| self.contains(*s)).map(Scope::name).collect::<Vec<_>>().join(" ")
    }
}

/// How a principal proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// An API token, by its public id.
    ApiToken { id: String },
    /// A JWT access token from this issuer.
    Jwt { issuer: String },
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The tenant it belongs to: it owns the experiments, workspaces and
    /// sessions the caller makes (another tenant's are not found), spends
    /// the tenant's quotas, and is logged with each request.
    pub tenant: String,
    /// Who, within the tenant (a JWT's `sub`, an API token's id).
    pub subject: String,
    /// What it may do.
    pub scopes: Scopes,
    pub credential: Credential,
}

/// What a request asks to do, as far as scopes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Protocol traffic, listings, prompts, `capability.describe`, the
    /// catalog, the instructions, artifacts by digest (a digest is a
    /// capability): any valid token.
    Any,
    /// `capability.invoke`.
    Invoke,
    /// `workspace.open`, `workspace.write`.
    WorkspaceWrite,
    /// `workspace.query`.
    WorkspaceRead,
    /// `experiment://…` and `episode://…` resources.
    ReadRecords,
    /// A body this check cannot read (not JSON, a duplicate key, a field of
    /// the wrong type): it needs every scope, so that no reading of it the
    /// protocol layer might make can do more than the token allows.
    Unread,
}

impl Operation {
    /// The scopes any one of which allows it (none: any valid token; for
    /// [`Operation::Unread`], all of them together).
    pub fn allowed_by(self) -> &'static [Scope] {
        match self {
            Operation::Any => &[],
            Operation::Invoke => &[Scope::Invoke],
            Operation::WorkspaceWrite => &[Scope::Workspace],
            Operation::WorkspaceRead => &[Scope::Workspace, Scope::Read],
            Operation::ReadRecords => &[Scope::Read],
            Operation::Unread => &Scope::ALL,
        }
    }
}

impl Principal {
    /// Whether it may do `operation`.
    pub fn may(&self, operation: Operation) -> bool {
        if operation == Operation::Unread {
            return self.scopes == Scopes::ALL;
        }
        let allowed = operation.allowed_by();
        allowed.is_empty() || allowed.iter().any(|s| self.scopes.contains(*s))
    }
}

/// The operations a JSON-RPC body asks for (one per message of a batch).
/// A body this cannot read is [`Operation::Unread`]: fail closed.
pub fn operations_of(body: &[u8]) -> Vec<Operation> {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow, default)]
        name: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        uri: Option<std::borrow::Cow<'a, str>>,
    }
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow, default)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Body<'a> {
        #[serde(borrow)]
        One(Message<'a>),
        Many(Vec<Message<'a>>),
    }
    let messages = match serde_json::from_slice::<Body<'_>>(body) {
        Ok(Body::One(message)) => vec![message],
        Ok(Body::Many(messages)) => messages,
        Err(_) => return vec![Operation::Unread],
    };
    messages.iter().map(|m| operation_of(m.method.as_deref(), m.params.as_ref().map(|p| (&p.name, &p.uri)))).collect()
}

type Named<'a, 'b> = (&'b Option<std::borrow::Cow<'a, str>>, &'b Option<std::borrow::Cow<'a, str>>);

/// What one message asks: an allowlist, so that a method, tool or resource
/// this server gains later needs every scope until it is named here.
fn operation_of(method: Option<&str>, params: Option<Named<'_, '_>>) -> Operation {
    let name = params.and_then(|(name, _)| name.as_deref());
    let uri = params.and_then(|(_, uri)| uri.as_deref());
    match method {
        // A response or an error to a request of the server's.
        None => Operation::Any,
        Some(
            "initialize"
            | "ping"
            | "tools/list"
            | "resources/list"
            | "resources/templates/list"
            | "prompts/list"
            | "prompts/get"
            | "completion/complete"
            | "logging/setLevel",
        ) => Operation::Any,
        Some(notification) if notification.starts_with("notifications/") => Operation::Any,
        Some("tools/call") => match name.map(|n| n.replace('_', ".")).as_deref() {
            Some("capability.describe") => Operation::Any,
            Some("capability.invoke") => Operation::Invoke,
            Some("workspace.open" | "workspace.write") => Operation::WorkspaceWrite,
            Some("workspace.query") => Operation::WorkspaceRead,
            _ => Operation::Unread,
        },
        Some("resources/read" | "resources/subscribe" | "resources/unsubscribe") => match uri {
            Some("jacobian://instructions" | "capability://catalog") => Operation::Any,
            Some(uri) if uri.starts_with("capability://catalog?cursor=") => Operation::Any,
            Some(uri) if uri.starts_with("artifact://") => Operation::Any,
            // The reference pack runs a capability to answer.
            Some("reference://catalog") => Operation::Invoke,
            Some(uri) if uri.starts_with("experiment://") || uri.starts_with("episode://") => Operation::ReadRecords,
            _ => Operation::Unread,
        },
        Some(_) => Operation::Unread,
    }
}

/// How a deployment authenticates (the `[auth]` table of the host
/// configuration file, or `serve`'s `--auth-*` flags).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// This server's resource URI (e.g. `https://jacobian.example.org/mcp`):
    /// the audience every JWT must name, and the protected resource metadata's
    /// `resource`. Default: `http://ADDR/mcp` of the listen address.
    pub resource: Option<String>,
    /// Accept operator-issued API tokens.
    #[serde(default)]
    pub api_tokens: bool,
    /// Accept JWT access tokens from this authorization server.
    pub issuer: Option<String>,
    /// Where its keys are (default: the `jwks_uri` of its metadata).
    pub jwks_uri: Option<String>,
    /// Its keys in a file instead (offline deployments), read again when it changes.
    pub jwks_file: Option<std::path::PathBuf>,
    /// The claim naming the tenant. Named, every token must carry it as a
    /// non-empty string; not named, a token's `tenant` claim (a non-empty
    /// string if present), else its `sub`.
    pub tenant_claim: Option<String>,
    /// What JWT tenants' names start with (default `jwt:`), so that they
    /// never share state or quotas with API-token tenants (whose names cannot
    /// hold `:`) of the same name; `""` maps them onto API-token tenants.
    pub jwt_tenant_prefix: Option<String>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 60, at most 300).
    pub leeway_seconds: Option<u64>,
    /// How long fetched keys are used before they are fetched again, in
    /// seconds (default 300): a key the server rotated out stops being
    /// accepted within this time.
    pub jwks_refresh_seconds: Option<u64>,
}

impl AuthConfig {
    /// Whether any kind of token is accepted.
    pub fn enabled(&self) -> bool {
        self.api_tokens || self.issuer.is_some()
    }
}

/// A configuration that cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A field with a bad value.
    #[error("auth.{field}: {message}")]
    Invalid { field: &'static str, message: String },
    /// The authorization server's metadata or keys could not be had.
    #[error("the authorization server's {what} ({location}): {message}")]
    Unreachable { what: &'static str, location: String, message: String },
}

/// Why a request is not authenticated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// No bearer token.
    #[error("this server needs a bearer token")]
    Missing,
    /// A token that is not (or no longer) valid; the reason names no secret.
    #[error("{0}")]
    Invalid(String),
    /// The token store could not be read.
    #[error("the token store: {0}")]
    Unavailable(String),
}

/// Checks bearer tokens against what the operator configured.
pub struct Authenticator {
    resource: String,
    jwt: Option<jwt::JwtVerifier>,
    tokens: Option<Arc<dyn TokenStore>>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("resource", &self.resource)
            .field("issuer", &self.jwt.as_ref().map(|j| j.issuer()))
            .field("api_tokens", &self.tokens.is_some())
            .finish()
    }
}

/// The longest bearer token looked at (a JWT with many claims is a few KiB).
pub const MAX_TOKEN_BYTES: usize = 16 << 10;

impl Authenticator {
    /// An authenticator for `config` serving `resource` (its default already
    /// applied), reading API tokens from `tokens`. Fetches the authorization
    /// server's keys now, so a wrong issuer fails at start.
    pub fn new(config: &AuthConfig, resource: String, tokens: Arc<dyn TokenStore>) -> Result<Self, SetupError> {
        let parsed = url_parts(&resource).ok_or_else(|| SetupError::Invalid {
            field: "resource",
            message: format!("{resource:?} is not an absolute http(s) URI without a fragment"),
        })?;
        if parsed.2.contains('#') {
            return Err(SetupError::Invalid { field: "resource", message: "a resource URI has no fragment".into() });
        }
        let jwt = match &config.issuer {
            Some(issuer) => Some(jwt::JwtVerifier::new(config, issuer, &resource)?),
            None => None,
        };
        Ok(Authenticator { resource, jwt, tokens: config.api_tokens.then_some(tokens) })
    }

    /// This server's resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where this server's protected resource metadata is (RFC 9728 §3.1:
    /// the well-known path inserted before the resource's path).
    pub fn metadata_url(&self) -> String {
        let (scheme, authority, path) = url_parts(&self.resource).unwrap_or(("http", "localhost", ""));
        // RFC 9728 §3.1: the path follows the well-known suffix, minus a
        // slash that directly follows the host.
        let path = if path == "/" { "" } else { path };
        format!("{scheme}://{authority}/.well-known/oauth-protected-resource{path}")
    }

    /// The protected resource metadata document (RFC 9728).
    pub fn metadata(&self) -> serde_json::Value {
        let servers: Vec<&str> = self.jwt.iter().map(|j| j.issuer()).collect();
        serde_json::json!({
            "resource": self.resource,
            "authorization_servers": servers,
            "scopes_supported": Scope::ALL.iter().map(|s| s.name()).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
            "resource_name": "Jacobian",
        })
    }

    /// The principal a request's `Authorization` header proves.
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Principal, Rejection> {
        let header = authorization.ok_or(Rejection::Missing)?;
        let token = match header.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            // Another scheme carries no bearer token (RFC 6750 §3.1: no error code).
            _ => return Err(Rejection::Missing),
        };
        if token.is_empty() {
            return Err(Rejection::Missing);
        }
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::Invalid(format!("bearer tokens are limited to {MAX_TOKEN_BYTES} bytes")));
        }
        if api_tokens::looks_like(token) {
            return match &self.tokens {
                Some(store) => api_tokens::verify(store.as_ref(), token, now_seconds()).await,
                None => Err(Rejection::Invalid("this server does not accept API tokens".into())),
            };
        }
        match &self.jwt {
            Some(jwt) => jwt.verify(token).await,
            None => Err(Rejection::Invalid("this server accepts only its API tokens".into())),
        }
    }
}

/// Seconds since the Unix epoch.
pub fn now_seconds() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The scheme, authority and path (with any query) of an absolute http(s) URI.
fn url_parts(uri: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = uri.split_once("://")?;
    if !(scheme == "http" || scheme == "https") {
        return None;
    }
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| (&rest[..i], &rest[i..]));
    (!authority.is_empty() && !authority.contains(['@', ' '])).then_some((scheme, authority, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_follow_tool_names_in_both_spellings_and_resource_schemes() {
        let call = |name: &str| {
            operations_of(format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{{"x":[1,2]}}}}}}"#).as_bytes())
        };
        assert_eq!(call("capability.invoke"), [Operation::Invoke]);
        assert_eq!(call("capability_invoke"), [Operation::Invoke]);
        assert_eq!(call("workspace.write"), [Operation::WorkspaceWrite]);
        assert_eq!(call("workspace_open"), [Operation::WorkspaceWrite]);
        assert_eq!(call("workspace.query"), [Operation::WorkspaceRead]);
        assert_eq!(call("capability.describe"), [Operation::Any]);
        // A tool, method or resource not named in the allowlist needs every scope.
        assert_eq!(call("capability.something_new"), [Operation::Unread]);
        assert_eq!(operations_of(br#"{"method":"tasks/list"}"#), [Operation::Unread]);
        let read = |uri: &str| {
            operations_of(
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"{uri}"}}}}"#)
                    .as_bytes(),
            )
        };
        assert_eq!(read("experiment://x/archive"), [Operation::ReadRecords]);
        assert_eq!(read("artifact://sha256/00"), [Operation::Any]);
        assert_eq!(read("episode://sha256/00"), [Operation::ReadRecords]);
        assert_eq!(read("reference://catalog"), [Operation::Invoke]);
        assert_eq!(read("other://x"), [Operation::Unread]);
        let batch = br#"[{"method":"ping"},{"method":"tools/call","params":{"name":"capability.invoke"}}]"#;
        assert_eq!(operations_of(batch), [Operation::Any, Operation::Invoke]);
        // What this check cannot read needs every scope: a duplicate key
        // (another parser might keep the last), a wrong type, no JSON.
        let duplicate =
            br#"{"method":"tools/call","params":{"name":"capability.describe","name":"capability.invoke"}}"#;
        for body in [&duplicate[..], b"not json", br#"{"method":5}"#] {
            assert_eq!(operations_of(body), [Operation::Unread], "{}", String::from_utf8_lossy(body));
        }
        let everything = Principal {
            tenant: "t".into(),
            subject: "s".into(),
            scopes: Scopes::ALL,
            credential: Credential::ApiToken { id: "x".into() },
        };
        let most = Principal { scopes: Scopes::default().with(Scope::Invoke).with(Scope::Read), ..everything.clone() };
        assert!(everything.may(Operation::Unread) && !most.may(Operation::Unread));
    }

    #[test]
    fn scopes_parse_by_full_and_short_name_and_ignore_others() {
        // Tokens name scopes in full: an authorization server's generic `read` grants nothing here.
        let scopes = Scopes::from_names("openid jacobian:invoke read jacobian:read other:invoke".split(' '));
        assert!(scopes.contains(Scope::Invoke) && scopes.contains(Scope::Read) && !scopes.contains(Scope::Workspace));
        assert_eq!(scopes.names(), "jacobian:invoke jacobian:read");
        assert_eq!(Scopes::from_names(["read", "invoke"]), Scopes::default());
        assert_eq!(Scope::parse_short("read"), Some(Scope::Read));
        let principal = Principal {
            tenant: "t".into(),
            subject: "s".into(),
            scopes: Scopes::default().with(Scope::Read),
            credential: Credential::ApiToken { id: "x".into() },
        };
        assert!(principal.may(Operation::Any) && principal.may(Operation::WorkspaceRead));
        assert!(!principal.may(Operation::Invoke) && !principal.may(Operation::WorkspaceWrite));
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        struct NoTokens;
        #[async_trait::async_trait]
        impl TokenStore for NoTokens {
            async fn create(&self, _: &crate::store::TokenRecord) -> Result<(), crate::store::DbError> {
                Ok(())
            }
            async fn find(&self, _: &str) -> Result<Option<crate::store::TokenRecord>, crate::store::DbError> {
                Ok(None)
            }
            async fn list(&self) -> Result<Vec<crate::store::TokenRecord>, crate::store::DbError> {
                Ok(Vec::new())
            }
            async fn revoke(&self, _: &str, _: i64) -> Result<bool, crate::store::DbError> {
                Ok(false)
            }
        }
        let config = AuthConfig { api_tokens: true, ..AuthConfig::default() };
        let auth = Authenticator::new(&config, "https://j.example.org/mcp".into(), Arc::new(NoTokens)).expect("auth");
        assert_eq!(auth.metadata_url(), "https://j.example.org/.well-known/oauth-protected-resource/mcp");
        assert_eq!(auth.metadata()["resource"], "https://j.example.org/mcp");
        for bad in ["j.example.org/mcp", "ftp://j/mcp", "https:///mcp", "https://j/mcp#x"] {
            assert!(Authenticator::new(&config, bad.into(), Arc::new(NoTokens)).is_err(), "{bad}");
        }
    }
}
