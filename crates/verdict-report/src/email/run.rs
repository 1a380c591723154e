//! A run's report by email (`verdict report --format email`, and `run` /
//! `ab` with it): the heading, the verdicts counted, one block per
//! comparison with every declared metric's verdict side by side, the
//! method, the detailed metric's cells, the boots (a booted run), what
//! failed, then what ran and how to reproduce it.
//!
//! Must not: compute anything: the figures are the `RunReport`'s.

use super::Lines;
use super::blocks::{Family, comparison_blocks, method, provenance_block, summary_counts};
use crate::format;
use crate::run::RunReport;
use crate::table::Table;

/// `report` as an email.
pub fn run(report: &RunReport) -> String {
    let mut lines = Lines::new();
    let run = &report.run;
    lines.line(
        0,
        &format!(
            "verdict: run {} {} ({}), started {}",
            run.id, run.name, run.status, run.started
        ),
    );
    let families = families(report);
    verdict_summary(&mut lines, report, &families);
    comparison_blocks(&mut lines, &families);
    if let Some(error) = &report.comparisons_error {
        lines.blank();
        lines.prose(
            0,
            &format!(
                "comparisons of {} not computed: {error}",
                report.metric.name
            ),
        );
    }
    for other in &report.metric_verdicts {
        if let Some(error) = &other.error {
            lines.blank();
            lines.prose(
                0,
                &format!("comparisons of {} not computed: {error}", other.metric),
            );
        }
    }
    if let Some((_, primary)) = families.first() {
        method(&mut lines, primary);
    }
    cells(&mut lines, report);
    boots(&mut lines, report);
    failures(&mut lines, report);
    if let Some(provenance) = &report.provenance {
        provenance_block(&mut lines, provenance, &data_facts(report));
    } else {
        lines.heading("What ran");
        for (key, value) in data_facts(report).iter().chain(&report.environment) {
            lines.fact(2, key, value);
        }
    }
    lines.finish()
}

/// The detailed metric's comparisons first, then each other declared
/// metric's: every family labelled with its metric and unit.
fn families(report: &RunReport) -> Vec<Family<'_>> {
    let label = |name: &str, unit: &str| {
        if unit.is_empty() || unit == name {
            name.to_string()
        } else {
            format!("{name} [{unit}]")
        }
    };
    let mut families = Vec::new();
    if let Some(comparisons) = &report.comparisons {
        families.push((label(&report.metric.name, &report.metric.unit), comparisons));
    }
    for other in &report.metric_verdicts {
        if let Some(comparisons) = &other.comparisons {
            families.push((label(&other.metric, &other.unit), comparisons));
        }
    }
    families
}

