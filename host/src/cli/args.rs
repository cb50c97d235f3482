//! The command line's arguments: one type per command.

use std::path::PathBuf;

use crate::cli::error::Context;
use clap::{Parser, Subcommand};
use jacobian::digest::Digest;
use jacobian::engine::EngineConfig;
use jacobian::http::HttpLimits;
use jacobian_guest::protocol::Mode;

/// The exit codes, as `--help` lists them (`crate::cli::Exit`).
pub const EXIT_CODES: &str = "Exit codes:
  0  success
  1  the answer is no: replay differs, verify did not conclude VERIFIED, a bundle check was not accepted
  2  refused: an archive that is not a valid one, or an invocation that failed (its diagnostic on stdout)
  3  any other error (a JSON envelope on stderr names its error_type)";

#[derive(Parser)]
#[command(
    name = "jacobian",
    version,
    about = "WebAssembly-sandboxed capability runtime for agents that do mathematics",
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// Data directory (components, artifacts, cache, policy). Default:
    /// $JACOBIAN_DATA_DIR, else $XDG_DATA_HOME/jacobian, else ~/.local/share/jacobian.
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    /// Host configuration file (TOML: `data_dir`, `store`). Default: $JACOBIAN_CONFIG, else
    /// $XDG_CONFIG_HOME/jacobian/jacobian.toml or ~/.config/jacobian/jacobian.toml when present.
    /// Flags and environment variables win over it.
    #[arg(long, global = true, env = "JACOBIAN_CONFIG")]
    pub config: Option<PathBuf>,
    /// Keep the shared state (workspaces, episodes, experiments, artifacts, components, policy) in this
    /// PostgreSQL database (postgres://USER:PASSWORD@HOST:PORT/DATABASE) instead of the data directory,
    /// so several hosts can serve one deployment (the data directory then holds only this host's
    /// compiled code). Default: $JACOBIAN_STORE, else the config file's `store`, else the data dir.
    #[arg(long, global = true, env = "JACOBIAN_STORE", hide_env_values = true)]
    pub store: Option<String>,
    /// Log as JSON lines (to stderr).
    #[arg(long, global = true)]
    pub log_json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve MCP over stdio, or over streamable HTTP with --http.
    Serve(ServeArgs),
    /// Write an experiment's archive (the `experiment://ID/archive` resource) to a file.
    Archive(ArchiveArgs),
    /// Re-execute an archive's episodes in a fresh data directory, saying how the pack was read (its
    /// release, rules, trust); exit 0 when identical, 1 with a field-level diff, 2 when refused.
    Replay(ReplayArgs),
    /// Re-run the checkers (this binary's where the pack's conclude nothing) on an archive's
    /// certificates offline; exit 0 when every verdict is VERIFIED (and archived ones reproduced).
    Verify(VerifyArgs),
    /// Typed field-level diff of two episode, result or archive payloads (files); exit 0 when identical.
    Compare(CompareArgs),
    /// Walk discover → invoke → verify in a fresh data directory and print what an agent sees.
    Demo,
    /// List the installed catalog (JSON), as `capability://catalog`.
    Catalog,
    /// capability.describe: search/browse (no id) or read one capability (JSON).
    Describe(DescribeArgs),
    /// Read a resource (jacobian://instructions, capability://catalog, artifact://…, episode://…);
    /// without a URI, list resources, templates and prompts.
    Resource(ResourceArgs),
    /// Render a prompt (jacobian-discover, jacobian-check-evidence).
    Prompt(PromptArgs),
    /// List installed components and any that failed to load (JSON).
    Components,
    /// Invoke a capability; prints the result JSON (exit 2 when it failed).
    Invoke(InvokeArgs),
    /// Install a component bundle (.wasm) into the data directory.
    Install(InstallArgs),
    /// A new plugin project: a Cargo crate with the SDK dependency, one example, a native unit test
    /// and build instructions, ready for `cargo build --target wasm32-wasip2 --release`.
    New(NewArgs),
    /// Every install check on a bundle without installing it, its examples (recipes included) run
    /// twice for byte-identical results; prints a report; exit 0 when it would be installed and
    /// every example is deterministic, 1 otherwise.
    Check(InstallArgs),
    /// Push a bundle to an OCI registry as a WebAssembly artifact (with its minisign signature, if
    /// any); prints the manifest digest to pin installs to. The bundle must pass `jacobian check`.
    Push(PushArgs),
    /// The epistemic workspace: open, write, query (JSON request files, as over MCP) and graph.
    Workspace(WorkspaceArgs),
    /// Artifacts too large for a request's input (a proof of hundreds of megabytes): `put` streams a
    /// file into the store (at most the policy's [uploads] max_bytes) and prints the artifact:// URI
    /// capabilities take; `share` lets a tenant read an artifact it did not make.
    Artifact(ArtifactArgs),
    /// Apply the store's schema migrations (every command does when it opens the store) and print the
    /// schema version; refuses a database whose schema is newer than this binary.
    Migrate,
    /// The operator policy (budgets, visibility, checker authorization, experiment budgets): print it,
    /// or replace it with a validated TOML file. With a PostgreSQL store this is how every host's policy
    /// is edited; every host applies the change from its next call.
    Policy(PolicyArgs),
    /// Operator control of checker authorization.
    Checkers(CheckersArgs),
    /// Re-check every stored verdict of a recalled checker: its certificate judged again by the
    /// checker the policy now authorizes for its role, the new verdict recorded beside the old one
    /// (one JSON line each); nothing stored is changed or deleted.
    Recheck(RecheckArgs),
    /// Operator control of publisher trust: whose minisign signatures installs accept, and whether
    /// every install needs one.
    Publishers(PublishersArgs),
    /// API tokens for `serve --http --auth-api-tokens`: create (printed once), list, revoke. Kept in
    /// the store, so every host of a deployment accepts the same tokens.
    Tokens(TokensArgs),
}

