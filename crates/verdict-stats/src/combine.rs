//! Combining one comparison's evidence across independent strata (hosts):
//! the weighted Z-method, and the size of the change across them, the
//! stratified Hodges–Lehmann shift with its interval ([`stratified_shift`]).
//!
//! Each host gives a one-sided p-value for "the candidate is worse than the
//! baseline" from its own within-host test; the combined statistic is
//! Z = Σ wᵢ·Φ⁻¹(1 − pᵢ) / √(Σ wᵢ²) with wᵢ = √nᵢ, and the combined p is
//! 1 − Φ(Z). Samples are never pooled across hosts, so a host that is
//! faster overall cannot mask or fake a change on another.
//!
//! Sources: Stouffer, Suchman, DeVinney, Star & Williams (1949), *The
//! American Soldier* Vol. 1 (the unweighted Z-method); Lipták (1958), Publ.
//! Math. Inst. Hungar. Acad. Sci. 3:171 (weights); Whitlock (2005), J. Evol.
//! Biol. 18:1368 (weighted Z preferred to Fisher's method, √n weights);
//! Zaykin (2011), J. Evol. Biol. 24:1836 (√n as the optimal weights for
//! equal effect sizes). The one-sided p from a two-sided rank test halves it
//! on the observed side, valid because the Mann–Whitney null distribution is
//! symmetric (Hollander & Wolfe 1999, §4.1).
//!
//! Pure: no I/O.

use crate::plan::{normal_cdf, normal_quantile};
use crate::shift::{Interval, Shift};

/// One host's evidence: its one-sided p-value and its weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stratum {
    /// P(at least this much worsening | no change), in (0, 1].
    pub one_sided_p: f64,
    /// Weight, usually √(n_baseline + n_candidate).
    pub weight: f64,
}

/// The one-sided p-value for "worse" from a two-sided p-value and the side
/// the estimate fell on (`worse` = the candidate looked worse).
pub fn one_sided(two_sided_p: f64, worse: bool) -> f64 {
    let half = (two_sided_p / 2.0).clamp(0.0, 0.5);
    if worse { half } else { 1.0 - half }
}

/// Weighted Z-method: the combined one-sided p-value; 1 when there is no
/// stratum with positive weight.
pub fn weighted_z(strata: &[Stratum]) -> f64 {
    // Keep p away from 0 and 1 so a degenerate stratum (p = 0) gives a large
    // finite Z rather than an infinity that swamps the others.
    const FLOOR: f64 = 1e-15;
    let mut numerator = 0.0;
    let mut squares = 0.0;
    for stratum in strata.iter().filter(|stratum| stratum.weight > 0.0) {
        let p = stratum.one_sided_p.clamp(FLOOR, 1.0 - FLOOR);
        numerator += stratum.weight * normal_quantile(1.0 - p);
        squares += stratum.weight * stratum.weight;
    }
    if squares == 0.0 {
        return 1.0;
    }
    1.0 - normal_cdf(numerator / squares.sqrt())
}

/// The most pairwise differences [`stratified_shift`] sorts (4 million
/// pairs, 64 MiB): above it no combined size is given.
pub const STRATIFIED_PAIRS_LIMIT: usize = 4_000_000;

