//! The run loop: level switches with setup and teardown, the workload, the
//! sample committed before the next iteration starts, progress, adaptive
//! stopping, Ctrl-C, and resume. Talks to processes only through an
//! `Target` and to the database only through a `Store`.

use crate::adaptive::{AdaptivePlan, ComparisonStatus};
use crate::iteration::{self, Position};
use crate::schedule::{Slot, block_order, fixed_schedule};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use verdict_exec::{Cancel, ExecError, Invocation, Leftovers, Program, Status, Target};
use verdict_model::experiment::env_name;
use verdict_model::{
    Analysis, Cell, CommandSpec, Environment, Experiment, Order, RunId, RunStatus, Sample,
    SampleDetails, SamplingMode,
};
use verdict_store::{NewRun, Store};

/// Where the run loop writes each finished iteration: the engine's store
/// (`StoreSink`), or shared work's fenced write (`work.rs`).
pub(crate) trait SampleSink {
    /// Stores the sample with what it captured besides its metrics
    /// (monitors, a profile; empty when nothing), in one transaction.
    fn append(
        &self,
        run: RunId,
        sample: &Sample,
        cell: &Cell,
        details: &SampleDetails,
    ) -> Result<(), EngineError>;
}

/// Each sample into a store, committed before the next iteration.
pub(crate) struct StoreSink<'a>(pub(crate) &'a dyn Store);

impl SampleSink for StoreSink<'_> {
    fn append(
        &self,
        run: RunId,
        sample: &Sample,
        cell: &Cell,
        details: &SampleDetails,
    ) -> Result<(), EngineError> {
        if details.is_empty() {
            Ok(self.0.append_sample(run, sample, cell)?)
        } else {
            Ok(self.0.append_sample_details(run, sample, cell, details)?)
        }
    }
}

/// What the caller sees as the run goes.
pub trait Observer {
    fn started(&mut self, run: RunId, planned: usize, done: usize, cells: &[Cell]);
    fn sample(&mut self, sample: &Sample, cells: &[Cell], done: usize, planned: usize);
    fn decisions(&mut self, statuses: &[ComparisonStatus]);
    fn note(&mut self, message: &str);
}

/// An observer that shows nothing (tests, scripts).
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {
    fn started(&mut self, _: RunId, _: usize, _: usize, _: &[Cell]) {}
    fn sample(&mut self, _: &Sample, _: &[Cell], _: usize, _: usize) {}
    fn decisions(&mut self, _: &[ComparisonStatus]) {}
    fn note(&mut self, _: &str) {}
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub run: RunId,
    pub status: RunStatus,
    /// Samples stored (including warmups and failures).
    pub recorded: usize,
    pub failed: usize,
    /// Comparison states at the end of an adaptive run.
    pub decisions: Vec<String>,
}

