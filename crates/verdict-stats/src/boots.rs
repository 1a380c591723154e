//! Boots as the sampling unit: compares a baseline level with a candidate
//! level when each was measured in several boots (kernels, boot
//! parameters), with the boot, not the iteration, as the independent unit.
//!
//! Why: memory layout, cache colouring and IRQ placement are drawn anew at
//! every boot and shared by every iteration of that boot: a random effect.
//! Pooling the iterations of one boot of A and one of B as independent
//! samples attributes the boot-to-boot difference to the kernels, and false
//! alarms climb far above α (docs/validation.md, "Boot-to-boot variation").
//!
//! Model (log scale, relative metrics): ln y_bj = μ_level + u_b + e_bj with
//! u_b ~ (0, σ_b²) the boot effect and e_bj ~ (0, σ_w²) the within-boot
//! noise. Each boot is summarised by one number (the median or the mean of
//! its logs); the K_A and K_B boot summaries are independent, so a
//! two-sample test on them is a valid test of μ_A = μ_B whatever σ_b is.
//! Tests: Welch's t on the boot summaries (Welch 1947, Biometrika 34:28,
//! with Satterthwaite's 1946 degrees of freedom), valid from 2 boots per
//! level; or the exact Mann–Whitney test over boots with the Moses/Bauer
//! interval (`rank.rs`, `shift.rs`), distribution-free but unable to reach
//! α = 0.05 below 4 boots per level (smallest two-sided p = 2/C(2K, K)).
//! Variance components: one-way random-effects ANOVA per level and nested
//! (boots within levels) for the pair, method of moments, negative
//! estimates truncated at 0 (Searle, Casella & McCulloch, *Variance
//! Components*, 1992, ch. 3). The verdict rule is `verdict::classify`.
//!
//! Must not: pool iterations of different boots as independent samples,
//! choose the test or the summary from the data (the design chooses), do
//! I/O, or render text.

use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::plan::{PlannedTest, RunsNeeded, Spread, runs_needed};
use crate::shift::{Interval, Shift};
use crate::summary::{median_of_sorted, regularized_incomplete_beta};
use crate::verdict::{
    Better, CompareSettings, Magnitude, Scale, Undecided, Verdict, classify, compare,
    decide_absolute,
};

/// How one boot's iterations are summarised before boots are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BootSummary {
    /// The median of the boot's logs (its geometric median): robust to the
    /// occasional slow iteration. The default (docs/validation.md,
    /// "Boot-to-boot variation", the summary table).
    #[default]
    Median,
    /// The mean of the boot's logs (its geometric mean): slightly more
    /// efficient on clean lognormal noise, at the mercy of outliers.
    Mean,
}

/// The two-sample test applied to the boot summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BootTest {
    /// Welch's t on the boot summaries; its interval is the Welch interval
    /// of the difference of mean summaries. Decides from 2 boots per level.
    #[default]
    Welch,
    /// Exact Mann–Whitney over boots with the Hodges–Lehmann shift and its
    /// Moses/Bauer interval: distribution-free, needs 4 boots per level at
    /// α = 0.05 (2/C(8, 4) = 0.029).
    Rank,
}

/// The summary and the test together: the analysis's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BootMethod {
    pub summary: BootSummary,
    pub test: BootTest,
}

impl BootMethod {
    /// Its name for report headers.
    pub fn describe(self) -> &'static str {
        match (self.summary, self.test) {
            (BootSummary::Median, BootTest::Welch) => {
                "boots as the unit: median of each boot's logs, Welch t over boots"
            }
            (BootSummary::Mean, BootTest::Welch) => {
                "boots as the unit: mean of each boot's logs, Welch t over boots"
            }
            (BootSummary::Median, BootTest::Rank) => {
                "boots as the unit: median of each boot's logs, exact Mann-Whitney over boots"
            }
            (BootSummary::Mean, BootTest::Rank) => {
                "boots as the unit: mean of each boot's logs, exact Mann-Whitney over boots"
            }
        }
    }

    /// A short label for tables: `median+welch`, `mean+rank`, ...
    pub fn label(self) -> &'static str {
        match (self.summary, self.test) {
            (BootSummary::Median, BootTest::Welch) => "median+welch",
            (BootSummary::Mean, BootTest::Welch) => "mean+welch",
            (BootSummary::Median, BootTest::Rank) => "median+rank",
            (BootSummary::Mean, BootTest::Rank) => "mean+rank",
        }
    }
}

/// How to compare boots. Build with [`BootOptions::new`] for the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BootOptions {
    /// Threshold t, direction, α and family size, as for two cells.
    pub settings: CompareSettings,
    pub method: BootMethod,
}

impl BootOptions {
    /// t = 2%, α = 0.05, one comparison, median of logs, Welch over boots.
    pub fn new(better: Better) -> Self {
        Self {
            settings: CompareSettings::new(better),
            method: BootMethod::default(),
        }
    }
}

