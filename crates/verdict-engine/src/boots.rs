//! Runs with the boot as the unit of the schedule (a VM target, kernels as
//! a factor). `[sampling] boots = K` rounds; each round boots every
//! combination of boot levels once, in an order drawn from the recorded
//! seed ([`boot_schedule`]), and inside a boot runs the interleaved blocks
//! of the cells having that boot's levels. Each boot is recorded before it
//! starts (the store's `boots`), proven by the [`Booter`] (nonce, options,
//! release, boot id) and by the `verify` of every level entered, before
//! anything is measured; a boot that fails is recorded with its console's
//! tail, tried again up to `boot_retries` times, then stops the run or is
//! skipped (`on_boot_failure`). `--resume` continues from the first boot
//! whose iterations are not all stored, in a fresh boot. The booted
//! machine's own environment (kernel, command line, CPU, SMT) is read
//! through its target after each proof and stored in the boot's row, and
//! the booted kernel's config the capture found (the guest's own, or the
//! image's neighbour on the controller) is stored once under its hash, so
//! `compare --config-diff` compares boot levels.
//! Kernels built from source (a level's or the VM's `build`) are built
//! before the first boot (`boot_builds`); each boot of one carries its
//! provenance in its environment.
//!
//! Must not: start QEMU or any process itself (the booter and the target
//! do), or store a sample of a boot that did not prove itself.

use crate::runner::{
    Engine, EngineError, Levels, LoopContext, LoopEnd, Observer, RunOutcome, StartOptions,
    check_design, now_ms, planned_iterations, stored_experiment,
};
use crate::schedule::{Slot, block_order};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use verdict_doctor::environment::KernelConfig;
use verdict_exec::{BootSpec, Booter, Cancel, ExecError, Target};
use verdict_model::{
    BootPlan, BootStatus, Environment, Experiment, OnBootFailure, RunId, RunStatus, Sample,
    TargetSpec,
};
use verdict_store::{BootRow, NewBoot, NewRun, Store};

use crate::boot_builds::{RunKernels, build_kernels};
use crate::kernel_build::KernelBuilder;

/// One boot of the schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct BootSlot {
    /// Place in the schedule, from 0.
    pub slot: u32,
    /// The round (0..K).
    pub round: u32,
    /// The level index of each boot factor, in factor order.
    pub levels: Vec<usize>,
    /// `preempt=full` (the boot factors' levels), `(all)` without any.
    pub level_key: String,
    /// The iterations in this boot with their sequence numbers.
    pub iterations: Vec<(Slot, u32)>,
}

