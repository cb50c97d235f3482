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
    ArtifactEnvelope, BundleKind, Completeness, DeclaredCheck, Example, InputKind, Judged, Lineage, Mode,
    ProducerAssurance, Provider, Qualifier, Refusal, Scope, Verdict, VerdictKind, VerificationRoute,
};
pub use serde;
pub use serde_json;

#[cfg(all(feature = "capability", feature = "checker"))]
compile_error!("a bundle is a capability bundle or a checker bundle, never both: enable one feature");

#[cfg(feature = "bindings")]
mod guest;
#[cfg(feature = "bindings")]
pub use guest::*;

/// A checker a capability's results are checked by, declared once as a
/// constant: the capability lists it in [`Capability::CHECKS`] (so the host
/// knows the route before any result arrives) and builds each result's route
/// from it with [`Check::route`], so the two cannot drift apart. The host
/// refuses a result whose route names a role, checker or format the
/// capability did not declare.
///
/// ```
/// use jacobian_guest::Check;
///
/// const WITNESS: Check = Check {
///     role: "arithmetic.square.witness",
///     verifier: "arithmetic.square.verify",
///     formats: &["square-witness/1"],
/// };
///
/// let route = WITNESS.route("square-witness/1", "witness");
/// assert_eq!(route.checker_role, "arithmetic.square.witness");
/// assert_eq!(route.verify_capability_id, "arithmetic.square.verify");
/// assert_eq!(route.certificate_artifact_role, "witness");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// The checker role.
    pub role: &'static str,
    /// The capability id agents invoke in `VERIFY` mode for that role.
    pub verifier: &'static str,
    /// The certificate formats results carry for it.
    pub formats: &'static [&'static str],
}

impl Check {
    /// The route of a result whose certificate, in `format` (one of
    /// [`Check::formats`]), is the result's artifact with role `artifact_role`.
    pub fn route(&self, format: &str, artifact_role: &str) -> VerificationRoute {
        VerificationRoute {
            checker_role: self.role.to_owned(),
            verify_capability_id: self.verifier.to_owned(),
            certificate_format: format.to_owned(),
            certificate_artifact_role: artifact_role.to_owned(),
        }
    }

    /// How a descriptor declares this check.
    pub fn declared(&self) -> DeclaredCheck {
        DeclaredCheck {
            checker_role: self.role.to_owned(),
            verify_capability_id: self.verifier.to_owned(),
            certificate_formats: self.formats.iter().map(|f| (*f).to_owned()).collect(),
        }
    }
}

/// An example whose input takes artifacts that earlier calls make: the
/// steps run first, in order, and [`artifact_of`] names one of their
/// artifacts in a later input. The host runs the whole recipe at install,
/// and agents read it in the capability's `CONTRACT`.
///
/// ```
/// use jacobian_guest::{Recipe, artifact_of};
/// use serde_json::json;
///
/// let recipe = Recipe::new("solve a two-clause formula")
///     .step("sat.cnf.construct", json!({"dimacs": "p cnf 1 2\n1 0\n-1 0\n"}))
///     .then(json!({"cnf": artifact_of(0, "cnf")}));
/// let example = recipe.into_example();
/// assert_eq!(example.steps[0].capability_id, "sat.cnf.construct");
/// assert_eq!(example.input["cnf"], "$steps.0.artifacts.cnf");
/// ```
#[derive(Debug, Clone)]
pub struct Recipe<I = ()> {
    title: &'static str,
    steps: Vec<protocol::Step>,
    input: I,
}

impl Recipe {
    /// A recipe with no steps yet.
    pub fn new(title: &'static str) -> Self {
        Recipe { title, steps: Vec::new(), input: () }
    }

    /// Add a call of `capability_id` (this bundle's or another installed
    /// one's) with `input`, which may refer to the steps before it.
    pub fn step(mut self, capability_id: &str, input: impl serde::Serialize) -> Self {
        let input = serde_json::to_value(input).unwrap_or(serde_json::Value::Null);
        self.steps.push(protocol::Step { capability_id: capability_id.to_owned(), input });
        self
    }

    /// The input of the call the recipe shows.
    pub fn then<I>(self, input: I) -> Recipe<I> {
        Recipe { title: self.title, steps: self.steps, input }
    }
}

impl<I: serde::Serialize> Recipe<I> {
    /// The published form.
    pub fn into_example(self) -> Example {
        Example {
            title: self.title.to_owned(),
            steps: self.steps,
            input: serde_json::to_value(self.input).unwrap_or(serde_json::Value::Null),
        }
    }
}

/// In a recipe, the URI of the artifact with `role` in step `step`'s result
/// (`$steps.N.artifacts.ROLE`, replaced by the artifact's URI when it runs).
pub fn artifact_of(step: usize, role: &str) -> String {
    protocol::step_reference(step, role)
}

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
