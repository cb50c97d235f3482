//! Graphs against outside truth: maximum induced trees of named graphs
//! (`oracles/graphs.json`), produced, then VERIFIED by the exhaustive checker.

use jacobian::Runtime;
use jacobian::contract::{Assurance, Status, VerificationStatus};
use jacobian::digest::Digest;
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, invoke};

fn construct(runtime: &Runtime, n: u32, edges: &[[u32; 2]]) -> String {
    let result = invoke(runtime, "graph.construct.explicit", Mode::Explore, json!({"vertices": n, "edges": edges}));
    assert_eq!(result.status, Status::Completed, "{:?}", result.diagnostic);
    result.artifacts[0].uri.clone()
}

fn complete(n: u32) -> Vec<[u32; 2]> {
    (0..n).flat_map(|a| (a + 1..n).map(move |b| [a, b])).collect()
}

fn cycle(n: u32) -> Vec<[u32; 2]> {
    (0..n).map(|i| [i, (i + 1) % n]).collect()
}

fn petersen() -> Vec<[u32; 2]> {
    let mut edges: Vec<[u32; 2]> = (0..5).map(|i| [i, (i + 1) % 5]).collect(); // outer cycle
    edges.extend((0..5).map(|i| [5 + i, 5 + (i + 2) % 5])); // inner pentagram
    edges.extend((0..5).map(|i| [i, 5 + i])); // spokes
    edges
}

fn cube() -> Vec<[u32; 2]> {
    (0..8u32).flat_map(|v| (0..3).map(move |b| [v, v ^ (1 << b)])).filter(|[a, b]| a < b).collect()
}

fn bipartite(m: u32, n: u32) -> Vec<[u32; 2]> {
    (0..m).flat_map(|a| (0..n).map(move |b| [a, m + b])).collect()
}

fn grid(k: u32) -> Vec<[u32; 2]> {
    let mut edges = Vec::new();
    for r in 0..k {
        for c in 0..k {
            let v = r * k + c;
            if c + 1 < k {
                edges.push([v, v + 1]);
            }
            if r + 1 < k {
                edges.push([v, v + k]);
            }
        }
    }
    edges
}

fn solve(runtime: &Runtime, graph: &str) -> (usize, String, Value) {
    let result = invoke(runtime, "graph.induced_tree.maximum", Mode::Explore, json!({"graph": graph}));
    assert_eq!(result.status, Status::Completed, "{:?}", result.diagnostic);
    assert_eq!(result.assurance, Assurance::Computed);
    let output = result.output.unwrap();
    assert_eq!(output["exact"], true);
    (output["size"].as_u64().unwrap() as usize, result.check_with.unwrap().certificate_artifact.unwrap(), output)
}

fn verify(runtime: &Runtime, graph: &str, certificate: &str) -> (VerificationStatus, String) {
    let result = invoke(
        runtime,
        "graph.induced_tree.maximum.verify",
        Mode::Verify,
        json!({"graph": graph, "certificate": certificate}),
    );
    let record = result.verification.unwrap_or_else(|| panic!("{:?}", result.diagnostic));
    (record.status, record.reason)
}

#[test]
fn named_graphs_have_the_oracle_maximum_induced_trees_verified() {
    let (runtime, _dir) = support::runtime();
    let oracle: Value =
        serde_json::from_str(&std::fs::read_to_string(support::testdata("oracles/graphs.json")).unwrap()).unwrap();
    let value_of = |name: &str| -> Value {
        oracle["maximum_induced_tree"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))["value"]
            .clone()
    };
    let mut cases: Vec<(String, u32, Vec<[u32; 2]>, usize)> = vec![
        ("Petersen graph".into(), 10, petersen(), value_of("Petersen graph").as_u64().unwrap() as usize),
        ("cube graph Q3".into(), 8, cube(), value_of("cube graph Q3").as_u64().unwrap() as usize),
        (
            "complete bipartite K(3,4)".into(),
            7,
            bipartite(3, 4),
            value_of("complete bipartite K(3,4)").as_u64().unwrap() as usize,
        ),
        ("3x3 grid graph".into(), 9, grid(3), value_of("3x3 grid graph").as_u64().unwrap() as usize),
    ];
    let complete_value = value_of("complete graph K(n), n>=2").as_u64().unwrap() as usize;
    assert_eq!(value_of("cycle C(n), n>=3"), "n-1");
    for n in 2..=7 {
        cases.push((format!("K{n}"), n, complete(n), complete_value));
    }
    for n in 3..=12 {
        cases.push((format!("C{n}"), n, cycle(n), n as usize - 1));
    }
    for (m, n) in [(2, 2), (2, 5), (4, 4), (3, 6)] {
        cases.push((format!("K({m},{n})"), m + n, bipartite(m, n), m.max(n) as usize + 1));
    }
    for (name, n, edges, expected) in cases {
        let graph = construct(&runtime, n, &edges);
        let (size, certificate, _) = solve(&runtime, &graph);
        assert_eq!(size, expected, "{name}");
        let (status, reason) = verify(&runtime, &graph, &certificate);
        assert_eq!(status, VerificationStatus::Verified, "{name}: {reason}");
    }
}

