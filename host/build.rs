//! Builds every guest component from source for `wasm32-wasip2` and embeds
//! the bundled ones in the host binary with their SHA-256 digests.
//!
//! Guests are built by a nested `cargo build --profile guest` into
//! `<target>/guests` (a separate target directory, so the nested cargo never
//! waits on the outer one's lock). Builds are deterministic: absolute paths
//! are remapped and nothing embeds a timestamp, so the same source gives the
//! same digest on any machine.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// One cargo invocation per SDK feature set: features unify within an
/// invocation, and a bundle is a capability bundle or a checker bundle.
const GROUPS: &[&[Guest]] = &[
    &[
        Guest::bundled("jacobian-claim"),
        Guest::bundled("jacobian-graph"),
        Guest::bundled("jacobian-knowledge"),
        Guest::bundled("jacobian-polynomial"),
        Guest::bundled("jacobian-sat"),
        Guest::bundled("jacobian-universal-algebra"),
        Guest::test("jacobian-test-bloated"),
        Guest::test("jacobian-test-catalog"),
        Guest::test("jacobian-test-echo"),
        Guest::test("jacobian-test-forger"),
        Guest::test("jacobian-test-hostile"),
        Guest::test("jacobian-test-overreach"),
        Guest::test("jacobian-test-recipe"),
        Guest::test("jacobian-test-sneaky"),
    ],
    &[
        Guest::bundled("jacobian-graph-enumeration-checker"),
        Guest::bundled("jacobian-graph-induced-tree-checker"),
        Guest::bundled("jacobian-groebner-checker"),
        Guest::bundled("jacobian-sat-checker"),
        Guest::bundled("jacobian-sat-plain-checker"),
        Guest::bundled("jacobian-universal-algebra-checker"),
        Guest::test("jacobian-test-no-checker"),
        Guest::test("jacobian-test-yes-checker"),
    ],
];

struct Guest {
    package: &'static str,
    bundled: bool,
}

impl Guest {
    const fn bundled(package: &'static str) -> Self {
        Guest { package, bundled: true }
    }

    const fn test(package: &'static str) -> Self {
        Guest { package, bundled: false }
    }

    fn file_name(&self) -> String {
        format!("{}.wasm", self.package.replace('-', "_"))
    }
}

fn main() {
    // Without the sandbox (the fuzz targets' build) there is nothing to embed.
    if env::var_os("CARGO_FEATURE_SANDBOX").is_none() {
        return;
    }
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let root = manifest_dir.parent().expect("workspace root").to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let target_dir = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { root.join(p) })
        .unwrap_or_else(|| root.join("target"));
    let guest_target = target_dir.join("guests");

    // The root manifest holds the guest profile: a change there must rebuild the guests.
    for path in ["wit", "guest-sdk", "capabilities", "checkers", "tests/guests", "Cargo.lock", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }

    let mut bundled = String::from("/// Components built from this source tree and shipped in the binary.\n");
    bundled.push_str("pub const BUNDLED: &[BundledComponent] = &[\n");
    let test_dir = out_dir.join("test-guests");
    fs::create_dir_all(&test_dir).expect("create test guest dir");

    for group in GROUPS {
        build_group(&root, &guest_target, group);
        for guest in group.iter() {
            let built = guest_target.join("wasm32-wasip2/guest").join(guest.file_name());
            let bytes = fs::read(&built)
                .unwrap_or_else(|e| panic!("guest {} was not built at {}: {e}", guest.package, built.display()));
            let digest = hex::encode(Sha256::digest(&bytes));
            if guest.bundled {
                let copy = out_dir.join(guest.file_name());
                fs::write(&copy, &bytes).expect("copy bundled guest");
                writeln!(
                    bundled,
                    "    BundledComponent {{ package: {:?}, sha256: {:?}, bytes: include_bytes!({:?}) }},",
                    guest.package,
                    digest,
                    copy.display().to_string()
                )
                .expect("write");
            } else {
                fs::write(test_dir.join(guest.file_name()), &bytes).expect("copy test guest");
            }
        }
    }
    bundled.push_str("];\n");
    fs::write(out_dir.join("bundled.rs"), bundled).expect("write bundled.rs");
    println!("cargo:rustc-env=JACOBIAN_TEST_GUESTS={}", test_dir.display());
}

fn build_group(root: &Path, guest_target: &Path, group: &[Guest]) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let cargo_home =
        env::var("CARGO_HOME").unwrap_or_else(|_| format!("{}/.cargo", env::var("HOME").unwrap_or_default()));
    let rustflags = [
        format!("--remap-path-prefix={}=/jacobian", root.display()),
        format!("--remap-path-prefix={cargo_home}=/cargo"),
    ]
    .join("\x1f");
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args(["build", "--profile", "guest", "--target", "wasm32-wasip2", "--target-dir"])
        .arg(guest_target);
    for guest in group {
        command.args(["-p", guest.package]);
    }
    // Nothing of the outer build's configuration may leak into the guests.
    for var in [
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PROFILE_RELEASE_INCREMENTAL",
    ] {
        command.env_remove(var);
    }
    command.env("CARGO_ENCODED_RUSTFLAGS", rustflags);
    command.env("SOURCE_DATE_EPOCH", "0");
    let output = command.output().unwrap_or_else(|e| panic!("could not run cargo for the guests: {e}"));
    if !output.status.success() {
        panic!(
            "building guests {:?} for wasm32-wasip2 failed (is the target installed? `rustup target add wasm32-wasip2`):\n{}",
            group.iter().map(|g| g.package).collect::<Vec<_>>(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
