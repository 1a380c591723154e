//! The block-paired comparison of two cells measured in the same
//! interleaved blocks: Wilcoxon signed-rank test on the within-block log
//! ratios, with the Hodges–Lehmann estimate (median of the Walsh averages)
//! and its distribution-free interval, returned as the same [`Comparison`]
//! the two-sample path returns so [`crate::verdict::classify`] applies
//! unchanged.
//!
//! Why: when the machine's speed drifts or its noise is autocorrelated, the
//! runs of A and B taken in the same block share the machine's state; their
//! ratio cancels it, so the paired test needs far fewer runs than the
//! two-sample test. When the noise is independent, n block differences
//! carry the same information as two samples of n (Var(mean d) = 2σ²/n
//! either way), so little is lost; but a false alarm rate is only
//! controlled if the choice is made by the experiment's design
//! (`[sampling] analysis = "paired"`), never by looking at which analysis
//! gives the answer one hoped for.
//!
//! Method: d_i = ln c_i − ln b_i per block (c_i − b_i on the absolute scale
//! when a value is 0 or negative). Under the null "A and B exchangeable
//! within a block", each d_i is symmetric about 0 and the blocks are
//! independent, so the signed-rank null holds exactly whatever the noise
//! and however the machine differs between blocks. Test, estimate and
//! interval: Hollander & Wolfe, *Nonparametric Statistical Methods*, 3rd
//! ed. (2014), ch. 3 (§3.1 test with midranks, zeros ranked and unsigned
//! as Pratt 1959, §3.2 Walsh-average estimate of Hodges & Lehmann 1963,
//! §3.3 interval of Tukey 1949). Null distribution exact and conditional
//! on the ranks up to 50 differences, else the normal approximation with
//! tie, zero and continuity corrections. With ties or zeros the interval
//! inverts that same test (`signed_rank.rs`), so p < α exactly when it
//! excludes 0.
//!
//! Must not: do I/O, decide which analysis to use from the data, or pair
//! anything but runs of the same block (the caller builds the blocks with
//! [`block_pairs`]).

use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::plan::{PlannedTest, RunsNeeded, Spread, normal_cdf, normal_quantile, runs_needed};
use crate::shift::{Interval, Shift};
use crate::summary::summarize;
use crate::verdict::{
    CompareSettings, Comparison, Scale, Undecided, Verdict, classify, decide_absolute,
};

/// Largest number of non-zero differences for the exact null distribution
/// (its dynamic programme is O(n³): 50 blocks take well under a millisecond).
pub const EXACT_LIMIT: usize = 50;

/// How two cells are analysed, chosen by the experiment's design before the
/// data are seen (`[sampling] analysis`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Analysis {
    /// Two independent samples: Mann–Whitney and the Moses/Bauer interval.
    #[default]
    Independent,
    /// Block-paired: signed-rank on the within-block ratios.
    Paired,
}

impl Analysis {
    /// The procedure's name for report headers.
    pub fn describe(self) -> &'static str {
        match self {
            Analysis::Independent => {
                "two independent samples (Mann-Whitney test, Hodges-Lehmann shift with the Moses interval)"
            }
            Analysis::Paired => {
                "block-paired (Wilcoxon signed-rank on within-block log ratios, Hodges-Lehmann Walsh-average interval)"
            }
        }
    }
}

/// The per-block values of two cells, paired by block.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockPairs {
    /// The baseline's value in each complete block (block order).
    pub baseline: Vec<f64>,
    /// The candidate's value in the same blocks.
    pub candidate: Vec<f64>,
    /// The block ids used, in the same order.
    pub blocks: Vec<u64>,
    /// Blocks in which only one cell ran, or the two ran a different number
    /// of times (a failed or interrupted run): left out.
    pub dropped: usize,
}

