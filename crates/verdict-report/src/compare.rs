//! Comparisons as reported: the `verdict.compare/v1` model (built in
//! verdict-analysis, re-exported here) rendered as a benchstat-like text
//! table, markdown, CSV or JSON.

use crate::escape;
use crate::format::{self, Format};
use crate::table::Table;
use std::ops::Deref;
pub use verdict_analysis::compare::*;

/// `report` in `format`.
pub fn render(report: &CompareReport, format: Format) -> String {
    render_within(report, format, None)
}

/// `report` in `format`, its text table within `width` columns when given.
pub fn render_within(report: &CompareReport, format: Format, width: Option<usize>) -> String {
    View(report).render(format, width)
}

/// The header lines of `report`: what the intervals and p-values mean.
pub fn header(report: &CompareReport) -> String {
    View(report).header()
}

/// A comparison report as the renderer sees it.
struct View<'a>(&'a CompareReport);

impl Deref for View<'_> {
    type Target = CompareReport;
    fn deref(&self) -> &CompareReport {
        self.0
    }
}

/// When an interval is shown as itself rather than `±`: its longer side is
/// more than this many times its shorter side ...
pub const ASYMMETRY_RATIO: f64 = 2.0;
/// ... and longer by more than this fraction of the median (so `±` would
/// overstate the shorter side by more than 5 percentage points).
pub const ASYMMETRY_EXCESS: f64 = 0.05;

/// `68,275 ±9%`: median with the half-width of its interval as a percentage
/// of the median (benchstat's notation), `±?` when n is too small. When the
/// interval is asymmetric ([`ASYMMETRY_RATIO`], [`ASYMMETRY_EXCESS`]) the
/// interval itself:
/// `425.6ms [392.0ms, 2.269s]`, never a misleading `±433%`.
pub fn median_with_spread(side: &SideSummary, unit: &str) -> String {
    let median = format::value(side.median, unit);
    match (side.ci_low, side.ci_high) {
        (Some(low), Some(high)) if side.median != 0.0 => {
            let below = (side.median - low).abs() / side.median.abs();
            let above = (high - side.median).abs() / side.median.abs();
            let (smaller, larger) = (below.min(above), below.max(above));
            if larger > ASYMMETRY_RATIO * smaller && larger - smaller > ASYMMETRY_EXCESS {
                format!(
                    "{median} [{}, {}]",
                    format::value(low, unit),
                    format::value(high, unit)
                )
            } else {
                format!("{median} ±{:.0}%", larger * 100.0)
            }
        }
        // A zero median has no relative spread: the interval itself.
        (Some(low), Some(high)) => format!(
            "{median} [{}, {}]",
            format::value(low, unit),
            format::value(high, unit)
        ),
        _ => format!("{median} ±?"),
    }
}

/// `+2.7% [-9.8%, +16.2%]`; on the absolute scale `+1.000 [+1.000, +1.000] allocs/op`.
pub fn delta_with_interval(row: &ComparisonRow) -> String {
    let shown = |value: f64| match row.scale {
        Scale::Relative => format::percent(value),
        Scale::Absolute if value >= 0.0 => format!("+{}", format::value(value, &row.unit)),
        Scale::Absolute => format::value(value, &row.unit),
    };
    let unit = match row.scale {
        Scale::Absolute if row.unit != "s" && !row.unit.is_empty() => format!(" {}", row.unit),
        _ => String::new(),
    };
    match (row.delta_ci_low, row.delta_ci_high) {
        (Some(low), Some(high)) => format!(
            "{} [{}, {}]{unit}",
            shown(row.delta),
            shown(low),
            shown(high)
        ),
        _ if row.undecided == Some(Undecided::NoSpreadBetweenBoots) => {
            format!("{}{unit} [no spread]", shown(row.delta))
        }
        _ => format!("{}{unit} [n too small]", shown(row.delta)),
    }
}

/// Why a comparison cannot be decided and what would decide it, in words:
/// `1 boot of a level: no spread between boots; boot each level >= 2 times`.
pub fn undecided_text(reason: Undecided, unit: SamplingUnit) -> String {
    match (reason, unit) {
        (Undecided::OneRun { minimum }, SamplingUnit::Block) => {
            format!("1 block: no spread; run >= {minimum} blocks")
        }
        (Undecided::OneRun { minimum }, _) => {
            format!("1 run per cell: no spread; run >= {minimum}/cell")
        }
        (Undecided::OneBoot { minimum }, _) => format!(
            "1 boot of a level: no spread between boots; boot each level >= {minimum} times"
        ),
        (Undecided::NoSpreadBetweenBoots, _) => {
            "same median in every boot: spread between boots unknown; more boots or iterations"
                .to_string()
        }
    }
}

/// `~190/cell [120-310]`, `~5 boots/level [3-24]`: the runs (blocks,
/// boots) that would tell, with their range.
fn runs_needed_text(row: &ComparisonRow, runs: usize) -> String {
    let per = match row.sampling_unit {
        SamplingUnit::Boot => " boots/level",
        SamplingUnit::Run | SamplingUnit::Block => "/cell",
    };
    match row.runs_needed_range {
        Some((low, high)) if low != high => format!("~{runs}{per} [{low}-{high}]"),
        _ => format!("~{runs}{per}"),
    }
}

