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
    fn block_differences_pair_runs_in_time_order() {
        let endpoint = [1.0, 1.0, 2.0, 2.0, 9.0];
        let candidate = [2.0, 2.0, 2.0, 2.0];
        let differences = block_differences(&endpoint, &candidate, 2);
        assert_eq!(differences.len(), 2);
        assert!((differences[0] - 2f64.ln()).abs() < 1e-12);
        assert!(differences[1].abs() < 1e-12);
    }
}
