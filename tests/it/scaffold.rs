//! A plugin author's first hour, through the CLI only: `jacobian new`
//! makes a project, `cargo test` runs its mathematics natively, `cargo build
//! --target wasm32-wasip2 --release` makes the component, `jacobian check`
//! accepts it, `jacobian install` installs it, and it answers.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{BIN, cli};

/// `cargo ARGS` in `project`, offline, with one target directory for every scaffold the tests build.
fn cargo(project: &Path, args: &[&str]) {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/scaffolds");
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .arg("--offline")
        .current_dir(project)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo");
    assert!(
        output.status.success(),
        "cargo {args:?} in {}: {}",
        project.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn component(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../target/scaffolds/wasm32-wasip2/release/{name}.wasm"))
}

fn new(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN).arg("new").args(args).current_dir(dir).output().unwrap()
}

#[test]
fn a_scaffolded_capability_and_checker_build_check_install_and_answer() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    for (kind, name) in [("capability", "collatz_demo"), ("checker", "factor_demo")] {
        let made = new(dir.path(), &[kind, name]);
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let project = dir.path().join(name);
        for file in ["Cargo.toml", "src/lib.rs", "README.md", ".gitignore"] {
            assert!(project.join(file).is_file(), "{kind}: {file}");
        }
        cargo(&project, &["test", "--quiet"]);
        cargo(&project, &["build", "--target", "wasm32-wasip2", "--release", "--quiet"]);
        let wasm = component(name);
        let checked = Command::new(BIN).arg("--data-dir").arg(&data).arg("check").arg(&wasm).output().unwrap();
        let report: Value = serde_json::from_slice(&checked.stdout).expect("a report");
        assert_eq!((checked.status.code(), report["verdict"].as_str()), (Some(0), Some("ACCEPTABLE")), "{report}");
        assert_eq!(report["checks"]["examples_run"], 1, "{report}");
        let installed = cli(&data, &["install", wasm.to_str().unwrap()]);
        assert!(installed.starts_with("installed "), "{installed}");
    }

    let request = dir.path().join("request.json");
    std::fs::write(&request, json!({"n": 27}).to_string()).unwrap();
    let answer: Value = serde_json::from_str(&cli(
        &data,
        &["invoke", "collatz_demo.compute.collatz_steps", "--input", request.to_str().unwrap(), "--view", "FULL"],
    ))
    .unwrap();
    assert_eq!(answer["output"], json!({"steps": 111, "peak": 9232}), "OEIS A006577(27) = 111: {answer}");
    assert_eq!(answer["assurance"], "COMPUTED");
    // The checker judges, but VERIFIED needs the operator's authorization: installed is not authorized.
    std::fs::write(&request, json!({"n": 360, "factors": [2, 2, 2, 3, 3, 5]}).to_string()).unwrap();
    let args = ["invoke", "factor_demo.factorization.verify", "--mode", "VERIFY", "--input", request.to_str().unwrap()];
    let output = Command::new(BIN).arg("--data-dir").arg(&data).args(args).output().unwrap();
    let verdict: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(verdict["status"], "COMPLETED", "the checker ran: {verdict}");
    assert_eq!(verdict["capability_id"], "factor_demo.factorization.verify");
    let status = verdict["verification"]["status"].as_str().expect("a verification record");
    assert_ne!(status, "VERIFIED", "an unauthorized checker never verifies: {verdict}");
    assert_ne!(verdict["assurance"], "VERIFIED", "{verdict}");
}

#[test]
fn new_refuses_a_bad_name_or_an_existing_directory() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["Bad", "9lives", "has-dash", ""] {
        let made = new(dir.path(), &["capability", name]);
        assert_eq!(made.status.code(), Some(3), "{name:?} accepted");
        assert!(String::from_utf8_lossy(&made.stderr).contains("NAME"), "{name:?}");
    }
    std::fs::create_dir(dir.path().join("taken")).unwrap();
    let made = new(dir.path(), &["checker", "taken"]);
    assert_eq!(made.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&made.stderr).contains("already exists"));
    assert_eq!(std::fs::read_dir(dir.path().join("taken")).unwrap().count(), 0, "nothing written into it");
}
