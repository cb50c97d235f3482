//! The store conformance suite: every store trait, run alike against the
//! embedded SQLite stores and against PostgreSQL (a real server that
//! scripts/test.sh starts). "Two hosts" are two independently opened
//! handles on the same database.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jacobian::digest::Digest;
use jacobian::experiments::{Admission, ExperimentBudgets, InvocationRecord, Reservation, StopReason};
use jacobian::runtime::Experiments;
use jacobian::store::postgres::Postgres;
use jacobian::store::sqlite::Sqlite;
use jacobian::store::{
    Appended, CertificateRecord, DataDir, EpisodeStore, ExperimentStore, Remembered, RevisionRow, StoreError,
    WorkspaceStore,
};
use serde_json::json;

use crate::support::postgres_database;

mod schema;

mod quotas;

/// One host's view of a backend.
struct Handle {
    workspaces: Box<dyn WorkspaceStore>,
    episodes: Box<dyn EpisodeStore>,
    experiments: Box<dyn ExperimentStore>,
    data: DataDir,
}

/// A backend under test: opens any number of handles on one shared state.
struct Backend {
    name: &'static str,
    dir: tempfile::TempDir,
    url: Option<String>,
}

impl Backend {
    fn both() -> Vec<Backend> {
        let sqlite = Backend { name: "sqlite", dir: tempfile::tempdir().unwrap(), url: None };
        let postgres = Backend { name: "postgres", dir: tempfile::tempdir().unwrap(), url: Some(postgres_database()) };
        vec![sqlite, postgres]
    }

    /// A handle; `host` names its private directory (the code cache).
    fn open(&self, host: usize) -> Handle {
        match &self.url {
            None => {
                let database = Sqlite::open(&self.dir.path().join("jacobian.db")).unwrap();
                Handle {
                    workspaces: Box::new(database.clone()),
                    episodes: Box::new(database.clone()),
                    experiments: Box::new(database),
                    data: DataDir::open(self.dir.path()).unwrap(),
                }
            }
            Some(url) => {
                let shared = Postgres::connect(url).unwrap();
                shared.migrate().unwrap();
                let private: PathBuf = self.dir.path().join(format!("host-{host}"));
                Handle {
                    workspaces: Box::new(shared.clone()),
                    episodes: Box::new(shared.clone()),
                    experiments: Box::new(shared.clone()),
                    data: DataDir::with_objects(&private, Box::new(shared)).unwrap(),
                }
            }
        }
    }

    /// The experiment service of `hosts` hosts. The SQLite store serves one
    /// process, so its "hosts" are one service; PostgreSQL gets one per host.
    fn experiment_services(&self, hosts: usize) -> Vec<Arc<Experiments>> {
        match &self.url {
            None => {
                let database = self.dir.path().join("jacobian.db");
                let one = Arc::new(Experiments::new(Box::new(Sqlite::open(&database).unwrap())));
                vec![one; hosts]
            }
            Some(url) => (0..hosts)
                .map(|_| {
                    let shared = Postgres::connect(url).unwrap();
                    shared.migrate().unwrap();
                    Arc::new(Experiments::new(Box::new(shared)))
                })
                .collect(),
        }
    }

    /// Overwrite a stored artifact's bytes behind the store's back.
    fn tamper_artifact(&self, digest: &Digest) {
        match &self.url {
            None => std::fs::write(self.dir.path().join(format!("artifacts/{}.json", digest.to_hex())), b"{}").unwrap(),
            Some(url) => Postgres::connect(url)
                .unwrap()
                .batch_execute(&format!("UPDATE objects SET body = '\\x7b7d' WHERE digest = '{}'", digest.to_hex()))
                .unwrap(),
        }
    }
}

fn row(number: u64, text: &str) -> RevisionRow {
    RevisionRow { number, request: text.as_bytes().to_vec(), artifact: format!("artifact {text}").into_bytes() }
}

fn remember(text: &str) -> Remembered {
    Remembered { payload_digest: Digest::of(text.as_bytes()).to_hex(), response: text.as_bytes().to_vec() }
}