/// Pairs two cells' samples `(block, value)` by block. A block is complete
/// when both cells have the same, non-zero number of samples in it; its
/// value per cell is the geometric mean of those samples (the mean of the
/// logs, as the log ratio is taken next), or the arithmetic mean when some
/// value is 0 or negative. Incomplete blocks are counted in `dropped`.
/// O((m+n) log(m+n)).
pub fn block_pairs(baseline: &[(u64, f64)], candidate: &[(u64, f64)]) -> BlockPairs {
    use std::collections::BTreeMap;
    let positive = baseline
        .iter()
        .chain(candidate)
        .all(|(_, value)| *value > 0.0);
    let group = |samples: &[(u64, f64)]| {
        let mut groups: BTreeMap<u64, (usize, f64)> = BTreeMap::new();
        for &(block, value) in samples {
            let entry = groups.entry(block).or_insert((0, 0.0));
            entry.0 += 1;
            entry.1 += if positive { value.ln() } else { value };
        }
        groups
    };
    let (baseline_groups, candidate_groups) = (group(baseline), group(candidate));
    let value = |(count, sum): (usize, f64)| {
        let mean = sum / count as f64;
        if positive { mean.exp() } else { mean }
    };
    let mut pairs = BlockPairs {
        baseline: Vec::new(),
        candidate: Vec::new(),
        blocks: Vec::new(),
        dropped: 0,
    };
    for (block, &base) in &baseline_groups {
        match candidate_groups.get(block) {
            Some(&other) if other.0 == base.0 => {
                pairs.baseline.push(value(base));
                pairs.candidate.push(value(other));
                pairs.blocks.push(*block);
            }
            _ => pairs.dropped += 1,
        }
    }
    pairs.dropped += candidate_groups
        .keys()
        .filter(|block| !baseline_groups.contains_key(block))
        .count();
    pairs
}

/// Result of a two-sided Wilcoxon signed-rank test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignedRankTest {
    /// T⁺: the sum of the (mid)ranks of |d| over the positive differences
    /// (zeros ranked with the others, Pratt 1959).
    pub positive_rank_sum: f64,
    /// Non-zero differences (the ones that carry a sign).
    pub ranked: usize,
    /// Two-sided p-value 2·min(P(T⁺ ≤ t), P(T⁺ ≥ t)), capped at 1; 1 when
    /// no difference is non-zero.
    pub p_value: f64,
    /// Whether the exact null distribution was used.
    pub exact: bool,
}

/// The null distribution of T⁺ for n untied ranks as probabilities of
/// 0..=n(n+1)/2, by the recurrence over ranks (each rank in or out with
/// probability ½). O(n³) time, O(n²) memory.
fn signed_rank_pmf(ranks: usize) -> Vec<f64> {
    let total = ranks * (ranks + 1) / 2;
    let mut probability = vec![0.0f64; total + 1];
    probability[0] = 1.0;
    let mut reached = 0;
    for rank in 1..=ranks {
        reached += rank;
        for sum in (0..=reached).rev() {
            let with = if sum >= rank {
                probability[sum - rank]
            } else {
                0.0
            };
            probability[sum] = (probability[sum] + with) / 2.0;
        }
    }
    probability
}

/// Two-sided Wilcoxon signed-rank test that the differences are symmetric
/// about 0 (Wilcoxon 1945; Hollander, Wolfe & Chicken 2014, §3.1), with
/// midranks for tied |d| and zeros ranked and unsigned (Pratt 1959); the
/// null distribution is the exact one conditional on those ranks up to
/// [`EXACT_LIMIT`] differences (without ties or zeros: the classical exact
/// distribution), else normal with its mean Σr/2, variance Σr²/4 and a
/// continuity correction (`crate::signed_rank`). The interval of
/// [`compare_paired`] inverts this same test. O(n log n), plus O(n³) when
/// exact.
pub fn signed_rank(differences: &[f64]) -> SignedRankTest {
    crate::signed_rank::test_at(differences, 0.0).0
}

