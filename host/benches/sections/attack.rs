//! One honest client beside eight attackers.

use crate::*;

/// One honest client's sequential invokes (the echo capability over HTTP),
/// alone and then while eight clients attack the same server, side by side
/// in one run: a checker of another role asked to verify a SAT certificate,
/// artifact fan-out past the reference limit, capability ids of 1 MiB, host
/// time that spends no fuel (stopped by the wall-clock ceiling), bulk memory
/// work, workspace growth, and slow-loris connections. Returns nothing; prints
/// the honest p50 / p99 alone and under attack, every honest call checked.
/// `tenants`: every client authenticates with an API token of its own
/// tenant, and the attackers' tenants are under quotas (60 invocations a
/// minute, one call at a time, 64 MiB stored) while the honest tenant has none.
pub(crate) fn attack_figures(tenants: bool) {
    let honest_calls: usize = std::env::var("BENCH_HONEST_CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(1500);
    let dir = tempfile::tempdir().expect("temp dir");
    let token = |tenant: &str| -> Option<String> {
        if !tenants {
            return None;
        }
        let created = std::process::Command::new(env!("CARGO_BIN_EXE_jacobian"))
            .arg("--data-dir")
            .arg(dir.path())
            .args(["tokens", "create", "--tenant", tenant, "--scope", "invoke", "--scope", "workspace"])
            .output()
            .expect("tokens create");
        let created: serde_json::Value = serde_json::from_slice(&created.stdout).expect("a token");
        Some(created["token"].as_str().expect("token").to_owned())
    };
    {
        let runtime = open(dir.path());
        let guest = |name: &str| {
            std::fs::read(PathBuf::from(jacobian::bundled::TEST_GUESTS_DIR).join(format!("jacobian_test_{name}.wasm")))
                .expect("test guest")
        };
        runtime.install(&echo_bytes(), None).expect("install echo");
        runtime.install(&guest("hostile"), None).expect("install hostile");
        let (checkers, _) = runtime.install(&guest("yes_checker"), None).expect("install yes-checker");
        runtime
            .update_policy(|p| {
                p.budgets.wall_ms = 1000;
                p.authorize("acme.lint", checkers.digest);
                if tenants {
                    use jacobian::quotas::Quota;
                    p.quotas.default = Quota {
                        invocations_per_minute: Some(60),
                        concurrent_calls: Some(1),
                        stored_bytes: Some(64 << 20),
                        ..Quota::default()
                    };
                    p.quotas.tenants.insert("honest".into(), Quota::default());
                }
            })
            .expect("policy");
    }
    let honest_token = token("honest");
    let attacker_tokens: Vec<Option<String>> = (0..8).map(|a| token(&format!("attacker-{a}"))).collect();
    let config = dir.path().join("jacobian.toml");
    std::fs::write(&config, "[auth]\nresource = \"http://127.0.0.1/mcp\"\napi_tokens = true\n").expect("config");
    let auth = ["--config", config.to_str().expect("a UTF-8 path")];
    let (mut child, ready) = start_host(dir.path(), if tenants { &auth[..] } else { &[] });
    let addr = ready.trim().trim_start_matches("listening on http://").trim_end_matches("/mcp").to_owned();
    let honest = |addr: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "capability.invoke",
            "arguments": {"capability_id": "test.echo.message", "input": {"message": "hi"}}}})
        .to_string();
        let mut client = HttpClient::connect_with(addr, honest_token.as_deref());
        (0..honest_calls)
            .map(|_| {
                let started = Instant::now();
                let answer = client.post(&body);
                assert!(answer.contains("\"isError\":false"), "an honest call failed: {answer}");
                started.elapsed()
            })
            .collect::<Vec<_>>()
    };
    let (alone50, alone99) = percentiles(honest(&addr));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let attacks = std::sync::atomic::AtomicUsize::new(0);
    let under_attack = std::thread::scope(|scope| {
        let only: Option<Vec<usize>> =
            std::env::var("BENCH_ATTACKERS").ok().map(|v| v.split(',').filter_map(|a| a.parse().ok()).collect());
        for attacker in (0..8).filter(|a| only.as_ref().is_none_or(|o| o.contains(a))) {
            let (addr, stop, attacks, attacker_tokens) = (&addr, &stop, &attacks, &attacker_tokens);
            scope.spawn(move || {
                let running = || !stop.load(std::sync::atomic::Ordering::Relaxed);
                let count = || attacks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if attacker == 7 {
                    jacobian::lanes::idle_class().expect("SCHED_IDLE");
                    // Slow loris: connections that never finish their headers.
                    while running() {
                        let mut streams: Vec<std::net::TcpStream> = (0..16)
                            .filter_map(|_| std::net::TcpStream::connect(addr).ok())
                            .collect();
                        for stream in &mut streams {
                            use std::io::Write as _;
                            let _ = stream.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Slow: ");
                        }
                        count();
                        std::thread::sleep(Duration::from_millis(500));
                    }
                    return;
                }
                let mut client = HttpClient::connect_with(addr, attacker_tokens[attacker].as_deref());
                let cnf = client.call("capability.invoke", json!({"capability_id": "sat.cnf.construct",
                    "input": {"dimacs": "p cnf 2 1\n1 2 0\n"}})).0["artifacts"][0]["uri"].as_str().unwrap_or("").to_owned();
                let (bogus, _) = client.call("capability.invoke", json!({"capability_id": "sat.certificate.construct",
                    "input": {"cnf": cnf, "lrat": "2 0 1 0\n"}}));
                let certificate = bogus["artifacts"][0]["uri"].as_str().unwrap_or("").to_owned();
                let workspace = client
                    .call("workspace.open", json!({"idempotency_key": format!("attack-{attacker}"), "title": "grow", "statement": ""}))
                    .0["workspace_id"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                // The attackers share the machine's two cores with the server:
                // their own work (building and reading megabytes of JSON) runs
                // at the lowest priority, and each request body is built once.
                jacobian::lanes::idle_class().expect("SCHED_IDLE");
                let invoke = |arguments: serde_json::Value| {
                    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "capability.invoke", "arguments": arguments}})
                    .to_string()
                };
                let body = match attacker {
                    0 => invoke(json!({"capability_id": "aaa.lint.verify", "input": {"cnf": cnf, "certificate": certificate}})),
                    1 => invoke(json!({"capability_id": "certificate.verify", "input": {"certificate": certificate}})),
                    2 => invoke(json!({"capability_id": "sat.solve", "input": {"cnf": cnf, "copies": vec![cnf.clone(); 12_000]}})),
                    3 => invoke(json!({"capability_id": "x".repeat(1 << 20), "input": {}})),
                    4 => invoke(json!({"capability_id": "test.hostile.attack", "input": {"attack": "host_time", "argument": "forever"}})),
                    5 => invoke(json!({"capability_id": "test.hostile.attack", "input": {"attack": "bulk_fill", "argument": "forever"}})),
                    _ => String::new(),
                };
                let mut round = 0u64;
                while running() {
                    if attacker == 6 {
                        let entry = json!({"type": "finding", "kind": "CLAIM", "title": format!("growth {round}"), "body": "x".repeat(8192)});
                        let (answer, _) = client.call("workspace.write", json!({"workspace_id": workspace,
                            "base_revision": format!("rev-{round}"), "idempotency_key": format!("g{round}"), "entries": [entry]}));
                        if answer["revision_id"].is_string() {
                            round += 1;
                        }
                    } else {
                        let answer = client.post(&body);
                        assert!(!answer.contains("\"assurance\":\"VERIFIED\""), "an attack was verified: {answer}");
                    }
                    count();
                }
            });
        }
        std::thread::sleep(Duration::from_millis(500));
        let samples = honest(&addr);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        samples
    });
    let (attacked50, attacked99) = percentiles(under_attack);
    let resident = resident_kib(child.id());
    let who = if tenants { "tenants with API tokens, attackers under quotas" } else { "no authentication" };
    println!(
        "{who}: honest client, {honest_calls} sequential invokes over HTTP: alone p50 {alone50:.0} µs p99 {alone99:.0} µs; \
         under 8 attackers ({} attacks answered) p50 {attacked50:.0} µs p99 {attacked99:.0} µs ({:.2}x at p99), \
         no honest call failed; server resident {} MiB",
        attacks.load(std::sync::atomic::Ordering::Relaxed),
        attacked99 / alone99,
        resident / 1024
    );
    let _ = child.kill();
    let _ = child.wait();
}
