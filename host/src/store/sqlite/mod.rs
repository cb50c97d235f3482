//! The data directory's SQLite database, `jacobian.db`: episodes,
//! experiment lines, workspaces and API tokens, one versioned schema.
//!
//! One opener: [`Sqlite::open`] sets WAL mode and a busy timeout, applies
//! every schema version this binary knows and the database lacks (in one
//! `BEGIN IMMEDIATE` transaction, so processes opening it together migrate
//! once), refuses a database whose schema is newer, and then holds one
//! connection per role, all committing with `synchronous=NORMAL`: for
//! episodes and experiment lines a crash may lose the last commits, never
//! corrupt; a workspace write syncs the log itself before it is acknowledged,
//! outside the write lock (`Sqlite::sync_log`), so an acknowledged workspace
//! write survives a crash.
//!
//! Databases made before the schema was versioned hold the tables of
//! version 1 and no `jacobian_schema` table: version 1 creates its tables
//! only where absent, so such a database is upgraded in place.

mod records;
#[cfg(feature = "sandbox")]
mod tokens;
mod workspaces;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior, params};

use super::{DbError, MigrationReport, OpenError, SchemaTooNew};

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: i32 = 6;

/// Every schema version, in order: (version, description, SQL).
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "episodes, experiment lines and policies, workspaces, revisions, idempotency keys",
        "CREATE TABLE IF NOT EXISTS episodes (
        digest TEXT PRIMARY KEY,
        capability_id TEXT NOT NULL,
        body BLOB NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS experiment_invocations (
        experiment TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        capability_id TEXT NOT NULL,
        stop_reason TEXT NOT NULL,
        episode TEXT,
        fuel INTEGER NOT NULL,
        wall_time_us INTEGER NOT NULL,
        logical_bytes INTEGER NOT NULL,
        model_visible_bytes INTEGER NOT NULL,
        wire_bytes INTEGER NOT NULL,
        policy_digest TEXT NOT NULL,
        PRIMARY KEY (experiment, ordinal)
    ) STRICT;
    CREATE TABLE IF NOT EXISTS experiment_policies (
        digest TEXT PRIMARY KEY,
        body TEXT NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS workspaces (
        id TEXT PRIMARY KEY,
        head INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS revisions (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        number INTEGER NOT NULL,
        request BLOB NOT NULL,
        artifact BLOB NOT NULL,
        PRIMARY KEY (workspace_id, number)
    ) STRICT;
    CREATE TABLE IF NOT EXISTS idempotency (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        payload_digest TEXT NOT NULL,
        response BLOB NOT NULL,
        PRIMARY KEY (scope, key)
    ) STRICT;",
    ),
    (
        2,
        "certificates: the checker role, format and checker each certificate artifact needs, recorded from its \
         producer's declared route (filled from the episodes already stored)",
        "CREATE TABLE certificates (
        digest TEXT PRIMARY KEY,
        checker_role TEXT NOT NULL,
        certificate_format TEXT NOT NULL,
        verify_capability_id TEXT NOT NULL,
        capability_id TEXT NOT NULL,
        producer TEXT NOT NULL
    ) STRICT;
    INSERT OR IGNORE INTO certificates
        SELECT substr(json_extract(b, '$.check_with.certificate_artifact'), 19),
               json_extract(b, '$.check_with.checker_role'),
               json_extract(b, '$.check_with.certificate_format'),
               json_extract(b, '$.check_with.verify_capability_id'),
               json_extract(b, '$.capability_id'),
               substr(json_extract(b, '$.provenance.provider_digest'), 8)
        FROM (SELECT CAST(body AS TEXT) AS b FROM episodes)
        WHERE json_extract(b, '$.status') = 'COMPLETED'
          AND json_extract(b, '$.check_with.certificate_artifact') LIKE 'artifact://sha256/%';",
    ),
    (3, "API tokens: operator-issued bearer tokens for serve --http, stored by digest", API_TOKENS),
    (
        4,
        "tenant usage: each tenant's fuel of the day and stored bytes, judged against its quota",
        "CREATE TABLE tenant_usage (
        tenant TEXT PRIMARY KEY,
        day INTEGER NOT NULL,
        fuel INTEGER NOT NULL,
        stored_bytes INTEGER NOT NULL
    ) STRICT;",
    ),
    (5, "rechecks: new verdicts recorded beside those of a recalled checker", RECHECKS),
    (
        6,
        crate::store::GRANTS_MIGRATION,
        "CREATE TABLE grants (
        tenant TEXT NOT NULL,
        uri TEXT NOT NULL,
        PRIMARY KEY (tenant, uri)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX experiment_invocations_by_episode ON experiment_invocations (episode);
    INSERT OR IGNORE INTO grants (tenant, uri)
        SELECT substr(i.experiment, -16), json_extract(a.value, '$.uri')
        FROM experiment_invocations AS i
        JOIN episodes AS e ON e.digest = substr(i.episode, 8)
        JOIN json_each(CAST(e.body AS TEXT), '$.artifacts') AS a
        WHERE substr(i.experiment, -17, 1) = '@' AND json_extract(a.value, '$.uri') LIKE 'artifact://sha256/%';",
    ),
];

