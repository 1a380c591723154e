//! `verdict bisect`: find the commit that changed performance, with
//! statistics at every step. The pure state machine (verdict-bisect) says
//! what to measure next; this command checks the commit out, builds and
//! installs it, runs the experiment through the engine (every sample stored
//! as a run of kind `bisect`), records the values as a bisection event, and
//! feeds them back. Resume replays the stored events; a measurement cut off
//! by a kill is resumed from its stored samples, so none is lost or
//! duplicated. With `--host` each commit is still built here and its build
//! output measured on that host (`remote_build`).

use crate::commands::remote_build::{RemoteBuild, RemoteBuildArgs, RemoteMachine};
use crate::commands::run::{load_experiment, random_seed};
use crate::common::{DbArgs, cancel_on_interrupt, format_time, parse_format, tool_version};
use crate::error::CliError;
use crate::progress::Progress;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};
use verdict_bisect::{Action, Bisection, Class, CommitId, Config, Culprit, Event, Git, Vcs};
use verdict_engine::StartOptions;
use verdict_exec::{Cancel, Executor, Invocation, Program, Status, SystemExecutor};
use verdict_model::{Experiment, RunStatus, SamplingMode};
use verdict_report::Format;
use verdict_report::table::Table;
use verdict_store::{BisectId, Database, NewBisect, Store};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct BisectArgs {
    #[command(subcommand)]
    pub(crate) action: Option<BisectAction>,
    #[command(flatten)]
    pub(crate) start: BisectStart,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum BisectAction {
    /// Print the evidence of a bisection: commit, subject, n, median [interval], class, decision.
    Log {
        /// Bisection id (default: the latest).
        id: Option<i64>,
        /// text, json (`verdict.bisect-log/v1`) or html (one self-contained page).
        #[arg(long, default_value = "text")]
        format: String,
        /// Write the log to FILE instead of standard output (html).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        db: DbArgs,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct BisectStart {
    /// The git repository.
    #[arg(long, value_name = "PATH", required_unless_present = "resume")]
    pub(crate) repo: Option<PathBuf>,
    /// A revision with the old performance.
    #[arg(long, value_name = "REV", required_unless_present = "resume")]
    pub(crate) good: Option<String>,
    /// A revision with the new performance.
    #[arg(long, value_name = "REV", required_unless_present = "resume")]
    pub(crate) bad: Option<String>,
    /// The experiment measured at every commit (one cell: no factors).
    #[arg(long, value_name = "FILE", required_unless_present = "resume")]
    pub(crate) experiment: Option<PathBuf>,
    /// Build command, run with /bin/sh in the repository; exit 125 or any failure skips the commit.
    #[arg(long, value_name = "CMD")]
    pub(crate) build: Option<String>,
    /// Install command, run after a successful build; a failure skips the commit.
    #[arg(long, value_name = "CMD")]
    pub(crate) install: Option<String>,
    /// Follow only the first parent of merges.
    #[arg(long)]
    pub(crate) first_parent: bool,
    /// Check each measured commit out into its own git worktree (under the system temporary
    /// directory), build it there once, and measure it there: the endpoints and the candidate then
    /// run back to back with no checkout or build between runs, which keeps the runs they are
    /// compared with close in time. For programs that build and run from their tree; not for
    /// kernels or anything `--install` puts in one system-wide place.
    #[arg(long)]
    pub(crate) worktrees: bool,
    /// Runs of each commit per block: the good endpoint, the candidate and the bad endpoint are
    /// measured in turns of this many runs and compared block by block, so that machine load that
    /// changes slower than a block cancels. Raise when checkouts or builds are expensive.
    #[arg(long, default_value_t = 2)]
    pub(crate) batch: usize,
    /// Runs of a commit after which it is retested later or skipped.
    #[arg(long, default_value_t = 150)]
    pub(crate) max_runs_per_step: usize,
    /// Runs of each endpoint after which the bisection gives up telling them apart
    /// [default: 200, or twice --max-runs-per-step when that is more].
    #[arg(long, value_name = "N")]
    pub(crate) endpoint_max_runs: Option<usize>,
    /// Baseline without statistics, for comparison: N runs per endpoint and per commit, each commit
    /// called like the endpoint whose median is nearer.
    #[arg(long, value_name = "N")]
    pub(crate) fixed_runs: Option<usize>,
    /// Bound on the probability of misclassifying one commit.
    #[arg(long, default_value_t = 0.005)]
    pub(crate) step_error: f64,
    /// Continue a bisection stopped by Ctrl-C, a kill or a reboot (default: the latest).
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "0")]
    pub(crate) resume: Option<i64>,
    #[command(flatten)]
    pub(crate) remote: RemoteBuildArgs,
}

