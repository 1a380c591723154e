//! `verdict bisect` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct BisectArgs {}

pub(crate) fn run(_args: &BisectArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict bisect` is not built yet"))
}
