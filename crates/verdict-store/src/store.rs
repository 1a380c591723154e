//! The `Store` trait and the records it reads and writes: runs, samples,
//! cross-run selections, run annotations and bisection state. Backend
//! neutral: no SQL here, so a PostgreSQL store can implement the same trait.
//! Must not read clocks: every timestamp is passed in by the caller.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use serde_json::Value;
use verdict_model::{
    AdaptiveRecord, BootStatus, Cell, ComparisonStatus, Environment, Placement, RunId, RunKind,
    RunStatus, Sample, SampleDetails,
};

use crate::StoreError;
use crate::work::WorkRecord;

/// Identifier of a stored bisection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BisectId(pub i64);

impl std::fmt::Display for BisectId {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

/// Everything recorded when a run starts.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    /// Experiment name.
    pub name: String,
    /// What started the run.
    pub kind: RunKind,
    /// Where it measures.
    pub placement: Placement,
    /// The experiment file exactly as read (for `ab`, a generated TOML).
    pub experiment_text: String,
    /// Hex SHA-256 of `experiment_text`.
    pub experiment_sha256: String,
    /// The resolved `Experiment` as JSON (what resume rebuilds the plan from).
    pub experiment_json: String,
    /// `verdict --version` of the binary that created the run.
    pub tool_version: String,
    /// Seed of the schedule's random order.
    pub seed: u64,
    pub host: String,
    /// Planned iterations in total, warmups included.
    pub planned: u64,
    pub started_at_ms: i64,
    pub environment_start: Environment,
    /// The command line (argv) that started the run.
    pub command_line: Vec<String>,
    /// The bisection this run measures a commit for (kind `bisect`).
    pub bisect: Option<BisectId>,
}

/// A sample stored with others in one transaction (`Store::append_samples`).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSample {
    pub sample: Sample,
    pub cell: Cell,
    /// The host it ran on when that is not the run's (shared work).
    pub host: Option<String>,
}

/// One line of `verdict runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: RunId,
    pub name: String,
    pub kind: RunKind,
    pub status: RunStatus,
    /// Where it measured (schema 15; older runs from their annotations).
    pub placement: Placement,
    pub planned: u64,
    /// Stored samples: data, failed and warmup.
    pub done: u64,
    /// Stored samples that failed (warmups included).
    pub failed: u64,
    pub started_at_ms: i64,
    pub finished_at_ms: Option<i64>,
    pub host: String,
}

/// A run with everything recorded about it (samples excepted).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub id: RunId,
    pub name: String,
    pub kind: RunKind,
    pub status: RunStatus,
    /// Where it measured (schema 15; older runs from their annotations).
    pub placement: Placement,
    pub experiment_text: String,
    pub experiment_sha256: String,
    pub experiment_json: String,
    pub tool_version: String,
    pub seed: u64,
    pub host: String,
    pub planned: u64,
    /// Stored samples: data, failed and warmup.
    pub done: u64,
    pub failed: u64,
    pub started_at_ms: i64,
    pub finished_at_ms: Option<i64>,
    pub environment_start: Environment,
    pub environment_end: Option<Environment>,
    pub command_line: Vec<String>,
}

/// Which stored values `verdict compare` wants: one metric of the data
/// samples (not warmups, not failures) whose cell has every listed level,
/// in one run or across all runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selection {
    pub run: Option<RunId>,
    /// (factor, level) pairs that must all match.
    pub levels: Vec<(String, String)>,
    pub metric: String,
}

/// One value picked by a `Selection`.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectedValue {
    pub run: RunId,
    pub sequence: u32,
    pub value: f64,
    pub started_at_ms: i64,
    /// The sample's cell, every factor in experiment order.
    pub levels: Vec<(String, String)>,
}

/// When a run was measuring, coarsely: its recorded start and end and the
/// span of its stored iterations (`Store::iteration_spans` has each one),
/// for finding runs that overlapped on a host.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTimes {
    pub run: RunId,
    pub host: String,
    pub started_at_ms: i64,
    pub finished_at_ms: Option<i64>,
    /// Start of the first stored iteration (warmups and failures included).
    pub first_iteration_ms: Option<i64>,
    /// End of the last-ending stored iteration.
    pub last_iteration_end_ms: Option<i64>,
}

