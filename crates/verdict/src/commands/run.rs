//! `verdict run EXPERIMENT.toml` and `verdict run --resume RUN_ID`: the
//! arguments resolved into a new run (or the stored run named), handed to
//! the one launch path (`launch`), which prints the report.

use crate::common::{
    DbArgs, LoadedExperiment, cancel_on_interrupt, doctor_annotation, load_experiment, random_seed,
    tool_version,
};
use crate::error::CliError;
use crate::launch::{resume_run, start_run};
use crate::run_report::ReportOptionsArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use verdict_engine::StartOptions;
use verdict_engine::launch::NewRun;
use verdict_model::RunId;

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
    if let Some(run) = args.resume {
        return resume_run(&store, RunId(run), &args.db, &args.report, cancel);
    }
    let path = args
        .experiment
        .as_ref()
        .expect("clap requires EXPERIMENT without --resume");
    let mut loaded = load_experiment(path, args.iterations, args.until_decided)?;
    // `--host` wins over the file's `[target] hosts`.
    let mut target = args.target.clone();
    if target.hosts.is_empty() {
        target.hosts = loaded.experiment.target.hosts().to_vec();
    }
    if let Some(vm) = loaded.experiment.target.vm() {
        if vm.build.as_ref().is_some_and(|build| build.tree.is_none()) {
            return Err(CliError::input(format!(
                "{}: `[target] vm.build` names no `tree` (only `verdict bisect` builds its --repo without one): add tree = \"/path/to/linux\" or a tarball",
                path.display()
            )));
        }
        if target.remote() || args.doctor {
            return Err(CliError::input(format!(
                "{}: `[target] vm` runs in a VM verdict boots; --host and --doctor do not apply",
                path.display()
            )));
        }
        loaded.keep_only_absolute_workdir();
    }
    if target.remote() {
        if args.doctor {
            return Err(CliError::input(
                "--doctor measures this machine; with hosts run `verdict doctor` on each host instead",
            ));
        }
        loaded.keep_only_absolute_workdir();
    }
    if args.doctor {
        eprintln!("verdict: measuring this machine's noise first (verdict doctor --quick)");
    }
    let doctor = args.doctor.then(doctor_annotation);
    let LoadedExperiment {
        experiment, text, ..
    } = loaded;
    let seed = args
        .seed
        .or(experiment.sampling.seed)
        .unwrap_or_else(random_seed);
    let placement = experiment.target.placement(&target.hosts);
    let options = StartOptions {
        experiment,
        experiment_text: text,
        seed,
        kind: verdict_model::RunKind::Run,
        command_line: std::env::args().collect(),
        tool_version: tool_version(),
        bisect: None,
        placement,
    };
    let commit = crate::common::experiment_commit(path, args.commit.as_deref())?;
    if args.detach {
        return crate::launch::detach(&store, &options, commit);
    }
    let run = NewRun {
        options,
        hosts: target.settings(),
        doctor,
        commit,
    };
    start_run(&store, run, &args.db, &args.report, cancel)
}
