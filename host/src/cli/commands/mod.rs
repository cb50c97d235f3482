//! One module per group of commands, each command one function of its arguments.

pub mod agent;
pub mod bundles;
pub mod offline;
pub mod operator;
pub mod scaffold;
pub mod serve;
