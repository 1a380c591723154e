//! Operating characteristics of the adaptive design without simulation: the
//! probability of each verdict and the distribution of runs per arm at the
//! stop, by numerical integration under normal theory, at a cost that does
//! not depend on how many runs the design needs.
//!
//! What it does: models the log-scale Hodges–Lehmann shift after n runs per
//! arm as θ̂ₙ ~ N(θ, 2σ²/(e·n)), e = 3/π the rank procedure's asymptotic
//! relative efficiency (Lehmann 1975, §2.4; the same model as
//! `crate::plan::runs_per_cell`), so the score Sₙ = θ̂ₙ·Iₙ, Iₙ = e·n/(2σ²),
//! has independent N(θ·ΔI, ΔI) increments (Jennison & Turnbull 2000, §3.1).
//! At look k the repeated confidence interval is θ̂ₖ ± cₖ/√Iₖ; the design
//! stops with a change when |Sₖ| ≥ cₖ√Iₖ and with "equivalent" when the
//! interval lies inside (ln(1 − t), ln(1 + t)). The sub-density of Sₖ on the
//! continuation region is carried from look to look by the recursive
//! integration of Armitage, McPherson & Rowe (1969, JRSS A 132:235) as laid
//! out in Jennison & Turnbull (2000, ch. 19): Simpson's rule on grids of
//! step ≤ 1/8 of the increment's standard deviation, exit probabilities
//! from the normal CDF. Looks where the exact rank interval cannot reach the
//! look's confidence (`crate::shift::interval_rank`, small n) cannot stop,
//! as in the real procedure.
//!
//! Cost independent of the cap: a design with more than
//! [`MAX_EVALUATED_LOOKS`] looks is evaluated at that many looks spread over
//! the same information range with the same Lan–DeMets spending function
//! (whose error rate does not depend on the number or timing of looks, Lan
//! & DeMets 1983). Fewer looks stop a little later on average (by at most
//! the spacing between evaluated looks) and p95 is rounded up to an
//! evaluated look; `tests/plan_analytic.rs` compares the figures with
//! `crate::simulate` where simulation is affordable. O(K·G·145) for K ≤ 200
//! looks and grids of G ≤ ~600 points: well under a second.
//!
//! Must not: do I/O, or claim exactness (normal theory with the rank test's
//! efficiency; the Monte-Carlo in `crate::simulate` is the reference).

use serde::Serialize;

use super::{Better, SequentialError, SequentialSettings, boundaries};
use crate::plan::{RANK_TEST_EFFICIENCY, log_sd_from_cv, normal_cdf};

/// Most looks the integration evaluates; designs with more looks are
/// evaluated at this many (see the module documentation).
pub const MAX_EVALUATED_LOOKS: usize = 200;

/// What the adaptive design does under one true change, by integration.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OperatingCharacteristics {
    /// True relative change C/B − 1 assumed.
    pub change: f64,
    /// Probability of stopping with "regression".
    pub regression: f64,
    /// Probability of stopping with "improvement".
    pub improvement: f64,
    /// Probability of stopping with "equivalent".
    pub equivalent: f64,
    /// Probability of reaching the cap undecided.
    pub undecided: f64,
    /// Expected runs per arm at the stop.
    pub mean_runs: f64,
    /// 95th percentile of runs per arm at the stop (rounded up to an
    /// evaluated look).
    pub p95_runs: usize,
    /// Looks evaluated (the design's looks, or [`MAX_EVALUATED_LOOKS`]).
    pub looks_evaluated: usize,
}

impl OperatingCharacteristics {
    /// Probability of a regression or improvement verdict (the false-alarm
    /// rate when the change is 0, the power otherwise).
    pub fn change_rate(&self) -> f64 {
        self.regression + self.improvement
    }
}

/// A sub-density on a grid: points in increasing order and their density
/// times the quadrature weight.
struct Grid {
    points: Vec<f64>,
    masses: Vec<f64>,
}

/// Probability of each verdict and runs at the stop for the adaptive design
/// of `settings` when the true relative change is `change` under lognormal
/// noise with coefficient of variation `cv`. Method and cost: see the
/// module documentation.
pub fn operating_characteristics(
    settings: &SequentialSettings,
    cv: f64,
    change: f64,
) -> Result<OperatingCharacteristics, SequentialError> {
    evaluate(settings, cv, change, MAX_EVALUATED_LOOKS)
}

