//! `jacobian serve --http`: health, metrics, request ids, the error envelope,
//! and the official MCP Python SDK as a client that is not ours.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::BIN;

mod bodies;

/// The address a `serve --http` child prints in its ready line (its stdout is piped).
pub fn ready_addr(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout")).read_line(&mut line).expect("ready line");
    line.trim()
        .strip_prefix("listening on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("the server did not start: {line:?}"))
        .to_owned()
}

/// A running `jacobian serve --http 127.0.0.1:0`, killed on drop.
pub(crate) struct Server {
    child: Child,
    pub(crate) addr: String,
}

impl Server {
    fn start(data_dir: &Path) -> Server {
        Server::start_logging(data_dir, None)
    }

    /// Start with JSON logs at info level written to `log`.
    fn start_logging(data_dir: &Path, log: Option<&Path>) -> Server {
        Server::start_with(data_dir, log, &[])
    }

    /// Start with more `serve` arguments.
    pub(crate) fn start_with(data_dir: &Path, log: Option<&Path>, args: &[&str]) -> Server {
        let mut command = Command::new(BIN);
        command.arg("--data-dir").arg(data_dir).args(["serve", "--http", "127.0.0.1:0"]);
        if !args.contains(&"--drain-seconds") {
            command.args(["--drain-seconds", "10"]);
        }
        command.args(args);
        command.stdout(Stdio::piped());
        match log {
            Some(path) => {
                command.arg("--log-json").env("JACOBIAN_LOG", "info");
                command.stderr(std::fs::File::create(path).unwrap());
            }
            None => {
                command.stderr(Stdio::null());
            }
        }
        let mut child = command.spawn().expect("spawn jacobian serve --http");
        let addr = ready_addr(&mut child);
        Server { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// One HTTP/1.1 exchange: (status, headers lower-cased, body).
    pub(crate) fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (u16, Vec<(String, String)>, String) {
        self.request_with_body(method, path, headers, b"")
    }

    pub(crate) fn request_with_body(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, Vec<(String, String)>, String) {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut text = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            text.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            text.push_str(&format!("{k}: {v}\r\n"));
        }
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-length")) {
            text.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        text.push_str("\r\n");
        stream.write_all(text.as_bytes()).unwrap();
        // The server may answer (and close) before reading an oversized body.
        let _ = stream.write_all(body);
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").expect("a response");
        let mut lines = head.lines();
        let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let body = if chunked { dechunk(body) } else { body.to_owned() };
        (status, headers, body)
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `python3 tests/it/python/SCRIPT URL` (scripts/test.sh installs the `mcp` package).
fn python_client(script: &str, server: &Server) -> Command {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/it/python").join(script);
    let mut command = Command::new("python3");
    command.arg(path).arg(server.url());
    command
}

pub(crate) fn assert_envelope(body: &str, error_type: &str, request_id: &str) {
    let envelope: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("not an envelope: {body}"));
    let keys: Vec<&String> = envelope.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["error", "error_type", "request_id"], "{body}");
    assert_eq!(envelope["error_type"], error_type, "{body}");
    assert_eq!(envelope["request_id"], request_id, "{body}");
    assert!(!envelope["error"].as_str().unwrap().is_empty());
}

#[test]
fn health_request_ids_and_one_error_envelope_for_every_failure() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (status, headers, body) = server.request("GET", "/health", &[]);
    assert_eq!(status, 200);
    let health: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health.as_object().unwrap().len(), 3, "liveness only: {health}");
    let minted = header(&headers, "x-request-id").expect("a request id on every response");
    assert!(minted.starts_with("req-") && minted.len() == 36, "{minted}");

    // Safe ids are echoed; unsafe or oversized ones are replaced.
    let (_, headers, _) = server.request("GET", "/health", &[("X-Request-ID", "trace-42.a:b_c")]);
    assert_eq!(header(&headers, "x-request-id"), Some("trace-42.a:b_c"));
    let long = "a".repeat(129);
    for unsafe_id in ["bad id", "x\"<script>", "ümlaut", long.as_str()] {
        let (_, headers, _) = server.request("GET", "/health", &[("X-Request-ID", unsafe_id)]);
        let echoed = header(&headers, "x-request-id").unwrap();
        assert_ne!(echoed, unsafe_id);
        assert!(echoed.starts_with("req-"), "{echoed}");
    }

    // Every failure: the same three-field envelope, carrying the request id.
    let id = [("X-Request-ID", "probe-1")];
    let (status, headers, body) = server.request("GET", "/no/such/route", &id);
    assert_eq!(status, 404);
    assert_eq!(header(&headers, "content-type"), Some("application/json"));
    assert_envelope(&body, "not_found", "probe-1");
    let (status, _, body) = server.request("POST", "/health", &id);
    assert_eq!(status, 405);
    assert_envelope(&body, "method_not_allowed", "probe-1");
    let (status, _, body) = server.request("GET", "/metrics", &[("Host", "evil.example"), id[0]]);
    assert_eq!(status, 403);
    assert_envelope(&body, "host_not_allowed", "probe-1");
    let (status, _, body) = server.request("POST", "/mcp", &[("Content-Length", "99999999"), id[0]]);
    assert_eq!(status, 413);
    assert_envelope(&body, "payload_too_large", "probe-1");
    // At the exact boundary: a body of the limit reaches the MCP service (which
    // refuses it as JSON-RPC for its own reasons); one byte more is a 413.
    let mcp_headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"), id[0]];
    let limit = jacobian::http::MAX_BODY_BYTES;
    let (status, _, body) = server.request_with_body("POST", "/mcp", &mcp_headers, &vec![b' '; limit]);
    assert_ne!(status, 413, "{body}");
    let (status, _, body) = server.request_with_body("POST", "/mcp", &mcp_headers, &vec![b' '; limit + 1]);
    assert_eq!(status, 413);
    assert_envelope(&body, "payload_too_large", "probe-1");
    // rmcp's own refusal (a GET without an MCP session) is re-shaped too.
    let (status, _, body) = server.request("GET", "/mcp", &[("Accept", "text/event-stream"), id[0]]);
    assert!(status >= 400, "{status}");
    let envelope: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{body}"));
    assert_eq!(envelope["request_id"], "probe-1");

    let (status, headers, metrics) = server.request("GET", "/metrics", &[]);
    assert_eq!(status, 200);
    assert!(header(&headers, "content-type").unwrap().starts_with("text/plain"));
    assert!(metrics.contains("jacobian_process_up 1"));
    assert!(metrics.contains("jacobian_http_requests_total{method=\"GET\",route=\"/health\",status=\"200\"}"));
    assert!(metrics.contains("route=\"other\",status=\"404\""));
}

