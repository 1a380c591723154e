//! `verdict bisect`: find the commit that changed performance, with
//! statistics at every step. Parses the arguments, hands the bisection to
//! verdict-engine's `bisect` driver (checkout or worktrees, build, install,
//! measurement, recovery, resume) and prints its result (`bisect_render`).
//! With `--host` each commit is still built here and its build output
//! measured on that host (`remote_build`); with `[target] vm` and
//! `--boot-kernel`/`--boot-spec` each commit's kernel is booted in a VM
//! (the booter comes from `vm`).
//!
//! Must not: drive the bisection, start processes, or read the store
//! beyond opening it.

use crate::common::{DbArgs, cancel_on_interrupt, parse_format, tool_version};
use crate::error::CliError;
use crate::progress::Progress;
use crate::remote_build::{RemoteBuild, RemoteBuildArgs};
use std::path::PathBuf;
use std::process::ExitCode;
use verdict_bisect::{Config, Git, Vcs};
use verdict_engine::bisect::{
    BisectObserver, Done, Driver, Finished, LocalSite, NewBisection, Request, Site,
};
use verdict_engine::bisect_boots::{BootBuild, BootSite};
use verdict_engine::{CommandError, Observer};
use verdict_report::Format;
use verdict_store::{BisectId, Store};

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
        /// text, json (`verdict.bisect-log/v1`), html (one self-contained page) or email
        /// (every line at most 80 columns).
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
    /// The summary printed at the end: text, or email (every line at most 80 columns, with the
    /// metric, what the commits were measured on, the build's compiler and how to reproduce it).
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    pub(crate) format: crate::common::TextOrEmail,
    /// Continue a bisection stopped by Ctrl-C, a kill or a reboot (default: the latest).
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "0")]
    pub(crate) resume: Option<i64>,
    #[command(flatten)]
    pub(crate) remote: RemoteBuildArgs,
    #[command(flatten)]
    pub(crate) boot: BootArgs,
}

/// A kernel bisection: the boot level each commit's build yields, booted on
/// the experiment's `[target] vm`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BootArgs {
    /// The kernel image the build leaves, relative to the commit's tree (e.g.
    /// arch/x86/boot/bzImage): every measurement of the commit boots it on the experiment's
    /// `[target] vm`.
    #[arg(long, value_name = "PATH")]
    pub(crate) boot_kernel: Option<PathBuf>,
    /// The initrd the build leaves, relative to the commit's tree.
    #[arg(long, value_name = "PATH")]
    pub(crate) boot_initrd: Option<PathBuf>,
    /// Kernel options after the VM's `cmdline`.
    #[arg(long, value_name = "OPTIONS", default_value = "")]
    pub(crate) boot_cmdline: String,
    /// A file the build writes in the commit's tree with a `[boot]` table (kernel, initrd, cmdline,
    /// cmdline_mode: a level's `boot` keys, paths relative to the tree), so the build decides per
    /// commit; a commit whose build does not write it is skipped.
    #[arg(long, value_name = "FILE")]
    pub(crate) boot_spec: Option<PathBuf>,
}

impl BootArgs {
    /// The boot level the flags ask for; without any, verdict's own build
    /// of each commit when the experiment's `[target] vm` has a `build`.
    fn build(&self, experiment: &verdict_model::Experiment) -> Option<BootBuild> {
        let any = self.boot_kernel.is_some()
            || self.boot_initrd.is_some()
            || !self.boot_cmdline.is_empty()
            || self.boot_spec.is_some();
        let from_source = experiment.target.vm().is_some_and(|vm| vm.build.is_some());
        (any || from_source).then(|| BootBuild {
            kernel: self.boot_kernel.clone(),
            initrd: self.boot_initrd.clone(),
            cmdline: self.boot_cmdline.clone(),
            spec: self.boot_spec.clone(),
            from_source: from_source && !any,
        })
    }
}

/// The CLI's side of the driver: progress bars and notes on stderr, the
/// host connection for `--host`, the booter (and kernel builder) of a
/// kernel bisection.
struct Terminal {
    cancel: verdict_exec::Cancel,
}

impl BisectObserver for Terminal {
    fn measurement(&mut self, metric: &str) -> Box<dyn Observer> {
        Box::new(Progress::new(metric))
    }

    fn note(&mut self, message: &str) {
        eprintln!("verdict: {message}");
    }

    fn open_site(
        &mut self,
        remote: Option<&RemoteBuild>,
        label: &str,
    ) -> Result<Box<dyn Site>, CommandError> {
        Ok(match remote {
            Some(remote) => Box::new(
                crate::remote_build::connect(remote, label)
                    .map_err(|error| CommandError::Input(error.to_string()))?,
            ),
            None => Box::new(LocalSite {
                executor: &verdict_exec::SystemExecutor,
                environment: crate::common::capture_environment(),
            }),
        })
    }

