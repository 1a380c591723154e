//! The HTML page of `verdict compare A B`: what was compared, the
//! comparison table (the text report's verdicts and words), the forest plot,
//! and per comparison the two sides' distributions on one axis and their
//! values in the order they were recorded or listed.
//! Must not: compute verdicts of its own or emit unescaped user text.

use super::CellSeries;
use super::page::{self, EnvironmentColumn, Page};
use super::run::{Pictures, cell_pictures, forest_rows, forest_section};
use crate::compare::CompareReport;

/// The two sides' values of one comparison, in their recorded order.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedValues {
    pub name: String,
    pub baseline: Vec<f64>,
    pub candidate: Vec<f64>,
}

/// Render the comparison page. `sides` describes what each side is (file
/// or stored selection); `values` follows `report.comparisons` by name.
pub fn render_compare(
    report: &CompareReport,
    sides: &[(String, String)],
    values: &[ComparedValues],
    environments: &[EnvironmentColumn],
) -> String {
    let mut page = Page::new("verdict compare");
    page.push(&page::facts(sides));
    if !environments.is_empty() {
        page.heading("Environment", "environment");
        page.push(&page::environment(environments));
    }
    page.heading("Comparisons", "comparisons");
    page.push(&page::comparison_table(report));
    forest_section(&mut page, &forest_rows(&report.comparisons), "comparison");
    for (index, row) in report.comparisons.iter().enumerate() {
        let Some(compared) = values.iter().find(|values| values.name == row.name) else {
            continue;
        };
        let series = [
            side_series("baseline", &compared.baseline),
            side_series("candidate", &compared.candidate),
        ];
        page.heading(
            &if row.unit.is_empty() {
                row.name.clone()
            } else {
                format!("{} ({})", row.name, row.unit)
            },
            &format!("comparison-{index}"),
        );
        cell_pictures(
            &mut page,
            &series,
            &row.name,
            &row.unit,
            &|_| None,
            &Pictures {
                level: 3,
                suffix: &format!("-{index}"),
                order: "their position in the file or stored selection",
            },
        );
    }
    page.finish()
}

/// A side as a series: position in the file or selection as its order.
fn side_series(label: &str, values: &[f64]) -> CellSeries {
    CellSeries {
        label: label.to_string(),
        values: values
            .iter()
            .enumerate()
            .map(|(index, value)| (index as u32, *value))
            .collect(),
        failed: Vec::new(),
    }
}
