//! `verdict explain --format email`: where the time went, within 80
//! columns. The same pieces as the text form (`explain::header`,
//! `comparison_header`, `row_cells`), laid out one row per block of lines
//! (the symbol or monitor on its own line, then its figures) so that a
//! long symbol never widens a table past the page, then what ran and the
//! command that reproduces it.

use super::{Lines, provenance_block};
use crate::explain::{
    ExplainReport, ExplainRow, ROW_COLUMNS, comparison_header, empty_line, header, row_cells,
};
use crate::provenance::Provenance;

/// The explain report as an email; `provenance` is the explained run's
/// (the candidate's, with `--baseline`).
pub fn explain(report: &ExplainReport, provenance: Option<&Provenance>) -> String {
    let mut lines = Lines::new();
    for line in header(report) {
        lines.line(0, &line);
    }
    if report.comparisons.is_empty() {
        lines.blank();
        lines.prose(0, "the experiment has no comparisons to explain");
    }
    for comparison in &report.comparisons {
        let mut introduction = comparison_header(report, comparison).into_iter();
        lines.heading(&introduction.next().unwrap_or_default());
        for line in introduction {
            lines.prose(2, line.trim());
        }
        for (rows, what) in [
            (&comparison.symbols, "symbols (share of the profile)"),
            (&comparison.monitors, "monitors (per iteration)"),
        ] {
            lines.blank();
            if rows.is_empty() {
                lines.line(2, empty_line(comparison, what, report.all).trim());
                continue;
            }
            lines.line(2, what);
            for row in rows {
                row_block(&mut lines, row);
            }
        }
    }
    if let Some(provenance) = provenance {
        provenance_block(&mut lines, provenance, &[]);
    }
    lines.finish()
}

/// One row: its name (and share) on a line, then `column value` pairs
/// wrapped under it.
fn row_block(lines: &mut Lines, row: &ExplainRow) {
    let cells = row_cells(row);
    let (name, figures) = match row.share {
        Some(_) => (format!("{} ({})", cells[0], cells[1]), &cells[2..]),
        None => (cells[0].clone(), &cells[1..]),
    };
    lines.line(4, &name);
    let pairs: Vec<String> = ROW_COLUMNS
        .iter()
        .zip(figures)
        .filter(|(_, value)| value.as_str() != "-")
        .map(|(column, value)| format!("{column} {value}"))
        .collect();
    lines.line(6, &pairs.join(", "));
}
