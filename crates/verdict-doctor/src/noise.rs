//! Statistics of the calibration probe: spread, drift, bimodality and the
//! association of slow iterations with steal and preemption.
//!
//! Pure: slices in, numbers out; no clock, no files. Median, CV, robust CV,
//! outliers and drift against execution order come from
//! `verdict_stats::summary::summarize`, the same summary every report uses.
//! Computed here, because verdict-stats has no use for them:
//! - Spearman's rank correlation between two measured variables (time and
//!   steal, time and context switches), with average ranks for ties
//!   (Kendall & Gibbons, *Rank Correlation Methods*, 5th ed., 1990, ch. 2).
//! - Sarle's bimodality coefficient b = (g²+1)/(k + 3(n−1)²/((n−2)(n−3)))
//!   with the bias-corrected sample skewness g and excess kurtosis k; b above
//!   5/9 (the value of a uniform distribution) suggests bimodality (SAS
//!   Institute 1990; Pfister et al. 2013, Front. Psychol. 4:700).
//!
//! Complexity: O(n log n) for the rank statistics, O(n) otherwise.

use serde::Serialize;

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Ranks 1..=n with ties given their average rank.
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&left, &right| values[left].total_cmp(&values[right]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && values[order[end + 1]] == values[order[start]] {
            end += 1;
        }
        let rank = (start + end) as f64 / 2.0 + 1.0;
        for &index in &order[start..=end] {
            ranks[index] = rank;
        }
        start = end + 1;
    }
    ranks
}

/// Spearman's ρ; `None` when either variable is constant or n < 3.
pub fn spearman(left: &[f64], right: &[f64]) -> Option<f64> {
    if left.len() != right.len() || left.len() < 3 {
        return None;
    }
    let left_ranks = average_ranks(left);
    let right_ranks = average_ranks(right);
    pearson(&left_ranks, &right_ranks)
}

fn pearson(left: &[f64], right: &[f64]) -> Option<f64> {
    let left_mean = mean(left)?;
    let right_mean = mean(right)?;
    let mut product = 0.0;
    let mut left_square = 0.0;
    let mut right_square = 0.0;
    for (x, y) in left.iter().zip(right) {
        product += (x - left_mean) * (y - right_mean);
        left_square += (x - left_mean).powi(2);
        right_square += (y - right_mean).powi(2);
    }
    (left_square > 0.0 && right_square > 0.0).then(|| product / (left_square * right_square).sqrt())
}

/// Sarle's bimodality coefficient; `None` below 4 values or zero spread.
pub fn bimodality_coefficient(values: &[f64]) -> Option<f64> {
    let count = values.len();
    if count < 4 {
        return None;
    }
    let n = count as f64;
    let center = mean(values)?;
    let moment = |power: i32| values.iter().map(|v| (v - center).powi(power)).sum::<f64>() / n;
    let second = moment(2);
    if second <= 0.0 {
        return None;
    }
    let skew = moment(3) / second.powf(1.5);
    let kurtosis = moment(4) / (second * second) - 3.0;
    // Bias-corrected sample skewness G1 and excess kurtosis G2.
    let skew = skew * (n * (n - 1.0)).sqrt() / (n - 2.0);
    let kurtosis = (n - 1.0) / ((n - 2.0) * (n - 3.0)) * ((n + 1.0) * kurtosis + 6.0);
    Some((skew * skew + 1.0) / (kurtosis + 3.0 * (n - 1.0).powi(2) / ((n - 2.0) * (n - 3.0))))
}

/// The threshold above which the coefficient suggests two modes.
pub const BIMODALITY_THRESHOLD: f64 = 5.0 / 9.0;

/// One probe iteration as measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Iteration {
    /// Wall time of the fixed work, seconds.
    pub seconds: f64,
    /// Steal ticks (all CPUs) during the iteration.
    pub steal_ticks: u64,
    /// Involuntary context switches of the probe thread during it.
    pub involuntary_switches: u64,
}

/// The calibration result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NoiseSummary {
    pub iterations: usize,
    pub median_seconds: f64,
    pub min_seconds: f64,
    pub max_seconds: f64,
    /// Standard deviation / mean.
    pub cv: f64,
    /// 1.4826·MAD / median.
    pub robust_cv: Option<f64>,
    /// Iterations with modified z-score above 3.5 (flagged, kept).
    pub outliers: usize,
    /// Spearman ρ of time against iteration order (positive: slowing down).
    pub drift_rho: Option<f64>,
    /// Two-sided p-value of that ρ.
    pub drift_p_value: Option<f64>,
    /// Whether that drift is significant at 5%.
    pub drift_significant: bool,
    /// Median of the last third over the first third, minus 1.
    pub drift_relative: Option<f64>,
    pub bimodality_coefficient: Option<f64>,
    pub bimodal: bool,
    /// Spearman ρ of iteration time against steal ticks in the iteration;
    /// `None` when there was no steal at all.
    pub steal_correlation: Option<f64>,
    /// Spearman ρ of time against involuntary context switches.
    pub preemption_correlation: Option<f64>,
    /// Share of iterations that saw any steal.
    pub iterations_with_steal: f64,
}

