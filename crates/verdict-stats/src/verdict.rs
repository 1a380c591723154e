//! Two cells, baseline B and candidate C: summaries, relative shift with its
//! interval, the U-test p-value, and the verdict with the practical
//! threshold t (docs/statistics.md "Verdict with the practical threshold t").
//! Metrics with zero or negative values (allocations per operation) are
//! compared on the absolute scale, in their own unit; samples with ties get
//! the interval that inverts the reported test (`tied.rs`).
//!
//! Must not: adjust p-values across a report (the report calls
//! `multiplicity::holm` over its family), render text, or do I/O.

use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::multiplicity::bonferroni_confidence;
use crate::plan::{DEFAULT_POWER, PlannedTest, RunsNeeded, Spread, runs_needed};
use crate::rank::mann_whitney;
use crate::shift::{Shift, absolute_shift, relative_shift, sorted_pair};
use crate::summary::{Summary, summarize};
use crate::tied;

/// Which direction of the metric is good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Throughput-like (bogo-ops/s): a drop is a regression.
    Higher,
    /// Time-like (ns/op, cycles): a rise is a regression.
    Lower,
}

/// The decision for one comparison (schema verdict.compare/v1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval lies entirely on the bad side of 0.
    Regression,
    /// The interval lies entirely on the good side of 0.
    Improvement,
    /// The interval contains 0 and lies inside (−t, +t).
    Equivalent,
    /// None of the above: more runs are needed to tell.
    Inconclusive,
}

/// Size of a regression or improvement relative to the threshold t.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Magnitude {
    /// The interval lies entirely beyond ±t: the change is at least t.
    AboveThreshold,
    /// The interval lies entirely inside (−t, +t): real but below t.
    BelowThreshold,
    /// The interval straddles ±t.
    Unclear,
}

impl Better {
    /// Its name in JSON and reports: `higher`, `lower`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

impl Verdict {
    /// Its name in JSON and reports (the serde name): `regression`,
    /// `improvement`, `equivalent`, `inconclusive`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// A regression or an improvement: a shift was shown either way.
    pub const fn is_change(self) -> bool {
        matches!(self, Verdict::Regression | Verdict::Improvement)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl Magnitude {
    /// Its name in JSON and reports (the serde name): `above_threshold`,
    /// `below_threshold`, `unclear`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Magnitude::AboveThreshold => "above_threshold",
            Magnitude::BelowThreshold => "below_threshold",
            Magnitude::Unclear => "unclear",
        }
    }
}

/// How to compare. Build with [`CompareSettings::new`] for the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompareSettings {
    /// Practical threshold t as a relative change (0.02 = 2%).
    pub threshold: f64,
    pub better: Better,
    /// Per-family error rate α (0.05).
    pub alpha: f64,
    /// Number k of comparisons shown together; intervals are computed at
    /// the Bonferroni level 1 − α/k when k > 1 (1 = no adjustment).
    pub family_size: usize,
    /// Power at which "N runs would tell" is planned (the experiment's
    /// `power`, 0.9 by default, as `verdict plan` and `verdict doctor`).
    #[serde(default = "default_power")]
    pub power: f64,
}

fn default_power() -> f64 {
    DEFAULT_POWER
}

impl CompareSettings {
    /// t = 2%, α = 0.05, one comparison, power 0.9.
    pub fn new(better: Better) -> Self {
        Self {
            threshold: 0.02,
            better,
            alpha: 0.05,
            family_size: 1,
            power: DEFAULT_POWER,
        }
    }

    /// The level each comparison is tested at, α/k.
    pub fn level(&self) -> f64 {
        self.alpha / self.family_size as f64
    }

    /// Confidence level of the shift interval: 1 − α/k.
    pub fn interval_confidence(&self) -> f64 {
        bonferroni_confidence(self.alpha, self.family_size)
    }

