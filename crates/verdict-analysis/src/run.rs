//! The report of one stored run (`verdict report`, schema
//! `verdict.report/v1`): the header (what ran, where, how), per cell n,
//! failures, median with interval, CV, min and max of the primary metric,
//! the experiment's comparisons, and the failed iterations with their
//! reasons: the model, built from stored data only; pure. verdict-report
//! renders it.

use crate::compare::{
    CompareReport, ComparisonInput, comparisons_if_any, paired_comparisons_if_any,
};
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use verdict_model::{Analysis, Better, Builtin, ComparisonSpec, Environment, Experiment, Sample};
use verdict_stats::paired::block_pairs;
use verdict_stats::summary::{Summary, summarize};

use crate::error::AnalysisError;
use crate::samples::SampleTable;

pub const REPORT_SCHEMA: &str = "verdict.report/v1";

/// Facts about the run, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MetricInfo {
    pub name: String,
    pub unit: String,
    pub better: String,
}

/// One cell's summary.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FailureRow {
    pub sequence: u32,
    pub cell: String,
    pub reason: String,
    pub output_tail: String,
}

/// A metric some successful iterations could not measure (perf's `<not
/// supported>`): those iterations count, without a value for it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MissingRow {
    pub metric: String,
    /// Successful measured iterations without a value.
    pub count: usize,
    /// What the tool said, as recorded (distinct reasons).
    pub reasons: Vec<String>,
}

/// An iteration that left processes running in its process group.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LeftoverRow {
    pub sequence: u32,
    pub cell: String,
    /// One name per process.
    pub processes: Vec<String>,
    /// Whether verdict killed them (the experiment's `kill_leftovers`).
    pub killed: bool,
}

/// One metric's summary in every cell, for the side-by-side table.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
        Self::summarized(values.len(), summarize(values).as_ref())
    }

    /// The cell of `n` values whose summary is `summary`.
    fn summarized(n: usize, summary: Option<&Summary>) -> Self {
        let interval = summary.and_then(|summary| summary.median_ci);
        Self {
            n,
            median: summary.map(|summary| summary.median),
            ci_low: interval.map(|interval| interval.low),
            ci_high: interval.map(|interval| interval.high),
            cv: summary.and_then(|summary| summary.cv),
            robust_cv: summary.and_then(|summary| summary.robust_cv),
            min: summary.map(|summary| summary.min),
            max: summary.map(|summary| summary.max),
        }
    }
}

/// How the text and markdown report lay out the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// The side-by-side table of `metrics`, then the detailed table of
    /// `metric` (the default).
    SideBySide,
    /// Only the detailed table of `metric` (`--metric NAME`).
    Detailed,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
    /// A detached run measured by `verdict work`: its hosts and takeovers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<crate::work::WorkSection>,
    /// The comparisons of every other declared metric (an experiment
    /// declaring two or more), each its own family for multiplicity: the
    /// verdicts the text and email forms show side by side.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metric_verdicts: Vec<MetricVerdicts>,
    /// What exactly ran: commit, machines (CPU, kernel, compiler, config),
    /// build, and the command that reproduces the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::provenance::Provenance>,
    /// The values behind `comparisons` (not in the JSON document: the
    /// samples are `verdict export`'s).
    #[serde(skip)]
    pub compared_values: Vec<ComparedValues>,
}

/// The values one comparison of the detailed metric compared (its data
/// iterations per side), for combining hosts without pooling them.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedValues {
    pub name: String,
    pub baseline: Vec<f64>,
    pub candidate: Vec<f64>,
}

/// One more declared metric's comparisons.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MetricVerdicts {
    pub metric: String,
    pub unit: String,
    pub better: String,
    pub comparisons: Option<CompareReport>,
    /// Why `comparisons` is null (the values cannot be compared).
    pub error: Option<String>,
}

impl RunReport {
    /// The report with its provenance attached.
    pub fn with_provenance(mut self, provenance: crate::provenance::Provenance) -> RunReport {
        self.provenance = Some(provenance);
        self
    }
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
    pub(crate) direction: Better,
    /// Read from the sample's own fields (an undeclared built-in).
    pub(crate) builtin: Option<Builtin>,
}