/// Within-boot and between-boot spread of one level or of a pair of levels
/// (boots nested in levels), by the method of moments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VarianceComponents {
    /// Boots (with at least one value).
    pub boots: usize,
    /// Values over all boots.
    pub iterations: usize,
    /// σ̂_w: within-boot standard deviation (of the logs on the relative
    /// scale, in the unit on the absolute scale); `None` when no boot has
    /// two values.
    pub within_sd: Option<f64>,
    /// σ̂_b: boot-to-boot standard deviation of the boot effect, on the
    /// same scale; 0 when the ANOVA estimate is negative; `None` below two
    /// boots per level or without a within-boot estimate.
    pub between_sd: Option<f64>,
    /// Relative scale: the within-boot CV, sqrt(exp(σ̂_w²) − 1).
    pub within_cv: Option<f64>,
    /// Relative scale: the boot-to-boot CV, sqrt(exp(σ̂_b²) − 1).
    pub between_cv: Option<f64>,
    /// p-value of the F test of "no boot effect" (σ_b = 0): P(F > MSB/MSW)
    /// with the ANOVA's degrees of freedom.
    pub boot_effect_p_value: Option<f64>,
}

/// Everything verdict reports for a comparison of levels measured across
/// boots (schema verdict.compare_boots/v1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BootComparison {
    pub verdict: Verdict,
    /// Present for regressions and improvements.
    pub magnitude: Option<Magnitude>,
    /// Relative: C/B − 1; absolute: C − B in the unit. Welch: the
    /// difference of the mean boot summaries (exp − 1 on the relative
    /// scale) with the Welch interval; rank: the Hodges–Lehmann shift of
    /// the boot summaries with the Moses/Bauer interval. The interval is at
    /// `CompareSettings::interval_confidence`, `None` when the boots cannot
    /// reach it.
    pub shift: Shift,
    pub scale: Scale,
    /// Absolute scale: t·|median of the baseline's boot summaries|.
    pub absolute_threshold: Option<f64>,
    /// Unadjusted two-sided p-value of the test over boots (1 when the test
    /// cannot be computed: fewer than 2 boots on a side for Welch).
    pub p_value: f64,
    /// Boots per level: (baseline, candidate).
    pub boots: (usize, usize),
    /// Each boot's summary in the metric's unit (exp of the median or mean
    /// log on the relative scale), in the order given.
    pub baseline_boots: Vec<f64>,
    pub candidate_boots: Vec<f64>,
    /// Within and between boots, pooled over the two levels.
    pub components: VarianceComponents,
    pub baseline_components: VarianceComponents,
    pub candidate_components: VarianceComponents,
    /// The level the test is run at, α/k.
    pub level: f64,
    /// The fewest boots per level with which the test can reach α/k at all
    /// (2 for Welch; 4 for the rank test at α = 0.05).
    pub minimum_boots: usize,
    /// The smallest two-sided p-value the test can give with these boots
    /// (2/C(K_A + K_B, K_A) for the rank test; 0 for Welch with two boots
    /// a side, 1 below). Above α/k no data can decide: say so.
    pub smallest_p_value: f64,
    /// Present when inconclusive: boots per level that would detect a
    /// shift of ±t with the settings' power at level α/k at the observed
    /// spread of the boot summaries, at least `minimum_boots` and more
    /// than there are (`plan::runs_needed`).
    pub boots_needed: Option<usize>,
    /// The range of `boots_needed` over the uncertainty of the spread
    /// between boots (chi-square with K_A + K_B − 2 degrees of freedom).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boots_needed_range: Option<(usize, usize)>,
    /// Why these boots cannot decide whatever they show: one boot of a
    /// level, or no spread between boots (every boot of each level with
    /// the same summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<Undecided>,
    pub method: BootMethod,
}

impl BootComparison {
    /// Whether these boots can reach the level α/k at all; when not, no
    /// data could have decided and the report should say so, with
    /// `minimum_boots` (and `boots_needed`).
    pub fn decidable(&self) -> bool {
        self.smallest_p_value <= self.level * (1.0 + 1e-12)
    }
}

fn level(settings: &CompareSettings) -> f64 {
    settings.alpha / settings.family_size as f64
}

