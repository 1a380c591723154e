//! `verdict report` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {}

pub(crate) fn run(_args: &ReportArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict report` is not built yet"))
}
