//! What `verdict export` shows of one stored run: the run's header, its
//! factors (experiment order, then any only the stored cells name), each
//! cell's levels, the metric columns with their declared unit and
//! direction, and the environments (`RunExport`); then every raw sample
//! (warmups and failures included), one at a time as the store streams
//! them, with its iteration within its cell (`Iterations`) and the host it
//! ran on. Pure data built from what the store returned; verdict-report
//! renders it as CSV or `verdict.export/v1` JSON ([`ExportDocument`],
//! one [`ExportSample`] at a time). Must not compute statistics or change
//! a value it exports.

use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use verdict_model::{Environment, Experiment, Sample};

use crate::compare::Better;

/// The schema of an export.
pub const EXPORT_SCHEMA: &str = "verdict.export/v1";

/// The `verdict.export/v1` document, fields in documented order (the
/// samples last: verdict-report writes them one by one).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExportDocument<'a> {
    pub schema: &'static str,
    pub run: &'a ExportRun,
    pub factors: &'a [String],
    pub metrics: Vec<ExportMetricHead<'a>>,
    pub environment_start: &'a Environment,
    pub environment_end: Option<&'a Environment>,
    pub samples: Vec<ExportSample<'a>>,
}

/// A metric column as the document declares it. Its keys are in the
/// order the document has always printed them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExportMetricHead<'a> {
    /// `higher` or `lower`; null when the experiment does not declare it.
    pub better: Option<&'static str>,
    pub name: &'a str,
    pub unit: Option<&'a str>,
}

/// One raw sample of the document.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExportSample<'a> {
    pub sequence: u32,
    /// 1-based position among its cell's samples in execution order.
    pub iteration: usize,
    pub block: u32,
    pub cell: usize,
    pub host: &'a str,
    /// Each factor's level in the sample's cell.
    pub levels: BTreeMap<String, String>,
    pub warmup: bool,
    pub failed: bool,
    pub started_at_ms: i64,
    /// The start as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub started_at: String,
    pub wall_seconds: f64,
    pub user_seconds: f64,
    pub sys_seconds: f64,
    pub max_rss_kib: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub failure_reason: Option<&'a str>,
    pub failure_output_tail: Option<&'a str>,
    pub metrics: &'a BTreeMap<String, f64>,
}

impl RunExport {
    /// The document with `samples` (none: its head, the samples written
    /// after it one by one).
    pub fn document<'r>(&'r self, samples: Vec<ExportSample<'r>>) -> ExportDocument<'r> {
        ExportDocument {
            schema: EXPORT_SCHEMA,
            run: &self.run,
            factors: &self.factors,
            metrics: self
                .metrics
                .iter()
                .map(|metric| ExportMetricHead {
                    better: metric.better.map(|better| better.as_str()),
                    name: &metric.name,
                    unit: metric.unit.as_deref(),
                })
                .collect(),
            environment_start: &self.environment_start,
            environment_end: self.environment_end.as_ref(),
            samples,
        }
    }
}

/// The run's header, fields in the JSON document's order.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
                    better: declared.map(|metric| metric.direction),
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
