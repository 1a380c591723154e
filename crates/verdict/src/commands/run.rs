//! `verdict run` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {}

pub(crate) fn run(_args: &RunArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict run` is not built yet"))
}
