//! Comparisons as reported: the `verdict.compare/v1` model, built from
//! samples with verdict-stats (multiplicity handled across the family), and
//! rendered as a benchstat-like text table, markdown, CSV or JSON.

use crate::escape;
use crate::format::{self, Format};
use crate::table::Table;
use serde::Serialize;
use verdict_stats::multiplicity::holm;
use verdict_stats::paired::{Analysis, compare_paired};
use verdict_stats::verdict::{
    Better, CompareSettings, Comparison, Magnitude, Scale, Verdict, compare,
};

pub const COMPARE_SCHEMA: &str = "verdict.compare/v1";

/// Which side of a metric is good, from its declared direction: the one
/// mapping from `verdict_model::Direction` to `verdict_stats` `Better`.
pub const fn better_of(direction: verdict_model::Direction) -> Better {
    match direction {
        verdict_model::Direction::HigherIsBetter => Better::Higher,
        verdict_model::Direction::LowerIsBetter => Better::Lower,
    }
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideSummary {
    pub n: usize,
    pub median: f64,
    /// 95% distribution-free interval of the median (absent below n = 6).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub cv: Option<f64>,
}

/// One comparison, as in the JSON schema `verdict.compare/v1`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    pub name: String,
    pub unit: String,
    /// `higher` or `lower` is better.
    pub better: Better,
    pub baseline: SideSummary,
    pub candidate: SideSummary,
    /// Relative change C/B - 1 (Hodges-Lehmann on log values); on the
    /// absolute scale C - B in `unit`.
    pub delta: f64,
    pub delta_ci_low: Option<f64>,
    pub delta_ci_high: Option<f64>,
    /// Confidence of the delta interval (1 - alpha/k).
    pub delta_confidence: f64,
    /// Mann-Whitney p-value, Holm-adjusted when `adjusted` says so.
    pub p_value: f64,
    pub verdict: Verdict,
    pub magnitude: Option<Magnitude>,
    /// Runs per cell that would resolve +-threshold (when inconclusive).
    pub runs_needed: Option<usize>,
    /// `none`, or `holm-bonferroni (k=N)`.
    pub adjusted: String,
    pub threshold: f64,
    /// `relative`, or `absolute` when a value is 0 or negative (`delta` and
    /// its interval are then C - B in `unit`).
    pub scale: Scale,
    /// Absolute scale: the threshold in `unit`, threshold x |median of B|.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absolute_threshold: Option<f64>,
}

/// The end of a comparison's name when its levels differ by boot and it is
/// decided with the boot as the unit (`verdict_stats::boots`).
pub const BOOT_ROW_MARK: &str = " (per-boot medians)";

/// A set of comparisons shown together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    pub schema: &'static str,
    /// `fixed`: every sample at once; `sequential` documents (from
    /// `compare --sequential`) carry per-comparison stopping points instead.
    pub mode: &'static str,
    pub alpha: f64,
    pub adjustment: String,
    pub comparisons: Vec<ComparisonRow>,
    /// Present when the experiment chose `analysis = "paired"`: the
    /// comparisons are of per-block values (`n` counts complete blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedBlocks>,
}

/// How the block-paired comparisons were formed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedBlocks {
    /// The procedure, for people.
    pub procedure: &'static str,
    /// Per comparison (same order): incomplete blocks left out (one cell
    /// ran in them and the other did not, or a different number of times).
    pub dropped_blocks: Vec<usize>,
}

/// What to compare: a name, the two samples, and how to judge them.
#[derive(Debug, Clone)]
pub struct ComparisonInput {
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub threshold: f64,
    pub baseline: Vec<f64>,
    pub candidate: Vec<f64>,
}

/// Compare every input; with k > 1 inputs and `adjust`, intervals are at
/// 1 - alpha/k (Bonferroni) and p-values Holm-adjusted, as docs/statistics.md
/// asks for reports showing several comparisons.
pub fn comparison_rows(
    inputs: &[ComparisonInput],
    alpha: f64,
    adjust: bool,
) -> Result<CompareReport, verdict_stats::StatsError> {
    rows_by(inputs, alpha, adjust, Analysis::Independent)
}

/// [`comparison_rows`] for two cells measured in the same interleaved
/// blocks: each input's `baseline[i]` and `candidate[i]` are the cells'
/// values in block i (from `verdict_stats::paired::block_pairs`), compared
/// by `verdict_stats::paired::compare_paired` (signed-rank on the
/// within-block log ratios); `dropped[i]` is how many incomplete blocks
/// input i left out.
pub fn paired_comparison_rows(
    inputs: &[ComparisonInput],
    dropped: &[usize],
    alpha: f64,
    adjust: bool,
) -> Result<CompareReport, verdict_stats::StatsError> {
    let mut report = rows_by(inputs, alpha, adjust, Analysis::Paired)?;
    report.paired = Some(PairedBlocks {
        procedure: Analysis::Paired.describe(),
        dropped_blocks: dropped.to_vec(),
    });
    Ok(report)
}

