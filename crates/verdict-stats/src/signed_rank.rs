//! The Wilcoxon signed-rank test with ties and zeros handled by one rule,
//! and the interval that inverts that same test, so that the paired
//! analysis's p-value and interval cannot disagree.
//!
//! What it does: the test of "the differences are symmetric about δ" ranks
//! |d − δ| with midranks for ties and keeps the zeros in the ranking
//! (Pratt 1959: a zero takes its rank among the |d − δ| and carries no
//! sign), and compares T⁺ (the ranks of the positive d − δ) with its null
//! distribution *conditional on those ranks*: each non-zero rank is added
//! with probability ½, independently (the sign-flip permutation
//! distribution; exact whatever the ties, Hollander, Wolfe & Chicken
//! 2014, §3.1, comments on ties and zeros). Exact by dynamic programming
//! over the doubled midranks up to [`EXACT_LIMIT`] differences, else the
//! normal approximation with that distribution's mean Σr/2 and variance
//! Σr²/4 (the tie-corrected and zero-corrected variance of Pratt's test,
//! as scipy's `wilcoxon(zero_method="pratt")`) and a continuity correction.
//! The interval is the set of δ this test does not reject (Lehmann &
//! Romano, *Testing Statistical Hypotheses*, §3.5). T⁺ plus a constant is
//! #{Walsh averages > δ} + ½·#{= δ} (Pratt's ranks with the zeros' split
//! ranks), so the test changes only at the Walsh averages (d_i + d_j)/2:
//! it is evaluated at each distinct average and in each gap, walking out
//! from the untied interval's ends (`tied::invert`). The reported p-value
//! is the test at δ = 0, so p < α exactly when the interval excludes 0.
//!
//! Why Pratt and not Wilcoxon's dropped zeros: dropping the zeros makes
//! the statistic jump as δ crosses a difference (a value leaves the
//! ranking), so its acceptance set is not the Walsh-average interval and
//! the printed interval and test disagreed (9.5% of random integer
//! datasets with ties or zeros, issue 29). Without ties or zeros the test
//! is the classical exact signed-rank test and the interval Tukey's.
//!
//! Must not: do I/O, list more than [`WALSH_LIMIT`] Walsh averages or
//! evaluate the test more than `tied::EVALUATION_LIMIT` times (the caller
//! then keeps the untied interval).
//! Complexity: O(n log n) per test plus O(n·Σr) = O(n³) when exact; the
//! inversion O(n² log n) to list the Walsh averages plus a few dozen tests.

use crate::paired::{EXACT_LIMIT, SignedRankTest};
use crate::plan::normal_cdf;
use crate::shift::Interval;
use crate::tied::{Points, invert};

/// Most Walsh averages the inversion lists (2,000 blocks: 2,001,000).
pub(crate) const WALSH_LIMIT: usize = 2_001_000;

/// The signed-rank test of differences shifted by some δ: the doubled
/// Pratt midranks of the non-zero values and T⁺ (doubled).
struct Ranked {
    /// 2 × the midrank of each non-zero |d − δ| among all |d − δ|.
    scores: Vec<u64>,
    /// 2 × T⁺: the doubled ranks of the positive d − δ.
    positive: u64,
    /// Some |d − δ| tie or some d − δ is zero.
    tied: bool,
}

fn rank(differences: &[f64], shift: f64) -> Ranked {
    let mut shifted: Vec<f64> = differences.iter().map(|value| value - shift).collect();
    shifted.sort_by(|first, second| first.abs().total_cmp(&second.abs()));
    let count = shifted.len();
    let mut ranked = Ranked {
        scores: Vec::with_capacity(count),
        positive: 0,
        tied: false,
    };
    let mut start = 0;
    while start < count {
        let mut end = start + 1;
        while end < count && shifted[end].abs() == shifted[start].abs() {
            end += 1;
        }
        // Ranks start + 1 ..= end: the doubled midrank is start + 1 + end.
        let doubled = (start + 1 + end) as u64;
        ranked.tied |= end - start > 1 || shifted[start] == 0.0;
        if shifted[start] != 0.0 {
            for value in &shifted[start..end] {
                ranked.scores.push(doubled);
                if *value > 0.0 {
                    ranked.positive += doubled;
                }
            }
        }
        start = end;
    }
    ranked
}

/// Two-sided p-value 2·min(P(T⁺ ≤ t), P(T⁺ ≥ t)) under the conditional
/// null of `ranked` (capped at 1; 1 with no non-zero difference), and
/// whether it is exact.
fn p_value(ranked: &Ranked, count: usize) -> (f64, bool) {
    if ranked.scores.is_empty() {
        return (1.0, false);
    }
    let total: u64 = ranked.scores.iter().sum();
    if count <= EXACT_LIMIT {
        let mut probability = vec![0.0f64; total as usize + 1];
        probability[0] = 1.0;
        let mut reached = 0usize;
        for &score in &ranked.scores {
            let score = score as usize;
            reached += score;
            for sum in (0..=reached).rev() {
                let with = if sum >= score {
                    probability[sum - score]
                } else {
                    0.0
                };
                probability[sum] = (probability[sum] + with) / 2.0;
            }
        }
        let statistic = ranked.positive as usize;
        let lower: f64 = probability[..=statistic].iter().sum();
        let upper: f64 = probability[statistic..].iter().sum();
        return ((2.0 * lower.min(upper)).min(1.0), true);
    }
    // Doubled units: mean Σs/2, variance Σs²/4, continuity correction ½
    // of a rank = 1 doubled unit.
    let mean = total as f64 / 2.0;
    let variance: f64 = ranked
        .scores
        .iter()
        .map(|&score| (score as f64) * (score as f64))
        .sum::<f64>()
        / 4.0;
    let distance = ((ranked.positive as f64 - mean).abs() - 1.0).max(0.0);
    // The upper tail as Φ(−z): no cancellation for small p.
    (
        (2.0 * normal_cdf(-distance / variance.sqrt())).min(1.0),
        false,
    )
}

