//! One decoding per row type for both backends: each row type is read
//! from the columns of a `sql::Row` of either (`RawRun::read`,
//! `RawBisect::read`, `RawSample::read`, `boot_row`) and turned into its
//! record (`record`, `sample`: statuses, JSON columns, counts, ranges)
//! once. The `SELECT` lists whose column order these follow are here too
//! (`RUN_COLUMNS`, ...), so a column is added in one place. Must not run
//! queries.

use std::collections::BTreeMap;

use verdict_model::{BootStatus, Failure, Placement, RunId, RunKind, RunStatus, Sample};

use crate::StoreError;
use crate::sql::{RawError, Row};
use crate::store::{BisectId, BisectRecord, BootRow, RunRecord};

/// The columns `RawRun::read` reads, in order, from `runs`.
pub(crate) const RUN_COLUMNS: &str = "id, name, kind, status, experiment_text, \
    experiment_sha256, experiment_json, tool_version, seed, host, planned, started_at_ms, \
    finished_at_ms, environment_start, environment_end, command_line, placement, \
    (SELECT COUNT(*) FROM samples WHERE run_id = runs.id), \
    (SELECT COUNT(*) FROM samples WHERE run_id = runs.id AND failed)";

/// The columns `RawBisect::read` reads, in order, from `bisects`.
pub(crate) const BISECT_COLUMNS: &str = "id, repo, good, bad, experiment_text, config_json, \
    status, started_at_ms, finished_at_ms, result_json, \
    (SELECT COUNT(*) FROM bisect_events WHERE bisect_id = bisects.id)";

/// The columns `boot_row` reads, in order, from `boots`.
pub(crate) const BOOT_COLUMNS: &str = "id, slot, attempt, level_key, first_sequence, status, \
    kernel, command_line, nonce, boot_id, kernel_release, accelerator, message, console_tail, \
    started_at_ms, ready_at_ms, finished_at_ms, environment";

/// A run's samples in sequence order, one row per sample and metric row
/// (a sample without metric rows is one row with a NULL metric): the
/// columns `RawSample::read` reads, then the notes (17, 18) and the metric
/// (19, 20). One pass over the run's rows in key order in either store
/// (every join is on the sample's key).
pub(crate) const SAMPLE_ROWS: &str = "SELECT s.sequence, s.cell, s.block, s.warmup, \
    s.started_at_ms, s.wall_seconds, s.user_seconds, s.sys_seconds, s.max_rss_kib, \
    s.exit_code, s.signal, s.timed_out, s.failed, f.reason, f.output_tail, s.builtin_metrics, \
    s.host, n.leftovers_json, n.missing_json, m.name, m.value \
    FROM samples s \
    LEFT JOIN sample_failures f ON f.run_id = s.run_id AND f.sequence = s.sequence \
    LEFT JOIN sample_notes n ON n.run_id = s.run_id AND n.sequence = s.sequence \
    LEFT JOIN sample_metrics m ON m.run_id = s.run_id AND m.sequence = s.sequence \
    WHERE s.run_id = $1 ORDER BY s.sequence";

/// How a backend names a stored value that does not decode.
pub(crate) type Corrupt<'a> = &'a dyn Fn(&str, String) -> StoreError;

/// The columns of a run that `SELECT`s, in order: id, name, kind, status,
/// experiment_text, experiment_sha256, experiment_json, tool_version, seed,
/// host, planned, started_at_ms, finished_at_ms, environment_start,
/// environment_end, command_line, placement, then the counts of its
/// samples and of its failed samples.
pub(crate) struct RawRun {
    id: i64,
    name: String,
    kind: String,
    status: String,
    experiment_text: String,
    experiment_sha256: String,
    experiment_json: String,
    tool_version: String,
    seed: i64,
    host: String,
    planned: i64,
    started_at_ms: i64,
    finished_at_ms: Option<i64>,
    environment_start: String,
    environment_end: Option<String>,
    command_line: String,
    placement: String,
    done: i64,
    failed: i64,
}

impl RawRun {
    pub(crate) fn read(row: Row<'_>) -> Result<RawRun, RawError> {
        Ok(RawRun {
            id: row.integer(0)?,
            name: row.text(1)?,
            kind: row.text(2)?,
            status: row.text(3)?,
            experiment_text: row.text(4)?,
            experiment_sha256: row.text(5)?,
            experiment_json: row.text(6)?,
            tool_version: row.text(7)?,
            seed: row.integer(8)?,
            host: row.text(9)?,
            planned: row.integer(10)?,
            started_at_ms: row.integer(11)?,
            finished_at_ms: row.optional_integer(12)?,
            environment_start: row.text(13)?,
            environment_end: row.optional_text(14)?,
            command_line: row.text(15)?,
            placement: row.text(16)?,
            done: row.integer(17)?,
            failed: row.integer(18)?,
        })
    }