/// The re-check table (the same columns in PostgreSQL); `seq` orders an episode's re-checks.
const RECHECKS: &str = "CREATE TABLE rechecks (
        episode TEXT NOT NULL,
        seq INTEGER NOT NULL,
        recalled TEXT NOT NULL,
        recheck TEXT NOT NULL,
        status TEXT NOT NULL,
        checker TEXT NOT NULL,
        PRIMARY KEY (episode, recheck)
    ) STRICT;";

/// The API token table (the same columns in PostgreSQL).
const API_TOKENS: &str = "CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        scopes TEXT NOT NULL,
        secret_sha256 TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
    ) STRICT;";

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a token lookup (on a protocol thread) waits for another process
/// holding the database before the request is answered 503.
const TOKENS_BUSY_TIMEOUT: Duration = Duration::from_millis(100);

/// What each connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Episodes,
    Experiments,
    Workspaces,
    /// API tokens (read by every authenticated HTTP request).
    #[cfg_attr(not(feature = "sandbox"), allow(dead_code))]
    Tokens,
}

/// The open database (cheap to clone).
#[derive(Clone)]
pub struct Sqlite {
    inner: Arc<Inner>,
}

struct Inner {
    episodes: Mutex<Connection>,
    experiments: Mutex<Connection>,
    workspaces: Mutex<Connection>,
    tokens: Mutex<Connection>,
    /// Held by every write of this process, whatever its connection. SQLite
    /// lets one connection write at a time and makes the others wait in its
    /// busy handler, which sleeps (1 ms, then 2, 5, 10 …) rather than waking
    /// when the lock is free: a quick episode write queued behind a workspace
    /// commit slept milliseconds. Writers of this process wait here instead
    /// and start the moment the previous write ends; the busy timeout still
    /// covers other processes on the same file.
    writer: Arc<WriteLock>,
    /// The database's write-ahead log, which a workspace write syncs itself.
    wal: PathBuf,
    /// Whether the log's directory entry has been synced by this process.
    wal_entry_synced: std::sync::atomic::AtomicBool,
    /// Dropped with the database: the checkpointer then stops.
    _checkpointer: std::sync::mpsc::Sender<()>,
}

/// The process's write lock ([`Inner::writer`]), which says when it is
/// released: a writer on a protocol thread waits for it there
/// ([`WriteLock::free`]) instead of blocking the thread, and every other
/// client's request on it, until a writer on another thread is done.
#[derive(Default)]
struct WriteLock {
    held: Mutex<()>,
    /// The tasks waiting for the lock to be free, woken at its release.
    waiting: Mutex<Vec<std::task::Waker>>,
}

impl WriteLock {
    fn lock(&self) -> WriteGuard<'_> {
        WriteGuard { held: Some(self.held.lock().unwrap_or_else(|e| e.into_inner())), lock: self }
    }

    fn is_held(&self) -> bool {
        matches!(self.held.try_lock(), Err(std::sync::TryLockError::WouldBlock))
    }

    /// Ready when the lock is free (another writer may take it before the caller does).
    fn free(&self) -> Free<'_> {
        Free { lock: self }
    }
}

/// [`WriteLock::free`].
struct Free<'a> {
    lock: &'a WriteLock,
}

