//! Every run from start to end, for `run` and `ab`, on every placement:
//! [`start_run`] and [`resume_run`] hand the resolved run (or the stored
//! run named) to verdict-engine's `launch`, which measures it where its
//! placement says (this machine, ssh hosts, a VM verdict boots, an ssh
//! host verdict boots), and [`report`] prints how it ended, the one place
//! every placement's report is printed and the run's end mapped to an
//! exit code. Progress goes to stderr through [`Printed`].
//! Also `verdict run FILE --db URL --detach`: the run and its schedule,
//! nothing measured (`verdict work` measures it); prints the run id.

use crate::common::{DbArgs, capture_environment, hostname};
use crate::error::CliError;
use crate::progress::Progress;
use crate::run_report::{ReportOptionsArgs, print_run_report};
use std::path::Path;
use std::process::ExitCode;
use verdict_engine::commit::RunCommit;
use verdict_engine::launch::{LaunchProgress, Launched, Launcher, NewRun, Stop};
use verdict_engine::{CommandError, Observer, RunOutcome, StartOptions};
use verdict_exec::{AgentBinary, Cancel};
use verdict_model::{RunId, RunStatus};
use verdict_store::{Database, Store};

/// What a launch tells, on stderr: a run's progress (a bar or periodic
/// lines), each host's lines prefixed with the host, warnings and notes.
pub(crate) struct Printed;

impl LaunchProgress for Printed {
    fn run(&self, metric: &str) -> Box<dyn Observer> {
        Box::new(Progress::new(metric))
    }

    fn host(&self, host: &str) -> Box<dyn Observer + Send> {
        Box::new(crate::hosts::HostProgress::new(host))
    }

    fn warning(&self, message: &str) {
        eprintln!("verdict: warning: {message}");
    }

    fn note(&self, message: &str) {
        eprintln!("verdict: {message}");
    }
}

/// This binary as the agent of ssh hosts and VM guests.
fn agent() -> Result<AgentBinary, CommandError> {
    crate::target::own_identity()
}

/// Starts `run` where it measures, then prints its report.
pub(crate) fn start_run(
    store: &Database,
    run: NewRun,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    launch(store, db, report, cancel, |launcher| {
        verdict_engine::launch::start(launcher, run)
    })
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
    launch(store, db, report, cancel, |launcher| {
        verdict_engine::launch::resume(launcher, run)
    })
}

/// Runs `go` with this command's launcher (the store, printed progress,
/// this binary as the agent), then prints how the launch ended.
fn launch(
    store: &Database,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
    go: impl FnOnce(&Launcher<'_>) -> Result<Launched, CommandError>,
) -> Result<ExitCode, CliError> {
    let location = db.location();
    let launcher = Launcher {
        store,
        location: &location,
        cancel,
        progress: &Printed,
        agent: &agent,
    };
    let launched = go(&launcher)?;
    self::report(store, launched, db, report)
}

/// Prints how a launch ended and maps it to an exit code: a run's report,
/// a stopped booted run's report then why it stopped, a host group's
/// reports and combined lines.
fn report(
    store: &Database,
    launched: Launched,
    db: &DbArgs,
    report: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    match launched {
        Launched::Run(summary) => finish(store, &summary, db, report),
        Launched::Group(hosts) => crate::hosts::render(store, &hosts, report),
        Launched::Stopped { run, stop } => {
            // The report first: it shows the failed boot's console tail, or
            // the failed build and its log's end.
            print_run_report(store, run, report)?;
            match stop {
                Stop::Boot {
                    boot,
                    level_key,
                    message,
                } => eprintln!(
                    "verdict: run {run} stopped: boot {boot} ({level_key}) failed: {message} (on_boot_failure = \"stop\"; `verdict run --resume {run}` boots it again)"
                ),
                Stop::KernelBuild { levels, failure } => eprintln!(
                    "verdict: run {run} stopped before measuring: the kernel of {levels} was not built: {failure} (`verdict run --resume {run}` builds it again)"
                ),
            }
            Ok(ExitCode::from(verdict_model::ExitClass::Finding))
        }
    }
}

/// Print the report and map the run's end to an exit code.
fn finish(
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
