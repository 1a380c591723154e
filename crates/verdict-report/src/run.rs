//! The report of one stored run (`verdict report`, schema
//! `verdict.report/v1`): the header (what ran, where, how), per cell n,
//! failures, median with interval, CV, min and max of the primary metric,
//! the experiment's comparisons, and the failed iterations with their
//! reasons, rendered from the verdict-analysis model (re-exported here).

use crate::compare::SideSummary;
use crate::escape;
use crate::format::{self, Format};
use crate::table::Table;
use std::ops::Deref;
pub use verdict_analysis::run::*;

/// `[low, high]`: a cell's 95% interval of the median; `n<6: none` when
/// it has data but too little for one, `-` without data.
pub fn cell_interval(cell: &CellRow, unit: &str) -> String {
    match (cell.ci_low, cell.ci_high) {
        (Some(low), Some(high)) => format!(
            "[{}, {}]",
            format::value(low, unit),
            format::value(high, unit)
        ),
        _ if cell.n > 0 => "n<6: none".to_string(),
        _ => "-".to_string(),
    }
}

/// `report` in `format`.
pub fn render(report: &RunReport, format: Format) -> String {
    render_within(report, format, None)
}

/// `report` in `format`, its text tables within `width` columns when
/// given (`--width N`: a table too wide is stacked, see
/// [`Table::text_within`]).
pub fn render_within(report: &RunReport, format: Format, width: Option<usize>) -> String {
    View { report, width }.render(format)
}

/// A run report as the renderer sees it.
struct View<'a> {
    report: &'a RunReport,
    width: Option<usize>,
}

impl Deref for View<'_> {
    type Target = RunReport;
    fn deref(&self) -> &RunReport {
        self.report
    }
}