/// Arguments of `jacobian serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Spell tool names with underscores (capability_describe) for clients that reject dots.
    #[arg(long)]
    pub underscore_tool_names: bool,
    /// Serve MCP streamable HTTP at ADDR (e.g. 127.0.0.1:8700; port 0 picks one) under /mcp, with
    /// GET /health and GET /metrics. Prints `listening on http://ADDR/mcp` when ready.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Also accept this Host name (default: loopback names only). Repeatable.
    #[arg(long = "allow-host", requires = "http")]
    pub allow_hosts: Vec<String>,
    /// HTTP connections held at once once a request on them passed the edge (authenticated, with
    /// authentication on); one proven beyond them is answered 503 and closed.
    #[arg(long, default_value_t = HttpLimits::default().max_connections as u32, requires = "http", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_connections: u32,
    /// New HTTP connections not proven yet (no request passed the edge); beyond them the oldest is
    /// closed to make room, and each is closed if not proven within 2 s.
    #[arg(long, default_value_t = HttpLimits::default().max_unproven_connections as u32, requires = "http", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_unproven_connections: u32,
    /// Proven connections of one tenant (with authentication); beyond them a 429 envelope and the
    /// connection closed.
    #[arg(long, default_value_t = HttpLimits::default().max_connections_per_tenant as u32, requires = "http", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_connections_per_tenant: u32,
    /// Requests of one tenant answered at once, bodies being received included (with
    /// authentication); more get a 429 envelope.
    #[arg(long, default_value_t = HttpLimits::default().max_in_flight_per_tenant as u32, requires = "http", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_in_flight_per_tenant: u32,
    /// MCP sessions one tenant holds on this server (with authentication); an initialize beyond
    /// them gets a 429 envelope.
    #[arg(long, default_value_t = HttpLimits::default().max_sessions_per_tenant as u32, requires = "http", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_sessions_per_tenant: u32,
    /// HTTP requests answered at once (an open SSE stream counts); more get a 503 envelope.
    #[arg(long, default_value_t = HttpLimits::default().max_in_flight as u32, requires = "http", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_in_flight: u32,
    /// MCP sessions held at once; an initialize beyond them gets a 503 envelope.
    #[arg(long, default_value_t = HttpLimits::default().max_sessions as u32, requires = "http", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_sessions: u32,
    /// Seconds a client has to send a request's headers (then the connection closes) and its body
    /// (then a 408 envelope).
    #[arg(long, default_value_t = HttpLimits::default().client_timeout.as_secs(), requires = "http", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub client_timeout_seconds: u64,
    /// On SIGINT/SIGTERM, wait this many seconds for in-flight invocations before closing sessions.
    #[arg(long, default_value_t = 30, requires = "http")]
    pub drain_seconds: u64,
    /// Component calls running at once (the sandbox pool's size).
    #[arg(long, default_value_t = EngineConfig::default().max_concurrent_calls, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_concurrent_calls: u32,
    /// Calls allowed to wait for a slot; a call beyond them fails at once with OVERLOADED.
    #[arg(long, default_value_t = EngineConfig::default().max_queued_calls, value_parser = clap::value_parser!(u32).range(0..=4096))]
    pub max_queued_calls: u32,
    /// Threads serving the protocol (HTTP, MCP, quick calls). One is the
    /// fastest on a few cores; component calls that are not quick run on
    /// blocking threads either way. stdio always uses one.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub async_threads: u32,
    /// Accept API tokens made by `jacobian tokens create` (the config file's `auth.api_tokens`).
    #[arg(long, requires = "http")]
    pub auth_api_tokens: bool,
    /// Accept JWT access tokens from this OAuth 2.1 authorization server (its issuer URL; keys from its
    /// metadata's jwks_uri unless --auth-jwks-uri or --auth-jwks-file says where).
    #[arg(long, value_name = "URL", requires = "http")]
    pub auth_issuer: Option<String>,
    /// Where the authorization server's keys (JWKS) are.
    #[arg(long, value_name = "URL", requires = "http", conflicts_with = "auth_jwks_file")]
    pub auth_jwks_uri: Option<String>,
    /// The authorization server's keys (JWKS) in a file, for offline deployments.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub auth_jwks_file: Option<PathBuf>,
    /// This server's resource URI, the audience its tokens must name (default: http://ADDR/mcp).
    #[arg(long, value_name = "URI", requires = "http")]
    pub auth_resource: Option<String>,
    /// Serve a non-loopback address with no authentication at all (anyone who reaches the port can
    /// do anything). Without authentication configured and without this flag, such an address is refused.
    #[arg(long, requires = "http")]
    pub insecure_no_auth: bool,
}

