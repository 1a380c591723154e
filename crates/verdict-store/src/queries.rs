//! The `Store` methods, written once for both backends (`impl<B: Backend>
//! Store for B`: `SqliteStore`, `PostgresStore` and `Database`, which
//! hands each statement to the store it opened): runs, samples and their
//! one write path (`SampleWrite`: the checks, the built-in flags, the
//! rows), annotations, kernel configs and bisections. The SQL is one text
//! for both dialects (`$N` parameters; where they differ, `Dialect` says
//! how). Must not read clocks or decide anything about experiments.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use serde_json::Value;
use verdict_model::{
    AdaptiveRecord, Cell, ComparisonStatus, Environment, RunId, RunStatus, Sample, SampleDetails,
};

use crate::StoreError;
use crate::builtin;
use crate::details;
use crate::rows::{BISECT_COLUMNS, RUN_COLUMNS, RawBisect, RawRun, RawSample, SAMPLE_ROWS};
use crate::sql::{Backend, Param, Row, Violation, params, to_json};
use crate::store::{
    BatchSample, BisectId, BisectRecord, BisectSummary, BootRow, DetailCounts, NewBisect, NewBoot,
    NewRun, RunRecord, RunSummary, RunTimes, SelectedValue, Selection, Store,
};
use crate::work::WorkRecord;

const INSERT_SAMPLE: &str = "INSERT INTO samples (run_id, sequence, cell, block, warmup, failed, \
    started_at_ms, wall_seconds, user_seconds, sys_seconds, max_rss_kib, exit_code, signal, \
    timed_out, builtin_metrics, host) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";

/// One sample on its way into the store: checked (every number finite,
/// every integer in range), its built-in metrics turned into flags, and
/// the parameters of its rows. The one preamble of every sample write:
/// `append_sample`, `append_samples` and shared work's fenced write.
pub(crate) struct SampleWrite<'a> {
    pub(crate) run: RunId,
    pub(crate) sample: &'a Sample,
    pub(crate) cell_index: i64,
    pub(crate) max_rss_kib: i64,
    pub(crate) builtin_metrics: i64,
    /// The metrics that are rows of their own (not flags).
    pub(crate) metric_names: Vec<String>,
    pub(crate) metric_values: Vec<f64>,
    /// What it captured besides its metrics (monitors, a profile), written
    /// with it.
    pub(crate) details: Option<&'a SampleDetails>,
}