/// [`operating_characteristics`] evaluated at no more than `most_looks` looks.
fn evaluate(
    settings: &SequentialSettings,
    cv: f64,
    change: f64,
    most_looks: usize,
) -> Result<OperatingCharacteristics, SequentialError> {
    let SequentialSettings {
        min,
        max,
        block,
        alpha,
        threshold,
        better,
        spending,
    } = *settings;
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(SequentialError::Alpha(alpha));
    }
    if min < 2 || max < min || block == 0 {
        return Err(SequentialError::Schedule { min, max, block });
    }
    if !(threshold > 0.0 && threshold < 1.0) {
        return Err(SequentialError::Threshold(threshold));
    }
    // A pilot whose runs were all equal has CV 0: plan as for a tiny spread.
    let log_sd = log_sd_from_cv(cv).max(1e-9);
    if !(cv.is_finite() && cv >= 0.0 && change.is_finite() && change > -1.0) {
        return Err(SequentialError::Planning {
            cv,
            shift: change,
            alpha,
            power: f64::NAN,
        });
    }
    let runs = evaluated_looks(min, max, block, most_looks);
    let critical = boundaries::critical_values(&runs, alpha, spending);
    let drift = change.ln_1p();
    let (lower, upper) = ((-threshold).ln_1p(), threshold.ln_1p());
    let information_per_run = RANK_TEST_EFFICIENCY / (2.0 * log_sd * log_sd);
    let information: Vec<f64> = runs
        .iter()
        .map(|&run| run as f64 * information_per_run)
        .collect();

    let mut grid = Grid {
        points: vec![0.0],
        masses: vec![1.0],
    };
    let (mut up, mut down, mut equivalent) = (0.0, 0.0, 0.0);
    let mut mean_runs = 0.0;
    let mut cumulative = 0.0;
    let mut p95_runs = None;
    let mut previous_information = 0.0;
    for (index, (&info, &c)) in information.iter().zip(&critical).enumerate() {
        let increment = info - previous_information;
        let sd = increment.sqrt();
        let mean_step = drift * increment;
        let can_stop = c.is_finite()
            && crate::shift::interval_rank(runs[index], runs[index], 1.0 - 2.0 * normal_cdf(-c))
                .is_some();
        let last = index + 1 == information.len();
        let (mut stop_up, mut stop_down, mut stop_equivalent) = (0.0, 0.0, 0.0);
        // Continuation region at this look, as closed sub-intervals.
        let continuation: Vec<(f64, f64)> = if can_stop {
            let bound = c * info.sqrt();
            let equivalent_low = (lower * info + bound).max(-bound);
            let equivalent_high = (upper * info - bound).min(bound);
            for (&from, &mass) in grid.points.iter().zip(&grid.masses) {
                let center = from + mean_step;
                stop_up += mass * normal_cdf((center - bound) / sd);
                stop_down += mass * normal_cdf((-bound - center) / sd);
                if equivalent_low < equivalent_high {
                    stop_equivalent += mass
                        * (normal_cdf((equivalent_high - center) / sd)
                            - normal_cdf((equivalent_low - center) / sd));
                }
            }
            if equivalent_low < equivalent_high {
                vec![(-bound, equivalent_low), (equivalent_high, bound)]
            } else {
                vec![(-bound, bound)]
            }
        } else {
            // No verdict possible here: keep the whole density (±10 sd).
            let spread = 10.0 * info.sqrt();
            vec![(drift * info - spread, drift * info + spread)]
        };
        up += stop_up;
        down += stop_down;
        equivalent += stop_equivalent;
        let stopped = stop_up + stop_down + stop_equivalent;
        let remaining = if last {
            (1.0 - up - down - equivalent).max(0.0)
        } else {
            0.0
        };
        mean_runs += (stopped + remaining) * runs[index] as f64;
        cumulative += stopped + remaining;
        if p95_runs.is_none() && (cumulative >= 0.95 || last) {
            p95_runs = Some(runs[index]);
        }
        if last {
            break;
        }
        let next_sd = (information[index + 1] - info).sqrt();
        let step_limit = sd.min(next_sd) / 8.0;
        grid = convolve(&grid, &continuation, step_limit, mean_step, sd);
        previous_information = info;
    }
    let total = up + down + equivalent;
    let undecided = (1.0 - total).max(0.0);
    let (regression, improvement) = match better {
        Better::Lower => (up, down),
        Better::Higher => (down, up),
    };
    Ok(OperatingCharacteristics {
        change,
        regression,
        improvement,
        equivalent,
        undecided,
        mean_runs,
        p95_runs: p95_runs.unwrap_or(max),
        looks_evaluated: runs.len(),
    })
}

