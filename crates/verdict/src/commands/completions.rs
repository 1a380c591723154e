//! `verdict completions SHELL`: prints the shell completion script clap
//! generates (clap_complete) for bash, zsh, fish, elvish or PowerShell.
//! Must not: write files or read the store.

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to print the completion script for.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// Prints the script for `command` (the whole verdict command line).
pub(crate) fn run(
    args: &CompletionsArgs,
    mut command: clap::Command,
) -> Result<ExitCode, CliError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "verdict", &mut script);
    let script = String::from_utf8(script)
        .map_err(|error| CliError::internal(format!("completion script: {error}")))?;
    out!("{script}");
    Ok(ExitCode::SUCCESS)
}
