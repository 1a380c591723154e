//! Shared work on a PostgreSQL store: `detach` creates a run and its fixed
//! schedule as blocks without measuring; `work` is one controller's loop —
//! take the lease on one of its target hosts, claim the next block (or a
//! block whose controller's lease expired, continuing after its last
//! committed sample), measure it with every sample written under the claim
//! and the lease (renewed by each write and by a heartbeat thread while an
//! iteration runs), until no block is left; the run is then marked
//! complete. Must not hold SQL (verdict-store's `WorkStore` does) or print.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use verdict_exec::{Cancel, Executor};
use verdict_model::{Cell, Environment, Experiment, RunId, Sample, SamplingMode};
use verdict_store::{Claim, NewRun, Store, StoreError, WorkBlock, WorkStore};

use crate::runner::{Engine, EngineError, Observer, StartOptions, check_design};
use crate::schedule::{Slot, fixed_schedule};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64)
}

/// The blocks of a fixed schedule: consecutive slots with one block number.
pub fn schedule_blocks(schedule: &[Slot]) -> Vec<WorkBlock> {
    let mut blocks: Vec<WorkBlock> = Vec::new();
    for (sequence, slot) in schedule.iter().enumerate() {
        match blocks.last_mut() {
            Some(last) if last.block == slot.block => last.slots += 1,
            _ => blocks.push(WorkBlock {
                block: slot.block,
                first_sequence: sequence as u32,
                slots: 1,
            }),
        }
    }
    blocks
}

fn schedule_of(experiment: &Experiment, seed: u64) -> Vec<Slot> {
    fixed_schedule(
        experiment.cells().len(),
        experiment.sampling.iterations,
        experiment.sampling.warmups,
        experiment.sampling.order,
        seed,
    )
}

/// Creates a run and its schedule's blocks without measuring
/// (`verdict run --detach`). Adaptive runs are refused: their blocks are
/// decided as they go.
pub fn detach(
    store: &dyn WorkStore,
    options: &StartOptions,
    host: &str,
    environment: Environment,
) -> Result<RunId, EngineError> {
    check_design(&options.experiment)?;
    if matches!(
        options.experiment.sampling.mode,
        SamplingMode::Adaptive { .. }
    ) {
        return Err(EngineError::Detach {
            experiment: options.experiment.name.clone(),
        });
    }
    let schedule = schedule_of(&options.experiment, options.seed);
    let run = store.create_run(&NewRun {
        name: options.experiment.name.clone(),
        kind: options.kind.clone(),
        experiment_text: options.experiment_text.clone(),
        experiment_sha256: Experiment::text_hash(&options.experiment_text),
        experiment_json: serde_json::to_string(&options.experiment).unwrap_or_default(),
        tool_version: options.tool_version.clone(),
        seed: options.seed,
        host: host.to_string(),
        planned: schedule.len() as u64,
        started_at_ms: now_ms(),
        environment_start: environment,
        command_line: options.command_line.clone(),
        bisect: options.bisect,
    })?;
    store.create_work(run, &schedule_blocks(&schedule))?;
    Ok(run)
}

/// One controller's settings.
#[derive(Debug, Clone)]
pub struct WorkOptions {
    /// This controller's name (unique among the controllers).
    pub worker: String,
    /// The target hosts it may drive (lease keys).
    pub hosts: Vec<String>,
    /// How long a lease lasts without renewal.
    pub lease: Duration,
}

/// What one controller did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkSummary {
    pub blocks: u32,
    /// Blocks taken over from a controller whose lease expired.
    pub taken_over: u32,
    pub samples: usize,
    /// Whether this controller marked the run complete.
    pub completed_run: bool,
    pub cancelled: bool,
}

/// Opens another connection to the same store (for the heartbeat thread).
pub type WorkStoreOpener<'a> = dyn Fn() -> Result<Box<dyn WorkStore>, StoreError> + Sync + 'a;