#[test]
fn a_wrong_optimum_is_rejected_and_large_graphs_are_unsupported() {
    let (runtime, _dir) = support::runtime();
    let graph = construct(&runtime, 10, &petersen());
    let (size, certificate, output) = solve(&runtime, &graph);
    assert_eq!(size, 7);
    // Claim 6 with a genuine 6-vertex induced tree (a leaf of the optimum removed).
    let bytes = runtime.data().read_artifact(&Digest::from_artifact_uri(&certificate).unwrap()).unwrap();
    let mut envelope: Value = serde_json::from_slice(&bytes).unwrap();
    let vertices: Vec<u64> = output["vertices"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    let edges = petersen();
    let leaf = vertices
        .iter()
        .copied()
        .find(|&v| {
            edges
                .iter()
                .filter(|[a, b]| {
                    (*a as u64 == v && vertices.contains(&(*b as u64)))
                        || (*b as u64 == v && vertices.contains(&(*a as u64)))
                })
                .count()
                == 1
        })
        .unwrap();
    let smaller: Vec<u64> = vertices.iter().copied().filter(|&v| v != leaf).collect();
    envelope["content"]["vertices"] = json!(smaller);
    envelope["content"]["size"] = json!(6);
    let wrong = runtime.data().put_artifact(&envelope).unwrap().0.artifact_uri();
    let (status, reason) = verify(&runtime, &graph, &wrong);
    assert_eq!(status, VerificationStatus::Rejected);
    assert!(reason.contains("induces a tree of 7 vertices"), "{reason}");

    let big = construct(&runtime, 16, &cycle(16));
    let (size, certificate, _) = solve(&runtime, &big);
    assert_eq!(size, 15);
    let (status, _) = verify(&runtime, &big, &certificate);
    assert_eq!(status, VerificationStatus::Unsupported, "order 16 is beyond the checker's bound");
}

#[test]
fn bad_graphs_are_typed_errors_and_store_nothing() {
    let (runtime, dir) = support::runtime();
    let artifacts = || std::fs::read_dir(dir.path().join("artifacts")).map(|d| d.count()).unwrap_or(0);
    let before = artifacts();
    for (input, path) in [
        (json!({"vertices": 3, "edges": [[0, 3]]}), "input.edges.0.1"),
        (json!({"vertices": 3, "edges": [[1, 1]]}), "input.edges.0"),
        (json!({"vertices": 3, "edges": [[0, 1], [1, 0]]}), "input.edges.1"),
        (json!({"vertices": 3, "edges": [[0, 1], [0, 1]]}), "input.edges.1"),
        (json!({"vertices": 65, "edges": []}), "input.vertices"),
        (json!({"vertices": 2, "labels": ["a"], "edges": []}), "input.labels"),
        (json!({"vertices": 2, "labels": ["a", "a"], "edges": []}), "input.labels.1"),
        (json!({"vertices": 2, "edges": [[0, 1, 2]]}), "input.edges.0"),
    ] {
        let result = invoke(&runtime, "graph.construct.explicit", Mode::Explore, input.clone());
        let d = result.diagnostic.unwrap_or_else(|| panic!("{input} accepted"));
        assert_eq!(d.details["path"], path, "{input}: {}", d.message);
    }
    assert_eq!(artifacts(), before, "nothing stored");
    // A generic artifact never gains graph semantics.
    let cnf = invoke(&runtime, "sat.cnf.construct", Mode::Explore, json!({"dimacs": "p cnf 1 1\n1 0\n"})).artifacts[0]
        .uri
        .clone();
    let refused = invoke(&runtime, "graph.induced_tree.maximum", Mode::Explore, json!({"graph": cnf}));
    assert_eq!(refused.diagnostic.unwrap().details["path"], "input.graph");
}
