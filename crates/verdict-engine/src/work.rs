//! Shared work on a PostgreSQL store: `detach` creates a run and its fixed
//! schedule as blocks without measuring; `work` is one controller's loop —
//! take the lease on one of its target hosts, claim blocks in batches (of
//! about half a second of measuring, one commit each, smaller near the
//! run's end) while it holds it (a
//! block whose controller's lease expired is
//! taken over, continuing after its last committed sample; this
//! controller's own claims, after a restart or a lost connection, are
//! resumed), measure each with every sample written under the claim and
//! the lease (renewed by each write and by one heartbeat connection), until
//! no block is left; the run is then marked complete. A store that goes
//! away (a server restart) is waited for with backoff, reconnecting, up to
//! the reconnect timeout, and every request is made again: claims and
//! fenced writes are idempotent, so nothing is lost or stored twice. Must
//! not hold SQL (verdict-store's `WorkStore` does) or print.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use verdict_exec::{Cancel, Target};
use verdict_model::{Cell, Environment, Experiment, RunId, Sample, SampleDetails, SamplingMode};
use verdict_store::{Claim, ClaimedBlock, ClaimedWrite, NewRun, StoreError, WorkBlock, WorkStore};

use crate::adaptive::ComparisonStatus;
use crate::runner::{Engine, EngineError, Observer, SampleSink, StartOptions, check_design};
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
        kind: options.kind,
        // Each controller (`verdict work`) measures on its own machine.
        placement: verdict_model::Placement::Local,
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

/// About how much measuring one claim takes on: blocks are claimed in
/// batches that long (a claim's commit then costs little per sample,
/// while the blocks a controller holds stay few).
const BATCH_WORK: Duration = Duration::from_millis(500);

/// The most blocks one claim takes.
const MAX_BATCH: u32 = 64;

/// Near a run's end a claim takes at most this fraction (1/N) of the
/// blocks still pending.
const TAIL_SHARE: u32 = 16;

/// One controller's settings.
#[derive(Debug, Clone)]
pub struct WorkOptions {
    /// This controller's name (unique among the controllers).
    pub worker: String,
    /// The target hosts it may drive (lease keys).
    pub hosts: Vec<String>,
    /// How long a lease lasts without renewal.
    pub lease: Duration,
    /// How long the store may stay unreachable (a server restart) before
    /// this controller gives up.
    pub reconnect_timeout: Duration,
}

impl WorkOptions {
    fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }
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
    pub executor: &'a dyn Target,
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

/// A run being worked on: what every block needs.
struct Shared<'s> {
    run: RunId,
    experiment: &'s Experiment,
    schedule: &'s [Slot],
    options: &'s WorkOptions,
}

