//! Compiling, instantiating and calling components; the core invoke path; startup; the budget presets' rates.

use crate::*;

pub(crate) fn compile_vs_cache() {
    let sandbox = Sandbox::new(EngineConfig::default()).expect("engine");
    let bundled = jacobian::bundled::BUNDLED
        .iter()
        .find(|c| c.package == "jacobian-universal-algebra")
        .expect("bundled capability");
    let compile: Vec<Duration> = (0..5).map(|_| time(|| sandbox.compile(bundled.bytes).expect("compiles"))).collect();
    let component = sandbox.compile(bundled.bytes).expect("compiles");
    let code = sandbox.serialize(&component).expect("serializes");
    let load: Vec<Duration> = (0..20)
        .map(|_| {
            time(|| {
                let digest = Digest::of(&code);
                // SAFETY: `code` was just produced by this engine.
                (digest, unsafe { sandbox.deserialize(&code) }.expect("loads"))
            })
        })
        .collect();
    let (compile_ms, _) = percentiles(compile);
    let (load_ms, _) = percentiles(load);
    println!(
        "compile vs precompiled cache ({} KiB component): compile p50 {:.1} ms, cache load (re-hash + deserialize) p50 {:.2} ms, ratio {:.0}x",
        bundled.bytes.len() / 1024,
        compile_ms / 1000.0,
        load_ms / 1000.0,
        compile_ms / load_ms
    );
}

/// Every bundled component: its size, and instantiate + `describe()` from a
/// cached `InstancePre` (the pooling allocator; describe is each bundle's
/// cheapest export, so this is close to its instantiation cost).
pub(crate) fn guest_figures() {
    let sandbox = Sandbox::new(EngineConfig::default()).expect("engine");
    println!("bundled components (guest profile: opt-level 3, LTO, one codegen unit, stripped):");
    let mut total = 0;
    for bundled in jacobian::bundled::BUNDLED {
        let component = sandbox.compile(bundled.bytes).expect("compiles");
        let loaded = sandbox.prepare(Digest::of(bundled.bytes), &component).expect("prepares");
        let mut call = || {
            let report = sandbox.call(
                &loaded,
                Entry::Describe,
                &[],
                &BUDGETS,
                ArtifactAccess::default(),
                &CallControl::default(),
            );
            assert!(report.result.is_ok(), "{}", bundled.package);
        };
        for _ in 0..50 {
            call();
        }
        let (p50, p99) = percentiles((0..500).map(|_| time(&mut call)).collect());
        total += bundled.bytes.len();
        println!(
            "  {:<38} {:>5} KiB  instantiate + describe p50 {p50:>6.1} µs  p99 {p99:>6.1} µs",
            bundled.package,
            bundled.bytes.len() / 1024
        );
    }
    println!("  total {} KiB in {} components", total / 1024, jacobian::bundled::BUNDLED.len());
}

pub(crate) fn instantiate_and_call(pooling: bool, iterations: usize) -> (f64, f64) {
    let sandbox = Sandbox::new(EngineConfig { pooling, ..EngineConfig::default() }).expect("engine");
    let bytes = echo_bytes();
    let component = sandbox.compile(&bytes).expect("compiles");
    let loaded = sandbox.prepare(Digest::of(&bytes), &component).expect("prepares");
    let request =
        json!({"capability_id": "test.echo.message", "mode": "EXPLORE", "input": {"message": "hi"}}).to_string();
    let mut call = || {
        let report = sandbox.call(
            &loaded,
            Entry::Run,
            request.as_bytes(),
            &BUDGETS,
            ArtifactAccess::default(),
            &CallControl::default(),
        );
        assert!(report.result.is_ok());
    };
    for _ in 0..200 {
        call();
    }
    percentiles((0..iterations).map(|_| time(&mut call)).collect())
}

pub(crate) fn core_invoke(runtime: &Runtime, iterations: usize) -> (f64, f64) {
    let request = InvokeRequest {
        capability_id: "test.echo.message".into(),
        mode: None,
        input: json!({"message": "hi"}),
        budget: None,
        view: None,
        experiment: None,
        tenant: None,
    };
    for _ in 0..200 {
        runtime.invoke(&request);
    }
    percentiles((0..iterations).map(|_| time(|| runtime.invoke(&request))).collect())
}

/// `jacobian serve --http 127.0.0.1:0` from exec to its ready line, on a fresh data directory
/// (compiling every bundled component) and then from the precompiled cache.
pub(crate) fn startup_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let start_server = || {
        let started = Instant::now();
        let (mut child, line) = start_http_server(dir.path());
        let ready = started.elapsed();
        assert!(line.starts_with("listening on"), "{line}");
        let _ = child.kill();
        let _ = child.wait();
        ready
    };
    let first = start_server();
    let warm: Vec<Duration> = (0..10).map(|_| start_server()).collect();
    let (p50, p99) = percentiles(warm);
    println!(
        "server start to ready (serve --http, {} bundled components): first start (compiling) {:.0} ms; \
from the precompiled cache p50 {:.1} ms, max {:.1} ms (10 starts)",
        jacobian::bundled::BUNDLED.len(),
        first.as_secs_f64() * 1e3,
        p50 / 1e3,
        p99 / 1e3
    );
}

