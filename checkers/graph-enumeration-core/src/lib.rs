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

/// Largest order checked for all graphs and connected graphs.
pub const MAX_ORDER: usize = 9;
/// Largest order checked for trees.
pub const MAX_TREE_ORDER: usize = 16;

impl Family {
    /// The family named `all`, `connected` or `trees`.
    pub fn named(name: &str) -> Option<Family> {
        match name {
            "all" => Some(Family::All),
            "connected" => Some(Family::Connected),
            "trees" => Some(Family::Trees),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Family::All => "all",
            Family::Connected => "connected",
            Family::Trees => "trees",
        }
    }

    /// The largest order checked, the number of classes on `n` vertices and the formula it comes from.
    pub fn classes(self, n: usize) -> (usize, Option<u128>, &'static str) {
        let n32 = u32::try_from(n).unwrap_or(u32::MAX);
        match self {
            Family::All => (MAX_ORDER, count::graphs(n32), "Burnside's lemma over cycle types"),
            Family::Connected => (MAX_ORDER, count::connected(n32), "the inverse Euler transform of Burnside's counts"),
            Family::Trees => (MAX_TREE_ORDER, count::trees(n32), "Otter's formula"),
        }
    }
}

/// What the check of an enumeration came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// Every class, once: their number, and the formula it was compared with.
    Accepted { classes: u128, formula: &'static str },
    /// The enumeration is wrong, and why.
    Rejected(String),
    /// The order is outside this checker's bounds: nothing was checked.
    Unsupported(String),
}

/// Judge the claim that `graphs` (graph6), `count` of them, are every
/// isomorphism class of `family` on `n` vertices, each once: every listed
/// graph parses, has order `n` and belongs to the family, no two share a
/// canonical form, and their number is the number of classes a formula
/// gives without looking at a graph.
pub fn judge(family: Family, n: usize, count: usize, graphs: &[String]) -> Judgement {
    let (bound, expected, formula) = family.classes(n);
    if n == 0 || n > bound {
        return Judgement::Unsupported(format!("order {n} is outside 1..={bound}"));
    }
    let Some(expected) = expected else {
        return Judgement::Unsupported(format!("the number of classes of order {n} does not fit"));
    };
    if count != graphs.len() {
        return Judgement::Rejected(format!("count says {count} but {} graphs are listed", graphs.len()));
    }
    match distinct_members(graphs, n, family, family.name()) {
        Err(reason) => Judgement::Rejected(reason),
        Ok(classes) if classes as u128 != expected => {
            Judgement::Rejected(format!("{classes} classes are listed, but {formula} gives {expected}"))
        }
        Ok(_) => Judgement::Accepted { classes: expected, formula },
    }
}

#[cfg(test)]
mod soundness;
#[cfg(test)]
mod tests;
