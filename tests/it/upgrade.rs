//! One storage layer with a versioned schema: a data directory written by
//! the binary of 052cb71, before the SQLite schema had versions
//! (`tests/fixtures/datadir`, made by `make.sh` there), opens, keeps
//! everything it held and goes on; `jacobian migrate` reports the upgrade; a
//! newer schema is refused and left as it was.

use std::path::{Path, PathBuf};
use std::process::Command;

use jacobian::workspace::wire::{QueryRequest, QueryView, WriteRequest};
use serde_json::{Value, json};

use crate::support::{self, BIN};

const EXPERIMENT: &str = "upgrade-before";
const WORKSPACE: &str = "ws-66d24b85f08d4df9";

/// A copy of the fixture data directory to open (the fixture stays as written).
fn old_data_dir() -> tempfile::TempDir {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/datadir/data-dir-052cb71");
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&fixture, copy.path());
    copy
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn jacobian(dir: &Path, args: &[&str]) -> (i32, Value, Value) {
    let output = Command::new(BIN).arg("--data-dir").arg(dir).args(args).output().unwrap();
    let parse = |bytes: &[u8]| serde_json::from_slice(bytes).unwrap_or(Value::Null);
    (output.status.code().unwrap_or(-1), parse(&output.stdout), parse(&output.stderr))
}

