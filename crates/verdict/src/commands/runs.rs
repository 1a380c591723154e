//! `verdict runs` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct RunsArgs {}

pub(crate) fn run(_args: &RunsArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict runs` is not built yet"))
}
