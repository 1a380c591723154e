//! HTML pages of one stored run: the run report (header, environment,
//! comparison table, forest plot, per-cell distributions and run-order
//! plots, adaptive stopping points, failed iterations) and the pivot report
//! (the pivot table with its ratio row, a forest plot of its deltas, the
//! same pictures per cell).
//! Must not: compute verdicts of its own: every verdict, interval and word
//! comes from the report model the text report renders.

use super::page::{self, Cell, EnvironmentColumn, Page, VerdictClass};
use super::svg::{self, CellPoints, ForestRow};
use super::{CellSeries, subsample_note};
use crate::compare::{CompareReport, ComparisonRow, delta_with_interval, median_with_spread};
use crate::format;
use crate::pivot::PivotReport;
use crate::run::{RunInfo, RunReport};

fn run_facts(run: &RunInfo, metric: &str) -> Vec<(String, String)> {
    let mut facts = vec![
        ("experiment".to_string(), run.name.clone()),
        ("run".to_string(), run.id.to_string()),
        ("status".to_string(), run.status.clone()),
        ("metric".to_string(), metric.to_string()),
        (
            "iterations".to_string(),
            format!("{} of {} recorded", run.recorded, run.planned),
        ),
        ("order".to_string(), run.order.clone()),
        ("seed".to_string(), run.seed.to_string()),
        ("tool".to_string(), run.tool_version.clone()),
        ("started".to_string(), run.started.clone()),
    ];
    if let Some(finished) = &run.finished {
        facts.push(("finished".to_string(), finished.clone()));
    }
    facts.push(("host".to_string(), run.host.clone()));
    if let Some(procedure) = &run.procedure {
        facts.push(("adaptive".to_string(), procedure.clone()));
    }
    if let Some(noise) = &run.noise {
        facts.push(("noise".to_string(), noise.clone()));
    }
    facts
}

/// Forest rows from comparison rows (the verdicts as the table has them).
pub(super) fn forest_rows(rows: &[ComparisonRow]) -> Vec<ForestRow> {
    rows.iter()
        .map(|row| ForestRow {
            label: row.name.clone(),
            delta: row.delta,
            low: row.delta_ci_low,
            high: row.delta_ci_high,
            threshold: row.threshold,
            verdict: row.verdict.to_string(),
            class: row.verdict.into(),
            note: None,
        })
        .collect()
}

/// The forest plot section for a set of comparisons.
pub(super) fn forest_section(page: &mut Page, rows: &[ForestRow], what: &str) {
    if rows.is_empty() {
        return;
    }
    page.heading("Forest plot", "forest");
    page.note(&format!(
        "One row per {what}: the square is the Hodges-Lehmann delta, the bar its interval, the shaded band the practical threshold; the colour and the word give the verdict."
    ));
    page.push(&svg::forest(rows, "forest plot of deltas with intervals"));
    page.push("\n");
    page.push(&page::forest_legend());
}

/// Where the pictures of one set of cells go in a page.
pub(super) struct Pictures<'a> {
    /// Heading level of the two sections.
    pub level: u8,
    /// Appended to the sections' ids (unique per page).
    pub suffix: &'a str,
    /// What the run-order plot's x axis is.
    pub order: &'a str,
}

/// The run report's pictures: level-2 sections, the run's schedule.
pub(super) const RUN_PICTURES: Pictures<'static> = Pictures {
    level: 2,
    suffix: "",
    order: "their position in the run's schedule",
};

