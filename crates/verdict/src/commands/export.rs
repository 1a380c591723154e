//! `verdict export [RUN] [--format csv|json] [-o FILE]`: every raw sample of
//! a stored run (its cell with every factor's level, block, order, start
//! time, wall/user/sys/max RSS, exit status, failure, every metric) and the
//! run's environment, as RFC 4180 CSV or `verdict.export/v1` JSON, so
//! nobody needs sqlite3 to get at the data. Reads through the read-only
//! store (verdict-engine `export`), renders with verdict-report `export`
//! and writes the file; must not compute statistics or change what it
//! exports.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::common::DbArgs;
use crate::error::CliError;

/// `--format` of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ExportFormat {
    Csv,
    Json,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// Run id (default: the latest run).
    pub(crate) run: Option<i64>,
    /// csv (one row per sample) or json (`verdict.export/v1`).
    #[arg(long, value_enum, default_value = "csv")]
    pub(crate) format: ExportFormat,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &ExportArgs) -> Result<ExitCode, CliError> {
    let store = args.db.open_read_only()?;
    let run = args.db.run_or_latest(&store, args.run)?;
    let export = verdict_engine::export::load(&store, run)?;
    let text = if args.format == ExportFormat::Json {
        serde_json::to_string_pretty(&verdict_report::export::json(&export))
            .map_err(CliError::internal)?
            + "\n"
    } else {
        verdict_report::export::csv(&export)
    };
    match &args.output {
        Some(path) => write_output(path, &args.db.db, &text)?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the export to `path` through a temporary file beside it renamed
/// into place, so a failed write leaves an existing file as it was; refuses
/// the database itself (and its `-wal`/`-shm`).
fn write_output(path: &Path, database: &Path, text: &str) -> Result<(), CliError> {
    let same = |candidate: &Path| match (
        std::fs::canonicalize(path),
        std::fs::canonicalize(candidate),
    ) {
        (Ok(output), Ok(existing)) => output == existing,
        _ => false,
    };
    let mut sidecars = Vec::new();
    for suffix in ["-wal", "-shm"] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        sidecars.push(PathBuf::from(name));
    }
    if same(database) || sidecars.iter().any(|sidecar| same(sidecar)) {
        return Err(CliError::input(format!(
            "-o {}: that is the database (or its log); choose another file",
            path.display()
        )));
    }
    let error = |error: std::io::Error| {
        CliError::input(format!("write the export to {}: {error}", path.display()))
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".tmp-{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|failure| {
            let _ = std::fs::remove_file(&temporary);
            error(failure)
        })
}
