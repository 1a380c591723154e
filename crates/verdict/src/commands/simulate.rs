//! `verdict simulate` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct SimulateArgs {}

pub(crate) fn run(_args: &SimulateArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict simulate` is not built yet"))
}
