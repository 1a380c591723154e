//! Normal-distribution helpers and the runs-per-cell planner.
//!
//! What it does: the standard normal CDF and quantile, the log-scale spread
//! of a coefficient of variation, and the number of runs per cell a two-sided
//! Mann–Whitney test needs to detect a relative shift. Must not: do I/O, or
//! pretend the planning formula is exact for non-lognormal noise (it is an
//! asymptotic approximation; simulate.rs checks it by Monte-Carlo).

/// Asymptotic relative efficiency of the Wilcoxon–Mann–Whitney test against
/// the t-test under normality, 3/π (Lehmann, *Nonparametrics*, 1975, §2.4).
pub const RANK_TEST_EFFICIENCY: f64 = 0.955;

/// Power every planner in verdict uses unless told otherwise (`verdict plan`,
/// `verdict doctor`), so their answers agree.
pub const DEFAULT_POWER: f64 = 0.9;

/// Standard normal CDF Φ(x).
///
/// Source: Φ(x) = erfc(−x/√2)/2 with musl's `erfc` (via the `libm` crate),
/// accurate to a few ulp including the far tails. Complexity O(1).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// Standard normal quantile Φ⁻¹(p) for p in (0, 1); −∞/+∞ at 0/1, NaN
/// outside [0, 1].
///
/// Source: P. J. Acklam's rational approximation (relative error 1.15e-9)
/// followed by one Halley step on `normal_cdf`, which brings it to full
/// double precision. Complexity O(1).
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const LOW: f64 = 0.02425;
    let x = if p < LOW {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // One Halley refinement (Acklam's note): e = Φ(x) − p, u = e·√(2π)·e^{x²/2}.
    let error = if p < 0.5 {
        normal_cdf(x) - p
    } else {
        // Work in the upper tail to avoid cancellation near 1.
        (1.0 - p) - normal_cdf(-x)
    };
    let u = error * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// Log-scale standard deviation σ = sqrt(ln(1 + cv²)) of a lognormal
/// variable with coefficient of variation `cv`.
///
/// Source: lognormal moments (Johnson, Kotz & Balakrishnan, *Continuous
/// Univariate Distributions* vol. 1, ch. 14). Complexity O(1).
pub fn log_sd_from_cv(cv: f64) -> f64 {
    (cv * cv).ln_1p().sqrt()
}

/// Runs per cell for a two-sided Mann–Whitney test at level `alpha` to
/// detect a relative shift `shift` (e.g. 0.02) with probability `power`,
/// under log-scale spread `log_sd` known exactly:
/// n ≈ 2(z₁₋α/₂ + z₁₋β)²(σ/ln(1+d))²/0.955, rounded up ([`runs_needed`]
/// for the rank test, without a range).
///
/// Source: two-sample normal-theory sample size (e.g. Chow, Shao & Wang,
/// *Sample Size Calculations in Clinical Research*, §3.2) divided by the
/// rank test's asymptotic relative efficiency 3/π (Lehmann 1975).
/// Returns `None` for a zero shift or non-finite/invalid inputs.
/// Complexity O(1).
pub fn runs_per_cell(log_sd: f64, shift: f64, alpha: f64, power: f64) -> Option<usize> {
    // On the log scale a relative shift is the absolute shift ln(1 + |shift|).
    runs_per_cell_absolute(log_sd, shift.abs().ln_1p(), alpha, power)
}

/// Runs per cell for a two-sided Mann–Whitney test at level `alpha` to
/// detect an absolute shift `difference` (in the metric's unit) with
/// probability `power`, under within-cell standard deviation `sd` (same
/// unit) known exactly: n ≈ 2(z₁₋α/₂ + z₁₋β)²(sd/difference)²/0.955,
/// rounded up — Noether's (1987, JASA 82:645) sample size for the
/// Wilcoxon–Mann–Whitney test in its normal-shift form, i.e. the
/// normal-theory size divided by the rank test's efficiency 3/π (Lehmann
/// 1975); [`runs_needed`] without a range. `None` for a zero difference or
/// invalid inputs. Complexity O(1).
pub fn runs_per_cell_absolute(sd: f64, difference: f64, alpha: f64, power: f64) -> Option<usize> {
    runs_needed(
        PlannedTest::RankTwoSample,
        Spread {
            sd,
            degrees: f64::INFINITY,
        },
        difference,
        alpha,
        power,
        0,
    )
    .map(|needed| needed.runs)
}

/// Coverage of the range printed with "N runs would tell": the N at the
/// 10% and 90% points of the spread's sampling distribution.
pub const RUNS_NEEDED_RANGE: f64 = 0.8;

/// A spread estimate (a standard deviation on the scale of the test) and
/// the degrees of freedom it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub sd: f64,
    pub degrees: f64,
}