    pub(crate) fn record(self, corrupt: Corrupt<'_>) -> Result<RunRecord, StoreError> {
        let what = format!("run {}", self.id);
        let environment_end = self
            .environment_end
            .map(|text| {
                serde_json::from_str(&text)
                    .map_err(|error| corrupt(&what, format!("environment_end: {error}")))
            })
            .transpose()?;
        Ok(RunRecord {
            id: RunId(self.id),
            status: spelled(&self.status, RunStatus::parse, &what, corrupt)?,
            kind: spelled(&self.kind, RunKind::parse, &what, corrupt)?,
            placement: spelled(&self.placement, Placement::parse, &what, corrupt)?,
            environment_start: serde_json::from_str(&self.environment_start)
                .map_err(|error| corrupt(&what, format!("environment_start: {error}")))?,
            environment_end,
            command_line: serde_json::from_str(&self.command_line)
                .map_err(|error| corrupt(&what, format!("command_line: {error}")))?,
            planned: u64::try_from(self.planned)
                .map_err(|_| corrupt(&what, "negative planned".to_string()))?,
            done: u64::try_from(self.done).unwrap_or(0),
            failed: u64::try_from(self.failed).unwrap_or(0),
            seed: self.seed as u64,
            name: self.name,
            experiment_text: self.experiment_text,
            experiment_sha256: self.experiment_sha256,
            experiment_json: self.experiment_json,
            tool_version: self.tool_version,
            host: self.host,
            started_at_ms: self.started_at_ms,
            finished_at_ms: self.finished_at_ms,
        })
    }
}

/// The columns of a bisection that `SELECT`s, in order: id, repo, good,
/// bad, experiment_text, config_json, status, started_at_ms,
/// finished_at_ms, result_json, then the count of its events.
pub(crate) struct RawBisect {
    id: i64,
    repo: String,
    good: String,
    bad: String,
    experiment_text: String,
    config_json: String,
    status: String,
    started_at_ms: i64,
    finished_at_ms: Option<i64>,
    result_json: Option<String>,
    events: i64,
}

impl RawBisect {
    pub(crate) fn read(row: Row<'_>) -> Result<RawBisect, RawError> {
        Ok(RawBisect {
            id: row.integer(0)?,
            repo: row.text(1)?,
            good: row.text(2)?,
            bad: row.text(3)?,
            experiment_text: row.text(4)?,
            config_json: row.text(5)?,
            status: row.text(6)?,
            started_at_ms: row.integer(7)?,
            finished_at_ms: row.optional_integer(8)?,
            result_json: row.optional_text(9)?,
            events: row.integer(10)?,
        })
    }

    pub(crate) fn record(self, corrupt: Corrupt<'_>) -> Result<BisectRecord, StoreError> {
        let what = format!("bisection {}", self.id);
        Ok(BisectRecord {
            id: BisectId(self.id),
            status: spelled(&self.status, RunStatus::parse, &what, corrupt)?,
            config: serde_json::from_str(&self.config_json)
                .map_err(|error| corrupt(&what, format!("config: {error}")))?,
            result: self
                .result_json
                .map(|text| {
                    serde_json::from_str(&text)
                        .map_err(|error| corrupt(&what, format!("result: {error}")))
                })
                .transpose()?,
            events: u64::try_from(self.events).unwrap_or(0),
            repo: self.repo,
            good: self.good,
            bad: self.bad,
            experiment_text: self.experiment_text,
            started_at_ms: self.started_at_ms,
            finished_at_ms: self.finished_at_ms,
        })
    }
}

/// The columns of a sample that `SELECT`s, in order: sequence, cell,
/// block, warmup, started_at_ms, wall_seconds, user_seconds, sys_seconds,
/// max_rss_kib, exit_code, signal, timed_out, failed, the failure's reason
/// and output tail (NULL without a failure row), builtin_metrics, the host
/// it ran on (NULL: the run's; schema 13).
pub(crate) struct RawSample {
    sequence: i64,
    cell: i64,
    block: i64,
    warmup: bool,
    started_at_ms: i64,
    wall_seconds: f64,
    user_seconds: f64,
    sys_seconds: f64,
    max_rss_kib: i64,
    exit_code: Option<i64>,
    signal: Option<i64>,
    timed_out: bool,
    failed: bool,
    reason: Option<String>,
    output_tail: Option<String>,
    builtin_metrics: i64,
    pub(crate) host: Option<String>,
}

