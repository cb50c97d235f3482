//! The mathematics of the graph capabilities, as a plain library: simple
//! graphs validated from vertices and edges (`simple`), maximum induced
//! trees by branch and bound (`induced_tree`), and every graph, connected
//! graph or tree of an order up to isomorphism (`enumerate`). The component
//! crate (`capabilities/graph`) is a thin shell; the benchmark links this
//! natively. It shares no code with the checkers.

pub mod enumerate;
pub mod induced_tree;
pub mod simple;

#[cfg(test)]
mod tests;
