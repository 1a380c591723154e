//! One cell: median with its distribution-free interval, dispersion,
//! outliers (flagged, never dropped) and drift against execution order.
//!
//! Must not: drop or reorder values (indices in `outliers` refer to the
//! caller's order, which drift also assumes is execution order), or do I/O.

use serde::{Deserialize, Serialize};

use crate::plan::{normal_cdf, normal_quantile};
use crate::shift::Interval;

/// Sample size up to which `median_interval` sums exact binomial
/// probabilities (go-moremath `quantileCIApproxThreshold`).
const EXACT_BINOMIAL_LIMIT: usize = 30;
/// Modified z-score above which a value is flagged (Iglewicz & Hoaglin).
const OUTLIER_Z: f64 = 3.5;
/// Fewest values for which drift is assessed.
const DRIFT_MINIMUM: usize = 7;
/// Level at which drift is flagged.
const DRIFT_ALPHA: f64 = 0.05;

/// Descriptive statistics of one cell, values in execution order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    /// 95% distribution-free interval of the median (benchstat's method);
    /// `None` below 6 values, where no order statistics reach 95%.
    pub median_ci: Option<Interval>,
    pub mean: f64,
    /// Sample standard deviation (n−1) over the mean; `None` for n < 2 or a
    /// zero mean.
    pub cv: Option<f64>,
    /// 1.4826·MAD/median; `None` for a zero median.
    pub robust_cv: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Indices (in the given order) of values with modified z-score > 3.5.
    pub outliers: Vec<usize>,
    /// Rank correlation of value with order; `None` below 7 values or when
    /// all values are equal.
    pub drift: Option<Drift>,
}

/// Spearman rank correlation of the values with their position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Drift {
    /// Spearman's ρ (positive: values grow during the run).
    pub rho: f64,
    /// Two-sided p-value of ρ = 0.
    pub p_value: f64,
    /// `p_value < 0.05`.
    pub flagged: bool,
}

/// Summarises one cell. Returns `None` for an empty slice or any
/// non-finite value.
///
/// Sources: median interval as `median_interval`; robust CV from the MAD
/// scaled by 1.4826 (Rousseeuw & Croux 1993, JASA 88:1273); outliers by
/// the modified z-score 0.6745·(x−median)/MAD > 3.5 (Iglewicz & Hoaglin,
/// *How to Detect and Handle Outliers*, 1993), falling back to the mean
/// absolute deviation ×1.2533 when MAD = 0; drift by Spearman's ρ with the
/// t approximation t = ρ·sqrt((n−2)/(1−ρ²)), n−2 degrees of freedom
/// (Zar 1972, JASA 67:578). Complexity O(n log n) time, O(n) memory.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() || values.iter().any(|value| !value.is_finite()) {
        return None;
    }
    let n = values.len();
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let median = median_of_sorted(&sorted);
    let mean = values.iter().sum::<f64>() / n as f64;
    let cv = if n >= 2 && mean != 0.0 {
        let variance = values
            .iter()
            .map(|value| (value - mean).powi(2))
            .sum::<f64>()
            / (n - 1) as f64;
        Some(variance.sqrt() / mean.abs())
    } else {
        None
    };
    let mut deviations: Vec<f64> = values.iter().map(|value| (value - median).abs()).collect();
    let mad = median_in_place(&mut deviations);
    let robust_cv = (median != 0.0).then(|| 1.4826 * mad / median.abs());
    Some(Summary {
        n,
        median,
        median_ci: median_interval(&sorted, 0.95),
        mean,
        cv,
        robust_cv,
        min: sorted[0],
        max: sorted[n - 1],
        outliers: outliers(values, median, mad),
        drift: drift(values),
    })
}

/// Distribution-free confidence interval for the median of `sorted`
/// (ascending) with at least `confidence` coverage, or `None` when no pair
/// of order statistics reaches it (n < 6 at 95%) or `confidence` ∉ (0, 1).
///
/// Source: binomial order-statistic interval (Hahn & Meeker, *Statistical
/// Intervals*, 1991, §5.2) exactly as benchstat computes it (go-moremath
/// `QuantileCI`): for n ≤ 30, start at the binomial mode and add the larger
/// neighbouring probability (left first on ties) until the sum reaches the
/// confidence; above 30, the normal approximation with continuity
/// correction and its optional left bias. n = 10 gives x(2)..x(9), coverage
/// 0.9785. Complexity O(n) (O(1) above 30).
pub fn median_interval(sorted: &[f64], confidence: f64) -> Option<Interval> {
    let n = sorted.len();
    if n == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let (low_order, high_order, achieved) = median_orders(n, confidence);
    if low_order < 1 || high_order > n {
        return None;
    }
    Some(Interval {
        low: sorted[low_order - 1],
        high: sorted[high_order - 1],
        confidence: achieved,
    })
}