/// A boot as recorded when it starts (kernels as a factor).
#[derive(Debug, Clone, PartialEq)]
pub struct NewBoot {
    /// The boot's place in the schedule; retries share it.
    pub slot: u32,
    /// 0 for the first try of a slot.
    pub attempt: u32,
    /// The boot levels, `factor=level,…`.
    pub level_key: String,
    /// The sequence its first sample will have.
    pub first_sequence: u32,
    pub kernel: String,
    pub command_line: String,
    pub started_at_ms: i64,
}

/// A stored boot.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BootRow {
    /// From 0, in the order the run started its boots.
    pub id: u32,
    pub slot: u32,
    pub attempt: u32,
    pub level_key: String,
    pub first_sequence: u32,
    pub status: BootStatus,
    pub kernel: String,
    pub command_line: String,
    pub nonce: Option<String>,
    pub boot_id: Option<String>,
    pub kernel_release: Option<String>,
    /// `kvm` or `tcg`.
    pub accelerator: Option<String>,
    /// Why the boot failed.
    pub message: Option<String>,
    pub console_tail: Option<String>,
    pub started_at_ms: i64,
    pub ready_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    /// The booted machine's environment (kernel release and version,
    /// /proc/cmdline, CPU, SMT...), read through its target once the boot
    /// was proven (schema 12); `None` before that and for failed boots.
    pub environment: Option<Environment>,
}

impl BootRow {
    /// The boot whose samples include `sequence`: the latest boot that did
    /// not fail and started at or before it (boots in id order).
    pub fn of_sample(boots: &[BootRow], sequence: u32) -> Option<u32> {
        boots
            .iter()
            .filter(|boot| boot.status.booted() && boot.first_sequence <= sequence)
            .max_by_key(|boot| (boot.first_sequence, boot.id))
            .map(|boot| boot.id)
    }
}

/// How many samples of a run captured details (`Store::detail_counts`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DetailCounts {
    /// Samples with monitors.
    pub monitored: u64,
    /// Samples with a profile.
    pub profiled: u64,
}

impl DetailCounts {
    /// Whether there is anything for `verdict explain` to read.
    pub fn any(&self) -> bool {
        self.monitored > 0 || self.profiled > 0
    }
}

/// Everything recorded when a bisection starts.
#[derive(Debug, Clone, PartialEq)]
pub struct NewBisect {
    /// Repository path.
    pub repo: String,
    pub good: String,
    pub bad: String,
    pub experiment_text: String,
    /// The bisection's resolved settings.
    pub config: Value,
    pub started_at_ms: i64,
}

/// One line of the bisection list.
#[derive(Debug, Clone, PartialEq)]
pub struct BisectSummary {
    pub id: BisectId,
    pub repo: String,
    pub good: String,
    pub bad: String,
    pub status: RunStatus,
    pub events: u64,
    pub started_at_ms: i64,
    pub finished_at_ms: Option<i64>,
}

/// A bisection with everything recorded about it (events excepted).
#[derive(Debug, Clone, PartialEq)]
pub struct BisectRecord {
    pub id: BisectId,
    pub repo: String,
    pub good: String,
    pub bad: String,
    pub experiment_text: String,
    pub config: Value,
    pub status: RunStatus,
    pub events: u64,
    pub started_at_ms: i64,
    pub finished_at_ms: Option<i64>,
    pub result: Option<Value>,
}

