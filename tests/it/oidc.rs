//! A real authorization server and a client that is not ours: oidc-provider
//! (a certified OpenID Connect provider, run with Node; `scripts/test.sh`
//! installs it from `tests/it/oidc/package-lock.json`) issuing JWT access
//! tokens for the client-credentials grant with resource indicators, and the
//! official MCP Python SDK's client-credentials provider, which finds the
//! authorization server through this server's 401 and metadata.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::mcp_http::HttpClient;
use crate::support::BIN;

/// `node tests/it/oidc/server.mjs`, killed on drop.
struct AuthorizationServer {
    child: Child,
    issuer: String,
}

impl AuthorizationServer {
    fn start() -> AuthorizationServer {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/it/oidc");
        assert!(dir.join("node_modules/oidc-provider").exists(), "scripts/test.sh installs oidc-provider (npm ci)");
        let mut child = Command::new("node")
            .arg(dir.join("server.mjs"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node (scripts/test.sh needs Node.js)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("the issuer line");
        let issuer = line.trim().strip_prefix("issuer ").unwrap_or_else(|| panic!("{line:?}")).to_owned();
        AuthorizationServer { child, issuer }
    }

    /// An access token for `client` (its secret is `secret-<client>`) for `resource`.
    fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{client}:secret-{client}"));
        let mut response = ureq::post(format!("{}/token", self.issuer))
            .header("Authorization", format!("Basic {basic}"))
            .send_form([("grant_type", "client_credentials"), ("resource", resource), ("scope", scope)])
            .expect("a token");
        let body: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
        body["access_token"].as_str().expect("access_token").to_owned()
    }
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn the_official_python_sdk_gets_a_token_from_a_real_authorization_server_and_calls_the_server() {
    let idp = AuthorizationServer::start();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    // Keys found through the issuer's metadata (jwks_uri), fetched at start.
    let mut server = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--http", &format!("127.0.0.1:{port}"), "--auth-issuer", &idp.issuer])
        .args(["--auth-resource", &resource])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let addr = crate::http::ready_addr(&mut server);

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/it/python/oauth_client.py");
    let out = Command::new("python3").arg(script).args([&resource, &idp.issuer, "agent-a", "secret-agent-a"]).output();
    let out = out.expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let seen: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|_| panic!("{stdout}"));
    // Without a token: 401 and the metadata, which names the authorization server.
    let first = &seen["without_token"];
    assert_eq!(first["status"], 401, "{seen}");
    assert!(first["challenge"].as_str().unwrap().contains("resource_metadata="), "{seen}");
    assert_eq!(first["metadata"]["resource"], resource.as_str());
    assert_eq!(first["metadata"]["authorization_servers"], json!([idp.issuer]));
    // With the SDK's provider: a token for this resource, and the calls answered.
    assert!(seen["tools"].as_array().unwrap().contains(&json!("capability.invoke")), "{seen}");
    assert_eq!(seen["invoked"], json!({"is_error": false, "status": "COMPLETED"}), "{seen}");
    assert_eq!(seen["claims"]["aud"], resource.as_str());
    assert_eq!(seen["claims"]["iss"], idp.issuer.as_str());
    assert_eq!(seen["claims"]["tenant"], "team-agent-a");

    // Real tokens this server must refuse: one for another resource, and one
    // without the scope (agent-b may only read).
    let elsewhere = idp.token("agent-a", "http://127.0.0.1:1/mcp", "jacobian:invoke");
    let (status, body) = HttpClient::connect_raw(&addr, Some(&elsewhere)).exchange(&initialize());
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("aud"), "{body}");
    let reader = idp.token("agent-b", &resource, "jacobian:read");
    let mut client = HttpClient::connect_with(&addr, Some(&reader));
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capability.invoke",
        "arguments": {"capability_id": "sat.cnf.construct", "input": {"dimacs": "p cnf 1 1\n1 0\n"}}}});
    let (status, body) = client.exchange(&call.to_string());
    assert_eq!(status, 403, "{body}");
    let _ = server.kill();
    let _ = server.wait();
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    .to_string()
}
