//! `verdict push RUN… --to URL` and `verdict pull RUN… --from URL`: copy
//! runs from the `--db` store to another store, or from another store into
//! `--db` (either may be a SQLite path or a PostgreSQL URL), idempotently
//! (verdict-store's `copy_run`). Prints one line per run; must not print
//! a URL's password.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::common::DbArgs;
use crate::error::CliError;
use verdict_model::RunId;
use verdict_store::{CopiedRun, Database, Location, StoreError, copy_run};

#[derive(Debug, clap::Args)]
pub(crate) struct PushArgs {
    /// Run ids in the `--db` store.
    #[arg(required = true, value_name = "RUN")]
    pub(crate) runs: Vec<i64>,
    /// The store to copy to: a SQLite path or a PostgreSQL URL (created or
    /// migrated as needed).
    #[arg(long, value_name = "PATH|URL")]
    pub(crate) to: PathBuf,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PullArgs {
    /// Run ids in the `--from` store.
    #[arg(required = true, value_name = "RUN")]
    pub(crate) runs: Vec<i64>,
    /// The store to copy from: a SQLite path or a PostgreSQL URL.
    #[arg(long, value_name = "PATH|URL")]
    pub(crate) from: PathBuf,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn push(args: &PushArgs) -> Result<ExitCode, CliError> {
    let source = args.db.open_existing()?;
    let target_location = Location::from(args.to.as_path());
    let target = Database::open(&target_location).map_err(CliError::input)?;
    copy(&source, &target, &args.runs, &target_location.redacted())
}

pub(crate) fn pull(args: &PullArgs) -> Result<ExitCode, CliError> {
    let source_location = Location::from(args.from.as_path());
    if let Location::Sqlite(path) = &source_location
        && !path.exists()
    {
        return Err(CliError::input(format!(
            "no database at {} to pull from",
            path.display()
        )));
    }
    let source = Database::open_existing(&source_location).map_err(CliError::input)?;
    let target = args.db.open()?;
    copy(&source, &target, &args.runs, &args.db.display())
}

fn copy(
    source: &Database,
    target: &Database,
    runs: &[i64],
    target_name: &str,
) -> Result<ExitCode, CliError> {
    for &run in runs {
        let copied = copy_run(source, target, RunId(run)).map_err(|error| match error {
            StoreError::UnknownRun { .. } => CliError::input(error),
            other => CliError::internal(other),
        })?;
        outln!("{}", describe(&copied, target_name));
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(copied: &CopiedRun, target_name: &str) -> String {
    format!(
        "run {} -> run {} in {target_name}: {} ({} samples copied, {} already there)",
        copied.source,
        copied.target,
        if copied.created { "new" } else { "known" },
        copied.samples_copied,
        copied.samples_present
    )
}
