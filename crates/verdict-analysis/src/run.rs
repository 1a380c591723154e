//! The report of one stored run (`verdict report`, schema
//! `verdict.report/v1`): the header (what ran, where, how), per cell n,
//! failures, median with interval, CV, min and max of the primary metric,
//! the experiment's comparisons, and the failed iterations with their
//! reasons: the model, built from stored data only; pure. verdict-report
//! renders it.

use crate::compare::{
    CompareReport, ComparisonInput, comparisons_if_any, paired_comparisons_if_any,
};
use serde::Serialize;
use std::collections::BTreeMap;
use verdict_model::{Analysis, Builtin, Direction, Environment, Experiment, Sample};
use verdict_stats::paired::block_pairs;
use verdict_stats::summary::summarize;

pub const REPORT_SCHEMA: &str = "verdict.report/v1";

/// Facts about the run, as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    pub id: i64,
    pub name: String,
    pub status: String,
    /// Preformatted by the caller (the report itself reads no clock).
    pub started: String,
    pub finished: Option<String>,
    pub seed: u64,
    pub host: String,
    pub planned: u64,
    pub recorded: usize,
    pub tool_version: String,
    pub order: String,
    /// Adaptive procedure, when the run was adaptive.
    pub procedure: Option<String>,
    /// One-line noise summary from `verdict run --doctor`.
    pub noise: Option<String>,
    /// Where each adaptive comparison stopped: state, verdict, repeated
    /// confidence interval and runs (adaptive runs only).
    pub decisions: Vec<String>,
}

/// The metric a report is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricInfo {
    pub name: String,
    pub unit: String,
    pub better: String,
}

/// One cell's summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellRow {
    pub levels: BTreeMap<String, String>,
    pub label: String,
    /// Successful measured iterations (the data).
    pub n: usize,
    pub failed: usize,
    pub warmups: usize,
    pub median: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub cv: Option<f64>,
    pub robust_cv: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Sequence numbers of values with modified z-score > 3.5 (flagged, kept).
    pub outliers: Vec<u32>,
    /// Spearman correlation of value with execution order when significant.
    pub drift: Option<f64>,
}

/// A failed iteration, shown, never used as data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureRow {
    pub sequence: u32,
    pub cell: String,
    pub reason: String,
    pub output_tail: String,
}

/// A metric some successful iterations could not measure (perf's `<not
/// supported>`): those iterations count, without a value for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissingRow {
    pub metric: String,
    /// Successful measured iterations without a value.
    pub count: usize,
    /// What the tool said, as recorded (distinct reasons).
    pub reasons: Vec<String>,
}

/// An iteration that left processes running in its process group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftoverRow {
    pub sequence: u32,
    pub cell: String,
    /// One name per process.
    pub processes: Vec<String>,
    /// Whether verdict killed them (the experiment's `kill_leftovers`).
    pub killed: bool,
}

/// One metric's summary in every cell, for the side-by-side table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricColumn {
    pub name: String,
    pub unit: String,
    pub better: String,
    /// `declared` in the experiment, or `builtin` (wall, user, sys, maxrss:
    /// measured for every iteration whether declared or not).
    pub source: &'static str,
    /// One per cell, in `cells` order.
    pub cells: Vec<MetricCell>,
}

/// A metric in one cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricCell {
    pub n: usize,
    pub median: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub cv: Option<f64>,
    /// 1.4826·MAD/median (the MAD scaled to estimate a normal standard
    /// deviation, over the median).
    pub robust_cv: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl MetricCell {
    /// The summary of one cell's values.
    fn of(values: &[f64]) -> Self {
        let summary = summarize(values);
        let interval = summary.as_ref().and_then(|summary| summary.median_ci);
        Self {
            n: values.len(),
            median: summary.as_ref().map(|summary| summary.median),
            ci_low: interval.map(|interval| interval.low),
            ci_high: interval.map(|interval| interval.high),
            cv: summary.as_ref().and_then(|summary| summary.cv),
            robust_cv: summary.as_ref().and_then(|summary| summary.robust_cv),
            min: summary.as_ref().map(|summary| summary.min),
            max: summary.as_ref().map(|summary| summary.max),
        }
    }
}

/// How the text and markdown report lay out the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// The side-by-side table of `metrics`, then the detailed table of
    /// `metric` (the default).
    SideBySide,
    /// Only the detailed table of `metric` (`--metric NAME`).
    Detailed,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub schema: &'static str,
    pub run: RunInfo,
    pub metric: MetricInfo,
    pub environment: Vec<(String, String)>,
    pub cells: Vec<CellRow>,
    pub comparisons: Option<CompareReport>,
    pub failures: Vec<FailureRow>,
    /// Metrics with missing values (none when every iteration had them all).
    pub missing: Vec<MissingRow>,
    /// Iterations that left processes behind.
    pub leftovers: Vec<LeftoverRow>,
    /// The metrics shown side by side (all the run has, or `--metrics`).
    pub metrics: Vec<MetricColumn>,
    pub layout: Layout,
    /// Why `comparisons` is null although the experiment defines some
    /// (the metric's values cannot be compared, e.g. zeros).
    pub comparisons_error: Option<String>,
    /// Runs on a VM target: boots per cell, boot-to-boot spread, failed
    /// boots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boots: Option<crate::boots::BootsSection>,
}

