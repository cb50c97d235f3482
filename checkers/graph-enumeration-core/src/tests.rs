//! The checker alone: class counts equal to OEIS (outside truth), graph6
//! read as nauty writes it, and on random graphs, canonical forms that
//! ignore vertex names and tell non-isomorphic graphs apart.

use proptest::prelude::*;

use crate::canon::{Matrix, canonical};
use crate::{Family, count, distinct_members};

fn oeis(id: &str) -> Vec<u128> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/oracles/sequences.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("outside truth {}: {e}", path.display()));
    let sequences: serde_json::Value = serde_json::from_str(&text).unwrap();
    sequences[id]["values"].as_array().unwrap().iter().map(|v| u128::from(v.as_u64().unwrap())).collect()
}

#[test]
fn class_counts_from_formulas_are_the_oeis_values() {
    let (graphs, connected, trees) = (oeis("A000088"), oeis("A001349"), oeis("A000055"));
    for n in 1..=11u32 {
        assert_eq!(count::graphs(n), Some(graphs[n as usize]), "A000088({n})");
    }
    for n in 1..=10u32 {
        assert_eq!(count::connected(n), Some(connected[n as usize]), "A001349({n})");
    }
    for n in 1..=14u32 {
        assert_eq!(count::trees(n), Some(trees[n as usize]), "A000055({n})");
    }
}

#[test]
fn graph6_is_read_as_nauty_writes_it() {
    let triangle = Matrix::from_graph6("Bw").unwrap();
    assert_eq!((triangle.n, triangle.edges(), triangle.connected()), (3, 3, true));
    let edge = Matrix::from_graph6("A_").unwrap();
    assert_eq!((edge.n, edge.edges()), (2, 1));
    assert_eq!(Matrix::from_graph6("@").unwrap().n, 1);
    assert!(Matrix::from_graph6("E~~~").unwrap_err().contains("padding bits"));
    assert!(Matrix::from_graph6("E~~").unwrap_err().contains("needs 3 data bytes"));
    // The two graphs on 2 vertices, once each; listing one twice is caught.
    let both = ["A?".to_owned(), "A_".to_owned()];
    assert_eq!(distinct_members(&both, 2, Family::All, "all"), Ok(2));
    let twice = ["A_".to_owned(), "A_".to_owned()];
    assert!(distinct_members(&twice, 2, Family::All, "all").unwrap_err().contains("isomorphic"));
    assert!(distinct_members(&both, 2, Family::Connected, "connected").unwrap_err().contains("not a member"));
}

fn matrix(n: usize, edges: &[(usize, usize)]) -> Matrix {
    let mut adjacent = vec![vec![false; n]; n];
    for &(a, b) in edges {
        adjacent[a][b] = true;
        adjacent[b][a] = true;
    }
    Matrix { n, adjacent }
}

/// Whether some bijection maps `a` onto `b`.
fn isomorphic(a: &Matrix, b: &Matrix) -> bool {
    fn extend(a: &Matrix, b: &Matrix, map: &mut Vec<usize>) -> bool {
        let v = map.len();
        if v == a.n {
            return true;
        }
        for image in 0..a.n {
            if map.contains(&image) {
                continue;
            }
            if (0..v).all(|w| a.adjacent[v][w] == b.adjacent[image][map[w]]) {
                map.push(image);
                if extend(a, b, map) {
                    return true;
                }
                map.pop();
            }
        }
        false
    }
    a.n == b.n && extend(a, b, &mut Vec::new())
}

type Edges = Vec<(usize, usize)>;

/// Two random graphs on the same vertices, and a random permutation of those vertices.
fn two_graphs() -> impl Strategy<Value = (usize, Edges, Edges, Vec<usize>)> {
    (1usize..=6).prop_flat_map(|n| {
        let pairs: Vec<(usize, usize)> = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).collect();
        let count = pairs.len();
        (
            Just(n),
            prop::sample::subsequence(pairs.clone(), 0..=count),
            prop::sample::subsequence(pairs, 0..=count),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn canonical_forms_ignore_vertex_names_and_separate_non_isomorphic_graphs(
        (n, edges, other, permutation) in two_graphs(),
    ) {
        let a = matrix(n, &edges);
        let renamed = matrix(n, &edges.iter().map(|&(x, y)| (permutation[x], permutation[y])).collect::<Vec<_>>());
        prop_assert_eq!(canonical(&a), canonical(&renamed));
        let b = matrix(n, &other);
        prop_assert_eq!(canonical(&a) == canonical(&b), isomorphic(&a, &b));
    }
}
