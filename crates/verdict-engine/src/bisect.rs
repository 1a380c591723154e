//! The bisection driver: finds the commit that changed performance with
//! statistics at every step. The pure state machine (verdict-bisect) says
//! what to measure next; this module checks the commit out (or into its own
//! worktree), builds and installs it, runs the experiment through the
//! engine (every measurement stored as a run of kind `bisect` linked to the
//! bisection by `NewRun::bisect`), records the values as a bisection event,
//! and feeds them back. Resume replays the stored events; a measurement cut
//! off by a kill is resumed from its stored samples, so none is lost or
//! duplicated. Where the build output is measured (here, or a host over
//! ssh) is the caller's `Site`. An experiment with `[target] vm` bisects
//! kernels: each measurement boots the kernel the commit's build left
//! (`bisect_boots`) through the engine's `BootRunner`, one boot per
//! measurement, and a commit whose kernel does not boot is skipped.
//!
//! Must not: print (notes go to the caller's `BisectObserver`), parse
//! command lines, decide what to measure next (verdict-bisect does), or
//! render results.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use verdict_bisect::{
    AbortReason, Action, BisectError, Bisection, CommitEvidence, CommitId, Config, Event, Git,
    Outcome, Vcs,
};
use verdict_exec::{Cancel, Invocation, Program, Status, Target};
use verdict_model::{
    BuildProvenance, Environment, Experiment, OnBootFailure, RunId, RunStatus, SamplingMode,
};
use verdict_store::{BisectId, BisectRecord, NewBisect, Store};

use crate::bisect_boots::{BootBuild, BootCosts, BootSite};
use crate::boots::BootRunner;
use crate::error::CommandError;
use crate::runner::{Engine, Observer, RunOutcome, StartOptions, now_ms};

/// A cancelled bisection (Ctrl-C): everything measured is stored, and
/// the message says how to go on.
fn interrupted(id: BisectId) -> CommandError {
    CommandError::Interrupted(format!(
        "bisection {id} interrupted; resume with: verdict bisect --resume {id}"
    ))
}

/// The remote side of a measurement (`--host`): build here, measure there.
/// Stored with a bisection, so a resume reconnects with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RemoteBuild {
    pub host: String,
    pub ssh_config: Option<PathBuf>,
    /// Paths relative to the tree, never absolute, never with `..`.
    pub copy: Vec<PathBuf>,
    /// Stored in milliseconds; a bisection stored with seconds
    /// (`reconnect_timeout_s`) still resumes.
    #[serde(flatten)]
    pub reconnect: verdict_model::ReconnectTimeout,
}

/// What a bisection needs to continue, stored as its config.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    pub repo: PathBuf,
    pub good: CommitId,
    pub bad: CommitId,
    pub candidates: Vec<CommitId>,
    pub first_parent: bool,
    pub build: Option<String>,
    pub install: Option<String>,
    pub config: Config,
    pub experiment_path: String,
    pub seed: u64,
    /// One worktree per commit (`--worktrees`); absent in bisections
    /// stored before the option existed.
    #[serde(default)]
    pub worktrees: bool,
    /// Build here, measure on a host (`--host`); absent: measured here.
    #[serde(default)]
    pub remote: Option<RemoteBuild>,
    /// Boot the kernel each commit's build yields (`--boot-kernel`,
    /// `--boot-spec`, ...) on the experiment's `[target] vm`; absent: the
    /// experiment's command runs in the commit's tree.
    #[serde(default)]
    pub boot: Option<BootBuild>,
}

/// A new bisection, as asked for.
#[derive(Debug, Clone)]
pub struct NewBisection {
    /// The repository, canonical.
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    /// The experiment as run in the repository (see `in_repository`).
    pub experiment: Experiment,
    /// The experiment file as read.
    pub experiment_text: String,
    pub experiment_path: PathBuf,
    pub build: Option<String>,
    pub install: Option<String>,
    pub first_parent: bool,
    pub worktrees: bool,
    pub config: Config,
    pub remote: Option<RemoteBuild>,
    /// The boot level each commit's build yields (a kernel bisection).
    pub boot: Option<BootBuild>,
    pub seed: u64,
}

/// Start a new bisection, or resume a stored one (`None`: the latest).
#[derive(Debug, Clone)]
pub enum Request {
    Start(Box<NewBisection>),
    Resume(Option<BisectId>),
}

