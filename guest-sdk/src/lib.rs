//! # Writing a Jacobian component
//!
//! A Jacobian bundle is one WebAssembly component that provides either
//! capabilities (producers) or checker roles (verifiers), never both. This crate
//! hides the WIT bindings: you implement [`Capability`] (or [`Checker`]) for a
//! type with serde + schemars request and response types, then call
//! [`export_capabilities!`] (or [`export_checkers!`]) once. The descriptor's
//! JSON Schemas are generated from your types, never written by hand.
//!
//! Enable the crate feature `capability` for a producer bundle, or `checker`
//! for a checker bundle, and build with
//! `cargo build --target wasm32-wasip2` as a `cdylib`.
//!
//! ```ignore
//! use jacobian_guest::{Capability, Produced, Refusal, Scope, schemars, serde};
//!
//! #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
//! #[serde(crate = "jacobian_guest::serde", deny_unknown_fields)]
//! pub struct Input { pub n: u32 }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! #[serde(crate = "jacobian_guest::serde")]
//! pub struct Output { pub square: u64 }
//!
//! pub struct Square;
//!
//! impl Capability for Square {
//!     const ID: &'static str = "arithmetic.compute.square";
//!     const TITLE: &'static str = "Square a natural number";
//!     const OUTCOME: &'static str = "the exact square of n";
//!     const DESCRIPTION: &'static str = "Computes n*n exactly for n < 2^32.";
//!     const TAGS: &'static [&'static str] = &["arithmetic"];
//!     type Input = Input;
//!     type Output = Output;
//!
//!     fn examples() -> Vec<(&'static str, Input)> {
//!         vec![("the square of 12", Input { n: 12 })]
//!     }
//!
//!     fn run(input: Input) -> Result<Produced<Output>, Refusal> {
//!         let square = u64::from(input.n) * u64::from(input.n);
//!         Ok(Produced::computed(Output { square }, Scope::exhaustive("exactly the supplied n")))
//!     }
//! }
//!
//! jacobian_guest::export_capabilities!(Square);
//! ```
#![deny(missing_docs)]

extern crate self as jacobian_guest;

pub mod protocol;

pub use protocol::{
    ArtifactEnvelope, BundleKind, Completeness, Example, InputKind, Judged, Lineage, Mode, ProducerAssurance, Provider,
    Qualifier, Refusal, Scope, Verdict, VerdictKind, VerificationRoute,
};
pub use serde;
pub use serde_json;

#[cfg(all(feature = "capability", feature = "checker"))]
compile_error!("a bundle is a capability bundle or a checker bundle, never both: enable one feature");

#[cfg(feature = "bindings")]
mod guest;
#[cfg(feature = "bindings")]
pub use guest::*;

impl Scope {
    /// Every case within the stated bounds was examined.
    pub fn exhaustive(statement: impl Into<String>) -> Self {
        Scope { completeness: Completeness::Exhaustive, statement: statement.into() }
    }

    /// A witness was found; nothing is claimed about the rest of the space.
    pub fn witness_only(statement: impl Into<String>) -> Self {
        Scope { completeness: Completeness::WitnessOnly, statement: statement.into() }
    }

    /// Only part of the bounded space was examined.
    pub fn partial(statement: impl Into<String>) -> Self {
        Scope { completeness: Completeness::Partial, statement: statement.into() }
    }
}
