//! The `jacobian` binary: parse the command line, run the command, report
//! a failure as the error envelope (see `cli/`).

mod cli;

use clap::Parser as _;
use jacobian::contract::ErrorType;

fn main() {
    let args = match cli::args::Cli::try_parse() {
        Ok(args) => args,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // clap's whole message (the missing arguments' names, the usage), uncoloured.
            let message = e.render().to_string();
            let message = message.trim().strip_prefix("error: ").unwrap_or(message.trim()).to_owned();
            cli::support::print_envelope(ErrorType::ValidationError, message);
            cli::Exit::Error.exit();
        }
    };
    cli::init_logging(args.log_json);
    if let Err(error) = cli::run(args) {
        cli::fail(error);
    }
}

/// mimalloc: a fifth of the server's time went to glibc's malloc and free
/// (see docs/decisions/0014-mimalloc-for-the-server.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
