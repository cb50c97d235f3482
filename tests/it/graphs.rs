//! Graphs against outside truth: maximum induced trees of named graphs
//! (`oracles/graphs.json`), produced, then VERIFIED by the exhaustive checker.

use jacobian::Runtime;
use jacobian::contract::{Assurance, Status, VerificationStatus};
use jacobian::digest::Digest;
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, invoke, sequence, stored, tampered};

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
    let wrong = support::recorded_like(&runtime, runtime.data().put_artifact(&envelope).unwrap().0, &certificate);
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

// ---- graph.enumerate.nonisomorphic -------------------------------------------------

/// Enumerate; return the output, the artifact URI and its listed graph6 strings.
fn enumerate(runtime: &Runtime, family: &str, order: usize) -> (Value, String, Vec<String>) {
    let result =
        invoke(runtime, "graph.enumerate.nonisomorphic", Mode::Explore, json!({"order": order, "family": family}));
    assert_eq!(result.status, Status::Completed, "{family} {order}: {:?}", result.diagnostic);
    let uri = result.check_with.unwrap().certificate_artifact.unwrap();
    let envelope = stored(runtime, &uri);
    let graphs = envelope["content"]["graphs"].as_array().unwrap().iter().map(|g| g.as_str().unwrap().to_owned());
    (result.output.unwrap(), uri, graphs.collect())
}

fn verify_enumeration(runtime: &Runtime, uri: &str) -> (VerificationStatus, String) {
    let result = invoke(runtime, "graph.enumerate.nonisomorphic.verify", Mode::Verify, json!({"enumeration": uri}));
    let record = result.verification.unwrap_or_else(|| panic!("{:?}", result.diagnostic));
    (record.status, record.reason)
}

#[test]
fn enumerations_have_the_oeis_counts_and_are_verified() {
    let (runtime, _dir) = support::runtime();
    let mut cases: Vec<(&str, &str, usize)> = Vec::new();
    cases.extend((1..=8).map(|n| ("all", "A000088", n)));
    cases.extend((1..=8).map(|n| ("connected", "A001349", n)));
    cases.extend((1..=14).map(|n| ("trees", "A000055", n)));
    for (family, id, n) in cases {
        let expected = sequence(id)[n];
        let (output, uri, graphs) = enumerate(&runtime, family, n);
        assert_eq!(output["count"], expected, "{id}({n})");
        assert_eq!(graphs.len() as u64, expected, "{id}({n})");
        let (status, reason) = verify_enumeration(&runtime, &uri);
        assert_eq!(status, VerificationStatus::Verified, "{family} {n}: {reason}");
    }
}

/// Canonical graph6 forms by nauty's own `labelg`, one per input line.
fn nauty_canonical(graphs: &[u8]) -> Vec<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("nauty-labelg")
        .args(["-q", "-g"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("nauty-labelg (Debian package nauty; scripts/test.sh installs it)");
    let mut stdin = child.stdin.take().unwrap();
    let input = graphs.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success());
    let mut forms: Vec<String> = String::from_utf8(output.stdout).unwrap().lines().map(str::to_owned).collect();
    forms.sort();
    forms
}

fn nauty(program: &str, args: &[&str]) -> Vec<u8> {
    let output = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} (Debian package nauty; scripts/test.sh installs it): {e}"));
    assert!(output.status.success(), "{program} {args:?}");
    output.stdout
}

#[test]
fn enumerations_are_the_canonical_sets_nauty_generates() {
    let (runtime, _dir) = support::runtime();
    for (family, n, program, args) in [
        ("all", 8, "nauty-geng", vec!["-q", "8"]),
        ("connected", 9, "nauty-geng", vec!["-q", "-c", "9"]),
        ("trees", 14, "nauty-gentreeg", vec!["-q", "14"]),
    ] {
        let (_, uri, graphs) = enumerate(&runtime, family, n);
        let ours = nauty_canonical((graphs.join("\n") + "\n").as_bytes());
        let theirs = nauty_canonical(&nauty(program, &args));
        assert_eq!(ours.len(), graphs.len(), "{family} {n}");
        assert!(ours == theirs, "{family} {n}: {} of ours vs {} from {program}", ours.len(), theirs.len());
        let mut distinct = ours.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), ours.len(), "{family} {n}: two listed graphs are isomorphic");
        if family == "connected" {
            assert_eq!(graphs.len() as u64, sequence("A001349")[n]);
            let (status, reason) = verify_enumeration(&runtime, &uri);
            assert_eq!(status, VerificationStatus::Verified, "{reason}");
        }
    }
}

/// graph6 of an adjacency matrix (order ≤ 62).
fn to_graph6(adjacent: &[Vec<bool>]) -> String {
    let n = adjacent.len();
    let bits: Vec<bool> = (1..n).flat_map(|j| (0..j).map(move |i| (i, j))).map(|(i, j)| adjacent[i][j]).collect();
    let mut text = String::from((63 + n as u8) as char);
    for chunk in bits.chunks(6) {
        let value = chunk.iter().enumerate().fold(0u8, |acc, (k, &b)| acc | (u8::from(b) << (5 - k)));
        text.push((63 + value) as char);
    }
    text
}