/// What a bisection needs to continue, stored as its config.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    repo: PathBuf,
    good: CommitId,
    bad: CommitId,
    candidates: Vec<CommitId>,
    first_parent: bool,
    build: Option<String>,
    install: Option<String>,
    config: Config,
    experiment_path: String,
    seed: u64,
    /// One worktree per commit (`--worktrees`); absent in bisections
    /// stored before the option existed.
    #[serde(default)]
    worktrees: bool,
    /// Build here, measure on a host (`--host`); absent: measured here.
    #[serde(default)]
    remote: Option<RemoteBuild>,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64)
}

pub(crate) fn run(args: &BisectArgs) -> Result<ExitCode, CliError> {
    if let Some(BisectAction::Log {
        id,
        format,
        output,
        db,
    }) = &args.action
    {
        return log(db, *id, format, output.as_deref());
    }
    let store = args.db.open()?;
    let (id, stored, experiment) = match args.start.resume {
        Some(requested) => {
            let record = if requested == 0 {
                store
                    .latest_bisect()
                    .map_err(CliError::internal)?
                    .ok_or_else(|| CliError::input("no bisection to resume"))?
            } else {
                store.bisect(BisectId(requested)).map_err(CliError::input)?
            };
            let stored: Stored =
                serde_json::from_value(record.config.clone()).map_err(CliError::internal)?;
            let experiment = Experiment::parse(&record.experiment_text, &stored.experiment_path)
                .map_err(CliError::input)?;
            eprintln!(
                "verdict: resuming bisection {} of {}",
                record.id.0,
                stored.repo.display()
            );
            let experiment = with_workdir(experiment, &stored.repo);
            (record.id, stored, experiment)
        }
        None => start_new(&store, &args.start)?,
    };
    drive(&store, id, &stored, &experiment)
}

fn with_workdir(mut experiment: Experiment, repo: &std::path::Path) -> Experiment {
    if experiment.workdir.is_none() {
        experiment.workdir = Some(repo.to_path_buf());
    }
    experiment
}

fn start_new(
    store: &Database,
    start: &BisectStart,
) -> Result<(BisectId, Stored, Experiment), CliError> {
    let repo = start.repo.clone().expect("clap requires --repo");
    let repo = repo
        .canonicalize()
        .map_err(|error| CliError::input(format!("repository {}: {error}", repo.display())))?;
    let path = start
        .experiment
        .clone()
        .expect("clap requires --experiment");
    let (experiment, text) = load_experiment(&path, None, false)?;
    if experiment.cells().len() != 1 {
        return Err(CliError::input(format!(
            "{}: bisection measures one workload per commit; the experiment has {} cells (remove its factors or pin them to one level)",
            path.display(),
            experiment.cells().len()
        )));
    }
    let git = Git::new(&repo);
    let good = git
        .resolve(start.good.as_deref().expect("clap requires --good"))
        .map_err(CliError::input)?;
    let bad = git
        .resolve(start.bad.as_deref().expect("clap requires --bad"))
        .map_err(CliError::input)?;
    let candidates: Vec<CommitId> = git
        .candidates(&good, &bad, start.first_parent)
        .map_err(CliError::input)?
        .into_iter()
        .map(|commit| commit.id)
        .collect();
    let config = Config {
        max_batch: start.batch.max(1),
        max_runs_per_step: start.max_runs_per_step,
        // Telling the endpoints apart is the same test as classifying a
        // commit (same shift, same noise), so it gets at least as many runs
        // as a commit's two rounds.
        endpoint_max_runs: start.endpoint_max_runs.unwrap_or_else(|| {
            Config::default()
                .endpoint_max_runs
                .max(2 * start.max_runs_per_step)
        }),
        step_error: start.step_error,
        fixed_runs: start.fixed_runs,
        ..Config::default()
    };
    config.validate().map_err(CliError::input)?;
    // A relative workdir resolves against the repository, where each commit is checked out.
    let experiment = match &experiment.workdir {
        Some(directory) if directory == &std::env::current_dir().unwrap_or_default() => {
            let mut experiment = experiment;
            experiment.workdir = Some(repo.clone());
            experiment
        }
        _ => experiment,
    };
    let remote = RemoteBuild::from_args(&start.remote, &experiment, &repo)?;
    let stored = Stored {
        repo: repo.clone(),
        good,
        bad,
        candidates,
        first_parent: start.first_parent,
        build: start.build.clone(),
        install: start.install.clone(),
        config,
        experiment_path: path.display().to_string(),
        seed: random_seed(),
        worktrees: start.worktrees,
        remote,
    };
    let id = store
        .create_bisect(&NewBisect {
            repo: repo.display().to_string(),
            good: stored.good.to_string(),
            bad: stored.bad.to_string(),
            experiment_text: text,
            config: serde_json::to_value(&stored).map_err(CliError::internal)?,
            started_at_ms: now_ms(),
        })
        .map_err(CliError::internal)?;
    eprintln!(
        "verdict: bisection {}: {} commits between {} and {}",
        id.0,
        stored.candidates.len(),
        stored.good.short(),
        stored.bad.short()
    );
    Ok((id, stored, experiment))
}