/// The whole schedule of a run on a VM target: K rounds, each a seeded
/// random order of every combination of boot levels (so boots of one
/// level are never all together), each boot's iterations the interleaved
/// blocks (warmups first) of the cells with its levels. Pure; the same
/// seed gives the same schedule, which resume relies on.
pub fn boot_schedule(experiment: &Experiment, seed: u64) -> Vec<BootSlot> {
    let boot_factors = experiment.boot_factors();
    let mut combinations: Vec<Vec<usize>> = vec![Vec::new()];
    for &factor in &boot_factors {
        let count = experiment.factors[factor].levels.len();
        combinations = combinations
            .into_iter()
            .flat_map(|prefix| {
                (0..count).map(move |level| {
                    let mut next = prefix.clone();
                    next.push(level);
                    next
                })
            })
            .collect();
    }
    let cells = experiment.cells();
    let per_boot = experiment.sampling.warmups + experiment.sampling.iterations;
    let mut slots = Vec::new();
    let mut sequence = 0u32;
    for round in 0..experiment.sampling.boots.max(1) {
        let mut order = combinations.clone();
        let mut generator = ChaCha8Rng::seed_from_u64(
            seed ^ 0xB007_B007_0000_0000 ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        order.shuffle(&mut generator);
        for levels in order {
            let slot = slots.len() as u32;
            let members: Vec<usize> = cells
                .iter()
                .enumerate()
                .filter(|(_, cell)| {
                    boot_factors.iter().zip(&levels).all(|(&factor, &level)| {
                        cell.levels[factor].1 == experiment.factors[factor].levels[level].value
                    })
                })
                .map(|(index, _)| index)
                .collect();
            let mut iterations = Vec::new();
            for block in 0..per_boot {
                let global_block = slot * per_boot + block;
                for cell in block_order(seed, global_block, &members) {
                    iterations.push((
                        Slot {
                            cell,
                            block: global_block,
                            warmup: block < experiment.sampling.warmups,
                        },
                        sequence,
                    ));
                    sequence += 1;
                }
            }
            let level_key = if boot_factors.is_empty() {
                "(all)".to_string()
            } else {
                boot_factors
                    .iter()
                    .zip(&levels)
                    .map(|(&factor, &level)| {
                        format!(
                            "{}={}",
                            experiment.factors[factor].name,
                            experiment.factors[factor].levels[level].value
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            };
            slots.push(BootSlot {
                slot,
                round,
                levels,
                level_key,
                iterations,
            });
        }
    }
    slots
}

/// The kernel, initrd and command line (or hook) of a boot slot: from the
/// VM's settings, or from `[target] boot` on ssh hosts.
pub fn boot_plan(experiment: &Experiment, slot: &BootSlot) -> Option<BootPlan> {
    let boots = experiment
        .boot_factors()
        .into_iter()
        .zip(&slot.levels)
        .filter_map(|(factor, &level)| experiment.factors[factor].levels[level].boot.as_ref());
    match &experiment.target {
        TargetSpec::Vm(vm) => Some(BootPlan::combine(vm, boots)),
        TargetSpec::BootedHost { boot, .. } => Some(BootPlan::combine_host(boot, boots)),
        TargetSpec::Local | TargetSpec::Hosts(_) => None,
    }
}

/// What a boot row names as its kernel: the image, or the hook's argv.
fn plan_kernel(plan: &BootPlan) -> String {
    match (&plan.hook, &plan.kernel) {
        (Some(hook), _) => format!("hook: {}", hook.join(" ")),
        (None, Some(kernel)) => kernel.display().to_string(),
        (None, None) => String::new(),
    }
}

/// A booted machine as its capture found it: its environment, and the
/// kernel config whose hash the environment records, when one was read
/// (stored once per distinct config, for `compare --config-diff`).
#[derive(Debug, Clone, Default)]
pub struct BootCapture {
    pub environment: Environment,
    pub kernel_config: Option<KernelConfig>,
}

/// Reads a booted machine's environment through its target; the boot's
/// spec names the kernel image it booted (whose neighbour on the
/// controller may hold its config).
pub type BootEnvironment<'a> = dyn Fn(&dyn Target, &BootSpec) -> BootCapture + 'a;

/// Runs experiments whose unit is the boot; see the module documentation.
pub struct BootRunner<'a> {
    pub booter: &'a mut dyn Booter,
    pub store: &'a dyn Store,
    pub cancel: Cancel,
    /// The controller's environment (each boot's kernel is in its record).
    pub environment: &'a dyn Fn() -> Environment,
    /// The booted machine's environment, read through its target after
    /// the boot is proven; stored in the boot's row (`BootRow::environment`).
    pub boot_environment: &'a BootEnvironment<'a>,
    /// Builds the kernels levels name with `build`; `None` refuses them.
    pub kernels: Option<&'a KernelBuilder>,
}

impl std::fmt::Debug for BootRunner<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("BootRunner").finish_non_exhaustive()
    }
}

/// How one boot slot ended.
enum SlotEnd {
    Measured,
    Skipped,
    Cancelled,
}

impl BootRunner<'_> {
    /// Creates the run and executes it.
    pub fn start(
        &mut self,
        options: &StartOptions,
        annotations: &[(&str, serde_json::Value)],
        observer: &mut dyn Observer,
    ) -> Result<RunOutcome, EngineError> {
        check_design(&options.experiment)?;
        let environment = (self.environment)();
        let host = match (options.experiment.target.vm(), self.booter.host_name()) {
            (Some(vm), _) => match (
                &vm.kernel,
                vm.build.as_ref().and_then(|build| build.tree.as_ref()),
            ) {
                (Some(kernel), _) => format!("vm:{}", kernel.display()),
                (None, Some(tree)) => format!("vm:build of {}", tree.display()),
                (None, None) => "vm:build".to_string(),
            },
            (None, Some(host)) => host,
            (None, None) => environment.hostname.clone().unwrap_or_default(),
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
        self.execute(run, &options.experiment, options.seed, observer)
    }

    /// Continues an interrupted, failed or killed run from its first boot
    /// whose iterations are not all stored.
    pub fn resume(
        &mut self,
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
        // A boot the controller left behind (killed while booting or
        // measuring) ended with it.
        for mut row in self.store.boots(run)? {
            if row.status.unfinished() {
                row.status = BootStatus::Interrupted;
                row.message = Some("the controller stopped during this boot".to_string());
                row.finished_at_ms = Some(now_ms());
                self.store.update_boot(run, &row)?;
            }
        }
        self.store.set_status(run, RunStatus::Running)?;
        self.execute(run, &experiment, record.seed, observer)
    }

    fn execute(
        &mut self,
        run: RunId,
        experiment: &Experiment,
        seed: u64,
        observer: &mut dyn Observer,
    ) -> Result<RunOutcome, EngineError> {
        self.store.put_annotation(
            run,
            "process",
            &serde_json::json!({ "pid": std::process::id() }),
        )?;
        let schedule = boot_schedule(experiment, seed);
        self.store.put_annotation(
            run,
            "boot_schedule",
            &serde_json::Value::Array(
                schedule
                    .iter()
                    .map(|slot| serde_json::Value::String(slot.level_key.clone()))
                    .collect(),
            ),
        )?;
        let cells = experiment.cells();
        let planned = planned_iterations(experiment);
        let mut samples = self.store.samples(run)?;
        let mut result = Ok(LoopEnd::Finished);
        // The kernels first: the observer's clock (its ETA) starts with
        // the boots, not with the builds before them.
        let kernels = match build_kernels(
            self.kernels,
            self.store,
            run,
            experiment,
            &schedule,
            observer,
        ) {
            Ok(kernels) => kernels,
            Err(EngineError::BuildCancelled { .. }) => {
                result = Ok(LoopEnd::Cancelled);
                RunKernels::default()
            }
            Err(error) => {
                result = Err(error);
                RunKernels::default()
            }
        };
        observer.started(run, planned, samples.len(), &cells);
        if result.is_ok()
            && experiment.sampling.on_boot_failure == OnBootFailure::Stop
            && let Some((levels, failure)) = kernels.first_failure(&schedule, experiment)
        {
            result = Err(EngineError::KernelBuild {
                run,
                levels,
                failure,
            });
        }
        let slots: &[BootSlot] = if matches!(result, Ok(LoopEnd::Finished)) {
            &schedule
        } else {
            &[]
        };
        for slot in slots {
            match self.run_slot(
                run,
                experiment,
                slot,
                &kernels,
                &cells,
                planned,
                &mut samples,
                observer,
            ) {
                Ok(SlotEnd::Measured | SlotEnd::Skipped) => {}
                Ok(SlotEnd::Cancelled) => {
                    result = Ok(LoopEnd::Cancelled);
                    break;
                }
                Err(error) => {
                    result = Err(error);
                    break;
                }
            }
        }
        self.booter.shut_down();
        let environment = (self.environment)();
        let failed = samples
            .iter()
            .filter(|sample| sample.failure.is_some())
            .count();
        let summary = |status| RunOutcome {
            run,
            status,
            recorded: samples.len(),
            failed,
            decisions: Vec::new(),
        };
        match result {
            Ok(LoopEnd::Finished) => {
                self.store
                    .finish_run(run, RunStatus::Complete, now_ms(), Some(&environment))?;
                Ok(summary(RunStatus::Complete))
            }
            Ok(LoopEnd::Cancelled) => {
                self.store
                    .finish_run(run, RunStatus::Interrupted, now_ms(), Some(&environment))?;
                Ok(summary(RunStatus::Interrupted))
            }
            Err(error) => {
                self.store
                    .finish_run(run, RunStatus::Failed, now_ms(), Some(&environment))?;
                Err(error)
            }
        }
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "the run's parts, passed down once"
    )]
    fn run_slot(
        &mut self,
        run: RunId,
        experiment: &Experiment,
        slot: &BootSlot,
        kernels: &RunKernels,
        cells: &[verdict_model::Cell],
        planned: usize,
        samples: &mut Vec<Sample>,
        observer: &mut dyn Observer,
    ) -> Result<SlotEnd, EngineError> {
        let stored: BTreeSet<u32> = samples.iter().map(|sample| sample.sequence).collect();
        let remaining: Vec<(Slot, u32)> = slot
            .iterations
            .iter()
            .copied()
            .filter(|(_, sequence)| !stored.contains(sequence))
            .collect();
        if remaining.is_empty() {
            return Ok(SlotEnd::Measured);
        }
        let boots = self.store.boots(run)?;
        let failures = boots
            .iter()
            .filter(|boot| boot.slot == slot.slot && boot.status == BootStatus::Failed)
            .count() as u32;
        let retries = experiment.sampling.boot_retries;
        if experiment.sampling.on_boot_failure == OnBootFailure::Skip && failures > retries {
            return Ok(SlotEnd::Skipped);
        }
        if self.cancel.is_cancelled() {
            return Ok(SlotEnd::Cancelled);
        }
        let mut plan =
            boot_plan(experiment, slot).ok_or(EngineError::NeedsBooter { run: Some(run) })?;
        // A level whose kernel build failed (recorded) is skipped.
        let kernel_build = match kernels.resolve(&mut plan) {
            Ok(build) => build,
            Err(message) => {
                observer.note(&format!(
                    "skipping boot slot {} ({}): its kernel build {message}",
                    slot.slot + 1,
                    slot.level_key
                ));
                return Ok(SlotEnd::Skipped);
            }
        };
        let spec = BootSpec {
            kernel: plan.kernel.clone(),
            initrd: plan.initrd.clone(),
            command_line: plan.cmdline.clone(),
            hook: plan.hook.clone(),
            modules: plan.modules.clone(),
        };
        let boot = SlotBoot {
            slot,
            kernel: plan_kernel(&plan),
            plan: &plan,
            spec: &spec,
            kernel_build,
            remaining: &remaining,
        };
        let mut attempt = boots.iter().filter(|boot| boot.slot == slot.slot).count() as u32;
        let mut tries = 0u32;
        loop {
            let (id, message, console_tail) = match self.attempt_boot(
                run, experiment, &boot, attempt, cells, planned, samples, observer,
            )? {
                BootAttempt::Ended(end) => return Ok(end),
                BootAttempt::Failed {
                    id,
                    message,
                    console_tail,
                } => (id, message, console_tail),
            };
            if tries < retries && !self.cancel.is_cancelled() {
                tries += 1;
                attempt += 1;
                observer.note(&format!(
                    "trying boot slot {} again ({tries} of {retries})",
                    slot.slot + 1
                ));
                continue;
            }
            if self.cancel.is_cancelled() {
                return Ok(SlotEnd::Cancelled);
            }
            return match experiment.sampling.on_boot_failure {
                OnBootFailure::Skip => {
                    observer.note(&format!(
                        "skipping boot slot {} ({}): on_boot_failure = \"skip\"",
                        slot.slot + 1,
                        slot.level_key
                    ));
                    Ok(SlotEnd::Skipped)
                }
                OnBootFailure::Stop => Err(EngineError::BootFailed {
                    run,
                    boot: id,
                    level_key: slot.level_key.clone(),
                    message,
                    console_tail,
                }),
            };
        }
    }

    /// One boot of `boot`'s slot, recorded as a boot row: boot, prove,
    /// measure the slot's remaining iterations. A failed boot (or levels
    /// refused before any sample) is recorded as failed and returned for
    /// the caller's retry policy.
    #[expect(
        clippy::too_many_arguments,
        reason = "the run's parts, passed down once"
    )]
    fn attempt_boot(
        &mut self,
        run: RunId,
        experiment: &Experiment,
        boot: &SlotBoot<'_>,
        attempt: u32,
        cells: &[verdict_model::Cell],
        planned: usize,
        samples: &mut Vec<Sample>,
        observer: &mut dyn Observer,
    ) -> Result<BootAttempt, EngineError> {
        let slot = boot.slot;
        let plan = boot.plan;
        let first_sequence = boot.remaining[0].1;
        let id = self.store.create_boot(
            run,
            &NewBoot {
                slot: slot.slot,
                attempt,
                level_key: slot.level_key.clone(),
                first_sequence,
                kernel: boot.kernel.clone(),
                command_line: plan.cmdline.clone(),
                started_at_ms: now_ms(),
            },
        )?;
        let mut row = BootRow {
            id,
            slot: slot.slot,
            attempt,
            level_key: slot.level_key.clone(),
            first_sequence,
            status: BootStatus::Booting,
            kernel: boot.kernel.clone(),
            command_line: plan.cmdline.clone(),
            ..BootRow::default()
        };
        observer.note(&format!(
            "boot {id} (slot {} of {}, round {}): {}{}",
            slot.slot + 1,
            planned_slots(experiment),
            slot.round + 1,
            slot.level_key,
            if plan.cmdline.is_empty() {
                String::new()
            } else {
                format!(" `{}`", plan.cmdline)
            }
        ));
        let (message, console_tail) = match self.booter.boot(boot.spec) {
            Ok(record) => {
                self.prove(run, boot, &record, &mut row, observer)?;
                let before = samples.len();
                let measured = self.measure(
                    run,
                    experiment,
                    boot.remaining,
                    cells,
                    planned,
                    samples,
                    observer,
                );
                match measured {
                    Ok(LoopEnd::Finished) => {
                        self.end_boot(run, &mut row, BootStatus::Complete, None)?;
                        return Ok(BootAttempt::Ended(SlotEnd::Measured));
                    }
                    Ok(LoopEnd::Cancelled) => {
                        self.end_boot(run, &mut row, BootStatus::Interrupted, None)?;
                        return Ok(BootAttempt::Ended(SlotEnd::Cancelled));
                    }
                    // Entering the boot's levels failed before any
                    // sample (a verify that did not match): the boot is
                    // refused like a wrong kernel, never data.
                    Err(error @ (EngineError::Verify { .. } | EngineError::Setup { .. }))
                        if samples.len() == before =>
                    {
                        (error.to_string(), self.booter.console_tail())
                    }
                    Err(error) => {
                        self.end_boot(
                            run,
                            &mut row,
                            BootStatus::Interrupted,
                            Some(error.to_string()),
                        )?;
                        return Err(error);
                    }
                }
            }
            Err(ExecError::BootFailed {
                message,
                console_tail,
            }) => (message, console_tail),
            Err(ExecError::Cancelled) => {
                self.end_boot(run, &mut row, BootStatus::Interrupted, None)?;
                return Ok(BootAttempt::Ended(SlotEnd::Cancelled));
            }
            Err(source) => {
                self.end_boot(run, &mut row, BootStatus::Failed, Some(source.to_string()))?;
                return Err(EngineError::Boot {
                    level_key: slot.level_key.clone(),
                    source,
                });
            }
        };
        self.booter.shut_down();
        row.console_tail = Some(console_tail.clone());
        self.end_boot(run, &mut row, BootStatus::Failed, Some(message.clone()))?;
        observer.note(&format!("boot {id} failed ({}): {message}", slot.level_key));
        Ok(BootAttempt::Failed {
            id,
            message,
            console_tail,
        })
    }

    /// The boot proved itself: its facts and environment are recorded.
    fn prove(
        &self,
        run: RunId,
        boot: &SlotBoot<'_>,
        record: &verdict_exec::BootRecord,
        row: &mut BootRow,
        observer: &mut dyn Observer,
    ) -> Result<(), EngineError> {
        row.status = BootStatus::Proven;
        row.nonce = record.nonce.clone();
        row.boot_id = Some(record.boot_id.clone());
        row.kernel_release = Some(record.kernel_release.clone());
        row.accelerator = Some(record.accelerator.clone());
        row.ready_at_ms = Some(now_ms());
        row.environment = self.capture(boot.spec)?.map(|environment| Environment {
            kernel_build: boot.kernel_build.clone(),
            ..environment
        });
        self.store.update_boot(run, row)?;
        observer.note(&format!(
            "boot {} proven: {} ({}), boot id {}, {}, ready in {:.1}s",
            row.id,
            record.kernel_release,
            record.accelerator,
            record.boot_id,
            match &record.nonce {
                Some(nonce) => format!("nonce {nonce} in /proc/cmdline"),
                None => "no nonce (the hook did not pass it on): boot id and options".to_string(),
            },
            record.boot_time.as_secs_f64()
        ));
        Ok(())
    }

    /// Records how boot `row` ended.
    fn end_boot(
        &self,
        run: RunId,
        row: &mut BootRow,
        status: BootStatus,
        message: Option<String>,
    ) -> Result<(), EngineError> {
        row.status = status;
        if message.is_some() {
            row.message = message;
        }
        row.finished_at_ms = Some(now_ms());
        self.store.update_boot(run, row)?;
        Ok(())
    }
}