fn from_graph6(text: &str) -> Vec<Vec<bool>> {
    let bytes = text.as_bytes();
    let n = (bytes[0] - 63) as usize;
    let bits: Vec<bool> = bytes[1..].iter().flat_map(|&b| (0..6).rev().map(move |k| (b - 63) >> k & 1 == 1)).collect();
    let mut adjacent = vec![vec![false; n]; n];
    for ((i, j), bit) in (1..n).flat_map(|j| (0..j).map(move |i| (i, j))).zip(bits) {
        adjacent[i][j] = bit;
        adjacent[j][i] = bit;
    }
    adjacent
}

#[test]
fn the_enumeration_checker_rejects_missing_repeated_and_foreign_graphs() {
    let (runtime, _dir) = support::runtime();
    let (_, uri, graphs) = enumerate(&runtime, "connected", 6);
    assert_eq!(verify_enumeration(&runtime, &uri).0, VerificationStatus::Verified);

    // One class missing: the list is pairwise non-isomorphic but short of Burnside's count.
    let short = tampered(&runtime, &uri, |c| {
        c["graphs"].as_array_mut().unwrap().pop();
        c["count"] = json!(graphs.len() - 1);
    });
    let (status, reason) = verify_enumeration(&runtime, &short);
    assert_eq!(status, VerificationStatus::Rejected);
    assert!(reason.contains("111 classes are listed") && reason.contains("gives 112"), "{reason}");

    // The last class replaced by a relabelled copy of the first: right count, a repeat.
    let mut first = from_graph6(&graphs[0]);
    first.reverse();
    for row in &mut first {
        row.reverse();
    }
    let relabelled = to_graph6(&first);
    assert_ne!(relabelled, graphs[0], "the relabelling must change the encoding");
    let repeated = tampered(&runtime, &uri, |c| c["graphs"][graphs.len() - 1] = json!(relabelled));
    let (status, reason) = verify_enumeration(&runtime, &repeated);
    assert_eq!(status, VerificationStatus::Rejected);
    assert!(reason.contains(&format!("graphs.0 and graphs.{} are isomorphic", graphs.len() - 1)), "{reason}");

    // A disconnected graph listed as connected.
    let empty = to_graph6(&vec![vec![false; 6]; 6]);
    let foreign = tampered(&runtime, &uri, |c| c["graphs"][3] = json!(empty));
    let (status, reason) = verify_enumeration(&runtime, &foreign);
    assert_eq!(status, VerificationStatus::Rejected);
    assert!(reason.contains("graphs.3 is not a member of the family connected"), "{reason}");

    // A count that disagrees with the list; a graph of the wrong order; broken graph6.
    for (edit, expected) in [
        (json!({"count": 7}), "count says 7"),
        (json!({"graph": "Dhc"}), "graphs.5 has 5 vertices"),
        (json!({"graph": "E~~~"}), "graphs.5: graph6 padding bits are not zero"),
        (json!({"graph": "E~~"}), "graphs.5: graph6 of order 6 needs 3 data bytes, found 2"),
    ] {
        let changed = tampered(&runtime, &uri, |c| match edit.get("count") {
            Some(count) => c["count"] = count.clone(),
            None => c["graphs"][5] = edit["graph"].clone(),
        });
        let (status, reason) = verify_enumeration(&runtime, &changed);
        assert_eq!(status, VerificationStatus::Rejected, "{edit}");
        assert!(reason.contains(expected), "{edit}: {reason}");
    }

    // Beyond the checker's bound: a non-conclusion, not a guess.
    let beyond = tampered(&runtime, &uri, |c| c["order"] = json!(10));
    assert_eq!(verify_enumeration(&runtime, &beyond).0, VerificationStatus::Unsupported);
}

#[test]
fn bad_enumeration_requests_are_typed_errors_and_store_nothing() {
    let (runtime, dir) = support::runtime();
    let artifacts = || std::fs::read_dir(dir.path().join("artifacts")).map(|d| d.count()).unwrap_or(0);
    let before = artifacts();
    for (input, path) in [
        (json!({"order": 10, "family": "all"}), "input.order"),
        (json!({"order": 10, "family": "connected"}), "input.order"),
        (json!({"order": 17, "family": "trees"}), "input.order"),
        (json!({"order": 0, "family": "trees"}), "input.order"),
        (json!({"order": 5, "family": "forests"}), "input.family"),
        (json!({"order": 5}), "input.family"),
        (json!({"order": 5, "family": "all", "labelled": true}), "input.labelled"),
    ] {
        let result = invoke(&runtime, "graph.enumerate.nonisomorphic", Mode::Explore, input.clone());
        let d = result.diagnostic.unwrap_or_else(|| panic!("{input} accepted"));
        assert_eq!(d.details["path"], path, "{input}: {}", d.message);
    }
    assert_eq!(artifacts(), before, "nothing stored");
}
