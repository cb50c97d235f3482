//! `graph.induced_tree.maximum.verify`: exhausts every vertex subset of a graph
//! of order at most 14 to decide whether a claimed induced tree is maximum. It
//! shares no search code with the producer; larger graphs are unsupported,
//! never guessed.

use jacobian_guest::{Checker, Judged, Refusal, Scope, Verdict, VerdictKind, export_checkers, read_input_artifact};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

const GRAPH_SCHEMA: &str = "jacobian:graph/simple@1";
const RESULT_SCHEMA: &str = "jacobian:graph/induced-tree-result@1";
const MAX_ORDER: usize = 14;

/// The graph and the producer's result.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyInput {
    /// URI of the `jacobian:graph/simple@1` artifact.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub graph: String,
    /// URI of the `jacobian:graph/induced-tree-result@1` artifact (the claim).
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub certificate: String,
}

#[derive(Deserialize)]
struct Graph {
    order: usize,
    edges: Vec<[usize; 2]>,
}

#[derive(Deserialize)]
struct Claim {
    graph: String,
    vertices: Vec<usize>,
    size: usize,
}

/// Whether the vertices of `set` induce a tree: connected with |set| - 1 edges.
fn is_tree(neighbours: &[Vec<usize>], set: &[bool]) -> bool {
    let members: Vec<usize> = (0..set.len()).filter(|&v| set[v]).collect();
    let Some(&start) = members.first() else { return false };
    let edges: usize = members.iter().map(|&v| neighbours[v].iter().filter(|&&u| set[u]).count()).sum::<usize>() / 2;
    if edges + 1 != members.len() {
        return false;
    }
    let mut reached = vec![false; set.len()];
    let mut stack = vec![start];
    reached[start] = true;
    let mut count = 1;
    while let Some(v) = stack.pop() {
        for &u in &neighbours[v] {
            if set[u] && !reached[u] {
                reached[u] = true;
                count += 1;
                stack.push(u);
            }
        }
    }
    count == members.len()
}

pub struct InducedTreeOptimum;

impl Checker for InducedTreeOptimum {
    const ROLE: &'static str = "graph.induced_tree.maximum";
    const CAPABILITY_ID: &'static str = "graph.induced_tree.maximum.verify";
    const TITLE: &'static str = "Check a maximum induced tree by exhausting all vertex subsets";
    const OUTCOME: &'static str =
        "whether a claimed induced tree is a tree and no vertex subset induces a larger one (order ≤ 14)";
    const DESCRIPTION: &'static str = "Reads the graph and the producer's result (which must name the same graph), \
checks that the claimed vertices induce a tree, and examines every one of the 2^n vertex subsets for a larger induced \
tree. Graphs of order above 14 get UNSUPPORTED, never a guess.";
    const TAGS: &'static [&'static str] = &["graph", "induced_tree", "verification", "checker", "exhaustive"];
    const CERTIFICATE_FORMATS: &'static [&'static str] = &["induced-tree-optimum/1"];
    const ARTIFACT_TYPES: &'static [&'static str] = &[GRAPH_SCHEMA, RESULT_SCHEMA];
    type Input = VerifyInput;

    fn check(input: VerifyInput) -> Result<Verdict, Refusal> {
        let graph_envelope = read_input_artifact("graph", &input.graph, GRAPH_SCHEMA)?;
        let graph: Graph =
            serde_json::from_value(graph_envelope.content).map_err(|e| Refusal::at("graph", e.to_string()))?;
        let result = read_input_artifact("certificate", &input.certificate, RESULT_SCHEMA)?;
        let claim: Claim =
            serde_json::from_value(result.content).map_err(|e| Refusal::at("certificate", e.to_string()))?;
        let n = graph.order;
        let claim_value = json!({"graph": input.graph, "statement": "the maximum induced tree has this many vertices", "size": claim.size});
        let semantics = json!({"induced_tree": "a vertex set whose induced subgraph is connected and acyclic", "graph": "simple, undirected"});
        let candidate = json!({"vertices": claim.vertices, "lineage": result.lineage});
        let about = Judged { claim: claim_value, semantics, candidate };
        let scope = Scope::exhaustive(format!("every vertex subset of this graph of order {n}"));
        if claim.graph != input.graph {
            return Ok(about.verdict(VerdictKind::Rejected, "the result is about another graph", Vec::new(), scope));
        }
        if n > MAX_ORDER {
            let partial =
                Scope::partial(format!("order {n} exceeds this checker's bound of {MAX_ORDER}; nothing was checked"));
            return Ok(about.verdict(
                VerdictKind::Unsupported,
                format!("order {n} is above {MAX_ORDER}"),
                Vec::new(),
                partial,
            ));
        }
        let mut neighbours = vec![Vec::new(); n];
        for &[a, b] in &graph.edges {
            if a >= n || b >= n {
                return Err(Refusal::at("graph", "edge endpoint out of range"));
            }
            neighbours[a].push(b);
            neighbours[b].push(a);
        }
        let mut claimed = vec![false; n];
        for &v in &claim.vertices {
            if v >= n || claimed[v] {
                return Ok(about.verdict(
                    VerdictKind::Rejected,
                    format!("vertex {v} is out of range or repeated"),
                    Vec::new(),
                    scope,
                ));
            }
            claimed[v] = true;
        }
        if claim.vertices.len() != claim.size || !is_tree(&neighbours, &claimed) {
            return Ok(about.verdict(
                VerdictKind::Rejected,
                "the claimed vertices do not induce a tree of the claimed size",
                Vec::new(),
                scope,
            ));
        }
        let mut best = 0usize;
        let mut witness = 0u32;
        let mut set = vec![false; n];
        for mask in 1u32..(1u32 << n) {
            let size = mask.count_ones() as usize;
            if size <= best {
                continue;
            }
            for (v, slot) in set.iter_mut().enumerate() {
                *slot = mask & (1 << v) != 0;
            }
            if is_tree(&neighbours, &set) {
                best = size;
                witness = mask;
            }
        }
        if best != claim.size {
            let larger: Vec<usize> = (0..n).filter(|v| witness & (1 << v) != 0).collect();
            return Ok(about.verdict(
                VerdictKind::Rejected,
                format!("the claimed optimum is {}, but {larger:?} induces a tree of {best} vertices", claim.size),
                Vec::new(),
                scope,
            ));
        }
        Ok(about.verdict(
            VerdictKind::Accepted,
            format!("no vertex subset induces a tree larger than {best}"),
            vec![
                format!("the claimed {} vertices induce a tree", claim.size),
                format!(
                    "all {} vertex subsets examined; the maximum induced tree has {best} vertices",
                    (1u64 << n) - 1
                ),
            ],
            scope,
        ))
    }
}

export_checkers!(InducedTreeOptimum);