/// The change of candidate against baseline across strata (hosts) as one
/// size: the Hodges–Lehmann estimate that goes with van Elteren's
/// stratified Wilcoxon test, `C/B − 1` on log values, with the interval
/// from inverting that test. Each stratum is compared within itself: its
/// pairwise log differences `log c − log b` carry the weight
/// wᵢ = 1/(nᵢ + mᵢ + 1) (van Elteren's locally most powerful weights);
/// the estimate is the weighted median of all of them (where the
/// stratified statistic T(Δ) = Σ wᵢ·#{differences > Δ} equals its null
/// mean W/2, W = Σ wᵢ·nᵢ·mᵢ), and the ends of the interval are the
/// weighted quantiles at W/2 ∓ z·σ, σ² = Σ wᵢ²·nᵢmᵢ(nᵢ + mᵢ + 1)/12 (the
/// normal approximation to T, no tie correction). With one stratum it is
/// the ordinary Hodges–Lehmann estimate. Samples are never pooled: a
/// host that is faster overall moves no other host's differences.
///
/// Sources: Hodges & Lehmann (1963), Ann. Math. Statist. 34:598
/// (estimates from rank tests); van Elteren (1960), Bull. Int. Statist.
/// Inst. 37:351 (the stratified Wilcoxon statistic and its weights);
/// Lehmann (1975), *Nonparametrics*, §3.3 (combining 2×n tables by the
/// stratified rank sum, its estimate and interval).
///
/// `strata` holds (baseline, candidate) per stratum; a stratum with an
/// empty side is left out. `None` when none is left, a value is not
/// finite and positive, or the strata have more than
/// [`STRATIFIED_PAIRS_LIMIT`] pairs. The interval is `None` when the
/// strata are too small for `confidence`. Complexity O(N log N) time and
/// O(N) memory, N = Σ nᵢ·mᵢ.
pub fn stratified_shift(strata: &[(&[f64], &[f64])], confidence: f64) -> Option<Shift> {
    let valid = |value: &f64| value.is_finite() && *value > 0.0;
    let used: Vec<&(&[f64], &[f64])> = strata
        .iter()
        .filter(|(baseline, candidate)| !baseline.is_empty() && !candidate.is_empty())
        .collect();
    let pairs: usize = used
        .iter()
        .map(|(baseline, candidate)| baseline.len() * candidate.len())
        .sum();
    if used.is_empty()
        || pairs > STRATIFIED_PAIRS_LIMIT
        || !used
            .iter()
            .all(|(baseline, candidate)| baseline.iter().chain(*candidate).all(valid))
    {
        return None;
    }
    let mut weighted: Vec<(f64, f64)> = Vec::with_capacity(pairs);
    let mut total = 0.0;
    let mut variance = 0.0;
    for (baseline, candidate) in &used {
        let (n, m) = (baseline.len() as f64, candidate.len() as f64);
        let weight = 1.0 / (n + m + 1.0);
        for b in baseline.iter() {
            let log_b = b.ln();
            weighted.extend(candidate.iter().map(|c| (c.ln() - log_b, weight)));
        }
        total += weight * n * m;
        variance += weight * weight * n * m * (n + m + 1.0) / 12.0;
    }
    weighted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = total / 2.0;
    let estimate = weighted_median(&weighted, half);
    let interval = (confidence > 0.0 && confidence < 1.0)
        .then(|| normal_quantile(1.0 - (1.0 - confidence) / 2.0) * variance.sqrt())
        .filter(|&reach| half - reach > 0.0)
        .map(|reach| Interval {
            low: weighted_quantile(&weighted, half - reach).exp_m1(),
            high: weighted_quantile(&weighted, half + reach).exp_m1(),
            confidence,
        });
    Some(Shift {
        estimate: estimate.exp_m1(),
        interval,
    })
}

/// The smallest value whose cumulative weight (ascending) reaches `level`.
fn weighted_quantile(sorted: &[(f64, f64)], level: f64) -> f64 {
    let tolerance = 1e-9 * level.abs().max(1.0);
    let mut cumulative = 0.0;
    for (value, weight) in sorted {
        cumulative += weight;
        if cumulative >= level - tolerance {
            return *value;
        }
    }
    sorted.last().map_or(0.0, |(value, _)| *value)
}