impl std::future::Future for Free<'_> {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        // The lock is looked at while `waiting` is held, and a release frees
        // the lock before it takes `waiting`: either this sees it free or
        // the release sees this waker.
        let mut waiting = self.lock.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if !self.lock.is_held() {
            return std::task::Poll::Ready(());
        }
        if !waiting.iter().any(|w| w.will_wake(cx.waker())) {
            waiting.push(cx.waker().clone());
        }
        std::task::Poll::Pending
    }
}

/// The write lock, held; the tasks waiting for it are woken once it is free.
struct WriteGuard<'a> {
    held: Option<MutexGuard<'a, ()>>,
    lock: &'a WriteLock,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        drop(self.held.take());
        let waiting = std::mem::take(&mut *self.lock.waiting.lock().unwrap_or_else(|e| e.into_inner()));
        waiting.into_iter().for_each(std::task::Waker::wake);
    }
}

/// A connection held for writing: the process's write lock, then the connection.
pub(super) struct Writing<'a> {
    conn: MutexGuard<'a, Connection>,
    writer: WriteGuard<'a>,
}

impl<'a> Writing<'a> {
    /// Let other writers go on, keeping the connection (and so this role's
    /// readers waiting) a while longer.
    pub(super) fn release_writer(self) -> MutexGuard<'a, Connection> {
        drop(self.writer);
        self.conn
    }
}

impl std::ops::Deref for Writing<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl std::ops::DerefMut for Writing<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

impl Sqlite {
    /// Open (creating) the database at `path`, migrated to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Sqlite, OpenError> {
        let report = migrate_to(path, SCHEMA_VERSION)?;
        if !report.applied.is_empty() {
            tracing::info!(target = %report.target, applied = ?report.applied, "database schema migrated");
        }
        let normal = || connect(path, "NORMAL");
        let writer = Arc::new(WriteLock::default());
        let inner = Inner {
            episodes: Mutex::new(normal()?),
            experiments: Mutex::new(normal()?),
            workspaces: Mutex::new(normal()?),
            tokens: Mutex::new({
                let conn = normal()?;
                conn.busy_timeout(TOKENS_BUSY_TIMEOUT).map_err(DbError::from)?;
                conn
            }),
            _checkpointer: checkpointer(path, Arc::clone(&writer))?,
            writer,
            wal: beside(path, "-wal"),
            wal_entry_synced: Default::default(),
        };
        owner_only(path);
        Ok(Sqlite { inner: Arc::new(inner) })
    }

    /// Apply every schema version this binary knows and the database at
    /// `path` lacks (`jacobian migrate` on a data directory).
    pub fn migrate(path: &Path) -> Result<MigrationReport, OpenError> {
        migrate_to(path, SCHEMA_VERSION)
    }

    fn lock(&self, role: Role) -> MutexGuard<'_, Connection> {
        let conn = match role {
            Role::Episodes => &self.inner.episodes,
            Role::Experiments => &self.inner.experiments,
            Role::Workspaces => &self.inner.workspaces,
            Role::Tokens => &self.inner.tokens,
        };
        conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Make every commit made so far durable: sync the write-ahead log (and,
    /// once per process, the directory that holds it).
    ///
    /// Workspace writes are acknowledged only once durable, but they commit
    /// with `synchronous=NORMAL` like everything else and sync the log here,
    /// after the write lock is released: a commit with `synchronous=FULL`
    /// syncs while holding SQLite's one write lock, so every episode write
    /// waited for a workspace write's disk. The workspace connection is held
    /// until the sync is done, so no reader or retry of this process sees
    /// (or acknowledges again) a commit that is not yet durable. This is as durable: a committed
    /// transaction's frames are in the log until a checkpoint copies them
    /// into the database, and a checkpoint syncs the database before the log
    /// is reused, so after this sync the commit is on disk in one or the other.
    fn sync_log(&self) -> Result<(), std::io::Error> {
        use std::sync::atomic::Ordering;
        std::fs::File::open(&self.inner.wal)?.sync_data()?;
        if !self.inner.wal_entry_synced.load(Ordering::SeqCst) {
            if let Some(dir) = self.inner.wal.parent() {
                std::fs::File::open(dir)?.sync_all()?;
            }
            self.inner.wal_entry_synced.store(true, Ordering::SeqCst);
        }
        Ok(())
    }

    /// The connection of `role`, to write with (see [`Inner::writer`]): the
    /// connection first, so that a long read on one connection holds up no
    /// writer of another (a writer holds one connection, so this order
    /// cannot deadlock).
    fn write(&self, role: Role) -> Writing<'_> {
        let conn = self.lock(role);
        let writer = self.inner.writer.lock();
        Writing { conn, writer }
    }

    /// Ready when no writer of this process holds the write lock.
    pub(crate) async fn writer_free(&self) {
        self.inner.writer.free().await;
    }
}

