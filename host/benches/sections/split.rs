//! Where the sandbox's cost on real work comes from, by instrumentation.

use crate::*;

/// Where the sandbox's cost on real work comes from. The bundled components'
/// own exports are called on bench-local engines that differ only in their
/// instrumentation: none (what Cranelift's code costs against LLVM's), fuel
/// (what the runtime compiles in), epoch checks alone, and fuel with epoch
/// checks (the alternative for cancellation; docs/decisions/0010-cancellation-and-progress-ride-on-fuel.md). Each call
/// instantiates the component afresh, as the runtime does; host imports read
/// the call's input artifacts and drop log lines.
pub(crate) mod instrumented {
    use std::collections::HashMap;
    use std::time::{Duration, Instant};

    use wasmtime::component::{Component, InstancePre, Linker, ResourceTable, Val};
    use wasmtime::{Config, Engine, Store};
    use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

    /// One component call: the request bytes and the artifacts it may read.
    pub struct Call {
        pub request: Vec<u8>,
        pub artifacts: HashMap<String, Vec<u8>>,
    }

    struct State {
        wasi: WasiCtx,
        table: ResourceTable,
        artifacts: HashMap<String, Vec<u8>>,
    }

    impl WasiView for State {
        fn ctx(&mut self) -> WasiCtxView<'_> {
            WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
        }
    }

    /// The four instrumentation settings, in the order they are reported.
    pub const SETTINGS: [(&str, bool, bool); 4] = [
        ("no instrumentation", false, false),
        ("fuel", true, false),
        ("epoch checks", false, true),
        ("fuel + epoch checks", true, true),
    ];

    fn prepare(bytes: &[u8], fuel: bool, epochs: bool) -> (Engine, InstancePre<State>) {
        let mut config = Config::new();
        config.wasm_component_model(true).consume_fuel(fuel).epoch_interruption(epochs);
        let engine = Engine::new(&config).expect("engine");
        let component = Component::new(&engine, bytes).expect("component compiles");
        let mut linker = Linker::<State>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("wasi");
        let mut host = linker.instance("jacobian:runtime/host@0.1.0").expect("host interface");
        host.func_new("log", |_, _, _, _| Ok(())).expect("log");
        host.func_new("read-artifact", |store, _, params, results| {
            let Val::String(digest) = &params[0] else { wasmtime::bail!("read-artifact takes a string") };
            let bytes = store.data().artifacts.get(digest.as_str()).cloned().expect("the call's artifact");
            results[0] = Val::Result(Ok(Some(Box::new(Val::List(bytes.into_iter().map(Val::U8).collect())))));
            Ok(())
        })
        .expect("read-artifact");
        let pre = linker.instantiate_pre(&component).expect("imports resolve");
        (engine, pre)
    }

    /// The best of `rounds` runs of every call in turn, for each setting.
    pub fn measure(bytes: &[u8], calls: &[Call], rounds: usize) -> [Duration; 4] {
        SETTINGS.map(|(_, fuel, epochs)| {
            let (engine, pre) = prepare(bytes, fuel, epochs);
            (0..rounds)
                .map(|_| {
                    let mut total = Duration::ZERO;
                    for call in calls {
                        let state = State {
                            wasi: WasiCtx::builder().build(),
                            table: ResourceTable::new(),
                            artifacts: call.artifacts.clone(),
                        };
                        let mut store = Store::new(&engine, state);
                        if fuel {
                            store.set_fuel(u64::MAX / 2).expect("fuel");
                        }
                        if epochs {
                            store.set_epoch_deadline(u64::MAX / 2);
                        }
                        let start = Instant::now();
                        let instance = pre.instantiate(&mut store).expect("instantiates");
                        let invoke = instance
                            .get_typed_func::<(&[u8],), (Result<Vec<u8>, String>,)>(&mut store, "invoke")
                            .expect("invoke export");
                        let (answer,) = invoke.call(&mut store, (&call.request,)).expect("runs");
                        total += start.elapsed();
                        assert!(answer.is_ok(), "the component answers: {answer:?}");
                    }
                    total
                })
                .min()
                .expect("one round")
        })
    }

    /// One line of the split: native, each setting, and the ratios to native.
    pub fn report(workload: &str, native: Duration, settings: [Duration; 4], whole: Duration) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mut line = format!("  {workload}: native {:.1} ms", ms(native));
        for ((name, _, _), time) in SETTINGS.iter().zip(settings) {
            line += &format!("; {name} {:.1} ms ({:.2}x)", ms(time), time.as_secs_f64() / native.as_secs_f64());
        }
        line +=
            &format!("; whole invocations {:.1} ms ({:.2}x)", ms(whole), whole.as_secs_f64() / native.as_secs_f64());
        println!("{line}");
    }
}