#[test]
fn the_official_python_sdk_drives_the_server_and_metrics_leak_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let log = dir.path().join("server.log");
    let server = Server::start_logging(&data, Some(&log));
    let secret = "QUASIGROUPZEBRA";
    let pack = dir.path().join("pack.json");
    let output = python_client("mcp_client.py", &server).arg(secret).arg(&pack).output().expect("python3");
    assert!(
        output.status.success(),
        "the Python client failed (pip install mcp): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("Session termination failed"), "closing the session warns: {stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).expect("the client's observations");
    assert_eq!(
        seen["tools"],
        serde_json::json!([
            "capability.describe",
            "capability.invoke",
            "workspace.open",
            "workspace.query",
            "workspace.write"
        ])
    );
    assert!(seen["resources"].as_array().unwrap().iter().any(|r| r == "capability://catalog"));
    assert!(seen["templates"].as_array().unwrap().iter().any(|r| r == "experiment://{id}/archive"));
    assert_eq!(seen["prompts"], serde_json::json!(["jacobian-check-evidence", "jacobian-discover"]));
    assert_eq!(seen["answer"], "UNSAT");
    assert_eq!((seen["verification"].as_str(), seen["assurance"].as_str()), (Some("VERIFIED"), Some("VERIFIED")));
    assert_eq!(seen["connected_graphs_on_9"], 261080);
    let progress = seen["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "a long invocation reports progress");
    assert_eq!(seen["experiments"].as_array().unwrap().len(), 1, "one experiment per MCP session: {seen}");
    let experiment = seen["experiments"][0].as_str().unwrap().to_owned();
    assert_eq!(seen["experiment"]["invocations"].as_array().unwrap().len(), 5);
    assert_eq!(seen["accounting_total"]["invocations"], 5);
    assert_eq!(seen["archive"]["episodes"], 5);
    for (name, path) in [
        ("unknown_field", "experimnet"),
        ("wrong_type", "budget.fuel"),
        ("missing", "base_revision"),
        ("describe_limit", "limit"),
    ] {
        let bad = &seen["bad_arguments"][name];
        assert_eq!(
            (&bad["is_error"], &bad["code"], &bad["stage"], &bad["path"]),
            (&json!(true), &json!("INVALID_REQUEST"), &json!("REQUEST"), &json!(path)),
            "{name}: {bad}"
        );
        assert!(bad["text"].as_str().is_some_and(|t| t.contains(path)), "{name}: a text-only client reads it: {bad}");
    }

    // Metrics after the run: counted, but no question text, ids or paths.
    let (_, _, metrics) = server.request("GET", "/metrics", &[("X-Request-ID", "scrape-me-123")]);
    assert!(metrics.contains("jacobian_invocations_total{capability=\"sat.solve\",stop_reason=\"COMPLETED\"} 1"));
    assert!(metrics.contains("jacobian_checker_verdicts_total{status=\"VERIFIED\"} 1"));
    assert!(metrics.contains("route=\"/mcp\""));
    for leak in
        [secret, experiment.as_str(), "exp-", "req-", "scrape-me", "artifact://", "sha256", data.to_str().unwrap()]
    {
        assert!(!metrics.contains(leak), "metrics contain {leak:?}:\n{metrics}");
    }

    // Structured logs: JSON lines binding the request id, capability id and component digest.
    drop(server);
    let logs = std::fs::read_to_string(&log).unwrap();
    let call = logs
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|entry| entry["fields"]["message"] == "call finished" && entry["span"]["capability_id"] == "sat.solve")
        .unwrap_or_else(|| panic!("no JSON log line for the sat.solve call:\n{logs}"));
    assert!(call["span"]["component"].as_str().unwrap().starts_with("sha256:"), "{call}");
    let invoke_span = call["spans"].as_array().unwrap().iter().find(|s| s["name"] == "invoke").expect("invoke span");
    assert!(invoke_span["request_id"].as_str().unwrap().starts_with("req-"), "{call}");

    // The archive the client downloaded replays byte-identically offline.
    let replay = Command::new(BIN).arg("replay").arg(&pack).output().unwrap();
    let report: Value = serde_json::from_slice(&replay.stdout).expect("replay report");
    assert!(replay.status.success(), "{report}");
    assert_eq!(report["identical"], true);
    assert_eq!(report["replayed"], 5);
}

