//! Monte-Carlo validation of comparisons across boots: the false-alarm rate
//! and power of the naive analysis (every iteration of every boot pooled as
//! an independent sample: `verdict::compare`) beside the boot-unit analyses
//! (`boots::compare_boots`), when each boot adds a random effect shared by
//! all its iterations.
//!
//! The model: level L ∈ {baseline, candidate} is booted K times; boot b
//! draws u_b ~ N(0, σ_b²), σ_b = sqrt(ln(1 + boot CV²)), and its N
//! iterations are the noise shape's values (`noise.rs`) times exp(u_b),
//! times 1 + change for the candidate. Trial i draws from its own ChaCha8
//! generator seeded from (seed, i); every analysis sees the same draws
//! (common random numbers). Run times: lower is better, so a true +10% is a
//! regression. Must not: do I/O or read a clock.
//!
//! Complexity per trial: O(K·N·log(K·N)) for the naive analysis (its
//! Hodges–Lehmann selection) plus O(K·N log N) for the boot summaries.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use super::noise::standard_normal;
use super::{Noise, trial_seed};
use crate::boots::{BootMethod, BootOptions, BootSummary, BootTest, compare_boots};
use crate::plan::log_sd_from_cv;
use crate::shift::Shift;
use crate::verdict::{Better, CompareSettings, Verdict, compare};

/// One simulated design with a boot effect.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BootScenario {
    /// Within-boot noise (shape and CV).
    pub noise: Noise,
    /// CV of the boot effect exp(u_b) (0.05 = 5%).
    pub boot_cv: f64,
    /// Boots per level K.
    pub boots: usize,
    /// Iterations per boot N.
    pub iterations: usize,
    /// True relative change of the candidate, C/B − 1.
    pub change: f64,
    /// Two-sided level α.
    pub alpha: f64,
    /// Practical threshold t.
    pub threshold: f64,
}

/// An analysis of the simulated levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "analysis", rename_all = "snake_case")]
pub enum BootAnalysis {
    /// All K·N iterations of a level pooled as one sample of independent
    /// values: today's two-sample analysis.
    Naive,
    /// The boot as the unit.
    Boots(BootMethod),
}

impl BootAnalysis {
    /// The naive analysis, verdict's default boot-unit analysis, then the
    /// other summaries and tests.
    pub const ALL: [BootAnalysis; 5] = [
        BootAnalysis::Naive,
        BootAnalysis::Boots(BootMethod {
            summary: BootSummary::Median,
            test: BootTest::Welch,
        }),
        BootAnalysis::Boots(BootMethod {
            summary: BootSummary::Mean,
            test: BootTest::Welch,
        }),
        BootAnalysis::Boots(BootMethod {
            summary: BootSummary::Median,
            test: BootTest::Rank,
        }),
        BootAnalysis::Boots(BootMethod {
            summary: BootSummary::Mean,
            test: BootTest::Rank,
        }),
    ];

    /// Short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            BootAnalysis::Naive => "naive pooled",
            BootAnalysis::Boots(method) => method.label(),
        }
    }

    /// One line for a table's legend.
    pub fn describe(self) -> &'static str {
        match self {
            BootAnalysis::Naive => {
                "every iteration pooled as independent (Mann-Whitney, Hodges-Lehmann/Moses interval)"
            }
            BootAnalysis::Boots(method) => method.describe(),
        }
    }
}

/// Tallies of one analysis over all trials of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BootTally {
    pub analysis: BootAnalysis,
    pub trials: usize,
    pub regression: usize,
    pub improvement: usize,
    pub equivalent: usize,
    pub undecided: usize,
    /// Trials whose interval contained the true change.
    pub covered: usize,
    /// Trials with an interval.
    pub intervals: usize,
}

impl BootTally {
    /// Regression or improvement: the false-alarm rate when nothing changed.
    pub fn change_rate(&self) -> f64 {
        (self.regression + self.improvement) as f64 / self.trials as f64
    }

    /// The share of trials calling a change in the true change's direction
    /// (run times: a rise is a regression): the power.
    pub fn detection_rate(&self, change: f64) -> f64 {
        let found = if change > 0.0 {
            self.regression
        } else if change < 0.0 {
            self.improvement
        } else {
            0
        };
        found as f64 / self.trials as f64
    }

    /// Share of intervals covering the true change (NaN without intervals).
    pub fn coverage(&self) -> f64 {
        if self.intervals == 0 {
            f64::NAN
        } else {
            self.covered as f64 / self.intervals as f64
        }
    }
}

impl BootScenario {
    /// Per-boot values of the two levels for one trial.
    fn draw(&self, rng: &mut ChaCha8Rng) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let boot_sd = log_sd_from_cv(self.boot_cv);
        let level = |factor: f64, rng: &mut ChaCha8Rng| -> Vec<Vec<f64>> {
            (0..self.boots)
                .map(|_| {
                    let effect = (boot_sd * standard_normal(rng)).exp() * factor;
                    self.noise
                        .draw(rng, 1, self.iterations, 0.0)
                        .swap_remove(0)
                        .into_iter()
                        .map(|value| value * effect)
                        .collect()
                })
                .collect()
        };
        let baseline = level(1.0, rng);
        let candidate = level(1.0 + self.change, rng);
        (baseline, candidate)
    }

    fn settings(&self) -> CompareSettings {
        CompareSettings {
            threshold: self.threshold,
            better: Better::Lower,
            alpha: self.alpha,
            family_size: 1,
            power: crate::plan::DEFAULT_POWER,
        }
    }
}