/// Where runs, samples and bisections live. Every write is committed before
/// the method returns; a process killed afterwards loses nothing that a
/// method reported as written.
pub trait Store {
    /// Records a new run with status `running`.
    fn create_run(&self, run: &NewRun) -> Result<RunId, StoreError>;
    /// Sets the final status, the end time and the environment at the end.
    fn finish_run(
        &self,
        run: RunId,
        status: RunStatus,
        finished_at_ms: i64,
        environment_end: Option<&Environment>,
    ) -> Result<(), StoreError>;
    /// Changes the status; setting `running` (a resume) clears the end time.
    fn set_status(&self, run: RunId, status: RunStatus) -> Result<(), StoreError>;
    /// Changes the planned iteration count (adaptive runs).
    fn set_planned(&self, run: RunId, planned: u64) -> Result<(), StoreError>;
    /// Every run, oldest first.
    fn list_runs(&self) -> Result<Vec<RunSummary>, StoreError>;
    fn run(&self, run: RunId) -> Result<RunRecord, StoreError>;
    /// The most recently created run, if any.
    fn latest_run(&self) -> Result<Option<RunRecord>, StoreError>;
    /// The runs measured on any of `hosts`, oldest first: recorded with
    /// that host, or with blocks of shared work measured there (`verdict
    /// work`). The database filters.
    fn list_runs_on_hosts(&self, hosts: &[String]) -> Result<Vec<RunSummary>, StoreError>;

    /// Stores one iteration in its own transaction. A sequence already stored
    /// for the run is refused with `StoreError::DuplicateSample`.
    fn append_sample(&self, run: RunId, sample: &Sample, cell: &Cell) -> Result<(), StoreError>;
    /// Stores one iteration and what it captured besides its metrics
    /// (monitors, a profile) in one transaction; otherwise as
    /// [`append_sample`](Store::append_sample).
    fn append_sample_details(
        &self,
        run: RunId,
        sample: &Sample,
        cell: &Cell,
        details: &SampleDetails,
    ) -> Result<(), StoreError>;
    /// Stores what an iteration already stored captured (copying a run), in
    /// its own transaction.
    fn append_details(
        &self,
        run: RunId,
        sequence: u32,
        details: &SampleDetails,
    ) -> Result<(), StoreError>;
    /// What each sample of the run captured besides its metrics, by
    /// sequence; samples that captured nothing are absent.
    fn sample_details(&self, run: RunId) -> Result<BTreeMap<u32, SampleDetails>, StoreError>;
    /// How many samples of the run have monitors, and how many a profile.
    fn detail_counts(&self, run: RunId) -> Result<DetailCounts, StoreError>;
    /// Stores several samples of a run in one transaction (all or none):
    /// one commit for a batch (copying runs).
    fn append_samples(&self, run: RunId, samples: &[BatchSample]) -> Result<(), StoreError>;
    /// Calls `each` with every sample of the run in sequence order and the
    /// host it ran on (the run's, unless shared work measured it
    /// elsewhere), reading the rows as they come: memory does not grow with
    /// the run. `each` stops the reading with `ControlFlow::Break`; it must
    /// not use this store (its connection is busy with the rows).
    fn each_sample(
        &self,
        run: RunId,
        each: &mut dyn FnMut(Sample, &str) -> ControlFlow<()>,
    ) -> Result<(), StoreError>;
    /// Every sample of the run in sequence order.
    fn samples(&self, run: RunId) -> Result<Vec<Sample>, StoreError> {
        let mut samples = Vec::new();
        self.each_sample(run, &mut |sample, _| {
            samples.push(sample);
            ControlFlow::Continue(())
        })?;
        Ok(samples)
    }
    /// The sequences of the run's stored samples, in order, read from the
    /// samples' key alone.
    fn sample_sequences(&self, run: RunId) -> Result<Vec<u32>, StoreError>;
    /// Every metric name a sample of the run has (built-in ones kept as
    /// flags included), sorted.
    fn metric_names(&self, run: RunId) -> Result<Vec<String>, StoreError>;
    /// Values of one metric over data samples, in execution order (run, then
    /// sequence).
    fn select_samples(&self, selection: &Selection) -> Result<Vec<SelectedValue>, StoreError>;
    /// The cells of a run in which it stored samples, by cell index, with
    /// their levels as stored.
    fn cells(&self, run: RunId) -> Result<Vec<(usize, Cell)>, StoreError>;
    /// Every run's recorded times and the span of its iterations, by run id
    /// (one aggregate query: cheap on a large database).
    fn run_times(&self) -> Result<Vec<RunTimes>, StoreError>;
    /// (start, end) in milliseconds since the epoch of every stored
    /// iteration of a run (warmups and failures included), by sequence.
    fn iteration_spans(&self, run: RunId) -> Result<Vec<(i64, i64)>, StoreError>;