/// 1-based order statistics (may be 0 or n+1, meaning unbounded) and the
/// achieved coverage of benchstat's median interval.
fn median_orders(n: usize, confidence: f64) -> (usize, usize, f64) {
    median_orders_with(n, confidence, EXACT_BINOMIAL_LIMIT)
}

/// `median_orders` with the exact/approximate switch as a parameter (tests
/// exercise the normal branch at small n, as go-moremath's tests do).
fn median_orders_with(n: usize, confidence: f64, exact_limit: usize) -> (usize, usize, f64) {
    if confidence >= 1.0 {
        return (0, n + 1, 1.0);
    }
    if n <= exact_limit {
        let pmf = binomial_half_pmf(n);
        let probability = |index: i64| -> f64 {
            if index < 0 || index > n as i64 {
                0.0
            } else {
                pmf[index as usize]
            }
        };
        // Lower of the two modes when n+1 is even: ceil((n+1)/2) − 1.
        let mode = (n as i64 + 1 + 1) / 2 - 1;
        let mut accumulated = probability(mode);
        let (mut left, mut right) = (mode, mode + 1);
        let (mut left_next, mut right_next) = (probability(left - 1), probability(right));
        while accumulated < confidence && (left_next > 0.0 || right_next > 0.0) {
            if left_next >= right_next {
                accumulated += left_next;
                left -= 1;
                left_next = probability(left - 1);
            } else {
                accumulated += right_next;
                right += 1;
                right_next = probability(right);
            }
        }
        return (
            left.max(0) as usize,
            right.min(n as i64 + 1) as usize,
            accumulated,
        );
    }
    let mean = n as f64 / 2.0;
    let sd = (n as f64 * 0.25).sqrt();
    let low_end = mean + sd * normal_quantile((1.0 - confidence) / 2.0);
    let high_end = 2.0 * mean - low_end;
    let left = (low_end - 0.5).floor() as i64 + 1;
    let mut right = (high_end - 0.5).ceil() as i64 + 1;
    let coverage = |left: i64, right: i64| {
        normal_cdf((right as f64 - 0.5 - mean) / sd) - normal_cdf((left as f64 - 0.5 - mean) / sd)
    };
    let mut achieved = coverage(left, right);
    let biased = coverage(left, right - 1);
    if biased >= confidence && biased < achieved {
        achieved = biased;
        right -= 1;
    }
    if left <= 0 && right > n as i64 {
        achieved = 1.0;
    }
    (
        left.max(0) as usize,
        right.min(n as i64 + 1) as usize,
        achieved,
    )
}

/// P(X = k) for X ~ Binomial(n, ½), k = 0..=n; exact for n ≤ 30.
fn binomial_half_pmf(n: usize) -> Vec<f64> {
    let scale = 0.5f64.powi(n as i32);
    let mut coefficient = 1.0f64;
    (0..=n)
        .map(|k| {
            if k > 0 {
                coefficient = coefficient * (n - k + 1) as f64 / k as f64;
            }
            coefficient * scale
        })
        .collect()
}

/// Median of unsorted values by selection (Hoare's quickselect through
/// `select_nth_unstable`), reordering them. O(n) expected. Non-empty input.
fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    let middle = n / 2;
    let (lower, upper_middle, _) = values.select_nth_unstable_by(middle, f64::total_cmp);
    let upper = *upper_middle;
    if n % 2 == 1 {
        upper
    } else {
        let lower_middle = lower
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(upper);
        (lower_middle + upper) / 2.0
    }
}

