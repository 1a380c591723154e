//! A run on this machine from start to end, shared by `run` and `ab` (and
//! the VM launcher's end): start it through the engine (storing the
//! kernel config and the doctor report with it), then print its report
//! and map how it ended to an exit code. Also `verdict run FILE --db URL
//! --detach`: the run and its schedule, nothing measured (`verdict work`
//! measures it); prints the run id.

use crate::common::{DbArgs, capture_environment, hostname, store_kernel_config};
use crate::error::CliError;
use crate::progress::Progress;
use crate::run_report::{ReportOptionsArgs, print_run_report};
use std::path::Path;
use std::process::ExitCode;
use verdict_engine::{Engine, RunOutcome, StartOptions};
use verdict_model::RunStatus;
use verdict_store::{Database, Store};

/// Start a run, attaching a doctor report when one was measured.
pub(crate) fn start(
    engine: &Engine<'_>,
    options: &StartOptions,
    doctor: Option<serde_json::Value>,
) -> Result<RunOutcome, CliError> {
    let mut progress = Progress::new(&options.experiment.primary_metric().name);
    let summary = engine
        .start(options, &mut progress)
        .map_err(CliError::input)?;
    store_kernel_config(engine.store, crate::common::local_environment());
    if let Some(doctor) = doctor {
        engine
            .store
            .put_annotation(summary.run, "doctor", &doctor)
            .map_err(CliError::internal)?;
    }
    Ok(summary)
}

/// Print the report and map the run's end to an exit code.
pub(crate) fn finish(
    store: &dyn Store,
    summary: &RunOutcome,
    db: &DbArgs,
    report: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    let code = print_run_report(store, summary.run, report)?;
    if summary.status == RunStatus::Interrupted {
        let db_flag = if db.db == Path::new("verdict.db") {
            String::new()
        } else {
            format!(" --db {}", db.display())
        };
        return Err(CliError::Interrupted(format!(
            "run {} interrupted after {} recorded iterations; resume with: verdict run --resume {}{db_flag}",
            summary.run, summary.recorded, summary.run
        )));
    }
    Ok(code)
}

/// Creates the run and its blocks without measuring; prints its id.
pub(crate) fn detach(
    store: &Database,
    options: &StartOptions,
    commit: Option<verdict_engine::commit::RunCommit>,
) -> Result<ExitCode, CliError> {
    let work = store.work_store().map_err(CliError::input)?;
    let run = verdict_engine::detach(work, options, &hostname(), capture_environment())
        .map_err(CliError::input)?;
    crate::common::record_commit(store, run, commit)?;
    outln!("{run}");
    Ok(ExitCode::SUCCESS)
}
