//! Copying runs between stores (`verdict push` / `verdict pull`): a run
//! with its samples (and what they captured: monitors, profiles), cells,
//! annotations, adaptive state, boots (with each boot's environment),
//! kernel configs and commit, found again in the target by its identity (`runs.uuid`, schema
//! v7), so copying twice stores nothing twice and an interrupted copy is
//! completed by the next one. The run gets the target's next id; its `origin` records where
//! it was measured (the first store it came from, password redacted, and
//! its id there). Samples keep the host they ran on, and a detached
//! run its shared work's blocks and takeovers. Must not: copy a sample the
//! target already has, read samples of a run the target holds whole, or
//! write a password.

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;

use verdict_model::{Cell, RunId};

use crate::StoreError;
use crate::database::Database;
use crate::history::HistoryStore;
use crate::sql::{Backend, params, to_json};
use crate::store::{BatchSample, NewBoot, RunRecord, Store};

/// Samples copied per transaction: an interrupted copy keeps whole
/// batches, and the next copy adds the rest.
const BATCH: usize = 1000;

/// A run's identity across stores, per backend.
pub trait RunIdentity: HistoryStore {
    /// The run's uuid and origin as stored (`None` for runs made before
    /// schema v7, and for runs measured into this store, respectively).
    fn run_identity(&self, run: RunId) -> Result<(Option<String>, Option<String>), StoreError>;
    /// Gives a run without a uuid (made before schema v7) a new one.
    fn ensure_run_uuid(&self, run: RunId) -> Result<String, StoreError>;
    /// The run with this uuid, if the store holds it.
    fn run_by_uuid(&self, uuid: &str) -> Result<Option<RunId>, StoreError>;
    /// Creates a run with everything `record` says (status, times,
    /// environments) under `uuid` and `origin`, without samples.
    fn import_run(&self, record: &RunRecord, uuid: &str, origin: &str)
    -> Result<RunId, StoreError>;
}

/// What copying one run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiedRun {
    pub source: RunId,
    pub target: RunId,
    /// Whether the target did not hold the run before.
    pub created: bool,
    /// Samples written to the target now.
    pub samples_copied: usize,
    /// Samples the target already had.
    pub samples_present: usize,
}

/// Copies run `run` of `source` into `target` (see the module comment).
/// Which samples the target lacks is found from both stores' sample keys
/// alone; a run the target already holds whole reads no sample row. The
/// samples that are copied are read as a stream and written
/// `BATCH` per transaction.
pub fn copy_run(source: &Database, target: &Database, run: RunId) -> Result<CopiedRun, StoreError> {
    let record = source.run(run)?;
    let (uuid, origin) = source.run_identity(run)?;
    let uuid = match uuid {
        Some(uuid) => uuid,
        None => source.ensure_run_uuid(run)?,
    };
    let origin = origin.unwrap_or_else(|| {
        let path = source.path();
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        format!("{} run {}", path.display(), run.0)
    });
    let (target_run, created) = match target.run_by_uuid(&uuid)? {
        Some(existing) => (existing, false),
        None => (target.import_run(&record, &uuid, &origin)?, true),
    };
    copy_boots(source, target, run, target_run)?;
    let present: HashSet<u32> = target.sample_sequences(target_run)?.into_iter().collect();
    let missing: HashSet<u32> = source
        .sample_sequences(run)?
        .into_iter()
        .filter(|sequence| !present.contains(sequence))
        .collect();
    let copied = if missing.is_empty() {
        0
    } else {
        copy_samples(source, target, run, target_run, &record.host, &missing)?
    };
    copy_details(source, target, run, target_run)?;
    for (key, value) in source.annotations(run)? {
        target.put_annotation(target_run, &key, &value)?;
    }
    let adaptive = source.adaptive(run)?;
    if let Some(procedure) = &adaptive.procedure {
        target.record_adaptive_procedure(target_run, procedure)?;
    }
    if !adaptive.decisions.is_empty() {
        target.record_adaptive_decisions(target_run, &adaptive.decisions)?;
    }
    for environment in std::iter::once(&record.environment_start).chain(&record.environment_end) {
        if let Some(sha256) = &environment.kernel_config_sha256
            && let Some((config_source, text)) = source.kernel_config(sha256)?
        {
            target.put_kernel_config(sha256, &config_source, &text)?;
        }
    }
    copy_work(source, target, run, target_run)?;
    if let Some(commit) = source.run_commit(run)? {
        target.set_run_commit(target_run, &commit)?;
    }
    target.set_planned(target_run, record.planned)?;
    match record.finished_at_ms {
        Some(finished) => target.finish_run(
            target_run,
            record.status,
            finished,
            record.environment_end.as_ref(),
        )?,
        None => target.set_status(target_run, record.status)?,
    }
    Ok(CopiedRun {
        source: run,
        target: target_run,
        created,
        samples_copied: copied,
        samples_present: present.len(),
    })
}