/// The sandbox's cost split by instrumentation, for the three compute-heavy
/// capabilities: the component's own `invoke` on engines with and without fuel
/// and epoch checks ([`instrumented`]), the same source natively producing the same
/// answer (its JSON included), and the whole invocation through the runtime.
pub(crate) fn split_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let bundled = |package: &str| {
        jacobian::bundled::BUNDLED.iter().find(|c| c.package == package).expect("bundled component").bytes
    };
    let request = |id: &str, input: serde_json::Value| {
        json!({"capability_id": id, "mode": "EXPLORE", "input": input}).to_string().into_bytes()
    };
    let best = |rounds: usize, f: &mut dyn FnMut()| (0..rounds).map(|_| time(&mut *f)).min().expect("one round");
    println!("sandbox cost split by instrumentation (best of 3; ratios to native):");

    // All graphs on 9 vertices.
    let input = json!({"order": 9, "family": "all"});
    let calls = [instrumented::Call {
        request: request("graph.enumerate.nonisomorphic", input.clone()),
        artifacts: Default::default(),
    }];
    let settings = instrumented::measure(bundled("jacobian-graph"), &calls, 3);
    let native = best(3, &mut || {
        let (codes, _) = enumerate::enumerate(enumerate::Family::All, 9);
        let listing: Vec<String> = codes.iter().map(|&code| enumerate::graph6(&enumerate::decode(9, code))).collect();
        std::hint::black_box(serde_json::to_vec(&json!({"graphs": listing})).expect("json"));
    });
    let whole = best(3, &mut || drop(call(&runtime, "graph.enumerate.nonisomorphic", input.clone())));
    instrumented::report("all graphs on 9 vertices", native, settings, whole);

    // drat-trim's five uuf-100 instances (UNSAT, with LRAT proofs).
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/sat/drat-trim-examples");
    let mut calls = Vec::new();
    let mut envelopes = Vec::new();
    for i in 1..=5 {
        let text = std::fs::read_to_string(shared.join(format!("uuf-100-{i}.cnf"))).expect("cnf");
        let uri = call(&runtime, "sat.cnf.construct", json!({"dimacs": text})).artifacts[0].uri.clone();
        let digest = Digest::from_artifact_uri(&uri).expect("uri");
        let envelope = runtime.data().read_artifact(&digest).expect("cnf artifact");
        calls.push(instrumented::Call {
            request: request("sat.solve", json!({"cnf": uri})),
            artifacts: [(digest.to_hex(), envelope.clone())].into(),
        });
        envelopes.push((uri, envelope));
    }
    let settings = instrumented::measure(bundled("jacobian-sat"), &calls, 3);
    let native = best(3, &mut || {
        #[derive(serde::Deserialize)]
        struct Cnf {
            variables: u32,
            clauses: Vec<Vec<i32>>,
        }
        for (uri, envelope) in &envelopes {
            let envelope: serde_json::Value = serde_json::from_slice(envelope).expect("json");
            let cnf: Cnf = serde_json::from_value(envelope["content"].clone()).expect("cnf");
            let (mut solver, early) = solver::Solver::new(cnf.variables, &cnf.clauses);
            assert!(early.is_none() && matches!(solver.solve(1_000_000), solver::Answer::Unsat));
            let answer = json!({"cnf": uri, "format": "lrat", "proof": solver.proof});
            std::hint::black_box(serde_json::to_vec(&answer).expect("json"));
        }
    });
    let whole = best(3, &mut || {
        for (uri, _) in &envelopes {
            drop(call(&runtime, "sat.solve", json!({"cnf": uri})));
        }
    });
    instrumented::report("sat.solve, 5 uuf-100 instances", native, settings, whole);

    // Twelve seeded random ideals, with their certificates.
    let ideals = random_ideals();
    let calls: Vec<instrumented::Call> = ideals
        .iter()
        .map(|input| instrumented::Call {
            request: request("polynomial.compute.groebner_basis", input.clone()),
            artifacts: Default::default(),
        })
        .collect();
    let settings = instrumented::measure(bundled("jacobian-polynomial"), &calls, 3);
    let native = best(3, &mut || {
        for case in &ideals {
            let vars: Vec<String> = serde_json::from_value(case["vars"].clone()).expect("vars");
            let order = order_of(case);
            let texts: Vec<String> = serde_json::from_value(case["generators"].clone()).expect("generators");
            let generators: Vec<poly::Poly> =
                texts.iter().map(|g| poly::parse(g, &vars, order, 10).expect("parses")).collect();
            let result = groebner::reduced_basis(&generators, vars.len(), order, GROEBNER_BUDGET).expect("finishes");
            let show = |p: &poly::Poly| p.show(&vars);
            let steps: Vec<Vec<usize>> = result
                .trace
                .iter()
                .map(|s| [s.pair.0, s.pair.1].into_iter().chain(s.by.iter().copied()).collect())
                .collect();
            let certificate = json!({
                "vars": vars, "order": case["order"],
                "generators": generators.iter().map(show).collect::<Vec<_>>(),
                "basis": result.basis.iter().map(show).collect::<Vec<_>>(),
                "trace": {"steps": steps},
            });
            std::hint::black_box(serde_json::to_vec(&certificate).expect("json"));
        }
    });
    let whole = best(3, &mut || {
        for input in &ideals {
            drop(call(&runtime, "polynomial.compute.groebner_basis", input.clone()));
        }
    });
    instrumented::report("Gröbner bases, 12 seeded random ideals", native, settings, whole);
}