impl Worker<'_> {
    /// Works on `run` until no block is left (or cancelled). The
    /// heartbeat renews this controller's leases from its own connection
    /// meanwhile.
    pub fn work(
        &self,
        run: RunId,
        options: &WorkOptions,
        observer: &mut dyn Observer,
    ) -> Result<WorkSummary, EngineError> {
        let record = self.retrying(options, observer, || self.store.run(run))?;
        if !self.retrying(options, observer, || self.store.is_detached(run))? {
            return Err(EngineError::NotDetached { run });
        }
        let experiment: Experiment =
            serde_json::from_str(&record.experiment_json).map_err(|error| {
                EngineError::StoredExperiment {
                    run,
                    message: error.to_string(),
                }
            })?;
        check_design(&experiment)?;
        let schedule = schedule_of(&experiment, record.seed);
        let shared = Shared {
            run,
            experiment: &experiment,
            schedule: &schedule,
            options,
        };
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let heartbeat = scope.spawn(|| heartbeat(self.open_store, options, &stop));
            let mut progress = RunPosition {
                inner: observer,
                planned: schedule.len(),
                started: false,
            };
            let worked = self.work_loop(&shared, &mut progress);
            stop.store(true, Ordering::Relaxed);
            let _ = heartbeat.join();
            worked
        })
    }

    fn work_loop(
        &self,
        shared: &Shared<'_>,
        observer: &mut RunPosition<'_>,
    ) -> Result<WorkSummary, EngineError> {
        let (run, options) = (shared.run, shared.options);
        let mut summary = WorkSummary::default();
        let poll = (options.lease / 4).clamp(Duration::from_millis(50), Duration::from_secs(2));
        loop {
            if self.cancel.is_cancelled() {
                summary.cancelled = true;
                return Ok(summary);
            }
            let mut worked = false;
            for host in &options.hosts {
                let leased = self.retrying(options, observer, || {
                    self.store
                        .acquire_lease(host, &options.worker, now_ms(), options.lease_ms())
                })?;
                if !leased {
                    continue;
                }
                let measured = self.work_host(shared, host, &mut summary, observer);
                let released = self.retrying(options, observer, || {
                    self.store.release_lease(host, &options.worker)
                });
                worked |= measured?;
                released?;
                if summary.cancelled {
                    return Ok(summary);
                }
            }
            if !worked {
                let progress =
                    self.retrying(options, observer, || self.store.work_progress(run))?;
                if progress.pending == 0 && progress.claimed == 0 {
                    summary.completed_run = self
                        .retrying(options, observer, || self.store.complete_run(run, now_ms()))?;
                    return Ok(summary);
                }
                // Every host leased by someone else, or every block claimed
                // by a live controller: wait for a lease to free or expire.
                sleep_unless_cancelled(&self.cancel, poll);
            }
        }
    }

    /// Claims and measures blocks on `host` (whose lease this controller
    /// holds) until none is left or it is cancelled; whether it measured
    /// any. Blocks are claimed in batches of about `BATCH_WORK` of
    /// measuring (from the blocks measured so far; one block at first, at
    /// most `MAX_BATCH`): one claim's commit serves the batch, and a
    /// controller that stops gives the blocks it did not start back.
    fn work_host(
        &self,
        shared: &Shared<'_>,
        host: &str,
        summary: &mut WorkSummary,
        observer: &mut RunPosition<'_>,
    ) -> Result<bool, EngineError> {
        let (run, options) = (shared.run, shared.options);
        let mut worked = false;
        let mut batch = 1;
        let measured =
            self.measure_batches(shared, host, summary, observer, &mut worked, &mut batch);
        // Blocks claimed and not started (cancelled, lost, failed) go back.
        let given_back = self.retrying(options, observer, || {
            self.store.unclaim_blocks(run, &options.worker, host)
        });
        measured?;
        given_back?;
        Ok(worked)
    }

    fn measure_batches(
        &self,
        shared: &Shared<'_>,
        host: &str,
        summary: &mut WorkSummary,
        observer: &mut RunPosition<'_>,
        worked: &mut bool,
        batch: &mut u32,
    ) -> Result<(), EngineError> {
        let (run, options) = (shared.run, shared.options);
        while !self.cancel.is_cancelled() {
            let claimed = self.retrying(options, observer, || {
                self.store
                    .claim_blocks(run, &options.worker, host, now_ms(), *batch)
            })?;
            if claimed.blocks.is_empty() {
                break;
            }
            *worked = true;
            let started = Instant::now();
            let count = claimed.blocks.len() as u32;
            // Near the end, a batch takes at most a sixteenth of what is
            // left, so the last blocks are shared out instead of waiting
            // in one controller's batch.
            let share = (claimed.pending_after / TAIL_SHARE).max(1);
            for claimed in claimed.blocks {
                if self.cancel.is_cancelled() {
                    summary.cancelled = true;
                    return Ok(());
                }
                let block = claimed.block.block;
                match self.measure_block(shared, claimed, host, observer) {
                    Ok((samples, taken_over, finished)) => {
                        summary.blocks += 1;
                        summary.samples += samples;
                        summary.taken_over += u32::from(taken_over);
                        if !finished {
                            summary.cancelled = true;
                            return Ok(());
                        }
                    }
                    Err(EngineError::Store(StoreError::LostClaim { reason, .. })) => {
                        observer.note(&format!(
                            "block {block} of run {run}: lost to another controller ({reason})"
                        ));
                    }
                    Err(error) => return Err(error),
                }
            }
            let per_block = started.elapsed() / count;
            let by_time = if per_block.is_zero() {
                MAX_BATCH
            } else {
                (BATCH_WORK.as_secs_f64() / per_block.as_secs_f64())
                    .clamp(1.0, f64::from(MAX_BATCH)) as u32
            };
            *batch = by_time.min(share);
        }
        if self.cancel.is_cancelled() {
            summary.cancelled = true;
        }
        Ok(())
    }

    /// Measures one claimed block: (samples stored now, taken over,
    /// finished rather than cancelled).
    fn measure_block(
        &self,
        shared: &Shared<'_>,
        claimed: ClaimedBlock,
        host: &str,
        observer: &mut RunPosition<'_>,
    ) -> Result<(usize, bool, bool), EngineError> {
        let (run, options) = (shared.run, shared.options);
        let block = claimed.block;
        let first = block.first_sequence as usize;
        let slots: Vec<(u32, Slot)> = shared
            .schedule
            .iter()
            .enumerate()
            .skip(first)
            .take(block.slots as usize)
            .map(|(sequence, slot)| (sequence as u32, *slot))
            .collect();
        let last = block.first_sequence + block.slots - 1;
        let stored: HashSet<u32> = claimed.stored.iter().copied().collect();
        let taken_over = claimed.taken_from.is_some();
        observer.claimed(run, shared.experiment, &block);
        match (&claimed.taken_from, claimed.stored.last()) {
            (Some((worker, from_host)), after) => observer.note(&format!(
                "block {} of run {run}: taken over from {worker} on {from_host}{}",
                block.block,
                after.map_or_else(String::new, |sequence| format!(" after sample {sequence}"))
            )),
            (None, Some(sequence)) => observer.note(&format!(
                "block {} of run {run}: resuming this worker's claim after sample {sequence}",
                block.block
            )),
            (None, None) => {}
        }
        let fenced = FencedSink {
            worker: self,
            claim: Claim {
                run,
                block: block.block,
                worker: options.worker.clone(),
                host: host.to_string(),
                last_sequence: last,
            },
            options,
            written: std::cell::Cell::new(0),
        };
        let engine = Engine {
            executor: self.executor,
            store: self.store,
            cancel: self.cancel.clone(),
            environment: self.environment,
        };
        let finished =
            engine.run_block(run, shared.experiment, &slots, &stored, &fenced, observer)?;
        Ok((fenced.written.get(), taken_over, finished))
    }

    /// `request` made again after the store went away, reconnecting with
    /// backoff (100 ms doubling to 2 s) until it answers or the reconnect
    /// timeout passes.
    fn retrying<T>(
        &self,
        options: &WorkOptions,
        observer: &mut dyn Observer,
        mut request: impl FnMut() -> Result<T, StoreError>,
    ) -> Result<T, EngineError> {
        let mut lost_since: Option<Instant> = None;
        let mut delay = Duration::from_millis(100);
        loop {
            match request() {
                Ok(value) => {
                    if let Some(since) = lost_since {
                        observer.note(&format!(
                            "the store is back after {:.1} s",
                            since.elapsed().as_secs_f64()
                        ));
                    }
                    return Ok(value);
                }
                Err(error) if error.is_connection_lost() => {
                    let since = *lost_since.get_or_insert_with(|| {
                        observer.note(&format!(
                            "lost the store ({error}); reconnecting for up to {} s",
                            options.reconnect_timeout.as_secs()
                        ));
                        Instant::now()
                    });
                    if since.elapsed() >= options.reconnect_timeout {
                        return Err(EngineError::StoreUnreachable {
                            seconds: options.reconnect_timeout.as_secs(),
                            source: error,
                        });
                    }
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(Duration::from_secs(2));
                    // Still away: the next request says so again.
                    let _ = self.store.reconnect();
                }
                Err(error) => return Err(error.into()),
            }
        }
    }
}