#[test]
fn workspace_stores_create_append_conflict_and_remember_alike() {
    for backend in Backend::both() {
        let name = backend.name;
        let store = backend.open(0).workspaces;
        assert_eq!(store.create("ws-a", &row(0, "open"), "k-open", &remember("opened")).unwrap(), None, "{name}");
        assert_eq!(
            store.create("ws-a", &row(0, "open"), "k-open", &remember("again")).unwrap(),
            Some(remember("opened")),
            "{name}: a used key answers with the first response"
        );
        assert_eq!(store.head("ws-a").unwrap(), Some(0), "{name}");
        assert_eq!(store.head("ws-none").unwrap(), None, "{name}");
        assert_eq!(store.append("ws-a", 0, &row(1, "one"), "k1", &remember("r1")).unwrap(), Appended::Done, "{name}");
        assert_eq!(
            store.append("ws-a", 0, &row(1, "other"), "k2", &remember("r2")).unwrap(),
            Appended::Conflict { head: 1 },
            "{name}: a stale base writes nothing"
        );
        assert_eq!(
            store.append("ws-a", 0, &row(1, "one"), "k1", &remember("r1")).unwrap(),
            Appended::Remembered(remember("r1")),
            "{name}: a retried key is answered, not applied"
        );
        assert_eq!(
            store.append("ws-none", 0, &row(1, "x"), "k3", &remember("r3")).unwrap(),
            Appended::NotFound,
            "{name}"
        );
        assert_eq!(store.remembered("ws-a", "k1").unwrap(), Some(remember("r1")), "{name}");
        assert_eq!(store.remembered("ws-a", "k2").unwrap(), None, "{name}: the conflicting key stays unused");
        assert_eq!(store.revisions("ws-a", 0, 5).unwrap(), vec![row(0, "open"), row(1, "one")], "{name}");
        assert_eq!(store.revisions("ws-a", 1, 1).unwrap(), vec![row(1, "one")], "{name}");
        // Reopened (a restarted host), everything acknowledged is there.
        let reopened = backend.open(1).workspaces;
        assert_eq!(reopened.head("ws-a").unwrap(), Some(1), "{name}");
        assert_eq!(reopened.remembered("open", "k-open").unwrap(), Some(remember("opened")), "{name}");
    }
}

#[test]
fn racing_writers_on_two_handles_get_exactly_one_winner() {
    for backend in Backend::both() {
        let name = backend.name;
        let hosts: Vec<Arc<Handle>> = (0..2).map(|h| Arc::new(backend.open(h))).collect();
        hosts[0].workspaces.create("ws-race", &row(0, "open"), "open", &remember("opened")).unwrap();
        // Eight writers, four per host, all against rev-0.
        let outcomes: Vec<Appended> = std::thread::scope(|scope| {
            let tasks: Vec<_> = (0..8)
                .map(|w| {
                    let host = hosts[w % 2].clone();
                    scope.spawn(move || {
                        let text = format!("writer {w}");
                        host.workspaces.append("ws-race", 0, &row(1, &text), &format!("key-{w}"), &remember(&text))
                    })
                })
                .collect();
            tasks.into_iter().map(|t| t.join().unwrap().unwrap()).collect()
        });
        let winners = outcomes.iter().filter(|o| **o == Appended::Done).count();
        let conflicts = outcomes.iter().filter(|o| **o == Appended::Conflict { head: 1 }).count();
        assert_eq!((winners, conflicts), (1, 7), "{name}: {outcomes:?}");
        // The same open key raced from both hosts: one creates, the other is answered.
        let opens: Vec<Option<Remembered>> = std::thread::scope(|scope| {
            let tasks: Vec<_> = (0..2)
                .map(|h| {
                    let host = hosts[h].clone();
                    scope.spawn(move || host.workspaces.create("ws-twice", &row(0, "o"), "same", &remember("first")))
                })
                .collect();
            tasks.into_iter().map(|t| t.join().unwrap().unwrap()).collect()
        });
        assert_eq!(opens.iter().filter(|o| o.is_none()).count(), 1, "{name}: {opens:?}");
        assert!(opens.iter().flatten().all(|r| *r == remember("first")), "{name}: {opens:?}");
        assert_eq!(hosts[1].workspaces.revisions("ws-twice", 0, 9).unwrap().len(), 1, "{name}");
    }
}

