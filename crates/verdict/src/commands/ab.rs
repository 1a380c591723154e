//! `verdict ab` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct AbArgs {}

pub(crate) fn run(_args: &AbArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict ab` is not built yet"))
}
