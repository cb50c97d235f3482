//! MCP over stdio and HTTP: pipelined calls, several hosts, authentication, the transport floor.

use crate::*;

/// Pipelined `capability.invoke` over stdio: one client keeps `window`
/// requests in flight (a window below the server's queue, so no call is
/// refused with OVERLOADED) until `n` have been answered; invokes per second.
pub(crate) fn mcp_pipelined(dir: &std::path::Path, n: usize, window: usize) -> f64 {
    use std::io::{BufRead as _, Write as _};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jacobian"))
        .arg("--data-dir")
        .arg(dir)
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn jacobian serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
    writeln!(stdin, "{initialize}").expect("write");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("initialize answer");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).expect("write");
    let request = |id: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "capability.invoke",
            "arguments": {"capability_id": "test.echo.message", "input": {"message": "hi"}}}})
        .to_string()
    };
    let start = Instant::now();
    let (mut sent, mut answered) = (0, 0);
    while answered < n {
        while sent < n && sent - answered < window {
            sent += 1;
            writeln!(stdin, "{}", request(sent)).expect("write");
        }
        stdin.flush().expect("flush");
        line.clear();
        if stdout.read_line(&mut line).expect("read") == 0 {
            break;
        }
        if line.contains("\"result\"") {
            assert!(line.contains("\"isError\":false"), "a pipelined call failed: {}", &line[..line.len().min(300)]);
            answered += 1;
        }
    }
    let elapsed = start.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(answered, n, "every pipelined call answered");
    n as f64 / elapsed.as_secs_f64()
}

/// Several hosts on one store: 16 clients spread over the hosts, each with
/// its own keep-alive session; invokes of the echo capability, then
/// sequential workspace writes (one workspace per client). Returns
/// (invokes/s, writes/s).
pub(crate) fn hosts_throughput(store: Option<&str>, hosts: usize, tag: &str) -> (f64, f64) {
    const CLIENTS: usize = 16;
    let dirs: Vec<tempfile::TempDir> = (0..hosts).map(|_| tempfile::tempdir().expect("temp dir")).collect();
    let args: Vec<&str> = store.map_or(vec![], |url| vec!["--store", url]);
    // The echo component, installed once in the shared state.
    let config = |dir: &std::path::Path| RuntimeConfig {
        store: store.map_or(StoreConfig::DataDir, |url| StoreConfig::Postgres(url.to_owned())),
        ..RuntimeConfig::new(dir.to_path_buf())
    };
    Runtime::open(config(dirs[0].path())).expect("runtime").install(&echo_bytes(), None).expect("install echo");
    let mut children = Vec::new();
    let addrs: Vec<String> = std::thread::scope(|scope| {
        let starting: Vec<_> = dirs.iter().map(|dir| scope.spawn(|| start_host(dir.path(), &args))).collect();
        starting
            .into_iter()
            .map(|s| {
                let (child, ready) = s.join().expect("host");
                children.push(child);
                ready.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned()
            })
            .collect()
    });
    let echo = json!({"capability_id": "test.echo.message", "input": {"message": "hi"}});
    let rate = |work: &(dyn Fn(&mut HttpClient, usize) -> usize + Sync)| {
        let start = Instant::now();
        let done: usize = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..CLIENTS)
                .map(|c| {
                    let addr = &addrs[c % hosts];
                    scope.spawn(move || work(&mut HttpClient::connect(addr), c))
                })
                .collect();
            workers.into_iter().map(|w| w.join().expect("client")).sum()
        });
        done as f64 / start.elapsed().as_secs_f64()
    };
    let invokes = rate(&|client, _| {
        for _ in 0..250 {
            let (answer, is_error) = client.call("capability.invoke", echo.clone());
            assert!(!is_error, "{answer}");
        }
        250
    });
    let writes = rate(&|client, c| {
        let (opened, _) = client.call(
            "workspace.open",
            json!({"idempotency_key": format!("{tag}-{c}"), "title": "bench", "statement": ""}),
        );
        let ws = opened["workspace_id"].as_str().expect("workspace").to_owned();
        for i in 0..100 {
            let (answer, is_error) = client.call(
                "workspace.write",
                json!({"workspace_id": ws, "base_revision": format!("rev-{i}"), "idempotency_key": format!("w{i}"),
                       "entries": [{"type": "finding", "kind": "CLAIM", "title": format!("finding {i}")}]}),
            );
            assert!(!is_error, "{answer}");
        }
        100
    });
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    (invokes, writes)
}