fn rows_by(
    inputs: &[ComparisonInput],
    alpha: f64,
    adjust: bool,
    analysis: Analysis,
) -> Result<CompareReport, verdict_stats::StatsError> {
    let family = if adjust { inputs.len().max(1) } else { 1 };
    let mut comparisons: Vec<Comparison> = Vec::with_capacity(inputs.len());
    for input in inputs {
        let settings = CompareSettings {
            threshold: input.threshold,
            better: input.better,
            alpha,
            family_size: family,
        };
        comparisons.push(match analysis {
            Analysis::Independent => compare(&input.baseline, &input.candidate, &settings)?,
            Analysis::Paired => compare_paired(&input.baseline, &input.candidate, &settings)?,
        });
    }
    let raw: Vec<f64> = comparisons
        .iter()
        .map(|comparison| comparison.p_value)
        .collect();
    let adjusted_p = if family > 1 { holm(&raw) } else { raw };
    let adjustment = if family > 1 {
        format!("holm-bonferroni (k={family})")
    } else if adjust {
        "none (one comparison)".to_string()
    } else {
        "none (--no-adjust)".to_string()
    };
    let confidence = 1.0 - alpha / family as f64;
    let rows = inputs
        .iter()
        .zip(&comparisons)
        .zip(adjusted_p)
        .map(|((input, comparison), p_value)| ComparisonRow {
            name: input.name.clone(),
            unit: input.unit.clone(),
            better: input.better,
            baseline: side(&comparison.baseline),
            candidate: side(&comparison.candidate),
            delta: comparison.shift.estimate,
            delta_ci_low: comparison.shift.interval.map(|interval| interval.low),
            delta_ci_high: comparison.shift.interval.map(|interval| interval.high),
            delta_confidence: comparison
                .shift
                .interval
                .map_or(confidence, |interval| interval.confidence),
            p_value,
            verdict: comparison.verdict,
            magnitude: comparison.magnitude,
            runs_needed: comparison.runs_needed,
            adjusted: adjustment.clone(),
            threshold: input.threshold,
            scale: comparison.scale,
            absolute_threshold: comparison.absolute_threshold,
        })
        .collect();
    Ok(CompareReport {
        schema: COMPARE_SCHEMA,
        mode: "fixed",
        alpha,
        adjustment,
        comparisons: rows,
        paired: None,
    })
}

/// [`paired_comparison_rows`] for a table that may have nothing to
/// compare: `None` when `inputs` is empty, errors as text.
pub fn paired_comparisons_if_any(
    inputs: &[ComparisonInput],
    dropped: &[usize],
    alpha: f64,
    adjust: bool,
) -> Result<Option<CompareReport>, String> {
    if inputs.is_empty() {
        return Ok(None);
    }
    paired_comparison_rows(inputs, dropped, alpha, adjust)
        .map(Some)
        .map_err(|error| error.to_string())
}

/// [`comparison_rows`] for a table that may have nothing to compare:
/// `None` when `inputs` is empty, errors as text.
pub fn comparisons_if_any(
    inputs: &[ComparisonInput],
    alpha: f64,
    adjust: bool,
) -> Result<Option<CompareReport>, String> {
    if inputs.is_empty() {
        return Ok(None);
    }
    comparison_rows(inputs, alpha, adjust)
        .map(Some)
        .map_err(|error| error.to_string())
}

fn side(summary: &verdict_stats::summary::Summary) -> SideSummary {
    SideSummary {
        n: summary.n,
        median: summary.median,
        ci_low: summary.median_ci.map(|interval| interval.low),
        ci_high: summary.median_ci.map(|interval| interval.high),
        cv: summary.cv,
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
        _ => format!("{}{unit} [n too small]", shown(row.delta)),
    }
}

/// `regression (>= 2%)`, `equivalent (within ±2%)`, `inconclusive (~190/cell for ±2%)`.
pub fn verdict_text(row: &ComparisonRow) -> String {
    if row.absolute_threshold == Some(0.0) {
        // Baseline median 0 (e.g. no allocations): any change is a change.
        return match row.verdict {
            Verdict::Equivalent => "equivalent (identical)".to_string(),
            Verdict::Inconclusive => "inconclusive".to_string(),
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
        (Verdict::Inconclusive, _) => match row.runs_needed {
            Some(runs) => format!("inconclusive (~{runs}/cell for ±{threshold})"),
            None => "inconclusive".to_string(),
        },
        (verdict, Some(Magnitude::AboveThreshold)) => format!("{verdict} (>= {threshold})"),
        (verdict, Some(Magnitude::BelowThreshold)) => format!("{verdict} (< {threshold})"),
        (verdict, _) => format!("{verdict} (size unclear)"),
    }
}

impl CompareReport {
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
            .any(|row| row.name.ends_with(BOOT_ROW_MARK))
        {
            "\nrows marked (per-boot medians): boots as the unit; delta = exp(difference of the mean per-boot median logs) - 1 with Welch's interval, p: Welch t over boots, n = boots"
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

    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(self).unwrap_or_default() + "\n",
            Format::Text => format!(
                "{}\n\n{}",
                escape::text_lines(&self.header()),
                self.table().text()
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
            ]);
        }
        table.csv()
    }
}