/// `regression (>= 2%)`, `equivalent (within ±2%)`, `inconclusive
/// (~190/cell [120-310] for ±2%)`, `inconclusive (1 run per cell: no
/// spread; run >= 4/cell)`.
pub fn verdict_text(row: &ComparisonRow) -> String {
    if row.absolute_threshold == Some(0.0) {
        // Baseline median 0 (e.g. no allocations): any change is a change.
        return match row.verdict {
            Verdict::Equivalent => "equivalent (identical)".to_string(),
            Verdict::Inconclusive => match row.undecided {
                Some(reason) => {
                    format!(
                        "inconclusive ({})",
                        undecided_text(reason, row.sampling_unit)
                    )
                }
                None => "inconclusive".to_string(),
            },
            verdict @ (Verdict::Regression | Verdict::Improvement) => {
                format!("{verdict} (from 0 {})", row.unit)
                    .trim_end()
                    .to_string()
            }
        };
    }
    let threshold = match row.absolute_threshold {
        Some(absolute) => format!("{} {}", format::value(absolute, &row.unit), row.unit)
            .trim_end()
            .to_string(),
        None => format::threshold(row.threshold),
    };
    match (row.verdict, row.magnitude) {
        (Verdict::Equivalent, _) => format!("equivalent (within ±{threshold})"),
        (Verdict::Inconclusive, _) => match (row.undecided, row.runs_needed) {
            (Some(reason), _) => {
                format!(
                    "inconclusive ({})",
                    undecided_text(reason, row.sampling_unit)
                )
            }
            (None, Some(runs)) => format!(
                "inconclusive ({} for ±{threshold})",
                runs_needed_text(row, runs)
            ),
            (None, None) => "inconclusive".to_string(),
        },
        (verdict, Some(Magnitude::AboveThreshold)) => format!("{verdict} (>= {threshold})"),
        (verdict, Some(Magnitude::BelowThreshold)) => format!("{verdict} (< {threshold})"),
        (verdict, _) => format!("{verdict} (size unclear)"),
    }
}

