//! The `jacobian` command line: argument types (`args.rs`), where the data
//! directory and the store are (`config.rs`), what commands share
//! (`support.rs`), and one module per group of commands (`commands/`).

pub mod args;
mod commands;
mod config;
pub mod error;
pub mod support;

use std::path::PathBuf;

use jacobian::store::StoreConfig;

use args::{Cli, Command};
use commands::{agent, bundles, offline, operator, scaffold, serve};
use config::{HostConfig, default_data_dir, store_config};
use error::CliError;
use support::print_envelope;

pub use config::init_logging;

/// Where a command works: the data directory and the store.
pub struct Place {
    pub data_dir: PathBuf,
    pub store: StoreConfig,
    /// The config file's `[auth]` (what `serve --http` accepts).
    pub auth: jacobian::auth::AuthConfig,
}

/// Run one command.
pub fn run(cli: Cli) -> crate::cli::error::Result<()> {
    let config = HostConfig::load(cli.config.as_deref())?;
    // Flags and environment variables, then the config file, then the defaults.
    let data_dir = match (cli.data_dir.clone(), std::env::var_os("JACOBIAN_DATA_DIR"), config.data_dir) {
        (Some(dir), _, _) => dir,
        (None, Some(dir), _) => dir.into(),
        (None, None, Some(dir)) => dir,
        (None, None, None) => default_data_dir(),
    };
    let store = store_config(cli.store.as_deref().or(config.store.as_deref()));
    let place = Place { data_dir, store, auth: config.auth };
    match cli.command {
        Command::Serve(args) => serve::serve(place, args),
        Command::Archive(args) => offline::archive(place, args),
        Command::Replay(args) => offline::replay(place, args),
        Command::Verify(args) => offline::verify(place, args),
        Command::Compare(args) => offline::compare(place, args),
        Command::Demo => agent::demo(cli.data_dir),
        Command::Catalog => agent::catalog(place),
        Command::Describe(args) => agent::describe(place, args),
        Command::Resource(args) => agent::resource(place, args),
        Command::Prompt(args) => agent::prompt(place, args),
        Command::Components => agent::components(place),
        Command::Invoke(args) => agent::invoke(place, args),
        Command::Workspace(args) => agent::workspace(place, args),
        Command::Artifact(args) => agent::artifact(place, args),
        Command::Install(args) => bundles::install(place, args),
        Command::Check(args) => bundles::check(place, args),
        Command::Push(args) => bundles::push(place, args),
        Command::New(args) => scaffold::new(args),
        Command::Migrate => operator::migrate(place),
        Command::Policy(args) => operator::policy(place, args),
        Command::Checkers(args) => operator::checkers(place, args),
        Command::Recheck(args) => operator::recheck(place, args),
        Command::Publishers(args) => operator::publishers(place, args),
        Command::Tokens(args) => operator::tokens(place, args),
    }
}

/// A command's exit status besides 0 (success), named; `jacobian --help`
/// lists them ([`args::EXIT_CODES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The command ran and its answer is no: a replay that differs, a
    /// verification not concluded `VERIFIED`, a bundle check not accepted.
    Negative = 1,
    /// Refused: an archive that is not a valid one, or an invocation
    /// answered with a diagnostic (printed on stdout).
    Refused = 2,
    /// Any other error: the JSON envelope on stderr names its `error_type`.
    Error = 3,
}

impl Exit {
    /// End the process with this status.
    pub fn exit(self) -> ! {
        std::process::exit(self as i32)
    }
}

/// Report a failed command: the error envelope on stderr, and the exit code
/// ([`Exit::Refused`] for an archive that is not one, [`Exit::Error`] for
/// any other error; [`Exit::Negative`] is an answer and is not reported here).
pub fn fail(error: CliError) -> ! {
    print_envelope(error.error_type(), jacobian::errors::render(&error));
    error.exit().exit()
}
