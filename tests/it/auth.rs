//! Authentication over HTTP: API tokens made by the operator and JWT access
//! tokens from an authorization server, against the real binary. The JWTs
//! here are signed by keys made in the test (Ed25519); an independent
//! authorization server and MCP client are exercised by `oidc.rs`.

use std::path::Path;
use std::process::Command;

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::http::{Server, assert_envelope, header};
use crate::mcp_http::HttpClient;
use crate::support::{BIN, cli};

const RESOURCE: &str = "http://127.0.0.1/mcp";
const METADATA: &str = "/.well-known/oauth-protected-resource/mcp";
const ISSUER: &str = "https://idp.example.test";

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    .to_string()
}

fn invoke() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capability.invoke",
        "arguments": {"capability_id": "sat.cnf.construct", "input": {"dimacs": "p cnf 1 1\n1 0\n"}}}})
    .to_string()
}

/// POST `body` to /mcp with `token`: (status, headers, body).
fn post(server: &Server, token: Option<&str>, body: &str) -> (u16, Vec<(String, String)>, String) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    headers.push(("X-Request-ID", "auth-test"));
    server.request_with_body("POST", "/mcp", &headers, body.as_bytes())
}

fn token_of(data_dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["tokens", "create"];
    all.extend_from_slice(args);
    serde_json::from_str(cli(data_dir, &all).trim()).expect("tokens create prints JSON")
}

fn failing(data_dir: &Path, args: &[&str]) -> (i32, Value) {
    let out = Command::new(BIN).arg("--data-dir").arg(data_dir).args(args).output().expect("run jacobian");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let envelope =
        serde_json::from_str(stderr.lines().last().unwrap_or_default()).unwrap_or_else(|_| panic!("{stderr}"));
    (out.status.code().unwrap_or(-1), envelope)
}

/// The result of request 1 in an SSE or JSON answer.
fn result_of(answer: &str) -> Value {
    answer
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .chain(serde_json::from_str::<Value>(answer).ok())
        .find(|m| m["id"] == json!(1))
        .unwrap_or_else(|| panic!("no answer in {answer}"))["result"]
        .clone()
}

