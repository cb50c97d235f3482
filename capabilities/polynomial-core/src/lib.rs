//! The mathematics of `polynomial.compute.groebner_basis`, as a plain
//! library: sparse polynomials over ℚ with monomial orders and a parser
//! (`poly`), and Buchberger's algorithm with cofactor tracking, reduction
//! and the certificate (`groebner`). The component crate
//! (`capabilities/polynomial`) is a thin shell that validates requests and
//! shapes the answer; the benchmark and the fuzz targets link this natively.

pub mod groebner;
pub mod poly;

#[cfg(test)]
mod tests;