#[test]
fn episode_stores_keep_bytes_by_digest_idempotently() {
    for backend in Backend::both() {
        let name = backend.name;
        let (a, b) = (backend.open(0), backend.open(1));
        let body = br#"{"episode":1}"#;
        let digest = Digest::of(body);
        a.episodes.put(&digest, "test.cap", body).unwrap();
        a.episodes.put(&digest, "test.cap", body).unwrap();
        assert_eq!(b.episodes.get(&digest).unwrap().as_deref(), Some(&body[..]), "{name}: the other host reads it");
        assert_eq!(b.episodes.get(&Digest::of(b"absent")).unwrap(), None, "{name}");
    }
}

/// A recalled checker's verdicts are found by its digest, and re-checks
/// recorded beside them are read back in order by every host, once each.
#[test]
fn verdicts_are_found_by_their_checker_and_rechecks_kept_beside_them_on_every_host() {
    for backend in Backend::both() {
        let name = backend.name;
        let (a, b) = (backend.open(0), backend.open(1));
        let checker = Digest::of(b"a recalled checker");
        let body = format!(r#"{{"verification":{{"checker_digest":"{checker}","status":"VERIFIED"}}}}"#);
        let digest = Digest::of(body.as_bytes());
        a.episodes.put(&digest, "test.yes.verify", body.as_bytes()).unwrap();
        let other = br#"{"verification":{"checker_digest":"sha256:00","status":"VERIFIED"}}"#;
        a.episodes.put(&Digest::of(other), "x", other).unwrap();
        assert_eq!(b.episodes.verdicts_by(&checker).unwrap(), vec![digest], "{name}");
        let recheck = |n: u8| jacobian::store::RecheckRecord {
            episode: digest,
            recalled: checker,
            recheck: Digest::of(&[n]),
            status: "REJECTED".into(),
            checker: Digest::of(b"the fixed checker"),
        };
        a.episodes.put_recheck(&recheck(2)).unwrap();
        b.episodes.put_recheck(&recheck(1)).unwrap();
        a.episodes.put_recheck(&recheck(2)).unwrap();
        assert_eq!(b.episodes.rechecks(&digest).unwrap(), vec![recheck(2), recheck(1)], "{name}: in order, once each");
        assert!(a.episodes.rechecks(&Digest::of(other)).unwrap().is_empty(), "{name}");
    }
}

fn certificate_record(role: &str) -> CertificateRecord {
    CertificateRecord {
        checker_role: role.into(),
        certificate_format: "lrat".into(),
        verify_capability_id: "sat.certificate.verify".into(),
        capability_id: "sat.solve".into(),
        producer: Digest::of(b"producer"),
    }
}

#[test]
fn certificate_records_are_kept_once_per_digest_and_seen_by_every_host() {
    for backend in Backend::both() {
        let name = backend.name;
        let (a, b) = (backend.open(0), backend.open(1));
        let certificate = Digest::of(b"a certificate");
        assert_eq!(b.episodes.certificate(&certificate).unwrap(), None, "{name}");
        a.episodes.put_certificate(&certificate, &certificate_record("sat.certificate")).unwrap();
        // A later record of the same digest changes nothing: the role was fixed when it was made.
        b.episodes.put_certificate(&certificate, &certificate_record("acme.lint")).unwrap();
        for handle in [&a, &b] {
            assert_eq!(
                handle.episodes.certificate(&certificate).unwrap(),
                Some(certificate_record("sat.certificate")),
                "{name}"
            );
        }
    }
}

fn record(capability: &str, stop: StopReason, fuel: u64) -> InvocationRecord {
    InvocationRecord {
        ordinal: 0,
        capability_id: capability.into(),
        stop_reason: stop,
        episode: None,
        fuel,
        wall_time_us: 1,
        logical_bytes: 2,
        model_visible_bytes: 3,
        wire_bytes: 4,
        policy_digest: Digest::of(b"policy"),
    }
}

/// A call's episode and its line are one commit in the data directory's
/// database: both there, in order with lines appended alone.
#[test]
fn an_episode_and_its_line_are_written_in_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = Sqlite::open(&dir.path().join("jacobian.db")).unwrap();
    let body = br#"{"capability_id":"x"}"#;
    let digest = Digest::of(body);
    let episode = jacobian::store::EpisodeRow { digest: &digest, capability_id: "x", body };
    assert_eq!(ExperimentStore::append(&db, "e", &record("x", StopReason::Failed, 1)).unwrap(), 1);
    let line = InvocationRecord { episode: Some(digest), ..record("x", StopReason::Completed, 5) };
    let write = jacobian::store::EpisodeWrite { experiment: "e", record: &line, episode };
    let ordinal = db.append_batch(std::slice::from_ref(&write)).expect("the SQLite store writes both at once");
    assert_eq!(ordinal.into_iter().map(Result::unwrap).collect::<Vec<_>>(), [2]);
    assert_eq!(db.get(&digest).unwrap().as_deref(), Some(&body[..]));
    let lines = db.invocations("e").unwrap();
    assert_eq!(lines.iter().map(|l| (l.ordinal, l.episode)).collect::<Vec<_>>(), [(1, None), (2, Some(digest))]);
}