fn covers(shift: &Shift, change: f64) -> Option<bool> {
    shift
        .interval
        .map(|interval| interval.low <= change && change <= interval.high)
}

/// Runs `trials` trials of `scenario` through every analysis in
/// `analyses`. Deterministic for a seed on any number of threads.
pub fn simulate_boots(
    scenario: &BootScenario,
    analyses: &[BootAnalysis],
    trials: usize,
    seed: u64,
) -> Vec<BootTally> {
    let settings = scenario.settings();
    let outcomes: Vec<Vec<(Verdict, Option<bool>)>> = (0..trials as u64)
        .into_par_iter()
        .map(|trial| {
            let mut rng = ChaCha8Rng::seed_from_u64(trial_seed(seed, trial));
            let (baseline, candidate) = scenario.draw(&mut rng);
            analyses
                .iter()
                .map(|analysis| match analysis {
                    BootAnalysis::Naive => {
                        match compare(&baseline.concat(), &candidate.concat(), &settings) {
                            Ok(result) => (result.verdict, covers(&result.shift, scenario.change)),
                            Err(_) => (Verdict::Inconclusive, None),
                        }
                    }
                    BootAnalysis::Boots(method) => {
                        let options = BootOptions {
                            settings,
                            method: *method,
                        };
                        match compare_boots(&baseline, &candidate, &options) {
                            Ok(result) => (result.verdict, covers(&result.shift, scenario.change)),
                            Err(_) => (Verdict::Inconclusive, None),
                        }
                    }
                })
                .collect()
        })
        .collect();
    analyses
        .iter()
        .enumerate()
        .map(|(index, analysis)| {
            let count = |wanted: Verdict| {
                outcomes
                    .iter()
                    .filter(|outcome| outcome[index].0 == wanted)
                    .count()
            };
            BootTally {
                analysis: *analysis,
                trials,
                regression: count(Verdict::Regression),
                improvement: count(Verdict::Improvement),
                equivalent: count(Verdict::Equivalent),
                undecided: count(Verdict::Inconclusive),
                covered: outcomes
                    .iter()
                    .filter(|outcome| outcome[index].1 == Some(true))
                    .count(),
                intervals: outcomes
                    .iter()
                    .filter(|outcome| outcome[index].1.is_some())
                    .count(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::Shape;

    fn scenario(boot_cv: f64, boots: usize, change: f64) -> BootScenario {
        BootScenario {
            noise: Noise {
                shape: Shape::Lognormal,
                cv: 0.05,
            },
            boot_cv,
            boots,
            iterations: 30,
            change,
            alpha: 0.05,
            threshold: 0.02,
        }
    }

    #[test]
    fn naive_pooling_raises_false_alarms_that_boots_as_the_unit_do_not() {
        let trials = 400;
        // 3 standard errors of a rate of 5% over 400 trials.
        let margin = 3.0 * (0.05 * 0.95 / trials as f64).sqrt();
        let analyses = BootAnalysis::ALL;
        for boots in [3, 5] {
            let tallies = simulate_boots(&scenario(0.05, boots, 0.0), &analyses, trials, 11);
            let naive = tallies[0].change_rate();
            assert!(naive > 0.5, "K = {boots}: naive {naive}");
            for tally in &tallies[1..] {
                assert!(
                    tally.change_rate() <= 0.05 + margin,
                    "K = {boots}: {tally:?}"
                );
            }
        }
        // Without a boot effect the naive analysis is valid: the inflation
        // comes from the boot effect, not from the simulation.
        let calm = simulate_boots(&scenario(0.0, 3, 0.0), &analyses[..2], trials, 12);
        assert!(calm[0].change_rate() <= 0.05 + margin, "{calm:?}");
        // A real 10% slowdown with boot CV 2% and 5 boots is found by the
        // boot-unit analysis, and as a regression.
        let power = simulate_boots(&scenario(0.02, 5, 0.10), &analyses[1..2], 200, 13);
        assert!(power[0].detection_rate(0.10) > 0.9, "{power:?}");
        assert_eq!(power[0].improvement, 0);
    }

    #[test]
    fn rank_test_is_silent_below_four_boots_and_the_same_seed_repeats() {
        let rank = [BootAnalysis::Boots(BootMethod {
            summary: BootSummary::Median,
            test: BootTest::Rank,
        })];
        // A 50% slowdown the rank test must still not call with 3 boots.
        let tallies = simulate_boots(&scenario(0.02, 3, 0.5), &rank, 100, 5);
        assert_eq!(tallies[0].regression + tallies[0].improvement, 0);
        let again = simulate_boots(&scenario(0.02, 3, 0.5), &rank, 100, 5);
        assert_eq!(tallies, again);
        let four = simulate_boots(&scenario(0.02, 4, 0.5), &rank, 100, 5);
        assert!(four[0].regression > 90, "{four:?}");
    }

    #[test]
    fn boot_effects_have_the_requested_spread() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut design = scenario(0.05, 4000, 0.0);
        design.iterations = 2;
        let (baseline, _) = design.draw(&mut rng);
        let components = crate::boots::variance_components(&baseline).unwrap();
        let between = components.between_cv.unwrap();
        let within = components.within_cv.unwrap();
        assert!((between - 0.05).abs() < 0.003, "{between}");
        assert!((within - 0.05).abs() < 0.003, "{within}");
    }
}
