//! A minimal MCP streamable-HTTP client: one keep-alive connection, one
//! session, raw HTTP/1.1 (the tests and the benchmark share it; the official
//! Python SDK is the independent client, see http.rs).

#![allow(dead_code)]

use serde_json::{Value, json};

pub struct HttpClient {
    stream: std::io::BufReader<std::net::TcpStream>,
    addr: String,
    session: Option<String>,
    /// Sent as `Authorization: Bearer …` with every request.
    bearer: Option<String>,
    /// Whether a request has been answered on this connection already.
    reused: bool,
    /// Whether the last answer came chunked (streamed) rather than with its length.
    pub chunked: bool,
}

impl HttpClient {
    /// Connect and initialize one MCP session.
    pub fn connect(addr: &str) -> HttpClient {
        HttpClient::connect_with(addr, None)
    }

    /// Connect with a bearer token and initialize one MCP session.
    pub fn connect_with(addr: &str, bearer: Option<&str>) -> HttpClient {
        let mut client = HttpClient::connect_raw(addr, bearer);
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-http", "version": "0"}}});
        client.post(&initialize.to_string());
        client.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        client
    }

    /// Connect without initializing a session.
    pub fn connect_raw(addr: &str, bearer: Option<&str>) -> HttpClient {
        let stream = std::net::TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        // A stuck server fails the caller instead of hanging it.
        stream.set_read_timeout(Some(std::time::Duration::from_secs(120))).expect("read timeout");
        HttpClient {
            stream: std::io::BufReader::new(stream),
            addr: addr.to_owned(),
            session: None,
            bearer: bearer.map(str::to_owned),
            reused: false,
            chunked: false,
        }
    }

    /// Continue `session` (an `Mcp-Session-Id`) on another connection,
    /// possibly to another host, without initializing again.
    pub fn resume(addr: &str, session: &str) -> HttpClient {
        let mut client = HttpClient::connect_raw(addr, None);
        client.session = Some(session.to_owned());
        client
    }

    /// Send `token` as the bearer token from now on.
    pub fn set_bearer(&mut self, token: &str) {
        self.bearer = Some(token.to_owned());
    }

    /// This client's session id, once initialized.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// POST one JSON-RPC message; the response body (SSE or JSON), whole.
    pub fn post(&mut self, body: &str) -> String {
        let (status, answer) = self.exchange(body);
        assert!((200..300).contains(&status), "HTTP {status}: {answer}");
        answer
    }

    /// POST one JSON-RPC message: the status and the response body, whole.
    pub fn exchange(&mut self, body: &str) -> (u16, String) {
        use std::io::{BufRead as _, Read as _};
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        if let Some(session) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n"));
        }
        if let Some(token) = &self.bearer {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        head.push_str("\r\n");
        let mut line = String::new();
        if let Err(error) = self.send(&head, body, &mut line) {
            // The server closes a connection left idle longer than its client
            // timeout (hyper's header-read timeout runs between requests);
            // like any HTTP client, open a new one and send again: the
            // closed connection never read this request.
            assert!(self.reused, "send on a new connection: {error}");
            let session = self.session.take();
            *self = HttpClient::connect_raw(&self.addr, self.bearer.as_deref());
            self.session = session;
            line.clear();
            self.send(&head, body, &mut line).expect("send on a new connection");
        }
        self.reused = true;
        let (mut length, mut chunked) = (None, false);
        let status: u16 = line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{line}"));
        loop {
            line.clear();
            self.stream.read_line(&mut line).expect("header");
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').expect("header");
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.contains("chunked"),
                "mcp-session-id" => self.session = Some(value.trim().to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.stream.read_line(&mut line).expect("chunk size");
                let size = usize::from_str_radix(line.trim(), 16).expect("chunk size");
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).expect("chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(length) = length {
            body.resize(length, 0);
            self.stream.read_exact(&mut body).expect("body");
        }
        self.chunked = chunked;
        (status, String::from_utf8(body).expect("utf-8"))
    }
}

impl HttpClient {
    /// Write one request and read its status line into `line`; an error, or
    /// the connection closed before any answer, is `Err`.
    fn send(&mut self, head: &str, body: &str, line: &mut String) -> std::io::Result<()> {
        use std::io::{BufRead as _, Write as _};
        let stream = self.stream.get_mut();
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;
        match self.stream.read_line(line)? {
            0 => Err(std::io::ErrorKind::UnexpectedEof.into()),
            _ => Ok(()),
        }
    }

    /// One JSON-RPC request; its `result` (panics on a JSON-RPC error).
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let answer = self.post(&body);
        let message: Value = answer
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .chain(serde_json::from_str::<Value>(&answer).ok())
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to request {id} in {answer:?}"));
        assert!(message.get("error").is_none(), "{method}: {message}");
        message["result"].clone()
    }

    /// `tools/call`: (structured content, is_error).
    pub fn call(&mut self, tool: &str, arguments: Value) -> (Value, bool) {
        let result = self.request(1, "tools/call", json!({"name": tool, "arguments": arguments}));
        (result["structuredContent"].clone(), result["isError"].as_bool().unwrap_or(false))
    }

    /// `resources/read`: the first content's text.
    pub fn read_resource(&mut self, uri: &str) -> String {
        let result = self.request(2, "resources/read", json!({"uri": uri}));
        result["contents"][0]["text"].as_str().unwrap_or_else(|| panic!("no text at {uri}: {result}")).to_owned()
    }
}

/// Resident memory of a process, in KiB (`/proc/<pid>/status`).
pub fn resident_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
