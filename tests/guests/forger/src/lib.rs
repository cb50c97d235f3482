//! Test guest: a producer plugin as an adversary would write it, with the
//! SDK alone. Its certificates are routed, by role, to the bundled
//! checkers, and each is forged in a shape a checker that skips a rule
//! accepts (the holes found in checker review):
//! - `test.forger.graph`: a `jacobian:graph/simple@1` artifact of K2 with
//!   its edge written twice, `[[0, 1], [1, 0]]`;
//! - `test.forger.induced_tree`: the claim that a graph's maximum induced
//!   tree has one vertex (K2 has a two-vertex tree);
//! - `test.forger.groebner`: the claim that `x - 1/4` is the reduced
//!   Gröbner basis of `x + 1/-2*2`, which the usual reading makes x - 1.

use jacobian_guest::{
    Capability, Check, InputKind, Produced, Recipe, Refusal, Scope, artifact_of, export_capabilities,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const INDUCED_TREE_CHECK: Check = Check {
    role: "graph.induced_tree.maximum",
    verifier: "graph.induced_tree.maximum.verify",
    formats: &["induced-tree-optimum/1"],
};
const GROEBNER_CHECK: Check = Check {
    role: "polynomial.groebner.certificate",
    verifier: "polynomial.groebner_basis.verify",
    formats: &["groebner-certificate/2"],
};
const GRAPH_SCHEMA: &str = "jacobian:graph/simple@1";
const TREE_SCHEMA: &str = "jacobian:graph/induced-tree-result@1";
const GROEBNER_SCHEMA: &str = "jacobian:polynomial/groebner-certificate@2";

/// Nothing to ask.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

/// A graph to make a claim about.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OfGraph {
    /// URI of a `jacobian:graph/simple@1` artifact.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub graph: String,
}

/// What was forged.
#[derive(Serialize, JsonSchema)]
pub struct Forged {
    /// A line on it.
    pub forged: String,
}

fn forged(what: &str) -> Forged {
    Forged { forged: what.to_owned() }
}

pub struct Graph;

impl Capability for Graph {
    const ID: &'static str = "test.forger.graph";
    const TITLE: &'static str = "K2 with its edge written twice";
    const OUTCOME: &'static str = "a graph artifact that is not simple";
    const DESCRIPTION: &'static str = "Emits a jacobian:graph/simple@1 artifact with edges [[0, 1], [1, 0]].";
    const TAGS: &'static [&'static str] = &["test", "forger"];
    const ARTIFACT_TYPES: &'static [&'static str] = &[GRAPH_SCHEMA];
    type Input = Nothing;
    type Output = Forged;

    fn examples() -> Vec<(&'static str, Nothing)> {
        vec![("the doubled edge", Nothing {})]
    }

    fn run(_: Nothing) -> Result<Produced<Forged>, Refusal> {
        let graph = json!({"order": 2, "edges": [[0, 1], [1, 0]]});
        Ok(Produced::computed(forged("K2, its edge twice"), Scope::exhaustive("one graph")).artifact(
            "graph",
            GRAPH_SCHEMA,
            &graph,
        ))
    }
}

pub struct InducedTree;

impl Capability for InducedTree {
    const ID: &'static str = "test.forger.induced_tree";
    const TITLE: &'static str = "Claim that a graph's maximum induced tree has one vertex";
    const OUTCOME: &'static str = "a false optimum, routed to the bundled checker";
    const DESCRIPTION: &'static str = "Claims vertex 0 alone is a maximum induced tree of the graph.";
    const TAGS: &'static [&'static str] = &["test", "forger"];
    const INPUT_KIND: InputKind = InputKind::TypedArtifact;
    const CHECKS: &'static [Check] = &[INDUCED_TREE_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[TREE_SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("graph", GRAPH_SCHEMA)];
    type Input = OfGraph;
    type Output = Forged;

    fn recipes() -> Vec<Recipe<OfGraph>> {
        vec![
            Recipe::new("a one-vertex optimum of the doubled K2")
                .step(Graph::ID, json!({}))
                .then(OfGraph { graph: artifact_of(0, "graph") }),
        ]
    }

    fn run(input: OfGraph) -> Result<Produced<Forged>, Refusal> {
        let claim = json!({"format": "induced-tree-optimum/1", "graph": input.graph, "vertices": [0], "size": 1, "exact": true});
        Ok(Produced::computed(forged("a one-vertex optimum"), Scope::exhaustive("one graph"))
            .artifact("certificate", TREE_SCHEMA, &claim)
            .verify_with(INDUCED_TREE_CHECK.route("induced-tree-optimum/1", "certificate")))
    }
}

pub struct Groebner;

impl Capability for Groebner {
    const ID: &'static str = "test.forger.groebner";
    const TITLE: &'static str = "Claim x - 1/4 is the basis of x + 1/-2*2";
    const OUTCOME: &'static str = "a Gröbner certificate read one way by a lazy parser, routed to the bundled checker";
    const DESCRIPTION: &'static str =
        "Emits a groebner-certificate/2 with generators [x + 1/-2*2] and basis [x - 1/4].";
    const TAGS: &'static [&'static str] = &["test", "forger"];
    const CHECKS: &'static [Check] = &[GROEBNER_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[GROEBNER_SCHEMA];
    type Input = Nothing;
    type Output = Forged;

    fn examples() -> Vec<(&'static str, Nothing)> {
        vec![("the misread generator", Nothing {})]
    }

    fn run(_: Nothing) -> Result<Produced<Forged>, Refusal> {
        let certificate = json!({
            "format": "groebner-certificate/2", "vars": ["x"], "order": "lex",
            "generators": ["x + 1/-2*2"], "basis": ["x - 1/4"], "trace": {"order": "lex", "steps": []},
        });
        Ok(Produced::computed(forged("x - 1/4"), Scope::exhaustive("one ideal"))
            .artifact("certificate", GROEBNER_SCHEMA, &certificate)
            .verify_with(GROEBNER_CHECK.route("groebner-certificate/2", "certificate")))
    }
}

export_capabilities!(Graph, InducedTree, Groebner);