#[test]
fn sigterm_drains_an_in_flight_invocation_before_stopping() {
    let dir = tempfile::tempdir().unwrap();
    // A window only a hang outlasts: on a loaded machine the call alone can take 10 s.
    let mut server = Server::start_with(dir.path(), None, &["--drain-seconds", "300"]);
    let mut client = python_client("drain_client.py", &server)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut lines = BufReader::new(client.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().expect("a line").unwrap(), "started");
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    // The call in flight when the signal arrived still answers in full.
    let Some(Ok(answer)) = lines.next() else {
        let mut stderr = String::new();
        let _ = std::io::Read::read_to_string(&mut client.stderr.take().unwrap(), &mut stderr);
        panic!("no answer for the drained call; the client said: {stderr}");
    };
    let output: Value = serde_json::from_str(&answer).unwrap_or_else(|_| panic!("{answer}"));
    assert_eq!(output["count"], 274668);
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");
    let _ = client.wait();
}

#[test]
fn an_mcp_cancellation_interrupts_the_guest_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data);
    let artifacts = || std::fs::read_dir(data.join("artifacts")).map(|d| d.count()).unwrap_or(0);
    let before = artifacts();
    let output = python_client("cancel_client.py", &server).output().expect("python3");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let seen: Value = serde_json::from_slice(&output.stdout).expect("observations");
    let accounting = &seen["accounting"];
    assert_eq!(accounting["by_stop_reason"]["CANCELLED"], 1, "{accounting}");
    let cancelled = accounting["invocations"].as_array().unwrap().iter().find(|r| r["stop_reason"] == "CANCELLED");
    let cancelled = cancelled.expect("the cancelled invocation is recorded");
    assert!(cancelled["episode"].is_null(), "no episode for a cancelled call");
    assert!(cancelled["fuel"].as_u64().unwrap() < 11_000_000_000, "interrupted before finishing: {cancelled}");
    // The cancelled enumeration wrote no artifact: only the CNF and the later order-5 enumeration.
    assert_eq!(artifacts(), before + 2);
    assert_eq!(seen["after"]["count"], 34, "the server keeps serving");
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    assert_eq!(server.request("GET", "/health", &[]).0, 200);
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn a_client_that_disconnects_mid_call_cancels_it_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data);
    let artifacts = || std::fs::read_dir(data.join("artifacts")).map(|d| d.count()).unwrap_or(0);
    let before = artifacts();
    let mcp = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "disconnect", "version": "0"}}});
    let (status, headers, _) = server.request_with_body("POST", "/mcp", &mcp, initialize.to_string().as_bytes());
    assert_eq!(status, 200);
    let session = header(&headers, "mcp-session-id").expect("a session").to_owned();
    let with_session = [mcp[0], mcp[1], ("Mcp-Session-Id", session.as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    server.request_with_body("POST", "/mcp", &with_session, initialized.as_bytes());
    // A call of about a second (all graphs on 9 vertices), and the client goes away.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capability.invoke",
        "arguments": {"capability_id": "graph.enumerate.nonisomorphic", "input": {"order": 9, "family": "all"}}}})
    .to_string();
    let mut stream = TcpStream::connect(&server.addr).expect("connect");
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", server.addr, call.len());
    for (name, value) in with_session {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    stream.write_all(format!("{head}\r\n{call}").as_bytes()).expect("send");
    // The server has taken the call when it answers with the head of its event stream.
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("the response head");
    assert!(status_line.starts_with("HTTP/1.1 200"), "{status_line}");
    drop((reader, stream));
    // The guest is interrupted: the invocation ends CANCELLED, not COMPLETED.
    let metric = |stop: &str| {
        format!("jacobian_invocations_total{{capability=\"graph.enumerate.nonisomorphic\",stop_reason=\"{stop}\"}} 1")
    };
    // The invocation is counted when it ends: wait for that event.
    let metrics = loop {
        let (_, _, metrics) = server.request("GET", "/metrics", &[]);
        if metrics.contains("graph.enumerate.nonisomorphic") {
            break metrics;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(metrics.contains(&metric("CANCELLED")), "{metrics}");
    assert!(!metrics.contains(&metric("COMPLETED")), "{metrics}");
    assert_eq!(artifacts(), before, "nothing stored for the abandoned call");
    assert_eq!(server.request("GET", "/health", &[]).0, 200);
}

/// Sixteen `initialize`s that all reach the server before any of them has
/// its session (each holds back its body's last byte until all are in) open
/// exactly as many sessions as the cap allows; the others get the typed 503.
#[test]
fn concurrent_initializes_never_exceed_the_session_cap() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(dir.path(), None, &["--max-sessions", "3", "--max-in-flight", "64"]);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "race", "version": "0"}}})
    .to_string();
    let mut streams: Vec<TcpStream> = (0..16)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.addr).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
                server.addr,
                initialize.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(&initialize.as_bytes()[..initialize.len() - 1]).unwrap();
            stream
        })
        .collect();
    // Every request has passed the server's first check of the cap by now.
    std::thread::sleep(Duration::from_millis(300));
    for stream in &mut streams {
        stream.write_all(&initialize.as_bytes()[initialize.len() - 1..]).unwrap();
    }
    let statuses: Vec<String> = streams
        .into_iter()
        .map(|mut stream| {
            let mut raw = Vec::new();
            stream.read_to_end(&mut raw).unwrap();
            String::from_utf8_lossy(&raw).split(' ').nth(1).unwrap_or("none").to_owned()
        })
        .collect();
    let opened = statuses.iter().filter(|s| *s == "200").count();
    let refused = statuses.iter().filter(|s| *s == "503").count();
    assert_eq!((opened, refused), (3, 13), "{statuses:?}");
}