/// Each bundled capability's guest fuel per second on this machine, on an
/// input that runs for a tenth of a second or more (a shorter call measures
/// the call, not the guest's rate), against the rate CONTRACT reckons its
/// presets' typical seconds with (`budgets::fuel_per_second`); and each
/// preset's seconds at the rates measured here.
pub(crate) fn preset_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let invoke = |id: &str, input: serde_json::Value| call(&runtime, id, input);
    let artifact = |result: &jacobian::contract::CapabilityResult, role: &str| {
        result.artifacts.iter().find(|a| a.role == role).map(|a| a.uri.clone()).expect("artifact")
    };
    let (vars, generators) = classic_ideals::classic("katsura", 5);
    let katsura5 = json!({"generators": generators, "vars": vars, "order": "grevlex"});
    let basis = invoke("polynomial.compute.groebner_basis", katsura5.clone());
    let enumeration = invoke("graph.enumerate.nonisomorphic", json!({"order": 9, "family": "connected"}));
    // Seeded random graphs (edge probability 1/k) for the induced-tree search and its checker.
    let mut next = xorshift(0x7072_6573_6574);
    let mut random_graph = |order: u32, k: u64| {
        let edges: Vec<[u32; 2]> =
            (0..order).flat_map(|a| (a + 1..order).map(move |b| [a, b])).filter(|_| next().is_multiple_of(k)).collect();
        artifact(&invoke("graph.construct.explicit", json!({"vertices": order, "edges": edges})), "graph")
    };
    let (large, small) = (random_graph(50, 8), random_graph(14, 4));
    let small_tree = invoke("graph.induced_tree.maximum", json!({"graph": small}));
    // The first unsatisfiable one of seeded random 3-SAT formulas at the threshold.
    let (cnf, proof) = (0..20u64)
        .find_map(|k| {
            let text = random_3sat(200, 852, 0x5341_5400 + k);
            let cnf = artifact(&invoke("sat.cnf.construct", json!({"dimacs": text})), "cnf");
            let solved = invoke("sat.solve", json!({"cnf": cnf}));
            (solved.output.as_ref()?["status"] == "UNSAT").then(|| (cnf, artifact(&solved, "certificate")))
        })
        .expect("an unsatisfiable formula among twenty");
    let work = [
        ("graph.enumerate.nonisomorphic", json!({"order": 9, "family": "connected"})),
        ("graph.enumerate.nonisomorphic.verify", json!({"enumeration": artifact(&enumeration, "enumeration")})),
        // A law the search does not settle: it runs until its work budget stops it at order 5.
        (
            "universal_algebra.search.countermodel",
            json!({"hypotheses": ["x = (((y*z)*((z*y)*(y*x)))*(x*z))"], "target": "x = y", "max_order": 7, "max_work": 30_000_000}),
        ),
        ("polynomial.compute.groebner_basis", katsura5),
        ("polynomial.groebner_basis.verify", json!({"certificate": artifact(&basis, "certificate")})),
        ("graph.induced_tree.maximum", json!({"graph": large})),
        (
            "graph.induced_tree.maximum.verify",
            json!({"graph": small, "certificate": artifact(&small_tree, "certificate")}),
        ),
        ("sat.solve", json!({"cnf": cnf})),
        ("sat.certificate.verify", json!({"cnf": cnf, "certificate": proof})),
    ];
    let mut rates = Vec::new();
    for (id, input) in work {
        // The better of two runs: the rate of the work, not of a disturbance.
        let (seconds, fuel) = (0..2)
            .map(|_| {
                let start = Instant::now();
                let result = invoke(id, input.clone());
                assert!(result.diagnostic.is_none(), "{id}: {:?}", result.diagnostic);
                (start.elapsed().as_secs_f64(), result.fuel_consumed)
            })
            .fold((f64::INFINITY, 0), |best, run| if run.0 < best.0 { run } else { best });
        let rate = fuel as f64 / seconds;
        let assumed = jacobian::budgets::fuel_per_second(id) as f64;
        println!(
            "presets: {id}: {fuel} fuel in {seconds:.3} s, {rate:.2e} fuel/s, {:.2}x the rate CONTRACT assumes{}",
            rate / assumed,
            if fuel < 500_000_000 { " (too short to measure the rate: left out)" } else { "" }
        );
        if fuel >= 500_000_000 {
            rates.push((id, rate));
        }
    }
    let mut sorted: Vec<f64> = rates.iter().map(|(_, r)| *r).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    println!(
        "presets: median rate {median:.2e} fuel/s (budgets::FUEL_PER_SECOND is {:.2e}); as a table:",
        jacobian::budgets::FUEL_PER_SECOND as f64
    );
    for (id, rate) in &rates {
        println!("presets:     (\"{id}\", {}_000_000),", (rate / 1e6).round() as u64);
    }
    let fuel = jacobian::policy::Budgets::default().fuel;
    let (slowest, fastest) = (sorted[0], sorted[sorted.len() - 1]);
    for preset in [BudgetPreset::Quick, BudgetPreset::Standard, BudgetPreset::Deep] {
        let f = preset.fuel(fuel);
        println!(
            "presets: {preset:?}: {f} fuel = {:.3}–{:.3} s across the capabilities measured here",
            f as f64 / fastest,
            f as f64 / slowest
        );
    }
}
