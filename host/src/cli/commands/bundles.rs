//! Bundles in and out: `install` and `check` (from a file or an OCI
//! registry, with the publisher's signature) and `push` (to a registry).

use std::path::{Path, PathBuf};

use crate::cli::error::Context;
use jacobian::digest::Digest;
use jacobian::registry::{Checked, InstallError};
use serde_json::{Value, json};

use crate::cli::Place;
use crate::cli::args::{InstallArgs, PushArgs};
use crate::cli::support::{open, read_file};

/// A bundle's bytes and its signature, wherever they came from.
struct Bundle {
    bytes: Vec<u8>,
    signature: Option<String>,
    /// The manifest digest, when pulled from a registry.
    manifest: Option<Digest>,
}

/// The signature file beside `file` (`FILE.minisig`), or the one named.
fn signature_file(file: &Path, named: Option<PathBuf>) -> crate::cli::error::Result<Option<String>> {
    let beside = PathBuf::from(format!("{}.minisig", file.display()));
    let path = match named {
        Some(path) => path,
        None if beside.is_file() => beside,
        None => return Ok(None),
    };
    let bytes = read_file(&path)?;
    if bytes.len() > jacobian::publishers::MAX_SIGNATURE_BYTES {
        crate::cli::error::refuse!(
            "{}: a signature file is at most {} bytes",
            path.display(),
            jacobian::publishers::MAX_SIGNATURE_BYTES
        );
    }
    Ok(Some(
        String::from_utf8(bytes)
            .with_context(|| format!("{} is not a minisign signature (not UTF-8)", path.display()))?,
    ))
}

fn fetch(source: &str, signature: Option<PathBuf>) -> crate::cli::error::Result<Bundle> {
    if source.starts_with("oci://") {
        let reference = jacobian::oci::Reference::parse(source)?;
        let pulled = jacobian::oci::pull(&reference)?;
        let signature = match signature {
            Some(path) => signature_file(&path, Some(path.clone()))?,
            None => pulled.signature,
        };
        return Ok(Bundle { bytes: pulled.bytes, signature, manifest: Some(pulled.manifest_digest) });
    }
    let file = Path::new(source);
    let bytes = std::fs::read(file).with_context(|| format!("reading {source}"))?;
    Ok(Bundle { bytes, signature: signature_file(file, signature)?, manifest: None })
}

/// `jacobian install`.
pub fn install(place: Place, args: InstallArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let InstallArgs { source, expect_digest, signature } = args;
    let bundle = fetch(&source, signature)?;
    let runtime = open(data_dir, &store)?;
    let (record, new) = runtime.install_signed(&bundle.bytes, expect_digest, bundle.signature.as_deref())?;
    let verb = if new { "installed" } else { "already installed" };
    println!("{verb} {} ({:?}, {} {})", record.digest, record.kind, record.provider.name, record.provider.version);
    if let Some(manifest) = bundle.manifest {
        println!("  pulled from {source} (manifest {manifest})");
    }
    if let Some(publisher) = &record.publisher {
        println!("  signed by {} (key {}; {})", publisher.name, publisher.key_id, publisher.trusted_comment);
    }
    for c in &record.descriptor.capabilities {
        println!("  capability {}", c.id);
    }
    for k in &record.descriptor.checkers {
        println!(
            "  checker role {} as {} (not authorized until `jacobian checkers authorize`)",
            k.role, k.capability_id
        );
    }
    Ok(())
}

/// The check that refused a bundle, in the order install runs them.
fn failed_check(refusal: &InstallError) -> &'static str {
    match refusal {
        InstallError::DigestMismatch { .. } => "digest",
        InstallError::Signature { .. } => "signature",
        InstallError::Prepare { .. } => "component",
        InstallError::Describe { .. } => "describe",
        InstallError::Descriptor { .. } | InstallError::DuplicateId { .. } => "descriptor",
        InstallError::HealthProbe { .. } => "describe_deterministic",
        _ => "examples",
    }
}