/// One SQLite host beside one, two and four hosts on one PostgreSQL
/// ($JACOBIAN_BENCH_POSTGRES or $JACOBIAN_TEST_POSTGRES: a URL whose role may
/// create databases; scripts/postgres.sh starts a server and prints one).
pub(crate) fn scaleout_figures() {
    let Some(admin) =
        std::env::var("JACOBIAN_BENCH_POSTGRES").or_else(|_| std::env::var("JACOBIAN_TEST_POSTGRES")).ok()
    else {
        println!(
            "scale-out: NOT RUN (set JACOBIAN_BENCH_POSTGRES; scripts/postgres.sh starts a server and prints a URL)"
        );
        return;
    };
    let (invokes, writes) = hosts_throughput(None, 1, "sqlite");
    println!("scale-out, 16 HTTP clients: SQLite, 1 host: {invokes:.0} invokes/s, {writes:.0} workspace writes/s");
    let server = jacobian::store::postgres::Postgres::connect(&admin).expect("the benchmark PostgreSQL server");
    for hosts in [1, 2, 4] {
        let name = format!("jb_{}_{hosts}", std::process::id());
        server.batch_execute(&format!("DROP DATABASE IF EXISTS {name}")).expect("drop database");
        server.batch_execute(&format!("CREATE DATABASE {name}")).expect("create database");
        let url = jacobian::store::postgres::with_database(&admin, &name);
        let (pg_invokes, pg_writes) = hosts_throughput(Some(&url), hosts, &name);
        println!(
            "scale-out, 16 HTTP clients: PostgreSQL, {hosts} host(s): {pg_invokes:.0} invokes/s ({:.2}x SQLite), \
             {pg_writes:.0} workspace writes/s ({:.2}x SQLite)",
            pg_invokes / invokes,
            pg_writes / writes
        );
        server.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).expect("drop database");
    }
}