/// Arguments of `jacobian archive`.
#[derive(clap::Args)]
pub struct ArchiveArgs {
    /// Experiment id (a result's accounting.experiment).
    pub experiment: String,
    /// Output file.
    #[arg(long)]
    pub out: PathBuf,
}

/// Arguments of `jacobian replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The archive file.
    pub archive: PathBuf,
    #[command(flatten)]
    pub trust: TrustArgs,
}

/// Arguments of `jacobian verify`.
#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The archive file.
    pub archive: PathBuf,
    #[command(flatten)]
    pub trust: TrustArgs,
}

/// Arguments of `jacobian compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// Left payload file.
    pub left: PathBuf,
    /// Right payload file.
    pub right: PathBuf,
    /// Leave out the fields named changes of the answer's shape account for (host/releases.toml).
    #[arg(long)]
    pub ignore_contract_changes: bool,
}

/// Arguments of `jacobian describe`.
#[derive(clap::Args)]
pub struct DescribeArgs {
    /// Read this capability by id.
    #[arg(long)]
    pub id: Option<String>,
    /// SUMMARY, CONTRACT or FULL (with --id).
    #[arg(long)]
    pub view: Option<String>,
    /// Search words.
    #[arg(long)]
    pub query: Option<String>,
    /// Domain namespace or exact tag.
    #[arg(long)]
    pub domain: Option<String>,
    /// EXPLORE or VERIFY.
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<Mode>,
    /// Results per page (1..=20).
    #[arg(long)]
    pub limit: Option<u32>,
    /// A next_cursor from a previous page.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Input kind, e.g. NATURAL_LANGUAGE_PROOF.
    #[arg(long)]
    pub input_kind: Option<String>,
    /// Exact artifact schema_uri.
    #[arg(long)]
    pub artifact_type: Option<String>,
}

/// Arguments of `jacobian resource`.
#[derive(clap::Args)]
pub struct ResourceArgs {
    /// The URI.
    pub uri: Option<String>,
}

/// Arguments of `jacobian prompt`.
#[derive(clap::Args)]
pub struct PromptArgs {
    /// Prompt name.
    pub name: String,
    /// Arguments as key=value.
    #[arg(long = "arg")]
    pub args: Vec<String>,
}

/// Arguments of `jacobian invoke`.
#[derive(clap::Args)]
pub struct InvokeArgs {
    /// Capability id.
    pub id: String,
    /// Input JSON file, or `-` for stdin.
    #[arg(long)]
    pub input: PathBuf,
    /// EXPLORE or VERIFY (default: the capability's first mode).
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<Mode>,
    /// Print the model-visible text view (STANDARD, SUMMARY, FULL) instead of the complete result.
    #[arg(long)]
    pub view: Option<String>,
    /// Record the invocation in this experiment (default: a fresh one per command).
    #[arg(long)]
    pub experiment: Option<String>,
}