/// The median of values sorted ascending (the mean of the middle two for
/// an even count). O(1).
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn outliers(values: &[f64], median: f64, mad: f64) -> Vec<usize> {
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        // MAD = 0 (over half the values equal): Iglewicz & Hoaglin give no
        // rule; use the mean absolute deviation, 1.2533·meanAD ≈ σ.
        let mean_deviation = values
            .iter()
            .map(|value| (value - median).abs())
            .sum::<f64>()
            / values.len() as f64;
        1.2533 * mean_deviation
    };
    if scale <= 0.0 {
        return Vec::new();
    }
    values
        .iter()
        .enumerate()
        .filter(|(_, value)| ((*value - median) / scale).abs() > OUTLIER_Z)
        .map(|(index, _)| index)
        .collect()
}

/// Mid-ranks (1-based) of `values`.
pub(crate) fn mid_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_unstable_by(|&left, &right| values[left].total_cmp(&values[right]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        let rank = (start + 1 + end) as f64 / 2.0;
        for &index in &order[start..end] {
            ranks[index] = rank;
        }
        start = end;
    }
    ranks
}

fn drift(values: &[f64]) -> Option<Drift> {
    let n = values.len();
    if n < DRIFT_MINIMUM {
        return None;
    }
    let value_ranks = mid_ranks(values);
    let mean_rank = (n as f64 + 1.0) / 2.0;
    let (mut covariance, mut value_spread, mut position_spread) = (0.0, 0.0, 0.0);
    for (position, rank) in value_ranks.iter().enumerate() {
        let position_deviation = position as f64 + 1.0 - mean_rank;
        let rank_deviation = rank - mean_rank;
        covariance += position_deviation * rank_deviation;
        value_spread += rank_deviation * rank_deviation;
        position_spread += position_deviation * position_deviation;
    }
    if value_spread == 0.0 {
        return None;
    }
    let rho = (covariance / (value_spread * position_spread).sqrt()).clamp(-1.0, 1.0);
    let degrees = (n - 2) as f64;
    let p_value = if rho.abs() >= 1.0 {
        0.0
    } else {
        let t_squared = rho * rho * degrees / (1.0 - rho * rho);
        // Two-sided Student-t tail: I_{ν/(ν+t²)}(ν/2, ½).
        regularized_incomplete_beta(degrees / (degrees + t_squared), degrees / 2.0, 0.5)
    };
    Some(Drift {
        rho,
        p_value,
        flagged: p_value < DRIFT_ALPHA,
    })
}

/// I_x(a, b) by the continued fraction (modified Lentz), Numerical Recipes
/// 3rd ed. §6.4. Relative accuracy ~1e-14. Complexity O(iterations ≤ 300).
pub(crate) fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let log_front =
        libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = log_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_continued_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_continued_fraction(1.0 - x, b, a) / b
    }
}

