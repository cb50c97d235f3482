//! The components built from this source tree by `build.rs` and embedded in
//! the binary, with the SHA-256 digests computed when they were built.

/// One bundled component.
pub struct BundledComponent {
    /// Cargo package it was built from.
    pub package: &'static str,
    /// SHA-256 (hex) of `bytes`, computed at build time.
    pub sha256: &'static str,
    /// The component.
    pub bytes: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// Directory holding the test guests built by the same pipeline (tests only).
pub const TEST_GUESTS_DIR: &str = env!("JACOBIAN_TEST_GUESTS");