/// The report of an accepted check, and whether every example was deterministic.
fn accepted_report(checked: &Checked, report: &mut Value) -> crate::cli::error::Result<bool> {
    let record = &checked.record;
    let (first, second) = (&checked.runs[0], &checked.runs[1]);
    let examples: Vec<Value> = first
        .iter()
        .enumerate()
        .map(|(n, call)| {
            let again = second.get(n).filter(|other| (&other.subject, &other.at) == (&call.subject, &call.at));
            json!({
                "capability_id": call.subject, "example": call.title, "at": call.at,
                "sha256": call.sha256, "deterministic": again.is_some_and(|other| other.sha256 == call.sha256),
            })
        })
        .collect();
    let deterministic = checked.later_failure.is_none()
        && first.len() == second.len()
        && examples.iter().all(|e| e["deterministic"] == true);
    if let Some(failure) = &checked.later_failure {
        report["error"] = format!("the second run of the examples failed: {failure}").into();
    }
    report["kind"] = serde_json::to_value(record.kind)?;
    report["provider"] = serde_json::to_value(&record.provider)?;
    report["imports"] = serde_json::to_value(&record.imports)?;
    report["capabilities"] = record.descriptor.capabilities.iter().map(|c| c.id.clone()).collect();
    report["checkers"] =
        record.descriptor.checkers.iter().map(|k| json!({"role": k.role, "capability_id": k.capability_id})).collect();
    report["checks"] = json!({
        "digest": "PASSED", "component": "PASSED", "describe": "PASSED",
        "describe_deterministic": record.health.describe_deterministic, "descriptor": "PASSED",
        "examples_run": record.health.examples_run, "examples_deterministic": deterministic,
        "fuel_consumed": record.health.fuel_consumed,
    });
    report["example_calls"] = examples.into();
    report["verdict"] = if deterministic { "ACCEPTABLE" } else { "NOT_DETERMINISTIC" }.into();
    Ok(deterministic)
}

/// Run every install check on `bytes`: the report, the check's outcome when
/// it was not refused, and whether the verdict is ACCEPTABLE.
fn check_report(
    runtime: &jacobian::Runtime,
    bytes: &[u8],
    expect: Option<Digest>,
    mut report: Value,
) -> crate::cli::error::Result<(Value, Option<Checked>, bool)> {
    report["digest"] = json!(Digest::of(bytes));
    report["size_bytes"] = bytes.len().into();
    match runtime.check_bundle(bytes, expect) {
        Err(InstallError::Store(e)) => Err(e.into()),
        Err(refusal) => {
            report["verdict"] = "REFUSED".into();
            report["failed_check"] = failed_check(&refusal).into();
            report["error"] = jacobian::errors::render(&refusal).into();
            Ok((report, None, false))
        }
        Ok(checked) => {
            let accepted = accepted_report(&checked, &mut report)?;
            Ok((report, Some(checked), accepted))
        }
    }
}

/// `jacobian check`: the report of every install check, exit 1 when the
/// bundle would be refused or an example is not deterministic. A signature,
/// when there is one, is checked against the policy's publishers and
/// reported; a bundle without one is reported unsigned.
pub fn check(place: Place, args: InstallArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let InstallArgs { source, expect_digest, signature } = args;
    let bundle = fetch(&source, signature)?;
    let runtime = open(data_dir, &store)?;
    let (mut report, _, mut accepted) =
        check_report(&runtime, &bundle.bytes, expect_digest, json!({"bundle": source}))?;
    match runtime.policy().publishers.admit(&bundle.bytes, bundle.signature.as_deref()) {
        Ok(Some(p)) => {
            report["publisher"] = json!({"name": p.name, "key_id": p.key_id, "trusted_comment": p.trusted_comment})
        }
        Ok(None) => report["publisher"] = Value::Null,
        Err(refusal) => {
            if accepted {
                report["verdict"] = "REFUSED".into();
                report["failed_check"] = "signature".into();
                report["error"] = refusal.to_string().into();
            }
            accepted = false;
        }
    }
    println!("{}", serde_json::to_string_pretty(&report)?);
    if !accepted {
        crate::cli::Exit::Negative.exit();
    }
    Ok(())
}

/// `jacobian push`: check, then push with the signature beside it.
pub fn push(place: Place, args: PushArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let PushArgs { file, destination, signature } = args;
    let reference = jacobian::oci::Reference::parse(&destination)?;
    let bytes = read_file(&file)?;
    let signature = signature_file(&file, signature)?;
    let runtime = open(data_dir, &store)?;
    let (report, checked, accepted) =
        check_report(&runtime, &bytes, None, json!({"bundle": file.display().to_string()}))?;
    let Some(checked) = checked.filter(|_| accepted) else {
        crate::cli::error::refuse!(
            "{} would not be installed, so it is not pushed: {}",
            file.display(),
            report["error"].as_str().unwrap_or("its examples are not deterministic")
        );
    };
    let record = &checked.record;
    let entry = match record.kind {
        jacobian_guest::protocol::BundleKind::Capability => "invoke",
        jacobian_guest::protocol::BundleKind::Checker => "check",
    };
    let interface =
        jacobian::oci::Interface { imports: record.imports.clone(), exports: vec!["describe".into(), entry.into()] };
    let manifest = jacobian::oci::push(&reference, &bytes, signature.as_deref(), &interface)?;
    let pinned = jacobian::oci::Reference { tag: None, digest: Some(manifest), ..reference.clone() };
    println!(
        "{}",
        json!({"pushed": reference.to_string(), "component": record.digest, "manifest": manifest,
               "pinned": pinned.to_string(), "signed": signature.is_some()})
    );
    Ok(())
}
