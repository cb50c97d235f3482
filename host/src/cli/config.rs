//! Where the data directory and the store are, and how `serve --http`
//! authenticates: flags, environment, the host configuration file,
//! defaults; and logging.

use std::path::PathBuf;

use crate::cli::error::Context;
use jacobian::store::StoreConfig;

/// The host configuration file: where the data directory and the store are,
/// so neither has to be on the command line (a store URL carries a password).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// The data directory.
    pub data_dir: Option<PathBuf>,
    /// `postgres://…`, as `--store`.
    pub store: Option<String>,
    /// How `serve --http` authenticates (`[auth]`; `--auth-*` flags win).
    #[serde(default)]
    pub auth: jacobian::auth::AuthConfig,
}

impl HostConfig {
    /// Read the file named by `--config`/`$JACOBIAN_CONFIG` (it must exist), else
    /// the default location if a file is there, else nothing.
    pub fn load(explicit: Option<&std::path::Path>) -> crate::cli::error::Result<HostConfig> {
        let path = match explicit {
            Some(path) => path.to_owned(),
            None => {
                let base = std::env::var_os("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")));
                match base.map(|b| b.join("jacobian/jacobian.toml")).filter(|p| p.exists()) {
                    Some(path) => path,
                    None => return Ok(HostConfig::default()),
                }
            }
        };
        let text = std::fs::read_to_string(&path).with_context(|| format!("config file {}", path.display()))?;
        toml::from_str(&text).map_err(|e| {
            crate::cli::error::CliError::Invalid(format!("config file {}: {}", path.display(), e.message()))
        })
    }
}

pub fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("JACOBIAN_DATA_DIR") {
        return dir.into();
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(dir).join("jacobian");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/jacobian")
}

/// The store named by --store / $JACOBIAN_STORE.
pub fn store_config(store: Option<&str>) -> StoreConfig {
    match store {
        None | Some("") => StoreConfig::DataDir,
        Some(url) => StoreConfig::Postgres(url.to_owned()),
    }
}

pub fn init_logging(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("JACOBIAN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}