/// Largest c with P(T⁺ ≤ c) ≤ `tail` under the untied null for n
/// differences, with that probability; `None` when even P(T⁺ = 0) = 2⁻ⁿ
/// exceeds it. Exact for n ≤ [`EXACT_LIMIT`], else normal with continuity
/// correction. O(n³) when exact, O(1) otherwise.
pub fn critical_count(count: usize, tail: f64) -> Option<(usize, f64)> {
    if count == 0 || !(tail > 0.0 && tail < 1.0) {
        return None;
    }
    if count <= EXACT_LIMIT {
        let mut cumulative = 0.0;
        let mut critical = None;
        for (sum, mass) in signed_rank_pmf(count).iter().enumerate() {
            cumulative += mass;
            // Tolerance: cumulative sums carry ~1e-16 relative error.
            if cumulative > tail * (1.0 + 1e-12) {
                break;
            }
            critical = Some((sum, cumulative));
        }
        return critical;
    }
    let n = count as f64;
    let mean = n * (n + 1.0) / 4.0;
    let sd = (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt();
    // P(T⁺ ≤ c) ≈ Φ((c + ½ − mean)/sd) ≤ tail ⇔ c ≤ mean − ½ + sd·Φ⁻¹(tail).
    let bound = (mean - 0.5 + sd * normal_quantile(tail)).floor();
    (bound >= 0.0).then(|| {
        let critical = bound as usize;
        (critical, normal_cdf((critical as f64 + 0.5 - mean) / sd))
    })
}

/// Hodges–Lehmann estimate (median of the n(n+1)/2 Walsh averages
/// (d_i + d_j)/2, i ≤ j) of the centre of the differences, and the
/// interval [W₍c+1₎, W₍M−c₎] dual to the two-sided signed-rank test at
/// 1 − `confidence` (Hollander & Wolfe 2014, §3.2–3.3), both mapped by
/// `back` (exp_m1 for log differences). `None` for no differences; no
/// interval when there are too few for the confidence. O(n² log n) time
/// and O(n²) memory (2,000 blocks: 16 MB).
pub fn walsh_shift(differences: &[f64], confidence: f64, back: fn(f64) -> f64) -> Option<Shift> {
    walsh_shift_with(differences, confidence, back, critical_count)
}

/// [`walsh_shift`] with the signed-rank critical count given by `critical`
/// (`(count, tail)` -> the largest c with P(T+ <= c) <= tail and that
/// probability), for a caller that needs another computation of it (the
/// bisection's exact distribution at every size).
pub fn walsh_shift_with(
    differences: &[f64],
    confidence: f64,
    back: fn(f64) -> f64,
    critical: fn(usize, f64) -> Option<(usize, f64)>,
) -> Option<Shift> {
    let count = differences.len();
    if count == 0 {
        return None;
    }
    let mut walsh = Vec::with_capacity(count * (count + 1) / 2);
    for first in 0..count {
        for second in first..count {
            walsh.push((differences[first] + differences[second]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let total = walsh.len();
    let middle = total / 2;
    let estimate = if total % 2 == 1 {
        walsh[middle]
    } else {
        (walsh[middle - 1] + walsh[middle]) / 2.0
    };
    let interval = critical(count, (1.0 - confidence) / 2.0).map(|(critical, tail)| Interval {
        low: back(walsh[critical]),
        high: back(walsh[total - 1 - critical]),
        confidence: 1.0 - 2.0 * tail,
    });
    Some(Shift {
        estimate: back(estimate),
        interval,
    })
}

/// Compares candidate against baseline block by block: `baseline[i]` and
/// `candidate[i]` were measured in the same block i (build them with
/// [`block_pairs`]). Shift: Hodges–Lehmann of the log ratios as C/B − 1
/// with the signed-rank interval at 1 − α/k ([`walsh_shift`]); p-value:
/// [`signed_rank`]; verdict: [`classify`] on that interval, as the
/// two-sample path. On the absolute scale (a value 0 or negative) the
/// differences are c_i − b_i in the unit and the threshold t·|median of B|.
/// `runs_needed` (when inconclusive): blocks for the settings' power at
/// level α/k, n = (z₁₋α/₂ + z₁₋β)²(s_d / ln(1 + t))² / (3/π), s_d the
/// standard deviation of the differences (the one-sample normal size
/// divided by the signed-rank test's efficiency 3/π; Noether 1987), with
/// its range, at least the number of blocks at which an interval exists. Errors on no blocks, an
/// empty side, sides of different lengths, a non-finite value, or invalid settings.
pub fn compare_paired(
    baseline: &[f64],
    candidate: &[f64],
    settings: &CompareSettings,
) -> Result<Comparison, StatsError> {
    settings.check()?;
    if baseline.is_empty() && candidate.is_empty() {
        return Err(StatsError::NoCompleteBlocks);
    }
    crate::check_sample(baseline, "baseline")?;
    crate::check_sample(candidate, "candidate")?;
    if baseline.len() != candidate.len() {
        return Err(StatsError::UnpairedBlocks {
            baseline: baseline.len(),
            candidate: candidate.len(),
        });
    }
    let positive = baseline.iter().chain(candidate).all(|value| *value > 0.0);
    let scale = if positive {
        Scale::Relative
    } else {
        Scale::Absolute
    };
    let differences: Vec<f64> = baseline
        .iter()
        .zip(candidate)
        .map(|(base, other)| match scale {
            Scale::Relative => other.ln() - base.ln(),
            Scale::Absolute => other - base,
        })
        .collect();
    let back: fn(f64) -> f64 = match scale {
        Scale::Relative => f64::exp_m1,
        Scale::Absolute => |value| value,
    };
    let confidence = settings.interval_confidence();
    let level = settings.alpha / settings.family_size as f64;
    let baseline_summary =
        summarize(baseline).ok_or(StatsError::EmptySample { side: "baseline" })?;
    let candidate_summary =
        summarize(candidate).ok_or(StatsError::EmptySample { side: "candidate" })?;
    let mut shift = walsh_shift(&differences, confidence, back)
        .ok_or(StatsError::EmptySample { side: "baseline" })?;
    let (test, tied) = crate::signed_rank::test_at(&differences, 0.0);
    if tied && let Some(interval) = crate::signed_rank::inverted_interval(&differences, level, back)
    {
        // Ties or zeros: the interval that inverts the reported test.
        shift.interval = interval;
    }
    let absolute_threshold =
        (scale == Scale::Absolute).then(|| settings.threshold * baseline_summary.median.abs());
    let (verdict, magnitude) = match (absolute_threshold, shift.interval) {
        (Some(tolerance), _) => decide_absolute(&shift, tolerance, settings.better),
        (None, Some(interval)) => classify(
            interval.low,
            interval.high,
            settings.threshold,
            settings.better,
        ),
        (None, None) => (Verdict::Inconclusive, None),
    };
    let (runs_needed, undecided) = if verdict == Verdict::Inconclusive {
        plan_blocks(&differences, settings, absolute_threshold)
    } else {
        (None, None)
    };
    Ok(Comparison {
        baseline: baseline_summary,
        candidate: candidate_summary,
        shift,
        scale,
        absolute_threshold,
        p_value: test.p_value,
        verdict,
        magnitude,
        runs_needed: runs_needed.map(|needed| needed.runs),
        runs_needed_range: runs_needed.map(|needed| (needed.low, needed.high)),
        undecided,
    })
}

/// "N blocks would tell" for an inconclusive paired comparison:
/// `plan::runs_needed` for the signed-rank test with s_d the standard
/// deviation of the differences (n − 1 degrees of freedom), at least the
/// blocks an interval needs and more than there are; [`Undecided::OneRun`]
/// with a single block.
fn plan_blocks(
    differences: &[f64],
    settings: &CompareSettings,
    absolute_threshold: Option<f64>,
) -> (Option<RunsNeeded>, Option<Undecided>) {
    let level = settings.level();
    let minimum = minimum_blocks(level);
    if differences.len() < 2 {
        return (None, Some(Undecided::OneRun { minimum }));
    }
    let effect = absolute_threshold.unwrap_or(settings.threshold.ln_1p());
    let needed = runs_needed(
        PlannedTest::SignedRank,
        Spread {
            sd: standard_deviation(differences),
            degrees: (differences.len() - 1) as f64,
        },
        effect,
        level,
        settings.power,
        minimum.max(differences.len() + 1),
    );
    (needed, None)
}

/// The smallest number of blocks whose two-sided signed-rank interval at
/// level `alpha` exists: 2·2⁻ⁿ ≤ α.
pub fn minimum_blocks(alpha: f64) -> usize {
    (2.0 / alpha).log2().ceil().max(1.0) as usize
}

/// Sample standard deviation (NaN below two values).
fn standard_deviation(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return f64::NAN;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    (values
        .iter()
        .map(|value| (value - mean).powi(2))
        .sum::<f64>()
        / (values.len() - 1) as f64)
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Better;

    #[test]
    fn critical_values_match_the_published_table() {
        // Hollander & Wolfe Table A.4: n = 10, one-sided α = 0.025 → reject
        // when T⁺ ≤ 8; n = 20, α = 0.005 → T⁺ ≤ 37.
        assert_eq!(critical_count(10, 0.025).map(|(count, _)| count), Some(8));
        assert_eq!(critical_count(20, 0.005).map(|(count, _)| count), Some(37));
        // 2⁻⁵ = 0.03125 > 0.025: five blocks can never reject.
        assert_eq!(critical_count(5, 0.025), None);
        assert_eq!(minimum_blocks(0.05), 6);
        // The normal approximation above the exact limit agrees with the
        // exact count at the limit to within one.
        let exact = critical_count(50, 0.025).unwrap().0 as i64;
        let n = 50.0f64;
        let approximate = (n * (n + 1.0) / 4.0 - 0.5
            + (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt() * normal_quantile(0.025))
        .floor() as i64;
        assert!((exact - approximate).abs() <= 1, "{exact} vs {approximate}");
    }

    #[test]
    fn signed_rank_p_values_match_hand_computation() {
        // All 6 positive: T⁺ = 21, P(T⁺ ≥ 21) = 2⁻⁶, two-sided 2⁻⁵.
        let test = signed_rank(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
        assert!(test.exact);
        assert_eq!(test.positive_rank_sum, 21.0);
        assert!((test.p_value - 1.0 / 32.0).abs() < 1e-15);
        // The zero keeps rank 1 (Pratt) and carries no sign; ranks 2 and 4
        // positive: T⁺ = 6 over the signed ranks {2, 3, 4, 5}, and 7 of
        // their 16 sign patterns have T⁺ ≤ 6 ({}, 2, 3, 4, 5, 2+3, 2+4).
        let balanced = signed_rank(&[0.0, 0.1, -0.1 - 1e-9, 0.2, -0.2 - 1e-9]);
        assert_eq!(balanced.ranked, 4);
        assert_eq!(balanced.positive_rank_sum, 6.0);
        assert!((balanced.p_value - 2.0 * 7.0 / 16.0).abs() < 1e-15);
        assert_eq!(signed_rank(&[0.0, 0.0]).p_value, 1.0);
        // Ties keep the exact distribution, conditional on the midranks.
        assert!(signed_rank(&[0.1, 0.1, 0.2, -0.3]).exact);
    }

    #[test]
    fn paired_comparison_cancels_a_shared_block_effect() {
        // Block effects from 1x to 10x (a machine whose speed swings) with a
        // steady 5% slowdown of the candidate inside each block: the
        // two-sample test cannot see it, the paired one must.
        let baseline: Vec<f64> = (0..20).map(|block| 1.0 + (block * 7 % 10) as f64).collect();
        let candidate: Vec<f64> = baseline
            .iter()
            .enumerate()
            .map(|(index, value)| value * (1.05 + 0.002 * (index % 3) as f64))
            .collect();
        let settings = CompareSettings::new(Better::Lower);
        let paired = compare_paired(&baseline, &candidate, &settings).unwrap();
        assert_eq!(paired.verdict, Verdict::Regression);
        let interval = paired.shift.interval.unwrap();
        assert!(interval.low > 0.04 && interval.high < 0.06, "{interval:?}");
        let independent = crate::verdict::compare(&baseline, &candidate, &settings).unwrap();
        assert_eq!(independent.verdict, Verdict::Inconclusive);
        // Too few blocks for an interval: inconclusive with a plan.
        let few = compare_paired(&baseline[..4], &candidate[..4], &settings).unwrap();
        assert_eq!(few.verdict, Verdict::Inconclusive);
        assert!(few.runs_needed.unwrap() >= minimum_blocks(0.05));
        assert!(matches!(
            compare_paired(&baseline[..3], &candidate[..4], &settings),
            Err(StatsError::UnpairedBlocks { .. })
        ));
        assert_eq!(
            compare_paired(&[], &[], &settings),
            Err(StatsError::NoCompleteBlocks)
        );
    }

    #[test]
    fn block_pairs_keeps_complete_blocks_only() {
        let baseline = [(1, 2.0), (1, 8.0), (2, 3.0), (3, 5.0)];
        let candidate = [(1, 4.0), (1, 4.0), (2, 3.0), (2, 3.0), (4, 1.0)];
        let pairs = block_pairs(&baseline, &candidate);
        assert_eq!(pairs.blocks, vec![1]);
        assert!(
            (pairs.baseline[0] - 4.0).abs() < 1e-12,
            "geometric mean of 2 and 8"
        );
        assert!((pairs.candidate[0] - 4.0).abs() < 1e-12);
        // Block 2 (1 vs 2 runs), 3 (baseline only), 4 (candidate only).
        assert_eq!(pairs.dropped, 3);
    }
}