fn schema_versions(dir: &Path) -> Vec<i64> {
    let db = rusqlite::Connection::open(dir.join(jacobian::store::DATABASE_FILE)).unwrap();
    let mut statement = db.prepare("SELECT version FROM jacobian_schema ORDER BY version").unwrap();
    statement.query_map([], |row| row.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

#[test]
fn a_data_directory_from_before_versioned_schemas_opens_keeps_everything_and_goes_on() {
    let dir = old_data_dir();
    let runtime = support::open(dir.path().to_path_buf());
    assert_eq!(
        schema_versions(dir.path()),
        (1..=i64::from(jacobian::store::sqlite::SCHEMA_VERSION)).collect::<Vec<_>>(),
        "upgraded in place"
    );
    // The operator's component, installed by the old binary, is loaded.
    assert!(runtime.load_failures().is_empty(), "{:?}", runtime.load_failures());
    assert!(runtime.catalog().get("test.echo.message").is_some());
    // The experiment it recorded, with its episodes, and an archive of it that replays.
    let lines = runtime.experiments().invocations(EXPERIMENT).unwrap();
    assert_eq!(lines.len(), 3);
    for line in &lines {
        let digest = line.episode.expect("an episode");
        assert!(runtime.episode(&digest).unwrap().is_some(), "episode of line {}", line.ordinal);
    }
    let archive = jacobian::archive::Archive::build(&runtime, EXPERIMENT).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let pack = serde_json::to_vec(&archive).unwrap();
    let report = jacobian::archive::replay(&pack, scratch.path(), &support::reviewer_trust(&pack)).unwrap();
    assert!(report.identical && report.replayed == 3, "{:?}", report.episodes);
    // The countermodel certificate the old binary made has its record (from
    // its producer's episode), so it still routes to the checker of its role.
    let found: Value = serde_json::from_slice(&runtime.episode(&lines[0].episode.unwrap()).unwrap().unwrap()).unwrap();
    let certificate = found["check_with"]["certificate_artifact"].as_str().expect("a certificate").to_owned();
    let digest = jacobian::digest::Digest::from_artifact_uri(&certificate).unwrap();
    let record = runtime.certificate(&digest).unwrap().expect("recorded by the upgrade");
    assert_eq!(record.checker_role, "universal_algebra.countermodel.witness");
    assert_eq!(record.capability_id, "universal_algebra.search.countermodel");
    let routed = runtime.invoke(&jacobian::contract::InvokeRequest {
        capability_id: "certificate.verify".into(),
        input: json!({"certificate": certificate}),
        experiment: Some("after-upgrade".into()),
        ..Default::default()
    });
    assert_eq!(routed.assurance, jacobian::contract::Assurance::Verified, "{:?}", routed.verification);
    // The experiment goes on where it stopped.
    let next = runtime.invoke(&jacobian::contract::InvokeRequest {
        capability_id: "test.echo.message".into(),
        input: json!({"message": "after the upgrade"}),
        experiment: Some(EXPERIMENT.into()),
        ..Default::default()
    });
    assert_eq!(next.accounting.ordinal, Some(4), "{:?}", next.diagnostic);
    // The workspace: its head, and a write on top of it.
    let query = QueryRequest {
        workspace_id: WORKSPACE.into(),
        view: QueryView::Resume,
        revision_id: None,
        target_card_id: None,
        limit: None,
    };
    let resume = runtime.workspaces().query(runtime.data(), &query).unwrap();
    assert_eq!(resume.head_revision_id, "rev-1", "{resume:?}");
    let write: WriteRequest = serde_json::from_value(json!({
        "workspace_id": WORKSPACE, "base_revision": "rev-1", "idempotency_key": "after-upgrade",
        "entries": [{"type": "finding", "kind": "LEMMA", "title": "still writable", "depends_on": ["card-2"]}],
    }))
    .unwrap();
    let written = runtime.workspaces().write(runtime.data(), &write).unwrap();
    assert_eq!(written.revision_id, "rev-2", "{written:?}");
    // Retries of the old binary's open and write get the answers it remembered, read back as typed answers.
    let reopened = runtime
        .workspaces()
        .open(
            runtime.data(),
            &serde_json::from_value(json!({
                "idempotency_key": "upgrade-ws", "title": "Decide associativity",
                "statement": "Is every commutative magma associative?",
            }))
            .unwrap(),
        )
        .unwrap();
    assert_eq!((reopened.workspace_id.as_str(), reopened.revision_id.as_str()), (WORKSPACE, "rev-0"));
    let retried: WriteRequest = serde_json::from_value(json!({
        "workspace_id": WORKSPACE, "base_revision": "rev-0", "idempotency_key": "w1",
        "entries": [{"type": "finding", "client_ref": "l", "kind": "LEMMA", "title": "NOR is commutative",
                     "depends_on": ["card-1"]}],
    }))
    .unwrap();
    let rewritten = runtime.workspaces().write(runtime.data(), &retried).unwrap();
    assert_eq!(rewritten.revision_id, "rev-1", "the remembered answer, not a new revision");
    assert_eq!(rewritten.assigned[0].client_ref, "l");
}

#[test]
fn migrate_reports_the_upgrade_of_a_data_directory_and_refuses_a_newer_schema() {
    let dir = old_data_dir();
    let (code, report, stderr) = jacobian(dir.path(), &["migrate"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        (report["from_version"].clone(), report["applied"].clone()),
        (json!(0), json!((1..=jacobian::store::sqlite::SCHEMA_VERSION).collect::<Vec<_>>())),
        "{report}"
    );
    assert_eq!(report["schema_version"], jacobian::store::sqlite::SCHEMA_VERSION);
    let (_, again, _) = jacobian(dir.path(), &["migrate"]);
    assert_eq!(
        (again["from_version"].clone(), again["applied"].clone()),
        (json!(jacobian::store::sqlite::SCHEMA_VERSION), json!([])),
        "{again}"
    );

    // A database a newer binary migrated: every command is refused, and nothing is changed.
    let db = rusqlite::Connection::open(dir.path().join(jacobian::store::DATABASE_FILE)).unwrap();
    db.execute("INSERT INTO jacobian_schema (version, description) VALUES (99, 'from the future')", []).unwrap();
    drop(db);
    let before = std::fs::read(dir.path().join(jacobian::store::DATABASE_FILE)).unwrap();
    for args in [&["migrate"][..], &["components"], &["checkers", "list"]] {
        let (code, _, envelope) = jacobian(dir.path(), args);
        assert_eq!(code, 3, "{args:?}");
        assert_eq!(envelope["error_type"], "schema_too_new", "{args:?}: {envelope}");
        let error = envelope["error"].as_str().unwrap();
        assert!(error.contains("schema version 99") && error.contains("jacobian.db"), "{error}");
    }
    assert_eq!(std::fs::read(dir.path().join(jacobian::store::DATABASE_FILE)).unwrap(), before, "left as it was");
}
