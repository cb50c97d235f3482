//! The mathematics of `universal_algebra.search.countermodel`, as a plain
//! library: laws of one binary operation, their parser and their
//! evaluation on partial Cayley tables (`laws`), the propagating search of
//! one order (`engine`), the search over orders for a finite magma
//! satisfying hypotheses and violating a target (`search`), and the
//! enumeration of every model of one order up to isomorphism (`enumerate`).
//! The component crate (`capabilities/universal-algebra`) is a thin shell
//! around it. It shares no code with the checker.

mod affine;
mod engine;
pub mod enumerate;
pub mod laws;
pub mod search;

#[cfg(test)]
mod tests;
