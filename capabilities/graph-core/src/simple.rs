//! A simple graph from a list of vertices and edges, validated completely.

use std::collections::BTreeSet;

/// Most vertices a graph may have (vertex sets are 64-bit masks).
pub const MAX_ORDER: u32 = 64;

/// A validated simple graph in canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleGraph {
    pub order: u32,
    /// One per vertex: the caller's, or the vertex numbers.
    pub labels: Vec<String>,
    /// Edges `[u, v]` with `u < v`, sorted.
    pub edges: Vec<[u32; 2]>,
}

/// What is wrong with a request, and where (a dot-path into it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub path: String,
    pub message: String,
}

fn invalid(path: impl Into<String>, message: impl Into<String>) -> Invalid {
    Invalid { path: path.into(), message: message.into() }
}

/// Validate `vertices`, optional `labels` and `edges`: at most
/// [`MAX_ORDER`] vertices, labels one per vertex, distinct and 1..=32
/// bytes, every endpoint in range, no self-loops, no duplicate edges in
/// either direction.
pub fn build(vertices: u32, labels: Option<Vec<String>>, edges: &[[u32; 2]]) -> Result<SimpleGraph, Invalid> {
    let n = vertices;
    if n == 0 || n > MAX_ORDER {
        return Err(invalid("vertices", format!("must be between 1 and {MAX_ORDER}")));
    }
    let labels = match labels {
        Some(labels) => {
            if labels.len() != n as usize {
                return Err(invalid("labels", format!("{} labels for {n} vertices", labels.len())));
            }
            for (i, label) in labels.iter().enumerate() {
                if label.is_empty() || label.len() > 32 || labels[..i].contains(label) {
                    return Err(invalid(format!("labels.{i}"), "labels are distinct, 1..=32 bytes"));
                }
            }
            labels
        }
        None => (0..n).map(|v| v.to_string()).collect(),
    };
    let mut seen = BTreeSet::new();
    let mut canonical = Vec::with_capacity(edges.len());
    for (i, [a, b]) in edges.iter().copied().enumerate() {
        for (j, end) in [a, b].into_iter().enumerate() {
            if end >= n {
                return Err(invalid(format!("edges.{i}.{j}"), format!("vertex {end} is out of range 0..{n}")));
            }
        }
        if a == b {
            return Err(invalid(format!("edges.{i}"), format!("self-loop at vertex {a}")));
        }
        let edge = [a.min(b), a.max(b)];
        if !seen.insert(edge) {
            return Err(invalid(format!("edges.{i}"), format!("duplicate edge {{{}, {}}}", edge[0], edge[1])));
        }
        canonical.push(edge);
    }
    canonical.sort_unstable();
    Ok(SimpleGraph { order: n, labels, edges: canonical })
}