/// Options for building a run report.
#[derive(Debug, Clone)]
pub struct RunReportOptions {
    /// Metric to report in detail (default: the primary one). When set,
    /// the text shows only its detailed table (today's layout).
    pub metric: Option<String>,
    /// Metrics side by side (default: every metric the run has).
    pub metrics: Option<Vec<String>>,
    /// Threshold override (fraction).
    pub threshold: Option<f64>,
    pub alpha: f64,
    pub adjust: bool,
}

impl Default for RunReportOptions {
    fn default() -> Self {
        RunReportOptions {
            metric: None,
            metrics: None,
            threshold: None,
            alpha: 0.05,
            adjust: true,
        }
    }
}

/// Values of `metric` per cell, data samples only, in execution order.
pub fn cell_values(samples: &[Sample], cells: usize, metric: &str) -> Vec<Vec<f64>> {
    let mut values = vec![Vec::new(); cells];
    for sample in samples.iter().filter(|sample| sample.is_data()) {
        if let (Some(value), Some(cell)) = (sample.metrics.get(metric), values.get_mut(sample.cell))
        {
            cell.push(*value);
        }
    }
    values
}

/// A metric a run has: declared in the experiment, or a built-in
/// measurement every iteration records (wall, user, sys, maxrss).
#[derive(Debug, Clone)]
pub(crate) struct Available {
    pub(crate) name: String,
    pub(crate) unit: String,
    pub(crate) direction: Direction,
    /// Read from the sample's own fields (an undeclared built-in).
    pub(crate) builtin: Option<Builtin>,
}

pub(crate) fn available_metrics(experiment: &Experiment) -> Vec<Available> {
    let mut available: Vec<Available> = experiment
        .metrics
        .iter()
        .map(|metric| Available {
            name: metric.name.clone(),
            unit: metric.unit.clone(),
            direction: metric.direction,
            builtin: None,
        })
        .collect();
    for (name, unit, builtin) in [
        ("wall", "s", Builtin::Wall),
        ("user", "s", Builtin::User),
        ("sys", "s", Builtin::Sys),
        ("maxrss", "KiB", Builtin::MaxRss),
    ] {
        if !available.iter().any(|metric| metric.name == name) {
            available.push(Available {
                name: name.to_string(),
                unit: unit.to_string(),
                direction: Direction::LowerIsBetter,
                builtin: Some(builtin),
            });
        }
    }
    available
}

/// Values of an available metric per cell, data samples only.
fn available_values(samples: &[Sample], cells: usize, metric: &Available) -> Vec<Vec<f64>> {
    let Some(builtin) = metric.builtin else {
        return cell_values(samples, cells, &metric.name);
    };
    let mut values = vec![Vec::new(); cells];
    for sample in samples.iter().filter(|sample| sample.is_data()) {
        if let Some(cell) = values.get_mut(sample.cell) {
            cell.push(match builtin {
                Builtin::Wall => sample.wall_seconds,
                Builtin::User => sample.user_seconds,
                Builtin::Sys => sample.sys_seconds,
                Builtin::MaxRss => sample.max_rss_kib as f64,
            });
        }
    }
    values
}

/// As [`available_values`], each value with its interleaved block's id
/// (for the block-paired analysis).
fn blocked_values(samples: &[Sample], cells: usize, metric: &Available) -> Vec<Vec<(u64, f64)>> {
    let mut values = vec![Vec::new(); cells];
    for sample in samples.iter().filter(|sample| sample.is_data()) {
        let value = match metric.builtin {
            Some(Builtin::Wall) => Some(sample.wall_seconds),
            Some(Builtin::User) => Some(sample.user_seconds),
            Some(Builtin::Sys) => Some(sample.sys_seconds),
            Some(Builtin::MaxRss) => Some(sample.max_rss_kib as f64),
            None => sample.metrics.get(&metric.name).copied(),
        };
        if let (Some(value), Some(cell)) = (value, values.get_mut(sample.cell)) {
            cell.push((u64::from(sample.block), value));
        }
    }
    values
}

fn better_name(direction: Direction) -> &'static str {
    crate::compare::better_of(direction).as_str()
}