/// Errors that stop a run (beyond a failing iteration, which is recorded).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Store(#[from] verdict_store::StoreError),
    #[error("set up {factor}={level}: `{command}` {status}{output}")]
    Setup {
        factor: String,
        level: String,
        command: String,
        status: String,
        output: String,
    },
    #[error("run `{command}`: {source}")]
    Spawn { command: String, source: ExecError },
    #[error("run {run} is {status}; only an interrupted, failed or killed run can be resumed")]
    NotResumable { run: RunId, status: String },
    #[error("run {run}: stored experiment no longer loads: {message}")]
    StoredExperiment { run: RunId, message: String },
    #[error(
        "experiment {experiment}: an adaptive run decides its blocks as it goes and cannot be \
         detached; use a fixed number of iterations"
    )]
    Detach { experiment: String },
    #[error(
        "run {run} was not detached: `verdict work` measures the blocks of a run started with \
         `verdict run FILE --detach`; resume this one with `verdict run --resume {run}`"
    )]
    NotDetached { run: RunId },
    #[error(
        "the store stayed unreachable for {seconds} s (--reconnect-timeout): {source}; the \
         blocks this worker held are taken over by another after their lease expires"
    )]
    StoreUnreachable {
        seconds: u64,
        source: verdict_store::StoreError,
    },
    #[error(
        "run {run}: stored sample {sequence} is for cell {found} but the schedule says {expected}; the run cannot be resumed safely"
    )]
    ScheduleMismatch {
        run: RunId,
        sequence: u32,
        found: usize,
        expected: usize,
    },
    #[error("experiment `{experiment}` has no cells")]
    NoCells { experiment: String },
    #[error(
        "verify {factor}={level}: `{command}` did not show /{pattern}/ ({output}); the level was not entered, nothing was measured in it"
    )]
    Verify {
        factor: String,
        level: String,
        command: String,
        pattern: String,
        output: String,
    },
    #[error("boot {level_key} (boot {boot} of run {run}): {message}")]
    BootFailed {
        run: RunId,
        boot: u32,
        level_key: String,
        message: String,
        console_tail: String,
    },
    #[error("boot {level_key}: {source}")]
    Boot {
        level_key: String,
        source: ExecError,
    },
    #[error(
        "{}the experiment boots its target (`[target] vm` or `[target] boot`): only `verdict run` boots",
        run.map(|run| format!("run {run}: ")).unwrap_or_default()
    )]
    NeedsBooter { run: Option<RunId> },
    #[error("run {run}: the kernel of {levels} was not built: {failure}")]
    KernelBuild {
        run: RunId,
        /// The boot levels that boot it (`patch=with`).
        levels: String,
        failure: verdict_model::BuildFailure,
    },
    #[error(
        "run {run}: a boot level builds its kernel (`build = {{ … }}`), which needs a kernel builder"
    )]
    NeedsBuilder { run: RunId },
    #[error("run {run}: a kernel build was cancelled")]
    BuildCancelled { run: RunId },
    #[error("{selection}: {message}")]
    LevelSource { selection: String, message: String },
    #[error("adaptive design: {0}")]
    Design(#[from] verdict_stats::sequential::SequentialError),
    #[error("{0}")]
    Profile(#[from] crate::profile::ProfileError),
    #[error(
        "experiment `{experiment}`: adaptive sampling (`mode = \"adaptive\"` or --until-decided) cannot be combined with `order = \"sequential\"`: the adaptive procedure is valid only for interleaved blocks, where drift falls on every cell alike; use a fixed number of iterations with the sequential order (`verdict plan` tells how many), or `order = \"interleaved\"`"
    )]
    AdaptiveSequential { experiment: String },
    #[error(
        "experiment `{experiment}`: adaptive sampling (`mode = \"adaptive\"` or --until-decided) cannot be combined with `analysis = \"paired\"`: the adaptive procedure stops on the two-sample analysis, and reporting another analysis after it would not keep its error rate; use a fixed number of iterations with the paired analysis"
    )]
    AdaptivePaired { experiment: String },
}

/// The experiment a stored run was created with.
pub(crate) fn stored_experiment(
    record: &verdict_store::RunRecord,
) -> Result<Experiment, EngineError> {
    serde_json::from_str(&record.experiment_json).map_err(|error| EngineError::StoredExperiment {
        run: record.id,
        message: error.to_string(),
    })
}

/// Refuses what the engine cannot run validly, before anything is created
/// or started: adaptive stopping with the sequential order (see the
/// "Adaptive" paragraph of docs/experiments.md for why), or with the paired
/// analysis (the stopping rule is the two-sample one).
pub fn check_design(experiment: &Experiment) -> Result<(), EngineError> {
    if experiment.sampling.order == Order::Sequential && experiment.sampling.mode.is_adaptive() {
        return Err(EngineError::AdaptiveSequential {
            experiment: experiment.name.clone(),
        });
    }
    if experiment.sampling.analysis == Analysis::Paired && experiment.sampling.mode.is_adaptive() {
        return Err(EngineError::AdaptivePaired {
            experiment: experiment.name.clone(),
        });
    }
    Ok(())
}

