//! The independent check of an enumeration of graphs up to isomorphism, as
//! a plain library: graph6 parsing and its own canonical form (colour
//! refinement on neighbour-colour multisets, individualization, smallest
//! code) in `canon`, and the number of isomorphism classes from formulas
//! that never look at a graph (Burnside's lemma over cycle types, its
//! inverse Euler transform, Otter's formula) in `count`. Shares no code with
//! the producer.

pub mod canon;
pub mod count;

use std::collections::HashMap;

/// The families an enumeration may list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    All,
    Connected,
    Trees,
}

/// Check that `graphs` (graph6) are graphs of `family` on `n` vertices, no
/// two isomorphic; the number of distinct classes they list, or why not.
pub fn distinct_members(graphs: &[String], n: usize, family: Family, name: &str) -> Result<usize, String> {
    let mut forms: HashMap<Vec<bool>, usize> = HashMap::with_capacity(graphs.len());
    for (i, text) in graphs.iter().enumerate() {
        let graph = canon::Matrix::from_graph6(text).map_err(|e| format!("graphs.{i}: {e}"))?;
        if graph.n != n {
            return Err(format!("graphs.{i} has {} vertices, not {n}", graph.n));
        }
        let member = match family {
            Family::Connected => graph.connected(),
            Family::Trees => graph.connected() && graph.edges() + 1 == n,
            Family::All => true,
        };
        if !member {
            return Err(format!("graphs.{i} is not a member of the family {name}"));
        }
        if let Some(first) = forms.insert(canon::canonical(&graph), i) {
            return Err(format!("graphs.{first} and graphs.{i} are isomorphic"));
        }
    }
    Ok(forms.len())
}

#[cfg(test)]
mod tests;