fn events(store: &dyn Store, id: BisectId) -> Result<Vec<Event>, CliError> {
    store
        .bisect_events(id)
        .map_err(CliError::internal)?
        .into_iter()
        .map(|(_, value)| serde_json::from_value(value).map_err(CliError::internal))
        .collect()
}

fn drive(
    store: &Database,
    id: BisectId,
    stored: &Stored,
    experiment: &Experiment,
) -> Result<ExitCode, CliError> {
    let git = Git::new(&stored.repo);
    let original = git.head().map_err(CliError::input)?;
    let cancel = cancel_on_interrupt();
    let recorded = events(store, id)?;
    let mut sequence = recorded.len() as u32;
    let mut bisection = Bisection::replay(
        stored.config.clone(),
        stored.good.clone(),
        stored.candidates.clone(),
        &recorded,
    )
    .map_err(CliError::internal)?;
    // A kill between a measurement's end and its event: the run is
    // complete in the store but its values are not in the bisection yet.
    let runs = bisection_runs(store, id)?;
    if let Some(event) = orphan_measurement(store, id, stored, experiment, &bisection, &runs)? {
        record_event(store, id, &mut sequence, &mut bisection, &event)?;
    }
    let worktree_base = worktree_base(store, id);
    let remote = match &stored.remote {
        Some(remote) => {
            let label = worktree_base
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("verdict-bisect-{}", id.0));
            Some(remote.connect(&label)?)
        }
        None => None,
    };
    let environment = match &remote {
        Some(remote) => remote.environment(),
        None => crate::common::capture_environment(),
    };
    let mut session = Session {
        store,
        id,
        stored,
        experiment,
        git: &git,
        cancel: &cancel,
        checked_out: None,
        worktrees: Vec::new(),
        worktree_base,
        // Only the first measurement after a resume can have been cut off.
        unfinished: unfinished_run(&runs),
        environment,
        remote,
    };
    let result = loop {
        if cancel.is_cancelled() {
            break Err(interrupted(id));
        }
        match bisection.next_action() {
            Action::Measure { commit, runs } => {
                let event = match session.measure(&commit, runs) {
                    Ok(Some(event)) => event,
                    Ok(None) => continue,
                    Err(error) => break Err(error),
                };
                record_event(store, id, &mut sequence, &mut bisection, &event)?;
            }
            Action::Done(outcome) => {
                let subject = |commit: &CommitId| git.subject(commit).unwrap_or_default();
                let result = serde_json::to_value(&outcome).map_err(CliError::internal)?;
                store
                    .finish_bisect(id, RunStatus::Complete, now_ms(), &result)
                    .map_err(CliError::internal)?;
                print!("{}", summary(&bisection, &outcome, stored, &subject));
                break Ok(ExitCode::SUCCESS);
            }
            Action::Abort { reason } => {
                let result = serde_json::to_value(&reason).map_err(CliError::internal)?;
                store
                    .finish_bisect(id, RunStatus::Failed, now_ms(), &result)
                    .map_err(CliError::internal)?;
                break Err(CliError::input(format!(
                    "bisection {} aborted: {}",
                    id.0,
                    abort_text(&reason)
                )));
            }
        }
    };
    session.remove_worktrees();
    if let Some(remote) = &session.remote {
        remote.remove_all();
    }
    if let Err(error) = git.restore(&original) {
        eprintln!("verdict: warning: could not restore the repository's HEAD: {error}");
    }
    result
}