#[test]
fn api_tokens_authenticate_scope_and_stop_at_revocation_or_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let writer = token_of(data, &["--tenant", "acme", "--scope", "invoke", "--scope", "jacobian:workspace"]);
    let reader = token_of(data, &["--tenant", "acme", "--scope", "read"]);
    let brief = token_of(data, &["--tenant", "acme", "--scope", "invoke", "--expires", "1s"]);
    assert_eq!(writer["scopes"], "jacobian:invoke jacobian:workspace");
    let (writer, reader, brief) =
        (writer["token"].as_str().unwrap(), reader["token"].as_str().unwrap(), brief["token"].as_str().unwrap());

    // The operator's listing names ids, tenants and scopes, never a secret.
    let listing = cli(data, &["tokens", "list"]);
    assert_eq!(listing.lines().count(), 3, "{listing}");
    for token in [writer, reader, brief] {
        let secret = token.splitn(3, '_').nth(2).unwrap();
        assert_eq!(secret.len(), 43, "{token}");
        assert!(!listing.contains(secret) && !listing.contains(token), "{listing}");
    }
    // Bad requests are typed and make nothing.
    for (args, field) in [
        (vec!["tokens", "create", "--tenant", "Acme Corp", "--scope", "invoke"], "--tenant"),
        (vec!["tokens", "create", "--tenant", "acme", "--scope", "admin"], "--scope"),
        (vec!["tokens", "create", "--tenant", "acme", "--scope", "read", "--expires", "soon"], "--expires"),
    ] {
        let (code, envelope) = failing(data, &args);
        assert_eq!((code, envelope["error_type"].as_str()), (3, Some("validation_error")), "{envelope}");
        assert!(envelope["error"].as_str().unwrap().contains(field), "{envelope}");
    }
    let (code, envelope) = failing(data, &["tokens", "revoke", "0123456789abcdef"]);
    assert_eq!((code, envelope["error_type"].as_str()), (3, Some("not_found")), "{envelope}");
    assert_eq!(cli(data, &["tokens", "list"]).lines().count(), 3);

    let server = Server::start_with(data, None, &["--auth-api-tokens", "--auth-resource", RESOURCE]);
    // No token: 401 naming where the metadata is, which is served without one.
    let (status, headers, body) = post(&server, None, &initialize());
    assert_eq!(status, 401, "{body}");
    assert_envelope(&body, "unauthorized", "auth-test");
    let challenge = header(&headers, "www-authenticate").expect("a challenge");
    assert!(
        challenge.starts_with("Bearer ")
            && challenge.contains(&format!("resource_metadata=\"http://127.0.0.1{METADATA}\"")),
        "{challenge}"
    );
    for path in [METADATA, "/.well-known/oauth-protected-resource"] {
        let (status, _, body) = server.request("GET", path, &[]);
        assert_eq!(status, 200, "{path}: {body}");
        let metadata: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(metadata["resource"], RESOURCE);
        assert_eq!(metadata["scopes_supported"], json!(["jacobian:invoke", "jacobian:workspace", "jacobian:read"]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }
    // Every method on /mcp needs a token; another scheme than Bearer is no token at all.
    for method in ["GET", "DELETE"] {
        assert_eq!(server.request(method, "/mcp", &[("Accept", "text/event-stream")]).0, 401, "{method}");
    }
    let (status, headers, _) = server.request("GET", "/metrics", &[("Authorization", "Basic YTpi")]);
    assert_eq!(status, 401);
    assert!(!header(&headers, "www-authenticate").unwrap().contains("error="), "{headers:?}");
    // Liveness stays open; metrics do not.
    assert_eq!(server.request("GET", "/health", &[]).0, 200);
    assert_eq!(server.request("GET", "/metrics", &[]).0, 401);
    assert_eq!(server.request("GET", "/metrics", &[("Authorization", &format!("Bearer {reader}"))]).0, 200);
    // Tokens that are no API token of this deployment.
    let unknown = format!("jacobian_0123456789abcdef_{}", "A".repeat(43));
    let forged = format!("{}{}", &writer[..writer.len() - 1], if writer.ends_with('B') { 'A' } else { 'B' });
    for bad in [unknown.as_str(), forged.as_str(), "jacobian_zz", "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"] {
        let (status, headers, body) = post(&server, Some(bad), &initialize());
        assert_eq!(status, 401, "{bad}: {body}");
        assert!(header(&headers, "www-authenticate").unwrap().contains("error=\"invalid_token\""), "{headers:?}");
        assert!(!body.contains(bad), "a rejection echoes no token: {body}");
    }

    // The writer invokes; the reader may not, and is told which scope it lacks.
    let mut client = HttpClient::connect_with(&server.addr, Some(writer));
    let (result, is_error) = client.call(
        "capability.invoke",
        json!({"capability_id": "sat.cnf.construct",
        "input": {"dimacs": "p cnf 1 1\n1 0\n"}}),
    );
    assert!(!is_error, "{result}");
    let experiment = result["accounting"]["experiment"].as_str().expect("an experiment").to_owned();
    // Tenants own their workspaces: the same key opens another workspace for
    // another tenant, and neither reaches the other's, whatever id it presents.
    let beta = token_of(data, &["--tenant", "beta", "--scope", "workspace"]);
    let mut other = HttpClient::connect_with(&server.addr, Some(beta["token"].as_str().unwrap()));
    let open = json!({"idempotency_key": "same-key", "title": "t", "statement": "s"});
    let (mine, mine_failed) = client.call("workspace.open", open.clone());
    let (theirs, theirs_failed) = other.call("workspace.open", open);
    assert!(!mine_failed && !theirs_failed, "{mine} {theirs}");
    assert_ne!(mine["workspace_id"], theirs["workspace_id"]);
    let query = |id: &Value| json!({"workspace_id": id, "view": "RESUME"});
    let write = |id: &Value| {
        json!({"workspace_id": id, "base_revision": "rev-0", "idempotency_key": "w",
        "entries": [{"type": "finding", "kind": "NOTE", "title": "x"}]})
    };
    for (tool, arguments) in
        [("workspace.query", query(&mine["workspace_id"])), ("workspace.write", write(&mine["workspace_id"]))]
    {
        let (refused, is_error) = other.call(tool, arguments);
        assert!(is_error, "{tool}: {refused}");
        assert_eq!(refused["diagnostic"]["code"], "WORKSPACE_NOT_FOUND", "{tool}: {refused}");
    }
    let (own, is_error) = other.call("workspace.query", query(&theirs["workspace_id"]));
    assert!(!is_error, "{own}");
    let (own, is_error) = client.call("workspace.write", write(&mine["workspace_id"]));
    assert!(!is_error, "{own}");
    let (status, headers, body) = post(&server, Some(reader), &invoke());
    assert_eq!(status, 403, "{body}");
    assert_envelope(&body, "insufficient_scope", "auth-test");
    let challenge = header(&headers, "www-authenticate").unwrap();
    assert!(
        challenge.contains("error=\"insufficient_scope\"") && challenge.contains("scope=\"jacobian:invoke\""),
        "{challenge}"
    );
    // Reading an experiment needs jacobian:read, which the writer lacks.
    let read = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
        "params": {"uri": format!("experiment://{experiment}/accounting")}})
    .to_string();
    let (status, _, body) = post(&server, Some(writer), &read);
    assert_eq!(status, 403, "{body}");
    let mut reading = HttpClient::connect_with(&server.addr, Some(reader));
    let (status, answer) = reading.exchange(&read);
    assert_eq!(status, 200, "{answer}");
    // A session is continued only by whoever opened it: the reader cannot use the writer's.
    let theirs = client.session().expect("a session").to_owned();
    let mut borrowed = HttpClient::resume(&server.addr, &theirs);
    borrowed.set_bearer(reader);
    let (status, refused) = borrowed.exchange(&read);
    assert_eq!(status, 404, "{refused}");
    assert!(result_of(&answer)["contents"].is_array(), "{answer}");
    // A large message of a session is read on the background lane: its scope is checked there too.
    let large = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capability.invoke",
        "arguments": {"capability_id": "sat.cnf.construct", "input": {"dimacs": format!("c {}\np cnf 1 1\n1 0\n", "x".repeat(100_000))}}}});
    let (status, answer) = reading.exchange(&large.to_string());
    assert_eq!(status, 403, "{answer}");
    let envelope: Value = serde_json::from_str(&answer).expect("one envelope");
    assert_eq!(envelope["error_type"], "insufficient_scope", "{answer}");
    assert!(envelope["error"].as_str().unwrap().contains("jacobian:invoke"), "{answer}");
    // A body the check cannot read (here a duplicate key another parser might
    // resolve either way) needs every scope.
    let duplicate = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"capability.describe","name":"capability.invoke","arguments":{}}}"#;
    let (status, answer) = reading.exchange(duplicate);
    assert_eq!(status, 403, "{answer}");

    // Expiry and revocation hold from the next request, in a session already open.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (status, _, body) = post(&server, Some(brief), &initialize());
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("expired"), "{body}");
    let id = writer.split('_').nth(1).unwrap();
    assert_eq!(cli(data, &["tokens", "revoke", id]).trim(), format!("revoked {id}"));
    let (status, body) = client.exchange(&invoke());
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("revoked"), "{body}");
}

