//! `verdict check` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {}

pub(crate) fn run(_args: &CheckArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict check` is not built yet"))
}