fn metric_column(samples: &[Sample], cells: usize, metric: &Available) -> MetricColumn {
    MetricColumn {
        name: metric.name.clone(),
        unit: metric.unit.clone(),
        better: better_name(metric.direction).to_string(),
        source: if metric.builtin.is_some() {
            "builtin"
        } else {
            "declared"
        },
        cells: available_values(samples, cells, metric)
            .iter()
            .map(|values| MetricCell::of(values))
            .collect(),
    }
}

/// Summarize the environment for the header: only what was recorded.
pub fn environment_lines(environment: &Environment) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    let mut add = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            lines.push((key.to_string(), value));
        }
    };
    add("host", environment.hostname.clone());
    add("kernel", environment.kernel_release.clone());
    add("cpu", environment.cpu_model.clone());
    add(
        "cpus",
        match (environment.cpu_count, &environment.cpus_online) {
            (Some(count), Some(online)) => Some(format!("{count} (online {online})")),
            (Some(count), None) => Some(count.to_string()),
            (None, online) => online.clone(),
        },
    );
    add("smt", environment.smt.clone());
    add("governor", environment.cpufreq_governor.clone());
    add("virtualization", environment.virtualization.clone());
    add("selinux", environment.selinux.clone());
    add("preempt", environment.preempt.clone());
    add(
        "config sha256",
        environment
            .kernel_config_sha256
            .as_ref()
            .map(|hash| hash[..hash.len().min(16)].to_string()),
    );
    add("cmdline", environment.kernel_cmdline.clone());
    add(
        "load",
        environment
            .load_average
            .map(|load| format!("{:.2} {:.2} {:.2}", load[0], load[1], load[2])),
    );
    lines
}

