//! `verdict compare --sequential`: the table of the replayed comparisons
//! (the rows are computed by verdict-analysis `sequential`). Pure.

pub use verdict_analysis::sequential::{SequentialRow, sequential_rows};

use crate::Format;
use crate::table::Table;

/// The rows as a table: text, markdown or CSV (JSON serializes the rows).
pub fn render(rows: &[SequentialRow], format: Format) -> String {
    let mut table = Table::new(
        ["name", "stopped at", "state", "verdict", "delta [interval]"]
            .map(String::from)
            .to_vec(),
    );
    table.left = vec![2, 3];
    for row in rows {
        let interval = match (row.delta, row.delta_ci_low, row.delta_ci_high) {
            (Some(delta), Some(low), Some(high)) => format!(
                "{} [{}, {}]",
                crate::format::percent(delta),
                crate::format::percent(low),
                crate::format::percent(high)
            ),
            _ => "-".to_string(),
        };
        // Out of data: how far the design would still go.
        let state = match (row.runs_to_end, row.runs_to_end_range) {
            (Some(end), Some((low, high))) => format!(
                "{} (ends by ~{end} per arm [{low}-{high}])",
                row.state.as_str()
            ),
            (Some(end), None) => format!("{} (ends by {end} per arm)", row.state.as_str()),
            (None, _) => row.state.as_str().to_string(),
        };
        table.push(vec![
            row.name.clone(),
            format!("{}/{} per arm", row.stopped_at, row.available),
            state,
            row.verdict.to_string(),
            interval,
        ]);
    }
    match format {
        Format::Markdown => table.markdown(),
        Format::Csv => table.csv(),
        Format::Email => table.text_within(crate::email::WIDTH),
        Format::Text | Format::Json => table.text(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Better, ComparisonInput, Verdict};

    fn input(shift: f64) -> ComparisonInput {
        let baseline: Vec<f64> = (0..40).map(|index| 100.0 + f64::from(index % 5)).collect();
        ComparisonInput {
            name: "wall".to_string(),
            unit: "s".to_string(),
            better: Better::Lower,
            threshold: 0.02,
            power: crate::compare::DEFAULT_POWER,
            candidate: baseline.iter().map(|value| value * shift).collect(),
            baseline,
        }
    }

    #[test]
    fn a_stopped_regression_renders_a_row() {
        let rows = sequential_rows(&[input(1.5)], Some(40), 0.05, true).unwrap();
        assert_eq!(rows[0].verdict, Verdict::Regression);
        let text = render(&rows, Format::Text);
        assert!(text.contains("regression"), "{text}");
        assert!(
            text.contains(&format!("{}/40 per arm", rows[0].stopped_at)),
            "{text}"
        );
        assert!(render(&rows, Format::Csv).starts_with("name,stopped at"));
    }
}
