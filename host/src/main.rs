//! The `jacobian` command line: serve MCP, run the demo, install bundles,
//! authorize checkers, invoke capabilities.

use std::io::Read as _;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use jacobian::archive::{ArchiveError, ArchiveErrorKind};
use jacobian::contract::{DescribeRequest, ErrorEnvelope, ErrorType, InvokeRequest, Status};
use jacobian::digest::Digest;
use jacobian::engine::EngineConfig;
use jacobian::mcp::ToolNames;
use jacobian::runtime::OpenError;
use jacobian::store::postgres::PgOpenError;
use jacobian::store::{SchemaTooNew, StoreConfig};
use jacobian::{Runtime, RuntimeConfig};
use jacobian_guest::protocol::Mode;

#[derive(Parser)]
#[command(
    name = "jacobian",
    version,
    about = "WebAssembly-sandboxed capability runtime for agents that do mathematics"
)]
struct Cli {
    /// Data directory (components, artifacts, cache, policy). Default:
    /// $JACOBIAN_DATA_DIR, else $XDG_DATA_HOME/jacobian, else ~/.local/share/jacobian.
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Host configuration file (TOML: `data_dir`, `store`). Default: $JACOBIAN_CONFIG, else
    /// $XDG_CONFIG_HOME/jacobian/jacobian.toml or ~/.config/jacobian/jacobian.toml when present.
    /// Flags and environment variables win over it.
    #[arg(long, global = true, env = "JACOBIAN_CONFIG")]
    config: Option<PathBuf>,
    /// Keep the shared state (workspaces, episodes, experiments, artifacts, components, policy) in this
    /// PostgreSQL database (postgres://USER:PASSWORD@HOST:PORT/DATABASE) instead of the data directory,
    /// so several hosts can serve one deployment. The data directory then holds only this host's
    /// precompiled-code cache. Default: $JACOBIAN_STORE, else the config file's `store`, else the
    /// data directory.
    #[arg(long, global = true, env = "JACOBIAN_STORE", hide_env_values = true)]
    store: Option<String>,
    /// Log as JSON lines (to stderr).
    #[arg(long, global = true)]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio, or over streamable HTTP with --http.
    Serve {
        /// Spell tool names with underscores (capability_describe) for clients that reject dots.
        #[arg(long)]
        underscore_tool_names: bool,
        /// Serve MCP streamable HTTP at ADDR (e.g. 127.0.0.1:8700; port 0 picks one) under /mcp, with
        /// GET /health and GET /metrics. Prints `listening on http://ADDR/mcp` when ready.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Also accept this Host name (default: loopback names only). Repeatable.
        #[arg(long = "allow-host", requires = "http")]
        allow_hosts: Vec<String>,
        /// On SIGINT/SIGTERM, wait this many seconds for in-flight invocations before closing sessions.
        #[arg(long, default_value_t = 30, requires = "http")]
        drain_seconds: u64,
        /// Component calls running at once (the sandbox pool's size).
        #[arg(long, default_value_t = EngineConfig::default().max_concurrent_calls, value_parser = clap::value_parser!(u32).range(1..=1024))]
        max_concurrent_calls: u32,
        /// Calls allowed to wait for a slot; a call beyond them fails at once with OVERLOADED.
        #[arg(long, default_value_t = EngineConfig::default().max_queued_calls, value_parser = clap::value_parser!(u32).range(0..=4096))]
        max_queued_calls: u32,
        /// Threads serving the protocol (HTTP, MCP, quick calls). One is the
        /// fastest on a few cores; component calls that are not quick run on
        /// blocking threads either way. stdio always uses one.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
        async_threads: u32,
    },
    /// Write an experiment's archive (the `experiment://ID/archive` resource) to a file.
    Archive {
        /// Experiment id (a result's accounting.experiment).
        experiment: String,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Re-execute every episode of an archive in a fresh, temporary data directory; exit 0 when
    /// byte-identical, 1 with a field-level diff otherwise, 2 when the archive is refused.
    Replay {
        /// The archive file.
        archive: PathBuf,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Re-run the checkers on an archive's certificates offline and report each verdict; exit 0
    /// when every verdict is VERIFIED (and archived verdicts are reproduced).
    Verify {
        /// The archive file.
        archive: PathBuf,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Typed field-level diff of two episode, result or archive payloads (files); exit 0 when identical.
    Compare {
        /// Left payload file.
        left: PathBuf,
        /// Right payload file.
        right: PathBuf,
    },
    /// Walk discover → invoke → verify in a fresh data directory and print what an agent sees.
    Demo,
    /// List the installed catalog (JSON), as `capability://catalog`.
    Catalog,
    /// capability.describe: search/browse (no id) or read one capability (JSON).
    Describe {
        /// Read this capability by id.
        #[arg(long)]
        id: Option<String>,
        /// SUMMARY, CONTRACT or FULL (with --id).
        #[arg(long)]
        view: Option<String>,
        /// Search words.
        #[arg(long)]
        query: Option<String>,
        /// Domain namespace or exact tag.
        #[arg(long)]
        domain: Option<String>,
        /// EXPLORE or VERIFY.
        #[arg(long, value_parser = parse_mode)]
        mode: Option<Mode>,
        /// Results per page (1..=20).
        #[arg(long)]
        limit: Option<u32>,
        /// A next_cursor from a previous page.
        #[arg(long)]
        cursor: Option<String>,
        /// Input kind, e.g. NATURAL_LANGUAGE_PROOF.
        #[arg(long)]
        input_kind: Option<String>,
        /// Exact artifact schema_uri.
        #[arg(long)]
        artifact_type: Option<String>,
    },
    /// Read a resource (jacobian://instructions, capability://catalog, artifact://…, episode://…);
    /// without a URI, list resources, templates and prompts.
    Resource {
        /// The URI.
        uri: Option<String>,
    },
    /// Render a prompt (jacobian-discover, jacobian-check-evidence).
    Prompt {
        /// Prompt name.
        name: String,
        /// Arguments as key=value.
        #[arg(long = "arg")]
        args: Vec<String>,
    },
    /// List installed components and any that failed to load (JSON).
    Components,
    /// Invoke a capability; prints the result JSON (exit 2 when it failed).
    Invoke {
        /// Capability id.
        id: String,
        /// Input JSON file, or `-` for stdin.
        #[arg(long)]
        input: PathBuf,
        /// EXPLORE or VERIFY (default: the capability's first mode).
        #[arg(long, value_parser = parse_mode)]
        mode: Option<Mode>,
        /// Print the model-visible text view (STANDARD, SUMMARY, FULL) instead of the complete result.
        #[arg(long)]
        view: Option<String>,
        /// Record the invocation in this experiment (default: a fresh one per command).
        #[arg(long)]
        experiment: Option<String>,
    },
    /// Install a component bundle (.wasm) into the data directory.
    Install {
        /// The component file.
        file: PathBuf,
        /// Refuse unless the file's SHA-256 is this digest.
        #[arg(long)]
        expect_digest: Option<Digest>,
    },
    /// The epistemic workspace: open, write, query (JSON request files, as over MCP) and graph.
    Workspace {
        #[command(subcommand)]
        action: WorkspaceAction,
    },
    /// Apply the store's schema migrations (the data directory's database, or the PostgreSQL store
    /// with --store; every command also applies them when it opens the store) and print the schema
    /// version; refuses a database whose schema is newer than this binary.
    Migrate,
    /// The operator policy (budgets, visibility, checker authorization, experiment budgets): print it,
    /// or replace it with a validated TOML file. With a PostgreSQL store this is how every host's policy
    /// is edited; every host applies the change from its next call.
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// Operator control of checker authorization.
    Checkers {
        #[command(subcommand)]
        action: CheckerAction,
    },
}

/// What an offline re-check trusts beyond the archive itself.
#[derive(clap::Args)]
struct TrustArgs {
    /// Refuse the archive unless its pack_hash is this (sha256:<hex>).
    #[arg(long)]
    expect_pack_hash: Option<String>,
    /// Authorize a checker digest for a role during this re-check (ROLE=sha256:<hex>); only checkers
    /// bundled in this binary are authorized otherwise. Repeatable.
    #[arg(long = "authorize", value_name = "ROLE=DIGEST")]
    authorize: Vec<String>,
}

impl TrustArgs {
    fn trust(&self) -> anyhow::Result<jacobian::archive::Trust> {
        let mut authorized = Vec::new();
        for entry in &self.authorize {
            let (role, digest) =
                entry.split_once('=').with_context(|| format!("--authorize {entry}: expected ROLE=sha256:<hex>"))?;
            let digest: Digest = digest.parse().with_context(|| format!("--authorize {entry}"))?;
            authorized.push(jacobian::policy::Authorization { role: role.to_owned(), digest });
        }
        Ok(jacobian::archive::Trust { expect_pack_hash: self.expect_pack_hash.clone(), authorized })
    }
}

#[derive(Subcommand)]
enum WorkspaceAction {
    /// workspace.open with the JSON request in FILE (`-` for stdin).
    Open {
        /// Request file.
        #[arg(long)]
        file: PathBuf,
    },
    /// workspace.write with the JSON request in FILE (`-` for stdin).
    Write {
        /// Request file.
        #[arg(long)]
        file: PathBuf,
    },
    /// workspace.query with the JSON request in FILE (`-` for stdin).
    Query {
        /// Request file.
        #[arg(long)]
        file: PathBuf,
    },
    /// Draw a workspace: cards, dependency and assumption links, marks, stale cards.
    Graph {
        /// Workspace id.
        id: String,
        /// dot or svg.
        #[arg(long, default_value = "svg")]
        format: String,
        /// Draw the workspace at this revision (default: the head).
        #[arg(long)]
        revision: Option<String>,
    },
}

#[derive(Subcommand)]
enum PolicyAction {
    /// Print the policy in force (TOML).
    Show,
    /// Validate FILE (TOML, `-` for stdin) and make it the policy; an invalid file changes nothing.
    Set {
        /// The policy file.
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum CheckerAction {
    /// Show checker roles, digests and whether each is authorized.
    List,
    /// Authorize a checker component digest for a role.
    Authorize {
        /// Component digest (sha256:<hex>).
        digest: Digest,
        /// Checker role.
        #[arg(long)]
        role: String,
    },
    /// Revoke a checker component digest for every role.
    Revoke {
        /// Component digest (sha256:<hex>).
        digest: Digest,
    },
}

fn parse_mode(text: &str) -> Result<Mode, String> {
    match text.to_ascii_uppercase().as_str() {
        "EXPLORE" => Ok(Mode::Explore),
        "VERIFY" => Ok(Mode::Verify),
        other => Err(format!("mode must be EXPLORE or VERIFY, got {other}")),
    }
}

/// Print a diagnostic as the tools return it and exit with status 2.
fn fail_with(diagnostic: &jacobian::contract::Diagnostic) -> ! {
    let body = serde_json::json!({"diagnostic": diagnostic});
    println!("{}", serde_json::to_string_pretty(&body).unwrap_or_default());
    std::process::exit(2)
}

/// Read a JSON request from a file or stdin (`-`), naming the file in errors.
fn read_json<T: serde::de::DeserializeOwned>(file: &std::path::Path) -> anyhow::Result<T> {
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
    };
    serde_json::from_str(&text).with_context(|| format!("{}: not a valid request", file.display()))
}

/// Parse an upper-case vocabulary name (e.g. CONTRACT) into its enum.
fn from_name<T: serde::de::DeserializeOwned>(name: &str, flag: &str) -> anyhow::Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_ascii_uppercase()))
        .with_context(|| format!("--{flag}: unknown value {name}"))
}

/// The host configuration file: where the data directory and the store are,
/// so neither has to be on the command line (a store URL carries a password).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HostConfig {
    /// The data directory.
    data_dir: Option<PathBuf>,
    /// `postgres://…`, as `--store`.
    store: Option<String>,
}