/// Distribution and run-order sections for the cells of one metric.
pub(super) fn cell_pictures(
    page: &mut Page,
    series: &[CellSeries],
    metric: &str,
    unit: &str,
    drift: &dyn Fn(&str) -> Option<f64>,
    place: &Pictures<'_>,
) {
    let cells: Vec<CellPoints<'_>> = series
        .iter()
        .map(|cell| CellPoints {
            label: &cell.label,
            values: cell.values.clone(),
            failed: cell.failed.clone(),
        })
        .collect();
    if cells.is_empty() {
        return;
    }
    page.heading_at(
        place.level,
        &format!("Distributions of {metric}"),
        &format!("distributions{}", place.suffix),
    );
    page.note("Every sample as a dot (jittered up and down by its iteration number, so the page renders the same every time) over a box from the first to the third quartile with the median as a thick line; whiskers reach the most extreme values within 1.5 IQR of the box, orange dots lie beyond. Failed iterations are not data: they are counted at the right. One axis for all cells.");
    let (strip, strip_subsampled) =
        svg::distributions(&cells, unit, &format!("distributions of {metric} per cell"));
    page.push(&strip);
    page.push("\n");
    let domain = svg::value_domain(&cells);
    let sequences = series
        .iter()
        .flat_map(|cell| {
            cell.values
                .iter()
                .map(|(sequence, _)| *sequence)
                .chain(cell.failed.iter().copied())
        })
        .fold((u32::MAX, 0u32), |(low, high), sequence| {
            (low.min(sequence), high.max(sequence))
        });
    let sequences = if sequences.0 > sequences.1 {
        (0, 1)
    } else {
        sequences
    };
    page.heading_at(
        place.level,
        "Run order",
        &format!("run-order{}", place.suffix),
    );
    page.note(&format!("Each cell's values against {} (the same axes for every cell), with a moving median (purple line; window n/10 iterations, at least 5) that makes drift visible; failed iterations are crosses in the lane below the plot.", place.order));
    let mut order_subsampled = false;
    for cell in &cells {
        let (picture, subsampled) =
            svg::run_order(cell, domain, sequences, unit, drift(cell.label));
        order_subsampled |= subsampled;
        page.push(&picture);
        page.push("\n");
    }
    if strip_subsampled || order_subsampled {
        page.note(&subsample_note());
    }
}

fn cell_table(report: &RunReport) -> String {
    let unit = &report.metric.unit;
    let optional = |value: Option<f64>| {
        value
            .map(|value| format::value(value, unit))
            .unwrap_or_else(|| "-".to_string())
    };
    let rows: Vec<(Vec<Cell>, Option<&str>)> = report
        .cells
        .iter()
        .map(|cell| {
            let interval = crate::run::cell_interval(cell, unit);
            let mut cv = cell
                .cv
                .map(|cv| format!("{:.1}%", cv * 100.0))
                .unwrap_or_else(|| "-".to_string());
            if cell.drift.is_some() {
                cv.push_str(" drift");
            }
            (
                vec![
                    Cell::Text(cell.label.clone()),
                    Cell::Number(cell.n.to_string()),
                    Cell::Number(cell.failed.to_string()),
                    Cell::Number(optional(cell.median)),
                    Cell::Number(interval),
                    Cell::Number(cv),
                    Cell::Number(optional(cell.min)),
                    Cell::Number(optional(cell.max)),
                ],
                None,
            )
        })
        .collect();
    page::table(
        &[
            "cell", "n", "failed", "median", "95% CI", "CV", "min", "max",
        ],
        &rows,
        "cells",
    )
}

fn comparisons(page: &mut Page, comparisons: Option<&CompareReport>) {
    if let Some(report) = comparisons {
        page.heading("Comparisons", "comparisons");
        page.push(&page::comparison_table(report));
        forest_section(page, &forest_rows(&report.comparisons), "comparison");
    }
}

