//! Schemas on both backends (migrations, starting together, the same columns) and the SQLite write-ahead log.

use super::*;

/// An older schema is upgraded in place: data written under version 1 is
/// there, unchanged, after `jacobian migrate` applies the later versions.
#[test]
fn migrations_upgrade_an_older_schema_in_place() {
    let url = postgres_database();
    let old = Postgres::connect(&url).unwrap();
    let first = old.migrate_to(1).unwrap();
    assert_eq!((first.from_version, first.schema_version, first.applied.clone()), (0, 1, vec![1]));
    let store: &dyn WorkspaceStore = &old;
    store.create("ws-old", &row(0, "open"), "k", &remember("opened")).unwrap();
    // A producer episode stored before certificates had records: the upgrade records its certificate.
    let certificate = Digest::of(b"an old certificate");
    let producer = Digest::of(b"producer");
    let episode = json!({
        "status": "COMPLETED", "capability_id": "sat.solve",
        "provenance": {"provider_digest": producer.to_string()},
        "check_with": {"certificate_artifact": certificate.artifact_uri(), "checker_role": "sat.certificate",
                       "certificate_format": "lrat", "verify_capability_id": "sat.certificate.verify"},
    });
    let body = serde_json::to_vec(&episode).unwrap();
    let episodes: &dyn EpisodeStore = &old;
    episodes.put(&Digest::of(&body), "sat.solve", &body).unwrap();
    let output = std::process::Command::new(crate::support::BIN).args(["--store", &url, "migrate"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let later: Vec<i32> = (2..=jacobian::store::postgres::SCHEMA_VERSION).collect();
    assert_eq!(report["from_version"], 1);
    assert_eq!(report["applied"], json!(later));
    assert_eq!(report["schema_version"], jacobian::store::postgres::SCHEMA_VERSION);
    assert_eq!(store.revisions("ws-old", 0, 0).unwrap(), vec![row(0, "open")]);
    assert_eq!(store.remembered("open", "k").unwrap(), Some(remember("opened")));
    assert_eq!(episodes.certificate(&certificate).unwrap(), Some(certificate_record("sat.certificate")));
}

#[test]
fn hosts_starting_together_migrate_once_and_agree_on_one_policy() {
    let url = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let applied: Vec<Vec<i32>> = std::thread::scope(|scope| {
        let tasks: Vec<_> =
            (0..4).map(|_| scope.spawn(|| Postgres::connect(&url).unwrap().migrate().unwrap().applied)).collect();
        tasks.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let all: Vec<i32> = (1..=jacobian::store::postgres::SCHEMA_VERSION).collect();
    assert_eq!(applied.iter().filter(|a| **a == all).count(), 1, "one host migrates: {applied:?}");
    assert_eq!(applied.iter().filter(|a| a.is_empty()).count(), 3, "{applied:?}");
    let policies: Vec<String> = std::thread::scope(|scope| {
        let tasks: Vec<_> = (0..4)
            .map(|i| {
                let (url, private) = (&url, dir.path().join(format!("host-{i}")));
                scope.spawn(move || {
                    let data = DataDir::with_objects(&private, Box::new(Postgres::connect(url).unwrap())).unwrap();
                    data.create_policy(&format!("written_by = {i}\n")).unwrap();
                    data.read_policy().unwrap().unwrap()
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(policies.iter().all(|p| *p == policies[0]), "every host reads the one policy: {policies:?}");
}

/// Table name → column names, in order.
type Columns = std::collections::BTreeMap<String, Vec<String>>;

fn sqlite_columns(path: &Path) -> Columns {
    let db = rusqlite::Connection::open(path).unwrap();
    let mut tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").unwrap();
    let names: Vec<String> = tables.query_map([], |row| row.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
    names
        .into_iter()
        .map(|table| {
            let mut info = db.prepare(&format!("PRAGMA table_info({table})")).unwrap();
            let columns = info.query_map([], |row| row.get(1)).unwrap().collect::<Result<_, _>>().unwrap();
            (table, columns)
        })
        .collect()
}

fn postgres_columns(url: &str) -> Columns {
    let db = Postgres::connect(url).unwrap();
    db.migrate().unwrap();
    let tables =
        db.query_texts("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'").unwrap();
    tables
        .into_iter()
        .map(|table| {
            let columns = db
                .query_texts(&format!(
                    "SELECT column_name::text FROM information_schema.columns WHERE table_schema = 'public' \
                     AND table_name = '{table}' ORDER BY ordinal_position"
                ))
                .unwrap();
            (table, columns)
        })
        .collect()
}

#[test]
fn both_backends_keep_the_tables_they_share_with_the_same_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jacobian.db");
    Sqlite::open(&path).unwrap();
    let sqlite = sqlite_columns(&path);
    let postgres = postgres_columns(&postgres_database());
    // What only PostgreSQL keeps: what the data directory keeps in files, and what only several hosts need.
    let shared_only =
        ["objects", "install_records", "policy", "mcp_sessions", "mcp_session_owners", "experiment_reservations"]
            .into_iter()
            .chain(["tenant_buckets", "tenant_calls", "files", "file_chunks"]);
    for (table, columns) in &postgres {
        if shared_only.clone().any(|t| t == table) {
            assert!(!sqlite.contains_key(table), "{table} would be kept twice on one host");
            continue;
        }
        assert_eq!(sqlite.get(table), Some(columns), "{table}: the backends' schemas drifted");
    }
    let missing: Vec<&String> = sqlite.keys().filter(|t| !postgres.contains_key(*t)).collect();
    assert!(missing.is_empty(), "tables only SQLite keeps: {missing:?}");
}

/// The SQLite write-ahead log is copied into the database while the store
/// stays open (no commit checkpoints any more: the checkpointer thread does,
/// once the log passes its threshold, while writers go on).
#[test]
fn the_sqlite_log_is_checkpointed_by_its_own_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jacobian.db");
    let database = Sqlite::open(&path).unwrap();
    let body = vec![b'x'; 128 << 10];
    for i in 0..64u32 {
        let digest = Digest::of(&i.to_le_bytes());
        EpisodeStore::put(&database, &digest, "test.checkpoint", &body).unwrap();
    }
    let size = |suffix: &str| std::fs::metadata(format!("{}{suffix}", path.display())).map_or(0, |m| m.len());
    let written = 64 * body.len() as u64;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while size("") < written && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(size("") >= written, "database {} bytes, log {} bytes: never checkpointed", size(""), size("-wal"));
    let stored = EpisodeStore::get(&database, &Digest::of(&63u32.to_le_bytes())).unwrap();
    assert_eq!(stored.map(|b| b.len()), Some(body.len()));
}

/// Under writing that never pauses, the checkpointer still catches up and the
/// write-ahead log is reused (truncated back to its threshold): a log that
/// only grows makes every later start replay all of it.
#[test]
fn the_sqlite_log_is_reused_under_steady_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jacobian.db");
    let database = Sqlite::open(&path).unwrap();
    let wal = |path: &Path| std::fs::metadata(format!("{}-wal", path.display())).map_or(0, |m| m.len());
    // About 16 MiB a second (a millisecond between writes), for 5 s at most:
    // far more than the threshold, and never a pause long enough for a
    // checkpoint to finish between two commits.
    let body = vec![b'x'; 16 << 10];
    let (mut largest, mut reused) = (0, false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    for i in 0u32.. {
        if std::time::Instant::now() > deadline {
            break;
        }
        EpisodeStore::put(&database, &Digest::of(&i.to_le_bytes()), "test.checkpoint", &body).unwrap();
        let size = wal(&path);
        if size < largest {
            reused = true;
            break;
        }
        largest = size;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(reused, "the log grew to {largest} bytes and was never reused");
}