impl HostConfig {
    /// Read the file named by `--config`/`$JACOBIAN_CONFIG` (it must exist), else
    /// the default location if a file is there, else nothing.
    fn load(explicit: Option<&std::path::Path>) -> anyhow::Result<HostConfig> {
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
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("config file {}: {}", path.display(), e.message()))
    }
}

fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("JACOBIAN_DATA_DIR") {
        return dir.into();
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(dir).join("jacobian");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/jacobian")
}

fn init_logging(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("JACOBIAN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

fn open(data_dir: PathBuf, store: &StoreConfig) -> anyhow::Result<Arc<Runtime>> {
    open_with(RuntimeConfig { store: store.clone(), ..RuntimeConfig::new(data_dir) })
}

fn open_with(config: RuntimeConfig) -> anyhow::Result<Arc<Runtime>> {
    let dir = config.data_dir.display().to_string();
    let shared = matches!(config.store, StoreConfig::Postgres(_));
    let runtime = Runtime::open(config).map_err(|e| match e {
        OpenError::Store(e) => store_failure(e, &dir, shared),
        e if shared => Unavailable(format!("--store (PostgreSQL) or data directory {dir}: {e}")).into(),
        e => Unavailable(format!("data directory {dir} (it must exist or be creatable, and be writable): {e}")).into(),
    })?;
    Ok(Arc::new(runtime))
}

/// A store that could not be opened, typed as it is: a bad --store, an
/// unreachable database, a newer schema; anything else is unavailable.
fn store_failure(error: jacobian::store::OpenError, dir: &str, shared: bool) -> anyhow::Error {
    match error {
        jacobian::store::OpenError::Postgres(e) => anyhow::Error::new(e),
        jacobian::store::OpenError::SchemaTooNew(e) => anyhow::Error::new(e),
        e if shared => Unavailable(format!("--store (PostgreSQL) or data directory {dir}: {e}")).into(),
        e => Unavailable(format!("data directory {dir} (it must exist or be creatable, and be writable): {e}")).into(),
    }
}

/// The store named by --store / $JACOBIAN_STORE.
fn store_config(store: Option<&str>) -> StoreConfig {
    match store {
        None | Some("") => StoreConfig::DataDir,
        Some(url) => StoreConfig::Postgres(url.to_owned()),
    }
}

/// A store or runtime that could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("opening the runtime: {0}")]
struct Unavailable(String);

/// Print the error envelope (the shape HTTP failures use) on stderr.
fn print_envelope(error_type: ErrorType, error: String) {
    let envelope = ErrorEnvelope { error, error_type, request_id: None };
    eprintln!("{}", serde_json::to_string(&envelope).unwrap_or_default());
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            print_envelope(ErrorType::ValidationError, e.to_string().lines().next().unwrap_or("").to_owned());
            std::process::exit(3);
        }
    };
    init_logging(cli.log_json);
    if let Err(error) = run(cli) {
        // Exit codes: 1 is an answer ("differs", "not verified"); 2 a refused archive; 3 any other error.
        let (error_type, code) = match error.downcast_ref::<ArchiveError>().map(|e| e.kind) {
            Some(ArchiveErrorKind::Invalid) => (ErrorType::ArchiveInvalid, 2),
            Some(ArchiveErrorKind::NotFound) => (ErrorType::NotFound, 3),
            Some(ArchiveErrorKind::Unavailable) => (ErrorType::Unavailable, 3),
            None if error.downcast_ref::<Unavailable>().is_some() => (ErrorType::Unavailable, 3),
            None if error.downcast_ref::<SchemaTooNew>().is_some() => (ErrorType::SchemaTooNew, 3),
            None if let Some(e) = error.downcast_ref::<PgOpenError>() => match e {
                PgOpenError::InvalidUrl(_) => (ErrorType::ValidationError, 3),
                PgOpenError::NewerSchema { .. } => (ErrorType::SchemaTooNew, 3),
                PgOpenError::Unreachable { .. } | PgOpenError::Failed { .. } => (ErrorType::Unavailable, 3),
            },
            None if error.downcast_ref::<jacobian::limits::MessageTooLarge>().is_some() => {
                (ErrorType::PayloadTooLarge, 3)
            }
            None if error.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            }) =>
            {
                (ErrorType::NotFound, 3)
            }
            None => (ErrorType::ValidationError, 3),
        };
        print_envelope(error_type, format!("{error:#}"));
        std::process::exit(code);
    }
}