/// What to start.
#[derive(Debug, Clone)]
pub struct StartOptions {
    pub experiment: Experiment,
    pub experiment_text: String,
    pub seed: u64,
    pub kind: verdict_model::RunKind,
    pub command_line: Vec<String>,
    pub tool_version: String,
    /// The bisection the run measures a commit for (`verdict bisect`).
    pub bisect: Option<verdict_store::BisectId>,
    /// Where the run measures ([`TargetSpec::placement`](verdict_model::TargetSpec::placement)): what chooses
    /// its launcher and what is stored with it.
    pub placement: verdict_model::Placement,
}

/// The orchestrator. Holds its collaborators; no state between runs.
pub struct Engine<'a> {
    pub executor: &'a dyn Target,
    pub store: &'a dyn Store,
    pub cancel: Cancel,
    /// Captures the machine's environment (verdict-doctor in the binary).
    pub environment: &'a dyn Fn() -> Environment,
}

impl std::fmt::Debug for Engine<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Engine").finish_non_exhaustive()
    }
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64)
}

/// Total iterations a run plans (its cap when adaptive).
pub fn planned_iterations(experiment: &Experiment) -> usize {
    let cells = experiment.cells().len();
    let per_cell = match experiment.sampling.mode {
        SamplingMode::Fixed => experiment.sampling.iterations,
        SamplingMode::Adaptive { max, .. } => max,
        // No cap: the projected end is known only once runs are in; the
        // first look's size is what is planned for sure.
        SamplingMode::Uncapped { min } => min,
    };
    // On a booted target every cell runs in each of its boots.
    let boots = if experiment.runs_by_boot() {
        experiment.sampling.boots.max(1) as usize
    } else {
        1
    };
    boots * cells * (per_cell + experiment.sampling.warmups) as usize
}

pub(crate) struct Levels {
    /// Current level of each factor; `None` when unknown (start, resume,
    /// a fresh boot).
    pub(crate) current: Vec<Option<usize>>,
}