/// The HTML page of a run report. `series` comes from
/// [`super::cell_series`] for the report's metric; `environments` are the
/// recorded environments (e.g. at the run's start and end).
pub fn render_run(
    report: &RunReport,
    series: &[CellSeries],
    environments: &[EnvironmentColumn],
) -> String {
    let run = &report.run;
    let mut page = Page::new(&format!("run {}: {} ({})", run.id, run.name, run.status));
    let metric = format!(
        "{}{} ({} is better)",
        report.metric.name,
        if report.metric.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", report.metric.unit)
        },
        report.metric.better
    );
    page.push(&page::facts(&run_facts(run, &metric)));
    page.heading("Environment", "environment");
    page.push(&page::environment(environments));
    page.heading("Cells", "cells");
    page.push(&cell_table(report));
    comparisons(&mut page, report.comparisons.as_ref());
    // Every other declared metric's verdicts, after the detailed one's.
    for other in &report.metric_verdicts {
        if let Some(comparisons) = &other.comparisons {
            page.heading(
                &format!(
                    "Comparisons of {} ({} is better)",
                    other.metric, other.better
                ),
                &format!("comparisons-{}", page::anchor(&other.metric)),
            );
            page.push(&page::comparison_table(comparisons));
        }
    }
    if !run.decisions.is_empty() {
        page.heading("Where each adaptive comparison stopped", "adaptive");
        let mut list = String::from("<ul>");
        for decision in &run.decisions {
            list.push_str(&format!("<li>{}</li>", super::escape::text(decision)));
        }
        list.push_str("</ul>\n");
        page.push(&list);
    }
    let drift = |label: &str| {
        report
            .cells
            .iter()
            .find(|cell| cell.label == label)
            .and_then(|cell| cell.drift)
    };
    cell_pictures(
        &mut page,
        series,
        &report.metric.name,
        &report.metric.unit,
        &drift,
        &RUN_PICTURES,
    );
    if let Some(section) = &report.boots {
        super::boots::boots(&mut page, section, &report.metric.name, &report.metric.unit);
    }
    failures(&mut page, report);
    page.finish()
}

/// How many failed iterations a page lists (JSON lists all).
const FAILURES_SHOWN: usize = 200;

fn failures(page: &mut Page, report: &RunReport) {
    if report.failures.is_empty() {
        return;
    }
    page.heading("Failed iterations (not used as data)", "failures");
    let rows: Vec<(Vec<Cell>, Option<&str>)> = report
        .failures
        .iter()
        .take(FAILURES_SHOWN)
        .map(|failure| {
            (
                vec![
                    Cell::Number(format!("#{}", failure.sequence)),
                    Cell::Text(failure.cell.clone()),
                    Cell::Text(failure.reason.clone()),
                    Cell::Pre(failure.output_tail.clone()),
                ],
                None,
            )
        })
        .collect();
    page.push(&page::table(
        &["iteration", "cell", "reason", "output (last lines)"],
        &rows,
        "failures",
    ));
    if report.failures.len() > FAILURES_SHOWN {
        page.note(&format!(
            "... and {} more (--format json lists all).",
            report.failures.len() - FAILURES_SHOWN
        ));
    }
}

/// The HTML page of a pivot report: the table (cells with their intervals,
/// deltas with verdicts, the ratio row with its intervals), a forest plot
/// of every delta and ratio, and the per-cell pictures.
pub fn render_pivot(
    pivot: &PivotReport,
    series: &[CellSeries],
    environments: &[EnvironmentColumn],
) -> String {
    let run = &pivot.run;
    let mut page = Page::new(&format!(
        "run {}: {} ({}) by {}",
        run.id,
        run.name,
        run.status,
        if pivot.row_factors.is_empty() {
            pivot.column_factor.clone()
        } else {
            format!("{} x {}", pivot.row_factors.join(", "), pivot.column_factor)
        }
    ));
    let metric = format!(
        "{}{} ({} is better)",
        pivot.metric,
        if pivot.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", pivot.unit)
        },
        pivot.better
    );
    page.push(&page::facts(&run_facts(run, &metric)));
    page.heading("Environment", "environment");
    page.push(&page::environment(environments));
    page.heading("Pivot table", "pivot");
    page.note(&format!(
        "median ±CI half-width per cell; delta = {} vs {} (Hodges-Lehmann) with its interval; threshold {}; alpha {}; multiplicity: {}",
        pivot.column_factor,
        pivot.baseline_column,
        format::threshold(pivot.threshold),
        pivot.alpha,
        pivot.adjustment
    ));
    page.push(&pivot_table(pivot));
    let mut rows: Vec<ForestRow> = pivot
        .rows
        .iter()
        .flat_map(|row| forest_rows(&row.deltas))
        .collect();
    if let Some(ratio) = &pivot.ratio {
        rows.extend(forest_rows(&ratio.ratios));
    }
    forest_section(&mut page, &rows, "delta of the table");
    cell_pictures(
        &mut page,
        series,
        &pivot.metric,
        &pivot.unit,
        &|_| None,
        &RUN_PICTURES,
    );
    page.finish()
}

