//! Tenants: the callers of an authenticated HTTP deployment, each owning
//! the state it makes. A tenant's state is keyed by its tag, so owning needs
//! no lookup: its workspace ids end in it (`ws-<16 hex>-<tag>`) and its
//! experiments are kept as `<id>@<tag>` ([`crate::experiments::key`]).

use crate::digest::Digest;

/// The tag of a tenant: 16 hex digits of a digest of its name. A tenant opens
/// and reaches only workspaces whose ids end in its own tag and experiments
/// kept under it, so another tenant's answers not found whatever id is
/// presented, and the same idempotency key or experiment id names different
/// state per tenant. The operator (stdio, the CLI, HTTP without
/// authentication) has no tag and reaches everything.
pub fn tenant_tag(tenant: &str) -> String {
    Digest::of(format!("jacobian-tenant\0{tenant}").as_bytes()).to_hex()[..16].to_owned()
}
