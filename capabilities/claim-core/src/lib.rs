//! The mathematics-free core of the claim capabilities, as a plain library:
//! the declared propositional syntax, parsed into structures whose spans
//! point into the source (`syntax`). The component crate
//! (`capabilities/claim`) stores structures as artifacts and splits them.

pub mod syntax;

#[cfg(test)]
mod tests;
