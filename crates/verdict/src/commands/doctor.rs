//! `verdict doctor` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {}

pub(crate) fn run(_args: &DoctorArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict doctor` is not built yet"))
}
