//! The blocked comparison of a candidate with an endpoint measured in turns
//! with it: one-sample Hodges–Lehmann estimate and Wilcoxon signed-rank
//! interval (Walsh averages) of per-block log differences.
//!
//! A block is `b` runs of the endpoint and `b` runs of the candidate taken
//! back to back (the bisection measures G, X, B in turns). Its difference
//! d = mean(ln X runs) − mean(ln E runs). If X is distributed like E *given
//! the machine's state during the block* (load that changes slowly relative
//! to a block cancels), the 2b runs of a block are exchangeable, swapping
//! the labels negates d, so each d is symmetric about 0 and the blocks are
//! independent: the signed-rank null holds exactly, whatever the noise
//! distribution and however the load differs between blocks. The interval
//! is the dual of that test: the order statistics of the Walsh averages
//! (d_i + d_j)/2, i ≤ j, cut at the exact null distribution of the
//! signed-rank statistic (Tukey 1949; Hodges & Lehmann 1963; Hollander &
//! Wolfe, Nonparametric Statistical Methods, 3rd ed., §3.2–3.3).
//! Must not: do I/O or use randomness.

use verdict_stats::shift::Shift;

/// Per-block log differences of `candidate` against `endpoint`, pairing
/// the k-th run of `block` of each (time order); incomplete blocks are
/// left out. O(n).
pub(crate) fn block_differences(endpoint: &[f64], candidate: &[f64], block: usize) -> Vec<f64> {
    let mean_log =
        |values: &[f64]| values.iter().map(|value| value.ln()).sum::<f64>() / values.len() as f64;
    endpoint
        .chunks_exact(block)
        .zip(candidate.chunks_exact(block))
        .map(|(endpoint, candidate)| mean_log(candidate) - mean_log(endpoint))
        .collect()
}

/// The smallest number of blocks at which a one-sided signed-rank test at
/// level `alpha` can reject at all (its smallest p-value is 2⁻ⁿ).
pub(crate) fn minimum_blocks(alpha: f64) -> usize {
    (1.0 / alpha).log2().ceil().max(1.0) as usize
}

/// Largest c with P(T⁺ ≤ c) ≤ `alpha` under the null, with that
/// probability, for n blocks, or `None` if even P(T⁺ = 0) = 2⁻ⁿ exceeds
/// it. Exact distribution by dynamic programming over ranks: O(n³) time,
/// O(n²) memory.
fn critical_count(blocks: usize, alpha: f64) -> Option<(usize, f64)> {
    let total = blocks * (blocks + 1) / 2;
    let mut probability = vec![0.0f64; total + 1];
    probability[0] = 1.0;
    let mut reached = 0;
    for rank in 1..=blocks {
        reached += rank;
        for sum in (0..=reached).rev() {
            let without = probability[sum];
            let with = if sum >= rank {
                probability[sum - rank]
            } else {
                0.0
            };
            probability[sum] = (without + with) / 2.0;
        }
    }
    let mut cumulative = 0.0;
    let mut critical = None;
    for (count, mass) in probability.iter().enumerate() {
        cumulative += mass;
        if cumulative > alpha {
            break;
        }
        critical = Some((count, cumulative));
    }
    critical
}

/// Hodges–Lehmann estimate (median of the Walsh averages) of the blocks'
/// log difference and its distribution-free interval at two-sided
/// `confidence` (each side's error (1 − confidence)/2), both as relative
/// changes exp(·) − 1. `None` for no blocks; no interval when there are too
/// few blocks for that confidence. O(n² log n) for the Walsh averages plus
/// O(n³) for the critical value.
pub(crate) fn blocked_shift(differences: &[f64], confidence: f64) -> Option<Shift> {
    verdict_stats::paired::walsh_shift_with(differences, confidence, f64::exp_m1, critical_count)
}

/// Largest k with P(B ≤ k) ≤ `alpha` for B ~ Binomial(n, 1/2), with that
/// probability, or `None` if even P(B = 0) = 2⁻ⁿ exceeds it. O(n).
fn binomial_critical(count: usize, alpha: f64) -> Option<(usize, f64)> {
    let mut mass = 0.5f64.powi(count as i32);
    let mut cumulative = 0.0;
    let mut critical = None;
    for successes in 0..=count {
        cumulative += mass;
        if cumulative > alpha {
            break;
        }
        critical = Some((successes, cumulative));
        mass *= (count - successes) as f64 / (successes + 1) as f64;
    }
    critical
}

/// The sign test's version of [`blocked_shift`]: the median block
/// difference and its distribution-free interval [d₍ₖ₊₁₎, d₍ₙ₋ₖ₎], k the
/// binomial critical count (the dual of the sign test: under the null each
/// block's sign is a fair coin whatever the block's size, so a block
/// spoiled by a load change counts once, not by its rank; Hollander &
/// Wolfe, Nonparametric Statistical Methods, 3rd ed., §3.4–3.6). As
/// relative changes exp(·) − 1. O(n log n).
pub(crate) fn sign_shift(differences: &[f64], confidence: f64) -> Option<Shift> {
    let count = differences.len();
    if count == 0 {
        return None;
    }
    let mut sorted = differences.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = count / 2;
    let estimate = if count % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    };
    let interval = binomial_critical(count, (1.0 - confidence) / 2.0).map(|(critical, tail)| {
        verdict_stats::shift::Interval {
            low: sorted[critical].exp_m1(),
            high: sorted[count - 1 - critical].exp_m1(),
            confidence: 1.0 - 2.0 * tail,
        }
    });
    Some(Shift {
        estimate: estimate.exp_m1(),
        interval,
    })
}