fn beta_continued_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut result = d;
    for step in 1..300 {
        let m = step as f64;
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + even * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + even / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        result *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + odd * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + odd / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let delta = d * c;
        result *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_orders_match_benchstat() {
        let (low, high, achieved) = median_orders(10, 0.95);
        assert_eq!((low, high), (2, 9));
        assert!((achieved - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
        // Below 6 values there is no 95% interval.
        assert!(median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95).is_none());
        let six = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.95).unwrap();
        assert_eq!((six.low, six.high), (1.0, 6.0));
    }

    /// Cases from go-moremath's `TestQuantileCI` (q = 0.5): order statistics
    /// and achieved confidence, exact and normal-approximation branches.
    #[test]
    fn quantile_ci_cases_from_go_moremath() {
        let check = |n: usize, confidence: f64, limit: usize, expected: (usize, usize, f64)| {
            let (low, high, achieved) = median_orders_with(n, confidence, limit);
            assert_eq!(
                (low, high),
                (expected.0, expected.1),
                "n={n} c={confidence} limit={limit}"
            );
            assert!(
                (achieved - expected.2).abs() < 1e-9,
                "n={n} c={confidence}: {achieved}"
            );
        };
        let exact = usize::MAX;
        check(4, 0.001, exact, (2, 3, 0.375));
        check(4, 0.375, exact, (2, 3, 0.375));
        check(4, 0.375_000_1, exact, (1, 3, 0.625));
        check(4, 1.0, exact, (0, 5, 1.0));
        check(4, 0.99, exact, (0, 5, 1.0));
        check(4, 0.99 - 0.0625, exact, (0, 4, 0.9375));
        check(5, 0.001, exact, (2, 3, 0.3125));
        check(5, 0.3125, exact, (2, 3, 0.3125));
        check(5, 0.312_500_1, exact, (2, 4, 0.625));
        check(5, 0.99, exact, (0, 6, 1.0));
        check(5, 0.99 - 0.03125, exact, (0, 5, 1.0 - 0.03125));
        // Normal approximation forced at small n (threshold 0 upstream).
        let bands = |n: usize| -> Vec<f64> {
            let (mean, sd) = (n as f64 / 2.0, (n as f64 / 4.0).sqrt());
            (0..=n)
                .map(|i| {
                    normal_cdf((i as f64 + 0.5 - mean) / sd)
                        - normal_cdf((i as f64 - 0.5 - mean) / sd)
                })
                .collect()
        };
        let four = bands(4);
        check(4, 0.001, 0, (2, 3, four[2]));
        check(4, four[2] + 0.00001, 0, (1, 3, four[1] + four[2]));
        check(4, 1.0, 0, (0, 5, 1.0));
        check(4, 0.99, 0, (0, 5, 1.0));
        check(4, 0.90, 0, (0, 4, four[0] + four[1] + four[2] + four[3]));
        let five = bands(5);
        check(5, 0.001, 0, (2, 3, five[2]));
        check(5, five[2] + 0.00001, 0, (2, 4, five[2] + five[3]));
    }

    #[test]
    fn normal_branch_is_close_to_exact_branch() {
        // n = 31 uses the approximation; its orders should be near the
        // exact ones for n = 30 scaled (classical table: 10..21 for n=30).
        assert_eq!(median_orders(30, 0.95).0, 10);
        let (low, high, achieved) = median_orders(31, 0.95);
        assert!(
            (10..=11).contains(&low) && (21..=22).contains(&high),
            "{low} {high}"
        );
        assert!(achieved >= 0.95);
    }

    #[test]
    fn t_tail_matches_reference() {
        // Two-sided p for t = 2.228, 10 d.f. is 0.0500 (t tables).
        let degrees = 10.0;
        let t: f64 = 2.228_138_851_986_5;
        let p = regularized_incomplete_beta(degrees / (degrees + t * t), degrees / 2.0, 0.5);
        assert!((p - 0.05).abs() < 1e-9, "{p}");
    }

    #[test]
    fn drift_detects_a_trend_and_not_noise() {
        let trending: Vec<f64> = (0..20).map(|index| 100.0 + index as f64 * 0.5).collect();
        let drift = summarize(&trending).unwrap().drift.unwrap();
        assert_eq!(drift.rho, 1.0);
        assert!(drift.flagged);
        let alternating: Vec<f64> = (0..20)
            .map(|index| if index % 2 == 0 { 100.0 } else { 101.0 })
            .collect();
        let drift = summarize(&alternating).unwrap().drift.unwrap();
        assert!(!drift.flagged, "{drift:?}");
    }

    #[test]
    fn drift_matches_scipy_spearmanr() {
        // SciPy 1.17.1: scipy.stats.spearmanr(range(n), values) on the same
        // formula data (ties in the first set), statistic and p-value.
        let tied: Vec<f64> = (0..25)
            .map(|i| (100.0 + ((i * 7) % 11) as f64 + 0.3 * i as f64).floor())
            .collect();
        let drift = drift(&tied).unwrap();
        assert!(
            (drift.rho - 0.463_722_029_477_063_8).abs() < 1e-12,
            "{drift:?}"
        );
        assert!(
            (drift.p_value - 0.019_551_709_544_504_334).abs() < 1e-10,
            "{drift:?}"
        );
        assert!(drift.flagged);
        let wrapped: Vec<f64> = (0..40).map(|i| ((i * 37) % 23) as f64).collect();
        let drift = super::drift(&wrapped).unwrap();
        assert!(
            (drift.rho - 0.084_213_517_872_004_15).abs() < 1e-12,
            "{drift:?}"
        );
        assert!(
            (drift.p_value - 0.605_405_240_011_119_7).abs() < 1e-10,
            "{drift:?}"
        );
        assert!(!drift.flagged);
    }

    #[test]
    fn outliers_are_flagged_not_dropped() {
        let values = [10.0, 10.1, 9.9, 10.0, 10.2, 9.8, 30.0, 10.0];
        let summary = summarize(&values).unwrap();
        assert_eq!(summary.outliers, vec![6]);
        assert_eq!(summary.n, 8);
        assert_eq!(summary.max, 30.0);
    }
}
