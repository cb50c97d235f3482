//! Graphs: `graph.construct.explicit` (the validated, canonical simple-graph
//! artifact every graph capability accepts) and `graph.induced_tree.maximum`
//! (branch and bound for a largest vertex set inducing a tree), and
//! `graph.enumerate.nonisomorphic` (every graph, connected graph or tree of a
//! small order up to isomorphism, as canonical graph6 forms).

use jacobian_graph_core::{enumerate, induced_tree, simple};

use jacobian_guest::{
    Capability, Check, InputKind, Produced, Qualifier, Recipe, Refusal, Scope, artifact_of, export_capabilities,
    read_input_artifact,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Schema of the simple-graph artifact.
pub const GRAPH_SCHEMA: &str = "jacobian:graph/simple@1";
const TREE_SCHEMA: &str = "jacobian:graph/induced-tree-result@1";
/// The exhaustive check of a maximum induced tree.
const INDUCED_TREE_CHECK: Check = Check {
    role: "graph.induced_tree.maximum",
    verifier: "graph.induced_tree.maximum.verify",
    formats: &["induced-tree-optimum/1"],
};
/// The independent check of an enumeration (canonical forms and class counts).
const ENUMERATION_CHECK: Check = Check {
    role: "graph.enumerate.nonisomorphic",
    verifier: "graph.enumerate.nonisomorphic.verify",
    formats: &["graph-enumeration/1"],
};
/// Schema of the enumeration artifact.
pub const ENUMERATION_SCHEMA: &str = "jacobian:graph/enumeration@1";
/// Largest order enumerated for all graphs and connected graphs (274,668 graphs on 9 vertices).
pub const MAX_ENUMERATION_ORDER: usize = 9;
/// Largest order enumerated for trees (19,320 trees on 16 vertices).
pub const MAX_TREE_ORDER: usize = 16;

/// A complete vertex/edge description of a simple undirected graph.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConstructInput {
    /// Number of vertices, numbered 0..vertices (at most 64).
    #[schemars(range(min = 1, max = 64))]
    pub vertices: u32,
    /// Optional names of the vertices, one per vertex, distinct.
    #[serde(default)]
    pub labels: Option<Vec<String>>,
    /// Undirected edges as vertex pairs; no self-loops, no duplicates (either direction).
    #[schemars(length(max = 2016))]
    pub edges: Vec<[u32; 2]>,
}

/// The stored graph's summary.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConstructOutput {
    /// Vertices.
    pub order: u32,
    /// Edges.
    pub size: usize,
}

/// The canonical simple graph.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Graph {
    pub order: u32,
    pub labels: Vec<String>,
    /// Edges `[u, v]` with `u < v`, sorted.
    pub edges: Vec<[u32; 2]>,
}

pub struct ConstructExplicit;

/// The cycle on five vertices, as a construct request.
pub fn five_cycle() -> ConstructInput {
    ConstructInput { vertices: 5, labels: None, edges: vec![[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]] }
}

impl Capability for ConstructExplicit {
    const ID: &'static str = "graph.construct.explicit";
    const TITLE: &'static str = "Build a simple graph from vertices and edges";
    const OUTCOME: &'static str = "a validated, canonical simple-graph artifact that every graph capability accepts";
    const DESCRIPTION: &'static str = "Validates the complete request before storing anything: at most 64 vertices and \
2016 edges; every endpoint in 0..vertices; no self-loops; no duplicate edges in either direction; labels (optional) \
one per vertex and distinct. Edges are stored as sorted pairs [u, v] with u < v.";
    const TAGS: &'static [&'static str] = &["graph", "construct", "simple_graph", "vertices", "edges"];
    const ARTIFACT_TYPES: &'static [&'static str] = &[GRAPH_SCHEMA];
    type Input = ConstructInput;
    type Output = ConstructOutput;

    fn examples() -> Vec<(&'static str, ConstructInput)> {
        vec![("a path on three vertices", ConstructInput { vertices: 3, labels: None, edges: vec![[0, 1], [1, 2]] })]
    }

    fn run(input: ConstructInput) -> Result<Produced<ConstructOutput>, Refusal> {
        let graph = simple::build(input.vertices, input.labels, &input.edges)
            .map_err(|invalid| Refusal::at(invalid.path, invalid.message))?;
        let output = ConstructOutput { order: graph.order, size: graph.edges.len() };
        let graph = Graph { order: graph.order, labels: graph.labels, edges: graph.edges };
        Ok(Produced::computed(output, Scope::exhaustive("exactly the supplied vertices and edges"))
            .qualifiers(&[Qualifier::Exact, Qualifier::Deterministic])
            .artifact("graph", GRAPH_SCHEMA, &graph))
    }
}

