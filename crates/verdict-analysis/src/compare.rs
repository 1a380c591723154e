//! Comparisons as reported: the `verdict.compare/v1` model, built from
//! samples with verdict-stats (multiplicity handled across the family).
//! verdict-report renders it.

use schemars::JsonSchema;
use serde::Serialize;
pub use verdict_stats::StatsError;
use verdict_stats::multiplicity::holm;
use verdict_stats::paired::{Analysis, compare_paired};
pub use verdict_stats::plan::DEFAULT_POWER;
pub use verdict_stats::verdict::{Better, Magnitude, Scale, Undecided, Verdict};
use verdict_stats::verdict::{CompareSettings, Comparison, compare};

pub const COMPARE_SCHEMA: &str = "verdict.compare/v1";

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SideSummary {
    pub n: usize,
    pub median: f64,
    /// 95% distribution-free interval of the median (absent below n = 6).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub cv: Option<f64>,
}

/// One comparison, as in the JSON schema `verdict.compare/v1`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
    /// Runs per cell (blocks, boots per level: `sampling_unit`) that would
    /// resolve +-threshold at the run's power (when inconclusive).
    pub runs_needed: Option<usize>,
    /// `[low, high]`: `runs_needed` at the ends of the 80% interval of the
    /// spread it was planned from (few runs or boots: a wide range).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_needed_range: Option<(usize, usize)>,
    /// Why data like these cannot decide, when so: `{"reason":
    /// "one_run" | "one_boot" | "no_spread_between_boots", "minimum": N}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecided: Option<Undecided>,
    /// What `n` and `runs_needed` count: `run` (omitted), `block`, `boot`.
    #[serde(skip_serializing_if = "SamplingUnit::is_run")]
    pub sampling_unit: SamplingUnit,
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

/// What one unit of a comparison's `n` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SamplingUnit {
    /// A run (iteration) of a cell.
    #[default]
    Run,
    /// A complete interleaved block (the paired analysis).
    Block,
    /// A boot of a level (decided with the boot as the unit).
    Boot,
}

impl SamplingUnit {
    /// Its serde name: `run`, `block`, `boot`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SamplingUnit::Run => "run",
            SamplingUnit::Block => "block",
            SamplingUnit::Boot => "boot",
        }
    }

    /// Whether this is the default, a run.
    pub fn is_run(&self) -> bool {
        *self == SamplingUnit::Run
    }
}

/// The end of a comparison's name when its levels differ by boot and it is
/// decided with the boot as the unit (`verdict_stats::boots`).
pub const BOOT_ROW_MARK: &str = " (per-boot medians)";

/// A set of comparisons shown together.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
    /// The rows' p-values before the multiplicity adjustment.
    #[serde(skip)]
    raw_p_values: Vec<f64>,
    /// The family size k the p-values are Holm-adjusted over (1: none).
    #[serde(skip)]
    family: usize,
}

/// `verdict compare --format json`: the comparisons, then what the
/// command adds after them: the kernel configurations' difference
/// (`--config-diff`) and where each side came from.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CompareDocument<'a> {
    #[serde(flatten)]
    pub report: &'a CompareReport,
    /// The options that differ between the two sides' kernel
    /// configurations, as `verdict kconfig diff` reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_diff: Option<serde_json::Value>,
    /// Each side's keys in alphabetical order, as they have always printed.
    #[serde(serialize_with = "crate::schema::serialize_sorted")]
    #[schemars(with = "Vec<crate::sources::Source>")]
    pub sources: &'a [crate::sources::Source],
}

/// How the block-paired comparisons were formed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
    /// Power at which "N runs would tell" is planned (the experiment's
    /// `power`; `verdict_stats::plan::DEFAULT_POWER` without one).
    pub power: f64,
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
            power: input.power,
        };
        comparisons.push(match analysis {
            Analysis::Independent => compare(&input.baseline, &input.candidate, &settings)?,
            Analysis::Paired => compare_paired(&input.baseline, &input.candidate, &settings)?,
        });
    }
    let adjustment = if family > 1 {
        format!("holm-bonferroni (k={family})")
    } else if adjust {
        "none (one comparison)".to_string()
    } else {
        "none (--no-adjust)".to_string()
    };
    let confidence = 1.0 - alpha / family as f64;
    let sampling_unit = match analysis {
        Analysis::Independent => SamplingUnit::Run,
        Analysis::Paired => SamplingUnit::Block,
    };
    let rows = inputs
        .iter()
        .zip(&comparisons)
        .map(|(input, comparison)| ComparisonRow {
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
            p_value: comparison.p_value,
            verdict: comparison.verdict,
            magnitude: comparison.magnitude,
            runs_needed: comparison.runs_needed,
            runs_needed_range: comparison.runs_needed_range,
            undecided: comparison.undecided,
            sampling_unit,
            adjusted: adjustment.clone(),
            threshold: input.threshold,
            scale: comparison.scale,
            absolute_threshold: comparison.absolute_threshold,
        })
        .collect();
    let mut report = CompareReport {
        schema: COMPARE_SCHEMA,
        mode: "fixed",
        alpha,
        adjustment,
        comparisons: rows,
        paired: None,
        raw_p_values: Vec::new(),
        family,
    };
    report.adjust_p_values(
        comparisons
            .iter()
            .map(|comparison| comparison.p_value)
            .collect(),
    );
    Ok(report)
}

impl CompareReport {
    /// Sets each row's p-value from the rows' unadjusted p-values `raw`
    /// (row order): Holm-adjusted over the family when the report adjusts
    /// for k > 1 comparisons, else as they are. A row decided another way
    /// (over boots) replaces its raw p-value and calls this again, so every
    /// row's p-value is adjusted over the same family.
    pub fn adjust_p_values(&mut self, raw: Vec<f64>) {
        let adjusted = if self.family > 1 {
            holm(&raw)
        } else {
            raw.clone()
        };
        for (row, p_value) in self.comparisons.iter_mut().zip(adjusted) {
            row.p_value = p_value;
        }
        self.raw_p_values = raw;
    }

    /// The rows' unadjusted p-values, in row order.
    pub fn raw_p_values(&self) -> &[f64] {
        &self.raw_p_values
    }
}

/// [`paired_comparison_rows`] for a table that may have nothing to
/// compare: `None` when `inputs` is empty.
pub fn paired_comparisons_if_any(
    inputs: &[ComparisonInput],
    dropped: &[usize],
    alpha: f64,
    adjust: bool,
) -> Result<Option<CompareReport>, verdict_stats::StatsError> {
    if inputs.is_empty() {
        return Ok(None);
    }
    paired_comparison_rows(inputs, dropped, alpha, adjust).map(Some)
}

/// [`comparison_rows`] for a table that may have nothing to compare:
/// `None` when `inputs` is empty.
pub fn comparisons_if_any(
    inputs: &[ComparisonInput],
    alpha: f64,
    adjust: bool,
) -> Result<Option<CompareReport>, verdict_stats::StatsError> {
    if inputs.is_empty() {
        return Ok(None);
    }
    comparison_rows(inputs, alpha, adjust).map(Some)
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