impl Available {
    /// The sample's value of this metric: a built-in one's own
    /// measurement, a declared one's extracted value.
    pub(crate) fn value(&self, sample: &Sample) -> Option<f64> {
        match self.builtin {
            Some(builtin) => Some(sample.measured(builtin)),
            None => sample.metrics.get(&self.name).copied(),
        }
    }
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
                direction: Better::Lower,
                builtin: Some(builtin),
            });
        }
    }
    available
}

/// A metric's column without its cells.
fn metric_column_header(metric: &Available) -> MetricColumn {
    MetricColumn {
        name: metric.name.clone(),
        unit: metric.unit.clone(),
        better: metric.direction.as_str().to_string(),
        source: if metric.builtin.is_some() {
            "builtin"
        } else {
            "declared"
        },
        cells: Vec::new(),
    }
}

fn metric_column(table: &SampleTable, metric: &Available) -> MetricColumn {
    MetricColumn {
        cells: table
            .cell_values(&metric.name)
            .par_iter()
            .map(|values| MetricCell::of(values))
            .collect(),
        ..metric_column_header(metric)
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
    add("kernel compiler", environment.kernel_compiler.clone());
    add("cpu", environment.cpu_model.clone());
    add(
        "cpu id",
        environment
            .cpu_identity
            .as_ref()
            .map(verdict_model::CpuIdentity::line),
    );
    add(
        "cpu features",
        (!environment.cpu_features.is_empty())
            .then(|| verdict_model::provenance::features_line(&environment.cpu_features)),
    );
    add("cpus", crate::provenance::cpus_line(environment));
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
    add("config source", environment.kernel_config_source.clone());
    if let Some(build) = &environment.build {
        add("built commit", build.commit.clone());
        add("build command", build.command.clone());
        add("build compiler", build.compiler.clone());
    }
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
    /// Build from samples held in memory. Pure.
    pub fn build(
        run: RunInfo,
        experiment: &Experiment,
        samples: &[Sample],
        environment: &Environment,
        options: &RunReportOptions,
    ) -> Result<RunReport, AnalysisError> {
        Self::build_from(
            run,
            experiment,
            &SampleTable::of(experiment, samples),
            environment,
            options,
        )
    }

    /// Build from a run's samples as columns (streamed from the store):
    /// each cell's summaries, the comparisons, the failures, missing
    /// values and leftovers. Pure.
    pub fn build_from(
        run: RunInfo,
        experiment: &Experiment,
        table: &SampleTable,
        environment: &Environment,
        options: &RunReportOptions,
    ) -> Result<RunReport, AnalysisError> {
        let available = table.metrics();
        let metric = find_metric(
            available,
            options
                .metric
                .as_deref()
                .unwrap_or(&experiment.primary_metric().name),
        )?;
        let shown: Vec<&Available> = match &options.metrics {
            None => available.iter().collect(),
            Some(names) => names
                .iter()
                .map(|name| find_metric(available, name.trim()))
                .collect::<Result<_, _>>()?,
        };
        let cells = experiment.cells();
        let values = table.cell_values(&metric.name);
        // Each cell's summary of the report's metric, once (its row, its
        // column in the side-by-side table), the other metrics' columns and
        // the comparisons are independent: computed side by side (each a
        // sort of every cell's values, a second on a run of 10^6 samples).
        let ((summaries, others), comparisons) = rayon::join(
            || {
                rayon::join(
                    || {
                        values
                            .par_iter()
                            .map(|values| summarize(values))
                            .collect::<Vec<Option<Summary>>>()
                    },
                    || {
                        shown
                            .par_iter()
                            .filter(|shown| shown.name != metric.name)
                            .map(|shown| metric_column(table, shown))
                            .collect::<Vec<MetricColumn>>()
                    },
                )
            },
            || comparisons_of(experiment, &cells, table, metric, &values, options),
        );
        let mut others = others.into_iter();
        let metrics: Vec<MetricColumn> = shown
            .iter()
            .filter_map(|shown| {
                if shown.name == metric.name {
                    Some(MetricColumn {
                        cells: values
                            .iter()
                            .zip(&summaries)
                            .map(|(values, summary)| {
                                MetricCell::summarized(values.len(), summary.as_ref())
                            })
                            .collect(),
                        ..metric_column_header(shown)
                    })
                } else {
                    others.next()
                }
            })
            .collect();
        let layout = if options.metric.is_some() && options.metrics.is_none() {
            Layout::Detailed
        } else {
            Layout::SideBySide
        };
        let rows = cell_rows(&cells, table, metric, &values, &summaries);
        let (comparisons, comparisons_error) = match comparisons {
            Ok(comparisons) => (comparisons, None),
            Err(error) => (None, Some(error.to_string())),
        };
        let compared_values = compared_values_of(experiment, &cells, &values);
        let metric_verdicts = metric_verdicts_of(experiment, &cells, table, metric, options);
        let label = |index: usize| {
            cells
                .get(index)
                .map(|cell| cell.label())
                .unwrap_or_default()
        };
        Ok(RunReport {
            schema: REPORT_SCHEMA,
            run,
            metric: MetricInfo {
                name: metric.name.clone(),
                unit: metric.unit.clone(),
                better: metric.direction.as_str().to_string(),
            },
            environment: environment_lines(environment),
            cells: rows,
            comparisons,
            failures: table
                .failures()
                .iter()
                .map(|failure| FailureRow {
                    sequence: failure.sequence,
                    cell: label(failure.cell),
                    reason: failure.reason.clone(),
                    output_tail: failure.output_tail.clone(),
                })
                .collect(),
            missing: table
                .missing()
                .map(|missing| MissingRow {
                    metric: missing.metric.clone(),
                    count: missing.count,
                    reasons: missing.reasons.clone(),
                })
                .collect(),
            leftovers: table
                .leftovers()
                .iter()
                .map(|leftover| LeftoverRow {
                    sequence: leftover.sequence,
                    cell: label(leftover.cell),
                    processes: leftover.processes.clone(),
                    killed: experiment.sampling.kill_leftovers,
                })
                .collect(),
            metrics,
            layout,
            comparisons_error,
            boots: None,
            work: None,
            metric_verdicts,
            provenance: None,
            compared_values,
        })
    }
}

/// The metric called `name` among those the run has.
fn find_metric<'a>(available: &'a [Available], name: &str) -> Result<&'a Available, AnalysisError> {
    available
        .iter()
        .find(|metric| metric.name == name)
        .ok_or_else(|| AnalysisError::UnknownMetric {
            name: name.to_string(),
            available: available.iter().map(|metric| metric.name.clone()).collect(),
        })
}

