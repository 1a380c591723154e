//! Change points measured (docs/validation-history.md): how often each
//! method reports a change point on series without any change under heavy
//! tails, how often it finds a step, and its precision and recall on series
//! with several steps. Both methods see the same series (common random
//! numbers); trial i draws from its own ChaCha8 generator seeded from
//! (seed, i), in parallel, tallied in trial order.
//! Must not: do I/O or read a clock.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::edges::Rate;
use verdict_stats::changepoint::{Method, Settings, detect};
use verdict_stats::simulate::standard_normal;

/// Length of the no-change and one-step series.
pub const LENGTH: usize = 200;

/// Noise of a series around level 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Lognormal, CV 5%.
    Lognormal,
    /// 100·(1 + 0.03·T) with T Student's t, 2 degrees of freedom.
    StudentTwo,
    /// 100·(1 + 0.01·C) with C standard Cauchy.
    Cauchy,
    /// Lognormal CV 3%, and 5% of the values 3 times larger.
    Outliers,
}

impl Tail {
    pub const ALL: [Tail; 4] = [
        Tail::Lognormal,
        Tail::StudentTwo,
        Tail::Cauchy,
        Tail::Outliers,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            Tail::Lognormal => "lognormal, CV 5%",
            Tail::StudentTwo => "Student t, 2 df (scale 3%)",
            Tail::Cauchy => "Cauchy (scale 1%)",
            Tail::Outliers => "lognormal CV 3%, 5% of values at 3x",
        }
    }

    fn value(self, rng: &mut ChaCha8Rng) -> f64 {
        match self {
            Tail::Lognormal => {
                100.0 * (verdict_stats::plan::log_sd_from_cv(0.05) * standard_normal(rng)).exp()
            }
            Tail::StudentTwo => {
                let chi_square: f64 = (0..2).map(|_| standard_normal(rng).powi(2)).sum();
                100.0 * (1.0 + 0.03 * standard_normal(rng) / (chi_square / 2.0).sqrt())
            }
            Tail::Cauchy => {
                let angle = std::f64::consts::PI * (rng.random::<f64>() - 0.5);
                100.0 * (1.0 + 0.01 * angle.tan())
            }
            Tail::Outliers => {
                let outlier = if rng.random::<f64>() < 0.05 { 3.0 } else { 1.0 };
                100.0
                    * outlier
                    * (verdict_stats::plan::log_sd_from_cv(0.03) * standard_normal(rng)).exp()
            }
        }
    }
}

fn generator(seed: u64, trial: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9).wrapping_add(trial as u64))
}

/// The two methods at their defaults.
pub fn methods() -> [(Method, Settings); 2] {
    [
        (Method::Ranks, Settings::default()),
        (Method::Otava, Settings::otava()),
    ]
}

/// One method's false alarms on one tail: the share of no-change series
/// with at least one change point, and the mean number of points.
#[derive(Debug, Clone, PartialEq)]
pub struct FalseAlarmRow {
    pub tail: Tail,
    pub method: Method,
    pub series_with_points: Rate,
    pub mean_points: f64,
}

/// `trials` no-change series of [`LENGTH`] points per tail, both methods.
pub fn false_alarms(trials: usize, seed: u64) -> Vec<FalseAlarmRow> {
    let mut rows = Vec::new();
    for tail in Tail::ALL {
        let counts: Vec<[usize; 2]> = (0..trials)
            .into_par_iter()
            .map(|trial| {
                let mut rng = generator(seed ^ tail as u64, trial);
                let series: Vec<f64> = (0..LENGTH).map(|_| tail.value(&mut rng)).collect();
                methods().map(|(_, settings)| {
                    detect(&series, &settings)
                        .expect("finite series")
                        .change_points
                        .len()
                })
            })
            .collect();
        for (position, (method, _)) in methods().into_iter().enumerate() {
            let with = counts.iter().filter(|count| count[position] > 0).count();
            let total: usize = counts.iter().map(|count| count[position]).sum();
            rows.push(FalseAlarmRow {
                tail,
                method,
                series_with_points: Rate::of(with, trials),
                mean_points: total as f64 / trials as f64,
            });
        }
    }
    rows
}