/// The test that runs are planned for: each has its own size formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannedTest {
    /// Two independent samples, Mann–Whitney: 2(z₁₋α/₂ + z₁₋β)²(σ/δ)²/(3/π)
    /// per cell (Noether 1987).
    RankTwoSample,
    /// Block differences, signed-rank: (z₁₋α/₂ + z₁₋β)²(s_d/δ)²/(3/π)
    /// blocks (Noether 1987); `sd` is the differences' spread.
    SignedRank,
    /// Welch's t over boots: 2(z₁₋α/₂ + z₁₋β)²(s/δ)² + z₁₋α/₂²/4 boots per
    /// level (Guenther 1981).
    Welch,
}

/// How many runs (blocks, boots) per cell would detect a change of the
/// threshold: the estimate at the observed spread and the range from its
/// sampling uncertainty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunsNeeded {
    /// At the observed spread.
    pub runs: usize,
    /// At the lower and upper ends of the [`RUNS_NEEDED_RANGE`] interval of
    /// the spread (chi-square with the spread's degrees of freedom).
    pub low: usize,
    pub high: usize,
}

/// The one planner behind every "N runs would tell" (reports, `compare`,
/// `plan`, `doctor`): runs per cell (blocks, boots per level) for `test`
/// to detect a change `effect` on the test's scale (ln(1 + t) for a
/// relative threshold t, the threshold in the unit on the absolute scale)
/// at two-sided level `level` with probability `power`, under `spread`;
/// with the range at the ends of the 80% chi-square interval of the
/// spread, σ²·ν/χ²_{ν,0.9} to σ²·ν/χ²_{ν,0.1} (exact for normal
/// log values; Cochran 1934), since the sizes grow with σ². Every figure
/// is at least `floor` (the fewest per cell with which the test can reach
/// the level, or more than the data already have). Infinite degrees of
/// freedom give a range of one point. `None` for a spread that is not
/// finite or a zero effect. Complexity O(1) (two chi-square quantiles by
/// bisection).
pub fn runs_needed(
    test: PlannedTest,
    spread: Spread,
    effect: f64,
    level: f64,
    power: f64,
    floor: usize,
) -> Option<RunsNeeded> {
    let effect = effect.abs();
    let valid = spread.sd.is_finite()
        && spread.sd >= 0.0
        && spread.degrees > 0.0
        && effect.is_finite()
        && effect > 0.0
        && level > 0.0
        && level < 1.0
        && power > 0.0
        && power < 1.0;
    if !valid {
        return None;
    }
    let z_alpha = normal_quantile(1.0 - level / 2.0);
    let z_beta = normal_quantile(power);
    let size = |variance: f64| -> usize {
        let ratio = variance / (effect * effect);
        let runs = match test {
            PlannedTest::RankTwoSample => {
                2.0 * (z_alpha + z_beta).powi(2) * ratio / RANK_TEST_EFFICIENCY
            }
            PlannedTest::SignedRank => (z_alpha + z_beta).powi(2) * ratio / RANK_TEST_EFFICIENCY,
            PlannedTest::Welch => {
                2.0 * (z_alpha + z_beta).powi(2) * ratio + z_alpha * z_alpha / 4.0
            }
        };
        // At least 2 per cell: a test needs something to compare.
        (runs.ceil() as usize).max(2).max(floor)
    };
    let variance = spread.sd * spread.sd;
    let tail = (1.0 - RUNS_NEEDED_RANGE) / 2.0;
    let scaled = |probability: f64| {
        if spread.degrees.is_finite() {
            variance * spread.degrees / chi_square_quantile(probability, spread.degrees)
        } else {
            variance
        }
    };
    Some(RunsNeeded {
        runs: size(variance),
        low: size(scaled(1.0 - tail)),
        high: size(scaled(tail)),
    })
}