    fn open_booter(
        &mut self,
        experiment: &verdict_model::Experiment,
    ) -> Result<BootSite, CommandError> {
        let Some(vm) = experiment.target.vm() else {
            return Err(CommandError::Input(format!(
                "experiment `{}` has no `[target] vm` to boot",
                experiment.name
            )));
        };
        let agent = crate::target::own_identity()
            .map_err(|error| CommandError::Input(error.to_string()))?;
        let booter = verdict_engine::booted::booter(vm, agent)
            .map_err(|error| CommandError::Input(error.to_string()))?;
        Ok(BootSite {
            booter: Box::new(booter),
            environment: Box::new(verdict_engine::booted::booted_environment),
            kernels: vm
                .build
                .is_some()
                .then(|| verdict_engine::booted::kernel_builder(self.cancel.clone())),
        })
    }
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
    let request = match args.start.resume {
        Some(0) => Request::Resume(None),
        Some(requested) => Request::Resume(Some(BisectId(requested))),
        None => Request::Start(Box::new(new_bisection(&args.start)?)),
    };
    let cancel = cancel_on_interrupt();
    let mut terminal = Terminal {
        cancel: cancel.clone(),
    };
    let mut driver = Driver {
        store: &store,
        store_location: store.path(),
        builder: &verdict_exec::SystemExecutor,
        cancel,
        command_line: std::env::args().collect(),
        tool_version: tool_version(),
        observer: &mut terminal,
    };
    match verdict_engine::bisect::run(&mut driver, request, |repo: &std::path::Path| {
        Git::new(repo)
    })? {
        Finished::Done(done) => {
            let Done {
                id,
                settings,
                bisection,
                outcome,
                boots,
                metric,
            } = *done;
            let git = Git::new(&settings.repo);
            let subject =
                |commit: &verdict_bisect::CommitId| git.subject(commit).unwrap_or_default();
            let summary = crate::bisect_render::summary(
                &bisection,
                &outcome,
                &settings,
                boots.as_ref(),
                &subject,
            );
            let provenance = measured_on(&store, id)?;
            match args.start.format {
                crate::common::TextOrEmail::Text => out!(
                    "{summary}{}",
                    provenance
                        .as_ref()
                        .map_or(String::new(), crate::bisect_render::measured_on_text)
                ),
                crate::common::TextOrEmail::Email => out!(
                    "{}",
                    crate::bisect_render::summary_email(&summary, &metric, provenance.as_ref())
                ),
            }
            if let verdict_bisect::Culprit::Single(culprit) = &outcome.culprit
                && let Ok(Some((bad, good))) = verdict_engine::explain::bisection_runs(
                    &store,
                    id,
                    &culprit.to_string(),
                    &outcome.last_good.to_string(),
                )
            {
                eprintln!(
                    "verdict: where the time went (system counters, profiles): verdict explain {bad} --baseline {good}"
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Finished::Aborted { id, reason } => Err(CliError::input(format!(
            "bisection {} aborted: {}",
            id.0,
            crate::bisect_render::abort_text(&reason)
        ))),
    }
}

/// What bisection `id`'s commits were measured on: the provenance of its
/// last measurement run (machine, kernel, config, the build's command and
/// compiler), without that run's commit (the bisection measured many).
fn measured_on(
    store: &dyn Store,
    id: BisectId,
) -> Result<Option<verdict_report::provenance::Provenance>, CliError> {
    let Some(last) = store
        .bisect_runs(id)
        .map_err(CliError::internal)?
        .last()
        .map(|run| run.id)
    else {
        return Ok(None);
    };
    let record = store.run(last).map_err(CliError::internal)?;
    let mut provenance = crate::run_report::stored_provenance(store, &record)?;
    // The experiment file as the bisection read it (a measurement's text
    // carries a note naming its commit).
    let bisection = store.bisect(id).map_err(CliError::internal)?;
    provenance.reproduce.experiment_sha256 =
        verdict_model::Experiment::text_hash(&bisection.experiment_text);
    Ok(Some(crate::bisect_render::without_commits(&provenance)))
}

/// The new bisection `start` asks for.
fn new_bisection(start: &BisectStart) -> Result<NewBisection, CliError> {
    let repo = start.repo.clone().expect("clap requires --repo");
    let repo = repo
        .canonicalize()
        .map_err(|error| CliError::input(format!("repository {}: {error}", repo.display())))?;
    let path = start
        .experiment
        .clone()
        .expect("clap requires --experiment");
    let mut loaded = crate::common::load_experiment(&path, None, false)?;
    if loaded.experiment.target.vm().is_some() {
        // The controller's directories are not in the guest (as for
        // `verdict run`).
        loaded.keep_only_absolute_workdir();
    }
    let crate::common::LoadedExperiment {
        experiment, text, ..
    } = loaded;
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
    // A relative workdir resolves against the repository, where each commit is checked out.
    let experiment = verdict_engine::bisect::in_repository(experiment, &repo);
    let remote = crate::remote_build::from_args(&start.remote, &experiment, &repo)?;
    let boot = start.boot.build(&experiment);
    Ok(NewBisection {
        good: start.good.clone().expect("clap requires --good"),
        bad: start.bad.clone().expect("clap requires --bad"),
        experiment,
        experiment_text: text,
        experiment_path: path,
        build: start.build.clone(),
        install: start.install.clone(),
        first_parent: start.first_parent,
        worktrees: start.worktrees,
        config,
        remote,
        boot,
        seed: crate::common::random_seed(),
        repo,
    })
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
    let log = verdict_engine::bisect::log(
        &store,
        id.map(BisectId),
        |repo: &std::path::Path| Git::new(repo),
        html,
    )?;
    if html {
        let mut page = crate::bisect_render::log_page(&log);
        if let Some(provenance) = measured_on(&store, log.record.id)? {
            page.facts
                .extend(crate::bisect_render::measured_on_facts(&provenance));
        }
        crate::common::emit(&verdict_report::html::render_bisect_log(&page), output)?;
        return Ok(ExitCode::SUCCESS);
    }
    if format == Format::Json {
        let provenance = measured_on(&store, log.record.id)?;
        let document =
            crate::bisect_render::log_json(&log, provenance).map_err(CliError::internal)?;
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).map_err(CliError::internal)?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if format == Format::Email {
        let provenance = measured_on(&store, log.record.id)?;
        out!(
            "{}",
            crate::bisect_render::log_email(&log, provenance.as_ref())
        );
    } else {
        out!("{}", crate::bisect_render::log_text(&log));
    }
    Ok(ExitCode::SUCCESS)
}
