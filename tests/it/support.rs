//! Shared helpers: fresh data directories, the test guests, outside truth.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use jacobian::contract::{BudgetRequest, CapabilityResult, InvokeRequest};
use jacobian::engine::EngineConfig;
use jacobian::{Runtime, RuntimeConfig};
use jacobian_guest::protocol::Mode;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// A runtime over a fresh data directory (kept alive by the returned guard).
pub fn runtime() -> (Arc<Runtime>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path().to_path_buf());
    (runtime, dir)
}

/// Open a runtime on an existing data directory.
pub fn open(data_dir: PathBuf) -> Arc<Runtime> {
    open_with_slots(data_dir, 8)
}

/// Open a runtime whose sandbox pool has `slots` instance slots.
pub fn open_with_slots(data_dir: PathBuf, slots: u32) -> Arc<Runtime> {
    open_with_queue(data_dir, slots, EngineConfig::default().max_queued_calls)
}

/// Open a runtime with `slots` instance slots and room for `queued` waiting calls.
pub fn open_with_queue(data_dir: PathBuf, slots: u32, queued: u32) -> Arc<Runtime> {
    let config = RuntimeConfig {
        engine: EngineConfig { max_concurrent_calls: slots, max_queued_calls: queued, ..EngineConfig::default() },
        ..RuntimeConfig::new(data_dir)
    };
    Arc::new(Runtime::open(config).expect("runtime opens"))
}

/// Bytes of a test guest built by the same pipeline as the bundled components.
pub fn test_guest(name: &str) -> Vec<u8> {
    let path = PathBuf::from(jacobian::bundled::TEST_GUESTS_DIR).join(format!("jacobian_test_{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("test guest {}: {e}", path.display()))
}

/// `../shared/testdata/<rel>` relative to the project root, read in place.
pub fn testdata(rel: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join("../shared/testdata").join(rel);
    assert!(path.exists(), "outside truth missing: {} (the project expects ../shared beside it)", path.display());
    path
}

/// Invoke and return the result.
pub fn invoke(runtime: &Runtime, id: &str, mode: Mode, input: Value) -> CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: id.into(),
        mode: Some(mode),
        input,
        budget: None,
        view: None,
        experiment: None,
        tenant: None,
    })
}

/// Invoke with a budget.
pub fn invoke_with(runtime: &Runtime, id: &str, input: Value, budget: BudgetRequest) -> CapabilityResult {
    runtime.invoke(&InvokeRequest {
        capability_id: id.into(),
        mode: None,
        input,
        budget: Some(budget),
        view: None,
        experiment: None,
        tenant: None,
    })
}

/// What a reviewer trusts to re-check a pack from an earlier binary: the
/// checkers its verdicts name, which this binary does not bundle and so
/// nothing else authorizes.
pub fn reviewer_trust(pack: &[u8]) -> jacobian::archive::Trust {
    let archive: Value = serde_json::from_slice(pack).expect("a pack");
    let authorized = archive["episodes"]
        .as_array()
        .expect("episodes")
        .iter()
        .filter_map(|e| e["episode"]["verification"].as_object())
        .map(|v| jacobian::policy::Authorization {
            role: v["checker_role"].as_str().expect("role").to_owned(),
            digest: v["checker_digest"].as_str().expect("digest").parse().expect("a digest"),
        })
        .collect();
    jacobian::archive::Trust { authorized, ..Default::default() }
}

/// Record an artifact stored behind the pipeline's back (a tampered copy of
/// `original`, with the same lineage) as a certificate with `original`'s
/// record, as if its producer had made it so; its URI.
pub fn recorded_like(runtime: &Runtime, tampered: jacobian::digest::Digest, original: &str) -> String {
    let original = jacobian::digest::Digest::from_artifact_uri(original).expect("a URI");
    let record = runtime.certificate(&original).expect("readable").expect("a recorded certificate");
    runtime.adopt_certificate(&tampered, &record).expect("adopted");
    tampered.artifact_uri()
}