/// Compares a candidate level with a baseline level measured across boots:
/// `baseline[b]` holds boot b's iteration values (in execution order).
///
/// Each boot becomes one number (`BootSummary`, on the log scale when every
/// value is above 0, else in the unit with the absolute threshold
/// t·|median of the baseline's boot summaries|). The boot summaries are
/// compared by the chosen `BootTest`; the verdict is `verdict::classify`
/// on the interval. Variance components as [`variance_components`].
/// `boots_needed` when inconclusive: Welch, Guenther's (1981, Am. Stat.
/// 35:243) normal-theory size for the t test, 2(z₁₋α/₂ + z₁₋β)²(s/δ)² +
/// z₁₋α/₂²/4; rank, [`runs_per_cell`] (the same divided by the rank
/// test's efficiency 3/π); s the pooled standard deviation of the boot
/// summaries, δ = ln(1 + t) (or the absolute threshold); at least
/// `minimum_boots`. With one boot per level no spread between boots is
/// known and `boots_needed` is the minimum.
///
/// Errors on a level without boots, a boot without values, a non-finite
/// value, or invalid settings. Complexity O(N log N) over all N values.
pub fn compare_boots(
    baseline: &[Vec<f64>],
    candidate: &[Vec<f64>],
    options: &BootOptions,
) -> Result<BootComparison, StatsError> {
    let settings = &options.settings;
    settings.check()?;
    check_level(baseline, "baseline")?;
    check_level(candidate, "candidate")?;
    let scale = boot_scale(baseline, candidate);
    let (baseline_logs, candidate_logs) = (on_scale(baseline, scale), on_scale(candidate, scale));
    let summarise = |boots: &[Vec<f64>]| -> Vec<f64> {
        boots
            .iter()
            .map(|boot| boot_summary(boot, options.method.summary))
            .collect()
    };
    let (baseline_summaries, candidate_summaries) =
        (summarise(&baseline_logs), summarise(&candidate_logs));
    let test_level = level(settings);
    let boots = (baseline.len(), candidate.len());
    let spread = pooled_sd(&baseline_summaries, &candidate_summaries);
    let undecided = undecided_reason(
        &baseline_logs,
        &candidate_logs,
        spread,
        options.method.test,
        test_level,
    );
    let summaries = (&baseline_summaries[..], &candidate_summaries[..]);
    let tested = match options.method.test {
        BootTest::Welch => welch_over_boots(summaries, scale, settings, undecided.is_none()),
        BootTest::Rank => rank_over_boots(summaries, scale, settings, undecided.is_some())?,
    };
    let baseline_median = {
        let mut sorted: Vec<f64> = baseline_summaries
            .iter()
            .map(|value| from_scale(*value, scale))
            .collect();
        sorted.sort_unstable_by(f64::total_cmp);
        median_of_sorted(&sorted)
    };
    let absolute_threshold =
        (scale == Scale::Absolute).then(|| settings.threshold * baseline_median.abs());
    let (verdict, magnitude) = match (absolute_threshold, tested.shift.interval) {
        (Some(tolerance), Some(_)) => decide_absolute(&tested.shift, tolerance, settings.better),
        (None, Some(interval)) => classify(
            interval.low,
            interval.high,
            settings.threshold,
            settings.better,
        ),
        (_, None) => (Verdict::Inconclusive, None),
    };
    let boots_needed = (verdict == Verdict::Inconclusive && undecided.is_none())
        .then(|| {
            boots_needed(
                options.method.test,
                settings,
                absolute_threshold,
                spread,
                boots,
                tested.minimum_boots,
            )
        })
        .flatten();
    let relative = scale == Scale::Relative;
    let naturals = |summaries: &[f64]| -> Vec<f64> {
        summaries
            .iter()
            .map(|value| from_scale(*value, scale))
            .collect()
    };
    Ok(BootComparison {
        verdict,
        magnitude,
        shift: tested.shift,
        scale,
        absolute_threshold,
        p_value: tested.p_value,
        boots,
        baseline_boots: naturals(&baseline_summaries),
        candidate_boots: naturals(&candidate_summaries),
        components: nested_components(&[&baseline_logs, &candidate_logs], relative),
        baseline_components: nested_components(&[&baseline_logs], relative),
        candidate_components: nested_components(&[&candidate_logs], relative),
        level: test_level,
        minimum_boots: tested.minimum_boots,
        smallest_p_value: tested.smallest_p_value,
        boots_needed: boots_needed.map(|needed| needed.runs),
        boots_needed_range: boots_needed.map(|needed| (needed.low, needed.high)),
        undecided,
        method: options.method,
    })
}

/// The relative (log) scale when every value is above 0, else the
/// absolute scale in the metric's unit.
fn boot_scale(baseline: &[Vec<f64>], candidate: &[Vec<f64>]) -> Scale {
    let positive = baseline
        .iter()
        .chain(candidate)
        .flatten()
        .all(|value| *value > 0.0);
    if positive {
        Scale::Relative
    } else {
        Scale::Absolute
    }
}

/// Every boot's values on `scale`: logs on the relative scale.
fn on_scale(boots: &[Vec<f64>], scale: Scale) -> Vec<Vec<f64>> {
    boots
        .iter()
        .map(|boot| match scale {
            Scale::Relative => boot.iter().map(|value| value.ln()).collect(),
            Scale::Absolute => boot.clone(),
        })
        .collect()
}

/// A value on `scale` back in the metric's unit.
fn from_scale(value: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Relative => value.exp(),
        Scale::Absolute => value,
    }
}

/// A difference on `scale` as the reported shift: C/B − 1 on the relative
/// scale, C − B on the absolute one.
fn shift_from_scale(difference: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Relative => difference.exp_m1(),
        Scale::Absolute => difference,
    }
}

/// Why no test or interval is honest for these boots: one boot of a
/// level, or every boot of each level alike while the values vary (a
/// coarse grid), so no spread between boots can be estimated. A metric
/// that does not vary at all (0 allocations in every iteration) keeps its
/// exact answer.
fn undecided_reason(
    baseline_logs: &[Vec<f64>],
    candidate_logs: &[Vec<f64>],
    spread: f64,
    test: BootTest,
    test_level: f64,
) -> Option<Undecided> {
    let varies = baseline_logs
        .iter()
        .chain(candidate_logs)
        .any(|boot| boot.iter().any(|value| *value != boot[0]));
    if baseline_logs.len() < 2 || candidate_logs.len() < 2 {
        Some(Undecided::OneBoot {
            minimum: match test {
                BootTest::Welch => 2,
                BootTest::Rank => rank_minimum_boots(test_level),
            },
        })
    } else if spread == 0.0 && varies {
        Some(Undecided::NoSpreadBetweenBoots)
    } else {
        None
    }
}

/// What a test over the boot summaries gives.
struct BootTestResult {
    shift: Shift,
    p_value: f64,
    minimum_boots: usize,
    smallest_p_value: f64,
}

