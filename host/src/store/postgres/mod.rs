//! The PostgreSQL store: every store trait ([`ObjectStore`],
//! [`EpisodeStore`], [`ExperimentStore`], [`WorkspaceStore`]) over one shared
//! database, so several `jacobian serve --http` hosts behind a load balancer
//! see one deployment. Selected with `--store postgres://…`.
//!
//! The traits are synchronous (the SQLite stores are), so this store runs its
//! connection pool on a small runtime of its own and each call waits for its
//! query there. That keeps it callable from any thread, async or blocking.
//!
//! **Cross-host invariants**, each one statement or one transaction:
//! - `workspace.write` locks the workspace row (`FOR UPDATE`), then checks
//!   the idempotency key and the head, then appends: two hosts racing on one
//!   base cannot both win.
//! - An idempotency key is claimed with `INSERT … ON CONFLICT DO NOTHING`,
//!   which waits for a concurrent claimer to commit or abort.
//! - An experiment's ordinals come from one `INSERT … SELECT MAX + 1`,
//!   retried on a unique violation, so hosts never reuse one.
//! - The operator policy carries a version bumped on every write; every use
//!   of the policy asks for it, so a revocation on one host is in force on
//!   every host from its next call.
//! - Components and artifacts are immutable rows keyed by digest, and readers
//!   re-hash them ([`crate::store::DataDir`]).
//!
//! API tokens live here too ([`crate::store::TokenStore`]): a revocation on
//! one host refuses the token at every host's next request.
//!
//! MCP sessions live here too ([`crate::store::SessionStore`]): the HTTP edge
//! restores a session that reaches a host which never saw it, so a load
//! balancer needs no stickiness.
//!
//! Schema versions are applied in order by [`Postgres::migrate`] under an
//! advisory lock; a database whose schema is newer than this binary is
//! refused at start.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

mod files;
mod migrations;
mod objects;
mod quotas;
mod records;
mod sessions;
mod tokens;
mod workspaces;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::{IsolationLevel, NoTls};

use crate::store::DbError;

pub use migrations::SCHEMA_VERSION;

/// Connections kept open per host.
pub const POOL_SIZE: usize = 16;

/// The longest a statement, or a wait for a pooled connection, may take.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// A reservation of a host that died mid-call stops counting against a cap after this.
pub(super) const RESERVATION_TTL_SQL: &str = "interval '1 hour'";

/// A stored MCP session is restored for this long after it was created.
pub(super) const SESSION_TTL_SQL: &str = "interval '24 hours'";

/// Why the PostgreSQL store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum PgOpenError {
    /// The connection string does not parse (the password is never echoed).
    #[error("--store: not a PostgreSQL connection string ({0}); expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")]
    InvalidUrl(String),
    /// No connection could be made.
    #[error("--store: PostgreSQL at {target} is unreachable or refused the connection: {reason}")]
    Unreachable { target: String, reason: String },
    /// The database was written by a newer Jacobian.
    #[error(
        "--store: the database at {target} has schema version {found}, newer than this binary's {supported}; \
         upgrade jacobian (nothing was changed)"
    )]
    NewerSchema { target: String, found: i32, supported: i32 },
    /// A migration or a query failed.
    #[error("--store: PostgreSQL at {target}: {reason}")]
    Failed { target: String, reason: String },
}

/// A handle on the shared PostgreSQL database (cheap to clone).
#[derive(Clone)]
pub struct Postgres {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    handle: tokio::runtime::Handle,
    runtime: Option<tokio::runtime::Runtime>,
    target: String,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Never block (this may run on an async thread).
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

pub(super) fn pg(error: impl std::error::Error + 'static) -> DbError {
    DbError::Postgres(crate::errors::render(&error))
}

/// A tokio-postgres error with the server's message when there is one.
pub(super) fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => crate::errors::render(error),
    }
}

pub(super) fn query_error(error: tokio_postgres::Error) -> DbError {
    DbError::Postgres(describe(&error))
}

/// A transaction at READ COMMITTED whatever the role's or database's
/// default: the row lock and `ON CONFLICT` arguments in the module comment
/// depend on it (under REPEATABLE READ racing writers would fail instead).
pub(super) async fn begin(
    client: &mut deadpool_postgres::Object,
) -> Result<deadpool_postgres::Transaction<'_>, DbError> {
    client.build_transaction().isolation_level(IsolationLevel::ReadCommitted).start().await.map_err(query_error)
}