impl Engine<'_> {
    /// Create a run in the store and execute it.
    pub fn start(
        &self,
        options: &StartOptions,
        observer: &mut dyn Observer,
    ) -> Result<RunOutcome, EngineError> {
        self.start_annotated(options, &[], observer)
    }

    /// Like [`start`](Self::start), with annotations stored as soon as the
    /// run exists (before its first iteration), such as the target a
    /// resume must reconnect to.
    pub fn start_annotated(
        &self,
        options: &StartOptions,
        annotations: &[(&str, serde_json::Value)],
        observer: &mut dyn Observer,
    ) -> Result<RunOutcome, EngineError> {
        check_design(&options.experiment)?;
        if options.experiment.runs_by_boot() {
            return Err(EngineError::NeedsBooter { run: None });
        }
        self.prove_profiler(&options.experiment)?;
        let environment = (self.environment)();
        // A remote target is recorded under the name it was reached by; the
        // local machine under its host name.
        let host = match self.executor.target_name() {
            "local" => environment.hostname.clone().unwrap_or_default(),
            name => name.to_string(),
        };
        let run = self.store.create_run(&NewRun {
            name: options.experiment.name.clone(),
            kind: options.kind,
            placement: options.placement,
            experiment_text: options.experiment_text.clone(),
            experiment_sha256: Experiment::text_hash(&options.experiment_text),
            experiment_json: serde_json::to_string(&options.experiment).unwrap_or_default(),
            tool_version: options.tool_version.clone(),
            seed: options.seed,
            host,
            planned: planned_iterations(&options.experiment) as u64,
            started_at_ms: now_ms(),
            environment_start: environment,
            command_line: options.command_line.clone(),
            bisect: options.bisect,
        })?;
        for (key, value) in annotations {
            self.store.put_annotation(run, key, value)?;
        }
        self.execute(run, &options.experiment, options.seed, Vec::new(), observer)
    }

    /// Continue an interrupted or killed run with the same schedule.
    pub fn resume(
        &self,
        run: RunId,
        observer: &mut dyn Observer,
    ) -> Result<RunOutcome, EngineError> {
        let record = self.store.run(run)?;
        if record.status == RunStatus::Complete {
            return Err(EngineError::NotResumable {
                run,
                status: record.status.as_str().to_string(),
            });
        }
        let experiment = stored_experiment(&record)?;
        check_design(&experiment)?;
        if experiment.runs_by_boot() {
            return Err(EngineError::NeedsBooter { run: Some(run) });
        }
        self.prove_profiler(&experiment)?;
        let existing = self.store.samples(run)?;
        self.store.set_status(run, RunStatus::Running)?;
        self.execute(run, &experiment, record.seed, existing, observer)
    }

    /// With `[profile]`, proves perf and its event on the target before a
    /// run is created or resumed, so a machine that cannot profile is a
    /// clear error and not a failed run.
    fn prove_profiler(&self, experiment: &Experiment) -> Result<(), EngineError> {
        if let Some(spec) = &experiment.profile {
            crate::profile::Profiler::prepare(self.executor, spec)?.remove(self.executor);
        }
        Ok(())
    }

    /// Measures the listed (sequence, slot) pairs of a run, skipping the
    /// sequences in `stored`, with setup before and teardown after, each
    /// sample written to `sink` (shared work: one claimed block, fenced).
    /// `Ok(false)` when cancelled.
    pub(crate) fn run_block(
        &self,
        run: RunId,
        experiment: &Experiment,
        slots: &[(u32, Slot)],
        stored: &std::collections::HashSet<u32>,
        sink: &dyn SampleSink,
        observer: &mut dyn Observer,
    ) -> Result<bool, EngineError> {
        let cells = experiment.cells();
        let mut samples = Vec::new();
        let mut levels = Levels {
            current: vec![None; experiment.factors.len()],
        };
        let mut context = LoopContext {
            engine: self,
            run,
            experiment,
            cells: &cells,
            workdir: experiment.workdir.clone(),
            planned: slots.len(),
            observer,
            capture: Default::default(),
            sink,
        };
        let mut result = Ok(true);
        for &(sequence, slot) in slots {
            if stored.contains(&sequence) {
                continue;
            }
            match context.run_one(slot, sequence, &mut samples, &mut levels) {
                Ok(LoopEnd::Finished) => {}
                Ok(LoopEnd::Cancelled) => {
                    result = Ok(false);
                    break;
                }
                Err(error) => {
                    result = Err(error);
                    break;
                }
            }
        }
        let teardown = context.teardown_all(&mut levels);
        let finished = result?;
        teardown?;
        Ok(finished)
    }

    fn execute(
        &self,
        run: RunId,
        experiment: &Experiment,
        seed: u64,
        existing: Vec<Sample>,
        observer: &mut dyn Observer,
    ) -> Result<RunOutcome, EngineError> {
        let cells = experiment.cells();
        let planned = planned_iterations(experiment);
        let adaptive = AdaptivePlan::for_experiment(experiment)?;
        if let Some(plan) = &adaptive {
            observer.note(&format!("adaptive: {}", plan.describe()));
            self.store
                .record_adaptive_procedure(run, &plan.describe())?;
        }
        // Who is executing the run, so a second `--resume` can refuse while
        // this process is alive.
        self.store.put_annotation(
            run,
            "process",
            &serde_json::json!({ "pid": std::process::id() }),
        )?;
        observer.started(run, planned, existing.len(), &cells);
        let mut samples = existing;
        let mut levels = Levels {
            current: vec![None; experiment.factors.len()],
        };
        // The binary resolves `workdir` to an absolute path before the run is
        // stored, so a resumed run works in the same directory.
        let workdir = experiment.workdir.clone();
        let mut context = LoopContext {
            engine: self,
            run,
            experiment,
            cells: &cells,
            workdir,
            planned,
            observer,
            capture: Default::default(),
            sink: &StoreSink(self.store),
        };
        let result = match &adaptive {
            None => {
                let schedule = fixed_schedule(
                    cells.len(),
                    experiment.sampling.iterations,
                    experiment.sampling.warmups,
                    experiment.sampling.order,
                    seed,
                );
                context.run_slots(&schedule, &mut samples, &mut levels)
            }
            Some(plan) => context.run_adaptive(plan, seed, &mut samples, &mut levels),
        };
        // Leave the machine as we found it, even after Ctrl-C or a failure.
        let teardown = context.teardown_all(&mut levels);
        let finished_environment = (self.environment)();
        let failed = samples
            .iter()
            .filter(|sample| sample.failure.is_some())
            .count();
        let decisions = adaptive
            .as_ref()
            .map(|plan| {
                let statuses = plan.statuses(&samples, None);
                let _ = self.store.record_adaptive_decisions(run, &statuses);
                statuses
                    .iter()
                    .map(|status| {
                        format!(
                            "{} vs {}: {}",
                            status.candidate_label,
                            status.baseline_label,
                            status.outcome()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        match result {
            Ok(LoopEnd::Finished) => {
                teardown?;
                self.store.finish_run(
                    run,
                    RunStatus::Complete,
                    now_ms(),
                    Some(&finished_environment),
                )?;
                Ok(RunOutcome {
                    run,
                    status: RunStatus::Complete,
                    recorded: samples.len(),
                    failed,
                    decisions,
                })
            }
            Ok(LoopEnd::Cancelled) => {
                self.store.finish_run(
                    run,
                    RunStatus::Interrupted,
                    now_ms(),
                    Some(&finished_environment),
                )?;
                Ok(RunOutcome {
                    run,
                    status: RunStatus::Interrupted,
                    recorded: samples.len(),
                    failed,
                    decisions,
                })
            }
            Err(error) => {
                self.store.finish_run(
                    run,
                    RunStatus::Failed,
                    now_ms(),
                    Some(&finished_environment),
                )?;
                Err(error)
            }
        }
    }
}

pub(crate) enum LoopEnd {
    Finished,
    Cancelled,
}

pub(crate) struct LoopContext<'a, 'b> {
    pub(crate) engine: &'a Engine<'b>,
    pub(crate) run: RunId,
    pub(crate) experiment: &'a Experiment,
    pub(crate) cells: &'a [Cell],
    pub(crate) workdir: Option<PathBuf>,
    pub(crate) planned: usize,
    pub(crate) observer: &'a mut dyn Observer,
    /// Monitors' warnings and the target's profiler.
    pub(crate) capture: crate::capture::CaptureState,
    pub(crate) sink: &'a dyn SampleSink,
}

impl LoopContext<'_, '_> {
    /// Run the slots not yet stored; stored ones must match the schedule.
    fn run_slots(
        &mut self,
        schedule: &[Slot],
        samples: &mut Vec<Sample>,
        levels: &mut Levels,
    ) -> Result<LoopEnd, EngineError> {
        for (index, slot) in schedule.iter().enumerate() {
            if let Some(stored) = samples.get(index) {
                if stored.cell != slot.cell {
                    return Err(EngineError::ScheduleMismatch {
                        run: self.run,
                        sequence: index as u32,
                        found: stored.cell,
                        expected: slot.cell,
                    });
                }
                continue;
            }
            if let LoopEnd::Cancelled = self.run_one(*slot, index as u32, samples, levels)? {
                return Ok(LoopEnd::Cancelled);
            }
        }
        Ok(LoopEnd::Finished)
    }

    fn run_adaptive(
        &mut self,
        plan: &AdaptivePlan,
        seed: u64,
        samples: &mut Vec<Sample>,
        levels: &mut Levels,
    ) -> Result<LoopEnd, EngineError> {
        let warmups = self.experiment.sampling.warmups;
        let all: Vec<usize> = (0..self.cells.len()).collect();
        let mut sequence = 0u32;
        let mut block = 0u32;
        loop {
            let (active, warmup) = if block < warmups {
                (all.clone(), true)
            } else {
                let statuses = plan.statuses(samples, Some(block));
                if block > warmups {
                    self.observer.decisions(&statuses);
                }
                let active = plan.active_cells(&statuses);
                if active.is_empty() || (block - warmups) as usize >= plan.max_runs() {
                    return Ok(LoopEnd::Finished);
                }
                (active, false)
            };
            for cell in block_order(seed, block, &active) {
                let slot = Slot {
                    cell,
                    block,
                    warmup,
                };
                if let Some(stored) = samples.get(sequence as usize) {
                    if stored.cell != cell || stored.block != block {
                        return Err(EngineError::ScheduleMismatch {
                            run: self.run,
                            sequence,
                            found: stored.cell,
                            expected: cell,
                        });
                    }
                } else if let LoopEnd::Cancelled = self.run_one(slot, sequence, samples, levels)? {
                    return Ok(LoopEnd::Cancelled);
                }
                sequence += 1;
            }
            block += 1;
        }
    }

    pub(crate) fn run_one(
        &mut self,
        slot: Slot,
        sequence: u32,
        samples: &mut Vec<Sample>,
        levels: &mut Levels,
    ) -> Result<LoopEnd, EngineError> {
        let cancel = &self.engine.cancel;
        if cancel.is_cancelled() {
            return Ok(LoopEnd::Cancelled);
        }
        if let Some(spec) = &self.experiment.profile
            && self.capture.profiler.is_none()
        {
            // Proven before the first iteration on this target (each boot
            // is a new one), before any level is entered.
            self.capture.profiler = Some(crate::profile::Profiler::prepare(
                self.engine.executor,
                spec,
            )?);
        }
        let cell = &self.cells[slot.cell];
        self.switch_levels(cell, levels)?;
        if cancel.is_cancelled() {
            return Ok(LoopEnd::Cancelled);
        }
        let invocation = crate::capture::monitored(self.experiment, self.workload_invocation(cell));
        // The target's clock: on another machine, when it started there.
        let started_at_ms = self.engine.executor.now_unix_ms();
        let outcome = match self.engine.executor.run(&invocation, cancel) {
            Ok(outcome) => outcome,
            Err(ExecError::Cancelled) => return Ok(LoopEnd::Cancelled),
            Err(ExecError::ConnectionLost { host, detail }) => {
                // Not data: a failed iteration, and the run goes on (the
                // target reconnects on the next request, or reports the
                // host down, which stops this run).
                let sample = iteration::connection_lost(
                    Position {
                        cell: slot.cell,
                        block: slot.block,
                        sequence,
                        warmup: slot.warmup,
                        started_at_ms,
                    },
                    &host,
                    &detail,
                );
                self.observer
                    .note(&format!("{host}: connection lost; reconnecting"));
                self.sink
                    .append(self.run, &sample, cell, &SampleDetails::default())?;
                samples.push(sample);
                self.observer.sample(
                    samples.last().expect("just pushed"),
                    self.cells,
                    samples.len(),
                    self.planned,
                );
                return Ok(LoopEnd::Finished);
            }
            Err(source) => {
                return Err(EngineError::Spawn {
                    command: invocation.program.to_string(),
                    source,
                });
            }
        };
        let sample = iteration::record(
            self.experiment,
            cell,
            Position {
                cell: slot.cell,
                block: slot.block,
                sequence,
                warmup: slot.warmup,
                started_at_ms,
            },
            &outcome,
            self.workdir.as_deref(),
            self.engine.executor,
        );
        let observer = &mut *self.observer;
        let mut details = verdict_model::SampleDetails {
            monitors: crate::capture::monitors_of(
                self.experiment,
                &outcome,
                &mut self.capture,
                &mut |text| observer.note(text),
            ),
            profile: None,
        };
        if sample.is_data()
            && crate::profile::due(self.experiment, slot)
            && let Some(profiler) = self.capture.profiler.as_mut()
        {
            match profiler.profile(
                self.engine.executor,
                &invocation,
                &self.experiment.success_codes,
                cancel,
            ) {
                Ok(profile) => details.profile = Some(profile),
                Err(ExecError::Cancelled) => return Ok(LoopEnd::Cancelled),
                Err(source) => {
                    return Err(EngineError::Spawn {
                        command: "perf record".to_string(),
                        source,
                    });
                }
            }
        }
        self.sink.append(self.run, &sample, cell, &details)?;
        if !sample.leftovers.is_empty() {
            self.observer.note(&format!(
                "iteration #{}, cell {}: {} process(es) left running: {}; {}",
                sample.sequence,
                cell.label(),
                sample.leftovers.len(),
                sample.leftovers.join(", "),
                if self.experiment.sampling.kill_leftovers {
                    "killed"
                } else {
                    "left running (kill_leftovers = false)"
                }
            ));
        }
        samples.push(sample);
        self.observer.sample(
            samples.last().expect("just pushed"),
            self.cells,
            samples.len(),
            self.planned,
        );
        let cooldown = self.experiment.sampling.cooldown;
        if !cooldown.is_zero() && sleep_unless_cancelled(cancel, cooldown) {
            return Ok(LoopEnd::Cancelled);
        }
        Ok(LoopEnd::Finished)
    }

    fn workload_invocation(&self, cell: &Cell) -> Invocation {
        workload_invocation(self.experiment, self.workdir.clone(), cell)
    }

    /// Teardown of the levels being left, then setup of the levels entered.
    pub(crate) fn switch_levels(
        &mut self,
        cell: &Cell,
        levels: &mut Levels,
    ) -> Result<(), EngineError> {
        let targets: Vec<usize> = cell
            .levels
            .iter()
            .zip(&self.experiment.factors)
            .map(|((_, value), factor)| {
                factor
                    .levels
                    .iter()
                    .position(|level| &level.value == value)
                    .unwrap_or(0)
            })
            .collect();
        for factor_index in (0..targets.len()).rev() {
            if let Some(current) = levels.current[factor_index]
                && current != targets[factor_index]
            {
                self.run_hook(factor_index, current, Hook::Teardown)?;
                levels.current[factor_index] = None;
            }
        }
        for (factor_index, target) in targets.iter().enumerate() {
            if levels.current[factor_index] != Some(*target) {
                self.run_hook(factor_index, *target, Hook::Setup)?;
                levels.current[factor_index] = Some(*target);
                self.verify_level(factor_index, *target)?;
            }
        }
        Ok(())
    }

    /// The level's `verify`: its command's standard output must match its
    /// pattern, or entering the level failed (never data).
    fn verify_level(&mut self, factor_index: usize, level_index: usize) -> Result<(), EngineError> {
        let factor = &self.experiment.factors[factor_index];
        let level = &factor.levels[level_index];
        let Some(verify) = &level.verify else {
            return Ok(());
        };
        let failed = |output: String| EngineError::Verify {
            factor: factor.name.clone(),
            level: level.value.clone(),
            command: verify.command.display(),
            pattern: verify.matches.clone(),
            output,
        };
        let pattern = regex::Regex::new(&verify.matches)
            .map_err(|error| failed(format!("invalid pattern: {error}")))?;
        let mut invocation = Invocation::new(to_program(&verify.command));
        invocation.cwd = self.workdir.clone();
        invocation.timeout = Some(Duration::from_secs(120));
        invocation.env.push((
            format!("VERDICT_{}", env_name(&factor.name)),
            level.value.clone(),
        ));
        let outcome = self
            .engine
            .executor
            .run(&invocation, &Cancel::new())
            .map_err(|source| EngineError::Spawn {
                command: verify.command.display(),
                source,
            })?;
        let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
        if outcome.status != Status::Exited(0) {
            return Err(failed(format!(
                "{}: {}",
                outcome.status,
                outcome
                    .output_tail(iteration::FAILURE_TAIL_BYTES)
                    .trim_end()
            )));
        }
        if !pattern.is_match(&stdout) {
            return Err(failed(format!("it printed `{}`", stdout.trim_end())));
        }
        self.observer.note(&format!(
            "verified {}={}: `{}` matches /{}/",
            factor.name,
            level.value,
            stdout.trim_end(),
            verify.matches
        ));
        Ok(())
    }

    /// Removes the profiler's directory on the target, if there is one.
    pub(crate) fn finish_capture(&mut self) {
        if let Some(profiler) = self.capture.profiler.take() {
            profiler.remove(self.engine.executor);
        }
    }

    pub(crate) fn teardown_all(&mut self, levels: &mut Levels) -> Result<(), EngineError> {
        self.finish_capture();
        let mut first_error = None;
        for factor_index in (0..levels.current.len()).rev() {
            if let Some(current) = levels.current[factor_index].take()
                && let Err(error) = self.run_hook(factor_index, current, Hook::Teardown)
            {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    fn run_hook(
        &mut self,
        factor_index: usize,
        level_index: usize,
        hook: Hook,
    ) -> Result<(), EngineError> {
        let factor = &self.experiment.factors[factor_index];
        let level = &factor.levels[level_index];
        let command = match hook {
            Hook::Setup => &level.setup,
            Hook::Teardown => &level.teardown,
        };
        let Some(command) = command else {
            return Ok(());
        };
        let what = match hook {
            Hook::Setup => "setup",
            Hook::Teardown => "teardown",
        };
        self.observer.note(&format!(
            "{what} {}={}: {}",
            factor.name,
            level.value,
            command.display()
        ));
        let mut invocation = Invocation::new(to_program(command));
        invocation.cwd = self.workdir.clone();
        invocation.timeout = Some(
            self.experiment
                .sampling
                .timeout
                .unwrap_or(Duration::from_secs(600)),
        );
        invocation.env.push((
            format!("VERDICT_{}", env_name(&factor.name)),
            level.value.clone(),
        ));
        // Hooks run to completion even after Ctrl-C: a half-switched machine is worse.
        let outcome = self
            .engine
            .executor
            .run(&invocation, &Cancel::new())
            .map_err(|source| EngineError::Spawn {
                command: command.display(),
                source,
            })?;
        if outcome.status != Status::Exited(0) {
            let tail = outcome.output_tail(iteration::FAILURE_TAIL_BYTES);
            return Err(EngineError::Setup {
                factor: factor.name.clone(),
                level: level.value.clone(),
                command: command.display(),
                status: format!("failed: {}", outcome.status).replacen(
                    "failed: ",
                    if what == "setup" {
                        "failed: "
                    } else {
                        "(teardown) failed: "
                    },
                    1,
                ),
                output: if tail.trim().is_empty() {
                    String::new()
                } else {
                    format!("; its output:\n{}", tail.trim_end())
                },
            });
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Hook {
    Setup,
    Teardown,
}

/// The invocation of `experiment`'s workload in `cell`: its command, the
/// experiment's and the level's environment, `VERDICT_<FACTOR>` for every
/// factor, the working directory, the timeout and what happens to
/// leftovers.
pub(crate) fn workload_invocation(
    experiment: &Experiment,
    workdir: Option<PathBuf>,
    cell: &Cell,
) -> Invocation {
    let program = to_program(&experiment.command_for(cell));
    let mut invocation = Invocation::new(program).repeated();
    for (name, value) in &experiment.env {
        invocation.env.push((name.clone(), value.clone()));
    }
    for ((factor_name, level_value), factor) in cell.levels.iter().zip(&experiment.factors) {
        invocation.env.push((
            format!("VERDICT_{}", env_name(factor_name)),
            level_value.clone(),
        ));
        if let Some(level) = factor
            .levels
            .iter()
            .find(|level| &level.value == level_value)
        {
            for (name, value) in &level.env {
                invocation.env.push((name.clone(), value.clone()));
            }
        }
    }
    invocation.cwd = workdir;
    invocation.timeout = experiment.sampling.timeout;
    invocation.leftovers = if experiment.sampling.kill_leftovers {
        Leftovers::Kill
    } else {
        Leftovers::Report
    };
    invocation
}

fn to_program(command: &CommandSpec) -> Program {
    match command {
        CommandSpec::Argv(argv) => Program::Argv(argv.clone()),
        CommandSpec::Shell(text) => Program::Shell(text.clone()),
    }
}

/// Sleep for `duration` in short slices; true when cancelled meanwhile.
fn sleep_unless_cancelled(cancel: &Cancel, duration: Duration) -> bool {
    let deadline = std::time::Instant::now() + duration;
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        if cancel.is_cancelled() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    cancel.is_cancelled()
}