/// One method on series with one step: found within ±2 points, and other
/// points reported beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRow {
    pub method: Method,
    pub found: Rate,
    pub mean_other_points: f64,
}

/// A series of [`LENGTH`] lognormal points (CV 3%) with a step of +10% at
/// a uniform position in [10, 190), and that position.
fn step_series(rng: &mut ChaCha8Rng) -> (Vec<f64>, usize) {
    let at = rng.random_range(10..LENGTH - 10);
    let log_sd = verdict_stats::plan::log_sd_from_cv(0.03);
    let series = (0..LENGTH)
        .map(|index| {
            let level = if index >= at { 110.0 } else { 100.0 };
            level * (log_sd * standard_normal(rng)).exp()
        })
        .collect();
    (series, at)
}

/// `trials` series with one step ([`step_series`]), both methods.
pub fn steps(trials: usize, seed: u64) -> Vec<StepRow> {
    let outcomes: Vec<[(bool, usize); 2]> = (0..trials)
        .into_par_iter()
        .map(|trial| {
            let (series, at) = step_series(&mut generator(seed ^ 0x57e9, trial));
            methods().map(|(_, settings)| {
                let points = detect(&series, &settings).expect("finite").change_points;
                let found = points.iter().any(|point| point.index.abs_diff(at) <= 2);
                (found, points.len() - usize::from(found))
            })
        })
        .collect();
    methods()
        .into_iter()
        .enumerate()
        .map(|(position, (method, _))| StepRow {
            method,
            found: Rate::of(
                outcomes
                    .iter()
                    .filter(|outcome| outcome[position].0)
                    .count(),
                trials,
            ),
            mean_other_points: outcomes
                .iter()
                .map(|outcome| outcome[position].1)
                .sum::<usize>() as f64
                / trials as f64,
        })
        .collect()
}

/// One method on series with several steps: detections within ±2 points
/// of a true step (each step matched once).
#[derive(Debug, Clone, PartialEq)]
pub struct SeveralRow {
    pub method: Method,
    pub steps: usize,
    pub detections: usize,
    pub hits: usize,
}

impl SeveralRow {
    pub fn precision(&self) -> f64 {
        self.hits as f64 / self.detections.max(1) as f64
    }

    pub fn recall(&self) -> f64 {
        self.hits as f64 / self.steps.max(1) as f64
    }
}

/// A series of 50 to 1,000 points with 0 to 4 steps of 5-30% (either sign)
/// at least 10 points apart, normal noise of CV 2-13% (the design of
/// scripts/validate-history.py's Otava comparison), and its step indices.
fn several_steps(rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<usize>) {
    let length = rng.random_range(50..=1000);
    let count = rng.random_range(0..=4usize).min(length / 20);
    let mut steps: Vec<usize> = Vec::new();
    while steps.len() < count {
        let at = rng.random_range(10..length - 10);
        if steps.iter().all(|known| known.abs_diff(at) >= 10) {
            steps.push(at);
        }
    }
    steps.sort_unstable();
    let cv = rng.random_range(0.02..0.13);
    let mut level = 100.0;
    let mut next = 0;
    let series = (0..length)
        .map(|index| {
            if next < steps.len() && index == steps[next] {
                let size = rng.random_range(0.05..0.30);
                level *= if rng.random::<bool>() {
                    1.0 + size
                } else {
                    1.0 - size
                };
                next += 1;
            }
            level * (1.0 + cv * standard_normal(rng))
        })
        .collect();
    (series, steps)
}