/// The weighted median: the midpoint of the two values around `half` when
/// the cumulative weight lands on it exactly (as the ordinary median of an
/// even count), else the value where it is passed.
fn weighted_median(sorted: &[(f64, f64)], half: f64) -> f64 {
    let tolerance = 1e-9 * half.abs().max(1.0);
    let mut cumulative = 0.0;
    for (index, (value, weight)) in sorted.iter().enumerate() {
        cumulative += weight;
        if (cumulative - half).abs() <= tolerance {
            let next = sorted.get(index + 1).map_or(*value, |(next, _)| *next);
            return (value + next) / 2.0;
        }
        if cumulative > half {
            return *value;
        }
    }
    sorted.last().map_or(0.0, |(value, _)| *value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn one_sided_halves_on_the_observed_side() {
        assert!(close(one_sided(0.04, true), 0.02));
        assert!(close(one_sided(0.04, false), 0.98));
        assert!(close(one_sided(1.0, true), 0.5));
    }

    #[test]
    fn equal_weights_match_stouffers_formula() {
        // Two strata at p = 0.05: Z = 2 · 1.6449 / √2 = 2.3262, p = 0.01.
        let strata = [
            Stratum {
                one_sided_p: 0.05,
                weight: 1.0,
            },
            Stratum {
                one_sided_p: 0.05,
                weight: 1.0,
            },
        ];
        assert!((weighted_z(&strata) - 0.010_003).abs() < 1e-5);
        // One stratum is itself.
        assert!(close(weighted_z(&strata[..1]), 0.05));
    }

    #[test]
    fn opposite_evidence_cancels_and_weights_count() {
        let even = [
            Stratum {
                one_sided_p: 0.01,
                weight: 1.0,
            },
            Stratum {
                one_sided_p: 0.99,
                weight: 1.0,
            },
        ];
        assert!(close(weighted_z(&even), 0.5));
        let heavy = [
            Stratum {
                one_sided_p: 0.01,
                weight: 3.0,
            },
            Stratum {
                one_sided_p: 0.99,
                weight: 1.0,
            },
        ];
        // Z = (3 − 1) · 2.3263 / √10 = 1.4713: p = 0.0706.
        assert!((weighted_z(&heavy) - 0.070_6).abs() < 1e-3);
        assert_eq!(weighted_z(&[]), 1.0);
        let certain = [Stratum {
            one_sided_p: 0.0,
            weight: 1.0,
        }];
        assert!(weighted_z(&certain) < 1e-10);
    }

    /// The reference: the van Elteren statistic counted directly, T(Δ) =
    /// Σ wᵢ·(#{d > Δ} + ½·#{d = Δ}) over every pairwise log difference,
    /// and the estimate and interval found by scanning the candidate Δ
    /// (every difference and every midpoint) for where T crosses its null
    /// mean and mean ± z·σ: an independent inversion of the test.
    fn reference(strata: &[(&[f64], &[f64])], confidence: f64) -> (f64, f64, f64) {
        let differences: Vec<Vec<f64>> = strata
            .iter()
            .map(|(b, c)| {
                b.iter()
                    .flat_map(|x| c.iter().map(move |y| y.ln() - x.ln()))
                    .collect()
            })
            .collect();
        let weights: Vec<f64> = strata
            .iter()
            .map(|(b, c)| 1.0 / (b.len() + c.len() + 1) as f64)
            .collect();
        let statistic = |delta: f64| -> f64 {
            differences
                .iter()
                .zip(&weights)
                .map(|(list, weight)| {
                    weight
                        * list
                            .iter()
                            .map(|d| {
                                if *d > delta + 1e-12 {
                                    1.0
                                } else if (*d - delta).abs() <= 1e-12 {
                                    0.5
                                } else {
                                    0.0
                                }
                            })
                            .sum::<f64>()
                })
                .sum()
        };
        let mean: f64 = strata
            .iter()
            .zip(&weights)
            .map(|((b, c), w)| w * (b.len() * c.len()) as f64 / 2.0)
            .sum();
        let sigma: f64 = strata
            .iter()
            .zip(&weights)
            .map(|((b, c), w)| {
                let (n, m) = (b.len() as f64, c.len() as f64);
                w * w * n * m * (n + m + 1.0) / 12.0
            })
            .sum::<f64>()
            .sqrt();
        let reach = normal_quantile(1.0 - (1.0 - confidence) / 2.0) * sigma;
        let mut candidates: Vec<f64> = differences.concat();
        candidates.sort_by(f64::total_cmp);
        candidates.dedup();
        // The estimate: the midpoint of the Δ where T falls through its mean.
        let below = candidates
            .iter()
            .copied()
            .filter(|delta| statistic(*delta - 1e-9) >= mean - 1e-9)
            .fold(f64::MIN, f64::max);
        let above = candidates
            .iter()
            .copied()
            .filter(|delta| statistic(*delta + 1e-9) <= mean + 1e-9)
            .fold(f64::MAX, f64::min);
        // The interval: every Δ the test at mean ± reach does not reject.
        let kept: Vec<f64> = candidates
            .iter()
            .copied()
            .filter(|delta| {
                statistic(*delta - 1e-9) >= mean - reach - 1e-9
                    && statistic(*delta + 1e-9) <= mean + reach + 1e-9
            })
            .collect();
        (
            (below + above) / 2.0,
            kept.first().copied().unwrap_or(f64::NAN),
            kept.last().copied().unwrap_or(f64::NAN),
        )
    }

    fn sample(seed: u64, n: usize, scale: f64) -> Vec<f64> {
        // A small deterministic generator (no dependency on the test order).
        let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                scale * (1.0 + ((state >> 11) as f64 / (1u64 << 53) as f64))
            })
            .collect()
    }

    #[test]
    fn the_stratified_shift_inverts_van_elterens_test() {
        // Two hosts of different speed and size; the candidate 10% slower
        // on both.
        let fast_b = sample(1, 9, 1.0);
        let fast_c: Vec<f64> = sample(2, 7, 1.0).iter().map(|v| v * 1.1).collect();
        let slow_b = sample(3, 12, 5.0);
        let slow_c: Vec<f64> = sample(4, 11, 5.0).iter().map(|v| v * 1.1).collect();
        let strata: [(&[f64], &[f64]); 2] = [(&fast_b, &fast_c), (&slow_b, &slow_c)];
        let shift = stratified_shift(&strata, 0.95).unwrap();
        let (estimate, low, high) = reference(&strata, 0.95);
        assert!(
            (shift.estimate - estimate.exp_m1()).abs() < 1e-9,
            "{shift:?} {estimate}"
        );
        let interval = shift.interval.unwrap();
        assert!(
            (interval.low - low.exp_m1()).abs() < 1e-9,
            "{interval:?} {low}"
        );
        assert!(
            (interval.high - high.exp_m1()).abs() < 1e-9,
            "{interval:?} {high}"
        );
        assert!(interval.low < shift.estimate && shift.estimate < interval.high);
    }

    #[test]
    fn one_stratum_is_the_ordinary_hodges_lehmann_estimate() {
        for (n, m) in [(8, 8), (7, 10), (30, 25)] {
            let baseline = sample(n as u64, n, 2.0);
            let candidate = sample(100 + m as u64, m, 2.2);
            let ordinary = crate::shift::relative_shift(&baseline, &candidate, 0.95).unwrap();
            let stratified = stratified_shift(&[(&baseline, &candidate)], 0.95).unwrap();
            assert!(
                (ordinary.estimate - stratified.estimate).abs() < 1e-12,
                "{n}x{m}: {ordinary:?} {stratified:?}"
            );
        }
    }

    #[test]
    fn empty_invalid_and_tiny_strata() {
        assert_eq!(stratified_shift(&[], 0.95), None);
        assert_eq!(stratified_shift(&[(&[1.0], &[])], 0.95), None);
        assert_eq!(stratified_shift(&[(&[1.0, 0.0], &[1.0])], 0.95), None);
        // 2 vs 2 cannot reach 95%: an estimate, no interval.
        let shift = stratified_shift(&[(&[1.0, 1.1], &[2.0, 2.1])], 0.95).unwrap();
        assert!(shift.interval.is_none());
        assert!(shift.estimate > 0.8);
    }
}
