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

/// A guest component of the workspace: a `cdylib` member. Found in `cargo metadata`, never listed: a new crate under
/// `capabilities/`, `checkers/` or `tests/guests/` is built by being there.
struct Guest {
    package: String,
    /// The SDK feature it enables, `capability` or `checker`: one cargo
    /// invocation per world, since features unify within an invocation and
    /// a bundle is a capability bundle or a checker bundle.
    world: &'static str,
    /// Shipped in the binary; a guest under `tests/guests/` is a test program.
    bundled: bool,
}

const WORLDS: [&str; 2] = ["capability", "checker"];

/// The workspace's guest components, in the order they are built and
/// embedded: capabilities, then checkers, each sorted by package name.
fn discover(root: &Path) -> Vec<Guest> {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .output()
        .unwrap_or_else(|e| panic!("could not run cargo metadata to find the guests: {e}"));
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let test_programs = root.join("tests/guests");
    let mut guests: Vec<Guest> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| {
            package["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|target| target["crate_types"].as_array().into_iter().flatten().any(|kind| kind == "cdylib"))
        })
        .map(|package| {
            let name = package["name"].as_str().expect("a package name").to_owned();
            // The SDK feature it enables, or, for a crate not on the SDK,
            // `[package.metadata.jacobian] world`.
            let sdk = package["dependencies"].as_array().into_iter().flatten().find(|d| d["name"] == "jacobian-guest");
            let declared = package["metadata"]["jacobian"]["world"].clone();
            let world = WORLDS
                .into_iter()
                .find(|world| {
                    declared == *world
                        || sdk.is_some_and(|sdk| sdk["features"].as_array().into_iter().flatten().any(|f| f == world))
                })
                .unwrap_or_else(|| {
                    panic!(
                        "component crate {name}: enable the guest SDK's feature `capability` or `checker`, \
                         or declare [package.metadata.jacobian] world"
                    )
                });
            let manifest = PathBuf::from(package["manifest_path"].as_str().expect("a manifest path"));
            Guest { package: name, world, bundled: !manifest.starts_with(&test_programs) }
        })
        .collect();
    guests.sort_by(|a, b| {
        (WORLDS.iter().position(|w| *w == a.world), &a.package)
            .cmp(&(WORLDS.iter().position(|w| *w == b.world), &b.package))
    });
    guests
}

impl Guest {
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

    let guests = discover(&root);
    for world in WORLDS {
        let group: Vec<&Guest> = guests.iter().filter(|guest| guest.world == world).collect();
        build_group(&root, &guest_target, &group);
        // What scripts/test.sh lints per world, so the list is made here only.
        let packages: String = group.iter().map(|guest| format!("-p {}\n", guest.package)).collect();
        fs::write(guest_target.join(format!("{world}.packages")), packages).expect("write the guest list");
    }
    for guest in &guests {
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
    bundled.push_str("];\n");
    fs::write(out_dir.join("bundled.rs"), bundled).expect("write bundled.rs");
    println!("cargo:rustc-env=JACOBIAN_TEST_GUESTS={}", test_dir.display());
}

fn build_group(root: &Path, guest_target: &Path, group: &[&Guest]) {
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
        command.args(["-p", &guest.package]);
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
            group.iter().map(|g| &g.package).collect::<Vec<_>>(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