/// The collaborators of `work`.
pub struct Worker<'a> {
    pub executor: &'a dyn Executor,
    pub store: &'a dyn WorkStore,
    pub open_store: &'a WorkStoreOpener<'a>,
    pub cancel: Cancel,
    pub environment: &'a dyn Fn() -> Environment,
}

impl std::fmt::Debug for Worker<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Worker").finish_non_exhaustive()
    }
}

impl Worker<'_> {
    /// Works on `run` until no block is left (or cancelled).
    pub fn work(
        &self,
        run: RunId,
        options: &WorkOptions,
        observer: &mut dyn Observer,
    ) -> Result<WorkSummary, EngineError> {
        let record = self.store.run(run)?;
        let experiment: Experiment =
            serde_json::from_str(&record.experiment_json).map_err(|error| {
                EngineError::StoredExperiment {
                    run,
                    message: error.to_string(),
                }
            })?;
        check_design(&experiment)?;
        let schedule = schedule_of(&experiment, record.seed);
        let lease_ms = i64::try_from(options.lease.as_millis()).unwrap_or(i64::MAX);
        let mut summary = WorkSummary::default();
        let poll = (options.lease / 4).max(Duration::from_millis(50));
        loop {
            if self.cancel.is_cancelled() {
                summary.cancelled = true;
                return Ok(summary);
            }
            let progress = self.store.work_progress(run)?;
            if progress.pending == 0 && progress.claimed == 0 {
                summary.completed_run = self.store.complete_run(run, now_ms())?;
                return Ok(summary);
            }
            let mut worked = false;
            for host in &options.hosts {
                if !self
                    .store
                    .acquire_lease(host, &options.worker, now_ms(), lease_ms)?
                {
                    continue;
                }
                let claimed = self
                    .store
                    .claim_block(run, &options.worker, host, now_ms())?;
                let Some(block) = claimed else {
                    self.store.release_lease(host, &options.worker)?;
                    continue;
                };
                worked = true;
                let measured =
                    self.measure_block(run, &experiment, &schedule, block, host, options, observer);
                let release = self.store.release_lease(host, &options.worker);
                match measured {
                    Ok((samples, taken_over, finished)) => {
                        release?;
                        summary.blocks += 1;
                        summary.samples += samples;
                        summary.taken_over += u32::from(taken_over);
                        if !finished {
                            summary.cancelled = true;
                            return Ok(summary);
                        }
                    }
                    Err(EngineError::Store(StoreError::LostClaim { .. })) => {
                        observer.note(&format!(
                            "block {} of run {run}: lost to another controller",
                            block.block
                        ));
                    }
                    Err(error) => return Err(error),
                }
            }
            if !worked {
                // Every host leased by someone else, or every block claimed
                // by a live controller: wait for a lease to free or expire.
                std::thread::sleep(poll);
            }
        }
    }

    /// Measures one claimed block: (samples stored now, taken over,
    /// finished rather than cancelled).
    #[expect(clippy::too_many_arguments, reason = "one block's whole context")]
    fn measure_block(
        &self,
        run: RunId,
        experiment: &Experiment,
        schedule: &[Slot],
        block: WorkBlock,
        host: &str,
        options: &WorkOptions,
        observer: &mut dyn Observer,
    ) -> Result<(usize, bool, bool), EngineError> {
        let first = block.first_sequence as usize;
        let slots: Vec<(u32, Slot)> = schedule
            .iter()
            .enumerate()
            .skip(first)
            .take(block.slots as usize)
            .map(|(sequence, slot)| (sequence as u32, *slot))
            .collect();
        let last = first as u32 + block.slots - 1;
        let stored: HashSet<u32> = self
            .store
            .samples(run)?
            .iter()
            .map(|sample| sample.sequence)
            .filter(|sequence| (first as u32..=last).contains(sequence))
            .collect();
        let taken_over = !stored.is_empty();
        if taken_over {
            observer.note(&format!(
                "block {} of run {run}: taken over after sample {}",
                block.block,
                stored.iter().max().copied().unwrap_or(0)
            ));
        }
        let fenced = FencedStore {
            inner: self.store,
            claim: Claim {
                run,
                block: block.block,
                worker: options.worker.clone(),
                host: host.to_string(),
                last_sequence: last,
            },
            lease_ms: i64::try_from(options.lease.as_millis()).unwrap_or(i64::MAX),
            written: RefCell::new(0),
        };
        let engine = Engine {
            executor: self.executor,
            store: &fenced,
            cancel: self.cancel.clone(),
            environment: self.environment,
        };
        let stop = AtomicBool::new(false);
        let finished = std::thread::scope(|scope| {
            let heartbeat = scope.spawn(|| heartbeat(self.open_store, host, options, &stop));
            let finished = engine.run_block(run, experiment, &slots, &stored, observer);
            stop.store(true, Ordering::Relaxed);
            let _ = heartbeat.join();
            finished
        })?;
        let written = *fenced.written.borrow();
        Ok((written, taken_over, finished))
    }
}