/// Where a claimed block's samples go: each a fenced write
/// (`WorkStore::append_claimed_sample`), made again after a lost
/// connection (a write whose commit was answered too late is found stored
/// under the claim and counted once).
struct FencedSink<'w, 'a> {
    worker: &'w Worker<'a>,
    claim: Claim,
    options: &'w WorkOptions,
    written: std::cell::Cell<usize>,
}

impl SampleSink for FencedSink<'_, '_> {
    fn append(
        &self,
        run: RunId,
        sample: &Sample,
        cell: &Cell,
        details: &SampleDetails,
    ) -> Result<(), EngineError> {
        debug_assert_eq!(run, self.claim.run);
        let store = self.worker.store;
        let written = self
            .worker
            .retrying(self.options, &mut crate::runner::Silent, || {
                store.append_claimed_sample(
                    &self.claim,
                    sample,
                    cell,
                    details,
                    now_ms(),
                    self.options.lease_ms(),
                )
            })?;
        match written {
            ClaimedWrite::Stored | ClaimedWrite::AlreadyStored => {
                self.written.set(self.written.get() + 1);
            }
        }
        Ok(())
    }
}

/// Renews this controller's leases every third of their length until
/// `stop`, on a connection of its own (an iteration may last longer than
/// a lease; samples renew them too). A store that went away is reconnected
/// at the next renewal.
fn heartbeat(open: &WorkStoreOpener<'_>, options: &WorkOptions, stop: &AtomicBool) {
    let step = Duration::from_millis(20);
    let every = options.lease / 3;
    let mut waited = Duration::ZERO;
    let mut store: Option<Box<dyn WorkStore>> = None;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(step);
        waited += step;
        if waited < every {
            continue;
        }
        waited = Duration::ZERO;
        if store.is_none() {
            store = open().ok();
        }
        if let Some(connection) = &store
            && let Err(error) =
                connection.renew_leases(&options.worker, now_ms(), options.lease_ms())
            && error.is_connection_lost()
        {
            let _ = connection.reconnect();
        }
    }
}

