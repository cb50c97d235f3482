//! The mathematics of the SAT capabilities, as a plain library: DIMACS CNF
//! parsing and LRAT syntax (`dimacs`), and a CDCL solver whose UNSAT
//! answers carry an LRAT proof and whose SAT answers carry a model
//! (`solver`). The component crate (`capabilities/sat`) is a thin shell;
//! the benchmark and the fuzz targets link this natively. It shares no code
//! with the checker (`checkers/lrat-core`).

pub mod dimacs;
pub mod solver;

#[cfg(test)]
mod tests;
