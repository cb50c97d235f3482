//! The soundness harness of the induced-tree checker.
//!
//! Graphs have at most 9 vertices, so the largest induced tree is known by
//! trying every vertex subset here, with a tree test of the harness's own
//! (union–find: no induced edge closes a cycle, and one component). A claim
//! — "these vertices induce a maximum induced tree of this size" — is true
//! when they induce a tree of that size and no subset induces a larger one,
//! of a simple graph. Classes:
//! - `valid`: an optimum found here;
//! - `smaller`: a tree one vertex short of the optimum, claimed optimal;
//! - `larger`: the optimum's size claimed for a non-tree or for more vertices;
//! - `listing`: a vertex repeated or out of range, or the size disagreeing
//!   with the list;
//! - `not_simple`: the optimum of the simple graph claimed for the same
//!   graph written with a loop or a repeated edge (either direction), which
//!   the checker must refuse: the claim is about a simple graph.
//!
//! The differential leg asks networkx (one Python process for the run) for
//! each graph's largest induced tree and whether the claimed vertices
//! induce a tree: every accepted claim must agree with it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jacobian_soundness::{Budget, Rng, Tally, Verdict, run_program, scratch};

use crate::{Judgement, judge};

/// Whether the vertex set `mask` induces a tree (union–find over its edges).
fn induces_tree(n: usize, edges: &[[usize; 2]], mask: u32) -> bool {
    let members = mask.count_ones() as usize;
    if members == 0 {
        return false;
    }
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    let mut joined = 0;
    for &[a, b] in edges {
        if mask >> a & 1 == 1 && mask >> b & 1 == 1 {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra == rb {
                return false; // a cycle
            }
            parent[ra] = rb;
            joined += 1;
        }
    }
    joined + 1 == members
}

/// The largest induced tree's size and one optimum, by trying every subset.
fn optimum(n: usize, edges: &[[usize; 2]]) -> (usize, u32) {
    (1u32..1 << n).filter(|&m| induces_tree(n, edges, m)).map(|m| (m.count_ones() as usize, m)).max().unwrap_or((0, 0))
}

fn graph(rng: &mut Rng) -> (usize, Vec<[usize; 2]>) {
    let n = rng.range(1, 9) as usize;
    let density = rng.range(1, 9);
    let edges = (0..n).flat_map(|a| (a + 1..n).map(move |b| [a, b])).filter(|_| rng.below(10) < density).collect();
    (n, edges)
}

fn vertices(mask: u32) -> Vec<usize> {
    (0..32).filter(|v| mask >> v & 1 == 1).collect()
}

struct Case {
    class: &'static str,
    n: usize,
    /// The edges as the claim gives them.
    edges: Vec<[usize; 2]>,
    vertices: Vec<usize>,
    size: usize,
    truth: bool,
}

fn case(rng: &mut Rng) -> Case {
    let (n, edges) = graph(rng);
    let (best, witness) = optimum(n, &edges);
    let truth_of = |vertices: &[usize], size: usize| {
        let mut mask = 0u32;
        for &v in vertices {
            if v >= n || mask >> v & 1 == 1 {
                return false;
            }
            mask |= 1 << v;
        }
        vertices.len() == size && size == best && induces_tree(n, &edges, mask)
    };
    let class = *rng.pick(&["valid", "valid", "smaller", "larger", "listing", "not_simple"]);
    let (mut vertices, mut size) = (vertices(witness), best);
    let mut claimed_edges = edges.clone();
    match class {
        "smaller" => {
            // Drop a leaf of the optimum's tree (any vertex whose removal keeps a tree).
            if let Some(v) =
                vertices.iter().copied().find(|&v| best > 1 && induces_tree(n, &edges, witness & !(1 << v)))
            {
                vertices.retain(|&u| u != v);
                size = best - 1;
            }
        }
        "larger" => {
            let extra: Vec<usize> = (0..n).filter(|v| witness >> v & 1 == 0).collect();
            if !extra.is_empty() && rng.chance(1, 2) {
                vertices.push(*rng.pick(&extra));
                size = vertices.len();
            } else {
                // Another subset of the optimum's size.
                let mut mask = 0u32;
                while (mask.count_ones() as usize) < best.min(n) {
                    mask |= 1 << rng.below(n as u64);
                }
                vertices = self::vertices(mask);
            }
        }
        "listing" => match rng.below(3) {
            0 if !vertices.is_empty() => vertices.push(vertices[0]),
            1 => vertices.push(n + rng.below(3) as usize),
            _ => size += 1,
        },
        "not_simple" => {
            let a = rng.below(n as u64) as usize;
            match rng.below(3) {
                0 => claimed_edges.push([a, a]),
                1 if !edges.is_empty() => {
                    let [x, y] = *rng.pick(&edges);
                    claimed_edges.push(if rng.chance(1, 2) { [y, x] } else { [x, y] });
                }
                _ => claimed_edges.push([a, a]),
            }
            let at = rng.below(claimed_edges.len() as u64) as usize;
            let last = claimed_edges.len() - 1;
            claimed_edges.swap(at, last);
        }
        _ => {}
    }
    let simple = claimed_edges.len() == edges.len();
    let truth = simple && truth_of(&vertices, size);
    Case { class, n, edges: claimed_edges, vertices, size, truth }
}

