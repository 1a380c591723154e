//! Monte-Carlo comparison of the two analyses of an interleaved design —
//! two independent samples (`verdict::compare`) against block-paired
//! (`paired::compare_paired`) — on machines whose speed is independent from
//! run to run, follows an AR(1) process, drifts slowly, or steps between
//! load levels: the false-alarm rate under A/A and the runs per arm each
//! needs for 90% power at a 10% slowdown.
//!
//! The schedule: block i runs A once and B once, in an order drawn by a
//! coin, at time steps 2i and 2i+1. The machine's state is a log-scale
//! process m(t) shared by whichever arm runs at step t; a run's log value is
//! m(t) + e(t) (+ ln 1.1 for B under the alternative), e independent.
//! Trial i draws from its own ChaCha8 generator seeded from (seed, i); both
//! analyses see the same draws (common random numbers). Must not: do I/O or
//! read a clock.
//!
//! Complexity per trial: O(n log n) for the two-sample analysis plus
//! O(n² log n) for the Walsh averages of the paired one.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::fmt::Write as _;

use verdict_stats::paired::{Analysis, compare_paired};
use verdict_stats::plan::log_sd_from_cv;
use verdict_stats::simulate::{standard_normal, trial_seed};
use verdict_stats::verdict::{Better, CompareSettings, Verdict, compare};

/// How the machine's speed behaves over time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Machine {
    /// No shared state: every run lognormal with CV 10%.
    Independent,
    /// AR(1) per time step, m(t) = φ·m(t−1) + √(1−φ²)·σ·z, φ = 0.9, marginal
    /// CV 10%, plus independent CV 2%.
    Autoregressive,
    /// Slow drift: AR(1) with φ = 0.99 (a time constant of 100 steps),
    /// marginal CV 30%, plus independent CV 5%.
    Drift,
    /// Load steps: with probability 5% per step the machine moves to a load
    /// level drawn from 1×, 1.5×, 2.5× (run times scaled), plus independent
    /// CV 5%.
    LoadSteps,
}

impl Machine {
    /// All machines, in table order.
    pub const ALL: [Machine; 4] = [
        Machine::Independent,
        Machine::Autoregressive,
        Machine::Drift,
        Machine::LoadSteps,
    ];

    /// Row label.
    pub fn describe(self) -> &'static str {
        match self {
            Machine::Independent => "independent lognormal, CV 10%",
            Machine::Autoregressive => "AR(1) phi 0.9, CV 10%, + independent CV 2%",
            Machine::Drift => "slow drift: AR(1) phi 0.99, CV 30%, + independent CV 5%",
            Machine::LoadSteps => "load steps 1x/1.5x/2.5x (5%/step) + independent CV 5%",
        }
    }

    /// Log run times of `blocks` blocks: (A values, B values), one per block
    /// each, B scaled by 1 + `change`.
    fn draw<R: Rng>(self, rng: &mut R, blocks: usize, change: f64) -> (Vec<f64>, Vec<f64>) {
        let mut state = 0.0f64;
        let (shared_sd, independent_sd) = match self {
            Machine::Independent => (0.0, log_sd_from_cv(0.10)),
            Machine::Autoregressive => (log_sd_from_cv(0.10), log_sd_from_cv(0.02)),
            Machine::Drift => (log_sd_from_cv(0.30), log_sd_from_cv(0.05)),
            Machine::LoadSteps => (0.0, log_sd_from_cv(0.05)),
        };
        let phi = if self == Machine::Drift { 0.99 } else { 0.9 };
        if matches!(self, Machine::Autoregressive | Machine::Drift) {
            // Start in the stationary distribution.
            state = shared_sd * standard_normal(rng);
        }
        let mut step = |rng: &mut R| {
            match self {
                Machine::Independent => {}
                Machine::Autoregressive | Machine::Drift => {
                    state =
                        phi * state + (1.0 - phi * phi).sqrt() * shared_sd * standard_normal(rng);
                }
                Machine::LoadSteps => {
                    if rng.random::<f64>() < 0.05 {
                        state = [1.0f64, 1.5, 2.5][rng.random_range(0..3)].ln();
                    }
                }
            }
            (state + independent_sd * standard_normal(rng)).exp()
        };
        let mut baseline = Vec::with_capacity(blocks);
        let mut candidate = Vec::with_capacity(blocks);
        for _ in 0..blocks {
            let first = step(rng);
            let second = step(rng);
            let (a, b) = if rng.random::<bool>() {
                (first, second)
            } else {
                (second, first)
            };
            baseline.push(a);
            candidate.push(b * (1.0 + change));
        }
        (baseline, candidate)
    }
}

