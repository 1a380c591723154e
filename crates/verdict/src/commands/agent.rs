//! `verdict agent` (hidden): the far side of an ssh target. Serves the JSON
//! lines of `verdict_exec::agent` on stdin/stdout until stdin ends, timing
//! every run with the local executor. `--identity` prints which build this
//! is, so a controller can tell a stale copy from its own. Must not print
//! anything else on stdout.

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct AgentArgs {
    /// Print this build's identity (version and executable hash) and exit.
    #[arg(long)]
    pub(crate) identity: bool,
}

pub(crate) fn run(args: &AgentArgs) -> Result<ExitCode, CliError> {
    if args.identity {
        outln!("{}", crate::target::own_identity()?.identity);
        return Ok(ExitCode::SUCCESS);
    }
    let stdin = std::io::BufReader::new(std::io::stdin());
    let stdout = std::io::stdout().lock();
    verdict_exec::agent::serve(stdin, stdout, env!("CARGO_PKG_VERSION"))
        .map_err(|error| CliError::internal(format!("agent: {error}")))?;
    Ok(ExitCode::SUCCESS)
}
