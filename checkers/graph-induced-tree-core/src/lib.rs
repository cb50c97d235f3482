//! The exhaustive check of a maximum induced tree, as a plain library: the
//! claimed vertices must induce a tree of the claimed size, and no vertex
//! subset may induce a larger one (every one of the 2^n subsets is
//! examined). It shares no code with the producer's branch and bound.

/// What the exhaustive check concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// The claim holds: the maximum induced tree has `best` vertices.
    Accepted { best: usize },
    /// The claim is wrong, and why.
    Rejected(String),
}

/// The largest order the exhaustive check can examine (vertex subsets are 32-bit masks).
pub const MAX_ORDER: usize = 31;

/// Judge the claim that `vertices` (of `size` vertices) is a maximum
/// induced tree of the graph on `order` vertices with these `edges`. An
/// order above [`MAX_ORDER`], an edge naming a vertex outside the graph, a
/// loop or a repeated edge (in either direction) is an error about the
/// graph: the claim is about a simple graph.
pub fn judge(order: usize, edges: &[[usize; 2]], vertices: &[usize], size: usize) -> Result<Judgement, String> {
    let n = order;
    if n > MAX_ORDER {
        return Err(format!("order {n} is above {MAX_ORDER}, the largest an exhaustive check examines"));
    }
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, &[a, b]) in edges.iter().enumerate() {
        if a >= n || b >= n {
            return Err(format!("edges.{i}: [{a}, {b}] names a vertex outside 0..{n}"));
        }
        // A simple graph: a loop or a repeated edge would be counted by the
        // tree test as an edge the graph does not have.
        if a == b {
            return Err(format!("edges.{i}: [{a}, {b}] is a loop; the graph must be simple"));
        }
        if neighbours[a].contains(&b) {
            return Err(format!("edges.{i}: [{a}, {b}] repeats an edge; the graph must be simple"));
        }
        neighbours[a].push(b);
        neighbours[b].push(a);
    }
    let mut claimed = vec![false; n];
    for &v in vertices {
        if v >= n || claimed[v] {
            return Ok(Judgement::Rejected(format!("vertex {v} is out of range or repeated")));
        }
        claimed[v] = true;
    }
    if vertices.len() != size || !is_tree(&neighbours, &claimed) {
        return Ok(Judgement::Rejected("the claimed vertices do not induce a tree of the claimed size".into()));
    }
    let (best, witness) = largest(&neighbours);
    if best != size {
        let larger: Vec<usize> = (0..n).filter(|v| witness & (1 << v) != 0).collect();
        return Ok(Judgement::Rejected(format!(
            "the claimed optimum is {size}, but {larger:?} induces a tree of {best} vertices"
        )));
    }
    Ok(Judgement::Accepted { best })
}

/// The size of the largest induced tree and a vertex mask inducing it, by
/// examining every vertex subset.
///
/// # Panics
/// If the graph has more than [`MAX_ORDER`] vertices ([`judge`] refuses those).
pub fn largest(neighbours: &[Vec<usize>]) -> (usize, u32) {
    let n = neighbours.len();
    assert!(n <= MAX_ORDER, "order {n} is above {MAX_ORDER}");
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
        if is_tree(neighbours, &set) {
            best = size;
            witness = mask;
        }
    }
    (best, witness)
}

/// Whether the vertices of `set` induce a tree: connected with |set| - 1 edges.
pub fn is_tree(neighbours: &[Vec<usize>], set: &[bool]) -> bool {
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

#[cfg(test)]
mod soundness;
#[cfg(test)]
mod tests;