/// A stored graph to search.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeInput {
    /// URI of a `jacobian:graph/simple@1` artifact.
    #[schemars(regex(pattern = r"^artifact://sha256/[0-9a-f]{64}$"))]
    pub graph: String,
    /// Search nodes allowed; when they run out the best tree found is reported, not claimed optimal.
    #[serde(default = "default_nodes")]
    #[schemars(range(min = 1, max = 1_000_000_000))]
    pub max_nodes: u64,
}

fn default_nodes() -> u64 {
    50_000_000
}

/// The largest induced tree found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TreeOutput {
    /// Its vertices, ascending.
    pub vertices: Vec<u32>,
    /// Its size (the claimed optimum when `exact`).
    pub size: usize,
    /// Whether the search finished, so that `size` is the maximum.
    pub exact: bool,
    /// Search nodes visited.
    pub nodes: u64,
}

pub struct MaximumInducedTree;

impl Capability for MaximumInducedTree {
    const ID: &'static str = "graph.induced_tree.maximum";
    const TITLE: &'static str = "Find a maximum induced tree of a graph";
    const OUTCOME: &'static str =
        "a largest vertex set inducing a tree, the claimed optimum and whether the search was exhaustive";
    const DESCRIPTION: &'static str = "Branch and bound over connected induced trees grown from each root in turn, \
pruned by the vertices that can still join. When the search finishes the size is claimed optimal (exact); when \
max_nodes runs out the best tree found is returned with exact = false and no optimality claim. Check optimality with \
graph.induced_tree.maximum.verify (orders up to 14).";
    const TAGS: &'static [&'static str] =
        &["graph", "induced_tree", "tree", "optimization", "branch_and_bound", "maximum"];
    const INPUT_KIND: InputKind = InputKind::TypedArtifact;
    const CHECKS: &'static [Check] = &[INDUCED_TREE_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[TREE_SCHEMA];
    const ACCEPTS: &'static [(&'static str, &'static str)] = &[("graph", GRAPH_SCHEMA)];
    type Input = TreeInput;
    type Output = TreeOutput;

    fn recipes() -> Vec<Recipe<TreeInput>> {
        vec![
            Recipe::new("the 5-cycle's largest induced tree is a path on four vertices")
                .step(ConstructExplicit::ID, five_cycle())
                .then(TreeInput { graph: artifact_of(0, "graph"), max_nodes: 10_000 }),
        ]
    }

    fn run(input: TreeInput) -> Result<Produced<TreeOutput>, Refusal> {
        let envelope = read_input_artifact("graph", &input.graph, GRAPH_SCHEMA)?;
        let graph: Graph = serde_json::from_value(envelope.content).map_err(|e| Refusal::at("graph", e.to_string()))?;
        let found =
            induced_tree::maximum(graph.order, &graph.edges, input.max_nodes).map_err(|e| Refusal::at("graph", e))?;
        let vertices = found.vertices;
        let output =
            TreeOutput { size: vertices.len(), vertices: vertices.clone(), exact: found.exact, nodes: found.nodes };
        let result = serde_json::json!({
            "format": "induced-tree-optimum/1", "graph": input.graph, "vertices": vertices,
            "size": output.size, "exact": output.exact,
        });
        if !found.exact {
            let scope = Scope::partial(format!(
                "max_nodes ({}) ran out; a tree of this size exists, larger ones may too",
                input.max_nodes
            ));
            return Ok(Produced::heuristic(output, scope).qualifiers(&[Qualifier::Bounded, Qualifier::Deterministic]));
        }
        Ok(Produced::computed(
            output,
            Scope::exhaustive("every connected induced tree of the graph was bounded or examined"),
        )
        .qualifiers(&[Qualifier::Exact, Qualifier::Exhaustive, Qualifier::Deterministic])
        .artifact("certificate", TREE_SCHEMA, &result)
        .obligation("an independent check that no larger induced tree exists")
        .verify_with(INDUCED_TREE_CHECK.route("induced-tree-optimum/1", "certificate")))
    }
}

/// The family of graphs to enumerate.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FamilyName {
    /// Every simple graph.
    All,
    /// Connected simple graphs.
    Connected,
    /// Trees (connected, acyclic).
    Trees,
}