/// Fraction of `trials` trials with `blocks` blocks in which `analysis`
/// finds a change (regression or improvement; with `change` > 0 only a
/// regression counts, the right direction for run times).
pub fn detection_rate(
    machine: Machine,
    analysis: Analysis,
    blocks: usize,
    change: f64,
    trials: usize,
    seed: u64,
) -> f64 {
    let settings = CompareSettings::new(Better::Lower);
    let found: usize = (0..trials as u64)
        .into_par_iter()
        .map(|trial| {
            let mut rng = ChaCha8Rng::seed_from_u64(trial_seed(seed, trial));
            let (baseline, candidate) = machine.draw(&mut rng, blocks, change);
            let result = match analysis {
                Analysis::Independent => compare(&baseline, &candidate, &settings),
                Analysis::Paired => compare_paired(&baseline, &candidate, &settings),
            };
            let verdict = result.map(|comparison| comparison.verdict).ok();
            let counted = if change > 0.0 {
                verdict == Some(Verdict::Regression)
            } else {
                matches!(verdict, Some(Verdict::Regression | Verdict::Improvement))
            };
            usize::from(counted)
        })
        .sum();
    found as f64 / trials as f64
}

/// Runs per arm tried when searching for the power target: every count
/// from 4 to 40, then steps of about 5% up to [`RUN_LIMIT`].
pub fn run_grid() -> Vec<usize> {
    let mut grid: Vec<usize> = (4..=40).collect();
    let mut runs = 40usize;
    while runs < RUN_LIMIT {
        runs = (runs + runs.div_ceil(20)).min(RUN_LIMIT);
        grid.push(runs);
    }
    grid
}

/// The largest runs per arm tried.
pub const RUN_LIMIT: usize = 600;

/// The smallest runs per arm on [`run_grid`] at which `analysis` detects a
/// `change` with at least `power`, with the power reached; `None` when even
/// the largest does not.
pub fn runs_for_power(
    machine: Machine,
    analysis: Analysis,
    change: f64,
    power: f64,
    trials: usize,
    seed: u64,
) -> RunsForPower {
    run_grid().into_iter().find_map(|runs| {
        let reached = detection_rate(machine, analysis, runs, change, trials, seed);
        (reached >= power).then_some((runs, reached))
    })
}

/// Runs per arm with the power reached; `None` beyond [`RUN_LIMIT`].
pub type RunsForPower = Option<(usize, f64)>;

/// One machine's results.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineResult {
    pub machine: Machine,
    /// A/A false-alarm rate at 32 runs per arm, (independent, paired).
    pub false_alarms: (f64, f64),
    /// Runs per arm for 90% power at +10%, (independent, paired).
    pub runs: (RunsForPower, RunsForPower),
}

impl MachineResult {
    /// Paired runs over independent runs, when both reached the power.
    pub fn ratio(&self) -> Option<f64> {
        match self.runs {
            (Some((independent, _)), Some((paired, _))) => Some(paired as f64 / independent as f64),
            _ => None,
        }
    }
}

/// Runs per arm at which the A/A false-alarm rates are measured.
pub const FALSE_ALARM_RUNS: usize = 32;

/// Simulates every machine with `trials` trials per point and `seed`.
pub fn paired_results(trials: usize, seed: u64) -> Vec<MachineResult> {
    Machine::ALL
        .iter()
        .map(|&machine| MachineResult {
            machine,
            false_alarms: (
                detection_rate(
                    machine,
                    Analysis::Independent,
                    FALSE_ALARM_RUNS,
                    0.0,
                    trials,
                    seed,
                ),
                paired_false_alarms(machine, trials, seed),
            ),
            runs: (
                runs_for_power(machine, Analysis::Independent, 0.10, 0.9, trials, seed),
                runs_for_power(machine, Analysis::Paired, 0.10, 0.9, trials, seed),
            ),
        })
        .collect()
}

