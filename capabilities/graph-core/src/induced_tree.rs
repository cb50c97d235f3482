//! A maximum induced tree by branch and bound: trees are grown from each
//! root in turn by attaching vertices with exactly one neighbour in the
//! tree, with vertex sets as 64-bit masks, bounded by the vertices that could
//! still join.

/// What the search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The vertices of the largest induced tree found, ascending.
    pub vertices: Vec<u32>,
    /// Whether the search finished: then no induced tree is larger.
    pub exact: bool,
    /// Search nodes visited.
    pub nodes: u64,
}

/// The largest order the search handles (vertex sets are 64-bit masks).
pub const MAX_ORDER: u32 = 64;

/// The largest induced tree of the graph on `order` vertices (at most
/// [`MAX_ORDER`]) with these `edges`, visiting at most `max_nodes` search
/// nodes. A larger order, or an edge naming a vertex outside the graph, is
/// an error about the graph.
pub fn maximum(order: u32, edges: &[[u32; 2]], max_nodes: u64) -> Result<Found, String> {
    if order > MAX_ORDER {
        return Err(format!("order {order} is above {MAX_ORDER}"));
    }
    if let Some([a, b]) = edges.iter().find(|[a, b]| *a >= order || *b >= order) {
        return Err(format!("edge [{a}, {b}] names a vertex outside 0..{order}"));
    }
    let mut search = Search::new(order, edges, max_nodes);
    search.run();
    let vertices = (0..order).filter(|v| search.best & (1u64 << v) != 0).collect();
    Ok(Found { vertices, exact: !search.out_of_nodes, nodes: search.nodes })
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
    fn new(order: u32, edges: &[[u32; 2]], max_nodes: u64) -> Search {
        let mut adjacency = vec![0u64; order as usize];
        for [a, b] in edges {
            adjacency[*a as usize] |= 1 << b;
            adjacency[*b as usize] |= 1 << a;
        }
        let all = if order == 64 { u64::MAX } else { (1u64 << order) - 1 };
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