impl<'a> SampleWrite<'a> {
    pub(crate) fn new(
        backend: &impl Backend,
        run: RunId,
        sample: &'a Sample,
    ) -> Result<SampleWrite<'a>, StoreError> {
        let what = || format!("sample {} of run {run}", sample.sequence);
        for (name, value) in [
            ("wall_seconds", sample.wall_seconds),
            ("user_seconds", sample.user_seconds),
            ("sys_seconds", sample.sys_seconds),
        ]
        .into_iter()
        .chain(
            sample
                .metrics
                .iter()
                .map(|(name, value)| (name.as_str(), *value)),
        ) {
            if !value.is_finite() {
                return Err(backend.invalid(what(), format!("`{name}` is {value}, not a number")));
            }
        }
        let max_rss_kib = i64::try_from(sample.max_rss_kib).map_err(|_| {
            backend.invalid(
                what(),
                format!("max RSS {} KiB too large", sample.max_rss_kib),
            )
        })?;
        let cell_index = i64::try_from(sample.cell).map_err(|_| {
            backend.invalid(what(), format!("cell index {} too large", sample.cell))
        })?;
        // Built-in metrics equal to the sample's own column are a flag, not
        // a row (schema v3); bitwise equality keeps this lossless.
        let builtin_metrics = builtin::flags(sample);
        let (metric_names, metric_values) = sample
            .metrics
            .iter()
            .filter(|(name, _)| !builtin::is_flagged(name, builtin_metrics))
            .map(|(name, value)| (name.clone(), *value))
            .unzip();
        Ok(SampleWrite {
            run,
            sample,
            cell_index,
            max_rss_kib,
            builtin_metrics,
            metric_names,
            metric_values,
            details: None,
        })
    }

    /// The same write with what the sample captured (nothing when empty).
    pub(crate) fn with_details(mut self, details: &'a SampleDetails) -> SampleWrite<'a> {
        self.details = (!details.is_empty()).then_some(details);
        self
    }

    /// Whether the sample is its `samples` row alone (no failure, notes or
    /// metric rows).
    pub(crate) fn is_one_row(&self) -> bool {
        self.sample.failure.is_none()
            && self.sample.leftovers.is_empty()
            && self.sample.missing.is_empty()
            && self.metric_names.is_empty()
            && self.details.is_none()
    }

    pub(crate) fn what(&self) -> String {
        format!("sample {} of run {}", self.sample.sequence, self.run)
    }

    /// The parameters `$1`..`$16` of its `samples` row, in
    /// `INSERT_SAMPLE`'s column order.
    pub(crate) fn row_parameters<'p>(&'p self, host: Option<&'p str>) -> [Param<'p>; 16] {
        let sample = self.sample;
        [
            Param::from(self.run.0),
            Param::from(sample.sequence),
            Param::from(self.cell_index),
            Param::from(sample.block),
            Param::from(sample.warmup),
            Param::from(sample.failure.is_some()),
            Param::from(sample.started_at_ms),
            Param::from(sample.wall_seconds),
            Param::from(sample.user_seconds),
            Param::from(sample.sys_seconds),
            Param::from(self.max_rss_kib),
            Param::from(sample.exit_code),
            Param::from(sample.signal),
            Param::from(sample.timed_out),
            Param::from(self.builtin_metrics),
            Param::from(host),
        ]
    }

    /// The sample's rows (sample, failure, notes, metrics) in the
    /// caller's transaction; a sequence already stored is
    /// `DuplicateSample`.
    fn insert(&self, backend: &impl Backend, host: Option<&str>) -> Result<(), StoreError> {
        let operation = format!("store {}", self.what());
        let run = self.run;
        let sample = self.sample;
        backend
            .execute_raw(INSERT_SAMPLE, &self.row_parameters(host))
            .map_err(|error| match error.violation() {
                Some(Violation::Unique) => StoreError::DuplicateSample {
                    path: backend.name(),
                    run,
                    sequence: sample.sequence,
                },
                Some(Violation::ForeignKey) => backend.unknown_run(run),
                None => error.into_store(backend.name(), &operation),
            })?;
        if let Some(failure) = &sample.failure {
            backend.execute(
                &operation,
                "INSERT INTO sample_failures (run_id, sequence, reason, output_tail) \
                 VALUES ($1, $2, $3, $4)",
                params![
                    run.0,
                    sample.sequence,
                    &failure.reason,
                    &failure.output_tail
                ],
            )?;
        }
        if !sample.leftovers.is_empty() || !sample.missing.is_empty() {
            backend.execute(
                &operation,
                "INSERT INTO sample_notes (run_id, sequence, leftovers_json, missing_json) \
                 VALUES ($1, $2, $3, $4)",
                params![
                    run.0,
                    sample.sequence,
                    &to_json(&sample.leftovers),
                    &to_json(&sample.missing)
                ],
            )?;
        }
        for (name, value) in self.metric_names.iter().zip(&self.metric_values) {
            backend.execute(
                &operation,
                "INSERT INTO sample_metrics (run_id, sequence, name, value) \
                 VALUES ($1, $2, $3, $4)",
                params![run.0, sample.sequence, name, *value],
            )?;
        }
        if let Some(captured) = self.details {
            details::insert(backend, run, sample.sequence, captured, &operation)?;
        }
        Ok(())
    }
}

/// One sample (with its details, if any) in its own transaction, or in
/// one INSERT when it is a single row of a cell already stored.
fn append_one(
    backend: &impl Backend,
    write: SampleWrite<'_>,
    cell: &Cell,
) -> Result<(), StoreError> {
    let run = write.run;
    let known = backend
        .known_cells()
        .borrow()
        .get(&(run.0, write.cell_index))
        == Some(cell);
    if known && write.is_one_row() {
        // One INSERT, atomic on its own: no BEGIN/COMMIT round trips.
        write.insert(backend, None)?;
    } else {
        backend.transaction(&format!("store {}", write.what()), || {
            store_cell(backend, run, write.cell_index, cell, &write.what())?;
            write.insert(backend, None)
        })?;
    }
    remember_cell(backend, run, write.cell_index, cell);
    Ok(())
}

/// A run's cell as JSON, and the error for a cell index that already
/// means other levels.
pub(crate) fn cell_mismatch(
    backend: &impl Backend,
    what: &str,
    cell_index: i64,
    stored: &str,
    cell: &Cell,
) -> StoreError {
    backend.invalid(
        what,
        format!(
            "cell {cell_index} is stored with levels {stored}, not {}",
            to_json(&cell.levels)
        ),
    )
}