/// A group commit writes every call's episode and line in one transaction,
/// ordinals in order within and across experiments; when one call's writes
/// fail, only they are undone (nothing of that call is kept) and the others
/// are committed.
#[test]
fn a_group_commit_fails_only_the_call_that_fails() {
    use jacobian::store::{EpisodeRow, EpisodeWrite};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jacobian.db");
    let db = Sqlite::open(&path).unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER poison BEFORE INSERT ON experiment_invocations WHEN NEW.capability_id = 'poison'
             BEGIN SELECT RAISE(ABORT, 'poisoned'); END;",
        )
        .unwrap();
    let experiments = ["one", "two", "one", "one"];
    let batch = |round: u32, ids: [&str; 4]| -> Vec<(Vec<u8>, Digest, InvocationRecord)> {
        (0..4)
            .map(|i| {
                let body = format!(r#"{{"round":{round},"call":{i}}}"#).into_bytes();
                let digest = Digest::of(&body);
                (body, digest, InvocationRecord { episode: Some(digest), ..record(ids[i], StopReason::Completed, 1) })
            })
            .collect()
    };
    fn writes<'a>(
        calls: &'a [(Vec<u8>, Digest, InvocationRecord)],
        experiments: [&'a str; 4],
    ) -> Vec<EpisodeWrite<'a>> {
        calls
            .iter()
            .zip(experiments)
            .map(|((body, digest, line), experiment)| EpisodeWrite {
                experiment,
                record: line,
                episode: EpisodeRow { digest, capability_id: &line.capability_id, body },
            })
            .collect()
    }
    let first = batch(1, ["a", "b", "a", "c"]);
    let ordinals: Vec<u64> =
        db.append_batch(&writes(&first, experiments)).unwrap().into_iter().map(Result::unwrap).collect();
    assert_eq!(ordinals, [1, 1, 2, 3]);
    // The second call poisoned: the others written, it alone failing.
    let second = batch(2, ["a", "poison", "a", "c"]);
    let results = db.append_batch(&writes(&second, experiments)).unwrap();
    assert!(results[1].as_ref().is_err_and(|e| e.to_string().contains("poisoned")), "{:?}", results[1]);
    let written: Vec<u64> = results.into_iter().filter_map(Result::ok).collect();
    assert_eq!(written, [4, 5, 6]);
    assert_eq!(db.invocations("two").unwrap().len(), 1, "the failed call's line is not kept");
    assert_eq!(db.get(&second[1].1).unwrap(), None, "nor its episode");
    for kept in [0, 2, 3] {
        assert_eq!(db.get(&second[kept].1).unwrap().as_deref(), Some(&second[kept].0[..]));
    }
}

#[test]
fn experiment_ordinals_are_unique_across_handles_and_spend_sums() {
    for backend in Backend::both() {
        let name = backend.name;
        let hosts: Vec<Arc<Handle>> = (0..2).map(|h| Arc::new(backend.open(h))).collect();
        std::thread::scope(|scope| {
            for w in 0..4 {
                let host = hosts[w % 2].clone();
                scope.spawn(move || {
                    for i in 0..10 {
                        let stop = if i == 0 { StopReason::Unavailable } else { StopReason::Completed };
                        host.experiments.append("exp-shared", &record(&format!("cap.{}", w % 2), stop, 5)).unwrap();
                    }
                });
            }
        });
        let records = hosts[0].experiments.invocations("exp-shared").unwrap();
        let ordinals: Vec<u64> = records.iter().map(|r| r.ordinal).collect();
        assert_eq!(ordinals, (1..=40).collect::<Vec<_>>(), "{name}: one gapless sequence across hosts");
        assert_eq!(records[0].logical_bytes, 2, "{name}");
        let spent = hosts[1].experiments.spent("exp-shared").unwrap();
        // UNAVAILABLE calls never ran: neither their count nor their fuel is spend.
        assert_eq!(spent.fuel, 36 * 5, "{name}");
        assert_eq!(spent.invocations.get("cap.0"), Some(&18), "{name}");
        assert_eq!(spent.invocations.get("cap.1"), Some(&18), "{name}");
        assert!(hosts[1].experiments.invocations("exp-none").unwrap().is_empty(), "{name}");
        let (p, q) = (Digest::of(b"p"), Digest::of(b"q"));
        hosts[0].experiments.put_policy(&p, "policy body").unwrap();
        hosts[1].experiments.put_policy(&p, "policy body").unwrap();
        assert_eq!(hosts[1].experiments.policy(&p).unwrap().as_deref(), Some("policy body"), "{name}");
        assert_eq!(hosts[1].experiments.policy(&q).unwrap(), None, "{name}");
    }
}