/// Arguments of `jacobian install` and `jacobian check`.
#[derive(clap::Args)]
pub struct InstallArgs {
    /// The component file, or oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX] to pull it from an OCI
    /// registry (plain HTTP only to this machine).
    pub source: String,
    /// Refuse unless the component's SHA-256 is this digest.
    #[arg(long)]
    pub expect_digest: Option<Digest>,
    /// The publisher's minisign signature file (default: SOURCE.minisig when it exists; a bundle
    /// from a registry carries its own).
    #[arg(long, value_name = "FILE")]
    pub signature: Option<PathBuf>,
}

/// Arguments of `jacobian artifact`.
#[derive(clap::Args)]
pub struct ArtifactArgs {
    #[command(subcommand)]
    pub action: ArtifactAction,
}

/// What `jacobian artifact` does.
#[derive(Subcommand)]
pub enum ArtifactAction {
    /// Store FILE as an artifact of the given schema; prints {uri, file, bytes, schema_uri}.
    Put {
        /// The file (read as it is stored, never whole).
        file: PathBuf,
        /// What the bytes are, e.g. jacobian:sat/lrat-file@1 or jacobian:sat/drat-file@1 (an LRAT or a DRAT
        /// proof, text or binary).
        #[arg(long)]
        schema: String,
    },
    /// Let a tenant read an artifact (an upload or an output is private to the tenant that made it):
    /// the artifact and every artifact it names, closed (a certificate and its CNF). Prints the URIs
    /// granted.
    Share {
        /// The artifact (artifact://sha256/<hex>).
        uri: String,
        /// The tenant (as API tokens and the operator's JWT claim name it).
        #[arg(long)]
        tenant: String,
    },
}

/// Arguments of `jacobian push`.
#[derive(clap::Args)]
pub struct PushArgs {
    /// The component file (it must pass `jacobian check`).
    pub file: PathBuf,
    /// Where: oci://HOST[:PORT]/REPOSITORY:TAG.
    pub destination: String,
    /// The minisign signature file to carry (default: FILE.minisig when it exists).
    #[arg(long, value_name = "FILE")]
    pub signature: Option<PathBuf>,
}

/// Arguments of `jacobian new`.
#[derive(clap::Args)]
pub struct NewArgs {
    /// What the project exports.
    #[arg(value_enum)]
    pub kind: NewKind,
    /// The crate's name and its ids' namespace (a-z, 0-9, _; starting with a letter).
    pub name: String,
    /// Where to create it (default: ./NAME; must not exist).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The guest SDK's directory (default: the one of the source tree this binary was built from).
    #[arg(long)]
    pub sdk: Option<PathBuf>,
}

/// The kind of plugin `jacobian new` makes.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum NewKind {
    /// A producer: `Capability`, `export_capabilities!`.
    Capability,
    /// An independent checker: `Checker`, `export_checkers!`.
    Checker,
}

/// Arguments of `jacobian workspace`.
#[derive(clap::Args)]
pub struct WorkspaceArgs {
    #[command(subcommand)]
    pub action: WorkspaceAction,
}

/// Arguments of `jacobian policy`.
#[derive(clap::Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    pub action: PolicyAction,
}

/// Arguments of `jacobian tokens`.
#[derive(clap::Args)]
pub struct TokensArgs {
    #[command(subcommand)]
    pub action: TokenAction,
}

#[derive(Subcommand)]
pub enum TokenAction {
    /// Make a token for a tenant and print it once (JSON); only its digest is kept.
    Create {
        /// The tenant the token names its holder by (1-64 of a-z 0-9 . _ -): it owns the experiments,
        /// workspaces and sessions the holder makes and spends the tenant's quotas.
        #[arg(long)]
        tenant: String,
        /// invoke, workspace or read (or jacobian:invoke …). Repeatable; at least one.
        #[arg(long = "scope", required = true)]
        scopes: Vec<String>,
        /// Lifetime: 30d, 12h, 90m or 3600s (default: until revoked).
        #[arg(long)]
        expires: Option<String>,
    },
    /// List tokens (JSON lines: id, tenant, scopes, times; never a secret).
    List,
    /// Revoke a token by id; every host refuses it from its next request.
    Revoke {
        /// The token's id (`jacobian tokens list`).
        id: String,
    },
}

/// Arguments of `jacobian checkers`.
#[derive(clap::Args)]
pub struct CheckersArgs {
    #[command(subcommand)]
    pub action: CheckerAction,
}

/// Arguments of `jacobian publishers`.
#[derive(clap::Args)]
pub struct PublishersArgs {
    #[command(subcommand)]
    pub action: PublisherAction,
}