/// Records a run's cell the first time one of its samples is stored;
/// afterwards checks that the same index still means the same levels
/// (once per connection: `known_cells`).
fn store_cell(
    backend: &impl Backend,
    run: RunId,
    cell_index: i64,
    cell: &Cell,
    what: &str,
) -> Result<(), StoreError> {
    if let Some(known) = backend.known_cells().borrow().get(&(run.0, cell_index)) {
        return if known == cell {
            Ok(())
        } else {
            Err(cell_mismatch(
                backend,
                what,
                cell_index,
                &to_json(&known.levels),
                cell,
            ))
        };
    }
    let operation = format!("store {what}");
    let levels_json = to_json(&cell.levels);
    let stored = backend.first_row(
        &operation,
        "SELECT levels_json FROM run_cells WHERE run_id = $1 AND cell = $2",
        params![run.0, cell_index],
        |row| row.text(0),
    )?;
    match stored {
        Some(stored) if stored == levels_json => return Ok(()),
        Some(stored) => return Err(cell_mismatch(backend, what, cell_index, &stored, cell)),
        None => {}
    }
    backend
        .execute_raw(
            "INSERT INTO run_cells (run_id, cell, levels_json) VALUES ($1, $2, $3)",
            params![run.0, cell_index, &levels_json],
        )
        .map_err(|error| match error.violation() {
            Some(Violation::ForeignKey) => backend.unknown_run(run),
            _ => error.into_store(backend.name(), &operation),
        })?;
    for (factor, level) in &cell.levels {
        backend
            .execute_raw(
                "INSERT INTO cell_levels (run_id, cell, factor, level) VALUES ($1, $2, $3, $4)",
                params![run.0, cell_index, factor, level],
            )
            .map_err(|error| match error.violation() {
                Some(Violation::Unique) => {
                    backend.invalid(what, format!("factor `{factor}` twice in its cell"))
                }
                _ => error.into_store(backend.name(), &operation),
            })?;
    }
    Ok(())
}

/// Remembers cells whose rows a committed write stored or checked (only
/// after the commit: a rolled-back transaction may have taken them with
/// it).
pub(crate) fn remember_cell(backend: &impl Backend, run: RunId, cell_index: i64, cell: &Cell) {
    backend
        .known_cells()
        .borrow_mut()
        .entry((run.0, cell_index))
        .or_insert_with(|| cell.clone());
}

fn query_runs<B: Backend>(
    backend: &B,
    filter: &str,
    parameters: &[Param<'_>],
) -> Result<Vec<RunRecord>, StoreError> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM runs {filter}");
    backend
        .rows("read runs", &sql, parameters, RawRun::read)?
        .into_iter()
        .map(|raw| raw.record(&|what, reason| backend.corrupt(what, reason)))
        .collect()
}

