//! Installing bundles: fail closed, idempotent, tamper-evident.

use jacobian::digest::Digest;
use jacobian::engine::import_allowed;
use jacobian::registry::InstallError;
use jacobian_guest::protocol::BundleKind;

use crate::support;

fn count(dir: &std::path::Path, sub: &str) -> usize {
    std::fs::read_dir(dir.join(sub)).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn a_component_importing_outside_the_allowlist_is_refused_and_nothing_is_recorded() {
    let (runtime, dir) = support::runtime();
    let before = (count(dir.path(), "components"), count(dir.path(), "registry"));
    let error = runtime.install(&support::test_guest("sneaky"), None).expect_err("refused");
    match &error {
        InstallError::Prepare { source, .. } => {
            // The refusal says its context once and the cause once.
            let said = jacobian::errors::render(&error);
            assert_eq!(said.matches("evil:net/exfiltrate").count(), 1, "{said}");
            assert!(said.starts_with(&format!("component {}: ", Digest::of(&support::test_guest("sneaky")))), "{said}");
            assert!(matches!(source, jacobian::engine::PrepareError::ForbiddenImport(_)));
        }
        other => panic!("expected a forbidden import, got {other}"),
    }
    assert_eq!((count(dir.path(), "components"), count(dir.path(), "registry")), before);
}

#[test]
fn expect_digest_mismatch_is_refused_and_reinstall_is_idempotent() {
    let (runtime, dir) = support::runtime();
    let echo = support::test_guest("echo");
    let wrong = Digest::of(b"something else");
    match runtime.install(&echo, Some(wrong)) {
        Err(InstallError::DigestMismatch { expected, actual }) => {
            assert_eq!(expected, wrong);
            assert_eq!(actual, Digest::of(&echo));
        }
        other => panic!("expected a digest mismatch, got {:?}", other.map(|r| r.0.digest)),
    }
    assert_eq!(
        count(dir.path(), "registry"),
        jacobian::bundled::BUNDLED.len(),
        "only the bundled components are recorded"
    );
    // A bundled component is stored under the digest its build computed,
    // without hashing it again at every start: that digest is its bytes'.
    for bundled in jacobian::bundled::BUNDLED {
        assert_eq!(bundled.sha256, Digest::of(bundled.bytes).to_hex(), "{}", bundled.package);
        let stored = std::fs::read(dir.path().join("components").join(format!("{}.wasm", bundled.sha256))).unwrap();
        assert!(stored == bundled.bytes, "{}", bundled.package);
    }
    let (record, new) = runtime.install(&echo, Some(Digest::of(&echo))).expect("installs");
    assert!(new);
    assert_eq!(record.kind, BundleKind::Capability);
    assert_eq!(record.health.status, "PASSED");
    assert_eq!(record.health.examples_run, 1);
    let reopened = support::open(dir.path().to_path_buf());
    let (again, new) = reopened.install(&echo, None).expect("idempotent");
    assert!(!new);
    assert_eq!(again.digest, record.digest);
    assert!(reopened.catalog().get("test.echo.message").is_some());
}

#[test]
fn tampered_component_bytes_are_detected_and_the_component_is_not_loaded() {
    let (runtime, dir) = support::runtime();
    let (record, _) = runtime.install(&support::test_guest("echo"), None).expect("installs");
    let path = dir.path().join("components").join(format!("{}.wasm", record.digest.to_hex()));
    let mut bytes = std::fs::read(&path).expect("stored");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&path, bytes).expect("tamper");
    drop(runtime);
    let reopened = support::open(dir.path().to_path_buf());
    let failure = reopened
        .load_failures()
        .iter()
        .find(|f| f.digest == record.digest)
        .expect("the tampered component is reported");
    assert!(failure.reason.contains("corrupt"), "{}", failure.reason);
    assert!(reopened.catalog().get("test.echo.message").is_none());
}