fn abort_text(reason: &verdict_bisect::AbortReason) -> String {
    match reason {
        verdict_bisect::AbortReason::EndpointsIndistinguishable {
            shift,
            good_runs,
            bad_runs,
        } => {
            let interval = shift
                .and_then(|shift| {
                    shift.interval.map(|interval| {
                        format!(
                            "{:+.1}% [{:+.1}%, {:+.1}%]",
                            shift.estimate * 100.0,
                            interval.low * 100.0,
                            interval.high * 100.0
                        )
                    })
                })
                .unwrap_or_else(|| "no interval".to_string());
            format!(
                "the good and bad endpoints do not differ detectably after {good_runs} and {bad_runs} runs: bad vs good {interval}"
            )
        }
        verdict_bisect::AbortReason::EndpointSkipped { commit, reason } => format!(
            "endpoint {} could not be measured: {reason}",
            commit.short()
        ),
    }
}

/// The driver's state between measurements.
struct Session<'a> {
    store: &'a Database,
    id: BisectId,
    stored: &'a Stored,
    experiment: &'a Experiment,
    git: &'a Git,
    cancel: &'a Cancel,
    /// The commit in the repository's own tree (without `--worktrees`).
    checked_out: Option<CommitId>,
    /// Commits with a built worktree (`--worktrees`), and where.
    worktrees: Vec<(CommitId, PathBuf)>,
    /// Where the worktrees go (see `worktree_base`).
    worktree_base: PathBuf,
    /// The measurement run a kill cut off, if any (name, id).
    unfinished: Option<(String, verdict_model::RunId)>,
    /// Captured once per session: reading and hashing the kernel config for
    /// every one-run measurement would put milliseconds between the runs
    /// that are compared with each other.
    environment: verdict_model::Environment,
    /// The host that measures each locally built commit (`--host`).
    remote: Option<RemoteMachine>,
}