/// Probability that the canonical process (Jennison & Turnbull 2000, §3.1:
/// S at information I has independent N(`drift`·ΔI, ΔI) increments) leaves
/// below −lower_k·√I_k at some look before leaving above upper_k·√I_k, for
/// looks at `information` (increasing) with critical values `bounds`
/// (lower, upper): the power of the decrease side of a group-sequential
/// test with separate boundaries on the two sides, by the recursive
/// integration of [`operating_characteristics`]. O(K·G·145).
pub(crate) fn lower_exit_probability(
    information: &[f64],
    bounds: &[(f64, f64)],
    drift: f64,
) -> f64 {
    let mut grid = Grid {
        points: vec![0.0],
        masses: vec![1.0],
    };
    let mut below = 0.0;
    let mut previous = 0.0;
    for (index, (&info, &(lower, upper))) in information.iter().zip(bounds).enumerate() {
        let increment = info - previous;
        let sd = increment.sqrt();
        let mean_step = drift * increment;
        let edge = |critical: f64| {
            if critical.is_finite() {
                critical * info.sqrt()
            } else {
                drift.abs() * info + 10.0 * info.sqrt()
            }
        };
        let (low, high) = (-edge(lower), edge(upper));
        for (&from, &mass) in grid.points.iter().zip(&grid.masses) {
            below += mass * normal_cdf((low - from - mean_step) / sd);
        }
        let Some(&next) = information.get(index + 1) else {
            break;
        };
        let step_limit = sd.min((next - info).sqrt()) / 8.0;
        grid = convolve(&grid, &[(low, high)], step_limit, mean_step, sd);
        previous = info;
    }
    below
}

/// The design's look schedule (`min`, `min + block`, …, `max`), or
/// [`MAX_EVALUATED_LOOKS`] of its looks evenly spread over it.
fn evaluated_looks(min: usize, max: usize, block: usize, most_looks: usize) -> Vec<usize> {
    let mut runs: Vec<usize> = (min..max).step_by(block).collect();
    runs.push(max);
    let most_looks = most_looks.max(2);
    if runs.len() <= most_looks {
        return runs;
    }
    let last = runs.len() - 1;
    let mut chosen: Vec<usize> = (0..most_looks)
        .map(|index| runs[(index * last + (most_looks - 1) / 2) / (most_looks - 1)])
        .collect();
    chosen.dedup();
    chosen
}

