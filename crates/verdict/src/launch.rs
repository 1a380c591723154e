//! Every run from start to end, for `run` and `ab`, on every placement:
//! [`start_run`] resolves where a new run measures once (this machine, ssh
//! hosts, a VM verdict boots, an ssh host verdict boots) and hands it to
//! that placement's launcher; [`resume_run`] does the same for a stored
//! run. A run on this machine is started through the engine here (storing
//! the kernel config and the doctor report with it); every launcher ends
//! by printing the report and mapping how the run ended to an exit code.
//! Also `verdict run FILE --db URL --detach`: the run and its schedule,
//! nothing measured (`verdict work` measures it); prints the run id.

use crate::common::{DbArgs, TargetArgs, capture_environment, hostname, store_kernel_config};
use crate::error::CliError;
use crate::progress::Progress;
use crate::run_report::{ReportOptionsArgs, print_run_report};
use crate::target::EnvironmentSource;
use std::path::Path;
use std::process::ExitCode;
use verdict_engine::commit::RunCommit;
use verdict_engine::{Engine, RunOutcome, StartOptions};
use verdict_exec::Cancel;
use verdict_model::{Experiment, Placement, RunId, RunStatus, TargetSpec};
use verdict_store::{Database, Store};

/// A new run as the command line resolved it.
pub(crate) struct NewRun<'a> {
    pub(crate) options: StartOptions,
    /// `--host` (or the file's `[target] hosts`), `--ssh-config` and the
    /// reconnect timeout.
    pub(crate) target: &'a TargetArgs,
    /// The quick doctor measurement to store with a run on this machine.
    pub(crate) doctor: Option<serde_json::Value>,
    /// The commit the run measures (`verdict history`).
    pub(crate) commit: Option<RunCommit>,
}

/// Starts `run` where it measures, then prints its report.
pub(crate) fn start_run(
    store: &Database,
    run: NewRun<'_>,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let NewRun {
        options,
        target,
        doctor,
        commit,
    } = run;
    let booted = match (&options.experiment.target, options.placement) {
        (TargetSpec::Vm(vm), _) => crate::vm::start_vm(store, vm, &options, db, report, cancel)?,
        (TargetSpec::BootedHost { boot, .. }, _) => {
            crate::vm::start_on_host(store, target, boot, &options, db, report, cancel)?
        }
        (_, Placement::Hosts) => {
            return crate::hosts::start_on_hosts(target, options, db, report, cancel);
        }
        (_, _) => {
            let engine = crate::common::system_engine(store, cancel);
            let summary = start_on(
                &engine,
                &options,
                crate::common::local_environment(),
                doctor,
            )?;
            crate::common::record_commit(store, summary.run, commit)?;
            return finish(store, &summary, db, report);
        }
    };
    // A booted run ends inside its launcher (a failed boot still has a
    // report); the commit goes with the run it created.
    if let Some(latest) = store.latest_run().map_err(CliError::internal)? {
        crate::common::record_commit(store, latest.id, commit)?;
    }
    Ok(booted)
}

/// Continues stored run `run` where it measured (its host group, the
/// target its experiment boots, or this machine), then prints its report.
pub(crate) fn resume_run(
    store: &Database,
    run: RunId,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    if let Some(group) = store
        .annotations(run)
        .map_err(CliError::input)?
        .remove("target")
    {
        return crate::hosts::resume_group(store, run, &group, db, report, cancel);
    }
    let record = store.run(run).map_err(CliError::input)?;
    crate::common::refuse_if_still_running(store, record.id, record.status)?;
    let experiment: Experiment =
        serde_json::from_str(&record.experiment_json).map_err(CliError::internal)?;
    experiment
        .check_shell_splices(&format!("run {run}"))
        .map_err(CliError::input)?;
    match &experiment.target {
        TargetSpec::Vm(vm) => {
            let booter = Box::new(crate::vm::booter(vm)?);
            crate::vm::resume_booted(store, run, &experiment, booter, db, report, cancel)
        }
        TargetSpec::BootedHost { boot, .. } => {
            let booter = Box::new(crate::vm::stored_host_booter(store, run, boot)?);
            crate::vm::resume_booted(store, run, &experiment, booter, db, report, cancel)
        }
        TargetSpec::Local | TargetSpec::Hosts(_) => {
            let engine = crate::common::system_engine(store, cancel);
            let mut progress = Progress::new(&experiment.primary_metric().name);
            let summary = engine.resume(run, &mut progress).map_err(CliError::input)?;
            finish(store, &summary, db, report)
        }
    }
}

/// Starts a run on the one machine of `engine` (this machine, or the host
/// `verdict check --host` measures on), whose environment `source` reads:
/// stores that machine's kernel config, and the doctor report when one
/// was measured.
pub(crate) fn start_on(
    engine: &Engine<'_>,
    options: &StartOptions,
    source: &EnvironmentSource<'_>,
    doctor: Option<serde_json::Value>,
) -> Result<RunOutcome, CliError> {
    let mut progress = Progress::new(&options.experiment.primary_metric().name);
    let summary = engine
        .start(options, &mut progress)
        .map_err(CliError::input)?;
    store_kernel_config(engine.store, source);
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
    commit: Option<RunCommit>,
) -> Result<ExitCode, CliError> {
    let work = store.work_store().map_err(CliError::input)?;
    let run = verdict_engine::detach(work, options, &hostname(), capture_environment())
        .map_err(CliError::input)?;
    crate::common::record_commit(store, run, commit)?;
    outln!("{run}");
    Ok(ExitCode::SUCCESS)
}
