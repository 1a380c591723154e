//! `verdict plan` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct PlanArgs {}

pub(crate) fn run(_args: &PlanArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict plan` is not built yet"))
}
