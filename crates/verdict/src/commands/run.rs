//! `verdict run EXPERIMENT.toml` and `verdict run --resume RUN_ID`: execute
//! an experiment through the engine, then print its report.

use crate::commands::report::{ReportOptionsArgs, print_run_report};
use crate::common::{DbArgs, cancel_on_interrupt, tool_version};
use crate::error::CliError;
use crate::progress::Progress;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use verdict_engine::{Engine, RunSummary, StartOptions};
use verdict_model::{Experiment, RunId, RunStatus, SamplingMode};
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
    #[command(flatten)]
    pub(crate) target: crate::commands::hosts::TargetArgs,
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
        return crate::commands::hosts::resume_group(
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
            if record.status == RunStatus::Running
                && let Some(pid) = store
                    .annotations(record.id)
                    .map_err(CliError::internal)?
                    .get("process")
                    .and_then(|process| process["pid"].as_u64())
                && is_live_verdict(pid)
            {
                return Err(CliError::input(format!(
                    "run {run} is still being executed by verdict process {pid}; stop it first (kill -INT {pid}) or let it finish"
                )));
            }
            let experiment: Experiment =
                serde_json::from_str(&record.experiment_json).map_err(CliError::internal)?;
            experiment
                .check_shell_splices(&format!("run {run}"))
                .map_err(CliError::input)?;
            if experiment.vm.is_some() {
                return crate::commands::vm::resume_on_vm(
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
                kind: "run".to_string(),
                command_line: std::env::args().collect(),
                tool_version: tool_version(),
            };
            let commit = crate::commands::history::experiment_commit(path, args.commit.as_deref())?;
            if target.remote() {
                return crate::commands::hosts::start_on_hosts(
                    &target,
                    options,
                    &args.db,
                    &args.report,
                    cancel,
                );
            }
            if options.experiment.vm.is_some() {
                let code = crate::commands::vm::start_on_vm(
                    &store,
                    &options,
                    &args.db,
                    &args.report,
                    cancel,
                )?;
                if let Some(latest) = store.latest_run().map_err(CliError::internal)? {
                    crate::commands::history::record_commit(&store, latest.id, commit)?;
                }
                return Ok(code);
            }
            let summary = start(&engine, &options, doctor)?;
            crate::commands::history::record_commit(&store, summary.run, commit)?;
            summary
        }
    };
    finish(&store, &summary, &args.db, &args.report)
}

/// Start a run, attaching a doctor report when one was measured.
pub(crate) fn start(
    engine: &Engine<'_>,
    options: &StartOptions,
    doctor: Option<serde_json::Value>,
) -> Result<RunSummary, CliError> {
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

/// Whether `pid` is a live verdict process other than this one (a killed
/// run's process is gone, or its pid reused by something else).
pub(crate) fn is_live_verdict(pid: u64) -> bool {
    pid != u64::from(std::process::id())
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|name| name.trim() == "verdict")
}

/// Keep the running kernel's config (for `compare --config-diff`), when it
/// is readable: once per distinct config in the database, under the
/// SHA-256 the run's environment records.
pub(crate) fn store_kernel_config(
    store: &dyn Store,
    source: &crate::target::EnvironmentSource<'_>,
) {
    let release = source.release();
    if let Some(config) = source.kernel_config(release.as_deref()) {
        let sha256 = verdict_doctor::environment::config_sha256(&config.text);
        if let Err(error) = store.put_kernel_config(&sha256, &config.source, &config.text) {
            eprintln!("verdict: warning: could not store the kernel config: {error}");
        }
    }
}

/// Print the report and map the run's end to an exit code.
pub(crate) fn finish(
    store: &dyn Store,
    summary: &RunSummary,
    db: &DbArgs,
    report: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    let code = print_run_report(store, summary.run, report)?;
    if summary.status == RunStatus::Interrupted {
        let db_flag = if db.db == Path::new("verdict.db") {
            String::new()
        } else {
            format!(" --db {}", db.db.display())
        };
        return Err(CliError::Interrupted(format!(
            "run {} interrupted after {} recorded iterations; resume with: verdict run --resume {}{db_flag}",
            summary.run, summary.recorded, summary.run
        )));
    }
    Ok(code)
}

/// Load an experiment file and apply command-line overrides. Relative
/// `workdir` resolves against the file's directory, and an absent one is the
/// current directory, recorded as an absolute path so a resumed run works in
/// the same place.
pub(crate) fn load_experiment(
    path: &Path,
    iterations: Option<u32>,
    until_decided: bool,
) -> Result<(Experiment, String), CliError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        CliError::input(format!("read experiment file {}: {error}", path.display()))
    })?;
    let mut experiment =
        Experiment::parse(&text, &path.display().to_string()).map_err(CliError::input)?;
    let current = std::env::current_dir().map_err(CliError::internal)?;
    experiment.workdir = Some(match &experiment.workdir {
        Some(directory) if directory.is_absolute() => directory.clone(),
        Some(directory) => current
            .join(path.parent().unwrap_or(Path::new(".")))
            .join(directory),
        None => current,
    });
    if let Some(iterations) = iterations {
        if iterations == 0 {
            return Err(CliError::input("-n must be at least 1"));
        }
        match &mut experiment.sampling.mode {
            SamplingMode::Fixed => experiment.sampling.iterations = iterations,
            SamplingMode::Adaptive { min, max } => {
                *max = iterations;
                *min = (*min).min(iterations);
            }
        }
    }
    if until_decided && experiment.sampling.mode == SamplingMode::Fixed {
        let max = iterations.unwrap_or_else(|| experiment.sampling.iterations.max(50));
        experiment.sampling.mode = SamplingMode::Adaptive {
            min: 6.min(max),
            max,
        };
    }
    // Refused here, before any setup runs, with the file named.
    verdict_engine::check_design(&experiment)
        .map_err(|error| CliError::input(format!("{}: {error}", path.display())))?;
    Ok((experiment, text))
}

pub(crate) fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    hasher.finish() >> 12
}

/// A quick doctor measurement as stored with a run: the full report plus
/// its one-line summary for report headers.
pub(crate) fn doctor_annotation() -> serde_json::Value {
    let options = verdict_doctor::DoctorOptions {
        length: verdict_doctor::ProbeLength::Quick,
        ..verdict_doctor::DoctorOptions::default()
    };
    let report = verdict_doctor::run_doctor(&options);
    let summary = report.summary_line();
    eprintln!("verdict: noise: {summary}");
    serde_json::json!({ "summary": summary, "report": serde_json::to_value(&report).unwrap_or_default() })
}
