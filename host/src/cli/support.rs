//! What the commands share: opening the runtime, reading request files,
//! printing diagnostics and the error envelope, scratch directories.

use std::io::Read as _;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::error::Context;
use jacobian::contract::{ErrorEnvelope, ErrorType};
use jacobian::runtime::OpenError;
use jacobian::store::StoreConfig;
use jacobian::{Runtime, RuntimeConfig};

use crate::cli::args::TrustArgs;
use crate::cli::error::CliError;

/// Print a diagnostic as the tools return it and exit [`crate::cli::Exit::Refused`].
pub fn fail_with(diagnostic: &jacobian::contract::Diagnostic) -> ! {
    let body = serde_json::json!({"diagnostic": diagnostic});
    println!("{}", jacobian::json::pretty_text(&body));
    crate::cli::Exit::Refused.exit()
}

/// Read a JSON request from a file or stdin (`-`), naming the file in errors.
/// JSON that does not fit the request is refused as the MCP tool would refuse
/// it: the diagnostic with the field's dot-path (`entries.3.method`), exit 2.
pub fn read_request<T: serde::de::DeserializeOwned + schemars::JsonSchema>(
    file: &std::path::Path,
) -> crate::cli::error::Result<T> {
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", file.display()))?;
    match jacobian::runtime::read_arguments::<T>(&value) {
        Ok(request) => Ok(request),
        Err(diagnostic) => fail_with(&diagnostic),
    }
}

/// Parse an upper-case vocabulary name (e.g. CONTRACT) into its enum.
pub fn from_name<T: serde::de::DeserializeOwned>(name: &str, flag: &str) -> crate::cli::error::Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_ascii_uppercase()))
        .with_context(|| format!("--{flag}: unknown value {name}"))
}

pub fn open(data_dir: PathBuf, store: &StoreConfig) -> crate::cli::error::Result<Arc<Runtime>> {
    open_with(RuntimeConfig { store: store.clone(), ..RuntimeConfig::new(data_dir) })
}

pub fn open_with(config: RuntimeConfig) -> crate::cli::error::Result<Arc<Runtime>> {
    let dir = config.data_dir.display().to_string();
    let shared = matches!(config.store, StoreConfig::Postgres(_));
    let runtime = Runtime::open(config).map_err(|e| match e {
        OpenError::Store(e) => store_failure(e, &dir, shared),
        e => unavailable(e, &dir, shared),
    })?;
    Ok(Arc::new(runtime))
}

/// A store that could not be opened, typed as it is: a bad --store, an
/// unreachable database, a newer schema; anything else is unavailable.
pub fn store_failure(error: jacobian::store::OpenError, dir: &str, shared: bool) -> CliError {
    match error {
        jacobian::store::OpenError::Postgres(e) => e.into(),
        jacobian::store::OpenError::SchemaTooNew(e) => e.into(),
        e => unavailable(e, dir, shared),
    }
}

/// A runtime or store that could not be opened, said with where it is.
fn unavailable(error: impl std::error::Error + 'static, dir: &str, shared: bool) -> CliError {
    let error = jacobian::errors::render(&error);
    if shared {
        CliError::Unavailable(format!("--store (PostgreSQL) or data directory {dir}: {error}"))
    } else {
        CliError::Unavailable(format!("data directory {dir} (it must exist or be creatable, and be writable): {error}"))
    }
}

/// Print the error envelope (the shape HTTP failures use) on stderr.
pub fn print_envelope(error_type: ErrorType, error: String) {
    let envelope = ErrorEnvelope { error, error_type, request_id: None };
    eprintln!("{}", jacobian::json::text(&envelope));
}

/// Run an offline archive command (`replay`, `verify`) in a scratch data
/// directory and print its report.
pub fn offline<R: serde::Serialize, E: Into<CliError>>(
    archive: &std::path::Path,
    trust: &TrustArgs,
    purpose: &str,
    run: impl FnOnce(&[u8], &std::path::Path, &jacobian::archive::Trust) -> Result<R, E>,
) -> crate::cli::error::Result<R> {
    let trust = trust.trust()?;
    let bytes = read_file(archive)?;
    let scratch = ScratchDir::new(purpose)?;
    let report = run(&bytes, &scratch.0, &trust).map_err(Into::into)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(report)
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    pub fn new(purpose: &str) -> crate::cli::error::Result<Self> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!("jacobian-{purpose}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(ScratchDir(path))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn read_file(path: &std::path::Path) -> crate::cli::error::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}
