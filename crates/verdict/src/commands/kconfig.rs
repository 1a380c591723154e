//! `verdict kconfig` (not yet built).

use crate::error::CliError;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct KconfigArgs {}

pub(crate) fn run(_args: &KconfigArgs) -> Result<ExitCode, CliError> {
    Err(CliError::input("`verdict kconfig` is not built yet"))
}