/// Welch's t over the boot summaries (baseline, candidate); without an
/// interval (and p = 1) when `decidable` is false.
fn welch_over_boots(
    (baseline, candidate): (&[f64], &[f64]),
    scale: Scale,
    settings: &CompareSettings,
    decidable: bool,
) -> BootTestResult {
    let confidence = settings.interval_confidence();
    let welch = welch(baseline, candidate, confidence).filter(|_| decidable);
    let shift = match welch {
        Some(welch) => Shift {
            estimate: shift_from_scale(welch.difference, scale),
            interval: Some(Interval {
                low: shift_from_scale(welch.low, scale),
                high: shift_from_scale(welch.high, scale),
                confidence,
            }),
        },
        None => Shift {
            estimate: shift_from_scale(mean(candidate) - mean(baseline), scale),
            interval: None,
        },
    };
    let smallest_p_value = if baseline.len() >= 2 && candidate.len() >= 2 {
        0.0
    } else {
        1.0
    };
    BootTestResult {
        shift,
        p_value: welch.map_or(1.0, |welch| welch.p_value),
        minimum_boots: 2,
        smallest_p_value,
    }
}

/// The exact Mann–Whitney test over the boot summaries (baseline,
/// candidate) in the metric's unit: the same test and tie-inverting
/// interval as for two cells; without an interval (and p = 1) when
/// `undecided`.
fn rank_over_boots(
    (baseline, candidate): (&[f64], &[f64]),
    scale: Scale,
    settings: &CompareSettings,
    undecided: bool,
) -> Result<BootTestResult, StatsError> {
    let naturals = |summaries: &[f64]| -> Vec<f64> {
        summaries
            .iter()
            .map(|value| from_scale(*value, scale))
            .collect()
    };
    let compared = compare(&naturals(baseline), &naturals(candidate), settings)?;
    let (shift, p_value) = if undecided {
        (
            Shift {
                estimate: compared.shift.estimate,
                interval: None,
            },
            1.0,
        )
    } else {
        (compared.shift, compared.p_value)
    };
    Ok(BootTestResult {
        shift,
        p_value,
        minimum_boots: rank_minimum_boots(level(settings)),
        smallest_p_value: rank_smallest_p_value(baseline.len(), candidate.len()),
    })
}

/// Boots per level that would detect ±t (or the absolute threshold) at the
/// observed `spread` of the boot summaries, at least `minimum_boots` and
/// more than there are (`plan::runs_needed`).
fn boots_needed(
    test: BootTest,
    settings: &CompareSettings,
    absolute_threshold: Option<f64>,
    spread: f64,
    boots: (usize, usize),
    minimum_boots: usize,
) -> Option<RunsNeeded> {
    let effect = match absolute_threshold {
        Some(tolerance) => tolerance,
        None => settings.threshold.ln_1p(),
    };
    let test = match test {
        BootTest::Welch => PlannedTest::Welch,
        BootTest::Rank => PlannedTest::RankTwoSample,
    };
    runs_needed(
        test,
        Spread {
            sd: spread,
            degrees: (boots.0 + boots.1 - 2) as f64,
        },
        effect,
        level(settings),
        settings.power,
        minimum_boots.max(boots.0.max(boots.1) + 1),
    )
}

/// Groups one level's samples `(boot, value)` by boot: one `Vec` per boot
/// in ascending boot id, values in the given (execution) order; the input
/// for [`compare_boots`] and [`variance_components`]. O(n log n).
pub fn group_by_boot(samples: &[(u64, f64)]) -> Vec<Vec<f64>> {
    let mut groups: std::collections::BTreeMap<u64, Vec<f64>> = std::collections::BTreeMap::new();
    for &(boot, value) in samples {
        groups.entry(boot).or_default().push(value);
    }
    groups.into_values().collect()
}

/// Variance components of one level's boots (values in the metric's unit;
/// logs are taken when every value is above 0): one-way random-effects
/// ANOVA by the method of moments (Searle, Casella & McCulloch 1992,
/// ch. 3): MSW = Σ_b Σ_j (x_bj − x̄_b)²/(N − a), MSB = Σ_b n_b(x̄_b − x̄)²/(a − 1),
/// σ̂_w² = MSW, σ̂_b² = max(0, (MSB − MSW)/n₀) with n₀ = (N − Σ n_b²/N)/(a − 1)
/// (the iterations per boot when balanced), and the F test of σ_b = 0,
/// P(F(a − 1, N − a) > MSB/MSW). Errors as [`compare_boots`]. O(N).
pub fn variance_components(boots: &[Vec<f64>]) -> Result<VarianceComponents, StatsError> {
    check_level(boots, "measured")?;
    let relative = boots.iter().flatten().all(|value| *value > 0.0);
    let values: Vec<Vec<f64>> = boots
        .iter()
        .map(|boot| {
            if relative {
                boot.iter().map(|value| value.ln()).collect()
            } else {
                boot.clone()
            }
        })
        .collect();
    Ok(nested_components(&[&values], relative))
}

/// The fewest boots per level at which the exact two-sided Mann–Whitney
/// test over boots can reach `level`: the smallest K with 2/C(2K, K) ≤ level
/// (4 at 0.05, 5 at 0.01). O(K).
pub fn rank_minimum_boots(level: f64) -> usize {
    (1..=64)
        .find(|&boots| rank_smallest_p_value(boots, boots) <= level * (1.0 + 1e-12))
        .unwrap_or(64)
}