/// Summarizes probe iterations; `None` below 3 iterations or for
/// non-finite times.
pub fn summarize(iterations: &[Iteration]) -> Option<NoiseSummary> {
    if iterations.len() < 3 {
        return None;
    }
    let times: Vec<f64> = iterations
        .iter()
        .map(|iteration| iteration.seconds)
        .collect();
    let steal: Vec<f64> = iterations.iter().map(|i| i.steal_ticks as f64).collect();
    let switches: Vec<f64> = iterations
        .iter()
        .map(|i| i.involuntary_switches as f64)
        .collect();
    let summary = verdict_stats::summary::summarize(&times)?;
    let third = times.len() / 3;
    let drift_relative = if third >= 2 {
        let first = verdict_stats::summary::summarize(&times[..third])?.median;
        let last = verdict_stats::summary::summarize(&times[times.len() - third..])?.median;
        Some(last / first - 1.0)
    } else {
        None
    };
    let bimodality = bimodality_coefficient(&times);
    Some(NoiseSummary {
        iterations: summary.n,
        median_seconds: summary.median,
        min_seconds: summary.min,
        max_seconds: summary.max,
        cv: summary.cv?,
        robust_cv: summary.robust_cv,
        outliers: summary.outliers.len(),
        drift_rho: summary.drift.map(|drift| drift.rho),
        drift_p_value: summary.drift.map(|drift| drift.p_value),
        drift_significant: summary.drift.is_some_and(|drift| drift.flagged),
        drift_relative,
        bimodality_coefficient: bimodality,
        bimodal: bimodality.is_some_and(|value| value > BIMODALITY_THRESHOLD),
        steal_correlation: spearman(&times, &steal),
        preemption_correlation: spearman(&times, &switches),
        iterations_with_steal: steal.iter().filter(|ticks| **ticks > 0.0).count() as f64
            / times.len() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(left: f64, right: f64, tolerance: f64) -> bool {
        (left - right).abs() <= tolerance
    }

    #[test]
    fn mean_of_values() {
        assert_eq!(mean(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), Some(5.0));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn ranks_and_spearman() {
        assert_eq!(
            average_ranks(&[10.0, 20.0, 10.0, 30.0]),
            vec![1.5, 3.0, 1.5, 4.0]
        );
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert!(close(
            spearman(&x, &[2.0, 4.0, 6.0, 8.0, 100.0]).unwrap(),
            1.0,
            1e-12
        ));
        assert!(close(
            spearman(&x, &[5.0, 4.0, 3.0, 2.0, 1.0]).unwrap(),
            -1.0,
            1e-12
        ));
        assert_eq!(spearman(&x, &[1.0; 5]), None);
        // Textbook example (Kendall & Gibbons): d² sum 4 for n=5 -> 1-6·4/120 = 0.8.
        assert!(close(
            spearman(&x, &[2.0, 1.0, 4.0, 3.0, 5.0]).unwrap(),
            0.8,
            1e-12
        ));
    }

    #[test]
    fn bimodality_separates_shapes() {
        // Uniform-like spacing gives about 5/9 for large n; two clusters exceed it.
        let unimodal: Vec<f64> = (0..200)
            .map(|index| 100.0 + ((index * 37 % 200) as f64 - 100.0).abs().sqrt())
            .collect();
        let mut bimodal: Vec<f64> = (0..160)
            .map(|index| 100.0 + (index % 5) as f64 * 0.1)
            .collect();
        bimodal.extend((0..40).map(|index| 125.0 + (index % 5) as f64 * 0.1));
        let two = bimodality_coefficient(&bimodal).unwrap();
        assert!(two > BIMODALITY_THRESHOLD, "{two}");
        let one = bimodality_coefficient(&unimodal).unwrap();
        assert!(one < two, "{one} vs {two}");
        assert_eq!(bimodality_coefficient(&[1.0, 1.0, 1.0, 1.0]), None);
    }

    #[test]
    fn summary_sees_steal_and_drift() {
        let iterations: Vec<Iteration> = (0..30)
            .map(|index| {
                let stolen = index % 5 == 0;
                Iteration {
                    seconds: 0.020 + index as f64 * 0.0001 + if stolen { 0.004 } else { 0.0 },
                    steal_ticks: u64::from(stolen),
                    involuntary_switches: 0,
                }
            })
            .collect();
        let summary = summarize(&iterations).unwrap();
        assert_eq!(summary.iterations, 30);
        assert!(summary.steal_correlation.unwrap() > 0.5);
        assert_eq!(summary.preemption_correlation, None);
        assert!(summary.drift_rho.unwrap() > 0.3);
        assert!(summary.drift_significant);
        assert!(summary.drift_p_value.unwrap() < 0.05);
        assert!(summary.drift_relative.unwrap() > 0.0);
        assert!(close(summary.iterations_with_steal, 0.2, 1e-12));
        assert!(summary.cv > 0.05);
        assert_eq!(summarize(&iterations[..2]), None);
    }
}