/// Streams the `missing` samples of `run` from `source` into `target_run`,
/// `BATCH` per transaction, each with the host it ran on.
fn copy_samples(
    source: &Database,
    target: &Database,
    run: RunId,
    target_run: RunId,
    run_host: &str,
    missing: &HashSet<u32>,
) -> Result<usize, StoreError> {
    let cells: BTreeMap<usize, Cell> = source.cells(run)?.into_iter().collect();
    let mut copied = 0;
    let mut batch: Vec<BatchSample> = Vec::with_capacity(BATCH);
    let mut failure = None;
    source.each_sample(run, &mut |sample, host| {
        if !missing.contains(&sample.sequence) {
            return ControlFlow::Continue(());
        }
        let Some(cell) = cells.get(&sample.cell) else {
            failure = Some(StoreError::Corrupt {
                path: source.path().to_path_buf(),
                what: format!("sample {} of run {run}", sample.sequence),
                reason: format!("its cell {} is not stored", sample.cell),
            });
            return ControlFlow::Break(());
        };
        batch.push(BatchSample {
            cell: cell.clone(),
            host: (host != run_host).then(|| host.to_string()),
            sample,
        });
        if batch.len() == BATCH {
            if let Err(error) = target.append_samples(target_run, &batch) {
                failure = Some(error);
                return ControlFlow::Break(());
            }
            copied += batch.len();
            batch.clear();
        }
        ControlFlow::Continue(())
    })?;
    if let Some(error) = failure {
        return Err(error);
    }
    target.append_samples(target_run, &batch)?;
    Ok(copied + batch.len())
}

/// What the samples captured besides their metrics (monitors, profiles),
/// for each sample whose details the target lacks (also after an
/// interrupted copy); nothing is read when the target has as many.
fn copy_details(
    source: &Database,
    target: &Database,
    run: RunId,
    target_run: RunId,
) -> Result<(), StoreError> {
    let wanted = source.detail_counts(run)?;
    if !wanted.any() || target.detail_counts(target_run)? == wanted {
        return Ok(());
    }
    let present: HashSet<u32> = target.sample_details(target_run)?.into_keys().collect();
    for (sequence, details) in source.sample_details(run)? {
        if !present.contains(&sequence) {
            target.append_details(target_run, sequence, &details)?;
        }
    }
    Ok(())
}

/// The run's shared work as recorded (blocks and takeovers), when it had
/// any and the target does not hold it yet.
fn copy_work(
    source: &Database,
    target: &Database,
    run: RunId,
    target_run: RunId,
) -> Result<(), StoreError> {
    let work = source.work_record(run)?;
    if work.blocks.is_empty() || !target.work_record(target_run)?.blocks.is_empty() {
        return Ok(());
    }
    crate::work::import(target, target_run, &work)
}

/// The run's boots, each with its environment: a boot the target lacks is
/// created (a run's boots are numbered from 0 in order, so the target
/// holds the first ones of an interrupted copy), and every boot's facts
/// are written again (a run resumed since the last copy has moved on).
fn copy_boots(
    source: &Database,
    target: &Database,
    run: RunId,
    target_run: RunId,
) -> Result<(), StoreError> {
    let present = target.boots(target_run)?.len();
    for boot in source.boots(run)? {
        if boot.id as usize >= present {
            let id = target.create_boot(
                target_run,
                &NewBoot {
                    slot: boot.slot,
                    attempt: boot.attempt,
                    level_key: boot.level_key.clone(),
                    first_sequence: boot.first_sequence,
                    kernel: boot.kernel.clone(),
                    command_line: boot.command_line.clone(),
                    started_at_ms: boot.started_at_ms,
                },
            )?;
            if id != boot.id {
                return Err(StoreError::Corrupt {
                    path: target.path().to_path_buf(),
                    what: format!("boot {} of run {target_run}", boot.id),
                    reason: format!("it was copied as boot {id}"),
                });
            }
        }
        target.update_boot(target_run, &boot)?;
    }
    Ok(())
}

impl<B: Backend> RunIdentity for B {
    fn run_identity(&self, run: RunId) -> Result<(Option<String>, Option<String>), StoreError> {
        self.run_exists(run)?;
        Ok(self
            .first_row(
                &format!("read the identity of run {run}"),
                "SELECT uuid, origin FROM runs WHERE id = $1",
                params![run.0],
                |row| Ok((row.optional_text(0)?, row.optional_text(1)?)),
            )?
            .unwrap_or((None, None)))
    }

    fn ensure_run_uuid(&self, run: RunId) -> Result<String, StoreError> {
        let uuid = crate::identity::new_run_uuid();
        self.execute(
            &format!("give run {run} an identity"),
            "UPDATE runs SET uuid = $1 WHERE id = $2 AND uuid IS NULL",
            params![&uuid, run.0],
        )?;
        self.run_identity(run)?
            .0
            .ok_or_else(|| self.corrupt(&format!("run {run}"), "no uuid after setting one"))
    }

    fn run_by_uuid(&self, uuid: &str) -> Result<Option<RunId>, StoreError> {
        Ok(self
            .first_row(
                "find a run by its uuid",
                "SELECT id FROM runs WHERE uuid = $1",
                params![uuid],
                |row| row.integer(0),
            )?
            .map(RunId))
    }

    fn import_run(
        &self,
        record: &RunRecord,
        uuid: &str,
        origin: &str,
    ) -> Result<RunId, StoreError> {
        let operation = format!("copy run {}", record.id);
        let environment_end = record.environment_end.as_ref().map(to_json);
        self.first_row(
            &operation,
            "INSERT INTO runs (name, kind, status, experiment_text, experiment_sha256, \
                experiment_json, tool_version, seed, host, planned, started_at_ms, \
                finished_at_ms, environment_start, environment_end, command_line, uuid, origin, \
                placement) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
                $18) \
             RETURNING id",
            params![
                &record.name,
                record.kind,
                record.status,
                &record.experiment_text,
                &record.experiment_sha256,
                &record.experiment_json,
                &record.tool_version,
                record.seed as i64,
                &record.host,
                record.planned as i64,
                record.started_at_ms,
                record.finished_at_ms,
                &to_json(&record.environment_start),
                environment_end.as_deref(),
                &to_json(&record.command_line),
                uuid,
                origin,
                record.placement,
            ],
            |row| row.integer(0),
        )?
        .map(RunId)
        .ok_or_else(|| self.corrupt(&operation, "no id returned"))
    }
}