impl View<'_> {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(self.report).unwrap_or_default() + "\n",
            Format::Csv => self.csv(),
            Format::Text => self.text(false),
            Format::Markdown => self.text(true),
            Format::Email => crate::email::run(self.report),
        }
    }

    /// Raw numbers, one row per cell and metric (the metrics side by side
    /// by default; `metric` alone in the detailed layout), a column per
    /// factor.
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
        let detailed = MetricColumn {
            name: self.metric.name.clone(),
            unit: self.metric.unit.clone(),
            better: self.metric.better.clone(),
            source: "declared",
            cells: self
                .cells
                .iter()
                .map(|cell| MetricCell {
                    n: cell.n,
                    median: cell.median,
                    ci_low: cell.ci_low,
                    ci_high: cell.ci_high,
                    cv: cell.cv,
                    robust_cv: cell.robust_cv,
                    min: cell.min,
                    max: cell.max,
                })
                .collect(),
        };
        let columns = match self.layout {
            Layout::Detailed => std::slice::from_ref(&detailed),
            Layout::SideBySide => self.metrics.as_slice(),
        };
        for (index, cell) in self.cells.iter().enumerate() {
            for column in columns {
                let Some(summary) = column.cells.get(index) else {
                    continue;
                };
                let mut row: Vec<String> = factors
                    .iter()
                    .map(|factor| cell.levels.get(factor).cloned().unwrap_or_default())
                    .collect();
                row.extend([
                    column.name.clone(),
                    column.unit.clone(),
                    summary.n.to_string(),
                    cell.failed.to_string(),
                    optional(summary.median),
                    optional(summary.ci_low),
                    optional(summary.ci_high),
                    optional(summary.cv),
                    optional(summary.robust_cv),
                    optional(summary.min),
                    optional(summary.max),
                ]);
                table.push(row);
            }
        }
        table.csv()
    }

    /// Every shown metric side by side: median with its interval
    /// (benchstat's `±` half-width, or the interval itself when asymmetric).
    fn side_by_side_table(&self) -> Table {
        let mut header: Vec<String> = ["cell", "n", "failed"].map(String::from).to_vec();
        header.extend(self.metrics.iter().map(|column| {
            if column.unit.is_empty() || column.unit == "s" || column.unit == column.name {
                // Seconds carry their own suffix in every value.
                column.name.clone()
            } else {
                format!("{} [{}]", column.name, column.unit)
            }
        }));
        let mut table = Table::new(header);
        for (index, cell) in self.cells.iter().enumerate() {
            let data = self
                .metrics
                .iter()
                .filter_map(|column| column.cells.get(index).map(|summary| summary.n))
                .max()
                .unwrap_or(cell.n);
            let mut row = vec![
                cell.label.clone(),
                data.to_string(),
                cell.failed.to_string(),
            ];
            for column in &self.metrics {
                row.push(match column.cells.get(index) {
                    Some(summary) => match summary.median {
                        Some(median) => {
                            let side = SideSummary {
                                n: summary.n,
                                median,
                                ci_low: summary.ci_low,
                                ci_high: summary.ci_high,
                                cv: summary.cv,
                            };
                            let mut text = crate::compare::median_with_spread(&side, &column.unit);
                            if summary.n != data {
                                text.push_str(&format!(" (n={})", summary.n));
                            }
                            text
                        }
                        None => "-".to_string(),
                    },
                    None => "-".to_string(),
                });
            }
            table.push(row);
        }
        table
    }

    /// The legend of the side-by-side table: what a cell shows and each
    /// metric's direction.
    fn side_by_side_legend(&self) -> String {
        let mut legend = "median ±95% CI (half-width, or the interval when asymmetric)".to_string();
        for better in ["higher", "lower"] {
            let names: Vec<&str> = self
                .metrics
                .iter()
                .filter(|column| column.better == better)
                .map(|column| column.name.as_str())
                .collect();
            if !names.is_empty() {
                legend.push_str(&format!("; {better} is better: {}", names.join(", ")));
            }
        }
        legend
    }

    /// A booted run: each boot level's guest, one line with its facts (the
    /// workload ran there), to lead the header; the recorded environment
    /// after them is the controller's (the boots section labels it).
    fn guest_lines(&self) -> Vec<String> {
        let Some(provenance) = self
            .provenance
            .as_ref()
            .filter(|provenance| provenance.controller.is_some())
        else {
            return Vec::new();
        };
        provenance
            .machines
            .iter()
            .map(|machine| {
                let described: Vec<String> = crate::provenance::facts(machine)
                    .into_iter()
                    .filter(|(key, _)| key != "cmdline")
                    .map(|(key, value)| format!("{key} {value}"))
                    .collect();
                format!("{}: {}", machine.title(), described.join("; "))
            })
            .collect()
    }

    /// Every declared metric's verdict per comparison, one column per
    /// metric (`delta [interval] verdict`), when the experiment declares
    /// more than one metric.
    fn verdicts_side_by_side(&self) -> Option<Table> {
        let comparisons = self.comparisons.as_ref()?;
        if self.metric_verdicts.is_empty() {
            return None;
        }
        let label = |name: &str, unit: &str| {
            if unit.is_empty() || unit == name {
                name.to_string()
            } else {
                format!("{name} [{unit}]")
            }
        };
        let mut header = vec![
            "name".to_string(),
            label(&self.metric.name, &self.metric.unit),
        ];
        header.extend(
            self.metric_verdicts
                .iter()
                .map(|other| label(&other.metric, &other.unit)),
        );
        let mut table = Table::new(header);
        table.left = (1..=self.metric_verdicts.len() + 1).collect();
        let cell = |row: &crate::compare::ComparisonRow| {
            format!(
                "{} {}",
                crate::compare::delta_with_interval(row),
                crate::compare::verdict_text(row)
            )
        };
        for row in &comparisons.comparisons {
            let mut cells = vec![row.name.clone(), cell(row)];
            for other in &self.metric_verdicts {
                cells.push(
                    other
                        .comparisons
                        .as_ref()
                        .and_then(|report| {
                            report
                                .comparisons
                                .iter()
                                .find(|found| found.name == row.name)
                        })
                        .map_or_else(|| "-".to_string(), cell),
                );
            }
            table.push(cells);
        }
        Some(table)
    }

    fn cell_table(&self) -> Table {
        let mut table = Table::new(
            [
                "cell", "n", "failed", "median", "95% CI", "CV", "rCV", "min", "max",
            ]
            .map(String::from)
            .to_vec(),
        );
        let unit = &self.metric.unit;
        let percent = |value: Option<f64>| {
            value
                .map(|value| format!("{:.1}%", value * 100.0))
                .unwrap_or_else(|| "-".to_string())
        };
        for cell in &self.cells {
            let optional = |value: Option<f64>| {
                value
                    .map(|value| format::value(value, unit))
                    .unwrap_or_else(|| "-".to_string())
            };
            let interval = cell_interval(cell, unit);
            let mut cv = percent(cell.cv);
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
                percent(cell.robust_cv),
                optional(cell.min),
                optional(cell.max),
            ]);
        }
        table
    }

    /// Text or markdown. Every line that quotes a value (names, levels,
    /// environment, output tails) goes through the format's escaping
    /// function as a whole; tables escape their own cells.
    fn text(&self, markdown: bool) -> String {
        let mut output = self.header(markdown);
        let render = |table: Table| {
            if markdown {
                table.markdown()
            } else {
                table.text_width(self.width)
            }
        };
        if self.layout == Layout::SideBySide && !self.metrics.is_empty() {
            output.push('\n');
            output.push_str(&legend_line(&self.side_by_side_legend(), markdown));
            output.push_str(&render(self.side_by_side_table()));
        }
        output.push('\n');
        let legend = format!(
            "{}: CV = standard deviation / mean; rCV = robust CV, 1.4826 x MAD / median",
            self.metric.name
        );
        output.push_str(&legend_line(&legend, markdown));
        output.push_str(&render(self.cell_table()));
        if let Some(comparisons) = &self.comparisons {
            output.push('\n');
            output.push_str(&crate::compare::render_within(
                comparisons,
                if markdown {
                    Format::Markdown
                } else {
                    Format::Text
                },
                self.width,
            ));
        }
        if let Some(table) = self.verdicts_side_by_side() {
            output.push('\n');
            output.push_str(&legend_line(
                "verdicts side by side (each metric's comparisons adjusted on their own):",
                markdown,
            ));
            output.push_str(&render(table));
        }
        if let Some(error) = &self.comparisons_error {
            let line = format!("comparisons of {} not computed: {error}", self.metric.name);
            output.push_str(&if markdown {
                format!("\n{}\n", escape::markdown(&line))
            } else {
                format!("\n{}\n", escape::text(&line))
            });
        }
        if let Some(boots) = &self.boots {
            output.push_str(&crate::boots::View(boots).text(
                markdown,
                &self.metric.name,
                &self.metric.unit,
                self.width,
            ));
        }
        output.push_str(&self.failures_text(markdown));
        output.push_str(&self.notes_text(markdown));
        output
    }

    /// The heading and the run's facts (the guests of a booted run, the
    /// recorded environment), one line each.
    fn header(&self, markdown: bool) -> String {
        let run = &self.run;
        let mut output = String::new();
        let heading = format!(
            "run {}: {} ({}), started {}",
            run.id, run.name, run.status, run.started
        );
        if markdown {
            output.push_str(&format!("### {}\n\n", escape::markdown(&heading)));
        } else {
            output.push_str(&format!("{}\n", escape::text(&heading)));
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
        if let Some(work) = &self.work {
            for takeover in &work.takeovers {
                facts.push(format!(
                    "block {} taken over at {}: {} on {} -> {} on {}{}",
                    takeover.block,
                    crate::time::format_time(takeover.taken_at_ms),
                    takeover.from_worker,
                    takeover.from_host,
                    takeover.to_worker,
                    takeover.to_host,
                    takeover
                        .resumed_after
                        .map_or_else(String::new, |sequence| format!(" after sample {sequence}"))
                ));
            }
        }
        facts.extend(self.guest_lines());
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
            if markdown {
                output.push_str(&format!("- {}\n", escape::markdown(&fact)));
            } else {
                output.push_str(&format!("  {}\n", escape::text(&fact)));
            }
        }
        output
    }

    /// The failed iterations (not data), the first 20 with their
    /// output's last lines; empty when none failed.
    fn failures_text(&self, markdown: bool) -> String {
        let mut output = String::new();
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
                let line = format!(
                    "#{} {}: {}{}",
                    failure.sequence,
                    failure.cell,
                    failure.reason,
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(" -- output: {tail}")
                    }
                );
                output.push_str(&if markdown {
                    format!("- {}\n", escape::markdown(&line))
                } else {
                    format!("  {}\n", escape::text(&line))
                });
            }
            if self.failures.len() > 20 {
                output.push_str(&format!(
                    "  ... and {} more (--format json lists all)\n",
                    self.failures.len() - 20
                ));
            }
        }
        output
    }

    /// Missing values and leftover processes, when there are any.
    fn notes_text(&self, markdown: bool) -> String {
        let mut output = String::new();
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
        // Each line escaped once, for its format (a backslash is spelled
        // `\\`: escaping twice would spell it twice).
        for note in notes {
            output.push_str(&if markdown && note.starts_with("  ") {
                format!("- {}\n", escape::markdown(note.trim()))
            } else {
                format!("{}\n", escape::text(&note))
            });
        }
        output
    }
}

/// A legend line before a table: escaped, followed by an empty line in
/// markdown.
fn legend_line(legend: &str, markdown: bool) -> String {
    if markdown {
        format!("{}\n\n", escape::markdown(legend))
    } else {
        format!("{}\n", escape::text(legend))
    }
}