    pub(crate) fn check(&self) -> Result<(), StatsError> {
        if !(self.threshold > 0.0 && self.threshold < 1.0) {
            return Err(StatsError::InvalidSetting {
                name: "threshold",
                value: self.threshold,
                expected: "a relative change between 0 and 1 (0.02 = 2%)",
            });
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(StatsError::InvalidSetting {
                name: "alpha",
                value: self.alpha,
                expected: "a probability between 0 and 1",
            });
        }
        if self.family_size == 0 {
            return Err(StatsError::InvalidSetting {
                name: "family_size",
                value: 0.0,
                expected: "at least 1 comparison",
            });
        }
        if !(self.power > 0.0 && self.power < 1.0) {
            return Err(StatsError::InvalidSetting {
                name: "power",
                value: self.power,
                expected: "a probability between 0 and 1",
            });
        }
        Ok(())
    }
}

/// A map between values and the scale the shift is computed on.
type Transform = fn(f64) -> f64;

/// The scale a comparison's shift is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// C/B − 1 (every value above 0).
    #[default]
    Relative,
    /// C − B in the metric's unit (some value is 0 or negative, so a ratio
    /// is undefined); the threshold is t·|median of B| in that unit.
    Absolute,
}

/// Everything verdict reports for one comparison (schema verdict.compare/v1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    pub baseline: Summary,
    pub candidate: Summary,
    /// Relative: C/B − 1; absolute: C − B in the metric's unit; with its
    /// interval at `CompareSettings::interval_confidence`.
    pub shift: Shift,
    /// The scale of `shift`.
    #[serde(default)]
    pub scale: Scale,
    /// Absolute scale: the threshold in the metric's unit, t·|median of B|.
    #[serde(default)]
    pub absolute_threshold: Option<f64>,
    /// Unadjusted two-sided Mann–Whitney p-value (the report applies Holm).
    pub p_value: f64,
    pub verdict: Verdict,
    /// Present for regressions and improvements.
    pub magnitude: Option<Magnitude>,
    /// Present when inconclusive: runs per cell that would detect a shift
    /// of ±t with the settings' power at level α/k, at the observed
    /// log-scale spread (`plan::runs_needed`).
    pub runs_needed: Option<usize>,
    /// The range of `runs_needed` over the spread's uncertainty
    /// (`plan::RUNS_NEEDED_RANGE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_needed_range: Option<(usize, usize)>,
    /// Why no data like these could decide, when so (with nothing to
    /// plan from, `runs_needed` is then absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<Undecided>,
}

/// Why a comparison cannot be decided by data like those at hand, and
/// what would decide it: the report prints it instead of "N runs would
/// tell" (every comparison gets a row, docs/statistics.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Undecided {
    /// One run in each cell: no spread to test against or plan from;
    /// `minimum` runs per cell give an interval at the level.
    OneRun { minimum: usize },
    /// A level was booted once: no spread between boots can be estimated;
    /// `minimum` boots per level let the test over boots decide.
    OneBoot { minimum: usize },
    /// Every boot of each level has the same summary (values on a coarse
    /// grid): the spread between boots cannot be estimated, so no interval
    /// is honest; more boots or more iterations per boot would give one.
    NoSpreadBetweenBoots,
}

impl Undecided {
    /// Its serde name: `one_run`, `one_boot`, `no_spread_between_boots`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Undecided::OneRun { .. } => "one_run",
            Undecided::OneBoot { .. } => "one_boot",
            Undecided::NoSpreadBetweenBoots => "no_spread_between_boots",
        }
    }
}

/// The fewest runs per cell (the same in both) with which the two-sample
/// rank interval at `level` exists: the smallest m with 2/C(2m, m) ≤ level
/// (4 at 0.05). O(m).
pub fn minimum_runs(level: f64) -> usize {
    (1..=64)
        .find(|&runs| crate::shift::interval_rank(runs, runs, 1.0 - level).is_some())
        .unwrap_or(64)
}

