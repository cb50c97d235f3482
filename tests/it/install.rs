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
            assert!(error.to_string().contains("evil:net/exfiltrate"), "{error}");
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