impl RawSample {
    pub(crate) fn read(row: Row<'_>) -> Result<RawSample, RawError> {
        Ok(RawSample {
            sequence: row.integer(0)?,
            cell: row.integer(1)?,
            block: row.integer(2)?,
            warmup: row.boolean(3)?,
            started_at_ms: row.integer(4)?,
            wall_seconds: row.real(5)?,
            user_seconds: row.real(6)?,
            sys_seconds: row.real(7)?,
            max_rss_kib: row.integer(8)?,
            exit_code: row.optional_integer(9)?,
            signal: row.optional_integer(10)?,
            timed_out: row.boolean(11)?,
            failed: row.boolean(12)?,
            reason: row.optional_text(13)?,
            output_tail: row.optional_text(14)?,
            builtin_metrics: row.integer(15)?,
            host: row.optional_text(16)?,
        })
    }

    /// The sample of run `run`, its built-in metrics expanded (its other
    /// metrics are rows of their own, added by the caller).
    pub(crate) fn sample(
        &mut self,
        run: RunId,
        corrupt: Corrupt<'_>,
    ) -> Result<Sample, StoreError> {
        let sequence = self.sequence;
        let bad = |reason: String| corrupt(&format!("sample {sequence} of run {run}"), reason);
        let narrow = |value: i64, name: &str| {
            u32::try_from(value).map_err(|_| bad(format!("{name} {value}")))
        };
        let small = |value: Option<i64>, name: &str| {
            value
                .map(|value| i32::try_from(value).map_err(|_| bad(format!("{name} {value}"))))
                .transpose()
        };
        let mut sample = Sample {
            cell: usize::try_from(self.cell).map_err(|_| bad("negative cell index".to_string()))?,
            block: narrow(self.block, "block")?,
            sequence: narrow(self.sequence, "sequence")?,
            warmup: self.warmup,
            started_at_ms: self.started_at_ms,
            wall_seconds: self.wall_seconds,
            user_seconds: self.user_seconds,
            sys_seconds: self.sys_seconds,
            max_rss_kib: u64::try_from(self.max_rss_kib)
                .map_err(|_| bad("negative max RSS".to_string()))?,
            exit_code: small(self.exit_code, "exit code")?,
            signal: small(self.signal, "signal")?,
            timed_out: self.timed_out,
            metrics: BTreeMap::new(),
            failure: (self.failed || self.reason.is_some()).then(|| Failure {
                reason: self.reason.take().unwrap_or_default(),
                output_tail: self.output_tail.take().unwrap_or_default(),
            }),
            missing: BTreeMap::new(),
            leftovers: Vec::new(),
        };
        crate::builtin::expand(&mut sample, self.builtin_metrics);
        Ok(sample)
    }
}

/// A stored word (a status, kind or placement) as its type; a word that
/// names none of its values is a corrupt row of `what`.
fn spelled<T>(
    text: &str,
    parse: fn(&str) -> Option<T>,
    what: &str,
    corrupt: Corrupt<'_>,
) -> Result<T, StoreError> {
    parse(text).ok_or_else(|| corrupt(what, format!("unknown value `{text}`")))
}

/// A boot from the columns id, slot, attempt, level_key, first_sequence,
/// status, kernel, command_line, nonce, boot_id, kernel_release,
/// accelerator, message, console_tail, started_at_ms, ready_at_ms,
/// finished_at_ms, environment; `Ok(Err(why))` when a boot number is out of
/// range, its status unknown or its environment does not decode.
pub(crate) fn boot_row(row: Row<'_>) -> Result<Result<BootRow, String>, RawError> {
    let mut numbers = [0_u32; 4];
    for (slot, index) in numbers.iter_mut().zip([0, 1, 2, 4]) {
        match u32::try_from(row.integer(index)?) {
            Ok(number) => *slot = number,
            Err(_) => return Ok(Err("a boot number out of range".to_string())),
        }
    }
    let [id, slot, attempt, first_sequence] = numbers;
    let text = row.text(5)?;
    let Some(status) = BootStatus::parse(&text) else {
        return Ok(Err(format!("boot {id} has an unknown status `{text}`")));
    };
    let environment = match row
        .optional_text(17)?
        .map(|text| serde_json::from_str(&text))
        .transpose()
    {
        Ok(environment) => environment,
        Err(error) => return Ok(Err(format!("the environment of boot {id}: {error}"))),
    };
    Ok(Ok(BootRow {
        id,
        slot,
        attempt,
        level_key: row.text(3)?,
        first_sequence,
        status,
        kernel: row.text(6)?,
        command_line: row.text(7)?,
        nonce: row.optional_text(8)?,
        boot_id: row.optional_text(9)?,
        kernel_release: row.optional_text(10)?,
        accelerator: row.optional_text(11)?,
        message: row.optional_text(12)?,
        console_tail: row.optional_text(13)?,
        started_at_ms: row.integer(14)?,
        ready_at_ms: row.optional_integer(15)?,
        finished_at_ms: row.optional_integer(16)?,
        environment,
    }))
}