/// One row per cell: the report's metric summarized, failures, warmups,
/// outliers (by sequence) and drift.
fn cell_rows(
    cells: &[verdict_model::Cell],
    table: &SampleTable,
    metric: &Available,
    values: &[Vec<f64>],
    summaries: &[Option<Summary>],
) -> Vec<CellRow> {
    cells
        .iter()
        .enumerate()
        .map(|(index, cell)| {
            let summary = summaries[index].as_ref();
            let stats = MetricCell::summarized(values[index].len(), summary);
            let in_cell = table.cells().get(index);
            let outliers = summary
                .filter(|summary| !summary.outliers.is_empty())
                .map(|summary| {
                    let sequences: Vec<u32> = table
                        .data(index, &metric.name)
                        .map(|(sequence, _, _)| sequence)
                        .collect();
                    summary
                        .outliers
                        .iter()
                        .filter_map(|index| sequences.get(*index).copied())
                        .collect()
                })
                .unwrap_or_default();
            CellRow {
                levels: cell.levels.iter().cloned().collect(),
                label: cell.label(),
                n: values[index].len(),
                failed: in_cell.map_or(0, |samples| samples.failed.len()),
                warmups: in_cell.map_or(0, |samples| samples.warmups),
                median: stats.median,
                ci_low: stats.ci_low,
                ci_high: stats.ci_high,
                cv: stats.cv,
                robust_cv: stats.robust_cv,
                min: stats.min,
                max: stats.max,
                outliers,
                drift: summary.and_then(|summary| {
                    summary
                        .drift
                        .as_ref()
                        .filter(|drift| drift.flagged)
                        .map(|drift| drift.rho)
                }),
            }
        })
        .collect()
}

