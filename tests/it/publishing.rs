//! Signed bundles and OCI registries, through the CLI: keys and signatures
//! made by Debian's `minisign`, bundles pushed to and pulled from Debian's
//! `docker-registry` (the CNCF distribution registry) on loopback, one
//! artifact pushed by a client that is not ours (plain HTTP calls in the
//! CNCF layout, as `wkg` writes it).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use jacobian::archive::{Archive, ReplayOutcome, replay};
use jacobian::digest::Digest;
use jacobian_guest::protocol::Mode;
use serde_json::{Value, json};

use crate::support::{self, BIN, cli};

fn run(data: &Path, args: &[&str]) -> Output {
    Command::new(BIN).arg("--data-dir").arg(data).args(args).output().expect("run jacobian")
}

/// The error envelope's `error_type` of a command that must fail with exit 3.
fn refused(data: &Path, args: &[&str]) -> (String, String) {
    let output = run(data, args);
    assert_eq!(output.status.code(), Some(3), "jacobian {args:?}: {}", String::from_utf8_lossy(&output.stdout));
    let envelope: Value = serde_json::from_slice(&output.stderr).expect("an error envelope");
    (envelope["error_type"].as_str().unwrap().to_owned(), envelope["error"].as_str().unwrap().to_owned())
}

fn minisign(dir: &Path, args: &[&str]) {
    let output = Command::new("minisign").args(args).current_dir(dir).output().expect("minisign (Debian: minisign)");
    assert!(output.status.success(), "minisign {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// A key pair made by minisign: (public key file, secret key file).
fn keypair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (public, secret) = (dir.join(format!("{name}.pub")), dir.join(format!("{name}.key")));
    minisign(dir, &["-G", "-W", "-p", public.to_str().unwrap(), "-s", secret.to_str().unwrap()]);
    (public, secret)
}

/// Write a test guest to `dir/<file>` and sign it with `secret` (prehashed, minisign's default) into
/// `<file>.minisig`, unless `secret` is None.
fn bundle(dir: &Path, guest: &str, file: &str, secret: Option<&Path>) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, support::test_guest(guest)).unwrap();
    if let Some(secret) = secret {
        minisign(dir, &["-S", "-s", secret.to_str().unwrap(), "-m", file, "-t", &format!("{guest} for the tests")]);
    }
    path
}