/// The markdown section for docs/validation-paired.md.
pub fn paired_report(trials: usize, seed: u64) -> String {
    let results = paired_results(trials, seed);
    let mut out = String::new();
    let runs = |value: RunsForPower| match value {
        Some((runs, power)) => format!("{runs} ({:.1}%)", power * 100.0),
        None => format!("> {RUN_LIMIT}"),
    };
    let _ = writeln!(out, "\n## Paired blocks against two independent samples\n");
    let _ = writeln!(
        out,
        "Reproduce: `cargo run --release -p verdict-lab --bin paired_validation -- {trials} {seed}` \
         ({trials} trials per point, seed {seed}; scripts/validate.sh appends it here).\n"
    );
    let _ = writeln!(
        out,
        "Each block runs A and B once, in a random order, at consecutive time steps; the machine's \
         state is shared by the runs at neighbouring steps. Two analyses of the same draws: \
         *independent* (`[sampling] analysis = \"independent\"`, Mann-Whitney and the Moses \
         interval) and *paired* (`analysis = \"paired\"`, signed-rank on the within-block log \
         ratios and its Walsh-average interval). alpha = 0.05, threshold 2%, run times (lower \
         is better). False alarms: A/A at {FALSE_ALARM_RUNS} runs per arm, a regression or \
         improvement called. Runs: the smallest runs per arm (every count from 4 to 40, then \
         steps of about 5% up to {RUN_LIMIT}) at which a 10% slowdown is called a regression in at least 90% of trials (power reached in \
         brackets).\n"
    );
    let _ = writeln!(
        out,
        "| machine | false alarms independent | false alarms paired | runs independent | runs paired | paired / independent |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for result in &results {
        let _ = writeln!(
            out,
            "| {} | {:.2}% | {:.2}% | {} | {} | {} |",
            result.machine.describe(),
            result.false_alarms.0 * 100.0,
            result.false_alarms.1 * 100.0,
            runs(result.runs.0),
            runs(result.runs.1),
            result
                .ratio()
                .map_or_else(|| "-".to_string(), |ratio| format!("{ratio:.2}x")),
        );
    }
    let _ = writeln!(
        out,
        "\nRead: each power is estimated from {trials} trials (standard error {:.1}% at 90%), \
         so a runs figure is accurate to a few percent. The paired analysis is chosen by the \
         experiment's design, before the data are seen; choosing whichever analysis calls a \
         change would inflate the false-alarm rate.",
        (0.09 / trials as f64).sqrt() * 100.0
    );
    out
}

/// A/A false alarms of the paired analysis at [`FALSE_ALARM_RUNS`] blocks.
fn paired_false_alarms(machine: Machine, trials: usize, seed: u64) -> f64 {
    detection_rate(
        machine,
        Analysis::Paired,
        FALSE_ALARM_RUNS,
        0.0,
        trials,
        seed,
    )
}

/// Exact false-alarm rate of the paired analysis on `blocks` untied
/// within-block differences whose null is symmetric (every continuous
/// noise with A and B exchangeable within a block): its interval is dual to
/// the exact signed-rank test, so it excludes 0 with probability
/// 2·P(T⁺ ≤ c) for the critical count c ([`verdict_stats::paired::critical_count`];
/// Hollander & Wolfe 2014, §3.3). `None` when no interval is possible.
pub fn paired_exact_size(blocks: usize, alpha: f64) -> Option<f64> {
    verdict_stats::paired::critical_count(blocks, alpha / 2.0).map(|(_, tail)| 2.0 * tail)
}

