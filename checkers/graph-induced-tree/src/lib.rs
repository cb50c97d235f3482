//! `graph.induced_tree.maximum.verify`: exhausts every vertex subset of a graph
//! of order at most 14 to decide whether a claimed induced tree is maximum. It
//! shares no search code with the producer; larger graphs are unsupported,
//! never guessed.

use jacobian_graph_induced_tree_checker_core::{Judgement, judge};
use jacobian_guest::{
    Checker, Judged, Recipe, Refusal, Scope, Verdict, VerdictKind, artifact_of, export_checkers, read_input_artifact,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const GRAPH_SCHEMA: &str = "jacobian:graph/simple@1";
const RESULT_SCHEMA: &str = "jacobian:graph/induced-tree-result@1";
const MAX_ORDER: usize = 14;

/// The graph and the producer's result.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
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
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("graph", GRAPH_SCHEMA), ("certificate", RESULT_SCHEMA)];
    type Input = VerifyInput;

    fn recipes() -> Vec<Recipe<VerifyInput>> {
        vec![
            Recipe::new("K(2,3)'s largest induced tree, a star on four vertices, is optimal")
                .step(
                    "graph.construct.explicit",
                    json!({"vertices": 5, "edges": [[0, 2], [0, 3], [0, 4], [1, 2], [1, 3], [1, 4]]}),
                )
                .step("graph.induced_tree.maximum", json!({"graph": artifact_of(0, "graph")}))
                .then(VerifyInput { graph: artifact_of(0, "graph"), certificate: artifact_of(1, "certificate") }),
        ]
    }

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
        let best = match judge(n, &graph.edges, &claim.vertices, claim.size) {
            Err(message) => return Err(Refusal::at("graph", message)),
            Ok(Judgement::Rejected(reason)) => {
                return Ok(about.verdict(VerdictKind::Rejected, reason, Vec::new(), scope));
            }
            Ok(Judgement::Accepted { best }) => best,
        };
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
