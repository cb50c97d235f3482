//! The MCP transport's floor: a no-op rmcp server that answers
//! `capability.invoke` with a two-field JSON result and does nothing else,
//! run by this benchmark binary itself (re-executed with `FLOOR_ENV` set)
//! over stdio or streamable HTTP, beside `jacobian serve` under the same
//! outside-style clients: what a trivial invoke costs above the protocol.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

/// Set to `stdio` or `http` in a re-executed benchmark binary: it serves the floor instead.
pub const FLOOR_ENV: &str = "JACOBIAN_BENCH_FLOOR";

/// The no-op server: one tool, the same name as the runtime's.
#[derive(Clone)]
struct Noop;

impl ServerHandler for Noop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("floor", "0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object"}).as_object().cloned().unwrap_or_default();
        Ok(ListToolsResult::with_all_items(vec![Tool::new("capability.invoke", "does nothing", Arc::new(schema))]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::structured(json!({"status": "COMPLETED", "output": {"message": "hi"}})).into())
    }
}

/// Serve the floor when this process was started to (the value of
/// [`FLOOR_ENV`]), and exit; otherwise return.
pub fn serve_if_asked() {
    let Ok(transport) = std::env::var(FLOOR_ENV) else { return };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("tokio");
    rt.block_on(async {
        match transport.as_str() {
            "stdio" => {
                let running = Noop.serve((tokio::io::stdin(), tokio::io::stdout())).await.expect("serve");
                let _ = running.waiting().await;
            }
            _ => {
                use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
                use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
                let service = StreamableHttpService::new(
                    || Ok(Noop),
                    Arc::new(LocalSessionManager::default()),
                    StreamableHttpServerConfig::default(),
                );
                let router = axum::Router::new().route_service("/mcp", service);
                use axum::serve::ListenerExt as _;
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
                println!("listening on http://{}/mcp", listener.local_addr().expect("address"));
                // As `jacobian serve --http` does: without it every answer waits on Nagle's algorithm.
                let listener = listener.tap_io(|tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                axum::serve(listener, router).await.expect("serve");
            }
        }
    });
    std::process::exit(0);
}

/// One server under test over stdio: how to start it.
pub struct Stdio {
    pub name: &'static str,
    pub command: std::process::Command,
}

/// What one round measured over stdio.
pub struct StdioRound {
    /// From exec to `initialize` and `tools/list` answered.
    pub ready: Duration,
    /// Sequential round trips.
    pub p50: f64,
    pub p99: f64,
    /// Calls per second with 16 in flight on one session.
    pub in_flight: f64,
    /// The server's CPU time (user and system) per sequential call, in µs.
    pub cpu_per_call: f64,
}

/// A process's CPU time so far (user and system), from `/proc`.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the parenthesized command name; utime and stime are the 14th and 15th.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks: u64 = fields.get(11..13).map_or(0, |f| f.iter().filter_map(|t| t.parse::<u64>().ok()).sum());
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_micros(ticks * 1_000_000 / per_second)
}

