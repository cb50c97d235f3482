//! A capability written in Python (`examples/python-partitions/`), built by
//! componentize-py from PyPI through the same WIT as the Rust bundles and
//! installed the normal way: `jacobian check` accepts it, `jacobian install`
//! installs it, `describe` shows it, and its partition numbers are sympy's
//! (`sympy.npartitions`, an independent Hardy–Ramanujan–Rademacher
//! implementation).

use std::path::Path;
use std::process::Command;

use jacobian::contract::Status;
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, BIN, cli};

const CAPABILITY: &str = "number_theory.count.partitions";

/// Build the example into `out` with componentize-py, as its README says.
fn build(out: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let example = root.join("examples/python-partitions");
    let output = Command::new("componentize-py")
        .arg("-d")
        .arg(root.join("wit"))
        .args(["-w", "capability", "componentize", "--stub-wasi", "app", "-p"])
        .arg(&example)
        .arg("-o")
        .arg(out)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("componentize-py (PyPI: componentize-py; scripts/test.sh installs it)");
    assert!(output.status.success(), "componentize-py: {}", String::from_utf8_lossy(&output.stderr));
}

/// p(n) for each n, as sympy computes it.
fn sympy_partitions(ns: &[u64]) -> Vec<String> {
    let script = format!(
        "import json, sympy; print(json.dumps([str(sympy.npartitions(n)) for n in {}]))",
        serde_json::to_string(ns).unwrap()
    );
    let output = Command::new("python3").args(["-c", &script]).output().expect("python3 with sympy");
    assert!(output.status.success(), "sympy: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("a JSON list")
}

#[test]
fn a_python_capability_builds_checks_installs_and_agrees_with_sympy() {
    let dir = tempfile::tempdir().unwrap();
    let wasm = dir.path().join("partitions.wasm");
    build(&wasm);
    let data = dir.path().join("data");

    let checked = Command::new(BIN).arg("--data-dir").arg(&data).arg("check").arg(&wasm).output().unwrap();
    let report: Value = serde_json::from_slice(&checked.stdout).expect("a report");
    assert_eq!((checked.status.code(), report["verdict"].as_str()), (Some(0), Some("ACCEPTABLE")), "{report}");
    assert_eq!(report["imports"], json!(["jacobian:runtime/host@0.1.0"]), "the WASI stubs leave only the host");
    let said = cli(&data, &["install", wasm.to_str().unwrap()]);
    assert!(said.contains(&format!("capability {CAPABILITY}")), "{said}");
    let full: Value = serde_json::from_str(&cli(&data, &["describe", "--id", CAPABILITY, "--view", "FULL"])).unwrap();
    assert_eq!(full["provider"]["features"], json!(["python"]), "{full}");

    let runtime = support::open(data);
    let ns = [0, 1, 2, 3, 4, 5, 10, 37, 100, 271, 1000, 2718, 5000];
    let expected = sympy_partitions(&ns);
    assert_eq!(expected[8], "190569292", "sympy's p(100)");
    for (n, expected) in ns.iter().zip(&expected) {
        let result = support::invoke(&runtime, CAPABILITY, Mode::Explore, json!({"n": n}));
        assert_eq!(result.status, Status::Completed, "p({n}): {:?}", result.diagnostic);
        let output = result.output.as_ref().expect("an output");
        assert_eq!(output["partitions"].as_str(), Some(expected.as_str()), "p({n})");
        assert_eq!(output["digits"], expected.len(), "p({n})");
    }
    // Out of range: the schema refuses it before the component runs.
    let refused = support::invoke(&runtime, CAPABILITY, Mode::Explore, json!({"n": 5001}));
    assert_eq!(refused.status, Status::Failed);
    let diagnostic = serde_json::to_value(&refused.diagnostic).unwrap();
    assert_eq!(
        (diagnostic["code"].as_str(), diagnostic["details"]["path"].as_str()),
        (Some("INVALID_INPUT"), Some("input.n")),
        "{diagnostic}"
    );
}