impl Session<'_> {
    /// Makes `commit` ready to run: checked out and built in the repository
    /// (or in its own worktree, once). `Some(skip)` when the build or
    /// install hook failed. Returns the directory to run in.
    fn prepare(&mut self, commit: &CommitId) -> Result<Result<PathBuf, Event>, CliError> {
        let stored = self.stored;
        let directory = if stored.worktrees {
            if let Some((_, path)) = self.worktrees.iter().find(|(built, _)| built == commit) {
                return Ok(Ok(path.clone()));
            }
            let path = self.worktree_base.join(commit.short());
            if path.exists() {
                // Left by a killed session: build it again from scratch (a
                // build cut off half-way must not be trusted).
                let _ = self.git.remove_worktree(&path);
                let _ = std::fs::remove_dir_all(&path);
            }
            self.git
                .add_worktree(commit, &path)
                .map_err(CliError::input)?;
            self.worktrees.push((commit.clone(), path.clone()));
            path
        } else {
            if self.checked_out.as_ref() == Some(commit) {
                return Ok(Ok(stored.repo.clone()));
            }
            self.git.checkout(commit).map_err(CliError::input)?;
            self.checked_out = Some(commit.clone());
            stored.repo.clone()
        };
        for (what, command) in [("build", &stored.build), ("install", &stored.install)] {
            if let Some(command) = command {
                let invocation =
                    Invocation::new(Program::Shell(command.clone())).with_cwd(&directory);
                let outcome = SystemExecutor
                    .run(&invocation, self.cancel)
                    .map_err(|error| CliError::input(format!("{what} `{command}`: {error}")))?;
                if outcome.status != Status::Exited(0) {
                    self.checked_out = None;
                    eprintln!(
                        "verdict: {} {what} failed ({}); skipping it",
                        commit.short(),
                        outcome.status
                    );
                    return Ok(Err(Event::Skip {
                        commit: commit.clone(),
                        reason: format!("{what} `{command}`: {}", outcome.status),
                    }));
                }
            }
        }
        Ok(Ok(directory))
    }

    /// The experiment as run at a commit prepared in `directory`: a
    /// working directory inside the repository moves to the same place in
    /// the commit's worktree.
    fn experiment_in(&self, directory: &std::path::Path) -> Experiment {
        let mut experiment = self.experiment.clone();
        if self.stored.worktrees {
            let relative = experiment
                .workdir
                .as_deref()
                .and_then(|workdir| workdir.strip_prefix(&self.stored.repo).ok())
                .map(std::path::Path::to_path_buf);
            if let Some(relative) = relative {
                experiment.workdir = Some(directory.join(relative));
            }
        }
        experiment
    }

    /// Check out (or reuse the worktree of), build, install and run `runs`
    /// iterations at `commit`. `None` when a stored partial measurement was
    /// completed instead (its event is then recorded by the caller on the
    /// next loop).
    fn measure(&mut self, commit: &CommitId, runs: usize) -> Result<Option<Event>, CliError> {
        let name = format!("bisect {} {}", self.id.0, commit.short());
        let unfinished = match self.unfinished.take() {
            Some((run_name, run)) if run_name == name => Some(run),
            _ => None,
        };
        let directory = match self.prepare(commit)? {
            Ok(directory) => directory,
            Err(skip) => return Ok(Some(skip)),
        };
        let mut experiment = self.experiment_in(&directory);
        if let Some(remote) = self.remote.as_mut() {
            experiment = remote.stage(&experiment, &directory, &commit.to_string())?;
        }
        let executor: &dyn Executor = match &self.remote {
            Some(remote) => remote.target(),
            None => &SystemExecutor,
        };
        let environment = self.environment.clone();
        let capture = move || environment.clone();
        let engine = verdict_engine::Engine {
            executor,
            store: self.store,
            cancel: self.cancel.clone(),
            environment: &capture,
        };
        let mut progress = Progress::new(&experiment.primary_metric().name);
        let summary = match unfinished {
            Some(run) => engine.resume(run, &mut progress).map_err(CliError::input)?,
            None => {
                experiment.sampling.iterations = runs as u32;
                experiment.sampling.mode = SamplingMode::Fixed;
                experiment.sampling.warmups = 0;
                let mut options = StartOptions {
                    experiment_text: toml_note(&experiment, commit),
                    experiment,
                    seed: self.stored.seed,
                    kind: "bisect".to_string(),
                    command_line: std::env::args().collect(),
                    tool_version: tool_version(),
                };
                options.experiment.name = name;
                let summary = engine
                    .start(&options, &mut progress)
                    .map_err(CliError::input)?;
                self.store
                    .put_annotation(
                        summary.run,
                        "bisect",
                        &serde_json::json!({ "bisect": self.id.0, "commit": commit.to_string() }),
                    )
                    .map_err(CliError::internal)?;
                summary
            }
        };
        if summary.status == RunStatus::Interrupted {
            return Err(interrupted(self.id));
        }
        let (values, samples) = run_values(self.store, summary.run, self.experiment)?;
        if values.is_empty() {
            let reason = samples
                .iter()
                .find_map(|sample| {
                    sample
                        .failure
                        .as_ref()
                        .map(|failure| failure.reason.clone())
                })
                .unwrap_or_else(|| "no successful iteration".to_string());
            return Ok(Some(Event::Skip {
                commit: commit.clone(),
                reason: format!("workload: {reason}"),
            }));
        }
        Ok(Some(Event::Samples {
            commit: commit.clone(),
            values,
        }))
    }

    /// Removes the worktrees this session made and any an earlier, killed
    /// session left (a resume makes them again).
    fn remove_worktrees(&mut self) {
        for (_, path) in self.worktrees.drain(..) {
            if let Err(error) = self.git.remove_worktree(&path) {
                eprintln!(
                    "verdict: warning: could not remove worktree {}: {error}",
                    path.display()
                );
            }
        }
        if self.stored.worktrees && self.worktree_base.exists() {
            // Worktrees of an earlier, killed session that this one did not
            // need again.
            let _ = std::fs::remove_dir_all(&self.worktree_base);
            let _ = self.git.prune_worktrees();
        }
    }
}

/// The directory of bisection `id`'s worktrees: in the system temporary
/// directory, named after the bisection and its database (another database
/// may hold a bisection with the same id), and the same on every resume, so
/// a measurement cut off by a kill resumes in the same place (rebuilt).
fn worktree_base(store: &Database, id: BisectId) -> PathBuf {
    let database =
        std::fs::canonicalize(store.path()).unwrap_or_else(|_| store.path().to_path_buf());
    // FNV-1a: stable across builds, unlike std's hasher.
    let hash = database
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
    std::env::temp_dir().join(format!("verdict-bisect-{hash:016x}-{}", id.0))
}

/// Stores `event` as the bisection's next event and applies it.
fn record_event(
    store: &Database,
    id: BisectId,
    sequence: &mut u32,
    bisection: &mut Bisection,
    event: &Event,
) -> Result<(), CliError> {
    store
        .append_bisect_event(
            id,
            *sequence,
            &serde_json::to_value(event).map_err(CliError::internal)?,
        )
        .map_err(CliError::internal)?;
    *sequence += 1;
    bisection.apply(event).map_err(CliError::internal)
}