/// Where a commit's build is measured: this machine, or a host the build
/// output is copied to.
pub trait Site {
    /// Runs the measured iterations.
    fn executor(&self) -> &dyn Target;
    /// The environment recorded with every measurement (read once per
    /// session: reading it for every one-run measurement would put
    /// milliseconds between the runs that are compared with each other).
    fn environment(&self) -> Environment;
    /// The experiment as it runs there for the build in `tree` (`key` names
    /// the build): here, unchanged.
    fn stage(
        &mut self,
        experiment: &Experiment,
        tree: &Path,
        key: &str,
    ) -> Result<Experiment, CommandError>;
    /// Removes what `stage` left there.
    fn remove_all(&self);
}

/// This machine as the site: the experiment runs in the tree it was built
/// in.
pub struct LocalSite {
    pub executor: &'static dyn Target,
    pub environment: Environment,
}

impl std::fmt::Debug for LocalSite {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("LocalSite").finish_non_exhaustive()
    }
}

impl Site for LocalSite {
    fn executor(&self) -> &dyn Target {
        self.executor
    }

    fn environment(&self) -> Environment {
        self.environment.clone()
    }

    fn stage(
        &mut self,
        experiment: &Experiment,
        _: &Path,
        _: &str,
    ) -> Result<Experiment, CommandError> {
        Ok(experiment.clone())
    }

    fn remove_all(&self) {}
}

/// What the driver needs from its caller besides the store and the
/// repository: progress, notes for people, and the site.
pub trait BisectObserver {
    /// The progress observer of one measurement run of `metric`.
    fn measurement(&mut self, metric: &str) -> Box<dyn Observer>;
    /// A line for people, such as "bisection 3: 12 commits between ...".
    fn note(&mut self, message: &str);
    /// The site that measures: `remote` when the bisection measures on a
    /// host (`label` names its directory there), else this machine.
    fn open_site(
        &mut self,
        remote: Option<&RemoteBuild>,
        label: &str,
    ) -> Result<Box<dyn Site>, CommandError>;
    /// The booter of `experiment`'s `[target] vm`, for a bisection that
    /// boots each commit's kernel (opened once per session).
    fn open_booter(&mut self, experiment: &Experiment) -> Result<BootSite, CommandError> {
        Err(CommandError::input(format!(
            "experiment `{}` boots a VM, which this caller cannot start",
            experiment.name
        )))
    }
}

/// Worktrees of a version control system (one checkout per commit).
pub trait Worktrees {
    fn add_worktree(&self, commit: &CommitId, path: &Path) -> Result<(), BisectError>;
    fn remove_worktree(&self, path: &Path) -> Result<(), BisectError>;
    fn prune_worktrees(&self) -> Result<(), BisectError>;
}

impl Worktrees for Git {
    fn add_worktree(&self, commit: &CommitId, path: &Path) -> Result<(), BisectError> {
        Git::add_worktree(self, commit, path)
    }

    fn remove_worktree(&self, path: &Path) -> Result<(), BisectError> {
        Git::remove_worktree(self, path)
    }

    fn prune_worktrees(&self) -> Result<(), BisectError> {
        Git::prune_worktrees(self)
    }
}

/// The driver's collaborators.
pub struct Driver<'a> {
    pub store: &'a dyn Store,
    /// Where the store lives (its file): names the worktrees' directory, as
    /// another store may hold a bisection with the same id.
    pub store_location: &'a Path,
    /// Runs the build and install commands, here.
    pub builder: &'a dyn Target,
    pub cancel: Cancel,
    /// Recorded with every measurement run.
    pub command_line: Vec<String>,
    pub tool_version: String,
    pub observer: &'a mut dyn BisectObserver,
}

impl std::fmt::Debug for Driver<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Driver")
            .field("store_location", &self.store_location)
            .finish_non_exhaustive()
    }
}

/// How a bisection ended (an interruption is `CommandError::Interrupted`).
#[derive(Debug)]
pub enum Finished {
    /// The outcome, stored as the bisection's result.
    Done(Box<Done>),
    /// The bisection could not go on (endpoints alike, an endpoint
    /// skipped); stored as failed.
    Aborted { id: BisectId, reason: AbortReason },
}

/// A bisection that found its answer.
#[derive(Debug)]
pub struct Done {
    pub id: BisectId,
    pub settings: Settings,
    /// Its steps and evidence.
    pub bisection: Bisection,
    pub outcome: Outcome,
    /// What the boots cost (a kernel bisection), else `None`.
    pub boots: Option<BootCosts>,
    /// The metric the bisection decided on (the experiment's primary).
    pub metric: verdict_model::MetricSpec,
}

/// `experiment` as run at every commit: a working directory that is the
/// current directory (the default) becomes the repository, where each
/// commit is checked out.
pub fn in_repository(experiment: Experiment, repo: &Path) -> Experiment {
    match &experiment.workdir {
        Some(directory) if directory == &std::env::current_dir().unwrap_or_default() => {
            let mut experiment = experiment;
            experiment.workdir = Some(repo.to_path_buf());
            experiment
        }
        _ => experiment,
    }
}

