//! `verdict explain`'s reading: a stored run (or every run of its host
//! group: hosts are blocks, each compared within itself) with its samples,
//! what they captured besides their metrics, and the boot of each sample,
//! through the (read-only) store; then verdict-analysis's `ExplainReport`.
//! Also two runs of one cell each against each other (`--baseline RUN`: a
//! bisection's first bad commit against the last good commit before it),
//! and finding those two runs of a finished bisection. Must not print,
//! render or change the store.

use std::collections::BTreeMap;

use verdict_analysis::explain::{ExplainHost, ExplainOptions, ExplainReport};
use verdict_model::{Experiment, RunId, Sample, SampleDetails};
use verdict_store::{BootRow, Store};

use crate::error::CommandError;

/// One host's run as read.
struct HostRun {
    host: String,
    run: RunId,
    samples: Vec<Sample>,
    details: BTreeMap<u32, SampleDetails>,
    boot_of: BTreeMap<u32, u32>,
}

fn read_host(store: &dyn Store, run: RunId, host: String) -> Result<HostRun, CommandError> {
    let internal = |error: verdict_store::StoreError| CommandError::Internal(error.to_string());
    let samples = store.samples(run).map_err(internal)?;
    let details = store.sample_details(run).map_err(internal)?;
    let boots = store.boots(run).map_err(internal)?;
    let boot_of = samples
        .iter()
        .filter_map(|sample| {
            BootRow::of_sample(&boots, sample.sequence).map(|boot| (sample.sequence, boot))
        })
        .collect();
    Ok(HostRun {
        host,
        run,
        samples,
        details,
        boot_of,
    })
}

/// A run's record and its experiment.
fn stored(
    store: &dyn Store,
    run: RunId,
) -> Result<(verdict_store::RunRecord, Experiment), CommandError> {
    let record = store
        .run(run)
        .map_err(|error| CommandError::Input(error.to_string()))?;
    let experiment = serde_json::from_str(&record.experiment_json).map_err(|error| {
        CommandError::Internal(format!(
            "run {run}: stored experiment does not load: {error}"
        ))
    })?;
    Ok((record, experiment))
}

/// `run` explained (see the module documentation).
pub fn explain(
    store: &dyn Store,
    run: RunId,
    options: &ExplainOptions,
) -> Result<ExplainReport, CommandError> {
    let (record, experiment) = stored(store, run)?;
    let members = crate::host_group::group_members(store, run)
        .map_err(|error| CommandError::Internal(error.to_string()))?;
    let members = if members.is_empty() {
        vec![(run, record.host.clone())]
    } else {
        members
    };
    let hosts = members
        .into_iter()
        .map(|(member, host)| read_host(store, member, host))
        .collect::<Result<Vec<_>, _>>()?;
    if hosts.iter().all(|host| host.details.is_empty()) {
        return Err(CommandError::Input(format!(
            "run {run} captured no monitors and no profiles: it was measured with `[monitors] enabled = false` and no `[profile]`, or before verdict captured them; run the experiment again to explain it"
        )));
    }
    let views: Vec<ExplainHost<'_>> = hosts
        .iter()
        .map(|host| ExplainHost {
            host: host.host.clone(),
            run: host.run.0,
            samples: &host.samples,
            details: &host.details,
            boot_of: host.boot_of.clone(),
        })
        .collect();
    ExplainReport::build(&experiment, &views, options).map_err(CommandError::input)
}

/// `candidate` (a run of one cell) against `baseline` (another): their
/// iterations compared as the two levels of a factor `run`, named by the
/// run ids (`run=15 vs 12`).
pub fn explain_against(
    store: &dyn Store,
    candidate: RunId,
    baseline: RunId,
    options: &ExplainOptions,
) -> Result<ExplainReport, CommandError> {
    let load = |run: RunId| -> Result<(Experiment, HostRun), CommandError> {
        let (record, experiment) = stored(store, run)?;
        if experiment.cells().len() != 1 {
            return Err(CommandError::Input(format!(
                "run {run} has {} cells; --baseline compares two runs of one cell each (explain a run's own comparisons without it)",
                experiment.cells().len()
            )));
        }
        Ok((experiment, read_host(store, run, record.host)?))
    };
    let (experiment, candidate_run) = load(candidate)?;
    let (_, baseline_run) = load(baseline)?;
    if candidate_run.details.is_empty() && baseline_run.details.is_empty() {
        return Err(CommandError::Input(format!(
            "runs {baseline} and {candidate} captured no monitors and no profiles; measure them again to explain them"
        )));
    }
    // One "run" factor: the baseline's samples in cell 0, the candidate's
    // in cell 1, sequences after the baseline's so details stay apart.
    let mut paired = Experiment::parse(
        &format!(
            "name = \"{} vs {}\"\ncommand = [\"true\"]\n[factors]\nrun = [\"{}\", \"{}\"]\n",
            candidate.0, baseline.0, baseline.0, candidate.0
        ),
        "explain --baseline",
    )
    .map_err(|error| CommandError::Internal(error.to_string()))?;
    paired.metrics = experiment.metrics.clone();
    paired.name = experiment.name.clone();
    let offset = baseline_run
        .samples
        .iter()
        .map(|sample| sample.sequence + 1)
        .max()
        .unwrap_or(0);
    let mut samples: Vec<Sample> = baseline_run.samples.clone();
    samples.extend(candidate_run.samples.iter().cloned().map(|mut sample| {
        sample.cell = 1;
        sample.sequence += offset;
        sample
    }));
    let mut details = baseline_run.details.clone();
    details.extend(
        candidate_run
            .details
            .iter()
            .map(|(sequence, captured)| (sequence + offset, captured.clone())),
    );
    let host = ExplainHost {
        host: candidate_run.host.clone(),
        run: candidate.0,
        samples: &samples,
        details: &details,
        boot_of: BTreeMap::new(),
    };
    ExplainReport::build(&paired, &[host], options).map_err(CommandError::input)
}

/// The runs of bisection `bisect` that measured `culprit` and `good` last
/// (each run is annotated with the commit it measured): what `verdict
/// explain CULPRIT --baseline GOOD` compares; `None` when either is
/// missing or neither captured anything.
pub fn bisection_runs(
    store: &dyn Store,
    bisect: verdict_store::BisectId,
    culprit: &str,
    good: &str,
) -> Result<Option<(RunId, RunId)>, verdict_store::StoreError> {
    let last_of = |commit: &str| -> Result<Option<RunId>, verdict_store::StoreError> {
        let mut found = None;
        for summary in store.bisect_runs(bisect)? {
            let annotations = store.annotations(summary.id)?;
            if annotations
                .get("bisect")
                .and_then(|annotation| annotation["commit"].as_str())
                .is_some_and(|measured| measured == commit)
            {
                found = Some(summary.id);
            }
        }
        Ok(found)
    };
    let (Some(culprit_run), Some(good_run)) = (last_of(culprit)?, last_of(good)?) else {
        return Ok(None);
    };
    let captured = store.detail_counts(culprit_run)?.any() || store.detail_counts(good_run)?.any();
    Ok(captured.then_some((culprit_run, good_run)))
}