/// P(χ²_ν ≤ x): the regularized lower incomplete gamma P(ν/2, x/2), by its
/// series below a + 1 and its continued fraction above (Numerical Recipes,
/// 3rd ed., §6.2). Relative accuracy ~1e-14. Complexity O(iterations ≤ 500).
pub fn chi_square_cdf(x: f64, degrees: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let (a, x) = (degrees / 2.0, x / 2.0);
    let log_front = a * x.ln() - x - libm::lgamma(a);
    if x < a + 1.0 {
        let (mut term, mut sum, mut denominator) = (1.0 / a, 1.0 / a, a);
        for _ in 0..500 {
            denominator += 1.0;
            term *= x / denominator;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        (sum * log_front.exp()).min(1.0)
    } else {
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut result = d;
        for step in 1..500 {
            let an = -(step as f64) * (step as f64 - a);
            b += 2.0;
            d = an * d + b;
            d = if d.abs() < TINY { TINY } else { d };
            c = b + an / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            let delta = d * c;
            result *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (1.0 - log_front.exp() * result).max(0.0)
    }
}

/// The quantile of χ²_ν at `probability` in (0, 1), by bisection on
/// [`chi_square_cdf`] to full double precision. O(log) evaluations.
pub fn chi_square_quantile(probability: f64, degrees: f64) -> f64 {
    if !(probability > 0.0 && probability < 1.0 && degrees > 0.0) {
        return f64::NAN;
    }
    let mut high = degrees.max(1.0);
    while chi_square_cdf(high, degrees) < probability {
        high *= 2.0;
    }
    let mut low = 0.0f64;
    for _ in 0..2000 {
        let middle = low + (high - low) / 2.0;
        if middle <= low || middle >= high {
            break;
        }
        if chi_square_cdf(middle, degrees) < probability {
            low = middle;
        } else {
            high = middle;
        }
    }
    low + (high - low) / 2.0
}

/// Fewest values [`neighbour_correlation`] estimates from.
pub const NEIGHBOUR_MIN_VALUES: usize = 10;

/// Correlation of the logs of consecutive values of a time series (the
/// lag-1 sample autocorrelation r₁ = Σ(xₜ − x̄)(xₜ₊₁ − x̄) / Σ(xₜ − x̄)², Box,
/// Jenkins & Reinsel, *Time Series Analysis*, 4th ed. 2008, §2.1.4), for
/// planning the block-paired design: two runs measured in the same
/// interleaved block are consecutive runs of the machine, so on a machine
/// whose state drifts or is autocorrelated their log values correlate about
/// as consecutive runs of one workload do (a series from `verdict doctor`'s
/// probe, for example). Clamped to [0, 0.99]: a negative estimate (noise,
/// or r₁'s −1/n bias) plans as independent noise, and a perfect correlation
/// would plan zero runs. `None` below [`NEIGHBOUR_MIN_VALUES`] values, for
/// a value that is not positive and finite, or when every value is equal.
/// Complexity O(n).
pub fn neighbour_correlation(values: &[f64]) -> Option<f64> {
    if values.len() < NEIGHBOUR_MIN_VALUES
        || values
            .iter()
            .any(|value| !(value.is_finite() && *value > 0.0))
    {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|value| value.ln()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    let squares: f64 = logs.iter().map(|log| (log - mean).powi(2)).sum();
    if squares <= 0.0 {
        return None;
    }
    let lagged: f64 = logs
        .windows(2)
        .map(|pair| (pair[0] - mean) * (pair[1] - mean))
        .sum();
    Some((lagged / squares).clamp(0.0, 0.99))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_matches_known_values() {
        // Reference values from tables (Abramowitz & Stegun 26.2).
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
        assert!((normal_quantile(0.8) - 0.841_621_233_572_914_3).abs() < 1e-14);
        assert!((normal_quantile(1e-10) + 6.361_340_902_404_056).abs() < 1e-11);
        assert_eq!(normal_quantile(0.5), 0.0);
    }

    #[test]
    fn quantile_inverts_cdf() {
        for step in 1..1000 {
            let p = step as f64 / 1000.0;
            assert!((normal_cdf(normal_quantile(p)) - p).abs() < 1e-15, "p={p}");
        }
    }

    #[test]
    fn runs_per_cell_for_story_one() {
        // 30% CV, detect ±2% at α=0.05 with 80% power: thousands of runs.
        let sd = log_sd_from_cv(0.30);
        let runs = runs_per_cell(sd, 0.02, 0.05, 0.8).unwrap();
        // 2·(1.95996+0.84162)²·(0.29356/0.0198026)²/0.955 = 3612.3 -> 3613.
        assert_eq!(runs, 3613);
        assert_eq!(runs_per_cell(sd, 0.0, 0.05, 0.8), None);
    }

    #[test]
    fn chi_square_quantiles_match_scipy() {
        // scipy.stats.chi2.ppf (scipy 1.17.1).
        let quantiles = [
            (0.1, 2.0, 0.210_721_031_315_652_73),
            (0.9, 2.0, 4.605_170_185_988_092),
            (0.1, 38.0, 27.342_950_042_242_85),
            (0.9, 38.0, 49.512_579_826_575_56),
            (0.5, 1.0, 0.454_936_423_119_572),
            (0.9, 0.5, 1.500_785_744_473_673_2),
            (0.1, 1.0, 0.015_790_774_093_431_22),
            (0.999, 7.0, 24.321_886_347_856_854),
        ];
        for (probability, degrees, want) in quantiles {
            let got = chi_square_quantile(probability, degrees);
            assert!(
                (got - want).abs() <= 1e-10 * want,
                "{probability} {degrees}: {got}"
            );
        }
    }

    #[test]
    fn runs_needed_ranges_over_the_spread_uncertainty() {
        let sd = log_sd_from_cv(0.30);
        let effect = 0.02f64.ln_1p();
        let point = runs_per_cell(sd, 0.02, 0.05, 0.8).unwrap();
        let needed = |degrees: f64, floor: usize| {
            runs_needed(
                PlannedTest::RankTwoSample,
                Spread { sd, degrees },
                effect,
                0.05,
                0.8,
                floor,
            )
            .unwrap()
        };
        // The estimate is the two-sample planner's; the range brackets it,
        // and narrows as the spread rests on more degrees of freedom.
        let few = needed(2.0, 0);
        assert_eq!(few.runs, point);
        assert!(few.low < point && few.high > 4 * point, "{few:?}");
        let many = needed(1000.0, 0);
        assert!(
            many.low > point * 9 / 10 && many.high < point * 11 / 10,
            "{many:?}"
        );
        assert_eq!(needed(f64::INFINITY, 0).low, point);
        // The floor holds for every figure.
        assert!(needed(2.0, 5000).low >= 5000);
        // Guenther's term for the t test: a zero spread still needs 2 + z²/4.
        let welch = runs_needed(
            PlannedTest::Welch,
            Spread {
                sd: 0.0,
                degrees: 2.0,
            },
            effect,
            0.05,
            0.8,
            0,
        )
        .unwrap();
        assert_eq!(welch.runs, 2);
    }

    #[test]
    fn neighbour_correlation_reads_autocorrelated_noise() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut normal = || {
            let radius = (-2.0 * (1.0 - rng.random::<f64>()).ln()).sqrt();
            radius * (std::f64::consts::TAU * rng.random::<f64>()).cos()
        };
        // AR(1) with phi 0.8 on the log scale: r1 near 0.8.
        let mut state = 0.0;
        let series: Vec<f64> = (0..2000)
            .map(|_| {
                state = 0.8 * state + 0.6 * normal();
                (0.1 * state).exp()
            })
            .collect();
        let correlated = neighbour_correlation(&series).unwrap();
        assert!((correlated - 0.8).abs() < 0.05, "{correlated}");
        // Independent noise: near 0 (clamped at 0 when negative).
        let independent: Vec<f64> = (0..2000).map(|_| (0.1 * normal()).exp()).collect();
        assert!(neighbour_correlation(&independent).unwrap() < 0.06);
        // Alternating values: negative r1, planned as independent.
        let alternating: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1.0 } else { 2.0 })
            .collect();
        assert_eq!(neighbour_correlation(&alternating), Some(0.0));
        assert_eq!(neighbour_correlation(&[1.0; 20]), None);
        assert_eq!(neighbour_correlation(&[1.0, 2.0, 3.0]), None);
        assert_eq!(
            neighbour_correlation(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, -1.0]),
            None
        );
    }
}