/// `serve --http`: trivial invokes from concurrent clients (one keep-alive
/// connection and session each), and resident memory per idle session.
/// `clients` concurrent keep-alive clients (sessions), each sending
/// `4000 / clients` echo invokes with `bearer`: (invokes/s, p50 µs, p99 µs).
pub(crate) fn http_throughput(addr: &str, clients: usize, bearer: Option<&str>) -> (f64, f64, f64) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capability.invoke",
        "arguments": {"capability_id": "test.echo.message", "input": {"message": "hi"}}}})
    .to_string();
    let per_client = 4000 / clients;
    let start = Instant::now();
    let samples: Vec<Duration> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..clients)
            .map(|_| {
                scope.spawn(|| {
                    let mut client = HttpClient::connect_with(addr, bearer);
                    (0..per_client)
                        .map(|_| {
                            let started = Instant::now();
                            let answer = client.post(&body);
                            assert!(answer.contains("\"isError\":false"), "{answer}");
                            started.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("client")).collect()
    });
    let rate = samples.len() as f64 / start.elapsed().as_secs_f64();
    let (p50, p99) = percentiles(samples);
    (rate, p50, p99)
}

/// An RS256 key made by `openssl` (PKCS#1 DER), as an authorization server
/// signs access tokens, and its public JWK.
pub(crate) fn rsa_signing_key(dir: &std::path::Path) -> (jsonwebtoken::EncodingKey, jsonwebtoken::jwk::Jwk) {
    let pem = dir.join("rsa.pem");
    let der = dir.join("rsa.der");
    let run = |args: &[&str]| {
        let status = std::process::Command::new("openssl").args(args).status().expect("openssl");
        assert!(status.success(), "openssl {args:?}");
    };
    run(&["genpkey", "-quiet", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", pem.to_str().unwrap()]);
    run(&["rsa", "-in", pem.to_str().unwrap(), "-traditional", "-outform", "DER", "-out", der.to_str().unwrap()]);
    let key = jsonwebtoken::EncodingKey::from_rsa_der(&std::fs::read(der).expect("key"));
    let mut jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, jsonwebtoken::Algorithm::RS256).expect("jwk");
    jwk.common.key_id = Some("bench".into());
    (key, jwk)
}

/// The HTTP section's authenticated runs: 16 clients without a token, with
/// an API token and with an RS256 JWT, each against its own server on the
/// same data directory, in one run, twice in turn.
pub(crate) fn http_auth_figures(dir: &std::path::Path) {
    let keys = tempfile::tempdir().expect("temp dir");
    let created = std::process::Command::new(env!("CARGO_BIN_EXE_jacobian"))
        .arg("--data-dir")
        .arg(dir)
        .args(["tokens", "create", "--tenant", "bench", "--scope", "invoke"])
        .output()
        .expect("tokens create");
    let created: serde_json::Value = serde_json::from_slice(&created.stdout).expect("a token");
    let api_token = created["token"].as_str().expect("token").to_owned();
    let (key, jwk) = rsa_signing_key(keys.path());
    let jwks = keys.path().join("jwks.json");
    std::fs::write(&jwks, json!({"keys": [jwk]}).to_string()).expect("jwks");
    let config = keys.path().join("jacobian.toml");
    let (issuer, resource) = ("https://idp.bench", "http://127.0.0.1/mcp");
    std::fs::write(
        &config,
        format!(
            "[auth]\nresource = \"{resource}\"\napi_tokens = true\nissuer = \"{issuer}\"\njwks_file = \"{}\"\n",
            jwks.display()
        ),
    )
    .expect("config");
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({"iss": issuer, "aud": resource, "sub": "bench", "scope": "jacobian:invoke", "exp": now + 3600});
    let header =
        jsonwebtoken::Header { kid: Some("bench".into()), ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256) };
    let jwt = jsonwebtoken::encode(&header, &claims, &key).expect("sign");
    let config_args = ["--config", config.to_str().unwrap()];
    for round in 1..=2 {
        let mut figures = Vec::new();
        for (name, args, bearer) in [
            ("no authentication", &[][..], None),
            ("API token", &config_args[..], Some(api_token.as_str())),
            ("JWT (RS256)", &config_args[..], Some(jwt.as_str())),
        ] {
            let (mut child, ready) = start_host(dir, args);
            let addr = ready.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned();
            figures.push((name, http_throughput(&addr, 16, bearer)));
            let _ = child.kill();
            let _ = child.wait();
        }
        let base = figures[0].1.0;
        let line: Vec<String> = figures
            .iter()
            .map(|(name, (rate, p50, p99))| {
                format!(
                    "{name} {rate:.0} invokes/s (p50 {p50:.0} µs, p99 {p99:.0} µs, {:.1}% of unauthenticated)",
                    rate / base * 100.0
                )
            })
            .collect();
        println!("HTTP, 16 clients, authentication round {round}: {}", line.join("; "));
    }
}

pub(crate) fn http_figures(dir: &std::path::Path) {
    let (mut child, ready) = start_http_server(dir);
    let addr = ready.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned();
    for clients in [1, 4, 16, 64] {
        let (rate, p50, p99) = http_throughput(&addr, clients, None);
        println!(
            "HTTP, {clients} concurrent clients: {rate:.0} invokes/s ({} calls), p50 {p50:.0} µs, p99 {p99:.0} µs",
            4000 / clients * clients
        );
    }
    let before = resident_kib(child.id());
    let idle: Vec<HttpClient> = (0..500).map(|_| HttpClient::connect(&addr)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let after = resident_kib(child.id());
    println!(
        "HTTP idle sessions: {} open, server resident {} MiB -> {} MiB, {:.1} KiB per idle connection and session",
        idle.len(),
        before / 1024,
        after / 1024,
        (after.saturating_sub(before)) as f64 / idle.len() as f64
    );
    drop(idle);
    let _ = child.kill();
    let _ = child.wait();
}

/// A trivial invoke against the MCP transport's own floor, side by side in
/// one run: the no-op rmcp server (`support/floor.rs`) and `jacobian serve`
/// in alternating rounds under the same outside-style clients (rmcp's client
/// over stdio; the keep-alive HTTP client over streamable HTTP), each round
/// a fresh server: ready time (exec to `initialize` and `tools/list`
/// answered), sequential p50 and p99, and throughput with 16 calls in flight.
/// Prints each round and the ratios (targets: p50 ≤ 1.3×, p99 ≤ 1.5×,
/// throughput ≥ 0.7× the floor's; ready ≤ 50 ms), and what the invariants
/// alone cost a call (a fresh Store's instantiate + call, one commit at the
/// host's durability) against what the p50 target leaves for an invocation.
pub(crate) fn floor_figures() {
    const ROUNDS: usize = 3;
    let dir = tempfile::tempdir().expect("temp dir");
    drop(runtime_with_echo(dir.path()));
    let servers = [floor::floor_stdio(), floor::Stdio { name: "jacobian", command: jacobian_stdio(dir.path()) }];
    let mut ratios: Vec<[f64; 3]> = Vec::new();
    let mut ready: Vec<f64> = Vec::new();
    let mut floors: Vec<f64> = Vec::new();
    for round in 1..=ROUNDS {
        let [floor, ours] = [0, 1].map(|i| floor::stdio_round(&servers[i], &echo_arguments(), 3000, 4000));
        for (name, r) in [("floor", &floor), ("jacobian", &ours)] {
            println!(
                "floor: stdio round {round}: {name:8} ready {:.1} ms, sequential p50 {:.0} µs p99 {:.0} µs (server CPU {:.0} µs a call), 16 in flight {:.0}/s",
                r.ready.as_secs_f64() * 1e3,
                r.p50,
                r.p99,
                r.cpu_per_call,
                r.in_flight
            );
        }
        ratios.push([ours.p50 / floor.p50, ours.p99 / floor.p99, ours.in_flight / floor.in_flight]);
        floors.push(floor.p50);
        ready.push(ours.ready.as_secs_f64() * 1e3);
    }
    let range = |k: usize, rows: &[[f64; 3]]| {
        let (lo, hi) = rows.iter().map(|r| r[k]).fold((f64::INFINITY, 0.0_f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
        format!("{lo:.2}–{hi:.2}×")
    };
    println!(
        "floor: stdio, jacobian / floor over {ROUNDS} rounds: p50 {} (target ≤ 1.3×), p99 {} (≤ 1.5×), 16 in flight {} (≥ 0.7×)",
        range(0, &ratios),
        range(1, &ratios),
        range(2, &ratios)
    );
    let (lo, hi) = ready.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    println!(
        "floor: stdio, jacobian ready (exec to initialize + tools/list answered) {lo:.1}–{hi:.1} ms (target ≤ 50 ms)"
    );
    // What the invariants alone cost a call, measured beside the floor: a
    // fresh Store's instantiate + call, and one commit at the host's
    // durability (the cheapest SQLite allows). The p50 target leaves 0.3 ×
    // the floor's p50 above it.
    let (store50, _) = instantiate_and_call(true, 3000);
    let (commit50, _) = floor::bare_commit(3000);
    let floor50 = floors.iter().copied().fold(0.0_f64, f64::max);
    println!(
        "floor: the invariants' own cost a call: a fresh Store's instantiate + call p50 {store50:.1} µs and the cheapest \
         SQLite commit of one row at the host's durability (WAL, synchronous=NORMAL) p50 {commit50:.1} µs, together {:.1} µs of the {:.1} µs \
         the p50 target leaves for all of an invocation's work (0.3 × the floor's slowest p50, {floor50:.0} µs)",
        store50 + commit50,
        0.3 * floor50
    );
    let mut http: Vec<[f64; 3]> = Vec::new();
    for round in 1..=ROUNDS {
        let mut measured = Vec::new();
        for name in ["floor", "jacobian"] {
            let (mut child, line) = if name == "floor" { floor::floor_http() } else { start_http_server(dir.path()) };
            let addr = line.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned();
            let (_, p50, p99) = http_throughput(&addr, 1, None);
            let (rate, _, _) = http_throughput(&addr, 16, None);
            println!(
                "floor: HTTP round {round}: {name:8} sequential p50 {p50:.0} µs p99 {p99:.0} µs, 16 clients {rate:.0}/s"
            );
            measured.push((p50, p99, rate));
            let _ = child.kill();
            let _ = child.wait();
        }
        let (f, o) = (measured[0], measured[1]);
        http.push([o.0 / f.0, o.1 / f.1, o.2 / f.2]);
    }
    println!(
        "floor: HTTP, jacobian / floor over {ROUNDS} rounds: p50 {} (target ≤ 1.3×), p99 {} (≤ 1.5×), 16 clients {} (≥ 0.7×)",
        range(0, &http),
        range(1, &http),
        range(2, &http)
    );
}