impl Postgres {
    /// Parse `url` and connect (one connection is made now, so an unreachable
    /// database is reported at start). Does not migrate.
    pub fn connect(url: &str) -> Result<Postgres, PgOpenError> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(PgOpenError::InvalidUrl("it must start with postgres:// or postgresql://".into()));
        }
        // The user info ends at the first '@': a second one would make part of
        // the password look like the host name, and end up in messages.
        let authority = url.split_once("://").map_or("", |(_, rest)| rest.split(['/', '?']).next().unwrap_or(""));
        if authority.matches('@').count() > 1 {
            return Err(PgOpenError::InvalidUrl("percent-encode '@' in the user name or password as %40".into()));
        }
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e: tokio_postgres::Error| PgOpenError::InvalidUrl(describe(&e)))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        // A dead server or a hung query fails the call instead of holding it.
        config.keepalives(true).keepalives_idle(Duration::from_secs(30)).tcp_user_timeout(Duration::from_secs(30));
        if config.get_options().is_none() {
            config.options(format!("-c statement_timeout={}", STATEMENT_TIMEOUT.as_millis()));
        }
        if config.get_application_name().is_none() {
            config.application_name("jacobian");
        }
        let target = target_of(&config);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("jacobian-postgres")
            .enable_all()
            .build()
            .map_err(|e| PgOpenError::Failed { target: target.clone(), reason: e.to_string() })?;
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(STATEMENT_TIMEOUT))
            .create_timeout(Some(Duration::from_secs(10)))
            .recycle_timeout(Some(Duration::from_secs(5)))
            .build()
            .map_err(|e| PgOpenError::Failed { target: target.clone(), reason: e.to_string() })?;
        let handle = runtime.handle().clone();
        let store =
            Postgres { inner: Arc::new(Inner { pool, handle, runtime: Some(runtime), target: target.clone() }) };
        let pool = store.inner.pool.clone();
        store
            .block(async move {
                let client = pool.get().await.map_err(pg)?;
                client.simple_query("SELECT 1").await.map_err(query_error)?;
                Ok(())
            })
            .map_err(|e| PgOpenError::Unreachable { target, reason: e.to_string() })?;
        Ok(store)
    }

    /// Where this store is (host, port, database; never the password).
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// Run SQL statements as they are (operators and tests: creating a
    /// database, dropping a table).
    pub fn batch_execute(&self, sql: &str) -> Result<(), DbError> {
        let pool = self.inner.pool.clone();
        let sql = sql.to_owned();
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            client.batch_execute(&sql).await.map_err(query_error)
        })
    }

    /// The one integer a query returns (`SELECT count(*) …`): for operators'
    /// checks and tests.
    pub fn query_i64(&self, sql: &str) -> Result<i64, DbError> {
        let pool = self.inner.pool.clone();
        let sql = sql.to_owned();
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let row = client.query_one(&sql, &[]).await.map_err(query_error)?;
            row.try_get(0).map_err(query_error)
        })
    }

    /// The first column of every row a query returns, as text (`SELECT name::text …`):
    /// for operators' checks and tests.
    pub fn query_texts(&self, sql: &str) -> Result<Vec<String>, DbError> {
        let pool = self.inner.pool.clone();
        let sql = sql.to_owned();
        self.block(async move {
            let client = pool.get().await.map_err(pg)?;
            let rows = client.query(&sql, &[]).await.map_err(query_error)?;
            rows.iter().map(|row| row.try_get(0).map_err(query_error)).collect()
        })
    }

    /// Run `work` on the store's runtime and wait for it.
    pub(super) fn block<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, DbError>> + Send + 'static,
    ) -> Result<T, DbError> {
        let (send, receive) = std::sync::mpsc::sync_channel(1);
        self.inner.handle.spawn(async move {
            let _ = send.send(work.await);
        });
        receive.recv().map_err(|_| DbError::Postgres("the store's runtime stopped".into()))?
    }

    pub(super) fn pool(&self) -> Pool {
        self.inner.pool.clone()
    }

    /// Run `work` on the store's runtime from async code.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, DbError>> + Send + 'static,
    ) -> Result<T, DbError> {
        self.inner.handle.spawn(work).await.map_err(|e| DbError::Postgres(e.to_string()))?
    }
}

/// `url` with its database name replaced by `database` (query parameters kept).
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let server = match base[authority_end..].find('/') {
        Some(slash) => &base[..authority_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

/// `host:port/database` of a parsed connection string.
fn target_of(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(config.get_user().unwrap_or("postgres")))
}
