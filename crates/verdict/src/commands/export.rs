//! `verdict export [RUN] [--format csv|json] [-o FILE]`: every raw sample of
//! a stored run (its cell with every factor's level, block, order, start
//! time, wall/user/sys/max RSS, exit status, failure, every metric) and the
//! run's environment, as RFC 4180 CSV or `verdict.export/v1` JSON, so
//! nobody needs sqlite3 to get at the data. Reads through the read-only
//! store as a stream (verdict-engine `export`), renders each sample with
//! verdict-report `export` and writes it at once, to stdout or a file:
//! memory does not grow with the run. Must not compute statistics or
//! change what it exports.

use std::io::Write;
use std::ops::ControlFlow;
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
    match &args.output {
        Some(path) => write_output(path, &args.db.db, &mut |file| {
            write_export(&store, run, &export, args.format, file)
        })?,
        None => {
            let mut stdout = crate::output::writer();
            write_export(&store, run, &export, args.format, &mut stdout)
                .and_then(|()| stdout.flush().map_err(CliError::internal))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `export` in `format` to `output`, one sample at a time as the
/// store streams them; stops early when standard output's reader is gone.
fn write_export(
    store: &dyn verdict_store::Store,
    run: verdict_model::RunId,
    export: &verdict_report::export::RunExport,
    format: ExportFormat,
    output: &mut dyn Write,
) -> Result<(), CliError> {
    let mut failure = None;
    let mut write = |text: &str| -> ControlFlow<()> {
        match output.write_all(text.as_bytes()) {
            Ok(()) if crate::output::closed() => ControlFlow::Break(()),
            Ok(()) => ControlFlow::Continue(()),
            Err(error) => {
                failure = Some(error);
                ControlFlow::Break(())
            }
        }
    };
    match format {
        ExportFormat::Csv => {
            let csv = verdict_report::export::Csv::new(export);
            if write(&csv.header()).is_continue() {
                verdict_engine::export::each_sample(store, run, &mut |sample, iteration, host| {
                    write(&csv.row(sample, iteration, host))
                })?;
            }
        }
        ExportFormat::Json => {
            let mut json = verdict_report::export::Json::new(export);
            if write(&json.head()).is_continue() {
                verdict_engine::export::each_sample(store, run, &mut |sample, iteration, host| {
                    write(&json.sample(sample, iteration, host))
                })?;
                let _ = write(json.end());
            }
        }
    }
    match failure {
        Some(error) => Err(CliError::input(format!("write the export: {error}"))),
        None => Ok(()),
    }
}

/// Writes the export to `path` (with `fill`) through a temporary file
/// beside it renamed into place, so a failed write leaves an existing file
/// as it was; refuses the database itself (and its `-wal`/`-shm`).
fn write_output(
    path: &Path,
    database: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> Result<(), CliError>,
) -> Result<(), CliError> {
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
    let written = std::fs::File::create(&temporary)
        .map_err(error)
        .and_then(|file| {
            let mut file = std::io::BufWriter::new(file);
            fill(&mut file)?;
            file.into_inner()
                .map_err(|failure| error(failure.into_error()))?
                .sync_all()
                .map_err(error)
        })
        .and_then(|()| std::fs::rename(&temporary, path).map_err(error));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}