/// What every boot of one slot shares: its plan, what the boot row names
/// as the kernel, the kernel build it boots and the iterations left.
struct SlotBoot<'a> {
    slot: &'a BootSlot,
    plan: &'a BootPlan,
    spec: &'a BootSpec,
    kernel: String,
    kernel_build: Option<verdict_model::KernelBuild>,
    remaining: &'a [(Slot, u32)],
}

/// How one boot of a slot ended.
enum BootAttempt {
    /// The slot is done with (measured or cancelled).
    Ended(SlotEnd),
    /// The boot failed, or its levels were refused: recorded; the retry
    /// policy decides.
    Failed {
        id: u32,
        message: String,
        console_tail: String,
    },
}

impl BootRunner<'_> {
    /// The proven boot's environment, read through its target; the kernel
    /// config the capture found is stored once under its hash.
    fn capture(&self, spec: &BootSpec) -> Result<Option<Environment>, EngineError> {
        let Some(capture) = self
            .booter
            .target()
            .map(|target| (self.boot_environment)(target, spec))
        else {
            return Ok(None);
        };
        if let Some(config) = &capture.kernel_config {
            self.store.put_kernel_config(
                &verdict_doctor::environment::config_sha256(&config.text),
                &config.source,
                &config.text,
            )?;
        }
        Ok(Some(capture.environment))
    }

    /// The remaining iterations of a proven boot, on the booted target;
    /// every level is entered afresh (setup and verify) before its first
    /// iteration.
    #[expect(
        clippy::too_many_arguments,
        reason = "the run's parts, passed down once"
    )]
    fn measure(
        &self,
        run: RunId,
        experiment: &Experiment,
        remaining: &[(Slot, u32)],
        cells: &[verdict_model::Cell],
        planned: usize,
        samples: &mut Vec<Sample>,
        observer: &mut dyn Observer,
    ) -> Result<LoopEnd, EngineError> {
        let target = self
            .booter
            .target()
            .ok_or(EngineError::NeedsBooter { run: Some(run) })?;
        let engine = Engine {
            executor: target,
            store: self.store,
            cancel: self.cancel.clone(),
            environment: self.environment,
        };
        let mut levels = Levels {
            current: vec![None; experiment.factors.len()],
        };
        let mut context = LoopContext {
            engine: &engine,
            run,
            experiment,
            cells,
            // The binary keeps only an absolute workdir from the file for a
            // VM (the controller's directories are not in the guest).
            workdir: experiment.workdir.clone(),
            planned,
            observer,
            capture: Default::default(),
            sink: &crate::runner::StoreSink(self.store),
        };
        for (slot, sequence) in remaining {
            if let LoopEnd::Cancelled = context.run_one(*slot, *sequence, samples, &mut levels)? {
                context.finish_capture();
                return Ok(LoopEnd::Cancelled);
            }
        }
        context.finish_capture();
        Ok(LoopEnd::Finished)
    }
}