fn interrupted(id: BisectId) -> CliError {
    CliError::Interrupted(format!(
        "bisection {} interrupted; resume with: verdict bisect --resume {}",
        id.0, id.0
    ))
}

/// The measurement runs of bisection `id`, oldest first. O(runs), once per
/// session.
fn bisection_runs(
    store: &Database,
    id: BisectId,
) -> Result<Vec<verdict_store::RunSummary>, CliError> {
    let prefix = format!("bisect {} ", id.0);
    Ok(store
        .list_runs()
        .map_err(CliError::internal)?
        .into_iter()
        .filter(|run| run.kind == "bisect" && run.name.starts_with(&prefix))
        .collect())
}

/// The latest of `runs` that neither completed nor failed: a kill cut it
/// off (name, id).
fn unfinished_run(runs: &[verdict_store::RunSummary]) -> Option<(String, verdict_model::RunId)> {
    runs.iter()
        .rev()
        .find(|run| run.status != RunStatus::Complete && run.status != RunStatus::Failed)
        .map(|run| (run.name.clone(), run.id))
}

/// The values of a measurement run (its successful iterations' primary
/// metric) and all its samples.
fn run_values(
    store: &Database,
    run: verdict_model::RunId,
    experiment: &Experiment,
) -> Result<(Vec<f64>, Vec<verdict_model::Sample>), CliError> {
    let metric = &experiment.primary_metric().name;
    let samples = store.samples(run).map_err(CliError::internal)?;
    let values = samples
        .iter()
        .filter(|sample| sample.is_data())
        .filter_map(|sample| sample.metrics.get(metric).copied())
        .filter(|value| *value > 0.0)
        .collect();
    Ok((values, samples))
}

/// The event of the bisection's last complete measurement run if the store
/// holds more values for its runs than the recorded events (a kill after
/// the run finished, before its event was stored). O(runs).
fn orphan_measurement(
    store: &Database,
    id: BisectId,
    stored: &Stored,
    experiment: &Experiment,
    bisection: &Bisection,
    runs: &[verdict_store::RunSummary],
) -> Result<Option<Event>, CliError> {
    let prefix = format!("bisect {} ", id.0);
    let mut stored_values = 0;
    let mut last = None;
    for run in runs.iter().filter(|run| run.status == RunStatus::Complete) {
        let (values, _) = run_values(store, run.id, experiment)?;
        stored_values += values.len();
        last = Some((run, values));
    }
    let Some((run, values)) = last else {
        return Ok(None);
    };
    if stored_values <= bisection.total_runs() || values.is_empty() {
        return Ok(None);
    }
    let short = &run.name[prefix.len()..];
    let commit = std::iter::once(&stored.good)
        .chain(&stored.candidates)
        .find(|commit| commit.to_string().starts_with(short));
    Ok(commit.map(|commit| Event::Samples {
        commit: commit.clone(),
        values,
    }))
}

fn toml_note(experiment: &Experiment, commit: &CommitId) -> String {
    format!(
        "# verdict bisect measurement of {commit}\n# experiment: {}\n",
        experiment.name
    )
}