fn installed(data: &Path) -> Vec<String> {
    let components: Value = serde_json::from_str(&cli(data, &["components"])).expect("JSON");
    let list = components["components"].as_array().or(components.as_array()).cloned().unwrap_or_default();
    list.iter()
        .filter(|c| c["tier"] == "OPERATOR")
        .map(|c| c["digest"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A data directory that trusts `public` as "Example Labs" and requires signatures.
fn requiring(dir: &Path, public: &Path) -> PathBuf {
    let data = dir.join("data");
    cli(&data, &["publishers", "trust", "Example Labs", "--key", public.to_str().unwrap()]);
    cli(&data, &["publishers", "require", "on"]);
    data
}

#[test]
fn installs_need_a_trusted_publishers_signature_when_the_policy_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (public, secret) = keypair(dir.path(), "labs");
    let (_, stranger) = keypair(dir.path(), "stranger");
    let data = requiring(dir.path(), &public);
    let listed: Value = serde_json::from_str(&cli(&data, &["publishers", "list"])).unwrap();
    assert_eq!(listed["require_signature"], true);
    assert_eq!(listed["trusted"][0]["name"], "Example Labs");

    let unsigned = bundle(dir.path(), "echo", "unsigned.wasm", None);
    let (kind, message) = refused(&data, &["install", unsigned.to_str().unwrap()]);
    assert_eq!(kind, "signature_required", "{message}");
    // A signature of other bytes (the hostile guest's), given for echo.
    bundle(dir.path(), "hostile", "hostile.wasm", Some(&secret));
    let hostile_sig = dir.path().join("hostile.wasm.minisig");
    let (kind, message) =
        refused(&data, &["install", unsigned.to_str().unwrap(), "--signature", hostile_sig.to_str().unwrap()]);
    assert_eq!(kind, "signature_invalid", "{message}");
    assert!(message.contains("not the ones signed"), "{message}");
    // A good signature by a key the policy does not trust.
    let by_stranger = bundle(dir.path(), "echo", "stranger.wasm", Some(&stranger));
    let (kind, message) = refused(&data, &["install", by_stranger.to_str().unwrap()]);
    assert_eq!(kind, "untrusted_publisher", "{message}");
    // A signature file that is not one.
    std::fs::write(dir.path().join("garbled.wasm.minisig"), "untrusted comment: x\nnot a signature\n").unwrap();
    std::fs::write(dir.path().join("garbled.wasm"), support::test_guest("echo")).unwrap();
    let (kind, _) = refused(&data, &["install", dir.path().join("garbled.wasm").to_str().unwrap()]);
    assert_eq!(kind, "signature_invalid");
    assert!(installed(&data).is_empty(), "nothing refused was installed");
    // `check` says the same before installing.
    let checked = run(&data, &["check", by_stranger.to_str().unwrap()]);
    let report: Value = serde_json::from_slice(&checked.stdout).expect("a report");
    assert_eq!((checked.status.code(), &report["failed_check"]), (Some(1), &json!("signature")), "{report}");

    // Signed by the trusted key (FILE.minisig found beside it): installed, and the publisher shown.
    let signed = bundle(dir.path(), "echo", "echo.wasm", Some(&secret));
    let said = cli(&data, &["install", signed.to_str().unwrap()]);
    assert!(said.contains("signed by Example Labs"), "{said}");
    let full: Value =
        serde_json::from_str(&cli(&data, &["describe", "--id", "test.echo.message", "--view", "FULL"])).unwrap();
    let publisher = &full["audit"]["publisher"];
    assert_eq!(
        (publisher["name"].as_str(), publisher["trusted_comment"].as_str()),
        (Some("Example Labs"), Some("echo for the tests")),
        "{full}"
    );

    // The archive carries the signature; a replay re-verifies it, and refuses a pack whose signature was swapped.
    let runtime = support::open(data.clone());
    let request = jacobian::contract::InvokeRequest {
        capability_id: "test.echo.message".into(),
        mode: Some(Mode::Explore),
        input: json!({"message": "signed"}),
        budget: None,
        view: None,
        experiment: Some("signed-pack".into()),
        tenant: None,
    };
    assert_eq!(runtime.invoke(&request).status, jacobian::contract::Status::Completed);
    let archive = Archive::build(&runtime, "signed-pack").expect("archives");
    let echo_hex = Digest::of(&support::test_guest("echo")).to_hex();
    assert_eq!(archive.publishers[&echo_hex].name, "Example Labs");
    let pack = serde_json::to_vec(&archive).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let report = replay(&pack, scratch.path(), &Default::default()).expect("replays");
    assert!(report.episodes.iter().all(|e| e.outcome == ReplayOutcome::Identical), "{:?}", report.episodes);
    let mut swapped = archive.clone();
    let hostile_signature = std::fs::read_to_string(&hostile_sig).unwrap();
    swapped.publishers.get_mut(&echo_hex).unwrap().signature = hostile_signature;
    let error = replay(&serde_json::to_vec(&swapped).unwrap(), scratch.path(), &Default::default())
        .expect_err("a signature that does not hold");
    assert_eq!(error.field, format!("publishers.{echo_hex}"), "{error}");
}

/// Debian's docker-registry on a loopback port, storing under `root`.
struct Registry {
    child: Child,
    address: String,
    root: PathBuf,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Registry {
    fn start(dir: &Path) -> Registry {
        Registry::start_with(dir, "")
    }

    /// A registry whose configuration ends with `extra` (YAML).
    fn start_with(dir: &Path, extra: &str) -> Registry {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let address = format!("127.0.0.1:{port}");
        let root = dir.join("registry");
        let config = dir.join("registry.yml");
        let yaml = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {address}\n{extra}",
            root.display()
        );
        std::fs::write(&config, yaml).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("docker-registry (Debian: docker-registry)");
        let registry = Registry { child, address, root };
        for _ in 0..100 {
            // Up: it answers, if only with 401 when it wants credentials.
            if let Ok(response) = ureq::get(&format!("http://{}/v2/", registry.address))
                .config()
                .http_status_as_error(false)
                .build()
                .call()
                && [200, 401].contains(&response.status().as_u16())
            {
                return registry;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("docker-registry did not answer at {}", registry.address);
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}/v2/{path}", self.address)
    }

    /// The stored bytes of a blob (the registry's filesystem layout).
    fn blob_file(&self, digest: &Digest) -> PathBuf {
        let hex = digest.to_hex();
        self.root.join(format!("docker/registry/v2/blobs/sha256/{}/{hex}/data", &hex[..2]))
    }

    /// Push `bytes` as a blob with plain HTTP calls (not our client).
    fn put_blob(&self, repository: &str, bytes: &[u8]) -> Digest {
        let digest = Digest::of(bytes);
        let started = ureq::post(&self.url(&format!("{repository}/blobs/uploads/"))).send_empty().unwrap();
        let location = started.headers()["location"].to_str().unwrap().to_owned();
        let location = if location.starts_with('/') { format!("http://{}{location}", self.address) } else { location };
        let separator = if location.contains('?') { '&' } else { '?' };
        ureq::put(&format!("{location}{separator}digest=sha256%3A{}", digest.to_hex())).send(bytes).unwrap();
        digest
    }
}

#[test]
fn bundles_travel_through_a_real_oci_registry_signed_and_checked_by_digest() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::start(dir.path());
    let (public, secret) = keypair(dir.path(), "labs");
    let echo = bundle(dir.path(), "echo", "echo.wasm", Some(&secret));
    let hostile = bundle(dir.path(), "hostile", "hostile.wasm", None);
    let base = format!("oci://{}/jacobian", registry.address);

    // An author pushes a checked bundle with its signature, and an unsigned one.
    let pushed: Value = serde_json::from_str(&cli(
        &dir.path().join("author"),
        &["push", echo.to_str().unwrap(), &format!("{base}/echo:1.0")],
    ))
    .expect("JSON");
    assert_eq!(
        (pushed["signed"].as_bool(), pushed["component"].as_str()),
        (Some(true), Some(Digest::of(&support::test_guest("echo")).to_string().as_str()))
    );
    let pinned = pushed["pinned"].as_str().unwrap().to_owned();
    cli(&dir.path().join("author"), &["push", hostile.to_str().unwrap(), &format!("{base}/hostile:1.0")]);
    // A bundle `check` refuses is not pushed.
    let sneaky = bundle(dir.path(), "sneaky", "sneaky.wasm", None);
    let refusal = run(&dir.path().join("author"), &["push", sneaky.to_str().unwrap(), &format!("{base}/sneaky:1.0")]);
    assert_eq!(refusal.status.code(), Some(3));
    let sneaky_manifest = ureq::get(&registry.url("jacobian/sneaky/manifests/1.0"))
        .header("Accept", "application/vnd.oci.image.manifest.v1+json")
        .config()
        .http_status_as_error(false)
        .build()
        .call()
        .expect("the registry answers");
    assert_eq!(sneaky_manifest.status().as_u16(), 404, "a refused bundle is not pushed");

    // The artifact is the CNCF layout: a wasm config, one application/wasm layer that is the component.
    let text = ureq::get(&registry.url("jacobian/echo/manifests/1.0"))
        .header("Accept", "application/vnd.oci.image.manifest.v1+json")
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(manifest["config"]["mediaType"], "application/vnd.wasm.config.v0+json");
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(manifest["layers"][0]["digest"], pushed["component"]);

    // An operator who requires signatures installs by tag and by pinned digest, and refuses the unsigned one.
    let data = requiring(dir.path(), &public);
    let said = cli(&data, &["install", &format!("{base}/echo:1.0")]);
    assert!(said.contains("signed by Example Labs") && said.contains("pulled from"), "{said}");
    let other = dir.path().join("other");
    cli(&other, &["publishers", "trust", "Example Labs", "--key", public.to_str().unwrap()]);
    cli(&other, &["publishers", "require", "on"]);
    assert!(cli(&other, &["install", &pinned]).starts_with("installed "));
    let (kind, message) = refused(&other, &["install", &format!("{base}/hostile:1.0")]);
    assert_eq!(kind, "signature_required", "{message}");

    // A tampered layer is refused by digest, before anything is checked or stored.
    let fresh = dir.path().join("fresh");
    let layer = registry.blob_file(&Digest::of(&support::test_guest("echo")));
    let mut bytes = std::fs::read(&layer).unwrap();
    bytes[1000] ^= 0x01;
    std::fs::write(&layer, &bytes).unwrap();
    let (kind, message) = refused(&fresh, &["install", &pinned]);
    assert_eq!(kind, "digest_mismatch", "{message}");
    assert!(message.starts_with("layer sha256:"), "{message}");
    assert!(installed(&fresh).is_empty());
    bytes[1000] ^= 0x01;
    std::fs::write(&layer, &bytes).unwrap();
    // A manifest whose stored bytes changed no longer hashes to the pinned digest.
    let manifest_digest: Digest = pinned.rsplit_once('@').unwrap().1.parse().unwrap();
    let manifest_file = registry.blob_file(&manifest_digest);
    let original = std::fs::read(&manifest_file).unwrap();
    std::fs::write(&manifest_file, [&original[..], b" "].concat()).unwrap();
    let (kind, message) = refused(&fresh, &["install", &pinned]);
    assert_eq!(kind, "digest_mismatch", "{message}");
    assert!(message.starts_with("manifest sha256:"), "{message}");
    std::fs::write(&manifest_file, &original).unwrap();
    // A pinned digest the registry does not hold, and a tag that is not there.
    let wrong = format!("{base}/echo@{}", Digest::of(b"another manifest"));
    assert_eq!(refused(&fresh, &["install", &wrong]).0, "not_found");
    assert_eq!(refused(&fresh, &["install", &format!("{base}/echo:2.0")]).0, "not_found");

    // An artifact written by another client in the same layout installs (signatures optional here).
    let guest = support::test_guest("echo");
    let layer = registry.put_blob("elsewhere/echo", &guest);
    let config = serde_json::to_vec(&json!({"created": "2026-12-01T00:00:00Z", "author": null,
        "architecture": "wasm", "os": "wasip2", "layerDigests": [layer.to_string()],
        "component": {"exports": ["describe", "invoke"], "imports": [], "target": null}}))
    .unwrap();
    let config_digest = registry.put_blob("elsewhere/echo", &config);
    let manifest = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.wasm.config.v0+json", "digest": config_digest.to_string(), "size": config.len()},
        "layers": [{"mediaType": "application/wasm", "digest": layer.to_string(), "size": guest.len()}]});
    ureq::put(&registry.url("elsewhere/echo/manifests/v1"))
        .header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        .send(serde_json::to_vec(&manifest).unwrap())
        .unwrap();
    let open = dir.path().join("open");
    let said = cli(&open, &["install", &format!("oci://{}/elsewhere/echo:v1", registry.address)]);
    assert!(said.starts_with(&format!("installed {layer}")), "{said}");
    assert_eq!(installed(&open), vec![layer.to_string()]);
}