/// Which one-sample test a bisection runs on block differences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub(crate) enum BlockTest {
    /// Wilcoxon signed-rank (Walsh averages): best for noise near normal.
    SignedRank,
    /// Sign test: best when some blocks are spoiled by large load changes.
    Sign,
}

impl BlockTest {
    /// The test with the larger estimated Pitman efficacy for the noise of
    /// `differences` (the endpoints' block differences, measured before any
    /// candidate): 4·f(0)² for the sign test, 12·(∫f²)² for the
    /// signed-rank test (Lehmann 1975, §2.4), f the density of the
    /// differences around their median, estimated with a window of half
    /// their robust spread (f(0): the share within ±h over 2h; ∫f²: the
    /// same for pairwise differences). Signed-rank when there are too few.
    /// O(n²).
    pub(crate) fn choose(differences: &[f64]) -> BlockTest {
        let count = differences.len();
        if count < 10 {
            return BlockTest::SignedRank;
        }
        let mut sorted = differences.to_vec();
        sorted.sort_by(f64::total_cmp);
        let center = sorted[count / 2];
        let mut deviations: Vec<f64> = sorted.iter().map(|value| (value - center).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        let window = 0.5 * 1.4826 * deviations[count / 2];
        if window <= 0.0 {
            return BlockTest::SignedRank;
        }
        let near_zero = deviations.iter().filter(|&&value| value <= window).count();
        let density_at_zero = near_zero as f64 / (count as f64 * 2.0 * window);
        let mut close_pairs = 0usize;
        for first in 0..count {
            for second in first + 1..count {
                if (sorted[second] - sorted[first]) > window {
                    break;
                }
                close_pairs += 1;
            }
        }
        let pairs = (count * (count - 1) / 2) as f64;
        let squared_density = close_pairs as f64 / (pairs * 2.0 * window);
        let sign = 4.0 * density_at_zero * density_at_zero;
        let signed_rank = 12.0 * squared_density * squared_density;
        if sign > signed_rank {
            BlockTest::Sign
        } else {
            BlockTest::SignedRank
        }
    }

    /// The interval of `differences` at two-sided `confidence` by this test.
    pub(crate) fn shift(self, differences: &[f64], confidence: f64) -> Option<Shift> {
        match self {
            BlockTest::SignedRank => blocked_shift(differences, confidence),
            BlockTest::Sign => sign_shift(differences, confidence),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_values_match_the_published_table() {
        // Hollander & Wolfe Table A.4 / classic tables: n = 10, one-sided
        // α = 0.025 → reject when T⁺ ≤ 8; n = 20, α = 0.005 → T⁺ ≤ 37.
        assert_eq!(critical_count(10, 0.025).map(|(count, _)| count), Some(8));
        assert_eq!(critical_count(20, 0.005).map(|(count, _)| count), Some(37));
        // 2⁻⁵ = 0.03125 > 0.025: five blocks can never reject.
        assert_eq!(critical_count(5, 0.025), None);
        assert_eq!(minimum_blocks(0.025), 6);
    }

    #[test]
    fn interval_covers_the_shift_and_excludes_zero_when_clear() {
        let differences: Vec<f64> = (0..30)
            .map(|index| 0.1 + (index % 7) as f64 * 0.01 - 0.03)
            .collect();
        let shift = blocked_shift(&differences, 0.99).unwrap();
        let interval = shift.interval.unwrap();
        assert!(interval.low > 0.0 && interval.low < shift.estimate);
        assert!((shift.estimate - 0.1f64.exp_m1()).abs() < 0.01);
        let few = blocked_shift(&differences[..3], 0.99).unwrap();
        assert!(few.interval.is_none());
    }

    #[test]
    fn sign_interval_is_the_order_statistics_at_the_binomial_count() {
        // n = 10, one-sided 0.025: P(B <= 1) = 11/1024 = 0.0107 <= 0.025 <
        // P(B <= 2) = 0.0547, so k = 1: [d(2), d(9)].
        assert_eq!(
            binomial_critical(10, 0.025).map(|(count, _)| count),
            Some(1)
        );
        assert_eq!(binomial_critical(5, 0.025), None);
        let differences: Vec<f64> = (1..=10).map(|index| index as f64 / 100.0).collect();
        let shift = sign_shift(&differences, 0.95).unwrap();
        let interval = shift.interval.unwrap();
        assert!((interval.low - 0.02f64.exp_m1()).abs() < 1e-12);
        assert!((interval.high - 0.09f64.exp_m1()).abs() < 1e-12);
        assert!((interval.confidence - (1.0 - 2.0 * 11.0 / 1024.0)).abs() < 1e-12);
    }

    #[test]
    fn choice_follows_the_noise_shape() {
        // Normal-like spread: signed-rank; a third of the blocks spoiled by
        // huge load changes: sign. Deterministic quantiles, no randomness.
        let normal: Vec<f64> = (1..200)
            .map(|index| verdict_stats::plan::normal_quantile(index as f64 / 200.0) * 0.1)
            .collect();
        assert_eq!(BlockTest::choose(&normal), BlockTest::SignedRank);
        let spoiled: Vec<f64> = normal
            .iter()
            .enumerate()
            .map(|(index, value)| if index % 3 == 0 { value * 20.0 } else { *value })
            .collect();
        assert_eq!(BlockTest::choose(&spoiled), BlockTest::Sign);
    }

    #[test]
    fn block_differences_pair_runs_in_time_order() {
        let endpoint = [1.0, 1.0, 2.0, 2.0, 9.0];
        let candidate = [2.0, 2.0, 2.0, 2.0];
        let differences = block_differences(&endpoint, &candidate, 2);
        assert_eq!(differences.len(), 2);
        assert!((differences[0] - 2f64.ln()).abs() < 1e-12);
        assert!(differences[1].abs() < 1e-12);
    }
}
