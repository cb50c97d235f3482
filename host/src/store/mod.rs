//! Storage: what a deployment keeps, behind one trait per kind of record,
//! with two backends.
//!
//! - [`DataDir`] (`datadir.rs`): the data directory's files, through one
//!   `cap_std` handle: components, artifacts, install records, the policy
//!   file ([`ObjectStore`]), and this host's precompiled-code cache.
//! - [`sqlite::Sqlite`]: the data directory's database, `jacobian.db`:
//!   episodes, experiment lines, workspaces, API tokens.
//! - [`postgres::Postgres`]: one PostgreSQL database shared by several
//!   hosts, implementing every trait (objects, records, workspaces, sessions,
//!   tokens).
//!
//! Each backend has one schema and one versioned migration path
//! ([`sqlite::SCHEMA_VERSION`], [`postgres::SCHEMA_VERSION`]); a test keeps
//! the tables both keep identical in name and columns. Nothing here knows
//! the MCP or HTTP crates: MCP sessions are opaque strings to [`SessionStore`].

mod datadir;
mod error;
mod files;
mod objects;
#[cfg(feature = "sandbox")]
pub mod postgres;
mod records;
#[cfg(feature = "sandbox")]
mod sessions;
pub mod sqlite;
#[cfg(feature = "sandbox")]
mod tokens;
mod workspaces;

pub use datadir::{DataDir, POLICY_FILE};
pub use error::{DbError, SchemaTooNew, StoreError, StoreFailure};
pub use files::{FILE_CHUNK, FileError, StoredFile, hash_file};
pub use objects::{ObjectKind, ObjectStore, PolicyStamp};
pub use records::{
    CertificateRecord, EpisodeRow, EpisodeStore, EpisodeWrite, ExperimentStore, QuotaLedger, RECORD_COLUMNS,
    RecheckRecord, Reservations, certificate_record, digest_column, recheck_record,
};
#[cfg(feature = "sandbox")]
pub use sessions::SessionStore;
#[cfg(feature = "sandbox")]
pub use tokens::{TokenRecord, TokenStore};
pub use workspaces::{Appended, Remembered, RevisionRow, WorkspaceStore};

/// The SQLite database inside the data directory (a fixed name).
pub const DATABASE_FILE: &str = "jacobian.db";

/// What the schema version adding grants does (SQLite's 6, PostgreSQL's 11).
pub(crate) const GRANTS_MIGRATION: &str = "grants: the artifacts each tenant may read (its uploads, its calls' \
    outputs, what the operator shared), filled from the outputs of tenants' episodes already stored; episodes by \
    digest, for a tenant's reads";

/// What a migration did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MigrationReport {
    /// Which database (a path, or host, port and database; never a password).
    pub target: String,
    /// The version found before migrating (0: an empty database, or one made
    /// before its schema was versioned).
    pub from_version: i32,
    /// The version now.
    pub schema_version: i32,
    /// Versions applied by this call.
    pub applied: Vec<i32>,
}

/// A store that could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The data directory's files.
    #[error(transparent)]
    Files(#[from] StoreError),
    /// The data directory's database.
    #[error(transparent)]
    Database(#[from] DbError),
    /// A database written by a newer binary.
    #[error(transparent)]
    SchemaTooNew(#[from] SchemaTooNew),
    /// The shared PostgreSQL store.
    #[cfg(feature = "sandbox")]
    #[error(transparent)]
    Postgres(#[from] postgres::PgOpenError),
}

/// Where a deployment keeps what every host must see alike (components,
/// artifacts, install records, policy, episodes, experiments, workspaces,
/// sessions). Its `Debug` never shows the connection string (it carries a
/// password).
#[cfg(feature = "sandbox")]
#[derive(Clone, Default, PartialEq, Eq)]
pub enum StoreConfig {
    /// The data directory itself: files and its SQLite database (one host).
    #[default]
    DataDir,
    /// A PostgreSQL database shared by several hosts (`postgres://…`); the
    /// data directory keeps only this host's precompiled-code cache.
    Postgres(String),
}

#[cfg(feature = "sandbox")]
impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreConfig::DataDir => f.write_str("DataDir"),
            StoreConfig::Postgres(_) => f.write_str("Postgres(<connection string>)"),
        }
    }
}

/// Every store a runtime uses, opened and migrated.
#[cfg(feature = "sandbox")]
pub struct Stores {
    /// The data directory (and the shared objects, wherever they are).
    pub data: DataDir,
    pub episodes: Box<dyn EpisodeStore>,
    pub experiments: Box<dyn ExperimentStore>,
    pub workspaces: Box<dyn WorkspaceStore>,
    /// Shared MCP sessions (a PostgreSQL store only: one host needs none).
    pub sessions: Option<std::sync::Arc<dyn SessionStore>>,
    /// Operator-issued API tokens.
    pub tokens: std::sync::Arc<dyn TokenStore>,
}

/// Open the stores `config` names over `data_dir`, applying any schema
/// versions they lack.
#[cfg(feature = "sandbox")]
pub fn open(config: &StoreConfig, data_dir: &std::path::Path) -> Result<Stores, OpenError> {
    Ok(match config {
        StoreConfig::DataDir => {
            let data = DataDir::open(data_dir)?;
            let database = sqlite::Sqlite::open(&data.path().join(DATABASE_FILE))?;
            Stores {
                data,
                episodes: Box::new(database.clone()),
                experiments: Box::new(database.clone()),
                workspaces: Box::new(database.clone()),
                sessions: None,
                tokens: std::sync::Arc::new(database),
            }
        }
        StoreConfig::Postgres(url) => {
            let shared = postgres::Postgres::connect(url)?;
            let report = shared.migrate()?;
            if !report.applied.is_empty() {
                tracing::info!(target = %report.target, applied = ?report.applied, "database schema migrated");
            }
            Stores {
                data: DataDir::with_objects(data_dir, Box::new(shared.clone()))?,
                episodes: Box::new(shared.clone()),
                experiments: Box::new(shared.clone()),
                workspaces: Box::new(shared.clone()),
                sessions: Some(std::sync::Arc::new(shared.clone())),
                tokens: std::sync::Arc::new(shared),
            }
        }
    })
}

/// Apply the schema versions the store `config` names lacks (`jacobian migrate`).
#[cfg(feature = "sandbox")]
pub fn migrate(config: &StoreConfig, data_dir: &std::path::Path) -> Result<MigrationReport, OpenError> {
    match config {
        StoreConfig::DataDir => {
            let data = DataDir::open(data_dir)?;
            sqlite::Sqlite::migrate(&data.path().join(DATABASE_FILE))
        }
        StoreConfig::Postgres(url) => Ok(postgres::Postgres::connect(url)?.migrate()?),
    }
}
