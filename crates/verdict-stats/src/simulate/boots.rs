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

use std::fmt::Write as _;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use super::noise::standard_normal;
use super::{Noise, Shape, trial_seed};
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

/// Within-boot noise CV of the report's tables.
const NOISE_CV: f64 = 0.05;
/// Iterations per boot of the report's tables.
const ITERATIONS: usize = 30;
/// Boot CVs of the main table.
const BOOT_CVS: [f64; 3] = [0.0, 0.02, 0.05];
/// Boots per level of the main table.
const BOOT_COUNTS: [usize; 4] = [2, 3, 5, 8];
/// True change for power.
const POWER_CHANGE: f64 = 0.10;

fn table_scenario(noise: Noise, boot_cv: f64, boots: usize, change: f64) -> BootScenario {
    BootScenario {
        noise,
        boot_cv,
        boots,
        iterations: ITERATIONS,
        change,
        alpha: 0.05,
        threshold: 0.02,
    }
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// The markdown section "Boot-to-boot variation" of docs/validation.md:
/// naive against boot-unit false alarms and power over boot CV × boots per
/// level, then the four boot-unit analyses on clean and contaminated noise.
/// Every figure is simulated here with `trials` trials and `seed`.
pub fn boots_report(trials: usize, seed: u64) -> String {
    let lognormal = Noise {
        shape: Shape::Lognormal,
        cv: NOISE_CV,
    };
    let default = BootAnalysis::Boots(BootMethod::default());
    let rank = BootAnalysis::Boots(BootMethod {
        summary: BootSummary::Median,
        test: BootTest::Rank,
    });
    let main = [BootAnalysis::Naive, default, rank];
    let mut out = String::new();
    let _ = writeln!(out, "\n## Boot-to-boot variation\n");
    let _ = writeln!(
        out,
        "Reproduce: `cargo run --release -p verdict-stats --example boots_validation -- \
         {trials} {seed}` ({trials} trials per point, seed {seed}; scripts/validate.sh appends \
         it here; `verdict simulate --validate-boots --trials {trials} --seed {seed}` prints \
         the same). One configuration at a time: `verdict simulate --boots K \
         --iterations-per-boot N --boot-cv X --cv 0.05 [--change 0.1]`.\n"
    );
    let _ = writeln!(
        out,
        "Each level (kernel) is booted K times; every boot multiplies all its {ITERATIONS} \
         iterations by one lognormal boot effect with the given CV (memory layout, cache \
         colouring, IRQ placement), and each iteration has its own lognormal noise of CV \
         {}%. Run times, lower is better, alpha = 0.05, threshold 2%. *naive*: every \
         iteration pooled as an independent sample (the two-sample analysis of an \
         experiment without boots). *verdict*: the boot as the unit, the median of each \
         boot's logs compared by Welch's t over boots (`boots::compare_boots`, the \
         default). *rank*: the same boot medians compared by the exact Mann-Whitney test \
         over boots. False alarms: A/A (the same kernel as both levels), a regression or \
         improvement called. Power: the candidate 10% slower, a regression called.\n",
        NOISE_CV * 100.0
    );
    let _ = writeln!(
        out,
        "| boot CV | boots per level | false alarms naive | false alarms verdict | false alarms rank | power naive | power verdict | power rank |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for boot_cv in BOOT_CVS {
        for boots in BOOT_COUNTS {
            let null = simulate_boots(
                &table_scenario(lognormal, boot_cv, boots, 0.0),
                &main,
                trials,
                seed,
            );
            let power = simulate_boots(
                &table_scenario(lognormal, boot_cv, boots, POWER_CHANGE),
                &main,
                trials,
                seed,
            );
            let _ = writeln!(
                out,
                "| {}% | {boots} | {} | {} | {} | {} | {} | {} |",
                boot_cv * 100.0,
                percent(null[0].change_rate()),
                percent(null[1].change_rate()),
                percent(null[2].change_rate()),
                percent(power[0].detection_rate(POWER_CHANGE)),
                percent(power[1].detection_rate(POWER_CHANGE)),
                percent(power[2].detection_rate(POWER_CHANGE)),
            );
        }
    }
    let error = (0.05 * 0.95 / trials as f64).sqrt();
    let _ = writeln!(
        out,
        "\nRead: the Monte-Carlo standard error of a rate near 5% is {:.2}%. With no boot \
         effect the naive analysis holds alpha; with a boot effect its false alarms are far \
         above alpha, and more boots do not bring them down: pooling reads the difference \
         between the boots of A and those of B as a kernel difference measured with the \
         precision of every iteration. Its power column is therefore no merit. The \
         boot-unit analysis stays at or below alpha for every K (Welch's t with equal boots \
         per level is conservative: its degrees of freedom are at most 2K - 2). With 2 or 3 \
         boots per level the rank test cannot call anything at alpha = 0.05 (smallest \
         two-sided p 1/3 and 1/10; it needs 4 boots per level), while Welch's t decides from \
         2. Its power at 2 boots is low; `boots_needed` says how many boots per level would \
         decide.\n",
        error * 100.0
    );

    // More iterations make the naive analysis worse, not better.
    let _ = writeln!(
        out,
        "### More iterations per boot\n\n\
         Boot CV 2%, 3 boots per level, A/A: false alarms as the iterations per boot grow.\n"
    );
    let _ = writeln!(
        out,
        "| iterations per boot | false alarms naive | false alarms verdict |"
    );
    let _ = writeln!(out, "|---|---|---|");
    for iterations in [5, 30, 100] {
        let mut design = table_scenario(lognormal, 0.02, 3, 0.0);
        design.iterations = iterations;
        let null = simulate_boots(&design, &main[..2], trials, seed);
        let _ = writeln!(
            out,
            "| {iterations} | {} | {} |",
            percent(null[0].change_rate()),
            percent(null[1].change_rate()),
        );
    }
    let _ = writeln!(
        out,
        "\nRead: more iterations shrink the within-boot noise but not the boot effect, so \
         the naive analysis grows ever surer of a difference that is only the boots'. \
         Only more boots inform a comparison of kernels.\n"
    );

    // Choosing the summary and the test: clean and contaminated noise.
    let contaminated = Noise {
        shape: Shape::Contaminated,
        cv: NOISE_CV,
    };
    let _ = writeln!(
        out,
        "### Choosing the boot summary and the test\n\n\
         Boot CV 2%, 5 boots per level, {ITERATIONS} iterations per boot, the four boot-unit \
         analyses on the same draws. *contaminated*: as lognormal, and 5% of the iterations \
         3x slower (a stray interrupt storm, a page-cache miss).\n"
    );
    let _ = writeln!(
        out,
        "| within-boot noise | analysis | false alarms | power at +10% | power at +5% | coverage at +5% |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let analyses = &BootAnalysis::ALL[1..];
    for (name, noise) in [
        ("lognormal CV 5%", lognormal),
        ("contaminated, CV 5%", contaminated),
    ] {
        let null = simulate_boots(&table_scenario(noise, 0.02, 5, 0.0), analyses, trials, seed);
        let large = simulate_boots(
            &table_scenario(noise, 0.02, 5, POWER_CHANGE),
            analyses,
            trials,
            seed,
        );
        let small = simulate_boots(
            &table_scenario(noise, 0.02, 5, 0.05),
            analyses,
            trials,
            seed,
        );
        for index in 0..analyses.len() {
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} | {} | {} |",
                analyses[index].label(),
                percent(null[index].change_rate()),
                percent(large[index].detection_rate(POWER_CHANGE)),
                percent(small[index].detection_rate(0.05)),
                percent(small[index].coverage()),
            );
        }
    }
    let _ = writeln!(
        out,
        "\nRead: on clean lognormal noise the mean of the logs is a little more efficient than \
         the median; one slow iteration in twenty moves a boot's mean log by ln 3/{ITERATIONS} \
         and costs the mean far more power than the median loses on clean noise, so verdict \
         summarises a boot by its median. Welch's t has more power than the rank test at \
         the same boots (the rank test's interval is coarse with few boots) and decides from \
         2 boots; the rank test remains available as the distribution-free choice \
         (`BootTest::Rank`) when there are enough boots."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(boot_cv: f64, boots: usize, change: f64) -> BootScenario {
        table_scenario(
            Noise {
                shape: Shape::Lognormal,
                cv: 0.05,
            },
            boot_cv,
            boots,
            change,
        )
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