#[test]
fn bundled_components_import_only_the_allowlist_and_are_one_kind_each() {
    let (runtime, _dir) = support::runtime();
    let records: Vec<_> = runtime.components().collect();
    assert_eq!(records.len(), jacobian::bundled::BUNDLED.len());
    for record in records {
        assert!(!record.imports.is_empty());
        for import in &record.imports {
            assert!(import_allowed(import), "{} imports {import}", record.provider.name);
        }
        match record.kind {
            BundleKind::Capability => assert!(record.descriptor.checkers.is_empty()),
            BundleKind::Checker => assert!(record.descriptor.capabilities.is_empty()),
        }
        assert!(record.health.describe_deterministic);
    }
    // The host interface is the only non-WASI import, and WASI never offers sockets.
    assert!(!import_allowed("wasi:sockets/tcp@0.2.6"));
    assert!(!import_allowed("jacobian:runtime/invoke@0.1.0"));
}

/// `jacobian install FILE`, as an operator sees a refusal: the envelope's one-line `error`.
fn install_refusal(dir: &std::path::Path, bytes: &[u8], extra: &[&str]) -> String {
    let file = dir.join("bundle.wasm");
    std::fs::write(&file, bytes).unwrap();
    let output = std::process::Command::new(support::BIN)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("install")
        .arg(&file)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "refused");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let envelope: serde_json::Value = serde_json::from_str(stderr.trim()).unwrap_or_else(|_| panic!("{stderr}"));
    let expected = if extra.contains(&"--expect-digest") { "digest_mismatch" } else { "validation_error" };
    assert_eq!(envelope["error_type"], expected, "{envelope}");
    envelope["error"].as_str().unwrap().to_owned()
}

#[test]
fn install_refusals_say_what_is_wrong_once_and_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let refusal = |bytes: &[u8]| install_refusal(dir.path(), bytes, &[]);
    let component = |bytes: &[u8]| format!("component {}", Digest::of(bytes));
    // Binary junk, a core module, a component cut short: each said once.
    let junk: Vec<u8> = (0u8..100).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
    assert_eq!(refusal(&junk), format!("{}: not a WebAssembly component: bad magic number", component(&junk)));
    let core = b"\0asm\x01\0\0\0";
    assert_eq!(
        refusal(core),
        format!(
            "{}: not a WebAssembly component: a core WebAssembly module, not a component (build the bundle for \
             wasm32-wasip2)",
            component(core)
        )
    );
    let echo = support::test_guest("echo");
    let cut = &echo[..echo.len() / 2];
    let text = refusal(cut);
    let prefix = format!("{}: not a WebAssembly component: ", component(cut));
    assert!(text.starts_with(&prefix), "{text}");
    assert_eq!(text.matches("not a WebAssembly component").count(), 1, "{text}");
    assert!(!text.contains('\n'), "{text}");
    // Imports outside the allowlist, named in a list without a debug dump.
    let sneaky = support::test_guest("sneaky");
    let text = refusal(&sneaky);
    assert!(text.starts_with(&format!("{}: imports ", component(&sneaky))), "{text}");
    assert!(text.ends_with(", outside the allowlist") && text.contains("evil:net/exfiltrate"), "{text}");
    assert!(!text.contains(['[', '"']), "{text}");
    // A describe answer above the output budget.
    let bloated = support::test_guest("bloated");
    let bytes = (64 << 20) + 137;
    assert_eq!(
        refusal(&bloated),
        format!("{}: describe() answered with {bytes} bytes, above the output budget of 4194304", component(&bloated))
    );
    // The bytes are not the ones the operator expected.
    let other = Digest::of(b"other");
    assert_eq!(
        install_refusal(dir.path(), &echo, &["--expect-digest", &other.to_string()]),
        format!("digest mismatch: expected {other}, the bytes hash to {}", Digest::of(&echo))
    );
}