fn verdict(case: &Case) -> Verdict {
    Verdict::of(matches!(judge(case.n, &case.edges, &case.vertices, case.size), Ok(Judgement::Accepted { .. })))
}

fn describe(seed: u64, index: u64, case: &Case) -> String {
    format!(
        "seed {seed:#x} instance {index}: order {} edges {:?} vertices {:?} size {}",
        case.n, case.edges, case.vertices, case.size
    )
}

#[test]
fn induced_tree_brute_force_no_false_optimum_is_accepted() {
    let budget = Budget::from_env(20_000, 1);
    let mut tally = Tally::new("induced tree", "brute force");
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed, index);
        let case = case(&mut rng);
        let verdict = verdict(&case);
        tally.judge(case.class, case.truth, verdict, || describe(budget.seed, index, &case));
        assert!(
            !(case.truth && verdict == Verdict::Rejected),
            "a true claim rejected: {}",
            describe(budget.seed, index, &case)
        );
    }
    tally.report();
    tally.assert_both_sides(budget.instances.min(20_000) / 10, budget.instances.min(20_000) / 10);
}

/// networkx's judgement of the same claims (`is_tree` on induced subgraphs).
#[test]
fn induced_tree_agrees_with_networkx() {
    let python = PathBuf::from("python3");
    let probe = run_program(&python, &[Path::new("-c"), Path::new("import networkx")], Duration::from_secs(60));
    let required =
        std::env::var("JACOBIAN_SOUNDNESS_REQUIRE").is_ok_and(|l| l.split(',').any(|r| r.trim() == "networkx"));
    if probe.code != Some(0) {
        assert!(
            !required,
            "the reference networkx is required (JACOBIAN_SOUNDNESS_REQUIRE) but python3 cannot import it"
        );
        println!("networkx: not run (python3 cannot import it)");
        return;
    }
    let budget = Budget::from_env(1_000, 20);
    let cases: Vec<(u64, Case)> =
        budget.indices().map(|index| (index, case(&mut Rng::for_instance(budget.seed ^ 0x7e, index)))).collect();
    let mut input = String::new();
    for (_, case) in &cases {
        let _ = writeln!(input, "{}\t{}\t{}", case.n, serde_like(&case.edges), serde_like_list(&case.vertices));
    }
    let dir = scratch("induced-tree");
    let (source, script) = (dir.join("claims.txt"), dir.join("trees.py"));
    std::fs::write(&source, input).unwrap();
    std::fs::write(&script, NETWORKX_SCRIPT).unwrap();
    let run = run_program(&python, &[&script, &source], Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "networkx failed: {}", run.output);
    let answers: Vec<&str> = run.output.lines().collect();
    assert_eq!(answers.len(), cases.len());
    let mut tally = Tally::new("induced tree", "networkx");
    for ((index, case), answer) in cases.iter().zip(answers) {
        // networkx: "simple best is_tree", simple meaning no loop or repeated edge.
        let fields: Vec<&str> = answer.split_whitespace().collect();
        let (simple, best, tree) = (fields[0] == "1", fields[1].parse::<usize>().unwrap(), fields[2] == "1");
        let theirs = simple && tree && case.size == best && case.vertices.len() == best;
        let describe = || format!("{}\nnetworkx: {answer}", describe(budget.seed ^ 0x7e, *index, case));
        tally.judge(case.class, case.truth, verdict(case), describe);
        tally.compare(verdict(case), Verdict::of(theirs), || None, describe);
    }
    tally.report();
    tally.assert_compared(cases.len() as u64);
    let _ = std::fs::remove_dir_all(&dir);
}

fn serde_like(edges: &[[usize; 2]]) -> String {
    edges.iter().map(|[a, b]| format!("{a}-{b}")).collect::<Vec<_>>().join(",")
}

fn serde_like_list(vertices: &[usize]) -> String {
    vertices.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// Reads `order<TAB>a-b,…<TAB>v,…` lines; prints whether the edge list is
/// simple, the largest induced tree's size, and whether the listed vertices
/// (distinct, in range) induce a tree.
const NETWORKX_SCRIPT: &str = r#"
import sys, itertools
import networkx as nx
for line in open(sys.argv[1]):
    order, edges, vertices = (line.rstrip("\n").split("\t") + [""])[:3]
    n = int(order)
    pairs = [tuple(map(int, e.split("-"))) for e in edges.split(",") if e]
    simple = all(a != b for a, b in pairs) and len({frozenset(p) for p in pairs}) == len(pairs)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(pairs)
    best = 0
    for k in range(n, 0, -1):
        if any(nx.is_tree(g.subgraph(s)) for s in itertools.combinations(range(n), k)):
            best = k
            break
    listed = [int(v) for v in vertices.split(",") if v]
    tree = len(set(listed)) == len(listed) and all(0 <= v < n for v in listed) and len(listed) > 0 \
        and nx.is_tree(g.subgraph(listed))
    print(int(simple), best, int(tree))
"#;
