//! `verdict compare` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {}

pub(crate) fn run(_args: &CompareArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict compare` is not built yet"))
}