/// Starts or resumes a bisection and drives it to its end. `open_vcs`
/// opens the repository (a resume reads its path from the store).
pub fn run<V: Vcs + Worktrees>(
    driver: &mut Driver<'_>,
    request: Request,
    open_vcs: impl Fn(&Path) -> V,
) -> Result<Finished, CommandError> {
    let (id, settings, experiment) = match request {
        Request::Resume(requested) => {
            let record = match requested {
                None => driver
                    .store
                    .latest_bisect()
                    .map_err(CommandError::internal)?
                    .ok_or_else(|| CommandError::input("no bisection to resume"))?,
                Some(id) => driver.store.bisect(id).map_err(CommandError::input)?,
            };
            let settings: Settings =
                serde_json::from_value(record.config.clone()).map_err(CommandError::internal)?;
            let mut experiment =
                Experiment::parse(&record.experiment_text, &settings.experiment_path)
                    .map_err(CommandError::input)?;
            // A kernel build's files are named relative to the experiment
            // file (as when the bisection started).
            if let Some(directory) = Path::new(&settings.experiment_path).parent() {
                experiment.resolve_build_paths(directory);
            }
            driver.observer.note(&format!(
                "resuming bisection {} of {}",
                record.id.0,
                settings.repo.display()
            ));
            // A guest has none of this machine's directories.
            let experiment = if settings.boot.is_some() {
                experiment
            } else {
                with_workdir(experiment, &settings.repo)
            };
            (record.id, settings, experiment)
        }
        Request::Start(request) => {
            let vcs = open_vcs(&request.repo);
            start_new(driver, &vcs, *request)?
        }
    };
    let vcs = open_vcs(&settings.repo);
    drive(driver, &vcs, id, settings, &experiment)
}

fn with_workdir(mut experiment: Experiment, repo: &Path) -> Experiment {
    if experiment.workdir.is_none() {
        experiment.workdir = Some(repo.to_path_buf());
    }
    experiment
}

fn start_new(
    driver: &mut Driver<'_>,
    vcs: &impl Vcs,
    request: NewBisection,
) -> Result<(BisectId, Settings, Experiment), CommandError> {
    let experiment = request.experiment;
    let path = request.experiment_path;
    if experiment.cells().len() != 1 {
        return Err(CommandError::input(format!(
            "{}: bisection measures one workload per commit; the experiment has {} cells (remove its factors or pin them to one level)",
            path.display(),
            experiment.cells().len()
        )));
    }
    let good = vcs.resolve(&request.good).map_err(CommandError::input)?;
    let bad = vcs.resolve(&request.bad).map_err(CommandError::input)?;
    let candidates: Vec<CommitId> = vcs
        .candidates(&good, &bad, request.first_parent)
        .map_err(CommandError::input)?
        .into_iter()
        .map(|commit| commit.id)
        .collect();
    request.config.validate().map_err(CommandError::input)?;
    crate::bisect_boots::check(
        &experiment,
        &path,
        request.boot.as_ref(),
        request.remote.is_some(),
        request.build.is_some() || request.install.is_some(),
    )?;
    let repo = request.repo;
    let settings = Settings {
        repo: repo.clone(),
        good,
        bad,
        candidates,
        first_parent: request.first_parent,
        build: request.build,
        install: request.install,
        config: request.config,
        experiment_path: path.display().to_string(),
        seed: request.seed,
        worktrees: request.worktrees,
        remote: request.remote,
        boot: request.boot,
    };
    let id = driver
        .store
        .create_bisect(&NewBisect {
            repo: repo.display().to_string(),
            good: settings.good.to_string(),
            bad: settings.bad.to_string(),
            experiment_text: request.experiment_text,
            config: serde_json::to_value(&settings).map_err(CommandError::internal)?,
            started_at_ms: now_ms(),
        })
        .map_err(CommandError::internal)?;
    driver.observer.note(&format!(
        "bisection {}: {} commits between {} and {}",
        id.0,
        settings.candidates.len(),
        settings.good.short(),
        settings.bad.short()
    ));
    Ok((id, settings, experiment))
}

/// The recorded events of bisection `id`, in order.
fn events(store: &dyn Store, id: BisectId) -> Result<Vec<Event>, CommandError> {
    store
        .bisect_events(id)
        .map_err(CommandError::internal)?
        .into_iter()
        .map(|(_, value)| serde_json::from_value(value).map_err(CommandError::internal))
        .collect()
}