fn pivot_table(pivot: &PivotReport) -> String {
    let candidates: Vec<&String> = pivot
        .columns
        .iter()
        .filter(|column| **column != pivot.baseline_column)
        .collect();
    let first = pivot
        .row_factors
        .first()
        .cloned()
        .unwrap_or_else(|| pivot.metric.clone());
    let mut header: Vec<String> = vec![first];
    header.extend(pivot.columns.iter().cloned());
    for column in &candidates {
        header.push(format!("{column} vs {}", pivot.baseline_column));
        header.push("verdict".to_string());
    }
    let mut rows: Vec<(Vec<Cell>, Option<&str>)> = Vec::new();
    for row in &pivot.rows {
        let mut cells = vec![Cell::Text(row.label.clone())];
        for cell in &row.cells {
            cells.push(Cell::Number(match cell {
                Some(side) => median_with_spread(side, &pivot.unit),
                None => "-".to_string(),
            }));
        }
        for column in &candidates {
            match row.deltas.iter().find(|delta| {
                delta
                    .name
                    .ends_with(&format!(" {column} vs {}", pivot.baseline_column))
            }) {
                Some(delta) => {
                    cells.push(Cell::Number(delta_with_interval(delta)));
                    cells.push(Cell::Verdict {
                        class: delta.verdict.into(),
                        text: crate::compare::verdict_text(delta),
                    });
                }
                None => {
                    cells.push(Cell::Number("-".to_string()));
                    cells.push(Cell::Text(String::new()));
                }
            }
        }
        rows.push((cells, None));
    }
    if let Some(ratio) = &pivot.ratio {
        let mut cells = vec![Cell::Text(ratio.label.clone())];
        for column in &pivot.columns {
            cells.push(Cell::Number(
                ratio
                    .ratios
                    .iter()
                    .find(|row| row.name.ends_with(&format!(" in {column}")))
                    .map_or("-".to_string(), delta_with_interval),
            ));
        }
        for column in &candidates {
            match ratio
                .differences
                .iter()
                .find(|difference| &&difference.column == column)
            {
                Some(difference) => {
                    cells.push(Cell::Number(format!(
                        "{:+.1} pts [{:+.1}, {:+.1}]",
                        difference.estimate * 100.0,
                        difference.ci_low * 100.0,
                        difference.ci_high * 100.0
                    )));
                    let changed = difference.ci_low > 0.0 || difference.ci_high < 0.0;
                    cells.push(Cell::Verdict {
                        class: if changed {
                            VerdictClass::Changed
                        } else {
                            VerdictClass::Inconclusive
                        },
                        text: if changed {
                            "changed".to_string()
                        } else {
                            "no clear change".to_string()
                        },
                    });
                }
                None => {
                    cells.push(Cell::Number("-".to_string()));
                    cells.push(Cell::Text(String::new()));
                }
            }
        }
        rows.push((cells, Some("ratio")));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut output = page::table(&header, &rows, "pivot");
    if let Some(ratio) = &pivot.ratio {
        for difference in &ratio.differences {
            output.push_str(&format!(
                "<p class=\"note\">{}</p>\n",
                super::escape::text(&format!(
                    "{} changed by {:+.1} points in {} vs {} [{:+.1}, {:+.1}] ({:.0}% {}, seed {}, {} resamples)",
                    ratio.label,
                    difference.estimate * 100.0,
                    difference.column,
                    pivot.baseline_column,
                    difference.ci_low * 100.0,
                    difference.ci_high * 100.0,
                    difference.confidence * 100.0,
                    difference.method,
                    difference.seed,
                    difference.resamples
                ))
            ));
        }
    }
    output
}
