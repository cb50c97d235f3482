//! The core alone, natively: OEIS counts and named graphs' maximum induced
//! trees (outside truth), and on random graphs, canonical codes that
//! ignore vertex names and tell non-isomorphic graphs apart, and induced
//! trees that are trees and as large as exhaustive search finds.

use proptest::prelude::*;

use crate::enumerate::{Family, canonical_code, decode, enumerate, graph6};
use crate::induced_tree::maximum;
use crate::simple::build;

fn oeis(id: &str) -> Vec<u64> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/oracles/sequences.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("outside truth {}: {e}", path.display()));
    let sequences: serde_json::Value = serde_json::from_str(&text).unwrap();
    sequences[id]["values"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
}

#[test]
fn enumerations_have_the_oeis_counts() {
    for (family, id, up_to) in
        [(Family::All, "A000088", 7), (Family::Connected, "A001349", 7), (Family::Trees, "A000055", 11)]
    {
        let counts = oeis(id);
        assert!(counts.len() > up_to, "{id} lists terms up to n = {up_to}");
        for (n, &count) in counts.iter().enumerate().take(up_to + 1).skip(1) {
            let (codes, _) = enumerate(family, n);
            assert_eq!(codes.len() as u64, count, "{id}({n})");
        }
    }
}

#[test]
fn graph6_spells_small_graphs_as_nauty_does() {
    let complete = |n: usize| (0..n).map(|v| ((1u16 << n) - 1) & !(1 << v)).collect::<Vec<u16>>();
    assert_eq!(graph6(&complete(2)), "A_");
    assert_eq!(graph6(&complete(3)), "Bw");
    assert_eq!(graph6(&[0]), "@");
}

/// Adjacency masks of the graph on `n` vertices with these edges.
fn adjacency(n: usize, edges: &[[u32; 2]]) -> Vec<u16> {
    let mut adjacency = vec![0u16; n];
    for [a, b] in edges {
        adjacency[*a as usize] |= 1 << b;
        adjacency[*b as usize] |= 1 << a;
    }
    adjacency
}

fn permuted(adjacency: &[u16], permutation: &[usize]) -> Vec<u16> {
    let mut out = vec![0u16; adjacency.len()];
    for (v, &row) in adjacency.iter().enumerate() {
        for (w, &image) in permutation.iter().enumerate() {
            if row & (1 << w) != 0 {
                out[permutation[v]] |= 1 << image;
            }
        }
    }
    out
}

/// Whether some permutation maps `a` onto `b` (exhaustively: small graphs only).
fn isomorphic(a: &[u16], b: &[u16]) -> bool {
    fn extend(a: &[u16], b: &[u16], map: &mut Vec<usize>, used: &mut Vec<bool>) -> bool {
        let v = map.len();
        if v == a.len() {
            return true;
        }
        for image in 0..a.len() {
            if used[image] {
                continue;
            }
            let consistent = (0..v).all(|w| (a[v] >> w & 1) == (b[image] >> map[w] & 1));
            if consistent {
                map.push(image);
                used[image] = true;
                if extend(a, b, map, used) {
                    return true;
                }
                map.pop();
                used[image] = false;
            }
        }
        false
    }
    a.len() == b.len() && extend(a, b, &mut Vec::new(), &mut vec![false; a.len()])
}

fn edges_on(n: usize) -> impl Strategy<Value = Vec<[u32; 2]>> {
    let pairs: Vec<[u32; 2]> = (0..n as u32).flat_map(|a| (a + 1..n as u32).map(move |b| [a, b])).collect();
    let count = pairs.len();
    prop::sample::subsequence(pairs, 0..=count)
}

fn graph(max: usize) -> impl Strategy<Value = (usize, Vec<[u32; 2]>)> {
    (1..=max).prop_flat_map(|n| (Just(n), edges_on(n)))
}

/// Two graphs on the same number of vertices (codes are per order).
fn two_graphs(max: usize) -> impl Strategy<Value = (usize, Vec<[u32; 2]>, Vec<[u32; 2]>)> {
    (1..=max).prop_flat_map(|n| (Just(n), edges_on(n), edges_on(n)))
}

