//! Jacobian: a WebAssembly-sandboxed capability runtime for agents that do
//! mathematics. See `ARCHITECTURE.md` for the codemap and invariants.

#[cfg(feature = "sandbox")]
pub mod archive;
#[cfg(feature = "sandbox")]
pub mod auth;
pub mod budgets;
#[cfg(feature = "sandbox")]
pub mod bundled;
#[cfg(feature = "sandbox")]
pub mod catalog;
pub mod contract;
#[cfg(feature = "sandbox")]
pub mod demo;
pub mod descriptor;
pub mod digest;
#[cfg(feature = "sandbox")]
pub mod engine;
pub mod errors;
pub mod experiments;
pub mod fuzzing;
#[cfg(feature = "sandbox")]
pub mod http;
pub mod json;
#[cfg(feature = "sandbox")]
pub mod lanes;
pub mod limits;
#[cfg(feature = "sandbox")]
pub mod mcp;
pub mod metrics;
#[cfg(feature = "sandbox")]
pub mod oci;
pub mod policy;
pub mod projection;
pub mod publishers;
pub mod quotas;
pub mod readable;
pub mod recall;
#[cfg(feature = "sandbox")]
pub mod registry;
pub mod releases;
#[cfg(feature = "sandbox")]
pub mod resources;
#[cfg(feature = "sandbox")]
pub mod runtime;
pub mod store;
pub mod tenants;
pub mod workspace;

#[cfg(feature = "sandbox")]
pub use runtime::{Runtime, RuntimeConfig};