/// `trials` series with several steps, both methods.
pub fn several(trials: usize, seed: u64) -> Vec<SeveralRow> {
    let outcomes: Vec<[(usize, usize, usize); 2]> = (0..trials)
        .into_par_iter()
        .map(|trial| {
            let mut rng = generator(seed ^ 0x5e7e, trial);
            let (series, steps) = several_steps(&mut rng);
            methods().map(|(_, settings)| {
                let points = detect(&series, &settings).expect("finite").change_points;
                let mut matched = vec![false; steps.len()];
                let mut hits = 0;
                for point in &points {
                    if let Some(step) = (0..steps.len())
                        .find(|&step| !matched[step] && steps[step].abs_diff(point.index) <= 2)
                    {
                        matched[step] = true;
                        hits += 1;
                    }
                }
                (steps.len(), points.len(), hits)
            })
        })
        .collect();
    methods()
        .into_iter()
        .enumerate()
        .map(|(position, (method, _))| SeveralRow {
            method,
            steps: outcomes.iter().map(|outcome| outcome[position].0).sum(),
            detections: outcomes.iter().map(|outcome| outcome[position].1).sum(),
            hits: outcomes.iter().map(|outcome| outcome[position].2).sum(),
        })
        .collect()
}

/// The section as markdown (both methods side by side).
pub fn changepoints_report(trials: usize, seed: u64) -> String {
    let mut out = format!(
        "## Change points: ranks against Otava's method\n\n\
         `cargo run --release -p verdict-lab --bin changepoint_validation -- {trials} {seed}` \
         (seeded; standard errors in parentheses). verdict's default (`ranks`, p ≤ 0.05 over the \
         series) and Otava's (`--method otava`, window 50, p ≤ 0.001), both at their defaults, on \
         the same series.\n\n\
         ### No change: series with at least one change point ({LENGTH} points)\n\n\
         | noise | ranks: series with a point | ranks: points per series | otava: series with a point | otava: points per series |\n|---|---|---|---|---|\n"
    );
    let rows = false_alarms(trials, seed);
    for pair in rows.chunks(2) {
        out.push_str(&format!(
            "| {} | {} | {:.3} | {} | {:.3} |\n",
            pair[0].tail.describe(),
            pair[0].series_with_points.text(),
            pair[0].mean_points,
            pair[1].series_with_points.text(),
            pair[1].mean_points
        ));
    }
    out.push_str(&format!(
        "\n### One step of +10% at CV 3% ({LENGTH} points, the step at least 10 points from either end)\n\n\
         | method | step found (within 2 points) | other points per series |\n|---|---|---|\n"
    ));
    for row in steps(trials, seed) {
        out.push_str(&format!(
            "| {} | {} | {:.3} |\n",
            row.method.as_str(),
            row.found.text(),
            row.mean_other_points
        ));
    }
    out.push_str(
        "\n### Several steps (50-1,000 points, 0-4 steps of 5-30%, normal noise CV 2-13%)\n\n\
         | method | steps | detections | precision | recall |\n|---|---|---|---|---|\n",
    );
    for row in several(trials / 4, seed) {
        out.push_str(&format!(
            "| {} | {} | {} | {:.3} | {:.3} |\n",
            row.method.as_str(),
            row.steps,
            row.detections,
            row.precision(),
            row.recall()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_hold_false_alarms_under_heavy_tails_and_find_steps() {
        // The rank method only (Otava's rates are in the docs): at most 5%
        // of no-change series with a point, within 2 standard errors.
        let trials = 100;
        for tail in Tail::ALL {
            let with_points = (0..trials)
                .into_par_iter()
                .filter(|&trial| {
                    let mut rng = generator(seed_of(tail), trial);
                    let series: Vec<f64> = (0..LENGTH).map(|_| tail.value(&mut rng)).collect();
                    !detect(&series, &Settings::default())
                        .unwrap()
                        .change_points
                        .is_empty()
                })
                .count();
            let limit = 0.05 + 2.0 * (0.05 * 0.95 / trials as f64).sqrt();
            assert!(
                (with_points as f64) / (trials as f64) <= limit,
                "{tail:?}: {with_points} of {trials}"
            );
        }
        let found = (0..trials)
            .into_par_iter()
            .filter(|&trial| {
                let (series, at) = step_series(&mut generator(11 ^ 0x57e9, trial));
                detect(&series, &Settings::default())
                    .unwrap()
                    .change_points
                    .iter()
                    .any(|point| point.index.abs_diff(at) <= 2)
            })
            .count();
        assert!(found as f64 >= 0.9 * trials as f64, "{found} of {trials}");
    }

    fn seed_of(tail: Tail) -> u64 {
        11 ^ tail as u64
    }
}