/// A stored artifact's envelope.
pub fn stored(runtime: &Runtime, uri: &str) -> Value {
    let digest = jacobian::digest::Digest::from_artifact_uri(uri).expect("a URI");
    serde_json::from_slice(&runtime.data().read_artifact(&digest).expect("stored")).expect("JSON")
}

/// Store a copy of a certificate artifact with its content edited, recorded
/// like the original (`recorded_like`); its URI.
pub fn tampered(runtime: &Runtime, uri: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut envelope = stored(runtime, uri);
    edit(&mut envelope["content"]);
    recorded_like(runtime, runtime.data().put_artifact(&envelope).expect("stored").0, uri)
}

/// An OEIS sequence from `oracles/sequences.json` (outside truth), from order 0.
pub fn sequence(id: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(testdata("oracles/sequences.json")).expect("sequences.json");
    let sequences: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(sequences[id]["offset"], 0);
    sequences[id]["values"].as_array().expect("values").iter().map(|v| v.as_u64().expect("a count")).collect()
}

/// The result as JSON without its accounting section (timings).
pub fn without_accounting(result: &CapabilityResult) -> String {
    let mut value = serde_json::to_value(result).expect("serializes");
    value.as_object_mut().expect("object").remove("accounting");
    serde_json::to_string(&value).expect("serializes")
}

pub const SEARCH: &str = "universal_algebra.search.countermodel";
pub const VERIFY: &str = "universal_algebra.countermodel.verify";

pub const BIN: &str = env!("CARGO_BIN_EXE_jacobian");

pub async fn serve(data_dir: &Path) -> RunningService<RoleClient, ()> {
    serve_with_args(data_dir, &[]).await
}

/// `jacobian --data-dir DIR serve ARGS…` as an MCP client session.
pub async fn serve_with_args(data_dir: &Path, args: &[&str]) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(BIN);
    command.arg("--data-dir").arg(data_dir).arg("serve").args(args);
    let transport = TokioChildProcess::new(command).expect("spawn jacobian serve");
    ().serve(transport).await.expect("MCP initialize")
}

/// Call a tool; returns (structured content, is_error).
pub async fn call(client: &RunningService<RoleClient, ()>, tool: &str, arguments: Value) -> (Value, bool) {
    let arguments = arguments.as_object().cloned().expect("object arguments");
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool} call failed at the protocol level: {e}"));
    let structured = result.structured_content.clone().expect("structured content");
    (structured, result.is_error == Some(true))
}

/// Read a text resource.
pub async fn read_resource(client: &RunningService<RoleClient, ()>, uri: &str) -> String {
    let result = client.read_resource(rmcp::model::ReadResourceRequestParams::new(uri)).await.expect("resource");
    match &result.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

pub fn cli(data_dir: &Path, args: &[&str]) -> String {
    let output = Command::new(BIN).arg("--data-dir").arg(data_dir).args(args).output().expect("run jacobian");
    assert!(output.status.success(), "jacobian {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A fresh, empty PostgreSQL database for one test; returns its URL.
/// `scripts/test.sh` installs and starts a server and sets
/// `JACOBIAN_TEST_POSTGRES` to a URL whose role may create databases.
pub fn postgres_database() -> String {
    let admin = std::env::var("JACOBIAN_TEST_POSTGRES").unwrap_or_else(|_| {
        panic!(
            "JACOBIAN_TEST_POSTGRES is not set: scripts/test.sh starts PostgreSQL and sets it \
             (or point it at a server whose role may CREATE DATABASE)"
        )
    });
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let name = format!(
        "jt_{}_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000_000,
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    jacobian::store::postgres::Postgres::connect(&admin)
        .expect("the test PostgreSQL server")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create a test database");
    jacobian::store::postgres::with_database(&admin, &name)
}