/// The smallest two-sided p-value of the exact Mann–Whitney test with m and
/// n values (complete separation): min(1, 2/C(m + n, m)).
pub fn rank_smallest_p_value(m: usize, n: usize) -> f64 {
    let mut arrangements = 1.0f64;
    for step in 0..m.min(n) {
        arrangements = arrangements * (m + n - step) as f64 / (step + 1) as f64;
    }
    (2.0 / arrangements.round()).min(1.0)
}

/// Welch's test of two sets of boot summaries.
#[derive(Debug, Clone, Copy, PartialEq)]
struct WelchTest {
    /// mean(candidate) − mean(baseline).
    difference: f64,
    low: f64,
    high: f64,
    p_value: f64,
}

/// Welch's two-sample t test and interval (Welch 1947; Satterthwaite 1946
/// degrees of freedom): t = d/se, se² = s_B²/K_B + s_C²/K_C,
/// ν = se⁴/((s_B²/K_B)²/(K_B − 1) + (s_C²/K_C)²/(K_C − 1)), two-sided p =
/// I_{ν/(ν+t²)}(ν/2, ½), interval d ± t_{ν, 1−(1−confidence)/2}·se. `None`
/// below 2 values a side. With se = 0 (every summary equal within each
/// side) the interval is [d, d] and p is 1 when d = 0, else 0.
fn welch(baseline: &[f64], candidate: &[f64], confidence: f64) -> Option<WelchTest> {
    if baseline.len() < 2 || candidate.len() < 2 {
        return None;
    }
    let difference = mean(candidate) - mean(baseline);
    let part = |values: &[f64]| variance(values) / values.len() as f64;
    let (baseline_part, candidate_part) = (part(baseline), part(candidate));
    let squared_error = baseline_part + candidate_part;
    if squared_error == 0.0 {
        return Some(WelchTest {
            difference,
            low: difference,
            high: difference,
            p_value: if difference == 0.0 { 1.0 } else { 0.0 },
        });
    }
    let degrees = squared_error * squared_error
        / (baseline_part * baseline_part / (baseline.len() - 1) as f64
            + candidate_part * candidate_part / (candidate.len() - 1) as f64);
    let error = squared_error.sqrt();
    let statistic = difference / error;
    let p_value = student_t_two_sided(statistic, degrees);
    let quantile = student_t_quantile(1.0 - (1.0 - confidence) / 2.0, degrees);
    Some(WelchTest {
        difference,
        low: difference - quantile * error,
        high: difference + quantile * error,
        p_value,
    })
}

/// Two-sided tail P(|T| ≥ |t|) of Student's t with ν degrees of freedom:
/// I_{ν/(ν+t²)}(ν/2, ½) (Abramowitz & Stegun 26.7.1 with 26.5.27).
pub fn student_t_two_sided(statistic: f64, degrees: f64) -> f64 {
    if statistic.is_nan() {
        return f64::NAN;
    }
    if statistic.is_infinite() {
        return 0.0;
    }
    regularized_incomplete_beta(
        degrees / (degrees + statistic * statistic),
        degrees / 2.0,
        0.5,
    )
    .clamp(0.0, 1.0)
}

/// Quantile of Student's t with ν > 0 degrees of freedom at probability
/// p ∈ (0, 1), by bisection on [`student_t_two_sided`] to full double
/// precision (the upper tail is monotone). O(log) steps of the incomplete
/// beta's continued fraction.
pub fn student_t_quantile(probability: f64, degrees: f64) -> f64 {
    if !(probability > 0.0 && probability < 1.0 && degrees > 0.0) {
        return f64::NAN;
    }
    if probability == 0.5 {
        return 0.0;
    }
    if probability < 0.5 {
        return -student_t_quantile(1.0 - probability, degrees);
    }
    // P(T > t) = tail; two-sided tail 2·tail.
    let target = 2.0 * (1.0 - probability);
    let mut high = 1.0f64;
    while student_t_two_sided(high, degrees) > target && high < 1e300 {
        high *= 2.0;
    }
    let mut low = 0.0f64;
    for _ in 0..2000 {
        let middle = low + (high - low) / 2.0;
        if middle <= low || middle >= high {
            break;
        }
        if student_t_two_sided(middle, degrees) > target {
            low = middle;
        } else {
            high = middle;
        }
    }
    low + (high - low) / 2.0
}

fn check_level(boots: &[Vec<f64>], side: &'static str) -> Result<(), StatsError> {
    if boots.is_empty() {
        return Err(StatsError::NoBoots { side });
    }
    for (index, boot) in boots.iter().enumerate() {
        if boot.is_empty() {
            return Err(StatsError::EmptyBoot {
                side,
                boot: index + 1,
            });
        }
        if let Some(position) = boot.iter().position(|value| !value.is_finite()) {
            return Err(StatsError::InvalidBootValue {
                side,
                boot: index + 1,
                number: position + 1,
                value: boot[position],
            });
        }
    }
    Ok(())
}