/// Run an offline archive command (`replay`, `verify`) in a scratch data
/// directory and print its report.
fn offline<R: serde::Serialize, E: Into<anyhow::Error>>(
    archive: &std::path::Path,
    trust: &TrustArgs,
    purpose: &str,
    run: impl FnOnce(&[u8], &std::path::Path, &jacobian::archive::Trust) -> Result<R, E>,
) -> anyhow::Result<R> {
    let trust = trust.trust()?;
    let bytes = read_file(archive)?;
    let scratch = ScratchDir::new(purpose)?;
    let report = run(&bytes, &scratch.0, &trust).map_err(Into::into)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(report)
}

/// A fresh directory under the system temp dir, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(purpose: &str) -> anyhow::Result<Self> {
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

fn read_file(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let config = HostConfig::load(cli.config.as_deref())?;
    // Flags and environment variables, then the config file, then the defaults.
    let data_dir = match (cli.data_dir.clone(), std::env::var_os("JACOBIAN_DATA_DIR"), config.data_dir) {
        (Some(dir), _, _) => dir,
        (None, Some(dir), _) => dir.into(),
        (None, None, Some(dir)) => dir,
        (None, None, None) => default_data_dir(),
    };
    let store = store_config(cli.store.as_deref().or(config.store.as_deref()));
    match cli.command {
        Command::Serve {
            underscore_tool_names,
            http,
            allow_hosts,
            drain_seconds,
            max_concurrent_calls,
            max_queued_calls,
            async_threads,
        } => {
            let engine = EngineConfig { max_concurrent_calls, max_queued_calls, ..EngineConfig::default() };
            let runtime = open_with(RuntimeConfig { engine, store, ..RuntimeConfig::new(data_dir) })?;
            let names = if underscore_tool_names { ToolNames::Underscore } else { ToolNames::Dotted };
            // Every running or waiting call holds a blocking thread: size the pool
            // so calls reach the slot queue (and its typed OVERLOADED) instead of
            // waiting unseen in tokio's own queue; the rest is for store I/O.
            let blocking = (max_concurrent_calls + max_queued_calls + 64) as usize;
            // Quick calls run on the async thread that received them, slow ones
            // on blocking threads; one async thread avoids every hand-off
            // between threads (see ARCHITECTURE.md, "Threads").
            let mut builder = if http.is_none() || async_threads == 1 {
                tokio::runtime::Builder::new_current_thread()
            } else {
                let mut builder = tokio::runtime::Builder::new_multi_thread();
                builder.worker_threads(async_threads as usize);
                builder
            };
            let rt = builder.enable_all().max_blocking_threads(blocking).build()?;
            match http {
                None => rt.block_on(jacobian::mcp::serve_stdio(runtime, names)),
                Some(addr) => {
                    let mut allowed_hosts: Vec<String> =
                        jacobian::http::LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
                    allowed_hosts.extend(allow_hosts);
                    let config = jacobian::http::HttpConfig { addr, allowed_hosts, names };
                    rt.block_on(jacobian::http::serve(
                        runtime,
                        config,
                        shutdown_signal(),
                        std::time::Duration::from_secs(drain_seconds),
                    ))
                }
            }
        }
        Command::Archive { experiment, out } => {
            let runtime = open(data_dir, &store)?;
            let archive = jacobian::archive::Archive::build(&runtime, &experiment)?;
            std::fs::write(&out, serde_json::to_vec(&archive)?)
                .with_context(|| format!("writing {}", out.display()))?;
            println!("{} ({} episodes) written to {}", archive.pack_hash, archive.episodes.len(), out.display());
            Ok(())
        }
        Command::Replay { archive, trust } => {
            let report = offline(&archive, &trust, "replay", jacobian::archive::replay)?;
            if !report.identical {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Verify { archive, trust } => {
            let report = offline(&archive, &trust, "verify", jacobian::archive::verify)?;
            let all_verified = report.verdicts.iter().all(|v| {
                v.status == Some(jacobian::contract::VerificationStatus::Verified) && v.matches_archive != Some(false)
            });
            if !all_verified {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Compare { left, right } => {
            let parse = |path: &PathBuf| -> anyhow::Result<serde_json::Value> {
                serde_json::from_slice(&read_file(path)?).with_context(|| format!("{}: not JSON", path.display()))
            };
            let comparison = jacobian::archive::compare(&parse(&left)?, &parse(&right)?);
            println!("{}", serde_json::to_string_pretty(&comparison)?);
            if !comparison.identical {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Describe { id, view, query, domain, mode, limit, cursor, input_kind, artifact_type } => {
            let request = DescribeRequest {
                capability_id: id,
                view: view.map(|v| from_name(&v, "view")).transpose()?,
                query,
                domain,
                mode,
                limit,
                cursor,
                input_kind: input_kind.map(|k| from_name(&k, "input-kind")).transpose()?,
                artifact_type,
            };
            let runtime = open(data_dir, &store)?;
            match runtime.describe(&request) {
                Ok(value) => println!("{}", serde_json::to_string_pretty(&value)?),
                Err(diagnostic) => fail_with(&diagnostic),
            }
            Ok(())
        }
        Command::Resource { uri } => {
            let Some(uri) = uri else {
                println!("{}", serde_json::to_string_pretty(&jacobian::resources::listing())?);
                return Ok(());
            };
            let runtime = open(data_dir, &store)?;
            match jacobian::resources::read(&runtime, &uri) {
                Ok(content) => println!("{}", content.text),
                Err(diagnostic) => fail_with(&diagnostic),
            }
            Ok(())
        }
        Command::Prompt { name, args } => {
            let mut arguments = serde_json::Map::new();
            for arg in args {
                let (key, value) = arg.split_once('=').with_context(|| format!("--arg {arg}: expected key=value"))?;
                arguments.insert(key.to_owned(), value.into());
            }
            match jacobian::resources::prompt(&name, &arguments) {
                Ok(text) => println!("{text}"),
                Err(diagnostic) => bail!("{}", diagnostic.message),
            }
            Ok(())
        }
        Command::Demo => {
            let dir = match cli.data_dir {
                Some(dir) => dir,
                None => std::env::temp_dir().join(format!("jacobian-demo-{}", std::process::id())),
            };
            jacobian::demo::run(open(dir, &StoreConfig::DataDir)?)
        }
        Command::Catalog => {
            let runtime = open(data_dir, &store)?;
            let inventory = runtime.catalog().inventory(&runtime.binding());
            println!("{}", serde_json::to_string_pretty(&inventory)?);
            Ok(())
        }
        Command::Components => {
            let runtime = open(data_dir, &store)?;
            let components: Vec<_> = runtime.components().collect();
            let listing = serde_json::json!({
                "components": components,
                "load_failures": runtime.load_failures(),
            });
            println!("{}", serde_json::to_string_pretty(&listing)?);
            Ok(())
        }
        Command::Invoke { id, input, mode, view, experiment } => {
            let text = if input.as_os_str() == "-" {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text)?;
                text
            } else {
                std::fs::read_to_string(&input).with_context(|| format!("reading {}", input.display()))?
            };
            let input: serde_json::Value = serde_json::from_str(&text).context("the input file is not valid JSON")?;
            let runtime = open(data_dir, &store)?;
            let text_view = view.map(|v| from_name(&v, "view")).transpose()?;
            let request = InvokeRequest { capability_id: id, mode, input, budget: None, view: text_view, experiment };
            let result = runtime.invoke(&request);
            if text_view.is_some() {
                println!("{}", result.text);
            } else {
                println!("{}", serde_json::to_string_pretty(&result)?);
            }
            if result.status == Status::Failed {
                std::process::exit(2);
            }
            Ok(())
        }
        Command::Install { file, expect_digest } => {
            let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let runtime = open(data_dir, &store)?;
            let (record, new) = runtime.install(&bytes, expect_digest)?;
            let verb = if new { "installed" } else { "already installed" };
            println!(
                "{verb} {} ({:?}, {} {})",
                record.digest, record.kind, record.provider.name, record.provider.version
            );
            for c in &record.descriptor.capabilities {
                println!("  capability {}", c.id);
            }
            for k in &record.descriptor.checkers {
                println!(
                    "  checker role {} as {} (not authorized until `jacobian checkers authorize`)",
                    k.role, k.capability_id
                );
            }
            Ok(())
        }
        Command::Workspace { action } => {
            let runtime = open(data_dir, &store)?;
            let workspaces = runtime.workspaces();
            let answer = match action {
                WorkspaceAction::Open { file } => workspaces.open(runtime.data(), &read_json(&file)?),
                WorkspaceAction::Write { file } => workspaces.write(runtime.data(), &read_json(&file)?),
                WorkspaceAction::Query { file } => workspaces.query(runtime.data(), &read_json(&file)?),
                WorkspaceAction::Graph { id, format, revision } => {
                    let revision = match revision {
                        Some(text) => Some(
                            jacobian::workspace::model::parse_numbered(&text, "rev")
                                .with_context(|| format!("--revision {text}: expected rev-<n>"))?,
                        ),
                        None => None,
                    };
                    match workspaces.state(runtime.data(), &id, revision) {
                        Ok(state) => {
                            match format.as_str() {
                                "dot" => print!("{}", jacobian::workspace::graph::dot(&state)),
                                "svg" => print!("{}", jacobian::workspace::graph::svg(&state)),
                                other => bail!("--format {other}: expected dot or svg"),
                            }
                            return Ok(());
                        }
                        Err(diagnostic) => Err(diagnostic),
                    }
                }
            };
            match answer {
                Ok(value) => println!("{}", serde_json::to_string_pretty(&value)?),
                Err(diagnostic) => fail_with(&diagnostic),
            }
            Ok(())
        }
        Command::Migrate => {
            let shared = matches!(store, StoreConfig::Postgres(_));
            let report = jacobian::store::migrate(&store, &data_dir)
                .map_err(|e| store_failure(e, &data_dir.display().to_string(), shared))?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        Command::Policy { action } => {
            // Without loading components: this is also how a broken policy is repaired.
            let config = RuntimeConfig { store, ..RuntimeConfig::new(data_dir) };
            let shared = matches!(config.store, StoreConfig::Postgres(_));
            let dir = config.data_dir.display().to_string();
            let state = jacobian::runtime::open_state(&config).map_err(|e| match e {
                OpenError::Store(e) => store_failure(e, &dir, shared),
                e => Unavailable(e.to_string()).into(),
            })?;
            match action {
                PolicyAction::Show => match state.read_policy()? {
                    Some(text) => print!("{text}"),
                    None => print!("{}", jacobian::policy::Policy::default().to_toml()),
                },
                PolicyAction::Set { file } => {
                    let text = if file.as_os_str() == "-" {
                        let mut text = String::new();
                        std::io::stdin().read_to_string(&mut text)?;
                        text
                    } else {
                        String::from_utf8(read_file(&file)?).context("the policy file is not UTF-8")?
                    };
                    let policy = jacobian::policy::Policy::parse(&text, config.engine.max_memory_bytes)
                        .with_context(|| format!("policy file {}", file.display()))?;
                    state.write_policy(&policy.to_toml())?;
                    println!("policy {} is in force", policy.digest());
                }
            }
            Ok(())
        }
        Command::Checkers { action } => {
            let runtime = open(data_dir, &store)?;
            match action {
                CheckerAction::List => {
                    let binding = runtime.binding();
                    for entry in
                        runtime.catalog().entries().filter(|e| e.kind == jacobian::catalog::EntryKind::Verifier)
                    {
                        let authorized = binding.authorized.get(&entry.id).copied().unwrap_or(false);
                        println!(
                            "{} role={} digest={} authorized={authorized}",
                            entry.id,
                            entry.checker_roles.join(","),
                            entry.component
                        );
                    }
                }
                CheckerAction::Authorize { digest, role } => {
                    if runtime.kind_of(&digest) != Some(jacobian_guest::protocol::BundleKind::Checker) {
                        bail!("{digest} is not an installed checker component; install it first");
                    }
                    let provides = runtime
                        .components()
                        .find(|r| r.digest == digest)
                        .is_some_and(|r| r.descriptor.checkers.iter().any(|k| k.role == role));
                    if !provides {
                        bail!("checker {digest} does not declare role {role}");
                    }
                    runtime.update_policy(|p| p.authorize(&role, digest))?;
                    println!("authorized {digest} for role {role}");
                }
                CheckerAction::Revoke { digest } => {
                    runtime.update_policy(|p| p.revoke(digest))?;
                    println!("revoked {digest}");
                }
            }
            Ok(())
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
    tracing::info!("shutting down: draining in-flight invocations");
}

/// mimalloc: a fifth of the server's time went to glibc's malloc and free
/// (see ARCHITECTURE.md, "Allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
