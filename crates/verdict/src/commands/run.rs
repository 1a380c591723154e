//! `verdict run EXPERIMENT.toml` and `verdict run --resume RUN_ID`: execute
//! an experiment through the engine, then print its report.

use crate::common::{
    DbArgs, cancel_on_interrupt, doctor_annotation, load_experiment, random_seed, tool_version,
};
use crate::error::CliError;
use crate::launch::{finish, start};
use crate::progress::Progress;
use crate::run_report::ReportOptionsArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use verdict_engine::StartOptions;
use verdict_model::{Experiment, RunId};
use verdict_store::Store;

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Experiment file (TOML).
    #[arg(required_unless_present = "resume")]
    pub(crate) experiment: Option<PathBuf>,
    /// Iterations per cell (overrides the file; the cap with --until-decided).
    #[arg(short = 'n', long = "iterations", value_name = "N")]
    pub(crate) iterations: Option<u32>,
    /// Sample adaptively until every comparison is decided (or the cap).
    #[arg(long)]
    pub(crate) until_decided: bool,
    /// Seed of the randomized order (default: drawn and recorded).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Continue an interrupted or killed run with the same schedule.
    #[arg(long, value_name = "RUN_ID", conflicts_with_all = ["experiment", "iterations", "until_decided", "seed", "doctor", "hosts"])]
    pub(crate) resume: Option<i64>,
    /// Measure the machine's noise first and store it with the run.
    #[arg(long)]
    pub(crate) doctor: bool,
    /// The commit this run measures (default: `git rev-parse HEAD` of the
    /// experiment file's repository, when it is in one); `verdict history`
    /// uses it.
    #[arg(long, value_name = "REV", conflicts_with = "resume")]
    pub(crate) commit: Option<String>,
    /// Create the run and its schedule without measuring, print its id and
    /// exit: `verdict work RUN` processes (on any machines) measure it.
    /// Needs a PostgreSQL store.
    #[arg(long, conflicts_with_all = ["resume", "doctor", "until_decided"])]
    pub(crate) detach: bool,
    #[command(flatten)]
    pub(crate) target: crate::common::TargetArgs,
    #[command(flatten)]
    pub(crate) db: DbArgs,
    #[command(flatten)]
    pub(crate) report: ReportOptionsArgs,
}

pub(crate) fn run(args: &RunArgs) -> Result<ExitCode, CliError> {
    let store = args.db.open()?;
    let cancel = cancel_on_interrupt();
    if args.target.remote() && args.doctor {
        return Err(CliError::input(
            "--doctor measures this machine; with --host run `verdict doctor` on each host instead",
        ));
    }
    if let Some(run) = args.resume
        && let Some(target) = store
            .annotations(RunId(run))
            .map_err(CliError::input)?
            .remove("target")
    {
        return crate::hosts::resume_group(
            &store,
            RunId(run),
            &target,
            &args.db,
            &args.report,
            cancel,
        );
    }
    let engine = crate::common::system_engine(&store, cancel.clone());
    let summary = match args.resume {
        Some(run) => {
            let record = store.run(RunId(run)).map_err(CliError::input)?;
            crate::common::refuse_if_still_running(&store, record.id, record.status)?;
            let experiment: Experiment =
                serde_json::from_str(&record.experiment_json).map_err(CliError::internal)?;
            experiment
                .check_shell_splices(&format!("run {run}"))
                .map_err(CliError::input)?;
            if experiment.runs_by_boot() {
                return crate::vm::resume_booted(
                    &store,
                    RunId(run),
                    &experiment,
                    &args.db,
                    &args.report,
                    cancel,
                );
            }
            let mut progress = Progress::new(&experiment.primary_metric().name);
            engine
                .resume(RunId(run), &mut progress)
                .map_err(CliError::input)?
        }
        None => {
            let path = args
                .experiment
                .as_ref()
                .expect("clap requires EXPERIMENT without --resume");
            let (mut experiment, text) =
                load_experiment(path, args.iterations, args.until_decided)?;
            // `--host` wins over the file's `[target] hosts`.
            let mut target = args.target.clone();
            if target.hosts.is_empty() {
                target.hosts = experiment.hosts.clone();
            }
            if let Some(build) = experiment.vm.as_ref().and_then(|vm| vm.build.as_ref())
                && build.tree.is_none()
            {
                return Err(CliError::input(format!(
                    "{}: `[target] vm.build` names no `tree` (only `verdict bisect` builds its --repo without one): add tree = \"/path/to/linux\" or a tarball",
                    path.display()
                )));
            }
            if experiment.vm.is_some() {
                if target.remote() || args.doctor {
                    return Err(CliError::input(format!(
                        "{}: `[target] vm` runs in a VM verdict boots; --host and --doctor do not apply",
                        path.display()
                    )));
                }
                // The controller's directories are not in the guest: only
                // an absolute workdir from the file is kept.
                experiment.workdir = Experiment::parse(&text, &path.display().to_string())
                    .map_err(CliError::input)?
                    .workdir
                    .filter(|directory| directory.is_absolute());
            }
            if target.remote() {
                if args.doctor {
                    return Err(CliError::input(
                        "--doctor measures this machine; with hosts run `verdict doctor` on each host instead",
                    ));
                }
                // Only an absolute workdir from the file means something on
                // another machine; otherwise the remote login directory.
                experiment.workdir = Experiment::parse(&text, &path.display().to_string())
                    .map_err(CliError::input)?
                    .workdir
                    .filter(|directory| directory.is_absolute());
            }
            if args.doctor {
                eprintln!("verdict: measuring this machine's noise first (verdict doctor --quick)");
            }
            let doctor = args.doctor.then(doctor_annotation);
            let seed = args
                .seed
                .or(experiment.sampling.seed)
                .unwrap_or_else(random_seed);
            let options = StartOptions {
                experiment,
                experiment_text: text,
                seed,
                kind: verdict_model::RunKind::Run,
                command_line: std::env::args().collect(),
                tool_version: tool_version(),
                bisect: None,
            };
            let commit = crate::common::experiment_commit(path, args.commit.as_deref())?;
            if args.detach {
                return crate::launch::detach(&store, &options, commit);
            }
            if options.experiment.runs_by_boot() {
                let code = crate::vm::start_booted(
                    &store,
                    &target,
                    &options,
                    &args.db,
                    &args.report,
                    cancel,
                )?;
                if let Some(latest) = store.latest_run().map_err(CliError::internal)? {
                    crate::common::record_commit(&store, latest.id, commit)?;
                }
                return Ok(code);
            }
            if target.remote() {
                return crate::hosts::start_on_hosts(
                    &target,
                    options,
                    &args.db,
                    &args.report,
                    cancel,
                );
            }
            let summary = start(&engine, &options, doctor)?;
            crate::common::record_commit(&store, summary.run, commit)?;
            summary
        }
    };
    finish(&store, &summary, &args.db, &args.report)
}
