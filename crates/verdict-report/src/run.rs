//! The report of one stored run (`verdict report`, schema
//! `verdict.report/v1`): the header (what ran, where, how), per cell n,
//! failures, median with interval, CV, min and max of the primary metric,
//! the experiment's comparisons, and the failed iterations with their
//! reasons. Built from stored data only; pure.

use crate::compare::{CompareReport, ComparisonInput, comparisons_if_any};
use crate::format::{self, Format};
use crate::table::Table;
use serde::Serialize;
use std::collections::BTreeMap;
use verdict_model::{Direction, Environment, Experiment, Sample};
use verdict_stats::summary::summarize;
use verdict_stats::verdict::Better;

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
}

/// Options for building a run report.
#[derive(Debug, Clone)]
pub struct RunReportOptions {
    /// Metric to report (default: the primary one).
    pub metric: Option<String>,
    /// Threshold override (fraction).
    pub threshold: Option<f64>,
    pub alpha: f64,
    pub adjust: bool,
}

impl Default for RunReportOptions {
    fn default() -> Self {
        RunReportOptions {
            metric: None,
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
        let metric = match &options.metric {
            None => experiment.primary_metric(),
            Some(name) => experiment
                .metrics
                .iter()
                .find(|metric| &metric.name == name)
                .ok_or_else(|| {
                    format!(
                        "the run has no metric `{name}`; it has: {}",
                        experiment
                            .metrics
                            .iter()
                            .map(|metric| metric.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })?,
        };
        let cells = experiment.cells();
        let values = cell_values(samples, cells.len(), &metric.name);
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
                            && sample.metrics.contains_key(&metric.name)
                    })
                    .map(|sample| sample.sequence)
                    .collect();
                let summary = summarize(&values[index]);
                CellRow {
                    levels: cell.levels.iter().cloned().collect(),
                    label: cell.label(),
                    n: values[index].len(),
                    failed: in_cell
                        .clone()
                        .filter(|sample| sample.failure.is_some() && !sample.warmup)
                        .count(),
                    warmups: in_cell.filter(|sample| sample.warmup).count(),
                    median: summary.as_ref().map(|summary| summary.median),
                    ci_low: summary
                        .as_ref()
                        .and_then(|summary| summary.median_ci.map(|interval| interval.low)),
                    ci_high: summary
                        .as_ref()
                        .and_then(|summary| summary.median_ci.map(|interval| interval.high)),
                    cv: summary.as_ref().and_then(|summary| summary.cv),
                    robust_cv: summary.as_ref().and_then(|summary| summary.robust_cv),
                    min: summary.as_ref().map(|summary| summary.min),
                    max: summary.as_ref().map(|summary| summary.max),
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
        let better = match metric.direction {
            Direction::HigherIsBetter => Better::Higher,
            Direction::LowerIsBetter => Better::Lower,
        };
        let threshold = options
            .threshold
            .or(metric.threshold)
            .unwrap_or(experiment.sampling.threshold);
        let inputs: Vec<ComparisonInput> = experiment
            .comparisons()
            .iter()
            .filter(|comparison| {
                values[comparison.baseline_cell].len() >= 2
                    && values[comparison.candidate_cell].len() >= 2
            })
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
                baseline: values[comparison.baseline_cell].clone(),
                candidate: values[comparison.candidate_cell].clone(),
            })
            .collect();
        let comparisons = comparisons_if_any(&inputs, options.alpha, options.adjust)?;
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
                better: match metric.direction {
                    Direction::HigherIsBetter => "higher",
                    Direction::LowerIsBetter => "lower",
                }
                .to_string(),
            },
            environment: environment_lines(environment),
            cells: rows,
            comparisons,
            failures,
            missing,
            leftovers,
        })
    }

    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(self).unwrap_or_default() + "\n",
            Format::Csv => self.csv(),
            Format::Text => format::plain_text(&self.text(false)),
            Format::Markdown => format::plain_text(&self.text(true)),
        }
    }

    /// Raw numbers, one row per cell, a column per factor.
    fn csv(&self) -> String {
        let factors: Vec<String> = self
            .cells
            .first()
            .map(|cell| cell.levels.keys().cloned().collect())
            .unwrap_or_default();
        let mut header = factors.clone();
        header.extend(
            [
                "metric",
                "unit",
                "n",
                "failed",
                "median",
                "ci_low",
                "ci_high",
                "cv",
                "robust_cv",
                "min",
                "max",
            ]
            .map(String::from),
        );
        let mut table = Table::new(header);
        let optional =
            |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
        for cell in &self.cells {
            let mut row: Vec<String> = factors
                .iter()
                .map(|factor| cell.levels.get(factor).cloned().unwrap_or_default())
                .collect();
            row.extend([
                self.metric.name.clone(),
                self.metric.unit.clone(),
                cell.n.to_string(),
                cell.failed.to_string(),
                optional(cell.median),
                optional(cell.ci_low),
                optional(cell.ci_high),
                optional(cell.cv),
                optional(cell.robust_cv),
                optional(cell.min),
                optional(cell.max),
            ]);
            table.push(row);
        }
        table.csv()
    }

    fn cell_table(&self) -> Table {
        let mut table = Table::new(
            [
                "cell", "n", "failed", "median", "95% CI", "CV", "min", "max",
            ]
            .map(String::from)
            .to_vec(),
        );
        let unit = &self.metric.unit;
        for cell in &self.cells {
            let optional = |value: Option<f64>| {
                value
                    .map(|value| format::value(value, unit))
                    .unwrap_or_else(|| "-".to_string())
            };
            let interval = match (cell.ci_low, cell.ci_high) {
                (Some(low), Some(high)) => format!(
                    "[{}, {}]",
                    format::value(low, unit),
                    format::value(high, unit)
                ),
                _ if cell.n > 0 => "n<6: none".to_string(),
                _ => "-".to_string(),
            };
            let mut cv = cell
                .cv
                .map(|cv| format!("{:.1}%", cv * 100.0))
                .unwrap_or_else(|| "-".to_string());
            if cell.drift.is_some() {
                cv.push_str(" drift");
            }
            table.push(vec![
                cell.label.clone(),
                cell.n.to_string(),
                cell.failed.to_string(),
                optional(cell.median),
                interval,
                cv,
                optional(cell.min),
                optional(cell.max),
            ]);
        }
        table
    }

    fn text(&self, markdown: bool) -> String {
        let run = &self.run;
        let mut output = String::new();
        let heading = format!(
            "run {}: {} ({}), started {}",
            run.id, run.name, run.status, run.started
        );
        if markdown {
            output.push_str(&format!("### {}\n\n", format::markdown_cell(&heading)));
        } else {
            output.push_str(&format!("{}\n", format::plain_text(&heading)));
        }
        let mut facts: Vec<String> = vec![format!(
            "{}{} ({} is better); order {}; {} of {} iterations recorded; seed {}; {}",
            self.metric.name,
            if self.metric.unit.is_empty() {
                String::new()
            } else {
                format!(" [{}]", self.metric.unit)
            },
            self.metric.better,
            run.order,
            run.recorded,
            run.planned,
            run.seed,
            run.tool_version
        )];
        if let Some(procedure) = &run.procedure {
            facts.push(format!("adaptive: {procedure}"));
        }
        for decision in &run.decisions {
            facts.push(format!("adaptive stop: {decision}"));
        }
        if let Some(noise) = &run.noise {
            facts.push(format!("noise: {noise}"));
        }
        for (key, value) in &self.environment {
            // Long values (boot command lines) are cut in text; JSON has them whole.
            let shown: String = if value.chars().count() > 100 {
                format!("{}...", value.chars().take(100).collect::<String>())
            } else {
                value.clone()
            };
            facts.push(format!("{key}: {shown}"));
        }
        for fact in facts {
            let line = format::plain_text(&fact);
            if markdown {
                output.push_str(&format!("- {}\n", format::markdown_cell(&line)));
            } else {
                output.push_str(&format!("  {line}\n"));
            }
        }
        output.push('\n');
        let table = self.cell_table();
        output.push_str(&if markdown {
            table.markdown()
        } else {
            table.text()
        });
        if let Some(comparisons) = &self.comparisons {
            output.push('\n');
            output.push_str(&comparisons.render(if markdown {
                Format::Markdown
            } else {
                Format::Text
            }));
        }
        if !self.failures.is_empty() {
            output.push_str(&format!(
                "\n{} failed iteration(s), not used as data:\n",
                self.failures.len()
            ));
            for failure in self.failures.iter().take(20) {
                let tail: String = failure
                    .output_tail
                    .lines()
                    .rev()
                    .take(3)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join(" | ");
                let line = format::plain_text(&format!(
                    "  #{} {}: {}{}",
                    failure.sequence,
                    failure.cell,
                    failure.reason,
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(" -- output: {tail}")
                    }
                ));
                output.push_str(&if markdown {
                    format!("- {}\n", format::markdown_cell(line.trim()))
                } else {
                    format!("{line}\n")
                });
            }
            if self.failures.len() > 20 {
                output.push_str(&format!(
                    "  ... and {} more (--format json lists all)\n",
                    self.failures.len() - 20
                ));
            }
        }
        let mut notes: Vec<String> = Vec::new();
        if !self.missing.is_empty() {
            notes.push(String::new());
            notes.push(
                "missing values (these iterations count; only this metric has no value):"
                    .to_string(),
            );
            for row in &self.missing {
                notes.push(format!(
                    "  {}: {} missing value(s): {}",
                    row.metric,
                    row.count,
                    row.reasons.join("; ")
                ));
            }
        }
        if !self.leftovers.is_empty() {
            notes.push(String::new());
            notes.push(format!(
                "{} iteration(s) left processes running after the command exited:",
                self.leftovers.len()
            ));
            for row in self.leftovers.iter().take(20) {
                notes.push(format!(
                    "  #{} {}: {} process(es): {} ({})",
                    row.sequence,
                    row.cell,
                    row.processes.len(),
                    row.processes.join(", "),
                    if row.killed { "killed" } else { "left running" }
                ));
            }
            if self.leftovers.len() > 20 {
                notes.push(format!(
                    "  ... and {} more (--format json lists all)",
                    self.leftovers.len() - 20
                ));
            }
        }
        for note in notes {
            let line = format::plain_text(&note);
            output.push_str(&if markdown && line.starts_with("  ") {
                format!("- {}\n", format::markdown_cell(line.trim()))
            } else {
                format!("{line}\n")
            });
        }
        output
    }
}

fn comparison_label(levels: &[(String, String)], factor: &str) -> String {
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
