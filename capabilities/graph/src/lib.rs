//! Graphs: `graph.construct.explicit` (the validated, canonical simple-graph
//! artifact every graph capability accepts) and `graph.induced_tree.maximum`
//! (branch and bound for a largest vertex set inducing a tree), and
//! `graph.enumerate.nonisomorphic` (every graph, connected graph or tree of a
//! small order up to isomorphism, as canonical graph6 forms).

pub mod enumerate;

use jacobian_guest::{
    Capability, Check, InputKind, Produced, Qualifier, Refusal, Scope, export_capabilities, read_input_artifact,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Schema of the simple-graph artifact.
pub const GRAPH_SCHEMA: &str = "jacobian:graph/simple@1";
const TREE_SCHEMA: &str = "jacobian:graph/induced-tree-result@1";
const MAX_ORDER: u32 = 64;
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
        let n = input.vertices;
        if n == 0 || n > MAX_ORDER {
            return Err(Refusal::at("vertices", format!("must be between 1 and {MAX_ORDER}")));
        }
        let labels = match input.labels {
            Some(labels) => {
                if labels.len() != n as usize {
                    return Err(Refusal::at("labels", format!("{} labels for {n} vertices", labels.len())));
                }
                for (i, label) in labels.iter().enumerate() {
                    if label.is_empty() || label.len() > 32 || labels[..i].contains(label) {
                        return Err(Refusal::at(format!("labels.{i}"), "labels are distinct, 1..=32 bytes"));
                    }
                }
                labels
            }
            None => (0..n).map(|v| v.to_string()).collect(),
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut edges = Vec::with_capacity(input.edges.len());
        for (i, [a, b]) in input.edges.iter().copied().enumerate() {
            for (j, end) in [a, b].into_iter().enumerate() {
                if end >= n {
                    return Err(Refusal::at(format!("edges.{i}.{j}"), format!("vertex {end} is out of range 0..{n}")));
                }
            }
            if a == b {
                return Err(Refusal::at(format!("edges.{i}"), format!("self-loop at vertex {a}")));
            }
            let edge = [a.min(b), a.max(b)];
            if !seen.insert(edge) {
                return Err(Refusal::at(format!("edges.{i}"), format!("duplicate edge {{{}, {}}}", edge[0], edge[1])));
            }
            edges.push(edge);
        }
        edges.sort_unstable();
        let output = ConstructOutput { order: n, size: edges.len() };
        let graph = Graph { order: n, labels, edges };
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
    type Input = TreeInput;
    type Output = TreeOutput;

    fn run(input: TreeInput) -> Result<Produced<TreeOutput>, Refusal> {
        let envelope = read_input_artifact("graph", &input.graph, GRAPH_SCHEMA)?;
        let graph: Graph = serde_json::from_value(envelope.content).map_err(|e| Refusal::at("graph", e.to_string()))?;
        let mut search = Search::new(&graph, input.max_nodes);
        search.run();
        let vertices: Vec<u32> = (0..graph.order).filter(|v| search.best & (1u64 << v) != 0).collect();
        let output = TreeOutput {
            size: vertices.len(),
            vertices: vertices.clone(),
            exact: !search.out_of_nodes,
            nodes: search.nodes,
        };
        let result = serde_json::json!({
            "format": "induced-tree-optimum/1", "graph": input.graph, "vertices": vertices,
            "size": output.size, "exact": output.exact,
        });
        if search.out_of_nodes {
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

/// Branch and bound with vertex sets as 64-bit masks.
struct Search {
    adjacency: Vec<u64>,
    all: u64,
    best: u64,
    nodes: u64,
    max_nodes: u64,
    out_of_nodes: bool,
}

impl Search {
    fn new(graph: &Graph, max_nodes: u64) -> Search {
        let mut adjacency = vec![0u64; graph.order as usize];
        for [a, b] in &graph.edges {
            adjacency[*a as usize] |= 1 << b;
            adjacency[*b as usize] |= 1 << a;
        }
        let all = if graph.order == 64 { u64::MAX } else { (1u64 << graph.order) - 1 };
        Search { adjacency, all, best: 0, nodes: 0, max_nodes, out_of_nodes: false }
    }

    fn run(&mut self) {
        let n = self.adjacency.len();
        for root in 0..n {
            // Trees containing a smaller root were all considered already.
            let excluded = (1u64 << root) - 1;
            let tree = 1u64 << root;
            self.grow(tree, excluded | tree);
            if self.out_of_nodes {
                return;
            }
        }
    }

    /// Vertices outside the tree with exactly one neighbour in it.
    fn attachable(&self, tree: u64, blocked: u64) -> u64 {
        let mut out = 0;
        let mut rest = self.all & !blocked;
        while rest != 0 {
            let v = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if (self.adjacency[v] & tree).count_ones() == 1 {
                out |= 1 << v;
            }
        }
        out
    }

    fn grow(&mut self, tree: u64, blocked: u64) {
        self.nodes += 1;
        if self.nodes > self.max_nodes {
            self.out_of_nodes = true;
            return;
        }
        if tree.count_ones() > self.best.count_ones() {
            self.best = tree;
        }
        // Vertices with two or more neighbours in the tree can never join it.
        let mut possible = 0u64;
        let mut rest = self.all & !blocked;
        while rest != 0 {
            let v = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if (self.adjacency[v] & tree).count_ones() <= 1 {
                possible |= 1 << v;
            }
        }
        if tree.count_ones() + possible.count_ones() <= self.best.count_ones() {
            return;
        }
        let candidates = self.attachable(tree, blocked);
        if candidates == 0 {
            return;
        }
        let v = candidates.trailing_zeros();
        let bit = 1u64 << v;
        // Branch: take v, or exclude it for good in this subtree.
        self.grow(tree | bit, blocked | bit);
        if self.out_of_nodes {
            return;
        }
        self.grow(tree, blocked | bit);
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
