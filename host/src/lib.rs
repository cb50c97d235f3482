//! Jacobian: a WebAssembly-sandboxed capability runtime for agents that do
//! mathematics. See `ARCHITECTURE.md` for the codemap and invariants.

pub mod archive;
pub mod bundled;
pub mod catalog;
pub mod contract;
pub mod database;
pub mod demo;
pub mod digest;
pub mod discovery;
pub mod engine;
pub mod episodes;
pub mod experiments;
pub mod http;
pub mod limits;
pub mod mcp;
pub mod metrics;
pub mod policy;
pub mod projection;
pub mod registry;
pub mod resources;
pub mod runtime;
pub mod store;
pub mod workspace;

pub use runtime::{Runtime, RuntimeConfig};