/// One boot's summary of its (transformed) values.
fn boot_summary(values: &[f64], summary: BootSummary) -> f64 {
    match summary {
        BootSummary::Mean => mean(values),
        BootSummary::Median => {
            let mut sorted = values.to_vec();
            sorted.sort_unstable_by(f64::total_cmp);
            median_of_sorted(&sorted)
        }
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample variance (n − 1); 0 below two values.
fn variance(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let centre = mean(values);
    values
        .iter()
        .map(|value| (value - centre).powi(2))
        .sum::<f64>()
        / (values.len() - 1) as f64
}

/// Pooled standard deviation of the boot summaries of both levels (NaN
/// when neither has two boots).
fn pooled_sd(baseline: &[f64], candidate: &[f64]) -> f64 {
    let mut squares = 0.0;
    let mut degrees = 0usize;
    for values in [baseline, candidate] {
        if values.len() >= 2 {
            squares += variance(values) * (values.len() - 1) as f64;
            degrees += values.len() - 1;
        }
    }
    if degrees == 0 {
        f64::NAN
    } else {
        (squares / degrees as f64).sqrt()
    }
}

/// The ANOVA of boots nested in levels (one level: the one-way
/// classification): sums of squares within boots and between boots within
/// their level, their mean squares, and the method-of-moments estimates.
/// For boots nested in levels, E[MSB] = σ_w² + n₀σ_b² with
/// n₀ = (N − Σ_levels Σ_b n_b²/N_level)/Σ_levels(a_level − 1).
fn nested_components(levels: &[&[Vec<f64>]], relative: bool) -> VarianceComponents {
    let (mut within_squares, mut within_degrees) = (0.0, 0usize);
    let (mut between_squares, mut between_degrees) = (0.0, 0usize);
    let (mut total, mut boots, mut weighted) = (0usize, 0usize, 0.0);
    for level in levels {
        let level_count: usize = level.iter().map(Vec::len).sum();
        let level_mean = level.iter().flatten().sum::<f64>() / level_count as f64;
        for boot in level.iter() {
            let boot_mean = mean(boot);
            within_squares += boot
                .iter()
                .map(|value| (value - boot_mean).powi(2))
                .sum::<f64>();
            within_degrees += boot.len() - 1;
            between_squares += boot.len() as f64 * (boot_mean - level_mean).powi(2);
            weighted += (boot.len() * boot.len()) as f64 / level_count as f64;
        }
        between_degrees += level.len() - 1;
        total += level_count;
        boots += level.len();
    }
    let within_mean_square = (within_degrees > 0).then(|| within_squares / within_degrees as f64);
    let between_mean_square =
        (between_degrees > 0).then(|| between_squares / between_degrees as f64);
    let coefficient = (total as f64 - weighted) / between_degrees.max(1) as f64;
    let between_variance = match (within_mean_square, between_mean_square) {
        (Some(within), Some(between)) if coefficient > 0.0 => {
            Some(((between - within) / coefficient).max(0.0))
        }
        _ => None,
    };
    let boot_effect_p_value = match (within_mean_square, between_mean_square) {
        (Some(within), Some(between)) if within > 0.0 => {
            let statistic = between / within;
            let (first, second) = (between_degrees as f64, within_degrees as f64);
            Some(regularized_incomplete_beta(
                second / (second + first * statistic),
                second / 2.0,
                first / 2.0,
            ))
        }
        (Some(_), Some(between)) => Some(if between > 0.0 { 0.0 } else { 1.0 }),
        _ => None,
    };
    let coefficient_of_variation = |variance: f64| (variance.exp_m1()).max(0.0).sqrt();
    VarianceComponents {
        boots,
        iterations: total,
        within_sd: within_mean_square.map(f64::sqrt),
        between_sd: between_variance.map(f64::sqrt),
        within_cv: within_mean_square
            .filter(|_| relative)
            .map(coefficient_of_variation),
        between_cv: between_variance
            .filter(|_| relative)
            .map(coefficient_of_variation),
        boot_effect_p_value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tolerance: f64) {
        assert!(
            (got - want).abs() <= tolerance * want.abs().max(1e-300),
            "got {got}, want {want}"
        );
    }

    /// Reference values from scripts/boots-reference.py (scipy 1.17.1).
    #[test]
    fn student_t_matches_scipy() {
        // (probability, degrees, scipy.stats.t.ppf)
        let quantiles = [
            (0.975, 1.0, 12.706_204_736_174_694),
            (0.975, 2.0, 4.302_652_729_749_462),
            (0.975, 2.5, 3.574_654_842_003_681_7),
            (0.995, 3.7, 4.869_252_253_227_827_5),
            (0.975, 30.0, 2.042_272_456_301_237_8),
            (0.9995, 1.3, 153.265_892_773_516),
        ];
        for (probability, degrees, want) in quantiles {
            close(student_t_quantile(probability, degrees), want, 1e-10);
            close(
                student_t_two_sided(want, degrees),
                2.0 * (1.0 - probability),
                1e-9,
            );
        }
        assert!((student_t_quantile(0.025, 2.0) + 4.302_652_729_749_462).abs() < 1e-9);
    }

    /// The boot summaries below, Welch's t test against scipy's
    /// `ttest_ind(equal_var=False)` and its 95% interval.
    #[test]
    fn welch_matches_scipy() {
        let baseline = [0.01, -0.02, 0.03, 0.005];
        let candidate = [0.08, 0.05, 0.11];
        let test = welch(&baseline, &candidate, 0.95).unwrap();
        close(test.difference, 0.073_75, 1e-12);
        close(test.p_value, 0.028_825_227_328_851_566, 1e-9);
        close(test.low, 0.013_523_256_830_882_437, 1e-9);
        close(test.high, 0.133_976_743_169_117_56, 1e-9);
        assert!(welch(&baseline[..1], &candidate, 0.95).is_none());
        let flat = welch(&[1.0, 1.0], &[1.0, 1.0], 0.95).unwrap();
        assert_eq!((flat.p_value, flat.low, flat.high), (1.0, 0.0, 0.0));
    }

    /// One-way ANOVA of three boots against scipy's `f_oneway` (F and its
    /// p-value) and the method-of-moments formulas evaluated in the script.
    #[test]
    fn variance_components_match_the_anova() {
        let logs = [
            vec![0.0, 0.1, -0.05, 0.02],
            vec![0.2, 0.25, 0.18],
            vec![-0.1, -0.05, -0.12, -0.08, -0.02],
        ];
        let boots: Vec<Vec<f64>> = logs
            .iter()
            .map(|boot| boot.iter().map(|log: &f64| log.exp()).collect())
            .collect();
        let components = variance_components(&boots).unwrap();
        assert_eq!((components.boots, components.iterations), (3, 12));
        close(
            components.within_sd.unwrap(),
            0.047_836_527_187_216_815,
            1e-10,
        );
        close(
            components.between_sd.unwrap(),
            0.137_106_884_846_605_8,
            1e-10,
        );
        close(
            components.boot_effect_p_value.unwrap(),
            7.034_399_468_590_98e-5,
            1e-6,
        );
        close(
            components.within_cv.unwrap(),
            (0.047_836_527_187_216_815f64.powi(2)).exp_m1().sqrt(),
            1e-12,
        );
        // No boot effect: the estimate is truncated at 0, the F test calm.
        let calm = variance_components(&[vec![1.0, 2.0], vec![2.0, 1.0]]).unwrap();
        assert_eq!(calm.between_sd, Some(0.0));
        assert_eq!(calm.boot_effect_p_value, Some(1.0));
        // One boot: no between-boot estimate.
        let single = variance_components(&[vec![1.0, 1.1, 0.9]]).unwrap();
        assert!(single.within_sd.is_some() && single.between_sd.is_none());
    }

    #[test]
    fn smallest_rank_p_values_by_enumeration() {
        // C(4, 2) = 6 arrangements of 2 + 2 boots: two-sided p ≥ 2/6.
        close(rank_smallest_p_value(2, 2), 1.0 / 3.0, 1e-15);
        close(rank_smallest_p_value(3, 3), 0.1, 1e-15);
        close(rank_smallest_p_value(4, 4), 2.0 / 70.0, 1e-15);
        close(rank_smallest_p_value(3, 5), 2.0 / 56.0, 1e-15);
        assert_eq!(rank_smallest_p_value(1, 1), 1.0);
        assert_eq!(rank_minimum_boots(0.05), 4);
        assert_eq!(rank_minimum_boots(0.01), 5);
        assert_eq!(rank_minimum_boots(0.05 / 6.0), 5);
        // The rank test's own exact p at complete separation agrees
        // (scipy.stats.mannwhitneyu(method="exact"): 0.02857142857142857).
        let separated = crate::rank::mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]);
        close(separated.p_value, 0.028_571_428_571_428_57, 1e-12);
    }

    fn boots(means: &[f64], spread: &[f64]) -> Vec<Vec<f64>> {
        means
            .iter()
            .map(|centre| {
                spread
                    .iter()
                    .map(|offset| centre * (1.0 + offset))
                    .collect()
            })
            .collect()
    }

    const SPREAD: [f64; 6] = [-0.02, 0.01, 0.0, 0.015, -0.01, 0.005];

    #[test]
    fn two_boots_a_side_cannot_decide_with_ranks_but_can_with_welch() {
        // Candidate 10% slower in every boot, boots 1% apart.
        let baseline = boots(&[100.0, 101.0], &SPREAD);
        let candidate = boots(&[110.0, 111.0], &SPREAD);
        let mut options = BootOptions::new(Better::Lower);
        options.method.test = BootTest::Rank;
        let rank = compare_boots(&baseline, &candidate, &options).unwrap();
        assert_eq!(rank.verdict, Verdict::Inconclusive);
        assert!(!rank.decidable());
        close(rank.smallest_p_value, 1.0 / 3.0, 1e-15);
        close(rank.p_value, 1.0 / 3.0, 1e-12);
        assert_eq!(rank.minimum_boots, 4);
        assert_eq!(rank.boots_needed, Some(4));
        assert!(rank.shift.interval.is_none());
        let welch = compare_boots(&baseline, &candidate, &BootOptions::new(Better::Lower)).unwrap();
        assert!(welch.decidable());
        assert_eq!(welch.verdict, Verdict::Regression);
        let interval = welch.shift.interval.unwrap();
        assert!(interval.low > 0.05 && interval.high < 0.15, "{interval:?}");
        assert_eq!(welch.boots, (2, 2));
        assert_eq!(welch.boots_needed, None);
    }

    #[test]
    fn a_boot_effect_is_not_a_kernel_difference() {
        // Same kernel, boots 4% apart, the candidate's two boots happening
        // to land high: pooled iterations see a "change", the boots do not,
        // and the components name the boot effect.
        let baseline = boots(&[100.0, 104.0], &SPREAD);
        let candidate = boots(&[104.5, 108.0], &SPREAD);
        let options = BootOptions::new(Better::Lower);
        let result = compare_boots(&baseline, &candidate, &options).unwrap();
        assert_eq!(result.verdict, Verdict::Inconclusive);
        assert!(result.p_value > 0.2, "{}", result.p_value);
        let between = result.components.between_cv.unwrap();
        let within = result.components.within_cv.unwrap();
        assert!(between > 0.02 && within < 0.02, "{between} {within}");
        assert!(result.components.boot_effect_p_value.unwrap() < 1e-3);
        assert!(result.boots_needed.unwrap() > 2);
        let pooled =
            crate::verdict::compare(&baseline.concat(), &candidate.concat(), &options.settings)
                .unwrap();
        assert!(pooled.verdict.is_change(), "{:?}", pooled.verdict);
        // Summaries are reported in the unit.
        close(result.baseline_boots[1], 104.0 * 1.0025, 1e-3);
    }

    #[test]
    fn samples_group_by_boot_in_boot_order() {
        let samples = [(7, 1.0), (3, 2.0), (7, 3.0), (3, 4.0), (5, 5.0)];
        assert_eq!(
            group_by_boot(&samples),
            vec![vec![2.0, 4.0], vec![5.0], vec![1.0, 3.0]]
        );
        assert!(group_by_boot(&[]).is_empty());
    }

    #[test]
    fn absolute_scale_and_bad_input() {
        let options = BootOptions::new(Better::Lower);
        let baseline = vec![vec![0.0, 1.0, 2.0], vec![1.0, 1.0, 2.0]];
        let candidate = vec![vec![5.0, 6.0, 7.0], vec![6.0, 6.0, 7.0]];
        let result = compare_boots(&baseline, &candidate, &options).unwrap();
        assert_eq!(result.scale, Scale::Absolute);
        close(result.absolute_threshold.unwrap(), 0.02 * 1.0, 1e-12);
        assert!(result.components.within_cv.is_none());
        assert_eq!(
            compare_boots(&[], &candidate, &options),
            Err(StatsError::NoBoots { side: "baseline" })
        );
        assert_eq!(
            compare_boots(&baseline, &[vec![1.0], vec![]], &options),
            Err(StatsError::EmptyBoot {
                side: "candidate",
                boot: 2
            })
        );
        assert!(matches!(
            compare_boots(&baseline, &[vec![1.0, f64::INFINITY]], &options),
            Err(StatsError::InvalidBootValue {
                side: "candidate",
                boot: 1,
                number: 2,
                ..
            })
        ));
        // One boot a side: no test, no spread to plan from; the reason and
        // the fewest boots that would let the test decide.
        let single = compare_boots(&[vec![1.0, 1.1]], &[vec![2.0, 2.1]], &options).unwrap();
        assert_eq!(single.verdict, Verdict::Inconclusive);
        assert_eq!((single.p_value, single.smallest_p_value), (1.0, 1.0));
        assert_eq!(single.boots_needed, None);
        assert_eq!(single.undecided, Some(Undecided::OneBoot { minimum: 2 }));
    }

    #[test]
    fn tied_boot_summaries_are_not_certainty() {
        // Values on a 10% grid: every boot's median is 100 on both levels
        // although the candidate's iterations average higher. Before: a
        // zero-width interval [+0%, +0%] and "equivalent".
        let baseline = vec![vec![100.0, 100.0, 100.0, 90.0, 100.0]; 2];
        let candidate = vec![vec![100.0, 110.0, 100.0, 110.0, 100.0]; 2];
        for test in [BootTest::Welch, BootTest::Rank] {
            let mut options = BootOptions::new(Better::Lower);
            options.method.test = test;
            let compared = compare_boots(&baseline, &candidate, &options).unwrap();
            assert_eq!(compared.verdict, Verdict::Inconclusive, "{compared:?}");
            assert_eq!(compared.shift.interval, None);
            assert_eq!(compared.undecided, Some(Undecided::NoSpreadBetweenBoots));
            assert_eq!(compared.p_value, 1.0);
        }
        // A metric that never varies keeps its exact answer.
        let constant = vec![vec![0.0, 0.0]; 3];
        let options = BootOptions::new(Better::Lower);
        let same = compare_boots(&constant, &constant, &options).unwrap();
        assert_eq!(same.verdict, Verdict::Equivalent);
        assert_eq!(same.undecided, None);
    }

    #[test]
    fn boots_needed_carries_its_range() {
        let options = BootOptions::new(Better::Lower);
        let compared = compare_boots(
            &boots(&[1.00, 1.05], &[0.0, 0.01, -0.01]),
            &boots(&[1.02, 0.98], &[0.0, 0.01, -0.01]),
            &options,
        )
        .unwrap();
        assert_eq!(compared.verdict, Verdict::Inconclusive);
        let needed = compared.boots_needed.unwrap();
        let (low, high) = compared.boots_needed_range.unwrap();
        // Two degrees of freedom: a wide range around the estimate, never
        // below the boots at hand plus one.
        assert!(
            low >= 3 && low <= needed && high > 4 * needed,
            "{low} {needed} {high}"
        );
    }
}