fn summary(
    bisection: &Bisection,
    outcome: &verdict_bisect::Outcome,
    stored: &Stored,
    subject: &dyn Fn(&CommitId) -> String,
) -> String {
    let mut text = String::new();
    match &outcome.culprit {
        Culprit::Single(commit) => {
            text.push_str(&format!(
                "first bad commit: {} {}\n",
                commit,
                subject(commit)
            ));
            // The culprit's own decision: its runs against the good
            // endpoint's runs measured in turns with it (blocks). Pooled
            // samples of the parent and the culprit were taken at other
            // times and would mix machine load into the effect.
            let decision = bisection
                .steps()
                .iter()
                .rev()
                .find(|step| &step.commit == commit)
                .map(|step| &step.decision);
            if let Some(decision) = decision
                && let Some(shift) = decision.versus_good
            {
                let interval = shift.interval.map_or(String::new(), |interval| {
                    format!(
                        " [{:+.1}%, {:+.1}%] ({:.2}%)",
                        interval.low * 100.0,
                        interval.high * 100.0,
                        interval.confidence * 100.0
                    )
                });
                text.push_str(&format!(
                    "effect vs the good endpoint {} (measured in turns with it, {} runs each): {:+.1}%{interval}\n",
                    stored.good.short(),
                    decision.runs,
                    shift.estimate * 100.0
                ));
            }
        }
        Culprit::Range(commits) => {
            text.push_str("the first bad commit is one of (skipped or undecided commits prevent a single answer):\n");
            for commit in commits {
                text.push_str(&format!("  {} {}\n", commit, subject(commit)));
            }
        }
    }
    if !outcome.conflicts.is_empty() {
        text.push_str("non-monotonic evidence (a like-bad commit before a like-good one):\n");
        for conflict in &outcome.conflicts {
            text.push_str(&format!(
                "  bad {} before good {}\n",
                conflict.bad.short(),
                conflict.good.short()
            ));
        }
    }
    if !outcome.partial.is_empty() {
        text.push_str(&format!(
            "partial changes (between good and bad): {}\n",
            outcome
                .partial
                .iter()
                .map(|commit| commit.short().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    text.push_str(&format!(
        "{} steps, {} runs in total\n",
        outcome.steps, outcome.total_runs
    ));
    let mut previous = 0;
    for step in bisection.steps() {
        text.push_str(&format!(
            "  {} {:<9} {:>4} runs (step cost {})\n",
            step.commit.short(),
            class_word(step.decision.class),
            step.decision.runs,
            step.total_runs.saturating_sub(previous)
        ));
        previous = step.total_runs;
    }
    text.push_str("\ngit bisect log replay:\n");
    text.push_str(&bisection.bisect_log(stored.first_parent, |commit| subject(commit)));
    text
}

fn class_word(class: Class) -> &'static str {
    match class {
        Class::Good => "good",
        Class::Bad => "bad",
        Class::Undecided => "undecided",
        Class::Skipped => "skipped",
    }
}

fn log(
    db: &DbArgs,
    id: Option<i64>,
    format: &str,
    output: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    let html = crate::common::is_html(format);
    let format = if html {
        Format::Text
    } else {
        parse_format(format)?
    };
    let store = db.open_read_only()?;
    let record = match id {
        Some(id) => store.bisect(BisectId(id)).map_err(CliError::input)?,
        None => store
            .latest_bisect()
            .map_err(CliError::internal)?
            .ok_or_else(|| CliError::input("no bisections in the database"))?,
    };
    let stored: Stored =
        serde_json::from_value(record.config.clone()).map_err(CliError::internal)?;
    let recorded = events(&store, record.id)?;
    let bisection = Bisection::replay(
        stored.config.clone(),
        stored.good.clone(),
        stored.candidates.clone(),
        &recorded,
    )
    .map_err(CliError::internal)?;
    let git = Git::new(&stored.repo);
    let subject = |commit: &CommitId| git.subject(commit).unwrap_or_default();
    let evidence: Vec<serde_json::Value> = bisection
        .evidence()
        .into_iter()
        .filter(|evidence| !evidence.samples.is_empty() || evidence.class.is_some())
        .map(|evidence| {
            let summary = verdict_stats::summary::summarize(&evidence.samples);
            serde_json::json!({
                "commit": evidence.commit.to_string(),
                "subject": subject(&evidence.commit),
                "position": evidence.position,
                "n": evidence.samples.len(),
                "median": summary.as_ref().map(|summary| summary.median),
                "ci_low": summary.as_ref().and_then(|summary| summary.median_ci.map(|interval| interval.low)),
                "ci_high": summary.as_ref().and_then(|summary| summary.median_ci.map(|interval| interval.high)),
                "class": evidence.class.map(class_word),
                "decision": evidence.decision,
            })
        })
        .collect();
    if html {
        let page = bisect_log_page(&record, &bisection, &evidence, &subject);
        crate::common::emit(&verdict_report::html::render_bisect_log(&page), output)?;
        return Ok(ExitCode::SUCCESS);
    }
    if format == Format::Json {
        let document = serde_json::json!({
            "schema": "verdict.bisect-log/v1",
            "id": record.id.0,
            "repo": record.repo,
            "good": record.good,
            "bad": record.bad,
            "status": record.status.as_str(),
            "started": format_time(record.started_at_ms),
            "total_runs": bisection.total_runs(),
            "commits": evidence,
            "result": record.result,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&document).map_err(CliError::internal)?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "bisection {} of {} ({}), {} runs so far",
        record.id.0,
        record.repo,
        record.status.as_str(),
        bisection.total_runs()
    );
    let mut table = Table::new(
        [
            "commit",
            "subject",
            "n",
            "median [95% CI]",
            "class",
            "decision",
        ]
        .map(String::from)
        .to_vec(),
    );
    table.left = vec![1, 4, 5];
    for (value, evidence) in evidence.iter().zip(
        bisection
            .evidence()
            .iter()
            .filter(|evidence| !evidence.samples.is_empty() || evidence.class.is_some()),
    ) {
        let median = match (
            value["median"].as_f64(),
            value["ci_low"].as_f64(),
            value["ci_high"].as_f64(),
        ) {
            (Some(median), Some(low), Some(high)) => {
                format!("{} [{}, {}]", fmt(median), fmt(low), fmt(high))
            }
            (Some(median), _, _) => fmt(median),
            _ => "-".to_string(),
        };
        let decision = evidence
            .decision
            .as_ref()
            .map_or(String::new(), |decision| {
                let part = |shift: &Option<verdict_stats::shift::Shift>, side: &str| {
                    shift.and_then(|shift| {
                        shift.interval.map(|interval| {
                            format!(
                                "vs {side} {:+.1}% [{:+.1}, {:+.1}]",
                                shift.estimate * 100.0,
                                interval.low * 100.0,
                                interval.high * 100.0
                            )
                        })
                    })
                };
                [
                    part(&decision.versus_good, "good"),
                    part(&decision.versus_bad, "bad"),
                    decision.reason.clone(),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; ")
            });
        let subject: String = value["subject"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(40)
            .collect();
        table.push(vec![
            evidence.commit.short().to_string(),
            subject,
            value["n"].to_string(),
            median,
            value["class"].as_str().unwrap_or("measuring").to_string(),
            decision,
        ]);
    }
    print!("{}", table.text());
    Ok(ExitCode::SUCCESS)
}

/// The HTML page's model: every commit of the range in order (measured or
/// not), its evidence, and the culprit from the stored result.
fn bisect_log_page(
    record: &verdict_store::BisectRecord,
    bisection: &Bisection,
    measured: &[serde_json::Value],
    subject: &dyn Fn(&CommitId) -> String,
) -> verdict_report::html::BisectLog {
    let outcome: Option<verdict_bisect::Outcome> = record
        .result
        .clone()
        .and_then(|result| serde_json::from_value(result).ok());
    let culprits: Vec<CommitId> = match outcome.as_ref().map(|outcome| &outcome.culprit) {
        Some(Culprit::Single(commit)) => vec![commit.clone()],
        Some(Culprit::Range(commits)) => commits.clone(),
        None => Vec::new(),
    };
    let change = |shift: &Option<verdict_stats::shift::Shift>| {
        shift.map(|shift| verdict_report::html::Change {
            estimate: shift.estimate,
            low: shift.interval.map(|interval| interval.low),
            high: shift.interval.map(|interval| interval.high),
        })
    };
    let commits = bisection
        .evidence()
        .into_iter()
        .map(|evidence| {
            let value = measured
                .iter()
                .find(|value| value["commit"].as_str() == Some(evidence.commit.0.as_str()));
            let number = |key: &str| value.and_then(|value| value[key].as_f64());
            verdict_report::html::BisectCommit {
                commit: evidence.commit.0.clone(),
                subject: subject(&evidence.commit),
                runs: evidence.samples.len(),
                median: number("median"),
                ci_low: number("ci_low"),
                ci_high: number("ci_high"),
                class: evidence.class.map(|class| class_word(class).to_string()),
                versus_good: evidence
                    .decision
                    .as_ref()
                    .and_then(|decision| change(&decision.versus_good)),
                versus_bad: evidence
                    .decision
                    .as_ref()
                    .and_then(|decision| change(&decision.versus_bad)),
                reason: evidence
                    .decision
                    .as_ref()
                    .and_then(|decision| decision.reason.clone()),
                culprit: culprits.contains(&evidence.commit),
            }
        })
        .collect();
    let result = match culprits.as_slice() {
        [] => None,
        [single] => Some(format!(
            "first bad commit: {} {}",
            single.0,
            subject(single)
        )),
        range => Some(format!(
            "the change is in one of {} commits (marked): {}",
            range.len(),
            range
                .iter()
                .map(|commit| commit.short().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    };
    verdict_report::html::BisectLog {
        facts: vec![
            ("bisection".to_string(), record.id.0.to_string()),
            ("repository".to_string(), record.repo.clone()),
            ("good".to_string(), record.good.clone()),
            ("bad".to_string(), record.bad.clone()),
            ("status".to_string(), record.status.as_str().to_string()),
            ("started".to_string(), format_time(record.started_at_ms)),
            ("runs".to_string(), bisection.total_runs().to_string()),
        ],
        commits,
        result,
    }
}

fn fmt(value: f64) -> String {
    verdict_report::format::value(value, "")
}
