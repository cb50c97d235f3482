//! The retrieval behind `knowledge.search` and `knowledge.catalog`, as a
//! plain library (`pack`). The component crate (`capabilities/knowledge`)
//! compiles the reference pack in and shapes citations.

pub mod pack;

#[cfg(test)]
mod tests;
