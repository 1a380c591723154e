//! What `verdict export` shows of one stored run: the run's header, its
//! factors (experiment order, then any only the stored cells name), each
//! cell's levels, the metric columns with their declared unit and
//! direction, and the environments (`RunExport`); then every raw sample
//! (warmups and failures included), one at a time as the store streams
//! them, with its iteration within its cell (`Iterations`) and the host it
//! ran on. Pure data built from what the store returned; verdict-report
//! renders it as CSV or `verdict.export/v1` JSON. Must not compute
//! statistics or change a value it exports.

use serde::Serialize;
use std::collections::BTreeMap;
use verdict_model::{Environment, Experiment, Sample};

use crate::compare::{Better, better_of};

/// The run's header, fields in the JSON document's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRun {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub status: String,
    pub host: String,
    pub seed: u64,
    pub tool_version: String,
    pub planned: u64,
    pub started_at_ms: i64,
    pub finished_at_ms: Option<i64>,
    pub command_line: Vec<String>,
    pub experiment_sha256: String,
    pub experiment_text: String,
}

/// A metric column: the name any sample has, with the unit and direction
/// the experiment declares for it (none when it does not).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportMetric {
    pub name: String,
    pub unit: Option<String>,
    pub better: Option<Better>,
}

/// One run with everything the export shows but its samples (which are
/// streamed).
#[derive(Debug, Clone)]
pub struct RunExport {
    pub run: ExportRun,
    /// Factor names in experiment order (from the stored cells when the
    /// experiment does not load).
    pub factors: Vec<String>,
    pub cells: BTreeMap<usize, Vec<(String, String)>>,
    /// Every metric name any sample has, sorted.
    pub metrics: Vec<ExportMetric>,
    pub environment_start: Environment,
    pub environment_end: Option<Environment>,
}

impl RunExport {
    /// The export of `run`, whose experiment (`None` when the stored one
    /// does not load) declares its factors and metrics; `metric_names` are
    /// the names its samples have (sorted).
    pub fn new(
        run: ExportRun,
        experiment: Option<&Experiment>,
        cells: BTreeMap<usize, Vec<(String, String)>>,
        metric_names: Vec<String>,
        environment_start: Environment,
        environment_end: Option<Environment>,
    ) -> RunExport {
        let mut factors: Vec<String> = match experiment {
            Some(experiment) => experiment
                .factors
                .iter()
                .map(|factor| factor.name.clone())
                .collect(),
            None => Vec::new(),
        };
        for levels in cells.values() {
            for (factor, _) in levels {
                if !factors.contains(factor) {
                    factors.push(factor.clone());
                }
            }
        }
        let metrics = metric_names
            .into_iter()
            .map(|name| {
                let declared = experiment.and_then(|experiment| {
                    experiment.metrics.iter().find(|metric| metric.name == name)
                });
                ExportMetric {
                    unit: declared.map(|metric| metric.unit.clone()),
                    better: declared.map(|metric| better_of(metric.direction)),
                    name,
                }
            })
            .collect();
        RunExport {
            run,
            factors,
            cells,
            metrics,
            environment_start,
            environment_end,
        }
    }

    /// The level of `factor` in the cell of `sample`.
    pub fn level(&self, sample: &Sample, factor: &str) -> Option<&str> {
        self.cells.get(&sample.cell).and_then(|levels| {
            levels
                .iter()
                .find(|(name, _)| name == factor)
                .map(|(_, level)| level.as_str())
        })
    }
}

/// Each sample's 1-based position among its cell's samples in execution
/// order (warmups and failures included), for samples given in that order.
#[derive(Debug, Clone, Default)]
pub struct Iterations {
    seen: BTreeMap<usize, usize>,
}

impl Iterations {
    /// The iteration of the next sample, of cell `cell`.
    pub fn next(&mut self, cell: usize) -> usize {
        let count = self.seen.entry(cell).or_default();
        *count += 1;
        *count
    }
}