/// Sleeps `duration` in short slices, returning early when cancelled.
fn sleep_unless_cancelled(cancel: &Cancel, duration: Duration) {
    let deadline = Instant::now() + duration;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if cancel.is_cancelled() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// The caller's observer as a whole run's progress: started once, at the
/// first block this controller claims, with the run's planned count; each
/// sample reported at its place in the run (its sequence), not in its
/// block, so the progress line counts the run and its medians are over
/// every sample this controller measured.
struct RunPosition<'o> {
    inner: &'o mut dyn Observer,
    planned: usize,
    started: bool,
}

impl RunPosition<'_> {
    fn claimed(&mut self, run: RunId, experiment: &Experiment, block: &WorkBlock) {
        if !self.started {
            self.started = true;
            self.inner.started(
                run,
                self.planned,
                block.first_sequence as usize,
                &experiment.cells(),
            );
        }
    }
}

impl Observer for RunPosition<'_> {
    fn started(&mut self, _: RunId, _: usize, _: usize, _: &[Cell]) {}

    fn sample(&mut self, sample: &Sample, cells: &[Cell], _done: usize, _planned: usize) {
        self.inner
            .sample(sample, cells, sample.sequence as usize + 1, self.planned);
    }

    fn decisions(&mut self, statuses: &[ComparisonStatus]) {
        self.inner.decisions(statuses);
    }

    fn note(&mut self, message: &str) {
        self.inner.note(message);
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

    /// What an observer was told.
    #[derive(Default)]
    struct Recorded {
        started: Vec<(usize, usize, usize)>,
        samples: Vec<(u32, usize, usize)>,
    }

    impl Observer for Recorded {
        fn started(&mut self, _: RunId, planned: usize, done: usize, cells: &[Cell]) {
            self.started.push((planned, done, cells.len()));
        }
        fn sample(&mut self, sample: &Sample, _: &[Cell], done: usize, planned: usize) {
            self.samples.push((sample.sequence, done, planned));
        }
        fn decisions(&mut self, _: &[ComparisonStatus]) {}
        fn note(&mut self, _: &str) {}
    }

    /// The progress of `verdict work` counts the run, not the block: it
    /// starts once with the run's plan and every cell, and each sample is
    /// at its place in the run.
    #[test]
    fn work_progress_counts_the_run_and_starts_once_with_every_cell() {
        let experiment = Experiment::parse(
            "name = \"p\"\ncommand = [\"true\"]\n\n[factors]\nmode = [\"a\", \"b\"]\n",
            "p.toml",
        )
        .unwrap();
        let mut recorded = Recorded::default();
        let mut position = RunPosition {
            inner: &mut recorded,
            planned: 40,
            started: false,
        };
        let cells = experiment.cells();
        for (first_sequence, sequences) in [(12, [12, 13]), (30, [30, 31])] {
            let block = WorkBlock {
                block: first_sequence / 2,
                first_sequence,
                slots: 2,
            };
            position.claimed(RunId(1), &experiment, &block);
            for (done, sequence) in sequences.into_iter().enumerate() {
                let mut sample: Sample = serde_json::from_str(
                    r#"{"cell": 0, "block": 0, "sequence": 0, "warmup": false,
                        "started_at_ms": 0, "wall_seconds": 0.1, "user_seconds": 0.0,
                        "sys_seconds": 0.0, "max_rss_kib": 0, "exit_code": 0,
                        "signal": null, "timed_out": false, "metrics": {}, "failure": null}"#,
                )
                .unwrap();
                sample.sequence = sequence;
                // The block-local count the run loop reports.
                position.sample(&sample, &cells, done + 1, 2);
            }
        }
        assert_eq!(recorded.started, [(40, 12, 2)]);
        assert_eq!(
            recorded.samples,
            [(12, 13, 40), (13, 14, 40), (30, 31, 40), (31, 32, 40)]
        );
    }
}