/// Compares candidate against baseline (values in execution order).
///
/// Sources: docs/statistics.md; test as `rank::mann_whitney`, size as
/// `shift::relative_shift` at level 1 − α/k (Bonferroni), runs as
/// `plan::runs_needed` with σ the pooled within-cell standard deviation
/// of the log values. When a value is 0 or negative the shift is
/// `shift::absolute_shift` (Hodges–Lehmann C − B in the unit, Moses/Bauer
/// interval; Hollander & Wolfe 1999, §4.2–4.3) and the threshold
/// t·|median of B|. With ties and at most 250,000 pairs (500 × 500), the
/// interval and the p-value both come from the same Mann–Whitney test
/// (`tied.rs`: the interval inverts the test), so p < α exactly when the
/// 1 − α interval excludes 0. Errors on an empty side, a non-finite value,
/// or invalid settings. Complexity O((m+n) log(m+n)) plus the exact null
/// when small (see `mann_whitney`, `tied.rs`).
pub fn compare(
    baseline: &[f64],
    candidate: &[f64],
    settings: &CompareSettings,
) -> Result<Comparison, StatsError> {
    settings.check()?;
    crate::check_sample(baseline, "baseline")?;
    crate::check_sample(candidate, "candidate")?;
    let positive = |values: &[f64]| values.iter().all(|value| *value > 0.0);
    let scale = if positive(baseline) && positive(candidate) {
        Scale::Relative
    } else {
        Scale::Absolute
    };
    let (transform, back): (Transform, Transform) = match scale {
        Scale::Relative => (f64::ln, f64::exp_m1),
        Scale::Absolute => (|value| value, |value| value),
    };
    let confidence = settings.interval_confidence();
    let level = settings.alpha / settings.family_size as f64;
    // The four computations are independent: on large samples they run on
    // separate cores (10^6 vs 10^6 in well under a second on two).
    let ((baseline_summary, candidate_summary), (shift, p_value)) = rayon::join(
        || rayon::join(|| summarize(baseline), || summarize(candidate)),
        || {
            rayon::join(
                || match scale {
                    Scale::Relative => relative_shift(baseline, candidate, confidence),
                    Scale::Absolute => absolute_shift(baseline, candidate, confidence),
                },
                || mann_whitney(baseline, candidate).p_value,
            )
        },
    );
    let baseline_summary = baseline_summary.ok_or(StatsError::EmptySample { side: "baseline" })?;
    let candidate_summary =
        candidate_summary.ok_or(StatsError::EmptySample { side: "candidate" })?;
    let mut shift = shift.ok_or(StatsError::EmptySample { side: "baseline" })?;
    let mut p_value = p_value;
    if baseline.len().saturating_mul(candidate.len()) <= tied::PAIR_LIMIT {
        let (sorted_baseline, sorted_candidate) = sorted_pair(baseline, candidate, transform);
        if tied::has_ties(&sorted_baseline, &sorted_candidate)
            && let Some((interval, tested)) =
                tied::tied_interval(&sorted_baseline, &sorted_candidate, level, back)
        {
            shift.interval = interval;
            p_value = tested;
        }
    }
    let absolute_threshold =
        (scale == Scale::Absolute).then(|| settings.threshold * baseline_summary.median.abs());
    let (verdict, magnitude) = match absolute_threshold {
        Some(tolerance) => decide_absolute(&shift, tolerance, settings.better),
        None => decide(&shift, settings),
    };
    let (runs_needed, undecided) = if verdict == Verdict::Inconclusive {
        plan_runs(baseline, candidate, settings, absolute_threshold)
    } else {
        (None, None)
    };
    Ok(Comparison {
        baseline: baseline_summary,
        candidate: candidate_summary,
        shift,
        scale,
        absolute_threshold,
        p_value,
        verdict,
        magnitude,
        runs_needed: runs_needed.map(|needed| needed.runs),
        runs_needed_range: runs_needed.map(|needed| (needed.low, needed.high)),
        undecided,
    })
}