/// `1 comparison of wall [s] (lower is better): 1 regression.`, one
/// sentence per family.
fn verdict_summary(lines: &mut Lines, report: &RunReport, families: &[Family<'_>]) {
    if families.is_empty() {
        return;
    }
    lines.blank();
    let better = |metric: &str| {
        if metric.starts_with(&report.metric.name) {
            report.metric.better.clone()
        } else {
            report
                .metric_verdicts
                .iter()
                .find(|other| metric.starts_with(&other.metric))
                .map_or_else(String::new, |other| other.better.clone())
        }
    };
    for (metric, family) in families {
        let count = family.comparisons.len();
        lines.prose(
            0,
            &format!(
                "{count} comparison{} of {metric} ({} is better): {}.",
                if count == 1 { "" } else { "s" },
                better(metric),
                summary_counts(&family.comparisons)
            ),
        );
    }
}

/// The detailed metric per cell: n, median, its interval, CV.
fn cells(lines: &mut Lines, report: &RunReport) {
    lines.heading(&format!(
        "{} per cell (median, 95% CI, CV)",
        report.metric.name
    ));
    let unit = &report.metric.unit;
    let mut table = Table::new(
        ["cell", "n", "failed", "median", "95% CI", "CV"]
            .map(String::from)
            .to_vec(),
    );
    for cell in &report.cells {
        let value = |value: Option<f64>| value.map_or("-".to_string(), |v| format::value(v, unit));
        table.push(vec![
            cell.label.clone(),
            cell.n.to_string(),
            cell.failed.to_string(),
            value(cell.median),
            crate::run::cell_interval(cell, unit),
            cell.cv
                .map_or("-".to_string(), |cv| format!("{:.1}%", cv * 100.0)),
        ]);
    }
    lines.table(2, &table);
}

/// A booted run's boots: the spread per cell, the failed boots.
fn boots(lines: &mut Lines, report: &RunReport) {
    let Some(section) = &report.boots else {
        return;
    };
    lines.heading("Boots");
    lines.prose(
        2,
        &format!("{}:", crate::boots::summary(section, &report.metric.name)),
    );
    let mut table = Table::new(crate::boots::SPREAD_COLUMNS.map(String::from).to_vec());
    for row in &section.spread {
        table.push(crate::boots::spread_cells(row, &report.metric.unit).to_vec());
    }
    lines.table(2, &table);
    for boot in &section.failed {
        lines.line(
            2,
            &format!(
                "failed boot {} {}: {}",
                boot.id, boot.level_key, boot.message
            ),
        );
    }
}

/// Failed iterations (the first 5), metrics with missing values and
/// leftovers, counted.
fn failures(lines: &mut Lines, report: &RunReport) {
    if !report.failures.is_empty() {
        lines.heading(&format!(
            "{} failed iteration(s), not used as data",
            report.failures.len()
        ));
        for failure in report.failures.iter().take(5) {
            lines.line(
                2,
                &format!("#{} {}: {}", failure.sequence, failure.cell, failure.reason),
            );
        }
        if report.failures.len() > 5 {
            lines.line(
                2,
                &format!(
                    "... and {} more (--format text or json lists them)",
                    report.failures.len() - 5
                ),
            );
        }
    }
    for row in &report.missing {
        lines.blank();
        lines.prose(
            0,
            &format!(
                "{}: {} successful iteration(s) without a value: {}",
                row.metric,
                row.count,
                row.reasons.join("; ")
            ),
        );
    }
    if !report.leftovers.is_empty() {
        lines.blank();
        lines.prose(
            0,
            &format!(
                "{} iteration(s) left processes running after the command exited (--format text lists them).",
                report.leftovers.len()
            ),
        );
    }
}

/// How much data the verdicts rest on, and how it was collected.
fn data_facts(report: &RunReport) -> Vec<(String, String)> {
    let run = &report.run;
    let counts: Vec<usize> = report.cells.iter().map(|cell| cell.n).collect();
    let per_cell = super::per_cell(&counts).unwrap_or_else(|| "no cells".to_string());
    let failed: usize = report.cells.iter().map(|cell| cell.failed).sum();
    let mut facts = vec![(
        "runs".to_string(),
        format!(
            "{per_cell}; {} of {} iterations recorded, {failed} failed",
            run.recorded, run.planned
        ),
    )];
    if let Some(section) = &report.boots {
        let boots: Vec<usize> = section.spread.iter().map(|row| row.boots).collect();
        let per_cell = super::per_cell(&boots).unwrap_or_else(|| "none with data".to_string());
        facts.push((
            "boots".to_string(),
            format!(
                "{per_cell} ({} proven, {} failed)",
                section.proven,
                section.failed.len()
            ),
        ));
    }
    facts.push(("order".to_string(), run.order.clone()));
    if let Some(procedure) = &run.procedure {
        facts.push(("adaptive".to_string(), procedure.clone()));
    }
    if let Some(noise) = &run.noise {
        facts.push(("noise".to_string(), noise.clone()));
    }
    facts.push(("tool".to_string(), run.tool_version.clone()));
    facts
}