/// The HTTP edge's own bounds: a browser Origin it does not serve, MCP
/// sessions and requests in flight beyond their caps, and clients too slow to
/// send their headers or body each get a typed answer, while the server keeps
/// answering an honest client.
#[test]
fn origins_sessions_requests_in_flight_and_slow_clients_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--max-connections",
        "4",
        "--max-unproven-connections",
        "4",
        "--max-sessions",
        "2",
        "--max-in-flight",
        "2",
        "--client-timeout-seconds",
        "3",
    ];
    let server = Server::start_with(dir.path(), None, &args);
    let id = [("x-request-id", "bounds")];
    // Origin: a page from elsewhere is refused; the server's own origin is served.
    let (status, _, body) =
        server.request("GET", "/health", &[("x-request-id", "bounds"), ("origin", "http://evil.example")]);
    assert_eq!(status, 403);
    assert_envelope(&body, "host_not_allowed", "bounds");
    let own = format!("http://{}", server.addr);
    assert_eq!(server.request("GET", "/health", &[("origin", own.as_str())]).0, 200);

    // Sessions: two initialize, the third is refused until one closes.
    let mcp = [("content-type", "application/json"), ("accept", "application/json, text/event-stream"), id[0]];
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bounds", "version": "0"}}})
    .to_string();
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let (status, headers, _) = server.request_with_body("POST", "/mcp", &mcp, initialize.as_bytes());
        assert_eq!(status, 200);
        sessions.push(header(&headers, "mcp-session-id").expect("a session").to_owned());
    }
    let (status, _, body) = server.request_with_body("POST", "/mcp", &mcp, initialize.as_bytes());
    assert_eq!(status, 503, "{body}");
    assert_envelope(&body, "unavailable", "bounds");
    assert!(body.contains("limit of 2 MCP sessions"), "{body}");
    let close = [("mcp-session-id", sessions[0].as_str())];
    // Closing a session is plain success (clients warn on anything but 200 or 204).
    assert_eq!(server.request("DELETE", "/mcp", &close).0, 204);
    assert_eq!(server.request_with_body("POST", "/mcp", &mcp, initialize.as_bytes()).0, 200, "room again");

    // A body that never arrives holds its place in flight until the client timeout, then gets a 408.
    let stall = || {
        let mut stream = TcpStream::connect(&server.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let head = format!("POST /nowhere HTTP/1.1\r\nHost: {}\r\nContent-Length: 100\r\n\r\n0123456789", server.addr);
        stream.write_all(head.as_bytes()).unwrap();
        stream
    };
    let (mut first, mut second) = (stall(), stall());
    // Both stalled requests hold their places (polled: the server reaches them when it does).
    let body = (0..40)
        .find_map(|_| {
            let (status, _, body) = server.request("POST", "/nowhere", &id);
            if status == 503 {
                return Some(body);
            }
            std::thread::sleep(Duration::from_millis(25));
            None
        })
        .expect("two requests in flight leave no room");
    assert_envelope(&body, "unavailable", "bounds");
    assert_eq!(server.request("GET", "/health", &id).0, 200, "liveness is not a request in flight");
    for stream in [&mut first, &mut second] {
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("did not arrive within 3000 ms"), "{answer}");
    }

    // Slow loris: connections that never finish their headers are unproven, in a pool of four of
    // their own: eight of them hold nothing an honest client needs. Each newer one closes the
    // oldest, the honest request is answered at once (it made room the same way), and every loris
    // is closed unserved, at the latest when its 2 s to be proven are up.
    let lorises: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.addr).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            stream.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let waited = std::time::Instant::now();
    assert_eq!(server.request("GET", "/health", &id).0, 200, "answered beside the slow connections");
    assert!(waited.elapsed() < Duration::from_secs(2), "it waited for no loris: {:?}", waited.elapsed());
    for mut stream in lorises {
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        let text = String::from_utf8_lossy(&rest);
        assert!(text.is_empty() || text.starts_with("HTTP/1.1 408"), "closed, not served: {text}");
    }

    // A kept-alive connection left idle after its answer holds a connection as a loris would:
    // it is closed at the client timeout too (clients open a new one).
    let mut idle = TcpStream::connect(&server.addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let answered = std::time::Instant::now();
    let mut all = Vec::new();
    let _ = idle.read_to_end(&mut all);
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 200"), "answered, then closed: {text}");
    assert!(answered.elapsed() >= Duration::from_secs(2), "closed after {:?}", answered.elapsed());
}