/// A start keeps a bundled component's stored copy by its size: a copy cut
/// short is written again; one damaged in place is refused by a plain read
/// (every read re-hashes) and written again from the embedded bytes when the
/// runtime reads it (as an archive does).
#[test]
fn a_damaged_bundled_copy_is_written_again() {
    let (runtime, dir) = support::runtime();
    drop(runtime);
    let bundled = &jacobian::bundled::BUNDLED[0];
    let digest: Digest = bundled.sha256.parse().unwrap();
    let copy = dir.path().join("components").join(format!("{}.wasm", bundled.sha256));
    std::fs::write(&copy, &bundled.bytes[..100]).unwrap();
    let runtime = support::open(dir.path().to_path_buf());
    assert!(std::fs::read(&copy).unwrap() == bundled.bytes, "a copy of another size is written again");
    let mut damaged = bundled.bytes.to_vec();
    damaged[50] ^= 1;
    std::fs::write(&copy, &damaged).unwrap();
    let error = runtime.data().read_component(&digest).unwrap_err().to_string();
    assert!(error.contains(&format!("component {digest} is corrupt")), "{error}");
    assert!(runtime.component_bytes(&digest).unwrap() == bundled.bytes);
    assert!(std::fs::read(&copy).unwrap() == bundled.bytes, "a copy damaged in place is written again when read");
    // A component this binary does not bundle is only ever refused.
    let echo = support::test_guest("echo");
    let (record, _) = runtime.install(&echo, None).unwrap();
    let echo_copy = dir.path().join("components").join(format!("{}.wasm", record.digest.to_hex()));
    let mut damaged = echo.clone();
    damaged[50] ^= 1;
    std::fs::write(&echo_copy, &damaged).unwrap();
    assert!(runtime.component_bytes(&record.digest).is_err());
}

/// `jacobian check FILE`: (exit code, report).
fn check(data: &std::path::Path, file: &std::path::Path) -> (Option<i32>, serde_json::Value) {
    let output =
        std::process::Command::new(support::BIN).arg("--data-dir").arg(data).arg("check").arg(file).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}{}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code(), report)
}

#[test]
fn check_runs_every_install_check_and_the_examples_twice_and_installs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("bundle.wasm");
    // The SAT bundle's recipes: steps (sat.cnf.construct) first, then the call, each run twice.
    let sat = jacobian::bundled::BUNDLED.iter().find(|c| c.package == "jacobian-sat").expect("bundled").bytes;
    std::fs::write(&file, sat).unwrap();
    let (code, report) = check(&data, &file);
    assert_eq!((code, report["verdict"].as_str()), (Some(0), Some("ACCEPTABLE")), "{report}");
    assert_eq!(report["digest"], Digest::of(sat).to_string());
    assert_eq!(report["checks"]["describe_deterministic"], true);
    assert_eq!(report["checks"]["examples_deterministic"], true);
    assert!(report["capabilities"].as_array().unwrap().iter().any(|c| c == "sat.solve"), "{report}");
    let calls = report["example_calls"].as_array().unwrap();
    let run = report["checks"]["examples_run"].as_u64().unwrap();
    assert!(run >= 2 && calls.len() as u64 > run, "a recipe's step is a call of its own: {report}");
    assert!(calls.iter().any(|c| c["at"] == "steps.0") && calls.iter().all(|c| c["deterministic"] == true));

    // A bundle checked is not installed; installed afterwards, it checks as before.
    let echo = support::test_guest("echo");
    std::fs::write(&file, &echo).unwrap();
    assert_eq!(check(&data, &file).0, Some(0));
    let components = support::cli(&data, &["components"]);
    assert!(!components.contains(&Digest::of(&echo).to_hex()), "{components}");
    let installed = support::cli(&data, &["install", file.to_str().unwrap()]);
    assert!(installed.starts_with("installed "), "{installed}");
    assert_eq!(check(&data, &file).0, Some(0), "its own ids are not taken from itself");

    // Refusals name the check that failed, with install's own message.
    let cut = echo[..echo.len() / 2].to_vec();
    for (bytes, failed) in [
        (support::test_guest("sneaky"), "component"),
        (support::test_guest("bloated"), "describe"),
        (support::test_guest("recipe"), "examples"),
        (cut, "component"),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        let (code, report) = check(&data, &file);
        assert_eq!((code, report["verdict"].as_str()), (Some(1), Some("REFUSED")), "{report}");
        assert_eq!(report["failed_check"], failed, "{report}");
        assert!(report["error"].as_str().unwrap().starts_with(&format!("component {}", Digest::of(&bytes))));
    }
}
