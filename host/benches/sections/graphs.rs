//! Maximum induced trees, and all graphs on 8 and 9 vertices beside nauty-geng.

use crate::*;

/// Maximum induced trees on seeded random graphs: producer time by order,
/// and the exhaustive checker where it applies (order 14).
pub(crate) fn induced_tree_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let invoke = |id: &str, input: serde_json::Value| call(&runtime, id, input);
    let mut next = xorshift(0x6772_6170_6873);
    for order in [14u32, 20, 30, 40] {
        let (mut produce, mut check, mut sizes) = (Duration::ZERO, Duration::ZERO, Vec::new());
        for _ in 0..5 {
            let mut edges: Vec<[u32; 2]> = Vec::new();
            for a in 0..order {
                for b in a + 1..order {
                    if next() % 100 < 25 {
                        edges.push([a, b]);
                    }
                }
            }
            let graph =
                invoke("graph.construct.explicit", json!({"vertices": order, "edges": edges})).artifacts[0].uri.clone();
            let start = Instant::now();
            let result = invoke("graph.induced_tree.maximum", json!({"graph": graph}));
            produce += start.elapsed();
            sizes.push(result.output.as_ref().map(|o| o["size"].clone()).unwrap_or_default());
            if order <= 14 {
                let certificate = result.check_with.and_then(|c| c.certificate_artifact).expect("certificate");
                let start = Instant::now();
                let verified =
                    invoke("graph.induced_tree.maximum.verify", json!({"graph": graph, "certificate": certificate}));
                check += start.elapsed();
                assert_eq!(verified.assurance, jacobian::contract::Assurance::Verified);
            }
        }
        let checker = if order <= 14 {
            format!("{:.1} ms", check.as_secs_f64() * 1e3)
        } else {
            "beyond the checker's bound".into()
        };
        println!(
            "maximum induced tree, 5 random graphs of order {order} (p = 0.25): producer {:.1} ms, checker {checker}; sizes {sizes:?}",
            produce.as_secs_f64() * 1e3
        );
    }
}

/// All graphs on 8 and 9 vertices: the sandboxed producer and checker beside
/// `nauty-geng` writing the same classes as graph6.
pub(crate) fn enumeration_figures() {
    if std::process::Command::new("nauty-geng").arg("-help").output().is_err() {
        println!("enumeration: nauty-geng is not installed (scripts/test.sh installs it); skipping the comparison");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let invoke = |id: &str, input: serde_json::Value| call(&runtime, id, input);
    // The graph component on its own, to split the invocation's time into the
    // component call (instantiate, compute, the answer's JSON, copy out) and
    // the host's handling of the answer.
    let graph = jacobian::bundled::BUNDLED.iter().find(|c| c.package == "jacobian-graph").expect("graph bundled");
    let sandbox = runtime.sandbox();
    let compiled = sandbox.compile(graph.bytes).expect("graph compiles");
    let loaded = sandbox.prepare(graph.sha256.parse().expect("digest"), &compiled).expect("graph prepares");
    let roomy = CallBudgets { fuel: u64::MAX / 2, memory_bytes: 1 << 30, output_bytes: 1 << 30 };
    for order in [8u32, 9] {
        let request = json!({"capability_id": "graph.enumerate.nonisomorphic", "mode": "EXPLORE",
            "input": {"order": order, "family": "all"}})
        .to_string();
        let start = Instant::now();
        let alone = sandbox.call(
            &loaded,
            Entry::Run,
            request.as_bytes(),
            &roomy,
            ArtifactAccess::default(),
            &CallControl::default(),
        );
        let component = start.elapsed();
        let answer_bytes = alone.result.as_ref().map(Vec::len).expect("the component answers");
        let start = Instant::now();
        let result = invoke("graph.enumerate.nonisomorphic", json!({"order": order, "family": "all"}));
        let produce = start.elapsed();
        let count = result.output.as_ref().map(|o| o["count"].clone()).unwrap_or_default();
        let enumeration = result.check_with.and_then(|c| c.certificate_artifact).expect("enumeration artifact");
        let start = Instant::now();
        let verified = invoke("graph.enumerate.nonisomorphic.verify", json!({"enumeration": enumeration}));
        let check = start.elapsed();
        assert_eq!(verified.assurance, jacobian::contract::Assurance::Verified);
        let plain = open_plain(dir.path());
        let start = Instant::now();
        let unchecked = call(&plain, "graph.enumerate.nonisomorphic", json!({"order": order, "family": "all"}));
        let produce_plain = start.elapsed();
        assert_eq!(unchecked.output.as_ref().map(|o| o["count"].clone()), Some(count.clone()));
        let start = Instant::now();
        let (codes, _) = enumerate::enumerate(enumerate::Family::All, order as usize);
        let listing: Vec<String> =
            codes.iter().map(|&code| enumerate::graph6(&enumerate::decode(order as usize, code))).collect();
        let same = start.elapsed();
        assert_eq!(json!(listing.len()), count);
        // Natively, with the listing serialized as JSON as the component's answer is.
        let start = Instant::now();
        let (codes, _) = enumerate::enumerate(enumerate::Family::All, order as usize);
        let listing: Vec<String> =
            codes.iter().map(|&code| enumerate::graph6(&enumerate::decode(order as usize, code))).collect();
        let as_json = serde_json::to_vec(&listing).expect("json");
        let same_json = start.elapsed();
        assert!(as_json.len() <= answer_bytes);
        let start = Instant::now();
        let geng = std::process::Command::new("nauty-geng").args(["-q", &order.to_string()]).output().expect("geng");
        let native = start.elapsed();
        let listed = geng.stdout.iter().filter(|&&b| b == b'\n').count();
        println!(
            "all graphs on {order} vertices ({count} classes; geng lists {listed}): sandboxed producer {:.0} ms \
(fuel {}; {:.0} ms without yields), the same code compiled natively {:.0} ms (sandbox/native {:.2}), \
nauty-geng {:.0} ms, ratio {:.1}; sandboxed checker {:.0} ms (fuel {})",
            produce.as_secs_f64() * 1e3,
            result.fuel_consumed,
            produce_plain.as_secs_f64() * 1e3,
            same.as_secs_f64() * 1e3,
            produce.as_secs_f64() / same.as_secs_f64(),
            native.as_secs_f64() * 1e3,
            produce.as_secs_f64() / native.as_secs_f64(),
            check.as_secs_f64() * 1e3,
            verified.fuel_consumed,
        );
        println!(
            "  of which the component call alone (instantiate, compute, {answer_bytes}-byte JSON answer, copy out) \
{:.0} ms, natively with the listing as JSON {:.0} ms (sandbox/native {:.2}); the host's handling of the answer \
(parse, schema check, canonical JSON, hashing, artifact and episode) {:.0} ms",
            component.as_secs_f64() * 1e3,
            same_json.as_secs_f64() * 1e3,
            component.as_secs_f64() / same_json.as_secs_f64(),
            produce.saturating_sub(component).as_secs_f64() * 1e3,
        );
    }
}