/// Start the server, initialize, list tools, then `sequential` calls one at
/// a time and `parallel` calls 16 at a time, all with `arguments`.
pub fn stdio_round(server: &Stdio, arguments: &serde_json::Value, sequential: usize, parallel: usize) -> StdioRound {
    let rt = tokio::runtime::Runtime::new().expect("tokio");
    rt.block_on(async {
        let mut command = tokio::process::Command::from(clone_command(&server.command));
        command.stderr(std::process::Stdio::null());
        let arguments = arguments.as_object().cloned().expect("object arguments");
        let started = Instant::now();
        let child = rmcp::transport::TokioChildProcess::new(command).expect("spawn");
        let pid = child.id().expect("child pid");
        let client = ().serve(child).await.expect("initialize");
        let tools = client.list_all_tools().await.expect("tools/list");
        let ready = started.elapsed();
        assert!(tools.iter().any(|t| t.name == "capability.invoke"), "{}", server.name);
        let call = |client: rmcp::Peer<rmcp::RoleClient>, arguments: serde_json::Map<String, serde_json::Value>| async move {
            let started = Instant::now();
            let result = client
                .call_tool(CallToolRequestParams::new("capability.invoke").with_arguments(arguments))
                .await
                .expect("call");
            assert_eq!(result.is_error, Some(false));
            started.elapsed()
        };
        for _ in 0..100 {
            call(client.peer().clone(), arguments.clone()).await;
        }
        let mut samples = Vec::with_capacity(sequential);
        let cpu_before = cpu_time(pid);
        for _ in 0..sequential {
            samples.push(call(client.peer().clone(), arguments.clone()).await);
        }
        let cpu_per_call = (cpu_time(pid) - cpu_before).as_secs_f64() * 1e6 / sequential as f64;
        let (p50, p99) = super::percentiles(samples);
        let started = Instant::now();
        let workers: Vec<_> = (0..16)
            .map(|_| {
                let (peer, arguments) = (client.peer().clone(), arguments.clone());
                tokio::spawn(async move {
                    for _ in 0..parallel / 16 {
                        call(peer.clone(), arguments.clone()).await;
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.await.expect("worker");
        }
        let in_flight = (parallel / 16 * 16) as f64 / started.elapsed().as_secs_f64();
        client.cancel().await.expect("shutdown");
        StdioRound { ready, p50, p99, in_flight, cpu_per_call }
    })
}

/// A copy of a command (program, arguments, environment set on it).
pub fn clone_command(command: &std::process::Command) -> std::process::Command {
    let mut copy = std::process::Command::new(command.get_program());
    copy.args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => copy.env(key, value),
            None => copy.env_remove(key),
        };
    }
    copy
}

/// The floor over stdio: this benchmark binary, re-executed.
pub fn floor_stdio() -> Stdio {
    let mut command = std::process::Command::new(std::env::current_exe().expect("own path"));
    command.env(FLOOR_ENV, "stdio");
    Stdio { name: "floor", command }
}

/// The floor over HTTP, once it is listening: the child and its ready line.
pub fn floor_http() -> (std::process::Child, String) {
    until_ready(std::process::Command::new(std::env::current_exe().expect("own path")).env(FLOOR_ENV, "http"))
}

/// Start a server that prints one ready line on stdout; the child and that line.
pub fn until_ready(command: &mut std::process::Command) -> (std::process::Child, String) {
    use std::io::BufRead as _;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {:?}: {e}", command.get_program()));
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("ready line");
    (child, line)
}

/// The cheapest commit SQLite allows at the host's durability, as an
/// anchor: one row of an experiment line's size inserted into a one-B-tree
/// table of a WAL database with `synchronous=NORMAL` (as the host's episode
/// writes: no sync at commit), a cached statement, autocommit. p50 and p99
/// in µs over `iterations` commits.
pub fn bare_commit(iterations: usize) -> (f64, f64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = rusqlite::Connection::open(dir.path().join("bare.db")).expect("open");
    conn.pragma_update(None, "journal_mode", "WAL").expect("wal");
    conn.pragma_update(None, "synchronous", "NORMAL").expect("synchronous");
    conn.execute_batch("CREATE TABLE lines (experiment TEXT, ordinal INTEGER, line TEXT, PRIMARY KEY (experiment, ordinal)) WITHOUT ROWID")
        .expect("table");
    let line = "x".repeat(200);
    let insert = |ordinal: usize| {
        conn.prepare_cached("INSERT INTO lines VALUES ('default', ?1, ?2)")
            .and_then(|mut s| s.execute(rusqlite::params![ordinal as i64, line]))
            .expect("insert");
    };
    for ordinal in 0..200 {
        insert(ordinal);
    }
    let samples = (200..200 + iterations)
        .map(|ordinal| {
            let started = Instant::now();
            insert(ordinal);
            started.elapsed()
        })
        .collect();
    super::percentiles(samples)
}
