//! What `verdict export` shows of one stored run: the run's header, its
//! factors (experiment order, then any only the stored cells name), each
//! cell's levels, every raw sample (warmups and failures included) with
//! its iteration within its cell, the metric columns with their declared
//! unit and direction, and the environments. Pure data built from what
//! the store returned; verdict-report renders it as CSV or
//! `verdict.export/v1` JSON. Must not compute statistics or change a
//! value it exports.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
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

/// One run with everything the export shows.
#[derive(Debug, Clone)]
pub struct RunExport {
    pub run: ExportRun,
    /// Factor names in experiment order (from the stored cells when the
    /// experiment does not load).
    pub factors: Vec<String>,
    pub cells: BTreeMap<usize, Vec<(String, String)>>,
    pub samples: Vec<Sample>,
    /// Every metric name any sample has, sorted.
    pub metrics: Vec<ExportMetric>,
    pub environment_start: Environment,
    pub environment_end: Option<Environment>,
}

impl RunExport {
    /// The export of `run`, whose experiment (`None` when the stored one
    /// does not load) declares its factors and metrics.
    pub fn new(
        run: ExportRun,
        experiment: Option<&Experiment>,
        cells: BTreeMap<usize, Vec<(String, String)>>,
        samples: Vec<Sample>,
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
        let names: BTreeSet<String> = samples
            .iter()
            .flat_map(|sample| sample.metrics.keys().cloned())
            .collect();
        let metrics = names
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
            samples,
            metrics,
            environment_start,
            environment_end,
        }
    }

    /// Each sample's 1-based position among its cell's samples in execution
    /// order (warmups and failures included).
    pub fn iterations(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.samples.len()).collect();
        order.sort_by_key(|&index| self.samples[index].sequence);
        let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
        let mut iterations = vec![0; self.samples.len()];
        for index in order {
            let count = seen.entry(self.samples[index].cell).or_default();
            *count += 1;
            iterations[index] = *count;
        }
        iterations
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