#[derive(Subcommand)]
pub enum PublisherAction {
    /// List the trusted publishers and whether installs need a signature (JSON).
    List,
    /// Trust a publisher's minisign key under NAME (replacing NAME's key, if any).
    Trust {
        /// The name installs record and describe shows.
        name: String,
        /// Its minisign public key: the .pub file, or the key's base64 line.
        #[arg(long)]
        key: String,
    },
    /// Stop trusting a publisher (what it signed stays installed).
    Distrust {
        /// The publisher's name.
        name: String,
    },
    /// Whether every operator install needs a trusted publisher's signature.
    Require {
        /// on or off.
        #[arg(value_parser = ["on", "off"])]
        setting: String,
    },
}

/// What an offline re-check trusts beyond the archive itself.
#[derive(clap::Args)]
pub struct TrustArgs {
    /// Refuse the archive unless its pack_hash is this (sha256:<hex>).
    #[arg(long)]
    pub expect_pack_hash: Option<String>,
    /// Authorize a checker digest for a role during this re-check (ROLE=sha256:<hex>); otherwise only
    /// checkers bundled by this binary or by a release it knows (host/releases.toml) are. Repeatable.
    #[arg(long = "authorize", value_name = "ROLE=DIGEST")]
    pub authorize: Vec<String>,
}

impl TrustArgs {
    pub fn trust(&self) -> crate::cli::error::Result<jacobian::archive::Trust> {
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

/// A JSON request file: `FILE` or `--file FILE`, `-` for stdin.
#[derive(clap::Args)]
#[group(required = true, multiple = false)]
pub struct RequestFile {
    /// The JSON request file (`-` for stdin).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// The same, as a flag.
    #[arg(long = "file", value_name = "FILE")]
    flag: Option<PathBuf>,
}

impl RequestFile {
    pub fn path(&self) -> PathBuf {
        self.file.clone().or_else(|| self.flag.clone()).unwrap_or_default()
    }
}

#[derive(Subcommand)]
pub enum WorkspaceAction {
    /// workspace.open with the JSON request in FILE (`-` for stdin).
    Open(RequestFile),
    /// workspace.write with the JSON request in FILE (`-` for stdin).
    Write(RequestFile),
    /// workspace.query with the JSON request in FILE (`-` for stdin).
    Query(RequestFile),
    /// Draw a workspace: cards, dependency and assumption links, marks, stale cards (and attempts).
    Graph {
        /// Workspace id.
        id: String,
        /// dot, svg, or html (a self-contained page around the SVG, to open in a browser).
        #[arg(long, default_value = "svg", value_parser = ["dot", "svg", "html"])]
        format: String,
        /// Draw each attempt too, above the card it attempted (svg and html).
        #[arg(long)]
        attempts: bool,
        /// Draw the workspace at this revision (default: the head).
        #[arg(long)]
        revision: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum PolicyAction {
    /// Print the policy in force (TOML).
    Show,
    /// Validate FILE (TOML, `-` for stdin) and make it the policy; an invalid file changes nothing.
    Set {
        /// The policy file.
        file: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum CheckerAction {
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
    /// Recall a checker found unsound: revoke it, and read every verdict it gave as NOT_CONCLUDED
    /// with the reason (episodes, archives, offline verify); `jacobian recheck` judges them again.
    Recall {
        /// Component digest (sha256:<hex>).
        digest: Digest,
        /// Why: what it accepts that is false.
        #[arg(long)]
        reason: String,
    },
    /// Require K authorized checkers of a role (distinct digests and providers) to accept a
    /// certificate before it is VERIFIED; one rejection makes it REJECTED. K = 1 removes it.
    Quorum {
        /// Checker role (e.g. sat.certificate).
        role: String,
        /// How many must accept.
        #[arg(value_parser = clap::value_parser!(u32).range(1..=jacobian::policy::MAX_QUORUM as i64))]
        k: u32,
    },
}

/// Arguments of `jacobian recheck`.
#[derive(clap::Args)]
pub struct RecheckArgs {
    /// Only the verdicts of this recalled checker (sha256:<hex>); every recalled checker's otherwise.
    #[arg(long)]
    pub checker: Option<Digest>,
}

pub fn parse_mode(text: &str) -> Result<Mode, String> {
    match text.to_ascii_uppercase().as_str() {
        "EXPLORE" => Ok(Mode::Explore),
        "VERIFY" => Ok(Mode::Verify),
        other => Err(format!("mode must be EXPLORE or VERIFY, got {other}")),
    }
}