/// Which graphs to enumerate.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnumerateInput {
    /// Number of vertices: 1..=9 for `all` and `connected`, 1..=16 for `trees`.
    #[schemars(range(min = 1, max = 16))]
    pub order: usize,
    /// `all`, `connected` or `trees`.
    pub family: FamilyName,
}

/// The size of the enumeration.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EnumerateOutput {
    /// The family enumerated.
    pub family: FamilyName,
    /// Number of vertices.
    pub order: usize,
    /// Number of isomorphism classes (graphs in the artifact).
    pub count: usize,
    /// Extensions canonicalized on the way.
    pub candidates: u64,
}

pub struct EnumerateNonisomorphic;

impl Capability for EnumerateNonisomorphic {
    const ID: &'static str = "graph.enumerate.nonisomorphic";
    const TITLE: &'static str = "Enumerate all graphs, connected graphs or trees of order n up to isomorphism";
    const OUTCOME: &'static str =
        "one canonical graph6 form per isomorphism class, ascending by canonical code, with the count";
    const DESCRIPTION: &'static str = "Grows the classes on k vertices into those on k + 1 by adding a vertex of \
minimum degree (a leaf for trees) in every possible way, canonicalizes each candidate (equitable partition refinement \
and individualization, twins pruned) and keeps one graph per canonical code. Orders 1..=9 for all and connected \
graphs, 1..=16 for trees. The artifact lists graph6 strings; check it with graph.enumerate.nonisomorphic.verify, which \
recomputes canonical forms with its own code and compares the count with Burnside's lemma (Otter's formula for trees).";
    const TAGS: &'static [&'static str] = &[
        "graph",
        "enumeration",
        "isomorphism",
        "canonical_form",
        "nonisomorphic",
        "trees",
        "connected",
        "graph6",
        "unlabeled",
    ];
    const CHECKS: &'static [Check] = &[ENUMERATION_CHECK];
    const ARTIFACT_TYPES: &'static [&'static str] = &[ENUMERATION_SCHEMA];
    type Input = EnumerateInput;
    type Output = EnumerateOutput;

    fn examples() -> Vec<(&'static str, EnumerateInput)> {
        vec![("the six trees on six vertices", EnumerateInput { order: 6, family: FamilyName::Trees })]
    }

    fn run(input: EnumerateInput) -> Result<Produced<EnumerateOutput>, Refusal> {
        let (family, bound) = match input.family {
            FamilyName::All => (enumerate::Family::All, MAX_ENUMERATION_ORDER),
            FamilyName::Connected => (enumerate::Family::Connected, MAX_ENUMERATION_ORDER),
            FamilyName::Trees => (enumerate::Family::Trees, MAX_TREE_ORDER),
        };
        if input.order == 0 || input.order > bound {
            return Err(Refusal::at("order", format!("must be between 1 and {bound} for this family")));
        }
        let n = input.order;
        let (codes, candidates) = enumerate::enumerate(family, n);
        let graphs: Vec<String> = codes.iter().map(|&code| enumerate::graph6(&enumerate::decode(n, code))).collect();
        let output = EnumerateOutput { family: input.family, order: n, count: graphs.len(), candidates };
        // Serialized from borrowed parts: the listing can be megabytes.
        #[derive(Serialize)]
        struct Listing<'a> {
            format: &'static str,
            family: FamilyName,
            order: usize,
            count: usize,
            graphs: &'a [String],
        }
        let artifact = Listing {
            format: "graph-enumeration/1",
            family: input.family,
            order: n,
            count: graphs.len(),
            graphs: &graphs,
        };
        let scope = Scope::exhaustive(format!(
            "every {} on exactly {n} vertices, one per isomorphism class",
            match input.family {
                FamilyName::All => "simple graph",
                FamilyName::Connected => "connected simple graph",
                FamilyName::Trees => "tree",
            }
        ));
        Ok(Produced::computed(output, scope)
            .qualifiers(&[Qualifier::Exact, Qualifier::Exhaustive, Qualifier::Deterministic])
            .artifact("enumeration", ENUMERATION_SCHEMA, &artifact)
            .obligation("an independent check of pairwise non-isomorphism and of the number of classes")
            .verify_with(ENUMERATION_CHECK.route("graph-enumeration/1", "enumeration")))
    }
}

export_capabilities!(ConstructExplicit, MaximumInducedTree, EnumerateNonisomorphic);