#[test]
fn object_stores_are_content_addressed_and_rehashed_on_read() {
    for backend in Backend::both() {
        let name = backend.name;
        let (a, b) = (backend.open(0), backend.open(1));
        let digest = a.data.put_artifact(&json!({"answer": 42})).unwrap().0;
        assert_eq!(b.data.read_artifact(&digest).unwrap(), br#"{"answer":42}"#, "{name}: the other host reads it");
        let component = a.data.put_component(b"\0asm component bytes").unwrap();
        assert_eq!(b.data.read_component(&component).unwrap(), b"\0asm component bytes", "{name}");
        let absent = Digest::of(b"never stored");
        assert!(matches!(b.data.read_artifact(&absent), Err(StoreError::NotFound { .. })), "{name}");
        backend.tamper_artifact(&digest);
        assert!(
            matches!(b.data.read_artifact(&digest), Err(StoreError::DigestMismatch { .. })),
            "{name}: tampered bytes are refused, not served"
        );
        // Writing the artifact again repairs it, where a present name used to be skipped.
        a.data.put_artifact(&json!({"answer": 42})).unwrap();
        assert_eq!(b.data.read_artifact(&digest).unwrap(), br#"{"answer":42}"#, "{name}: rewritten whole");
        // Install records: one per digest, replaced in place, listed in digest order.
        let (d1, d2) = (Digest::of(b"one"), Digest::of(b"two"));
        a.data.put_record(&d2, &json!({"digest": d2.to_string(), "v": 1})).unwrap();
        a.data.put_record(&d1, &json!({"digest": d1.to_string(), "v": 1})).unwrap();
        a.data.put_record(&d1, &json!({"digest": d1.to_string(), "v": 2})).unwrap();
        let records = b.data.records().unwrap();
        let mut expected = vec![(d1.to_string(), 2), (d2.to_string(), 1)];
        expected.sort();
        let got: Vec<(String, i64)> =
            records.iter().map(|r| (r["digest"].as_str().unwrap().to_owned(), r["v"].as_i64().unwrap())).collect();
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn the_policy_is_created_once_and_every_change_is_seen_by_every_handle() {
    for backend in Backend::both() {
        let name = backend.name;
        let (a, b) = (backend.open(0), backend.open(1));
        assert_eq!(b.data.read_policy().unwrap(), None, "{name}");
        a.data.create_policy("first = 1\n").unwrap();
        b.data.create_policy("second = 2\n").unwrap();
        assert_eq!(b.data.read_policy().unwrap().as_deref(), Some("first = 1\n"), "{name}: create never overwrites");
        let before = b.data.policy_stamp();
        assert!(before.is_some(), "{name}");
        a.data.write_policy("third = 3\n").unwrap();
        assert_ne!(b.data.policy_stamp(), before, "{name}: the other handle sees a new version");
        assert_eq!(b.data.read_policy().unwrap().as_deref(), Some("third = 3\n"), "{name}");
        // Writes in quick succession, of texts of one length, are each a new version.
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..20 {
            a.data.write_policy(&format!("n = {:02}\n", i)).unwrap();
            assert!(seen.insert(b.data.policy_stamp()), "{name}: write {i} looks like an earlier version");
        }
        // Compare-and-set from many threads at once: exactly one writer wins each version.
        let stamp = b.data.policy_stamp();
        let handles: Vec<Handle> = (0..4).map(|i| backend.open(10 + i)).collect();
        let wins: usize = std::thread::scope(|scope| {
            let racers: Vec<_> = handles
                .iter()
                .enumerate()
                .map(|(i, h)| scope.spawn(move || h.data.write_policy_if(stamp, &format!("winner = {i}\n")).unwrap()))
                .collect();
            racers.into_iter().map(|r| usize::from(r.join().unwrap())).sum()
        });
        assert_eq!(wins, 1, "{name}: one compare-and-set wins");
    }
}

/// The data directory's policy stamp is mostly one `stat`: it must still see
/// every edit made in place (as an editor that rewrites the file does), of
/// the same length, in quick succession or after the file settled, and
/// every edit of a symbolic link's target.
#[test]
fn a_policy_edited_in_place_is_a_new_version_every_time() {
    use std::io::{Seek as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::open(dir.path()).unwrap();
    data.create_policy("n = 00\n").unwrap();
    let path = dir.path().join(jacobian::store::POLICY_FILE);
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    assert!(seen.insert(data.policy_stamp().expect("a stamp")));
    assert_eq!(data.policy_stamp(), seen.first().copied(), "unchanged, the same stamp");
    for i in 1..50 {
        file.seek(std::io::SeekFrom::Start(0)).unwrap();
        file.write_all(format!("n = {i:02}\n").as_bytes()).unwrap();
        let stamp = data.policy_stamp().expect("a stamp");
        assert!(seen.insert(stamp), "edit {i} looks like an earlier version");
        assert_eq!(data.read_policy().unwrap(), Some(format!("n = {i:02}\n")));
    }
    // Settled (its times trusted alone), the stamp holds still, and the next
    // edit in place, of the same length, is a new version.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let settled = data.policy_stamp().expect("a stamp");
    assert_eq!(data.policy_stamp(), Some(settled));
    file.seek(std::io::SeekFrom::Start(0)).unwrap();
    file.write_all(b"n = 99\n").unwrap();
    assert!(seen.insert(settled));
    assert!(seen.insert(data.policy_stamp().expect("a stamp")), "an edit of a settled file is missed");
    drop(file);
    // A symbolic link (within the data directory, the only kind the store
    // follows): its target's text is in the stamp.
    std::fs::rename(&path, dir.path().join("elsewhere.toml")).unwrap();
    std::os::unix::fs::symlink("elsewhere.toml", &path).unwrap();
    let linked = data.policy_stamp().expect("a stamp");
    std::fs::write(dir.path().join("elsewhere.toml"), "n = 98\n").unwrap();
    assert_ne!(data.policy_stamp(), Some(linked), "an edit of the link's target is missed");
}

#[test]
fn a_data_directory_is_owner_only_and_episodes_are_rehashed_on_read() {
    use std::os::unix::fs::PermissionsExt;
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("data");
    let runtime = crate::support::open(dir.clone());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join(jacobian::store::DATABASE_FILE)), 0o600);
    let result = crate::support::invoke(
        &runtime,
        "sat.cnf.construct",
        jacobian_guest::protocol::Mode::Explore,
        json!({"dimacs": "p cnf 1 1\n1 0\n"}),
    );
    let experiment = result.accounting.experiment.clone().unwrap().trim_start_matches("experiment://").to_owned();
    let line = &runtime.experiments().invocations(&experiment).unwrap()[0];
    let digest = line.episode.unwrap();
    assert!(runtime.episode(&digest).unwrap().is_some());
    // The stored episode altered behind the store's back is refused, not served.
    let db = rusqlite::Connection::open(dir.join(jacobian::store::DATABASE_FILE)).unwrap();
    db.execute("UPDATE episodes SET body = CAST('{}' AS BLOB) WHERE digest = ?1", [digest.to_hex()]).unwrap();
    let error = runtime.episode(&digest).unwrap_err().to_string();
    assert!(error.contains(&format!("episode {digest}")), "{error}");
}

/// The private directory of a PostgreSQL-backed host holds no shared state.
#[test]
fn a_postgres_host_keeps_only_its_cache_locally() {
    let url = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let shared = Postgres::connect(&url).unwrap();
    shared.migrate().unwrap();
    let data = DataDir::with_objects(dir.path(), Box::new(shared)).unwrap();
    data.put_artifact(&json!({"shared": true})).unwrap();
    data.write_policy("x = 1\n").unwrap();
    let files = walk(dir.path());
    assert!(files.is_empty(), "only empty cache and scratch directories: {files:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
