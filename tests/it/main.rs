//! The one integration-test binary: features tested through the real
//! `jacobian` binary (MCP over stdio, CLI) and the public core API.

mod archives;
mod auth;
mod bounds;
mod certificates;
mod claims;
mod concurrency;
mod contract;
mod countermodels;
mod determinism;
mod examples;
mod faults;
mod graphs;
mod groebner;
mod hardening;
mod http;
mod inline;
mod install;
mod knowledge;
mod layout;
mod mcp_e2e;
mod mcp_http;
mod oidc;
mod operations;
mod pipeline;
mod policy;
mod sat;
mod scaleout;
mod snapshots;
mod stores;
mod support;
mod trust;
mod upgrade;
mod workspace;
mod workspace_props;
mod workspace_server;