/// A/A false alarms of the paired analysis alone, at [`FALSE_ALARM_RUNS`]
/// blocks, with `trials` trials per machine (a check of the table's
/// paired column at more trials), beside the exact rate on untied
/// continuous noise.
pub fn paired_null_report(trials: usize, seed: u64) -> String {
    let mut out = String::new();
    let exact = paired_exact_size(FALSE_ALARM_RUNS, 0.05).unwrap_or(f64::NAN);
    let standard_error = (exact * (1.0 - exact) / trials as f64).sqrt();
    let _ = writeln!(
        out,
        "### Paired A/A at {trials} trials\n\n\
         Reproduce: `cargo run --release -p verdict-lab --bin paired_validation -- \
         {trials} {seed} null`. A/A, {FALSE_ALARM_RUNS} blocks, the paired analysis only. Its \
         interval is dual to the exact signed-rank test, so on continuous noise (no tied \
         differences) its false-alarm rate is exactly 2·P(T+ <= c) = {:.3}% at \
         {FALSE_ALARM_RUNS} blocks, below alpha by the test's discreteness; the Monte-Carlo \
         standard error of a rate near it over {trials} trials is {:.3}%.\n",
        exact * 100.0,
        standard_error * 100.0
    );
    let _ = writeln!(
        out,
        "| machine | false alarms paired | (rate - exact) / standard error |"
    );
    let _ = writeln!(out, "|---|---|---|");
    for machine in Machine::ALL {
        let rate = paired_false_alarms(machine, trials, seed);
        let _ = writeln!(
            out,
            "| {} | {:.3}% | {:+.1} |",
            machine.describe(),
            rate * 100.0,
            (rate - exact) / standard_error
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_size_at_32_blocks() {
        // 2·P(T+ <= 159) for n = 32: 2·(number of subsets of 1..32 with sum
        // <= 159) / 2^32 = 0.049769 (the pmf counted exactly in Python).
        let size = paired_exact_size(32, 0.05).unwrap();
        assert!((size - 0.049_769).abs() < 1e-6, "{size}");
    }

    #[test]
    fn paired_blocks_need_fewer_runs_on_autocorrelated_noise_without_false_alarms() {
        let trials = 300;
        let independent = runs_for_power(
            Machine::Autoregressive,
            Analysis::Independent,
            0.10,
            0.9,
            trials,
            3,
        )
        .expect("two-sample reaches 90% power on the grid");
        let paired = runs_for_power(
            Machine::Autoregressive,
            Analysis::Paired,
            0.10,
            0.9,
            trials,
            3,
        )
        .expect("paired reaches 90% power on the grid");
        assert!(
            paired.0 as f64 <= 0.6 * independent.0 as f64,
            "paired {paired:?} vs independent {independent:?}"
        );
        // Independent noise: the paired analysis costs at most 10% more runs
        // (plus one grid step for the 300-trial power estimates).
        let independent_noise = runs_for_power(
            Machine::Independent,
            Analysis::Independent,
            0.10,
            0.9,
            trials,
            5,
        )
        .unwrap();
        let paired_noise =
            runs_for_power(Machine::Independent, Analysis::Paired, 0.10, 0.9, trials, 5).unwrap();
        assert!(
            paired_noise.0 as f64 <= 1.1 * independent_noise.0 as f64 + 1.0,
            "paired {paired_noise:?} vs independent {independent_noise:?}"
        );
        // A/A: at α = 0.05, 300 trials, the rate must stay within sampling
        // error (3 standard errors ≈ 3.8%) of α.
        for machine in [Machine::Autoregressive, Machine::LoadSteps] {
            let alarms = detection_rate(machine, Analysis::Paired, 24, 0.0, trials, 4);
            assert!(alarms <= 0.05 + 0.038, "{machine:?}: {alarms}");
        }
    }

    #[test]
    fn machines_share_state_between_neighbouring_steps() {
        // The paired differences of the autoregressive machine vary far
        // less than the runs themselves; on the independent one they do not.
        let spread = |machine: Machine| {
            let mut rng = ChaCha8Rng::seed_from_u64(9);
            let (a, b) = machine.draw(&mut rng, 2000, 0.0);
            let sd = |values: Vec<f64>| {
                let mean = values.iter().sum::<f64>() / values.len() as f64;
                (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64)
                    .sqrt()
            };
            let runs = sd(a.iter().map(|v| v.ln()).collect());
            let differences = sd(a.iter().zip(&b).map(|(x, y)| y.ln() - x.ln()).collect());
            differences / runs
        };
        assert!(
            spread(Machine::Autoregressive) < 0.7,
            "{}",
            spread(Machine::Autoregressive)
        );
        assert!(
            spread(Machine::Independent) > 1.3,
            "{}",
            spread(Machine::Independent)
        );
    }
}