#[test]
fn a_public_address_needs_authentication_or_an_explicit_insecure_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (code, envelope) = failing(dir.path(), &["serve", "--http", "0.0.0.0:0"]);
    assert_eq!((code, envelope["error_type"].as_str()), (3, Some("validation_error")), "{envelope}");
    assert!(envelope["error"].as_str().unwrap().contains("--insecure-no-auth"), "{envelope}");
    // Loopback behind a proxy that passes a public Host is public too.
    let (code, envelope) = failing(dir.path(), &["serve", "--http", "127.0.0.1:0", "--allow-host", "mcp.example.org"]);
    assert_eq!((code, envelope["error_type"].as_str()), (3, Some("validation_error")), "{envelope}");
    // Keys only over HTTPS, or from this machine.
    let (code, envelope) = failing(
        dir.path(),
        &["serve", "--http", "127.0.0.1:0", "--auth-issuer", "http://login.example.org", "--auth-resource", RESOURCE],
    );
    assert_eq!((code, envelope["error_type"].as_str()), (3, Some("validation_error")), "{envelope}");
    assert!(envelope["error"].as_str().unwrap().contains("https"), "{envelope}");
    let (code, envelope) = failing(dir.path(), &["serve", "--http", "127.0.0.1:0", "--auth-api-tokens"]);
    assert_eq!(code, 3, "{envelope}");
    assert!(envelope["error"].as_str().unwrap().contains("--auth-resource"), "{envelope}");
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--http", "0.0.0.0:0", "--insecure-no-auth"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let addr = crate::http::ready_addr(&mut child);
    assert!(addr.starts_with("0.0.0.0:"), "{addr}");
    let _ = child.kill();
    let _ = child.wait();
}