/// The sub-density at the next look on the `continuation` sub-intervals:
/// the old sub-density convolved with N(`mean_step`, `sd`²), on Simpson
/// grids of step ≤ `step_limit`. The kernel is < 1e-17 of its peak beyond
/// 9 sd, so only old points within that reach are summed.
fn convolve(
    old: &Grid,
    continuation: &[(f64, f64)],
    step_limit: f64,
    mean_step: f64,
    sd: f64,
) -> Grid {
    const INVERSE_SQRT_TAU: f64 = 0.398_942_280_401_432_7;
    let reach = 9.0 * sd;
    let mut points = Vec::new();
    let mut masses = Vec::new();
    for &(low, high) in continuation {
        if high <= low {
            continue;
        }
        let intervals = ((high - low) / step_limit).ceil().max(2.0) as usize;
        let intervals = intervals + intervals % 2;
        let step = (high - low) / intervals as f64;
        for point in 0..=intervals {
            let x = low + point as f64 * step;
            let weight = if point == 0 || point == intervals {
                1.0
            } else if point % 2 == 1 {
                4.0
            } else {
                2.0
            } * step
                / 3.0;
            let first = old
                .points
                .partition_point(|&from| from + mean_step < x - reach);
            let end = old
                .points
                .partition_point(|&from| from + mean_step <= x + reach);
            let density: f64 = old.points[first..end]
                .iter()
                .zip(&old.masses[first..end])
                .map(|(&from, &mass)| {
                    let z = (x - from - mean_step) / sd;
                    mass * INVERSE_SQRT_TAU * (-0.5 * z * z).exp()
                })
                .sum::<f64>()
                / sd;
            points.push(x);
            masses.push(density * weight);
        }
    }
    Grid { points, masses }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_add_up_and_alpha_holds_at_zero_change() {
        let settings = SequentialSettings::new(186, 0.05, Better::Lower);
        let null = operating_characteristics(&settings, 0.13, 0.0).unwrap();
        let total = null.regression + null.improvement + null.equivalent + null.undecided;
        assert!((total - 1.0).abs() < 1e-6, "{null:?}");
        // Equivalence stops only remove paths, so the false-alarm rate is
        // at most α (and close to it: equivalence ends most paths late).
        assert!(null.change_rate() <= 0.05 + 1e-4, "{null:?}");
        // Nearly symmetric: the equivalence region (ln(1 − t), ln(1 + t)) is not.
        assert!(
            (null.regression - null.improvement).abs() < 1e-3,
            "{null:?}"
        );
    }

    #[test]
    fn zero_spread_is_planned_not_rejected() {
        let settings = SequentialSettings::new(6, 0.05, Better::Lower);
        let figures = operating_characteristics(&settings, 0.0, 0.05).unwrap();
        assert!(figures.regression > 0.99, "{figures:?}");
        assert!(operating_characteristics(&settings, f64::NAN, 0.0).is_err());
    }

    #[test]
    fn lower_exit_of_one_look_is_the_normal_tail() {
        // One look at information 9 with drift −0.5: S ~ N(−4.5, 9), and it
        // leaves below −1.96·3 with probability Φ(−1.96 + 1.5).
        let power = lower_exit_probability(&[9.0], &[(1.96, 1.96)], -0.5);
        assert!((power - normal_cdf(-0.46)).abs() < 1e-9, "{power}");
        // Two looks: at least the first look's and at most the last's
        // fixed-sample power at the same drift.
        let two = lower_exit_probability(&[4.0, 9.0], &[(2.5, 2.5), (2.0, 2.0)], -0.5);
        assert!(two > normal_cdf(-2.5 + 1.0) && two < normal_cdf(-2.0 + 1.5) + 0.1);
    }

    #[test]
    fn cost_does_not_grow_with_the_cap() {
        let settings = SequentialSettings::new(20_000, 0.01, Better::Lower);
        let large = operating_characteristics(&settings, 0.42, 0.01).unwrap();
        assert_eq!(large.looks_evaluated, MAX_EVALUATED_LOOKS);
        assert!(
            large.mean_runs > 1000.0 && large.mean_runs < 20_000.0,
            "{large:?}"
        );
    }

    #[test]
    fn evaluated_looks_keep_both_ends() {
        assert_eq!(evaluated_looks(6, 10, 1, 200), vec![6, 7, 8, 9, 10]);
        let thinned = evaluated_looks(6, 5000, 1, MAX_EVALUATED_LOOKS);
        assert_eq!(thinned.len(), MAX_EVALUATED_LOOKS);
        assert_eq!(thinned.first(), Some(&6));
        assert_eq!(thinned.last(), Some(&5000));
        assert!(thinned.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn fewer_evaluated_looks_change_little() {
        // The thinning used for large caps, checked where the full schedule
        // is affordable: 181 looks against 45 spread over the same range.
        let settings = SequentialSettings::new(186, 0.05, Better::Lower);
        for change in [0.0, 0.05] {
            let full = evaluate(&settings, 0.13, change, 1000).unwrap();
            let thinned = evaluate(&settings, 0.13, change, 45).unwrap();
            assert_eq!((full.looks_evaluated, thinned.looks_evaluated), (181, 45));
            let relative = (thinned.mean_runs - full.mean_runs).abs() / full.mean_runs;
            assert!(relative < 0.03, "{full:?}\n{thinned:?}");
            assert!((thinned.change_rate() - full.change_rate()).abs() < 0.02);
            assert!((thinned.equivalent - full.equivalent).abs() < 0.02);
        }
    }
}