#[test]
fn a_registry_that_wants_credentials_gets_them_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let htpasswd =
        Command::new("htpasswd").args(["-nbB", "author", "s3cret"]).output().expect("htpasswd (Debian: apache2-utils)");
    std::fs::write(dir.path().join("htpasswd"), &htpasswd.stdout).unwrap();
    let auth =
        format!("auth:\n  htpasswd:\n    realm: jacobian-tests\n    path: {}\n", dir.path().join("htpasswd").display());
    let registry = Registry::start_with(dir.path(), &auth);
    let echo = bundle(dir.path(), "echo", "echo.wasm", None);
    let target = format!("oci://{}/private/echo:1", registry.address);
    let with = |host: &str, user: &str, password: &str, args: &[&str]| {
        Command::new(BIN)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(args)
            .env("JACOBIAN_REGISTRY_HOST", host)
            .env("JACOBIAN_REGISTRY_USER", user)
            .env("JACOBIAN_REGISTRY_PASSWORD", password)
            .output()
            .unwrap()
    };
    // No credentials: refused, naming the variables; wrong ones: refused.
    let (kind, message) = refused(&dir.path().join("data"), &["push", echo.to_str().unwrap(), &target]);
    assert_eq!(kind, "unauthorized", "{message}");
    assert!(message.contains("JACOBIAN_REGISTRY_USER") && message.contains(&registry.address), "{message}");
    let wrong = with(&registry.address, "author", "guess", &["push", echo.to_str().unwrap(), &target]);
    let envelope: Value = serde_json::from_slice(&wrong.stderr).expect("an envelope");
    assert_eq!((wrong.status.code(), envelope["error_type"].as_str()), (Some(3), Some("unauthorized")), "{envelope}");
    // The right ones, meant for another registry: not sent here.
    let elsewhere = with("registry.example:5000", "author", "s3cret", &["push", echo.to_str().unwrap(), &target]);
    let envelope: Value = serde_json::from_slice(&elsewhere.stderr).expect("an envelope");
    assert_eq!(envelope["error_type"], "unauthorized", "{envelope}");
    assert!(envelope["error"].as_str().unwrap().contains("JACOBIAN_REGISTRY_HOST"), "{envelope}");
    // The right ones for this registry: pushed, and pulled back.
    let pushed = with(&registry.address, "author", "s3cret", &["push", echo.to_str().unwrap(), &target]);
    assert!(pushed.status.success(), "{}", String::from_utf8_lossy(&pushed.stderr));
    let fresh = dir.path().join("fresh");
    let pulled = Command::new(BIN)
        .arg("--data-dir")
        .arg(&fresh)
        .args(["install", &target])
        .env("JACOBIAN_REGISTRY_HOST", &registry.address)
        .env("JACOBIAN_REGISTRY_USER", "author")
        .env("JACOBIAN_REGISTRY_PASSWORD", "s3cret")
        .output()
        .unwrap();
    assert!(pulled.status.success(), "{}", String::from_utf8_lossy(&pulled.stderr));
    assert_eq!(installed(&fresh), vec![Digest::of(&support::test_guest("echo")).to_string()]);
}