/// The experiment's comparisons of `metric` with the analysis it chose
/// before the data were seen (independent or block-paired); an error when
/// the metric's values cannot be compared (a zero on the log scale of the
/// shift estimate, e.g. `sys` of a quick command), which the report shows
/// instead.
/// The values behind each comparison with enough of them (two a side),
/// for the plots.
fn compared_values_of(
    experiment: &Experiment,
    cells: &[verdict_model::Cell],
    values: &[Vec<f64>],
) -> Vec<ComparedValues> {
    experiment
        .comparisons()
        .iter()
        .filter(|comparison| {
            values[comparison.baseline_cell].len() >= 2
                && values[comparison.candidate_cell].len() >= 2
        })
        .map(|comparison| ComparedValues {
            name: comparison_name(cells, comparison),
            baseline: values[comparison.baseline_cell].clone(),
            candidate: values[comparison.candidate_cell].clone(),
        })
        .collect()
}

/// Every other declared metric's verdicts, side by side with the detailed
/// one's (an experiment that declares wall and sys asks about both).
fn metric_verdicts_of(
    experiment: &Experiment,
    cells: &[verdict_model::Cell],
    table: &SampleTable,
    metric: &Available,
    options: &RunReportOptions,
) -> Vec<MetricVerdicts> {
    if experiment.metrics.len() < 2 {
        return Vec::new();
    }
    table
        .metrics()
        .iter()
        .filter(|other| other.builtin.is_none() && other.name != metric.name)
        .map(|other| {
            let values = table.cell_values(&other.name);
            let (comparisons, error) =
                match comparisons_of(experiment, cells, table, other, &values, options) {
                    Ok(comparisons) => (comparisons, None),
                    Err(error) => (None, Some(error.to_string())),
                };
            MetricVerdicts {
                metric: other.name.clone(),
                unit: other.unit.clone(),
                better: other.direction.as_str().to_string(),
                comparisons,
                error,
            }
        })
        .collect()
}

fn comparisons_of(
    experiment: &Experiment,
    cells: &[verdict_model::Cell],
    table: &SampleTable,
    metric: &Available,
    values: &[Vec<f64>],
    options: &RunReportOptions,
) -> Result<Option<CompareReport>, verdict_stats::StatsError> {
    let better = metric.direction;
    let declared_threshold = experiment
        .metrics
        .iter()
        .find(|declared| declared.name == metric.name)
        .and_then(|declared| declared.threshold);
    let threshold = options
        .threshold
        .or(declared_threshold)
        .unwrap_or(experiment.sampling.threshold);
    // Every comparison with a run a side gets a row; one that cannot be
    // decided says why (one run per cell).
    let compared: Vec<_> = experiment
        .comparisons()
        .into_iter()
        .filter(|comparison| {
            !values[comparison.baseline_cell].is_empty()
                && !values[comparison.candidate_cell].is_empty()
        })
        .collect();
    let inputs: Vec<ComparisonInput> = compared
        .iter()
        .map(|comparison| ComparisonInput {
            name: comparison_name(cells, comparison),
            unit: metric.unit.clone(),
            better,
            threshold,
            power: experiment.sampling.power,
            baseline: values[comparison.baseline_cell].clone(),
            candidate: values[comparison.candidate_cell].clone(),
        })
        .collect();
    match experiment.sampling.analysis {
        Analysis::Independent => comparisons_if_any(&inputs, options.alpha, options.adjust),
        Analysis::Paired => {
            let blocked = |cell: usize| -> Vec<(u64, f64)> {
                table
                    .data(cell, &metric.name)
                    .map(|(_, block, value)| (u64::from(block), value))
                    .collect()
            };
            let mut dropped = Vec::with_capacity(inputs.len());
            let paired_inputs: Vec<ComparisonInput> = compared
                .iter()
                .zip(&inputs)
                .map(|(comparison, input)| {
                    let pairs = block_pairs(
                        &blocked(comparison.baseline_cell),
                        &blocked(comparison.candidate_cell),
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
    }
}

/// `[load=2] preempt=full vs none`: a comparison's name in every report.
fn comparison_name(cells: &[verdict_model::Cell], comparison: &ComparisonSpec) -> String {
    format!(
        "{} vs {}",
        comparison_label(&cells[comparison.candidate_cell].levels, &comparison.factor),
        cells[comparison.baseline_cell]
            .level(&comparison.factor)
            .unwrap_or("")
    )
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