fn planned_slots(experiment: &Experiment) -> usize {
    let combinations: usize = experiment
        .boot_factors()
        .iter()
        .map(|&factor| experiment.factors[factor].levels.len())
        .product();
    combinations * experiment.sampling.boots.max(1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(boots: u32) -> Experiment {
        Experiment::parse(
            &format!(
                "name = \"t\"\ncommand = [\"true\"]\n[factors]\n\
                 preempt = [{{ value = \"none\", boot = {{ cmdline = \"preempt=none\" }} }}, {{ value = \"full\", boot = {{ cmdline = \"preempt=full\" }} }}]\n\
                 load = [\"1\", \"2\"]\n\
                 [sampling]\niterations = 3\nwarmups = 1\nboots = {boots}\n\
                 [target]\nvm = {{ kernel = \"/vmlinuz\", cmdline = \"quiet\" }}\n"
            ),
            "t.toml",
        )
        .unwrap()
    }

    #[test]
    fn every_round_boots_every_level_once_in_a_seeded_order() {
        let experiment = experiment(4);
        let schedule = boot_schedule(&experiment, 7);
        assert_eq!(schedule.len(), 8);
        for round in schedule.chunks(2) {
            let mut keys: Vec<_> = round.iter().map(|slot| slot.level_key.as_str()).collect();
            keys.sort_unstable();
            assert_eq!(keys, ["preempt=full", "preempt=none"]);
        }
        // Seeded: the same seed, the same order; some seed another order.
        assert_eq!(schedule, boot_schedule(&experiment, 7));
        let order = |seed| -> Vec<String> {
            boot_schedule(&experiment, seed)
                .into_iter()
                .map(|slot| slot.level_key)
                .collect()
        };
        assert!((0..20).any(|seed| order(seed) != order(7)));
        // Inside a boot: (1 warmup + 3) blocks of its 2 cells, sequences
        // contiguous over the whole run, cells only of the boot's level.
        let cells = experiment.cells();
        let mut next = 0;
        for slot in &schedule {
            assert_eq!(slot.iterations.len(), 8);
            for (iteration, sequence) in &slot.iterations {
                assert_eq!(*sequence, next);
                next += 1;
                assert_eq!(
                    cells[iteration.cell].level("preempt"),
                    Some(&slot.level_key[8..])
                );
            }
            assert_eq!(
                slot.iterations
                    .iter()
                    .filter(|(iteration, _)| iteration.warmup)
                    .count(),
                2
            );
        }
        assert_eq!(next as usize, planned_iterations(&experiment));
        let plan = boot_plan(&experiment, &schedule[0]).unwrap();
        assert_eq!(plan.cmdline, format!("quiet {}", schedule[0].level_key));
    }
}