/// Run `body` in one `BEGIN IMMEDIATE` transaction on `conn`, committed if it
/// succeeds and rolled back otherwise (or if it panics). The same as
/// rusqlite's `Transaction`, with the `BEGIN` and `COMMIT` statements
/// prepared once per connection rather than parsed at every call (a tenth
/// of a quick episode write).
fn immediate<T>(conn: &Connection, body: impl FnOnce(&Connection) -> Result<T, DbError>) -> Result<T, DbError> {
    /// Rolls back unless committed.
    struct Open<'c>(&'c Connection);
    impl Drop for Open<'_> {
        fn drop(&mut self) {
            if !self.0.is_autocommit() {
                let _ = self.0.execute_batch("ROLLBACK");
            }
        }
    }
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    let open = Open(conn);
    let value = body(conn)?;
    conn.prepare_cached("COMMIT")?.execute([])?;
    drop(open);
    Ok(value)
}

/// The database's own file, or one SQLite keeps beside it (`-wal`, `-shm`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut file = path.as_os_str().to_owned();
    file.push(suffix);
    PathBuf::from(file)
}

/// Make the database and its WAL files readable by their owner only (SQLite
/// creates them with the process's umask).
fn owner_only(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for suffix in ["", "-wal", "-shm"] {
        let file = beside(path, suffix);
        if let Err(error) = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(file = ?file, %error, "could not make the database owner-only");
        }
    }
}

/// A connection in WAL mode with a busy timeout and the given `synchronous`
/// level, which never checkpoints when it commits ([`checkpointer`] does).
fn connect(path: &Path, synchronous: &str) -> Result<Connection, DbError> {
    let conn = Connection::open(path)?;
    // SQLite opens a file it may not write read-only without a word, and a
    // database whose write-ahead log survived a crash even opens on a
    // read-only mount: a host would start, then fail every write.
    if conn.is_readonly(rusqlite::MAIN_DB)? {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            Some("the database can only be opened read-only".into()),
        )
        .into());
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", synchronous)?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    // Truncated back to this size when a checkpointed log is reused, so that
    // its size says how much is left to checkpoint.
    conn.pragma_update(None, "journal_size_limit", CHECKPOINT_ABOVE as i64)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}

/// How often the checkpointer looks at the write-ahead log, and the size
/// above which it copies the log into the database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);
const CHECKPOINT_ABOVE: u64 = 4 << 20;

/// Start the database's checkpointer: a thread with its own connection that
/// copies the write-ahead log into the database whenever the log has grown
/// past [`CHECKPOINT_ABOVE`], until the returned sender is dropped.
///
/// SQLite otherwise checkpoints inside whichever commit crosses its
/// threshold: a quick episode write answered on a protocol thread would then
/// copy megabytes and sync the database file, and every writer waiting for
/// the write lock would wait with it. A passive checkpoint takes no write
/// lock, so writers go on while it runs; but it copies only the frames the
/// log held when it began, and a log is reused (started over, truncated back
/// to the threshold) only once it has been copied whole. Under steady writing
/// commits land during every pass, so the log only grew: past 60 MiB in
/// 14,000 calls, and every start replays the whole log it finds (60 ms for
/// that one). So a second pass follows, holding the process's `writer`
/// lock: it copies only the frames added during the first, and the next
/// commit starts the log over.
fn checkpointer(path: &Path, writer: Arc<WriteLock>) -> Result<std::sync::mpsc::Sender<()>, DbError> {
    let conn = connect(path, "NORMAL")?;
    let wal = beside(path, "-wal");
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new().name("jacobian-checkpoint".into()).spawn(move || {
        let checkpoint = || conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECKPOINT_EVERY) {
            if !std::fs::metadata(&wal).is_ok_and(|m| m.len() > CHECKPOINT_ABOVE) {
                continue;
            }
            // What the first pass reports copied is only what the log held
            // when it began: commits made meanwhile are left for the second.
            let done = checkpoint().and_then(|()| {
                let _writing = writer.lock();
                checkpoint()
            });
            if let Err(error) = done {
                tracing::warn!(%error, "checkpoint failed; the write-ahead log keeps growing until one succeeds");
            }
        }
    });
    spawned.map_err(DbError::Log)?;
    Ok(stop)
}

