//! The mathematics of `polynomial.compute.groebner_basis`, as a plain
//! library: sparse polynomials over ℚ with monomial orders and a parser
//! (`poly`), the engine's integer arithmetic (`sparse`), Buchberger's
//! algorithm with the Gebauer–Möller criteria, the sugar strategy and a
//! trace (`buchberger`), FGLM for lex bases of zero-dimensional ideals
//! (`fglm`), and the reduced basis (`groebner`). The component crate
//! (`capabilities/polynomial`) is a thin shell that validates requests and
//! shapes the answer; the benchmark and the fuzz targets link this natively.

pub mod buchberger;
pub mod fglm;
pub mod groebner;
pub mod poly;
pub mod sparse;

#[cfg(test)]
mod tests;