impl RunReport {
    /// Build from stored data. Pure.
    pub fn build(
        run: RunInfo,
        experiment: &Experiment,
        samples: &[Sample],
        environment: &Environment,
        options: &RunReportOptions,
    ) -> Result<RunReport, String> {
        let available = available_metrics(experiment);
        let find = |name: &str| -> Result<&Available, String> {
            available
                .iter()
                .find(|metric| metric.name == name)
                .ok_or_else(|| {
                    format!(
                        "the run has no metric `{name}`; it has: {}",
                        available
                            .iter()
                            .map(|metric| metric.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
        };
        let metric = find(
            options
                .metric
                .as_deref()
                .unwrap_or(&experiment.primary_metric().name),
        )?;
        let shown: Vec<&Available> = match &options.metrics {
            None => available.iter().collect(),
            Some(names) => names
                .iter()
                .map(|name| find(name.trim()))
                .collect::<Result<_, _>>()?,
        };
        let cells = experiment.cells();
        let metrics: Vec<MetricColumn> = shown
            .iter()
            .map(|shown| metric_column(samples, cells.len(), shown))
            .collect();
        let layout = if options.metric.is_some() && options.metrics.is_none() {
            Layout::Detailed
        } else {
            Layout::SideBySide
        };
        let values = available_values(samples, cells.len(), metric);
        let rows = cells
            .iter()
            .enumerate()
            .map(|(index, cell)| {
                let in_cell = samples.iter().filter(|sample| sample.cell == index);
                let data_sequences: Vec<u32> = samples
                    .iter()
                    .filter(|sample| {
                        sample.cell == index
                            && sample.is_data()
                            && (metric.builtin.is_some()
                                || sample.metrics.contains_key(&metric.name))
                    })
                    .map(|sample| sample.sequence)
                    .collect();
                let summary = summarize(&values[index]);
                let stats = MetricCell::of(&values[index]);
                CellRow {
                    levels: cell.levels.iter().cloned().collect(),
                    label: cell.label(),
                    n: values[index].len(),
                    failed: in_cell
                        .clone()
                        .filter(|sample| sample.failure.is_some() && !sample.warmup)
                        .count(),
                    warmups: in_cell.filter(|sample| sample.warmup).count(),
                    median: stats.median,
                    ci_low: stats.ci_low,
                    ci_high: stats.ci_high,
                    cv: stats.cv,
                    robust_cv: stats.robust_cv,
                    min: stats.min,
                    max: stats.max,
                    outliers: summary
                        .as_ref()
                        .map(|summary| {
                            summary
                                .outliers
                                .iter()
                                .filter_map(|index| data_sequences.get(*index).copied())
                                .collect()
                        })
                        .unwrap_or_default(),
                    drift: summary.as_ref().and_then(|summary| {
                        summary
                            .drift
                            .as_ref()
                            .filter(|drift| drift.flagged)
                            .map(|drift| drift.rho)
                    }),
                }
            })
            .collect::<Vec<_>>();
        let better = crate::compare::better_of(metric.direction);
        let declared_threshold = experiment
            .metrics
            .iter()
            .find(|declared| declared.name == metric.name)
            .and_then(|declared| declared.threshold);
        let threshold = options
            .threshold
            .or(declared_threshold)
            .unwrap_or(experiment.sampling.threshold);
        // Every comparison with a run a side gets a row; one that cannot
        // be decided says why (one run per cell).
        let comparable = |comparison: &verdict_model::ComparisonSpec| {
            !values[comparison.baseline_cell].is_empty()
                && !values[comparison.candidate_cell].is_empty()
        };
        let inputs: Vec<ComparisonInput> = experiment
            .comparisons()
            .iter()
            .filter(|comparison| comparable(comparison))
            .map(|comparison| ComparisonInput {
                name: format!(
                    "{} vs {}",
                    comparison_label(&cells[comparison.candidate_cell].levels, &comparison.factor),
                    cells[comparison.baseline_cell]
                        .level(&comparison.factor)
                        .unwrap_or("")
                ),
                unit: metric.unit.clone(),
                better,
                threshold,
                power: experiment.sampling.power,
                baseline: values[comparison.baseline_cell].clone(),
                candidate: values[comparison.candidate_cell].clone(),
            })
            .collect();
        // A metric that cannot be compared (a zero on the log scale of the
        // shift estimate, e.g. `sys` of a quick command) still gets its
        // tables; the reason replaces the comparisons.
        // The analysis is the experiment's, fixed before the data were seen.
        let compared = match experiment.sampling.analysis {
            Analysis::Independent => comparisons_if_any(&inputs, options.alpha, options.adjust),
            Analysis::Paired => {
                let blocked = blocked_values(samples, cells.len(), metric);
                let mut dropped = Vec::with_capacity(inputs.len());
                let paired_inputs: Vec<ComparisonInput> = experiment
                    .comparisons()
                    .iter()
                    // The same comparisons, in the same order, as `inputs`.
                    .filter(|comparison| comparable(comparison))
                    .zip(&inputs)
                    .map(|(comparison, input)| {
                        let pairs = block_pairs(
                            &blocked[comparison.baseline_cell],
                            &blocked[comparison.candidate_cell],
                        );
                        dropped.push(pairs.dropped);
                        ComparisonInput {
                            baseline: pairs.baseline,
                            candidate: pairs.candidate,
                            ..input.clone()
                        }
                    })
                    .collect();
                paired_comparisons_if_any(&paired_inputs, &dropped, options.alpha, options.adjust)
            }
        };
        let (comparisons, comparisons_error) = match compared {
            Ok(comparisons) => (comparisons, None),
            Err(error) => (None, Some(error)),
        };
        let failures = samples
            .iter()
            .filter_map(|sample| {
                sample.failure.as_ref().map(|failure| FailureRow {
                    sequence: sample.sequence,
                    cell: cells
                        .get(sample.cell)
                        .map(|cell| cell.label())
                        .unwrap_or_default(),
                    reason: failure.reason.clone(),
                    output_tail: failure.output_tail.clone(),
                })
            })
            .collect();
        let label = |index: usize| {
            cells
                .get(index)
                .map(|cell| cell.label())
                .unwrap_or_default()
        };
        let missing = experiment
            .metrics
            .iter()
            .filter_map(|metric| {
                let mut count = 0;
                let mut reasons: Vec<String> = Vec::new();
                for sample in samples.iter().filter(|sample| sample.is_data()) {
                    if let Some(reason) = sample.missing.get(&metric.name) {
                        count += 1;
                        if !reasons.contains(reason) {
                            reasons.push(reason.clone());
                        }
                    }
                }
                (count > 0).then(|| MissingRow {
                    metric: metric.name.clone(),
                    count,
                    reasons,
                })
            })
            .collect();
        let leftovers = samples
            .iter()
            .filter(|sample| !sample.leftovers.is_empty())
            .map(|sample| LeftoverRow {
                sequence: sample.sequence,
                cell: label(sample.cell),
                processes: sample.leftovers.clone(),
                killed: experiment.sampling.kill_leftovers,
            })
            .collect();
        Ok(RunReport {
            schema: REPORT_SCHEMA,
            run,
            metric: MetricInfo {
                name: metric.name.clone(),
                unit: metric.unit.clone(),
                better: better_name(metric.direction).to_string(),
            },
            environment: environment_lines(environment),
            cells: rows,
            comparisons,
            failures,
            missing,
            leftovers,
            metrics,
            layout,
            comparisons_error,
            boots: None,
        })
    }
}

pub(crate) fn comparison_label(levels: &[(String, String)], factor: &str) -> String {
    let candidate = levels
        .iter()
        .find(|(name, _)| name == factor)
        .map(|(_, level)| level.as_str())
        .unwrap_or("");
    let others: Vec<String> = levels
        .iter()
        .filter(|(name, _)| name != factor)
        .map(|(name, level)| format!("{name}={level}"))
        .collect();
    if others.is_empty() {
        format!("{factor}={candidate}")
    } else {
        format!("[{}] {factor}={candidate}", others.join(","))
    }
}
