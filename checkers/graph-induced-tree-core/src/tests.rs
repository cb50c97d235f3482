//! The checker alone: named graphs' published maximum induced trees (outside
//! truth), wrong claims rejected with their reason, and on random graphs,
//! `is_tree` agreeing with a tree's definition (connected, acyclic).

use proptest::prelude::*;

use crate::{Judgement, is_tree, judge, largest};

fn neighbours(n: usize, edges: &[[usize; 2]]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); n];
    for &[a, b] in edges {
        out[a].push(b);
        out[b].push(a);
    }
    out
}

fn petersen() -> Vec<[usize; 2]> {
    (0..5).flat_map(|v| [[v, (v + 1) % 5], [v, v + 5], [5 + v, 5 + (v + 2) % 5]]).collect()
}

#[test]
fn named_graphs_have_their_published_maximum_induced_trees() {
    let cube: Vec<[usize; 2]> =
        (0..8usize).flat_map(|v| (0..3).map(move |b| [v, v ^ (1 << b)])).filter(|[a, b]| a < b).collect();
    let grid: Vec<[usize; 2]> =
        (0..9).flat_map(|v| [(v % 3 < 2).then_some([v, v + 1]), (v < 6).then_some([v, v + 3])]).flatten().collect();
    let k34: Vec<[usize; 2]> = (0..3).flat_map(|a| (3..7).map(move |b| [a, b])).collect();
    let complete: Vec<[usize; 2]> = (0..6).flat_map(|a| (a + 1..6).map(move |b| [a, b])).collect();
    for (order, edges, value) in [(10, petersen(), 7), (8, cube, 5), (9, grid, 7), (7, k34, 5), (6, complete, 2)] {
        assert_eq!(largest(&neighbours(order, &edges)).0, value, "{edges:?}");
    }
}

#[test]
fn claims_are_judged_and_wrong_ones_rejected_with_their_reason() {
    let p = petersen();
    let mask = largest(&neighbours(10, &p)).1;
    let optimum: Vec<usize> = (0..10).filter(|v| mask >> v & 1 == 1).collect();
    assert_eq!(judge(10, &p, &optimum, 7), Ok(Judgement::Accepted { best: 7 }));
    let rejected = |vertices: &[usize], size: usize| match judge(10, &p, vertices, size) {
        Ok(Judgement::Rejected(reason)) => reason,
        other => panic!("{other:?}"),
    };
    assert!(rejected(&optimum[..6], 6).contains("the claimed optimum is 6, but"));
    assert!(rejected(&[0, 1, 2, 3, 4], 5).contains("do not induce a tree"), "a 5-cycle");
    assert!(rejected(&[0, 0], 2).contains("out of range or repeated"));
    assert!(rejected(&optimum, 6).contains("do not induce a tree of the claimed size"));
    assert_eq!(judge(3, &[[0, 3]], &[0], 1), Err("edges.0: [0, 3] names a vertex outside 0..3".into()));
    let error = judge(32, &[], &[0], 1).expect_err("too large for an exhaustive check");
    assert_eq!(error, "order 32 is above 31, the largest an exhaustive check examines");
}

fn graph() -> impl Strategy<Value = (usize, Vec<[usize; 2]>)> {
    (1usize..=7).prop_flat_map(|n| {
        let pairs: Vec<[usize; 2]> = (0..n).flat_map(|a| (a + 1..n).map(move |b| [a, b])).collect();
        let count = pairs.len();
        (Just(n), prop::sample::subsequence(pairs, 0..=count))
    })
}

/// A tree by definition: no cycle (union-find over its edges) and connected.
fn tree_by_definition(n: usize, edges: &[[usize; 2]], set: &[bool]) -> bool {
    let members: Vec<usize> = (0..n).filter(|&v| set[v]).collect();
    if members.is_empty() {
        return false;
    }
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], v: usize) -> usize {
        if parent[v] == v {
            v
        } else {
            let r = root(parent, parent[v]);
            parent[v] = r;
            r
        }
    }
    for &[a, b] in edges.iter().filter(|[a, b]| set[*a] && set[*b]) {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        if ra == rb {
            return false;
        }
        parent[ra] = rb;
    }
    let first = root(&mut parent, members[0]);
    members.iter().all(|&v| root(&mut parent, v) == first)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn is_tree_is_a_trees_definition((n, edges) in graph(), mask in any::<u32>()) {
        let set: Vec<bool> = (0..n).map(|v| mask >> v & 1 == 1).collect();
        prop_assert_eq!(is_tree(&neighbours(n, &edges), &set), tree_by_definition(n, &edges, &set));
    }
}

/// The published hole: a repeated edge was counted twice, so K2 given as
/// `[[0, 1], [1, 0]]` had no 2-vertex tree and a 1-vertex optimum was accepted.
#[test]
fn a_graph_with_a_loop_or_a_repeated_edge_is_not_judged() {
    for edges in [vec![[0, 1], [1, 0]], vec![[0, 1], [0, 1]], vec![[0, 0]], vec![[0, 1], [1, 1]]] {
        let error = crate::judge(2, &edges, &[0], 1).expect_err("a graph that is not simple");
        assert!(error.contains("must be simple"), "{edges:?}: {error}");
    }
    assert_eq!(crate::judge(2, &[[0, 1]], &[0, 1], 2), Ok(crate::Judgement::Accepted { best: 2 }));
}

/// A rejected optimum names a larger induced tree, and it is one.
#[test]
fn a_rejected_optimum_names_a_larger_induced_tree_that_is_one() {
    let path = [[0, 1], [1, 2], [2, 3]];
    let Ok(Judgement::Rejected(reason)) = judge(4, &path, &[0], 1) else { panic!("rejected") };
    assert_eq!(reason, "the claimed optimum is 1, but [0, 1, 2, 3] induces a tree of 4 vertices");
    let star = [[0, 1], [0, 2], [0, 3], [1, 2]];
    let Ok(Judgement::Rejected(reason)) = judge(4, &star, &[1], 1) else { panic!("rejected") };
    assert_eq!(reason, "the claimed optimum is 1, but [0, 1, 3] induces a tree of 3 vertices");
}