/// [`Sqlite::migrate`], stopping at schema version `up_to`.
pub fn migrate_to(path: &Path, up_to: i32) -> Result<MigrationReport, OpenError> {
    let target = PathBuf::from(path).display().to_string();
    let mut conn = connect(path, "FULL")?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(DbError::from)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS jacobian_schema (
            version INTEGER PRIMARY KEY,
            description TEXT NOT NULL,
            applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        ) STRICT",
    )
    .map_err(DbError::from)?;
    let from_version: i32 = tx
        .query_row("SELECT COALESCE(MAX(version), 0) FROM jacobian_schema", [], |row| row.get(0))
        .map_err(DbError::from)?;
    if from_version > SCHEMA_VERSION {
        return Err(SchemaTooNew { target, found: from_version, supported: SCHEMA_VERSION }.into());
    }
    let mut applied = Vec::new();
    for (version, description, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > from_version && *v <= up_to) {
        tx.execute_batch(sql).map_err(DbError::from)?;
        tx.execute("INSERT INTO jacobian_schema (version, description) VALUES (?1, ?2)", params![version, description])
            .map_err(DbError::from)?;
        applied.push(*version);
    }
    tx.commit().map_err(DbError::from)?;
    let schema_version = applied.last().copied().unwrap_or(from_version);
    Ok(MigrationReport { target, from_version, schema_version, applied })
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Wake, Waker};

    use super::{Role, Sqlite, WriteLock};
    use crate::store::EpisodeStore;

    /// A waker that remembers it was woken.
    struct Woken(AtomicBool);

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_task_waiting_for_the_write_lock_is_woken_at_its_release_and_not_before() {
        let lock = WriteLock::default();
        let woken = Arc::new(Woken(AtomicBool::new(false)));
        let waker = Waker::from(Arc::clone(&woken));
        let mut cx = Context::from_waker(&waker);
        assert!(std::pin::pin!(lock.free()).poll(&mut cx).is_ready(), "free at once when no one holds it");
        let held = lock.lock();
        let mut free = std::pin::pin!(lock.free());
        assert!(free.as_mut().poll(&mut cx).is_pending());
        assert!(free.as_mut().poll(&mut cx).is_pending(), "polled again, still waiting");
        assert_eq!(lock.waiting.lock().unwrap().len(), 1, "one waker kept for one task");
        assert!(!woken.0.load(Ordering::SeqCst));
        drop(held);
        assert!(woken.0.load(Ordering::SeqCst), "woken at the release");
        assert!(free.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn an_episode_write_on_an_async_thread_waits_for_a_workspace_write_without_blocking() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Sqlite::open(&dir.path().join("jacobian.db")).expect("open");
        let woken = Arc::new(Woken(AtomicBool::new(false)));
        let waker = Waker::from(Arc::clone(&woken));
        let mut cx = Context::from_waker(&waker);
        let writing = db.write(Role::Workspaces);
        let mut free = EpisodeStore::writer_free(&db);
        assert!(free.as_mut().poll(&mut cx).is_pending(), "a write of another role holds the lock");
        drop(writing);
        assert!(woken.0.load(Ordering::SeqCst));
        assert!(free.as_mut().poll(&mut cx).is_ready());
        // Released by a workspace write's early release of the lock too.
        let conn = db.write(Role::Workspaces);
        let mut free = EpisodeStore::writer_free(&db);
        assert!(free.as_mut().poll(&mut cx).is_pending());
        let _conn = conn.release_writer();
        assert!(free.as_mut().poll(&mut cx).is_ready());
    }
}
