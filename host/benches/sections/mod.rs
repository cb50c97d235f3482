//! The benchmark's sections, one file each; `runtime.rs` holds what they share and `main`.

mod attack;
mod graphs;
mod groebner;
mod sandbox;
mod sat;
mod split;
mod transport;
mod workspace;

pub(crate) use attack::*;
pub(crate) use graphs::*;
pub(crate) use groebner::*;
pub(crate) use sandbox::*;
pub(crate) use sat::*;
pub(crate) use split::*;
pub(crate) use transport::*;
pub(crate) use workspace::*;
