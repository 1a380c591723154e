//! Pivot tables (`verdict report --rows F --cols G`): one column per level
//! of G with the median and its interval, a delta column per non-baseline
//! level of G with interval and verdict, and optionally (`--ratio F=a/b`)
//! the ratio between two levels of F in each column with the difference of
//! those ratios between columns (bootstrap). The table a maintainer pastes
//! into an email, rendered from the verdict-analysis model (re-exported
//! here).

use crate::compare::{median_with_spread, verdict_text};
use crate::escape;
use crate::format::{self, Format};
use crate::table::Table;
use std::ops::Deref;
pub use verdict_analysis::pivot::*;

/// `report` in `format`.
pub fn render(report: &PivotReport, format: Format) -> String {
    render_within(report, format, None)
}

/// `report` in `format`, its text table within `width` columns when given.
pub fn render_within(report: &PivotReport, format: Format, width: Option<usize>) -> String {
    View(report).render(format, width)
}

/// The pivot's header lines (escaped), its table of medians and deltas,
/// and its ratio notes (escaped), for a renderer that lays them out
/// itself (the email form).
pub fn parts(report: &PivotReport) -> ([String; 2], Table, Vec<String>) {
    let view = View(report);
    let notes = view
        .footnote()
        .split('\n')
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect();
    (view.header(), view.table(false), notes)
}

/// A pivot report as the renderer sees it.
struct View<'a>(&'a PivotReport);

impl Deref for View<'_> {
    type Target = PivotReport;
    fn deref(&self) -> &PivotReport {
        self.0
    }
}

impl View<'_> {
    pub fn render(&self, format: Format, width: Option<usize>) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(self.0).unwrap_or_default() + "\n",
            Format::Email => crate::email::pivot(self.0, None),
            Format::Csv => self.table(true).csv(),
            Format::Markdown => format!(
                "{}\n\n{}",
                self.header().join("\n"),
                self.table(false).markdown()
            ),
            Format::Text => format!(
                "{}\n\n{}{}",
                self.header().join("\n"),
                self.table(false).text_width(width),
                self.footnote()
            ),
        }
    }

    /// The two header lines, each escaped (they quote the run's name, its
    /// factors and levels).
    fn header(&self) -> [String; 2] {
        let counts: Vec<usize> = self
            .rows
            .iter()
            .flat_map(|row| row.cells.iter().flatten().map(|cell| cell.n))
            .collect();
        let n = match (counts.iter().min(), counts.iter().max()) {
            (Some(low), Some(high)) if low == high => format!("n={low} per cell"),
            (Some(low), Some(high)) => format!("n={low}..{high} per cell"),
            _ => "no data".to_string(),
        };
        let confidence = self
            .rows
            .iter()
            .flat_map(|row| row.deltas.first())
            .next()
            .map_or(String::new(), |row| {
                format!(", {:.1}% intervals", row.delta_confidence * 100.0)
            });
        let second = if self.compared {
            format!(
                "delta = {} vs {} (Hodges-Lehmann){confidence}; threshold {}; alpha {}; multiplicity: {}",
                self.column_factor,
                self.baseline_column,
                format::threshold(self.threshold),
                self.alpha,
                self.adjustment
            )
        } else {
            format!(
                "no deltas: factor `{}` has compare = false (its levels are not compared)",
                self.column_factor
            )
        };
        [
            escape::text(&format!(
                "run {} {}: {} ({} is better), median ±CI half-width (the interval when asymmetric); {n}; order {}",
                self.run.id, self.run.name, self.metric, self.better, self.run.order,
            )),
            escape::text(&second),
        ]
    }

    fn footnote(&self) -> String {
        let mut notes = String::new();
        if let Some(ratio) = &self.ratio {
            for difference in &ratio.differences {
                notes.push_str(&format!(
                    "\n{}\n",
                    escape::text(&format!(
                        "{} changed by {:+.1} points in {} vs {} [{:+.1}, {:+.1}] ({:.0}% {}, seed {}, {} resamples)",
                        ratio.label,
                        difference.estimate * 100.0,
                        difference.column,
                        self.baseline_column,
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
        notes
    }

    fn table(&self, raw: bool) -> Table {
        let mut header = vec![
            self.row_factors
                .first()
                .cloned()
                .unwrap_or_else(|| self.metric.clone()),
        ];
        header.extend(self.columns.iter().cloned());
        let candidates: Vec<&String> = self
            .columns
            .iter()
            .filter(|column| self.compared && **column != self.baseline_column)
            .collect();
        for column in &candidates {
            header.push(format!("{column} vs {}", self.baseline_column));
            header.push("verdict".to_string());
        }
        let mut table = Table::new(header);
        table.left = (0..candidates.len())
            .map(|index| self.columns.len() + 2 + 2 * index)
            .collect();
        for row in &self.rows {
            let mut cells = vec![row.label.clone()];
            for cell in &row.cells {
                cells.push(match cell {
                    Some(side) if raw => side.median.to_string(),
                    Some(side) => median_with_spread(side, &self.unit),
                    None => "-".to_string(),
                });
            }
            for column in &candidates {
                match row.deltas.iter().find(|delta| {
                    delta
                        .name
                        .ends_with(&format!(" {column} vs {}", self.baseline_column))
                }) {
                    Some(delta) if raw => {
                        cells.push(delta.delta.to_string());
                        cells.push(delta.verdict.to_string());
                    }
                    Some(delta) => {
                        cells.push(crate::compare::delta_with_interval(delta));
                        cells.push(verdict_text(delta));
                    }
                    None => {
                        cells.push("-".to_string());
                        cells.push(String::new());
                    }
                }
            }
            table.push(cells);
        }
        if let Some(ratio) = &self.ratio {
            let mut cells = vec![ratio.label.clone()];
            for column in &self.columns {
                cells.push(
                    ratio
                        .ratios
                        .iter()
                        .find(|row| row.name.ends_with(&format!(" in {column}")))
                        .map_or("-".to_string(), |row| {
                            if raw {
                                row.delta.to_string()
                            } else {
                                crate::compare::delta_with_interval(row)
                            }
                        }),
                );
            }
            for column in &candidates {
                match ratio
                    .differences
                    .iter()
                    .find(|difference| &&difference.column == column)
                {
                    Some(difference) if raw => {
                        cells.push(difference.estimate.to_string());
                        cells.push(String::new());
                    }
                    Some(difference) => {
                        cells.push(format!(
                            "{:+.1} pts [{:+.1}, {:+.1}]",
                            difference.estimate * 100.0,
                            difference.ci_low * 100.0,
                            difference.ci_high * 100.0
                        ));
                        cells.push(if difference.ci_low > 0.0 || difference.ci_high < 0.0 {
                            "changed".to_string()
                        } else {
                            "no clear change".to_string()
                        });
                    }
                    None => {
                        cells.push("-".to_string());
                        cells.push(String::new());
                    }
                }
            }
            table.push(cells);
        }
        table
    }
}