fn query_bisects<B: Backend>(
    backend: &B,
    filter: &str,
    parameters: &[Param<'_>],
) -> Result<Vec<BisectRecord>, StoreError> {
    let sql = format!("SELECT {BISECT_COLUMNS} FROM bisects {filter}");
    backend
        .rows("read bisections", &sql, parameters, RawBisect::read)?
        .into_iter()
        .map(|raw| raw.record(&|what, reason| backend.corrupt(what, reason)))
        .collect()
}

fn update_run(
    backend: &impl Backend,
    run: RunId,
    operation: &str,
    sql: &str,
    parameters: &[Param<'_>],
) -> Result<(), StoreError> {
    if backend.execute(operation, sql, parameters)? == 0 {
        return Err(backend.unknown_run(run));
    }
    Ok(())
}

/// Reads `SAMPLE_ROWS`' rows of one run into samples: a sample's first
/// row is the sample, every row adds its metric.
struct SampleAssembly<'e> {
    run: RunId,
    run_host: String,
    current: Option<(Sample, Option<String>)>,
    each: &'e mut dyn FnMut(Sample, &str) -> ControlFlow<()>,
}

impl SampleAssembly<'_> {
    fn row(&mut self, backend: &impl Backend, row: Row<'_>) -> Result<ControlFlow<()>, StoreError> {
        let sequence = row
            .integer(0)
            .map_err(|error| error.into_store(backend.name(), "read samples"))?;
        let same = self
            .current
            .as_ref()
            .is_some_and(|(sample, _)| i64::from(sample.sequence) == sequence);
        if !same {
            if let ControlFlow::Break(()) = self.emit() {
                return Ok(ControlFlow::Break(()));
            }
            self.current = Some(self.start(backend, row)?);
        }
        let read = |error: crate::sql::RawError| error.into_store(backend.name(), "read samples");
        if let Some(name) = row.optional_text(19).map_err(read)? {
            let value = row.real(20).map_err(read)?;
            if let Some((sample, _)) = &mut self.current {
                sample.metrics.insert(name, value);
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    fn start(
        &self,
        backend: &impl Backend,
        row: Row<'_>,
    ) -> Result<(Sample, Option<String>), StoreError> {
        let read = |error: crate::sql::RawError| error.into_store(backend.name(), "read samples");
        let mut raw = RawSample::read(row).map_err(read)?;
        let mut sample = raw.sample(self.run, &|what, reason| backend.corrupt(what, reason))?;
        if let Some(leftovers) = row.optional_text(17).map_err(read)? {
            let what = format!("notes of sample {} of run {}", sample.sequence, self.run);
            let missing = row.optional_text(18).map_err(read)?.unwrap_or_default();
            sample.leftovers =
                serde_json::from_str(&leftovers).map_err(|error| backend.corrupt(&what, error))?;
            sample.missing =
                serde_json::from_str(&missing).map_err(|error| backend.corrupt(&what, error))?;
        }
        Ok((sample, raw.host.take()))
    }

    fn emit(&mut self) -> ControlFlow<()> {
        match self.current.take() {
            Some((sample, host)) => (self.each)(sample, host.as_deref().unwrap_or(&self.run_host)),
            None => ControlFlow::Continue(()),
        }
    }
}

impl<B: Backend> Store for B {
    fn create_run(&self, run: &NewRun) -> Result<RunId, StoreError> {
        let planned = i64::try_from(run.planned).map_err(|_| {
            self.invalid("a run", format!("planned count {} too large", run.planned))
        })?;
        let environment_start = self.environment_json("a run", &run.environment_start)?;
        let command_line = to_json(&crate::location::redact_arguments(&run.command_line));
        let uuid = crate::identity::new_run_uuid();
        let id = self.transaction("create a run", || {
            self.first_row(
                "create a run",
                "INSERT INTO runs (name, kind, status, experiment_text, experiment_sha256, \
                    experiment_json, tool_version, seed, host, planned, started_at_ms, \
                    environment_start, command_line, uuid, bisect_id, placement) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
                    $16) \
                 RETURNING id",
                params![
                    &run.name,
                    run.kind,
                    RunStatus::Running,
                    &run.experiment_text,
                    &run.experiment_sha256,
                    &run.experiment_json,
                    &run.tool_version,
                    run.seed as i64,
                    &run.host,
                    planned,
                    run.started_at_ms,
                    &environment_start,
                    &command_line,
                    &uuid,
                    run.bisect.map(|bisect| bisect.0),
                    run.placement,
                ],
                |row| row.integer(0),
            )
        })?;
        id.map(RunId)
            .ok_or_else(|| self.corrupt("a new run", "no id returned"))
    }

    fn finish_run(
        &self,
        run: RunId,
        status: RunStatus,
        finished_at_ms: i64,
        environment_end: Option<&Environment>,
    ) -> Result<(), StoreError> {
        let environment_end = environment_end
            .map(|environment| self.environment_json(&format!("run {run}"), environment))
            .transpose()?;
        update_run(
            self,
            run,
            &format!("finish run {run}"),
            "UPDATE runs SET status = $2, finished_at_ms = $3, environment_end = $4 \
             WHERE id = $1",
            params![
                run.0,
                status.as_str(),
                finished_at_ms,
                environment_end.as_deref()
            ],
        )
    }

    fn set_status(&self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        update_run(
            self,
            run,
            &format!("set the status of run {run}"),
            "UPDATE runs SET status = $2, \
                finished_at_ms = CASE WHEN $2 = 'running' THEN NULL ELSE finished_at_ms END \
             WHERE id = $1",
            params![run.0, status.as_str()],
        )
    }

    fn set_planned(&self, run: RunId, planned: u64) -> Result<(), StoreError> {
        let planned = i64::try_from(planned).map_err(|_| {
            self.invalid(
                format!("run {run}"),
                format!("planned count {planned} too large"),
            )
        })?;
        update_run(
            self,
            run,
            &format!("set the planned count of run {run}"),
            "UPDATE runs SET planned = $2 WHERE id = $1",
            params![run.0, planned],
        )
    }

    fn list_runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        Ok(query_runs(self, "ORDER BY id", &[])?
            .into_iter()
            .map(RunSummary::from)
            .collect())
    }

    fn run(&self, run: RunId) -> Result<RunRecord, StoreError> {
        query_runs(self, "WHERE id = $1", params![run.0])?
            .pop()
            .ok_or_else(|| self.unknown_run(run))
    }

    fn latest_run(&self) -> Result<Option<RunRecord>, StoreError> {
        Ok(query_runs(self, "ORDER BY id DESC LIMIT 1", &[])?.pop())
    }

    fn list_runs_on_hosts(&self, hosts: &[String]) -> Result<Vec<RunSummary>, StoreError> {
        let mut runs = Vec::new();
        for host in hosts {
            runs.extend(query_runs(
                self,
                "WHERE host = $1 \
                    OR EXISTS (SELECT 1 FROM work_blocks w WHERE w.run_id = runs.id AND w.host = $1) \
                    OR EXISTS (SELECT 1 FROM work_takeovers t WHERE t.run_id = runs.id \
                        AND t.from_host = $1) \
                 ORDER BY id",
                params![host],
            )?);
        }
        runs.sort_by_key(|run| run.id);
        runs.dedup_by_key(|run| run.id);
        Ok(runs.into_iter().map(RunSummary::from).collect())
    }

    fn append_sample(&self, run: RunId, sample: &Sample, cell: &Cell) -> Result<(), StoreError> {
        append_one(self, SampleWrite::new(self, run, sample)?, cell)
    }

    fn append_sample_details(
        &self,
        run: RunId,
        sample: &Sample,
        cell: &Cell,
        captured: &SampleDetails,
    ) -> Result<(), StoreError> {
        let write = SampleWrite::new(self, run, sample)?.with_details(captured);
        append_one(self, write, cell)
    }

    fn append_details(
        &self,
        run: RunId,
        sequence: u32,
        captured: &SampleDetails,
    ) -> Result<(), StoreError> {
        let operation = format!("store what sample {sequence} of run {run} captured");
        self.transaction(&operation, || {
            details::insert(self, run, sequence, captured, &operation)
        })
    }

    fn sample_details(&self, run: RunId) -> Result<BTreeMap<u32, SampleDetails>, StoreError> {
        details::read(self, run)
    }

    fn detail_counts(&self, run: RunId) -> Result<DetailCounts, StoreError> {
        details::count(self, run)
    }

    fn append_samples(&self, run: RunId, samples: &[BatchSample]) -> Result<(), StoreError> {
        if samples.is_empty() {
            return Ok(());
        }
        let operation = format!("store {} samples of run {run}", samples.len());
        self.transaction(&operation, || {
            for batched in samples {
                let write = SampleWrite::new(self, run, &batched.sample)?;
                store_cell(self, run, write.cell_index, &batched.cell, &write.what())?;
                write.insert(self, batched.host.as_deref())?;
            }
            Ok(())
        })?;
        for batched in samples {
            remember_cell(self, run, batched.sample.cell as i64, &batched.cell);
        }
        Ok(())
    }

    fn each_sample(
        &self,
        run: RunId,
        each: &mut dyn FnMut(Sample, &str) -> ControlFlow<()>,
    ) -> Result<(), StoreError> {
        let run_host = self
            .first_row(
                "look up a run",
                "SELECT host FROM runs WHERE id = $1",
                params![run.0],
                |row| row.text(0),
            )?
            .ok_or_else(|| self.unknown_run(run))?;
        let mut assembly = SampleAssembly {
            run,
            run_host,
            current: None,
            each,
        };
        let mut stopped = false;
        self.each_row(
            &format!("read the samples of run {run}"),
            SAMPLE_ROWS,
            params![run.0],
            &mut |row| {
                let flow = assembly.row(self, row)?;
                stopped = flow.is_break();
                Ok(flow)
            },
        )?;
        if !stopped {
            let _ = assembly.emit();
        }
        Ok(())
    }

    fn sample_sequences(&self, run: RunId) -> Result<Vec<u32>, StoreError> {
        self.run_exists(run)?;
        let sequences = self.rows(
            &format!("read the samples of run {run}"),
            "SELECT sequence FROM samples WHERE run_id = $1 ORDER BY sequence",
            params![run.0],
            |row| row.integer(0),
        )?;
        sequences
            .into_iter()
            .map(|sequence| {
                u32::try_from(sequence).map_err(|_| {
                    self.corrupt(
                        &format!("sample {sequence} of run {run}"),
                        "sequence out of range",
                    )
                })
            })
            .collect()
    }

    fn metric_names(&self, run: RunId) -> Result<Vec<String>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the metrics of run {run}");
        let mut names: BTreeSet<String> = self
            .rows(
                &operation,
                "SELECT DISTINCT name FROM sample_metrics WHERE run_id = $1",
                params![run.0],
                |row| row.text(0),
            )?
            .into_iter()
            .collect();
        for flags in self.rows(
            &operation,
            "SELECT DISTINCT builtin_metrics FROM samples WHERE run_id = $1",
            params![run.0],
            |row| row.integer(0),
        )? {
            names.extend(builtin::names(flags).map(str::to_string));
        }
        Ok(names.into_iter().collect())
    }

    fn select_samples(&self, selection: &Selection) -> Result<Vec<SelectedValue>, StoreError> {
        if let Some(run) = selection.run {
            self.run_exists(run)?;
        }
        // A built-in metric may be a flag on the sample (schema v3) rather
        // than a `sample_metrics` row.
        let value = builtin::value_sql(&selection.metric);
        let mut sql = format!(
            "SELECT s.run_id, s.sequence, {value}, s.started_at_ms, c.levels_json \
             FROM samples s \
             LEFT JOIN sample_metrics m \
                ON m.run_id = s.run_id AND m.sequence = s.sequence AND m.name = $1 \
             JOIN run_cells c ON c.run_id = s.run_id AND c.cell = s.cell \
             WHERE NOT s.warmup AND NOT s.failed AND ({value}) IS NOT NULL",
        );
        let mut texts: Vec<String> = Vec::new();
        let mut next = 2;
        if selection.run.is_some() {
            sql.push_str(" AND s.run_id = $2");
            next = 3;
        }
        for (factor, level) in &selection.levels {
            let (filter, values) =
                crate::filters::level_filter(self.dialect(), factor, level, next);
            next += values.len();
            sql.push_str(&filter);
            texts.extend(values);
        }
        sql.push_str(" ORDER BY s.run_id, s.sequence");
        let mut parameters: Vec<Param<'_>> = vec![Param::from(&selection.metric)];
        if let Some(run) = selection.run {
            parameters.push(Param::from(run.0));
        }
        parameters.extend(texts.iter().map(Param::from));
        let operation = format!("select metric `{}`", selection.metric);
        let rows = self.rows(&operation, &sql, &parameters, |row| {
            Ok((
                row.integer(0)?,
                row.integer(1)?,
                row.real(2)?,
                row.integer(3)?,
                row.text(4)?,
            ))
        })?;
        rows.into_iter()
            .map(|(run, sequence, value, started_at_ms, levels_json)| {
                let what = format!("sample {sequence} of run {run}");
                Ok(SelectedValue {
                    run: RunId(run),
                    sequence: u32::try_from(sequence)
                        .map_err(|_| self.corrupt(&what, "sequence out of range"))?,
                    value,
                    started_at_ms,
                    levels: serde_json::from_str(&levels_json)
                        .map_err(|error| self.corrupt(&what, error))?,
                })
            })
            .collect()
    }

    fn cells(&self, run: RunId) -> Result<Vec<(usize, Cell)>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the cells of run {run}");
        self.rows(
            &operation,
            "SELECT cell, levels_json FROM run_cells WHERE run_id = $1 ORDER BY cell",
            params![run.0],
            |row| Ok((row.integer(0)?, row.text(1)?)),
        )?
        .into_iter()
        .map(|(index, levels_json)| {
            let what = format!("cell {index} of run {run}");
            let index =
                usize::try_from(index).map_err(|_| self.corrupt(&what, "negative index"))?;
            let levels =
                serde_json::from_str(&levels_json).map_err(|error| self.corrupt(&what, error))?;
            Ok((index, Cell { levels }))
        })
        .collect()
    }

    fn run_times(&self) -> Result<Vec<RunTimes>, StoreError> {
        self.rows(
            "read when runs measured",
            "SELECT r.id, r.host, r.started_at_ms, r.finished_at_ms, s.first, s.last \
             FROM runs r LEFT JOIN ( \
                SELECT run_id, MIN(started_at_ms) AS first, \
                    MAX(started_at_ms + CAST(ROUND(wall_seconds * 1000) AS BIGINT)) AS last \
                FROM samples GROUP BY run_id) s ON s.run_id = r.id \
             ORDER BY r.id",
            &[],
            |row| {
                Ok(RunTimes {
                    run: RunId(row.integer(0)?),
                    host: row.text(1)?,
                    started_at_ms: row.integer(2)?,
                    finished_at_ms: row.optional_integer(3)?,
                    first_iteration_ms: row.optional_integer(4)?,
                    last_iteration_end_ms: row.optional_integer(5)?,
                })
            },
        )
    }

    fn iteration_spans(&self, run: RunId) -> Result<Vec<(i64, i64)>, StoreError> {
        self.run_exists(run)?;
        self.rows(
            &format!("read when run {run} measured"),
            "SELECT started_at_ms, \
                started_at_ms + CAST(ROUND(wall_seconds * 1000) AS BIGINT) \
             FROM samples WHERE run_id = $1 ORDER BY sequence",
            params![run.0],
            |row| {
                let (start, end) = (row.integer(0)?, row.integer(1)?);
                Ok((start, end.max(start)))
            },
        )
    }

    fn create_boot(&self, run: RunId, boot: &NewBoot) -> Result<u32, StoreError> {
        crate::boots::create(self, run, boot)
    }

    fn update_boot(&self, run: RunId, row: &BootRow) -> Result<(), StoreError> {
        crate::boots::update(self, run, row)
    }

    fn boots(&self, run: RunId) -> Result<Vec<BootRow>, StoreError> {
        crate::boots::rows(self, run)
    }

    fn work_record(&self, run: RunId) -> Result<WorkRecord, StoreError> {
        crate::work::record(self, run)
    }

    fn record_adaptive_procedure(&self, run: RunId, procedure: &str) -> Result<(), StoreError> {
        crate::adaptive::put(
            self,
            run,
            crate::adaptive::PUT_PROCEDURE,
            procedure,
            "procedure",
        )
    }

    fn record_adaptive_decisions(
        &self,
        run: RunId,
        decisions: &[ComparisonStatus],
    ) -> Result<(), StoreError> {
        crate::adaptive::put(
            self,
            run,
            crate::adaptive::PUT_DECISIONS,
            &to_json(decisions),
            "decisions",
        )
    }

    fn adaptive(&self, run: RunId) -> Result<AdaptiveRecord, StoreError> {
        crate::adaptive::read(self, run)
    }

    fn put_annotation(&self, run: RunId, key: &str, value: &Value) -> Result<(), StoreError> {
        let operation = format!("store annotation `{key}` of run {run}");
        self.execute_raw(
            "INSERT INTO run_annotations (run_id, key, value_json) VALUES ($1, $2, $3) \
             ON CONFLICT (run_id, key) DO UPDATE SET value_json = excluded.value_json",
            params![run.0, key, &to_json(value)],
        )
        .map_err(|error| match error.violation() {
            Some(Violation::ForeignKey) => self.unknown_run(run),
            _ => error.into_store(self.name(), &operation),
        })?;
        Ok(())
    }

    fn annotations(&self, run: RunId) -> Result<BTreeMap<String, Value>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the annotations of run {run}");
        self.rows(
            &operation,
            "SELECT key, value_json FROM run_annotations WHERE run_id = $1",
            params![run.0],
            |row| Ok((row.text(0)?, row.text(1)?)),
        )?
        .into_iter()
        .map(|(key, text)| {
            let value = serde_json::from_str(&text).map_err(|error| {
                self.corrupt(&format!("annotation `{key}` of run {run}"), error)
            })?;
            Ok((key, value))
        })
        .collect()
    }

    fn put_kernel_config(&self, sha256: &str, source: &str, text: &str) -> Result<(), StoreError> {
        let operation = format!("store kernel config {sha256}");
        let stored = self.first_row(
            &operation,
            "SELECT 1 FROM kernel_configs WHERE sha256 = $1",
            params![sha256],
            |_| Ok(()),
        )?;
        if stored.is_some() {
            return Ok(());
        }
        self.execute(
            &operation,
            "INSERT INTO kernel_configs (sha256, source, text) VALUES ($1, $2, $3) \
             ON CONFLICT (sha256) DO NOTHING",
            params![sha256, source, text],
        )?;
        Ok(())
    }

    fn kernel_config(&self, sha256: &str) -> Result<Option<(String, String)>, StoreError> {
        self.first_row(
            &format!("read kernel config {sha256}"),
            "SELECT source, text FROM kernel_configs WHERE sha256 = $1",
            params![sha256],
            |row| Ok((row.text(0)?, row.text(1)?)),
        )
    }

    fn measured_commit(&self, run: RunId) -> Result<Option<String>, StoreError> {
        crate::history::HistoryStore::run_commit(self, run)
    }

    fn create_bisect(&self, bisect: &NewBisect) -> Result<BisectId, StoreError> {
        let id = self.transaction("create a bisection", || {
            self.first_row(
                "create a bisection",
                "INSERT INTO bisects (repo, good, bad, experiment_text, config_json, \
                    status, started_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                params![
                    &bisect.repo,
                    &bisect.good,
                    &bisect.bad,
                    &bisect.experiment_text,
                    &to_json(&bisect.config),
                    RunStatus::Running.as_str(),
                    bisect.started_at_ms,
                ],
                |row| row.integer(0),
            )
        })?;
        id.map(BisectId)
            .ok_or_else(|| self.corrupt("a new bisection", "no id returned"))
    }

    fn append_bisect_event(
        &self,
        bisect: BisectId,
        sequence: u32,
        event: &Value,
    ) -> Result<(), StoreError> {
        let operation = format!("store event {sequence} of bisection {bisect}");
        self.execute_raw(
            "INSERT INTO bisect_events (bisect_id, sequence, event_json) VALUES ($1, $2, $3)",
            params![bisect.0, sequence, &to_json(event)],
        )
        .map_err(|error| match error.violation() {
            Some(Violation::Unique) => StoreError::DuplicateBisectEvent {
                path: self.name(),
                bisect,
                sequence,
            },
            Some(Violation::ForeignKey) => self.unknown_bisect(bisect),
            None => error.into_store(self.name(), &operation),
        })?;
        Ok(())
    }

    fn bisect_runs(&self, bisect: BisectId) -> Result<Vec<RunSummary>, StoreError> {
        self.bisect_exists(bisect)?;
        Ok(
            query_runs(self, "WHERE bisect_id = $1 ORDER BY id", params![bisect.0])?
                .into_iter()
                .map(RunSummary::from)
                .collect(),
        )
    }

    fn bisect_events(&self, bisect: BisectId) -> Result<Vec<(u32, Value)>, StoreError> {
        self.bisect_exists(bisect)?;
        let operation = format!("read the events of bisection {bisect}");
        self.rows(
            &operation,
            "SELECT sequence, event_json FROM bisect_events WHERE bisect_id = $1 \
             ORDER BY sequence",
            params![bisect.0],
            |row| Ok((row.integer(0)?, row.text(1)?)),
        )?
        .into_iter()
        .map(|(sequence, text)| {
            let what = format!("event {sequence} of bisection {bisect}");
            let sequence = u32::try_from(sequence)
                .map_err(|_| self.corrupt(&what, "sequence out of range"))?;
            let value = serde_json::from_str(&text).map_err(|error| self.corrupt(&what, error))?;
            Ok((sequence, value))
        })
        .collect()
    }

    fn finish_bisect(
        &self,
        bisect: BisectId,
        status: RunStatus,
        finished_at_ms: i64,
        result: &Value,
    ) -> Result<(), StoreError> {
        let changed = self.execute(
            &format!("finish bisection {bisect}"),
            "UPDATE bisects SET status = $2, finished_at_ms = $3, result_json = $4 WHERE id = $1",
            params![bisect.0, status.as_str(), finished_at_ms, &to_json(result)],
        )?;
        if changed == 0 {
            return Err(self.unknown_bisect(bisect));
        }
        Ok(())
    }

    fn list_bisects(&self) -> Result<Vec<BisectSummary>, StoreError> {
        Ok(query_bisects(self, "ORDER BY id", &[])?
            .into_iter()
            .map(|record| BisectSummary {
                id: record.id,
                repo: record.repo,
                good: record.good,
                bad: record.bad,
                status: record.status,
                events: record.events,
                started_at_ms: record.started_at_ms,
                finished_at_ms: record.finished_at_ms,
            })
            .collect())
    }

    fn bisect(&self, bisect: BisectId) -> Result<BisectRecord, StoreError> {
        query_bisects(self, "WHERE id = $1", params![bisect.0])?
            .pop()
            .ok_or_else(|| self.unknown_bisect(bisect))
    }

    fn latest_bisect(&self) -> Result<Option<BisectRecord>, StoreError> {
        Ok(query_bisects(self, "ORDER BY id DESC LIMIT 1", &[])?.pop())
    }
}