/// "N runs would tell" for an inconclusive two-sample comparison
/// (`plan::runs_needed` for the rank test at the settings' power and α/k,
/// σ the pooled within-cell standard deviation of the logs, or of the
/// values on the absolute scale), at least the runs an interval needs and
/// more than either cell has; [`Undecided::OneRun`] when no cell has two
/// runs.
fn plan_runs(
    baseline: &[f64],
    candidate: &[f64],
    settings: &CompareSettings,
    absolute_threshold: Option<f64>,
) -> (Option<RunsNeeded>, Option<Undecided>) {
    let level = settings.level();
    let minimum = minimum_runs(level);
    let (transform, effect): (fn(f64) -> f64, f64) = match absolute_threshold {
        Some(tolerance) => (|value| value, tolerance),
        None => (f64::ln, settings.threshold.ln_1p()),
    };
    let (sd, degrees) = pooled_sd(baseline, candidate, transform);
    if degrees == 0 {
        return (None, Some(Undecided::OneRun { minimum }));
    }
    let floor = minimum.max(baseline.len().max(candidate.len()) + 1);
    let needed = runs_needed(
        PlannedTest::RankTwoSample,
        Spread {
            sd,
            degrees: degrees as f64,
        },
        effect,
        level,
        settings.power,
        floor,
    );
    (needed, None)
}

/// The decision rule on the absolute scale, with the threshold `tolerance`
/// in the metric's unit: as [`classify`]; when the tolerance is 0 (a
/// baseline median of 0), an interval of exactly [0, 0] is equivalent (no
/// change at all, e.g. 0 allocations on both sides). Complexity O(1).
pub fn decide_absolute(
    shift: &Shift,
    tolerance: f64,
    better: Better,
) -> (Verdict, Option<Magnitude>) {
    match shift.interval {
        Some(interval) if tolerance == 0.0 && interval.low == 0.0 && interval.high == 0.0 => {
            (Verdict::Equivalent, None)
        }
        Some(interval) => classify(interval.low, interval.high, tolerance, better),
        None => (Verdict::Inconclusive, None),
    }
}

/// The decision rule (docs/statistics.md, "Verdicts") applied to a shift interval.
/// No interval (too few runs for the confidence) is inconclusive.
/// Complexity O(1).
pub fn decide(shift: &Shift, settings: &CompareSettings) -> (Verdict, Option<Magnitude>) {
    match shift.interval {
        Some(interval) => classify(
            interval.low,
            interval.high,
            settings.threshold,
            settings.better,
        ),
        None => (Verdict::Inconclusive, None),
    }
}

/// The verdict region of a relative-change interval [low, high] for the
/// threshold t: entirely on the bad or good side of 0 gives a regression or
/// improvement (magnitude >= t, < t or unclear); containing 0 and inside
/// (-t, t) is equivalent; anything else inconclusive. The one rule shared
/// by fixed comparisons and the sequential design. Complexity O(1).
pub fn classify(
    low: f64,
    high: f64,
    threshold: f64,
    better: Better,
) -> (Verdict, Option<Magnitude>) {
    if low > 0.0 || high < 0.0 {
        let increased = low > 0.0;
        let verdict = match (increased, better) {
            (true, Better::Lower) | (false, Better::Higher) => Verdict::Regression,
            (true, Better::Higher) | (false, Better::Lower) => Verdict::Improvement,
        };
        let magnitude = if low >= threshold || high <= -threshold {
            Magnitude::AboveThreshold
        } else if low > -threshold && high < threshold {
            Magnitude::BelowThreshold
        } else {
            Magnitude::Unclear
        };
        return (verdict, Some(magnitude));
    }
    if low > -threshold && high < threshold {
        (Verdict::Equivalent, None)
    } else {
        (Verdict::Inconclusive, None)
    }
}