fn drive<V: Vcs + Worktrees>(
    driver: &mut Driver<'_>,
    vcs: &V,
    id: BisectId,
    settings: Settings,
    experiment: &Experiment,
) -> Result<Finished, CommandError> {
    let store = driver.store;
    let original = vcs.head().map_err(CommandError::input)?;
    let recorded = events(store, id)?;
    let mut sequence = recorded.len() as u32;
    let mut bisection = Bisection::replay(
        settings.config.clone(),
        settings.good.clone(),
        settings.candidates.clone(),
        &recorded,
    )
    .map_err(CommandError::internal)?;
    // A kill between a measurement's end and its event: the run is
    // complete in the store but its values are not in the bisection yet.
    let runs = store.bisect_runs(id).map_err(CommandError::internal)?;
    if let Some(event) = orphan_measurement(store, &settings, experiment, &bisection, &runs)? {
        record_event(store, id, &mut sequence, &mut bisection, &event)?;
    }
    let worktree_base = worktree_base(driver.store_location, id);
    let label = worktree_base
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("verdict-bisect-{}", id.0));
    let site = driver
        .observer
        .open_site(settings.remote.as_ref(), &label)?;
    let boots = match settings.boot {
        Some(_) => Some(driver.observer.open_booter(experiment)?),
        None => None,
    };
    let mut session = Session {
        driver,
        id,
        settings: &settings,
        experiment,
        vcs,
        checked_out: None,
        worktrees: Vec::new(),
        worktree_base,
        // Only the first measurement after a resume can have been cut off.
        unfinished: unfinished_run(&runs),
        environment: site.environment(),
        compiler: None,
        site,
        boots,
        next_event: sequence,
    };
    let result = loop {
        if session.driver.cancel.is_cancelled() {
            break Err(interrupted(id));
        }
        match bisection.next_action() {
            Action::Measure { commit, runs } => {
                session.next_event = sequence;
                let event = match session.measure(&commit, runs) {
                    Ok(Some(event)) => event,
                    Ok(None) => continue,
                    Err(error) => break Err(error),
                };
                record_event(store, id, &mut sequence, &mut bisection, &event)?;
            }
            Action::Done(outcome) => {
                let result = serde_json::to_value(&outcome).map_err(CommandError::internal)?;
                store
                    .finish_bisect(id, RunStatus::Complete, now_ms(), &result)
                    .map_err(CommandError::internal)?;
                let boots =
                    crate::bisect_boots::boot_costs(store, id, &settings, &events(store, id)?)?;
                break Ok(Finished::Done(Box::new(Done {
                    id,
                    settings: settings.clone(),
                    bisection,
                    outcome,
                    boots,
                    metric: experiment.primary_metric().clone(),
                })));
            }
            Action::Abort { reason } => {
                let result = serde_json::to_value(&reason).map_err(CommandError::internal)?;
                store
                    .finish_bisect(id, RunStatus::Failed, now_ms(), &result)
                    .map_err(CommandError::internal)?;
                break Ok(Finished::Aborted { id, reason });
            }
        }
    };
    session.remove_worktrees();
    session.site.remove_all();
    if let Err(error) = vcs.restore(&original) {
        session.driver.observer.note(&format!(
            "warning: could not restore the repository's HEAD: {error}"
        ));
    }
    result
}

/// The driver's state between measurements.
struct Session<'s, 'a, V> {
    driver: &'s mut Driver<'a>,
    id: BisectId,
    settings: &'s Settings,
    experiment: &'s Experiment,
    vcs: &'s V,
    /// The commit in the repository's own tree (without `--worktrees`).
    checked_out: Option<CommitId>,
    /// Commits with a built worktree (`--worktrees`), and where.
    worktrees: Vec<(CommitId, PathBuf)>,
    /// Where the worktrees go (see `worktree_base`).
    worktree_base: PathBuf,
    /// The measurement run a kill cut off, if any (name, id).
    unfinished: Option<(String, RunId)>,
    /// Captured once per session (see `Site::environment`).
    environment: Environment,
    /// The first line of `cc --version` in the build environment, asked
    /// once per session (`Some(None)`: asked, no compiler answered).
    compiler: Option<Option<String>>,
    /// Where each built commit is measured.
    site: Box<dyn Site>,
    /// Boots each commit's kernel (a kernel bisection).
    boots: Option<BootSite>,
    /// The sequence number the next recorded event will have: a
    /// measurement run's annotation names it (`bisect_boots::boot_costs`
    /// attributes a run's boots to that event).
    next_event: u32,
}