/// The signed-rank test of `differences − shift` (see the module
/// documentation; the exact conditional distribution up to
/// [`EXACT_LIMIT`] differences, zeros included), and whether some
/// |d − δ| tie or some d − δ is zero. O(n log n), plus O(n³) when exact.
pub(crate) fn test_at(differences: &[f64], shift: f64) -> (SignedRankTest, bool) {
    let ranked = rank(differences, shift);
    let (p_value, exact) = p_value(&ranked, differences.len());
    (
        SignedRankTest {
            positive_rank_sum: ranked.positive as f64 / 2.0,
            ranked: ranked.scores.len(),
            p_value,
            exact,
        },
        ranked.tied,
    )
}

/// The 1 − `level` interval of the centre of `differences` (mapped by
/// `back`) that inverts [`test_at`], for differences with ties or zeros:
/// the shifts whose p-value is not below `level`. `Some(None)` when the
/// test accepts every shift (too few differences); `None` (gives up)
/// beyond [`WALSH_LIMIT`] Walsh averages or the evaluation limit, or when
/// no shift is accepted near the untied ends.
pub(crate) fn inverted_interval(
    differences: &[f64],
    level: f64,
    back: fn(f64) -> f64,
) -> Option<Option<Interval>> {
    let count = differences.len();
    if count == 0 || count * (count + 1) / 2 > WALSH_LIMIT {
        return None;
    }
    let mut walsh = Vec::with_capacity(count * (count + 1) / 2);
    for first in 0..count {
        for second in first..count {
            walsh.push((differences[first] + differences[second]) / 2.0);
        }
    }
    walsh.sort_unstable_by(f64::total_cmp);
    let with_multiplicity = walsh.clone();
    walsh.dedup();
    let points = Points::new(&walsh);
    let starts = match crate::paired::critical_count(count, level / 2.0) {
        Some((critical, _)) => (
            points.point_of(with_multiplicity[critical]),
            points.point_of(with_multiplicity[with_multiplicity.len() - 1 - critical]),
        ),
        None => (1, points.last().saturating_sub(1)),
    };
    let mean_of = |ranked: &Ranked| ranked.scores.iter().sum::<u64>() as f64 / 2.0;
    // Accepted when p ≥ level; a larger shift is needed while T⁺ is above
    // its null mean (most of d − δ still positive).
    let ends = invert(&points, starts, |point| {
        let ranked = rank(differences, points.shift(point));
        let (p, _) = p_value(&ranked, count);
        (p >= level, ranked.positive as f64 > mean_of(&ranked))
    })?;
    Some(ends.map(|(low, high)| Interval {
        low: back(low),
        high: back(high),
        confidence: 1.0 - level,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sign pattern of the non-zero differences, by brute force: the
    /// conditional null distribution the exact p-value must equal.
    fn brute_force_p(differences: &[f64]) -> f64 {
        let ranked = rank(differences, 0.0);
        let scores = &ranked.scores;
        let (mut lower, mut upper) = (0u64, 0u64);
        for pattern in 0u64..1 << scores.len() {
            let sum: u64 = scores
                .iter()
                .enumerate()
                .filter(|(index, _)| pattern >> index & 1 == 1)
                .map(|(_, score)| score)
                .sum();
            lower += u64::from(sum <= ranked.positive);
            upper += u64::from(sum >= ranked.positive);
        }
        let patterns = (1u64 << scores.len()) as f64;
        (2.0 * lower.min(upper) as f64 / patterns).min(1.0)
    }

    #[test]
    fn exact_conditional_distribution_matches_enumeration() {
        let cases: [&[f64]; 5] = [
            &[2.0, 2.0, 2.0, 1.0, -1.0, 3.0, 0.0],
            &[0.0, 0.0, 1.0, 1.0, -1.0, 2.0, 2.0, -2.0, 3.0],
            &[1.0, 2.0, 3.0, 4.0, 5.0, -6.0],
            &[-1.0, -1.0, -1.0, -1.0, 1.0],
            &[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        ];
        for differences in cases {
            let (test, _) = test_at(differences, 0.0);
            let (p, exact) = (test.p_value, test.exact);
            assert!(exact);
            let want = brute_force_p(differences);
            assert!((p - want).abs() < 1e-12, "{differences:?}: {p} vs {want}");
        }
    }

    #[test]
    fn zeros_keep_their_ranks() {
        // Pratt: the zero takes rank 1, the others 2 and 3.
        let ranked = rank(&[0.0, 1.0, -2.0], 0.0);
        assert_eq!(ranked.scores, vec![4, 6]);
        assert_eq!(ranked.positive, 4);
        assert!(ranked.tied);
        let untied = rank(&[0.5, 1.0, -2.0], 0.0);
        assert_eq!(untied.scores, vec![2, 4, 6]);
        assert!(!untied.tied);
    }
}