/// Pooled within-cell sample standard deviation of transform(values) and
/// its degrees of freedom (NaN and 0 when no cell has two values).
fn pooled_sd(baseline: &[f64], candidate: &[f64], transform: fn(f64) -> f64) -> (f64, usize) {
    let mut squares = 0.0;
    let mut degrees = 0usize;
    for sample in [baseline, candidate] {
        if sample.len() < 2 {
            continue;
        }
        let logs: Vec<f64> = sample.iter().map(|&value| transform(value)).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        squares += logs.iter().map(|log| (log - mean).powi(2)).sum::<f64>();
        degrees += logs.len() - 1;
    }
    if degrees == 0 {
        return (f64::NAN, 0);
    }
    ((squares / degrees as f64).sqrt(), degrees)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shift::Interval;

    #[test]
    fn names_are_the_serde_names() {
        for verdict in [
            Verdict::Regression,
            Verdict::Improvement,
            Verdict::Equivalent,
            Verdict::Inconclusive,
        ] {
            assert_eq!(
                serde_json::to_value(verdict).unwrap(),
                serde_json::json!(verdict.as_str())
            );
            assert_eq!(verdict.to_string(), verdict.as_str());
        }
        for magnitude in [
            Magnitude::AboveThreshold,
            Magnitude::BelowThreshold,
            Magnitude::Unclear,
        ] {
            assert_eq!(
                serde_json::to_value(magnitude).unwrap(),
                serde_json::json!(magnitude.as_str())
            );
        }
        for better in [Better::Higher, Better::Lower] {
            assert_eq!(
                serde_json::to_value(better).unwrap(),
                serde_json::json!(better.as_str())
            );
        }
        assert!(Verdict::Regression.is_change() && Verdict::Improvement.is_change());
        assert!(!Verdict::Equivalent.is_change() && !Verdict::Inconclusive.is_change());
    }

    fn shift(low: f64, high: f64) -> Shift {
        Shift {
            estimate: (low + high) / 2.0,
            interval: Some(Interval {
                low,
                high,
                confidence: 0.95,
            }),
        }
    }

    #[test]
    fn decision_table() {
        let time = CompareSettings::new(Better::Lower);
        let throughput = CompareSettings::new(Better::Higher);
        let cases = [
            (
                (0.03, 0.08),
                time,
                Verdict::Regression,
                Some(Magnitude::AboveThreshold),
            ),
            (
                (0.03, 0.08),
                throughput,
                Verdict::Improvement,
                Some(Magnitude::AboveThreshold),
            ),
            (
                (0.005, 0.015),
                time,
                Verdict::Regression,
                Some(Magnitude::BelowThreshold),
            ),
            (
                (0.01, 0.05),
                time,
                Verdict::Regression,
                Some(Magnitude::Unclear),
            ),
            (
                (-0.25, -0.15),
                throughput,
                Verdict::Regression,
                Some(Magnitude::AboveThreshold),
            ),
            ((-0.01, 0.015), time, Verdict::Equivalent, None),
            ((-0.12, 0.2), throughput, Verdict::Inconclusive, None),
            ((-0.01, 0.03), time, Verdict::Inconclusive, None),
        ];
        for ((low, high), settings, verdict, magnitude) in cases {
            assert_eq!(
                decide(&shift(low, high), &settings),
                (verdict, magnitude),
                "{low}..{high}"
            );
        }
        let no_interval = Shift {
            estimate: 0.5,
            interval: None,
        };
        assert_eq!(decide(&no_interval, &time), (Verdict::Inconclusive, None));
    }

    #[test]
    fn compare_rejects_bad_input() {
        let settings = CompareSettings::new(Better::Lower);
        assert_eq!(
            compare(&[], &[1.0], &settings),
            Err(StatsError::EmptySample { side: "baseline" })
        );
        assert!(matches!(
            compare(&[1.0, 2.0], &[1.0, f64::NAN], &settings),
            Err(StatsError::InvalidValue {
                side: "candidate",
                number: 2,
                ..
            })
        ));
        let zero_family = CompareSettings {
            family_size: 0,
            ..settings
        };
        assert!(compare(&[1.0], &[1.0], &zero_family).is_err());
    }

    #[test]
    fn verdict_serializes_snake_case() {
        assert_eq!(
            serde_json::to_string(&Verdict::Inconclusive).unwrap(),
            "\"inconclusive\""
        );
        assert_eq!(
            serde_json::to_string(&Magnitude::AboveThreshold).unwrap(),
            "\"above_threshold\""
        );
    }
}