/// Renews the lease every third of its length until `stop` (an iteration
/// may last longer than a lease; samples renew it too).
fn heartbeat(open: &WorkStoreOpener<'_>, host: &str, options: &WorkOptions, stop: &AtomicBool) {
    let Ok(store) = open() else {
        return;
    };
    let lease_ms = i64::try_from(options.lease.as_millis()).unwrap_or(i64::MAX);
    let step = Duration::from_millis(20);
    let every = options.lease / 3;
    let mut waited = Duration::ZERO;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(step);
        waited += step;
        if waited >= every {
            waited = Duration::ZERO;
            if !matches!(
                store.renew_lease(host, &options.worker, now_ms(), lease_ms),
                Ok(true)
            ) {
                return;
            }
        }
    }
}

/// The store the engine writes a claimed block's samples through: every
/// sample is a fenced write (`WorkStore::append_claimed_sample`); the rest
/// is the store itself.
struct FencedStore<'a> {
    inner: &'a dyn WorkStore,
    claim: Claim,
    lease_ms: i64,
    written: RefCell<usize>,
}

impl Store for FencedStore<'_> {
    fn append_sample(&self, run: RunId, sample: &Sample, cell: &Cell) -> Result<(), StoreError> {
        debug_assert_eq!(run, self.claim.run);
        self.inner
            .append_claimed_sample(&self.claim, sample, cell, now_ms(), self.lease_ms)?;
        *self.written.borrow_mut() += 1;
        Ok(())
    }
    /// The sample through the fence, then what it captured in a second
    /// transaction (a claimed write takes the sample alone): killed in
    /// between, the sample stands without its monitors and profile.
    fn append_sample_details(
        &self,
        run: RunId,
        sample: &Sample,
        cell: &Cell,
        details: &verdict_model::SampleDetails,
    ) -> Result<(), StoreError> {
        self.append_sample(run, sample, cell)?;
        if details.is_empty() {
            return Ok(());
        }
        self.inner.append_details(run, sample.sequence, details)
    }
    verdict_store::forward_store!(inner; except append_sample);
}

impl FencedStore<'_> {
    /// The shared store every method but `append_sample` goes to.
    fn inner(&self) -> &dyn WorkStore {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_model::Order;

    #[test]
    fn interleaved_blocks_are_consecutive_slots_of_one_block_number() {
        let schedule = fixed_schedule(3, 2, 1, Order::Interleaved, 5);
        let blocks = schedule_blocks(&schedule);
        assert_eq!(blocks.len(), 3);
        assert_eq!(
            blocks
                .iter()
                .map(|block| (block.block, block.first_sequence, block.slots))
                .collect::<Vec<_>>(),
            [(0, 0, 3), (1, 3, 3), (2, 6, 3)]
        );
    }
}