    /// Records a boot with status `booting`; its id.
    fn create_boot(&self, run: RunId, boot: &NewBoot) -> Result<u32, StoreError>;
    /// Replaces what is known about boot `row.id` of `run` (status, facts,
    /// failure, times).
    fn update_boot(&self, run: RunId, row: &BootRow) -> Result<(), StoreError>;
    /// Every boot of the run, by id; empty for runs without boots.
    fn boots(&self, run: RunId) -> Result<Vec<BootRow>, StoreError>;

    /// Where shared work on the run was measured (`verdict work`): the
    /// hosts and the blocks taken over from a controller whose lease
    /// expired; empty for a run that was not detached.
    fn work_record(&self, run: RunId) -> Result<WorkRecord, StoreError>;

    /// Records (or replaces) the adaptive procedure a run stops with.
    fn record_adaptive_procedure(&self, run: RunId, procedure: &str) -> Result<(), StoreError>;
    /// Records (or replaces) every comparison's state at the run's last
    /// look.
    fn record_adaptive_decisions(
        &self,
        run: RunId,
        decisions: &[ComparisonStatus],
    ) -> Result<(), StoreError>;
    /// What the run recorded about adaptive stopping (empty for a run
    /// with a fixed number of iterations).
    fn adaptive(&self, run: RunId) -> Result<AdaptiveRecord, StoreError>;

    /// Attaches (or replaces) a JSON value under `key`, e.g. `doctor`.
    fn put_annotation(&self, run: RunId, key: &str, value: &Value) -> Result<(), StoreError>;
    fn annotations(&self, run: RunId) -> Result<BTreeMap<String, Value>, StoreError>;

    /// Keeps a kernel config under its SHA-256 (the one environments
    /// record), once: a text already stored is not written again.
    fn put_kernel_config(&self, sha256: &str, source: &str, text: &str) -> Result<(), StoreError>;
    /// The kernel config stored under `sha256`: (source, text).
    fn kernel_config(&self, sha256: &str) -> Result<Option<(String, String)>, StoreError>;
    /// The commit run `run` measures (`verdict run --commit`, the
    /// experiment file's repository HEAD), when one was recorded.
    fn measured_commit(&self, run: RunId) -> Result<Option<String>, StoreError>;

    /// Records a new bisection with status `running`.
    fn create_bisect(&self, bisect: &NewBisect) -> Result<BisectId, StoreError>;
    /// Stores one recorded fact of a bisection; a sequence already stored is
    /// refused with `StoreError::DuplicateBisectEvent`.
    fn append_bisect_event(
        &self,
        bisect: BisectId,
        sequence: u32,
        event: &Value,
    ) -> Result<(), StoreError>;
    /// The runs linked to bisection `bisect` (`NewRun::bisect`), oldest
    /// first.
    fn bisect_runs(&self, bisect: BisectId) -> Result<Vec<RunSummary>, StoreError>;
    /// Every event in sequence order.
    fn bisect_events(&self, bisect: BisectId) -> Result<Vec<(u32, Value)>, StoreError>;
    fn finish_bisect(
        &self,
        bisect: BisectId,
        status: RunStatus,
        finished_at_ms: i64,
        result: &Value,
    ) -> Result<(), StoreError>;
    /// Every bisection, oldest first.
    fn list_bisects(&self) -> Result<Vec<BisectSummary>, StoreError>;
    fn bisect(&self, bisect: BisectId) -> Result<BisectRecord, StoreError>;
    fn latest_bisect(&self) -> Result<Option<BisectRecord>, StoreError>;
}

impl From<RunRecord> for RunSummary {
    fn from(record: RunRecord) -> RunSummary {
        RunSummary {
            id: record.id,
            name: record.name,
            kind: record.kind,
            status: record.status,
            placement: record.placement,
            planned: record.planned,
            done: record.done,
            failed: record.failed,
            started_at_ms: record.started_at_ms,
            finished_at_ms: record.finished_at_ms,
            host: record.host,
        }
    }
}