/// An Ed25519 signing key made here, and its public JWK named `kid`.
fn signing_key(kid: &str) -> (EncodingKey, Jwk) {
    // PKCS#8 v1 for an Ed25519 seed: a fixed 16-byte prefix, then the seed.
    let mut der = vec![0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).unwrap();
    der.extend_from_slice(&seed);
    let key = EncodingKey::from_ed_der(&der);
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::EdDSA).expect("a public JWK");
    jwk.common.key_id = Some(kid.to_owned());
    (key, jwk)
}

fn sign(key: &EncodingKey, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, key).expect("sign")
}

fn write_jwks(path: &Path, keys: &[&Jwk]) {
    let set = JwkSet { keys: keys.iter().map(|k| (*k).clone()).collect() };
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, serde_json::to_vec(&set).unwrap()).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

#[test]
fn jwt_access_tokens_are_checked_for_signature_issuer_audience_time_scope_and_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a_public) = signing_key("a");
    let (b, b_public) = signing_key("b");
    let jwks = dir.path().join("jwks.json");
    write_jwks(&jwks, &[&a_public]);
    let config = dir.path().join("jacobian.toml");
    std::fs::write(
        &config,
        format!(
            "[auth]\nresource = \"{RESOURCE}\"\nissuer = \"{ISSUER}\"\njwks_file = \"{}\"\njwks_refresh_seconds = 1\n",
            jwks.display()
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let server = Server::start_with(&data, None, &["--config", config.to_str().unwrap()]);

    let now = jsonwebtoken::get_current_timestamp() as i64;
    let claims = |changes: Value| {
        let mut claims = json!({"iss": ISSUER, "aud": RESOURCE, "sub": "client-1", "tenant": "acme",
            "scope": "openid jacobian:invoke", "iat": now, "nbf": now - 5, "exp": now + 600});
        for (k, v) in changes.as_object().unwrap() {
            if v.is_null() {
                claims.as_object_mut().unwrap().remove(k);
            } else {
                claims[k] = v.clone();
            }
        }
        claims
    };
    let good = sign(&a, "a", &claims(json!({})));
    let mut client = HttpClient::connect_with(&server.addr, Some(&good));
    let (result, is_error) = client.call(
        "capability.invoke",
        json!({"capability_id": "sat.cnf.construct",
        "input": {"dimacs": "p cnf 1 1\n1 0\n"}}),
    );
    assert!(!is_error, "{result}");

    let hmac = jsonwebtoken::encode(
        &Header { kid: Some("a".into()), ..Header::new(Algorithm::HS256) },
        &claims(json!({})),
        &EncodingKey::from_secret(b"a shared secret of thirty-two bytes").expect("a key"),
    )
    .unwrap();
    let unsigned = {
        use base64::Engine as _;
        let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!("{}.{}.", b64(&json!({"alg": "none", "kid": "a"})), b64(&claims(json!({}))))
    };
    let refused = [
        ("expired beyond the leeway", sign(&a, "a", &claims(json!({"exp": now - 120}))), "expired"),
        ("not valid yet", sign(&a, "a", &claims(json!({"nbf": now + 600}))), "nbf"),
        ("for another resource", sign(&a, "a", &claims(json!({"aud": "https://other.example/mcp"}))), "aud"),
        ("from another issuer", sign(&a, "a", &claims(json!({"iss": "https://evil.example"}))), "iss"),
        ("without exp", sign(&a, "a", &claims(json!({"exp": null}))), "exp"),
        ("signed by another key under a's id", sign(&b, "a", &claims(json!({}))), "signature"),
        ("signed with a shared secret", hmac, "HS256"),
        ("unsigned", unsigned, "JWT"),
        ("naming no tenant and no subject", sign(&a, "a", &claims(json!({"tenant": null, "sub": null}))), "tenant"),
    ];
    for (what, token, reason) in &refused {
        let (status, headers, body) = post(&server, Some(token), &initialize());
        assert_eq!(status, 401, "{what}: {body}");
        assert!(body.contains(reason), "{what}: {body}");
        assert!(header(&headers, "www-authenticate").unwrap().contains("invalid_token"), "{what}");
    }
    // A valid token without the scope: 403, before anything runs.
    let narrow = sign(&a, "a", &claims(json!({"scope": "jacobian:read"})));
    let (status, _, body) = post(&server, Some(&narrow), &invoke());
    assert_eq!(status, 403, "{body}");
    // The `scp` array spelling is read too.
    let listed = sign(&a, "a", &claims(json!({"scope": null, "scp": ["jacobian:invoke"]})));
    let (result, is_error) = HttpClient::connect_with(&server.addr, Some(&listed)).call(
        "capability.invoke",
        json!({"capability_id": "sat.cnf.construct", "input": {"dimacs": "p cnf 1 1\n1 0\n"}}),
    );
    assert!(!is_error, "{result}");

    // The authorization server rotates a out and b in: within the refresh
    // time, a's tokens stop working and b's start.
    write_jwks(&jwks, &[&b_public]);
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let (status, _, body) = post(&server, Some(&good), &initialize());
    assert_eq!(status, 401, "a token of a rotated-out key: {body}");
    let (status, _, body) = post(&server, Some(&sign(&b, "b", &claims(json!({})))), &initialize());
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_jwt_tenant_and_an_api_token_tenant_of_one_name_are_two_tenants_and_the_claim_must_be_a_string() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = signing_key("a");
    let jwks = dir.path().join("jwks.json");
    write_jwks(&jwks, &[&public]);
    let config = dir.path().join("jacobian.toml");
    std::fs::write(
        &config,
        format!(
            "[auth]\nresource = \"{RESOURCE}\"\napi_tokens = true\nissuer = \"{ISSUER}\"\njwks_file = \"{}\"\n",
            jwks.display()
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let api = token_of(&data, &["--tenant", "alice", "--scope", "workspace"]);
    let server = Server::start_with(&data, None, &["--config", config.to_str().unwrap()]);
    let now = jsonwebtoken::get_current_timestamp() as i64;
    let jwt = |tenant: Value| {
        sign(
            &key,
            "a",
            &json!({"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "tenant": tenant,
            "scope": "jacobian:workspace", "exp": now + 600}),
        )
    };
    let mut by_api = HttpClient::connect_with(&server.addr, Some(api["token"].as_str().unwrap()));
    let mut by_jwt = HttpClient::connect_with(&server.addr, Some(&jwt(json!("alice"))));
    let open = json!({"idempotency_key": "same-key", "title": "t", "statement": "s"});
    let (api_opened, failed) = by_api.call("workspace.open", open.clone());
    assert!(!failed, "{api_opened}");
    let (jwt_opened, failed) = by_jwt.call("workspace.open", open);
    assert!(!failed, "{jwt_opened}");
    assert_ne!(api_opened["workspace_id"], jwt_opened["workspace_id"], "two tenants, two workspaces");
    let query = |id: &Value| json!({"workspace_id": id, "view": "RESUME"});
    let (refused, is_error) = by_jwt.call("workspace.query", query(&api_opened["workspace_id"]));
    assert!(is_error && refused["diagnostic"]["code"] == "WORKSPACE_NOT_FOUND", "{refused}");
    let (refused, is_error) = by_api.call("workspace.query", query(&jwt_opened["workspace_id"]));
    assert!(is_error && refused["diagnostic"]["code"] == "WORKSPACE_NOT_FOUND", "{refused}");
    // A tenant claim that is not a non-empty string is refused, never read as `sub`.
    for odd in [json!(7), json!(["alice"]), json!(""), json!({"name": "alice"})] {
        let (status, _, body) = post(&server, Some(&jwt(odd.clone())), &initialize());
        assert_eq!(status, 401, "{odd}: {body}");
        assert!(body.contains("tenant claim"), "{odd}: {body}");
    }
}