impl View<'_> {
    /// The header lines: what the intervals and p-values mean. Holds no
    /// quoted value, so its line break may be kept by the escaping.
    pub fn header(&self) -> String {
        let k = self.comparisons.len();
        let confidence = self
            .comparisons
            .first()
            .map_or(0.95, |row| row.delta_confidence);
        let absolute = if self
            .comparisons
            .iter()
            .any(|row| row.scale == Scale::Absolute)
        {
            "; rows with values <= 0: delta = candidate - baseline in their unit"
        } else {
            ""
        };
        let boots = if self
            .comparisons
            .iter()
            .any(|row| row.sampling_unit == SamplingUnit::Boot)
        {
            "\nrows marked (per-boot medians): boots as the unit; delta = exp(difference of the mean per-boot median logs) - 1 with Welch's interval, p: Welch t over boots (adjusted with the others), n and ~N = boots per level"
        } else {
            ""
        };
        let (delta, test, blocks) = match &self.paired {
            None => (
                "candidate/baseline - 1 (Hodges-Lehmann)",
                "Mann-Whitney U",
                String::new(),
            ),
            Some(paired) => (
                "candidate/baseline - 1 (Hodges-Lehmann of the within-block ratios)",
                "Wilcoxon signed-rank",
                format!(
                    "\nanalysis: {}; n = complete blocks; {} incomplete block{} dropped",
                    paired.procedure,
                    paired.dropped_blocks.iter().sum::<usize>(),
                    if paired.dropped_blocks.iter().sum::<usize>() == 1 {
                        ""
                    } else {
                        "s"
                    }
                ),
            ),
        };
        format!(
            "{k} comparison{}; alpha {}; multiplicity: {}\ndelta = {delta}, {:.1}% interval; p: {test}{absolute}{blocks}{boots}",
            if k == 1 { "" } else { "s" },
            self.alpha,
            self.adjustment,
            confidence * 100.0
        )
    }

    pub fn render(&self, format: Format, width: Option<usize>) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(self.0).unwrap_or_default() + "\n",
            Format::Email => crate::email::compare(self.0, &[], None, &[]),
            Format::Text => format!(
                "{}\n\n{}",
                escape::text_lines(&self.header()),
                self.table().text_width(width)
            ),
            Format::Markdown => format!(
                "{}\n\n{}",
                escape::text_lines(&self.header()),
                self.table().markdown()
            ),
            Format::Csv => self.csv(),
        }
    }

    fn table(&self) -> Table {
        let mut table = Table::new(
            [
                "name",
                "baseline",
                "candidate",
                "delta [interval]",
                "p",
                "n",
                "verdict",
            ]
            .map(String::from)
            .to_vec(),
        );
        table.left = vec![6];
        for row in &self.comparisons {
            table.push(vec![
                row.name.clone(),
                median_with_spread(&row.baseline, &row.unit),
                median_with_spread(&row.candidate, &row.unit),
                delta_with_interval(row),
                if row.p_value >= self.alpha {
                    format!("~ {}", format::p_value(row.p_value))
                } else {
                    format::p_value(row.p_value)
                },
                format!("{}+{}", row.baseline.n, row.candidate.n),
                verdict_text(row),
            ]);
        }
        table
    }

    fn csv(&self) -> String {
        let mut table = Table::new(
            [
                "name",
                "unit",
                "baseline_n",
                "baseline_median",
                "baseline_ci_low",
                "baseline_ci_high",
                "candidate_n",
                "candidate_median",
                "candidate_ci_low",
                "candidate_ci_high",
                "delta",
                "delta_ci_low",
                "delta_ci_high",
                "p_value",
                "verdict",
                "magnitude",
                "runs_needed",
                "adjusted",
                "scale",
                "runs_needed_low",
                "runs_needed_high",
                "undecided",
                "sampling_unit",
            ]
            .map(String::from)
            .to_vec(),
        );
        let optional = |value: Option<f64>| value.map(|v| v.to_string()).unwrap_or_default();
        for row in &self.comparisons {
            table.push(vec![
                row.name.clone(),
                row.unit.clone(),
                row.baseline.n.to_string(),
                row.baseline.median.to_string(),
                optional(row.baseline.ci_low),
                optional(row.baseline.ci_high),
                row.candidate.n.to_string(),
                row.candidate.median.to_string(),
                optional(row.candidate.ci_low),
                optional(row.candidate.ci_high),
                row.delta.to_string(),
                optional(row.delta_ci_low),
                optional(row.delta_ci_high),
                row.p_value.to_string(),
                row.verdict.to_string(),
                row.magnitude
                    .map_or(String::new(), |magnitude| magnitude.as_str().to_string()),
                row.runs_needed
                    .map(|runs| runs.to_string())
                    .unwrap_or_default(),
                row.adjusted.clone(),
                match row.scale {
                    Scale::Relative => "relative",
                    Scale::Absolute => "absolute",
                }
                .to_string(),
                row.runs_needed_range
                    .map(|(low, _)| low.to_string())
                    .unwrap_or_default(),
                row.runs_needed_range
                    .map(|(_, high)| high.to_string())
                    .unwrap_or_default(),
                row.undecided
                    .map(|reason| reason.as_str().to_string())
                    .unwrap_or_default(),
                row.sampling_unit.as_str().to_string(),
            ]);
        }
        table.csv()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> ComparisonRow {
        let side = SideSummary {
            n: 2,
            median: 1.0,
            ci_low: None,
            ci_high: None,
            cv: None,
        };
        ComparisonRow {
            name: "mode=b vs a (per-boot medians)".to_string(),
            unit: "s".to_string(),
            better: Better::Lower,
            baseline: side.clone(),
            candidate: side,
            delta: 0.01,
            delta_ci_low: Some(-0.05),
            delta_ci_high: Some(0.07),
            delta_confidence: 0.95,
            p_value: 0.4,
            verdict: Verdict::Inconclusive,
            magnitude: None,
            runs_needed: Some(5),
            runs_needed_range: Some((3, 24)),
            undecided: None,
            sampling_unit: SamplingUnit::Boot,
            adjusted: "none (one comparison)".to_string(),
            threshold: 0.02,
            scale: Scale::Relative,
            absolute_threshold: None,
        }
    }

    #[test]
    fn undecided_rows_say_why_and_what_would_decide() {
        let mut boots = row();
        assert_eq!(
            verdict_text(&boots),
            "inconclusive (~5 boots/level [3-24] for ±2%)"
        );
        boots.undecided = Some(Undecided::OneBoot { minimum: 2 });
        boots.runs_needed = None;
        assert_eq!(
            verdict_text(&boots),
            "inconclusive (1 boot of a level: no spread between boots; boot each level >= 2 times)"
        );
        boots.undecided = Some(Undecided::NoSpreadBetweenBoots);
        boots.delta_ci_low = None;
        boots.delta_ci_high = None;
        assert_eq!(delta_with_interval(&boots), "+1.0% [no spread]");
        let mut runs = row();
        runs.sampling_unit = SamplingUnit::Run;
        runs.runs_needed_range = Some((5, 5));
        assert_eq!(verdict_text(&runs), "inconclusive (~5/cell for ±2%)");
        runs.undecided = Some(Undecided::OneRun { minimum: 4 });
        assert_eq!(
            verdict_text(&runs),
            "inconclusive (1 run per cell: no spread; run >= 4/cell)"
        );
        runs.sampling_unit = SamplingUnit::Block;
        runs.undecided = Some(Undecided::OneRun { minimum: 6 });
        assert_eq!(
            verdict_text(&runs),
            "inconclusive (1 block: no spread; run >= 6 blocks)"
        );
    }
}