#[test]
fn named_graphs_have_their_published_maximum_induced_trees() {
    let cycle = |n: u32| (0..n).map(|v| [v, (v + 1) % n]).collect::<Vec<_>>();
    let petersen: Vec<[u32; 2]> = cycle(5)
        .into_iter()
        .chain((0..5).map(|v| [v, v + 5]))
        .chain((0..5).map(|v| [5 + v, 5 + (v + 2) % 5]))
        .collect();
    let cube: Vec<[u32; 2]> =
        (0..8u32).flat_map(|v| (0..3).map(move |bit| [v, v ^ (1 << bit)])).filter(|[a, b]| a < b).collect();
    let k34: Vec<[u32; 2]> = (0..3).flat_map(|a| (3..7).map(move |b| [a, b])).collect();
    let grid: Vec<[u32; 2]> =
        (0..9u32).flat_map(|v| [(v % 3 < 2).then_some([v, v + 1]), (v < 6).then_some([v, v + 3])]).flatten().collect();
    for (name, order, edges, value) in [
        ("Petersen graph", 10, petersen, 7),
        ("cube graph Q3", 8, cube, 5),
        ("complete bipartite K(3,4)", 7, k34, 5),
        ("3x3 grid graph", 9, grid, 7),
        ("cycle C(9)", 9, cycle(9), 8),
    ] {
        let graph = build(order, None, &edges).unwrap();
        let found = maximum(order, &graph.edges, 1_000_000).unwrap();
        assert!(found.exact, "{name}");
        assert_eq!(found.vertices.len(), value, "{name}");
    }
}

#[test]
fn the_search_refuses_graphs_it_cannot_represent() {
    assert_eq!(maximum(65, &[], 10).unwrap_err(), "order 65 is above 64");
    assert_eq!(maximum(3, &[[0, 3]], 10).unwrap_err(), "edge [0, 3] names a vertex outside 0..3");
    assert_eq!(maximum(64, &[[0, 63]], 10).map(|found| found.nodes > 0), Ok(true));
}

#[test]
fn bad_graphs_are_refused_naming_the_field() {
    for (vertices, labels, edges, path) in [
        (3, None, vec![[0, 3]], "edges.0.1"),
        (3, None, vec![[1, 1]], "edges.0"),
        (3, None, vec![[0, 1], [1, 0]], "edges.1"),
        (65, None, vec![], "vertices"),
        (2, Some(vec!["a".to_owned()]), vec![], "labels"),
        (2, Some(vec!["a".to_owned(), "a".to_owned()]), vec![], "labels.1"),
    ] {
        assert_eq!(build(vertices, labels, &edges).unwrap_err().path, path);
    }
}

/// Whether `vertices` induce a tree: connected, with one edge fewer than vertices.
fn induces_tree(edges: &[[u32; 2]], vertices: &[u32]) -> bool {
    let inside: Vec<&[u32; 2]> = edges.iter().filter(|[a, b]| vertices.contains(a) && vertices.contains(b)).collect();
    if vertices.is_empty() || inside.len() + 1 != vertices.len() {
        return false;
    }
    let mut reached = vec![vertices[0]];
    let mut grew = true;
    while grew {
        grew = false;
        for [a, b] in &inside {
            for (x, y) in [(a, b), (b, a)] {
                if reached.contains(x) && !reached.contains(y) {
                    reached.push(*y);
                    grew = true;
                }
            }
        }
    }
    reached.len() == vertices.len()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn canonical_codes_ignore_vertex_names_and_separate_non_isomorphic_graphs(
        (n, edges, other) in two_graphs(6),
        seed in any::<u64>(),
    ) {
        let a = adjacency(n, &edges);
        // A permutation of the vertices from the seed.
        let mut permutation: Vec<usize> = (0..n).collect();
        let mut state = seed;
        for i in (1..n).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            permutation.swap(i, (state >> 33) as usize % (i + 1));
        }
        prop_assert_eq!(canonical_code(&a), canonical_code(&permuted(&a, &permutation)));
        prop_assert!(isomorphic(&a, &decode(n, canonical_code(&a))));
        let b = adjacency(n, &other);
        prop_assert_eq!(canonical_code(&a) == canonical_code(&b), isomorphic(&a, &b));
    }

    #[test]
    fn the_induced_tree_found_is_a_tree_and_no_subset_induces_a_larger_one((n, edges) in graph(10)) {
        let found = maximum(n as u32, &edges, 10_000_000).unwrap();
        prop_assert!(found.exact);
        prop_assert!(induces_tree(&edges, &found.vertices));
        let largest = (1u32..1 << n)
            .map(|mask| (0..n as u32).filter(|v| mask >> v & 1 == 1).collect::<Vec<u32>>())
            .filter(|vertices| induces_tree(&edges, vertices))
            .map(|vertices| vertices.len())
            .max()
            .unwrap_or(0);
        prop_assert_eq!(found.vertices.len(), largest);
    }
}
