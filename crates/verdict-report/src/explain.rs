//! `verdict explain` as text, markdown and JSON (`verdict.explain/v1`):
//! per comparison the main metric's change, how many rows were tested and
//! which survived false-discovery control, then the symbols and monitors
//! ranked by how much of the change they are. Built from small pieces
//! (`header`, `comparison_header`, `row_cells`, the two tables) so another
//! plain-text form (an email) is one more function over the same pieces.
//! Every quoted name goes through `escape` (the tables do it); must not
//! compute statistics.

use verdict_analysis::compare::Scale;
pub use verdict_analysis::explain::{
    Change, ExplainComparison, ExplainOptions, ExplainReport, ExplainRow, FdrMethod, MainChange,
};

use crate::format::{self, Format};
use crate::table::Table;

/// The report in `format` (`Csv` is not offered for explain: it renders as
/// text).
pub fn render(report: &ExplainReport, format: Format) -> String {
    match format {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(report).unwrap_or_default();
            text.push('\n');
            text
        }
        Format::Markdown => markdown(report),
        // Without the run's provenance: the binary passes it to
        // `email::explain` itself.
        Format::Email => crate::email::explain(report, None),
        Format::Text | Format::Csv => text(report),
    }
}

/// The lines above the comparisons.
pub fn header(report: &ExplainReport) -> Vec<String> {
    let runs = report
        .runs
        .iter()
        .map(|run| {
            if report.runs.len() > 1 {
                format!("{} ({})", run.run, run.host)
            } else {
                run.run.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        format!(
            "explain: {} (run {runs}), metric {} ({})",
            report.experiment, report.metric, report.metric_unit
        ),
        format!(
            "false discoveries controlled at q = {} over all rows of each comparison ({}); {}",
            report.q,
            report.procedure,
            if report.all {
                "every tested row shown"
            } else {
                "discoveries shown (--all shows every row)"
            }
        ),
    ]
}

/// A relative change, or a shift in `unit` on the absolute scale.
fn shift_text(value: f64, scale: Scale, unit: &str) -> String {
    match (scale, unit) {
        (Scale::Relative, _) => format::percent(value),
        (Scale::Absolute, "share") => format!("{:+.2} pts", value * 100.0),
        (Scale::Absolute, unit) => {
            let text = format::value(value, if unit == "s" { "s" } else { "" });
            if value > 0.0 {
                format!("+{text}")
            } else {
                text
            }
        }
    }
}

/// A row's value (a median) in its unit.
fn value_text(value: f64, unit: &str) -> String {
    match unit {
        "share" => format!("{:.2}%", value * 100.0),
        "s" => format::value(value, "s"),
        _ => format::value(value, ""),
    }
}

/// The lines that introduce one comparison.
pub fn comparison_header(report: &ExplainReport, comparison: &ExplainComparison) -> Vec<String> {
    let mut lines = vec![comparison.name.clone()];
    if let Some(main) = &comparison.main {
        lines.push(format!(
            "  {}: {} -> {}, {} ({})",
            report.metric,
            value_text(main.baseline, unit_of(&report.metric_unit)),
            value_text(main.candidate, unit_of(&report.metric_unit)),
            main_change_text(main, &report.metric_unit),
            match main.p {
                p if p < 0.001 => "p <0.001".to_string(),
                p => format!("p {p:.3}"),
            }
        ));
    }
    lines.push(format!(
        "  {} rows tested over {}: {} discover{} at q = {}; {} not tested (no variation, too few values, or a symbol under 0.1% of the profile)",
        comparison.tested,
        comparison.unit_of_analysis.describe(),
        comparison.discoveries,
        if comparison.discoveries == 1 { "y" } else { "ies" },
        report.q,
        comparison.untested
    ));
    lines.push(format!(
        "  intervals at {:.2}% (1 - R*q/m, false coverage rate <= q); changes relative (C/B - 1) where every value is above 0, else additive (C - B)",
        comparison.interval_confidence * 100.0
    ));
    lines.push(format!(
        "  captured: baseline {} iterations ({} with monitors, {} profiles), candidate {} ({}, {})",
        comparison.baseline.iterations,
        comparison.baseline.monitored,
        comparison.baseline.profiles,
        comparison.candidate.iterations,
        comparison.candidate.monitored,
        comparison.candidate.profiles
    ));
    for note in &comparison.notes {
        lines.push(format!("  note: {note}"));
    }
    lines
}

fn unit_of(metric_unit: &str) -> &str {
    if metric_unit == "s" { "s" } else { "" }
}

fn main_change_text(main: &MainChange, unit: &str) -> String {
    let interval = main.interval.map_or_else(String::new, |[low, high]| {
        format!(
            " [{}, {}]",
            shift_text(low, main.scale, unit_of(unit)),
            shift_text(high, main.scale, unit_of(unit))
        )
    });
    format!(
        "{}{interval}",
        shift_text(main.shift, main.scale, unit_of(unit))
    )
}

/// The headers of a row's cells after its name (and share).
pub const ROW_COLUMNS: [&str; 8] = [
    "baseline",
    "candidate",
    "change",
    "interval",
    "scale",
    "q",
    "explains",
    "found",
];

/// The cells of one row: name, (share), baseline, candidate, change,
/// interval, scale, q, explains, direction.
pub fn row_cells(row: &ExplainRow) -> Vec<String> {
    let mut change = shift_text(row.shift, row.scale, row.unit);
    if row.scale == Scale::Absolute
        && let Some(delta) = row.delta
    {
        change.push_str(&format!(" ({})", format::percent(delta)));
    }
    let interval = row.interval.map_or_else(
        || "-".to_string(),
        |[low, high]| {
            format!(
                "[{}, {}]",
                shift_text(low, row.scale, row.unit),
                shift_text(high, row.scale, row.unit)
            )
        },
    );
    let mut cells = vec![row.name.clone()];
    if let Some(share) = row.share {
        cells.push(share.as_str().to_string());
    }
    cells.extend([
        value_text(row.baseline, row.unit),
        value_text(row.candidate, row.unit),
        change,
        interval,
        match row.scale {
            Scale::Relative => "relative".to_string(),
            Scale::Absolute => "additive".to_string(),
        },
        format::p_value(row.q),
        row.explains
            .map_or_else(|| "-".to_string(), |share| format!("{:.0}%", share * 100.0)),
        match row.change {
            Change::Increase => "increase",
            Change::Decrease => "decrease",
            Change::None => "-",
        }
        .to_string(),
    ]);
    cells
}

fn rows_table(rows: &[ExplainRow], symbols: bool) -> Table {
    let mut header: Vec<String> = vec![if symbols { "symbol" } else { "monitor" }.to_string()];
    if symbols {
        header.push("share".to_string());
    }
    header.extend(ROW_COLUMNS.map(str::to_string));
    let mut table = Table::new(header);
    table.left = if symbols { vec![1, 6, 9] } else { vec![5, 8] };
    for row in rows {
        table.push(row_cells(row));
    }
    table
}

/// What a comparison with nothing to show says instead of a table.
pub(crate) fn empty_line(comparison: &ExplainComparison, what: &str, all: bool) -> String {
    if comparison.tested == 0 {
        format!("  no {what} to compare")
    } else if all {
        format!("  no {what} tested")
    } else {
        format!("  no {what} changed at q")
    }
}

fn text(report: &ExplainReport) -> String {
    let mut output = header(report).join("\n");
    output.push('\n');
    if report.comparisons.is_empty() {
        output.push_str("\nthe experiment has no comparisons to explain\n");
    }
    for comparison in &report.comparisons {
        output.push('\n');
        output.push_str(&crate::escape::text_lines(
            &comparison_header(report, comparison).join("\n"),
        ));
        output.push('\n');
        for (rows, symbols, what) in [
            (&comparison.symbols, true, "symbols (share of the profile)"),
            (&comparison.monitors, false, "monitors (per iteration)"),
        ] {
            output.push('\n');
            if rows.is_empty() {
                output.push_str(&empty_line(comparison, what, report.all));
                output.push('\n');
                continue;
            }
            output.push_str(&format!("  {what}\n"));
            for line in rows_table(rows, symbols).text().lines() {
                output.push_str("  ");
                output.push_str(line);
                output.push('\n');
            }
        }
    }
    output
}

fn markdown(report: &ExplainReport) -> String {
    let mut output = String::new();
    for line in header(report) {
        output.push_str(&crate::escape::markdown(&line));
        output.push_str("  \n");
    }
    for comparison in &report.comparisons {
        let lines = comparison_header(report, comparison);
        output.push_str(&format!("\n### {}\n\n", crate::escape::markdown(&lines[0])));
        for line in &lines[1..] {
            output.push_str(&format!("- {}\n", crate::escape::markdown(line.trim())));
        }
        for (rows, symbols, what) in [
            (&comparison.symbols, true, "Symbols (share of the profile)"),
            (&comparison.monitors, false, "Monitors (per iteration)"),
        ] {
            output.push_str(&format!("\n{what}\n\n"));
            if rows.is_empty() {
                output.push_str(&format!(
                    "{}\n",
                    crate::escape::markdown(
                        empty_line(comparison, &what.to_lowercase(), report.all).trim()
                    )
                ));
            } else {
                output.push_str(&rows_table(rows, symbols).markdown());
            }
        }
    }
    output
}