impl<V: Vcs + Worktrees> Session<'_, '_, V> {
    /// Makes `commit` ready to run: checked out and built in the repository
    /// (or in its own worktree, once). `Err(skip)` when the build or
    /// install hook failed. Returns the directory to run in.
    fn prepare(&mut self, commit: &CommitId) -> Result<Result<PathBuf, Event>, CommandError> {
        let settings = self.settings;
        // verdict builds the kernel itself from the repository's objects:
        // nothing to check out or run here.
        if settings.boot.as_ref().is_some_and(|boot| boot.from_source) {
            return Ok(Ok(settings.repo.clone()));
        }
        let directory = if settings.worktrees {
            if let Some((_, path)) = self.worktrees.iter().find(|(built, _)| built == commit) {
                return Ok(Ok(path.clone()));
            }
            let path = self.worktree_base.join(commit.short());
            if path.exists() {
                // Left by a killed session: build it again from scratch (a
                // build cut off half-way must not be trusted).
                let _ = self.vcs.remove_worktree(&path);
                let _ = std::fs::remove_dir_all(&path);
            }
            self.vcs
                .add_worktree(commit, &path)
                .map_err(CommandError::input)?;
            self.worktrees.push((commit.clone(), path.clone()));
            path
        } else {
            if self.checked_out.as_ref() == Some(commit) {
                return Ok(Ok(settings.repo.clone()));
            }
            self.vcs.checkout(commit).map_err(CommandError::input)?;
            self.checked_out = Some(commit.clone());
            settings.repo.clone()
        };
        for (what, command) in [("build", &settings.build), ("install", &settings.install)] {
            if let Some(command) = command {
                let invocation =
                    Invocation::new(Program::Shell(command.clone())).with_cwd(&directory);
                let outcome = self
                    .driver
                    .builder
                    .run(&invocation, &self.driver.cancel)
                    .map_err(|error| CommandError::input(format!("{what} `{command}`: {error}")))?;
                if outcome.status != Status::Exited(0) {
                    self.checked_out = None;
                    self.driver.observer.note(&format!(
                        "{} {what} failed ({}); skipping it",
                        commit.short(),
                        outcome.status
                    ));
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
    fn experiment_in(&self, directory: &Path) -> Experiment {
        let mut experiment = self.experiment.clone();
        if self.settings.worktrees {
            let relative = experiment
                .workdir
                .as_deref()
                .and_then(|workdir| workdir.strip_prefix(&self.settings.repo).ok())
                .map(Path::to_path_buf);
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
    fn measure(&mut self, commit: &CommitId, runs: usize) -> Result<Option<Event>, CommandError> {
        let name = format!("bisect {} {}", self.id.0, commit.short());
        let unfinished = match self.unfinished.take() {
            Some((run_name, run)) if run_name == name => Some(run),
            _ => None,
        };
        let directory = match self.prepare(commit)? {
            Ok(directory) => directory,
            Err(skip) => return Ok(Some(skip)),
        };
        if self.boots.is_some() {
            return self.measure_booted(commit, runs, &directory, name, unfinished);
        }
        let experiment = self.experiment_in(&directory);
        let experiment = self
            .site
            .stage(&experiment, &directory, &commit.to_string())?;
        let environment = self.measured_environment(commit, &directory);
        let capture = move || environment.clone();
        let store = self.driver.store;
        let engine = Engine {
            executor: self.site.executor(),
            store,
            cancel: self.driver.cancel.clone(),
            environment: &capture,
        };
        let mut progress = self
            .driver
            .observer
            .measurement(&experiment.primary_metric().name);
        let summary = match unfinished {
            Some(run) => engine
                .resume(run, progress.as_mut())
                .map_err(CommandError::input)?,
            None => {
                let options = self.start_options(experiment, commit, runs, name);
                let summary = engine
                    .start(&options, progress.as_mut())
                    .map_err(CommandError::input)?;
                store
                    .put_annotation(summary.run, "bisect", &self.annotation(commit))
                    .map_err(CommandError::internal)?;
                summary
            }
        };
        self.event_of(commit, &summary)
    }

    /// The environment a measurement of `commit` records: the session's,
    /// with the build (the commit, the build command, and the compiler the
    /// build environment's `cc --version` names).
    fn measured_environment(&mut self, commit: &CommitId, directory: &Path) -> Environment {
        let compiler = match &self.compiler {
            Some(known) => known.clone(),
            None => {
                let asked = self.ask_compiler(directory);
                self.compiler = Some(asked.clone());
                asked
            }
        };
        let mut environment = self.environment.clone();
        environment.build = Some(BuildProvenance {
            commit: Some(commit.to_string()),
            command: self.settings.build.clone(),
            compiler,
            ..BuildProvenance::default()
        });
        environment
    }

    /// The first line of `cc --version` run where the commits are built
    /// (the builder, in the tree), when it answers.
    fn ask_compiler(&self, directory: &Path) -> Option<String> {
        let invocation = Invocation::new(Program::Argv(vec![
            "cc".to_string(),
            "--version".to_string(),
        ]))
        .with_cwd(directory)
        .with_timeout(std::time::Duration::from_secs(30));
        let outcome = self
            .driver
            .builder
            .run(&invocation, &self.driver.cancel)
            .ok()?;
        (outcome.status == Status::Exited(0))
            .then(|| {
                String::from_utf8_lossy(&outcome.stdout)
                    .lines()
                    .next()
                    .map(|line| line.trim().to_string())
            })
            .flatten()
            .filter(|line| !line.is_empty())
    }

    /// A measurement run of `commit`: `runs` iterations, no warmups, named
    /// `name`.
    fn start_options(
        &self,
        mut experiment: Experiment,
        commit: &CommitId,
        runs: usize,
        name: String,
    ) -> StartOptions {
        experiment.sampling.iterations = runs as u32;
        experiment.sampling.mode = SamplingMode::Fixed;
        experiment.sampling.warmups = 0;
        let experiment_text = toml_note(&experiment, commit);
        experiment.name = name;
        // Measured where the build output is: the --host, else here.
        let placement = experiment.target.placement(
            self.settings
                .remote
                .as_ref()
                .map(|remote| std::slice::from_ref(&remote.host))
                .unwrap_or_default(),
        );
        StartOptions {
            experiment_text,
            experiment,
            seed: self.settings.seed,
            kind: verdict_model::RunKind::Bisect,
            command_line: self.driver.command_line.clone(),
            tool_version: self.driver.tool_version.clone(),
            bisect: Some(self.id),
            placement,
        }
    }

    /// The annotation linking a measurement run to its commit and to the
    /// bisection event it measures for (the next one recorded: a run that
    /// ends in an error shares it with the run that measures again).
    fn annotation(&self, commit: &CommitId) -> serde_json::Value {
        serde_json::json!({
            "bisect": self.id.0,
            "commit": commit.to_string(),
            "event": self.next_event,
        })
    }

    /// Skips `commit` for `reason`, telling the observer.
    fn skip(&mut self, commit: &CommitId, reason: String) -> Event {
        self.driver
            .observer
            .note(&format!("{} {reason}; skipping it", commit.short()));
        Event::Skip {
            commit: commit.clone(),
            reason,
        }
    }

    /// The event of a finished measurement run: its values, or a skip
    /// when none succeeded.
    fn event_of(
        &mut self,
        commit: &CommitId,
        summary: &RunOutcome,
    ) -> Result<Option<Event>, CommandError> {
        let store = self.driver.store;
        if summary.status == RunStatus::Interrupted {
            return Err(interrupted(self.id));
        }
        let (values, samples) = run_values(store, summary.run, self.experiment)?;
        if values.is_empty()
            && let Some(reason) = failed_build(store, summary.run)?
        {
            return Ok(Some(self.skip(commit, reason)));
        }
        if values.is_empty() && self.boots.is_some() {
            // No proven boot: the kernel did not boot (after the
            // experiment's `boot_retries`); its boots and their console
            // tails are in the run's `boots`.
            let boots = store.boots(summary.run).map_err(CommandError::internal)?;
            let failed: Vec<_> = boots.iter().filter(|boot| !boot.status.booted()).collect();
            if let Some(last) = failed.last() {
                let reason = format!(
                    "kernel did not boot ({} failed boot(s), run {}): {}",
                    failed.len(),
                    summary.run,
                    last.message.as_deref().unwrap_or("no reason recorded")
                );
                return Ok(Some(self.skip(commit, reason)));
            }
        }
        if values.is_empty() {
            let reason = samples
                .iter()
                .find_map(|sample| {
                    sample
                        .failure
                        .as_ref()
                        .map(|failure| failure.reason.clone())
                })
                .or_else(|| missing_reason(&samples, &self.experiment.primary_metric().name))
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

    /// `runs` iterations of `commit` in one boot of the kernel its build
    /// left in `directory` (see `bisect_boots`), or the rest of a
    /// measurement a kill cut off (`unfinished`) in a fresh boot.
    fn measure_booted(
        &mut self,
        commit: &CommitId,
        runs: usize,
        directory: &Path,
        name: String,
        unfinished: Option<RunId>,
    ) -> Result<Option<Event>, CommandError> {
        // What to start, unless a cut-off measurement is resumed.
        let measurement = match unfinished {
            Some(run) => BootedMeasurement::Resume(run),
            None => {
                let boot = self.settings.boot.clone().unwrap_or_default();
                let experiment = if boot.from_source {
                    Ok(crate::bisect_boots::source_experiment(
                        self.experiment,
                        directory,
                        &commit.to_string(),
                    ))
                } else {
                    crate::bisect_boots::commit_experiment(self.experiment, &boot, directory)
                };
                let mut experiment = match experiment {
                    Ok(experiment) => experiment,
                    Err(reason) => return Ok(Some(self.skip(commit, reason))),
                };
                // One boot per measurement: the block's unit.
                experiment.sampling.boots = 1;
                experiment.sampling.on_boot_failure = OnBootFailure::Skip;
                BootedMeasurement::Start(
                    Box::new(self.start_options(experiment, commit, runs, name)),
                    self.annotation(commit),
                )
            }
        };
        let environment = self.measured_environment(commit, directory);
        let capture = move || environment.clone();
        let mut progress = self
            .driver
            .observer
            .measurement(&self.experiment.primary_metric().name);
        let Some(site) = self.boots.as_mut() else {
            return Err(CommandError::internal("no booter"));
        };
        let mut runner = BootRunner {
            booter: site.booter.as_mut(),
            store: self.driver.store,
            cancel: self.driver.cancel.clone(),
            environment: &capture,
            boot_environment: site.environment.as_ref(),
            kernels: site.kernels.as_ref(),
        };
        let summary = match measurement {
            BootedMeasurement::Start(options, annotation) => {
                runner.start(&options, &[("bisect", annotation)], progress.as_mut())
            }
            BootedMeasurement::Resume(run) => runner.resume(run, progress.as_mut()),
        }
        .map_err(CommandError::input)?;
        drop(progress);
        self.event_of(commit, &summary)
    }

    /// Removes the worktrees this session made and any an earlier, killed
    /// session left (a resume makes them again).
    fn remove_worktrees(&mut self) {
        for (_, path) in std::mem::take(&mut self.worktrees) {
            if let Err(error) = self.vcs.remove_worktree(&path) {
                self.driver.observer.note(&format!(
                    "warning: could not remove worktree {}: {error}",
                    path.display()
                ));
            }
        }
        if self.settings.worktrees && self.worktree_base.exists() {
            // Worktrees of an earlier, killed session that this one did not
            // need again.
            let _ = std::fs::remove_dir_all(&self.worktree_base);
            let _ = self.vcs.prune_worktrees();
        }
    }
}

/// Why run `run`'s kernel was not built, when its last build record says
/// it failed (a bisection from source skips such a commit, as a failed
/// `--build` is skipped).
fn failed_build(store: &dyn Store, run: RunId) -> Result<Option<String>, CommandError> {
    let records = crate::boot_builds::stored_records(store, run).map_err(CommandError::internal)?;
    Ok(records.last().and_then(|record| {
        record.failure.as_ref().map(|failure| {
            format!(
                "kernel build failed at its {} step (run {run}): {}",
                failure.step.as_str(),
                failure.message
            )
        })
    }))
}

/// The directory of bisection `id`'s worktrees: in the system temporary
/// directory, named after the bisection and its database (another database
/// may hold a bisection with the same id), and the same on every resume, so
/// a measurement cut off by a kill resumes in the same place (rebuilt).
fn worktree_base(store_location: &Path, id: BisectId) -> PathBuf {
    let database =
        std::fs::canonicalize(store_location).unwrap_or_else(|_| store_location.to_path_buf());
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
    store: &dyn Store,
    id: BisectId,
    sequence: &mut u32,
    bisection: &mut Bisection,
    event: &Event,
) -> Result<(), CommandError> {
    store
        .append_bisect_event(
            id,
            *sequence,
            &serde_json::to_value(event).map_err(CommandError::internal)?,
        )
        .map_err(CommandError::internal)?;
    *sequence += 1;
    bisection.apply(event).map_err(CommandError::internal)
}

/// The latest of `runs` that neither completed nor failed: a kill cut it
/// off (name, id).
fn unfinished_run(runs: &[verdict_store::RunSummary]) -> Option<(String, RunId)> {
    runs.iter()
        .rev()
        .find(|run| run.status != RunStatus::Complete && run.status != RunStatus::Failed)
        .map(|run| (run.name.clone(), run.id))
}

/// The values of a measurement run (its successful iterations' primary
/// metric) and all its samples.
/// Why successful iterations have no value of `metric` (perf's `<not
/// supported>`): the words `verdict run`'s report prints for them,
/// `METRIC: N missing value(s): WHAT THE TOOL SAID`.
fn missing_reason(samples: &[verdict_model::Sample], metric: &str) -> Option<String> {
    let mut reasons: Vec<&str> = Vec::new();
    let mut count = 0;
    for sample in samples.iter().filter(|sample| sample.is_data()) {
        if let Some(reason) = sample.missing.get(metric) {
            count += 1;
            if !reasons.contains(&reason.as_str()) {
                reasons.push(reason);
            }
        }
    }
    (count > 0).then(|| format!("{metric}: {count} missing value(s): {}", reasons.join("; ")))
}

fn run_values(
    store: &dyn Store,
    run: RunId,
    experiment: &Experiment,
) -> Result<(Vec<f64>, Vec<verdict_model::Sample>), CommandError> {
    let metric = &experiment.primary_metric().name;
    let samples = store.samples(run).map_err(CommandError::internal)?;
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
/// the run finished, before its event was stored). The run's commit is the
/// last word of its name (`bisect <id> <short commit>`). O(runs).
fn orphan_measurement(
    store: &dyn Store,
    settings: &Settings,
    experiment: &Experiment,
    bisection: &Bisection,
    runs: &[verdict_store::RunSummary],
) -> Result<Option<Event>, CommandError> {
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
    let short = run.name.rsplit(' ').next().unwrap_or_default();
    let commit = std::iter::once(&settings.good)
        .chain(&settings.candidates)
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

/// A stored bisection replayed for `verdict bisect log`: every commit of
/// the range in order, with its evidence and summary.
#[derive(Debug)]
pub struct BisectLog {
    pub record: BisectRecord,
    pub settings: Settings,
    pub bisection: Bisection,
    pub commits: Vec<LoggedCommit>,
    /// What the boots cost (a kernel bisection), else `None`.
    pub boots: Option<BootCosts>,
    /// The metric the bisection decided on (the stored experiment's
    /// primary); `None` when the stored experiment no longer loads.
    pub metric: Option<verdict_model::MetricSpec>,
}

/// One commit of a bisection log.
#[derive(Debug)]
pub struct LoggedCommit {
    pub evidence: CommitEvidence,
    pub subject: String,
    /// Median of its samples and its confidence interval
    /// (`verdict_stats::summary::summarize`).
    pub median: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

impl LoggedCommit {
    /// Measured or classified (the rows of the text and JSON logs).
    pub fn is_measured(&self) -> bool {
        !self.evidence.samples.is_empty() || self.evidence.class.is_some()
    }
}

/// Replays bisection `id` (`None`: the latest) from `store`; subjects come
/// from the repository `open_vcs` opens. `every_commit`: all commits of the
/// range, not only the measured or classified ones.
pub fn log<V: Vcs>(
    store: &dyn Store,
    id: Option<BisectId>,
    open_vcs: impl Fn(&Path) -> V,
    every_commit: bool,
) -> Result<BisectLog, CommandError> {
    let record = match id {
        Some(id) => store.bisect(id).map_err(CommandError::input)?,
        None => store
            .latest_bisect()
            .map_err(CommandError::internal)?
            .ok_or_else(|| CommandError::input("no bisections in the database"))?,
    };
    let settings: Settings =
        serde_json::from_value(record.config.clone()).map_err(CommandError::internal)?;
    let recorded = events(store, record.id)?;
    let bisection = Bisection::replay(
        settings.config.clone(),
        settings.good.clone(),
        settings.candidates.clone(),
        &recorded,
    )
    .map_err(CommandError::internal)?;
    let boots = crate::bisect_boots::boot_costs(store, record.id, &settings, &recorded)?;
    let vcs = open_vcs(&settings.repo);
    let commits = bisection
        .evidence()
        .into_iter()
        .filter(|evidence| every_commit || !evidence.samples.is_empty() || evidence.class.is_some())
        .map(|evidence| {
            let summary = verdict_stats::summary::summarize(&evidence.samples);
            let interval = summary.as_ref().and_then(|summary| summary.median_ci);
            LoggedCommit {
                subject: vcs.subject(&evidence.commit).unwrap_or_default(),
                median: summary.as_ref().map(|summary| summary.median),
                ci_low: interval.map(|interval| interval.low),
                ci_high: interval.map(|interval| interval.high),
                evidence,
            }
        })
        .collect();
    let metric = Experiment::parse(&record.experiment_text, &settings.experiment_path)
        .ok()
        .map(|experiment| experiment.primary_metric().clone());
    Ok(BisectLog {
        record,
        settings,
        bisection,
        commits,
        boots,
        metric,
    })
}

/// A booted measurement of a commit: started afresh, or the rest of one a
/// kill cut off resumed in a fresh boot.
enum BootedMeasurement {
    Start(Box<StartOptions>, serde_json::Value),
    Resume(RunId),
}
