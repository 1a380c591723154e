//! Monte-Carlo validation of decision procedures: how often each says
//! "regression" or "improvement" when nothing changed (A/A), how often it
//! finds a real change (power), whether its interval covers the truth, and
//! how many runs per cell it spends.
//!
//! What it does: draws trials from a noise shape (`noise.rs`), applies a
//! procedure — the fixed-N benchstat rule, naive peeking, or the adaptive
//! group-sequential design (`crate::sequential`) — and tallies outcomes.
//! Trial i uses its own ChaCha8 generator seeded from (seed, i), trials run
//! in parallel with rayon and are tallied in trial order, so a seed gives
//! the same figures on any number of threads. All procedures see the same
//! noise for the same seed and trial (common random numbers), so their
//! differences are not sampling noise between procedures.
//! Must not: do I/O or read a clock.
//!
//! Complexity per trial: O(R·log R) to draw R runs per arm plus O(L·R) for
//! L looks (counts over sorted logs, `fast.rs`). The reports of
//! docs/validation*.md built on these simulations live in the research
//! crate verdict-lab, outside the product.

pub mod boots;
mod fast;
mod noise;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

pub use noise::{Noise, Shape, standard_normal};

use crate::sequential::{Better, Decision, SequentialDesign};
use fast::{FastDesign, NullTables, RankInterval, SortedArms};

/// A decision procedure to simulate.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "procedure", rename_all = "snake_case")]
pub enum Procedure {
    /// benchstat: `runs` per arm, two-sided Mann–Whitney, a change when
    /// p < α (direction from U); otherwise "equivalent" when the 1 − α
    /// Moses interval lies inside (−t, t). The interval is the 1 − α one.
    Fixed {
        /// Runs per arm.
        runs: usize,
    },
    /// Naive peeking: the fixed rule after every `every` runs per arm up to
    /// `max`, stopping at the first p < α. The interval is the naive 1 − α
    /// one at the stop.
    Peeking {
        /// Runs per arm between tests.
        every: usize,
        /// Cap on runs per arm.
        max: usize,
    },
    /// verdict's adaptive group-sequential design (its own α, threshold and
    /// direction apply; the scenario's are ignored). The interval is the
    /// repeated confidence interval at the stop.
    Adaptive(SequentialDesign),
}

impl Procedure {
    /// Short label for tables.
    pub fn label(&self) -> String {
        match self {
            Procedure::Fixed { runs } => format!("fixed N={runs}"),
            Procedure::Peeking { every, max } => format!("peeking every {every} to {max}"),
            Procedure::Adaptive(design) => {
                let settings = design.settings();
                format!("adaptive {}..{}", settings.min, settings.max)
            }
        }
    }

    fn capacity(&self) -> usize {
        match self {
            Procedure::Fixed { runs } => *runs,
            Procedure::Peeking { max, .. } => *max,
            Procedure::Adaptive(design) => design.settings().max,
        }
    }
}

/// One simulated configuration.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Scenario {
    /// Noise shape and spread.
    pub noise: Noise,
    /// True relative change of every candidate, C/B − 1 (e.g. −0.19).
    pub change: f64,
    /// Two-sided level of the fixed and peeking rules.
    pub alpha: f64,
    /// Practical threshold t for "equivalent" in the fixed and peeking rules.
    pub threshold: f64,
    /// Direction of improvement (for naming a change a regression).
    pub better: Better,
    /// Candidates compared with one shared baseline (1 = a single
    /// comparison; 5 = a 6-cell report). With more than one, a trial counts
    /// a false alarm when any comparison says regression or improvement.
    pub comparisons: usize,
    /// Whether the fixed and peeking rules use the Bonferroni level α/k for
    /// k comparisons (Holm's first step; Holm rejects something exactly
    /// when Bonferroni does). The adaptive design carries its own α.
    pub adjust: bool,
}

/// Tallies over all trials of one scenario and procedure.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Summary {
    /// Trials run.
    pub trials: usize,
    /// Trials ending "regression" (any comparison, for a family).
    pub regression: usize,
    /// Trials ending "improvement" (any comparison, for a family).
    pub improvement: usize,
    /// Trials ending "equivalent" (every comparison, for a family).
    pub equivalent: usize,
    /// Trials ending undecided (inconclusive, or at the cap).
    pub undecided: usize,
    /// Trials whose interval(s) at the stop cover the true change.
    pub covered: usize,
    /// Trials where an interval existed to judge coverage.
    pub intervals: usize,
    /// Mean runs per cell at the stop.
    pub mean_runs: f64,
    /// 95th percentile of runs per cell at the stop.
    pub p95_runs: usize,
    /// Largest runs per cell at any stop.
    pub max_runs: usize,
}

impl Summary {
    /// Share of trials ending with a regression or improvement verdict:
    /// the false-alarm rate when the true change is 0.
    pub fn change_rate(&self) -> f64 {
        (self.regression + self.improvement) as f64 / self.trials as f64
    }

    /// Share of trials ending "regression": the power against a true
    /// regression.
    pub fn regression_rate(&self) -> f64 {
        self.regression as f64 / self.trials as f64
    }

    /// Share of trials ending "equivalent".
    pub fn equivalent_rate(&self) -> f64 {
        self.equivalent as f64 / self.trials as f64
    }

    /// Share of judged intervals covering the true change.
    pub fn coverage(&self) -> f64 {
        if self.intervals == 0 {
            f64::NAN
        } else {
            self.covered as f64 / self.intervals as f64
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct TrialOutcome {
    regression: bool,
    improvement: bool,
    equivalent: bool,
    /// Some(covered) when an interval existed.
    covered: Option<bool>,
    runs: usize,
}

/// A procedure prepared for many trials (cached null tables, ranks).
struct Prepared<'a> {
    procedure: &'a Procedure,
    tables: NullTables,
    /// Fixed/peeking interval per tested size, at 1 − α.
    naive_intervals: Vec<(usize, Option<RankInterval>)>,
    design: Option<FastDesign<'a>>,
    alpha: f64,
}

impl<'a> Prepared<'a> {
    fn new(procedure: &'a Procedure, scenario: &Scenario) -> Self {
        let alpha = if scenario.adjust && scenario.comparisons > 1 {
            scenario.alpha / scenario.comparisons as f64
        } else {
            scenario.alpha
        };
        let sizes: Vec<usize> = match procedure {
            Procedure::Fixed { runs } => vec![*runs],
            Procedure::Peeking { every, max } => {
                let mut sizes: Vec<usize> = (*every..*max).step_by((*every).max(1)).collect();
                sizes.push(*max);
                sizes
            }
            Procedure::Adaptive(_) => Vec::new(),
        };
        let mut tables = NullTables::default();
        for &size in &sizes {
            tables.prepare(size, size);
        }
        let naive_intervals = sizes
            .iter()
            .map(|&size| (size, RankInterval::new(size, size, 1.0 - alpha)))
            .collect();
        let design = match procedure {
            Procedure::Adaptive(design) => Some(FastDesign::new(design)),
            _ => None,
        };
        Self {
            procedure,
            tables,
            naive_intervals,
            design,
            alpha,
        }
    }

    /// One comparison of `baseline` with `candidate` (each `capacity` long).
    fn compare(&self, scenario: &Scenario, baseline: &[f64], candidate: &[f64]) -> TrialOutcome {
        if let Some(design) = &self.design {
            let (stop, arms) = design.replay(baseline, candidate);
            let decision = stop.decision.map(|(decision, _)| decision);
            return TrialOutcome {
                regression: decision == Some(Decision::Regression),
                improvement: decision == Some(Decision::Improvement),
                equivalent: decision == Some(Decision::Equivalent),
                covered: stop
                    .interval
                    .map(|interval| interval.covers(&arms, scenario.change)),
                runs: stop.runs,
            };
        }
        let mut arms = SortedArms::default();
        let mut filled = 0;
        let last = self.naive_intervals.len() - 1;
        for (index, &(size, interval)) in self.naive_intervals.iter().enumerate() {
            while filled < size {
                arms.push(baseline[filled], candidate[filled]);
                filled += 1;
            }
            let (p_value, u) =
                self.tables
                    .mann_whitney(&arms, &baseline[..size], &candidate[..size]);
            let significant = p_value < self.alpha;
            if significant || index == last {
                // U of the baseline above mn/2: the baseline tends to be larger.
                let candidate_lower = u > (size * size) as f64 / 2.0;
                let bad = match scenario.better {
                    Better::Higher => candidate_lower,
                    Better::Lower => !candidate_lower,
                };
                let equivalent = !significant
                    && interval.is_some_and(|interval| {
                        interval.classify(&arms, scenario.threshold, scenario.better)
                            == Some((
                                Decision::Equivalent,
                                crate::sequential::Magnitude::BelowThreshold,
                            ))
                    });
                return TrialOutcome {
                    regression: significant && bad,
                    improvement: significant && !bad,
                    equivalent,
                    covered: interval.map(|interval| interval.covers(&arms, scenario.change)),
                    runs: size,
                };
            }
        }
        unreachable!("the last size always returns")
    }

    fn trial(&self, scenario: &Scenario, seed: u64, trial: u64) -> TrialOutcome {
        let mut rng = ChaCha8Rng::seed_from_u64(trial_seed(seed, trial));
        let capacity = self.procedure.capacity();
        let comparisons = scenario.comparisons.max(1);
        let arms = scenario
            .noise
            .draw(&mut rng, comparisons + 1, capacity, scenario.change);
        let mut total = TrialOutcome {
            regression: false,
            improvement: false,
            equivalent: true,
            covered: Some(true),
            runs: 0,
        };
        let mut judged = false;
        for candidate in &arms[1..] {
            let outcome = self.compare(scenario, &arms[0], candidate);
            total.regression |= outcome.regression;
            total.improvement |= outcome.improvement;
            total.equivalent &= outcome.equivalent;
            total.runs = total.runs.max(outcome.runs);
            if let Some(covered) = outcome.covered {
                judged = true;
                total.covered = total.covered.map(|all| all && covered);
            }
        }
        if !judged {
            total.covered = None;
        }
        total
    }
}

/// SplitMix64 finaliser (Steele, Lea & Flood 2014) over seed and trial, so
/// neighbouring trials get unrelated ChaCha8 keys.
pub fn trial_seed(seed: u64, trial: u64) -> u64 {
    let mut z = seed ^ trial.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Runs `trials` trials of `procedure` under `scenario` with `seed`.
/// Deterministic for a seed regardless of the rayon thread count.
/// Complexity O(trials · per-trial cost); see the module doc.
pub fn simulate(scenario: &Scenario, procedure: &Procedure, trials: usize, seed: u64) -> Summary {
    let prepared = Prepared::new(procedure, scenario);
    let outcomes: Vec<TrialOutcome> = (0..trials as u64)
        .into_par_iter()
        .map(|trial| prepared.trial(scenario, seed, trial))
        .collect();
    let mut runs: Vec<usize> = outcomes.iter().map(|outcome| outcome.runs).collect();
    runs.sort_unstable();
    let count = |predicate: fn(&TrialOutcome) -> bool| -> usize {
        outcomes.iter().filter(|outcome| predicate(outcome)).count()
    };
    let p95_index = ((trials as f64 * 0.95).ceil() as usize).clamp(1, trials.max(1)) - 1;
    Summary {
        trials,
        regression: count(|outcome| outcome.regression),
        improvement: count(|outcome| outcome.improvement),
        equivalent: count(|outcome| {
            outcome.equivalent && !outcome.regression && !outcome.improvement
        }),
        undecided: count(|outcome| {
            !outcome.regression && !outcome.improvement && !outcome.equivalent
        }),
        covered: count(|outcome| outcome.covered == Some(true)),
        intervals: count(|outcome| outcome.covered.is_some()),
        mean_runs: runs.iter().sum::<usize>() as f64 / trials.max(1) as f64,
        p95_runs: runs.get(p95_index).copied().unwrap_or(0),
        max_runs: runs.last().copied().unwrap_or(0),
    }
}

/// Clopper–Pearson (1934) one-sided upper 95% bound of a rate from
/// `events` in `trials`, by bisection on the binomial tail. O(trials·60).
pub fn upper_bound_95(events: usize, trials: usize) -> f64 {
    if events >= trials {
        return 1.0;
    }
    // P(X <= events | p) for X ~ Binomial(trials, p), summed in logs.
    let tail = |p: f64| -> f64 {
        let (log_p, log_q) = (p.ln(), (-p).ln_1p());
        let mut log_term = trials as f64 * log_q;
        let mut sum = log_term.exp();
        for k in 0..events {
            log_term += ((trials - k) as f64 / (k + 1) as f64).ln() + log_p - log_q;
            sum += log_term.exp();
        }
        sum
    };
    let (mut low, mut high) = (events as f64 / trials as f64, 1.0);
    for _ in 0..60 {
        let middle = 0.5 * (low + high);
        if tail(middle) > 0.05 {
            low = middle;
        } else {
            high = middle;
        }
    }
    high
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequential::SequentialSettings;

    fn scenario(change: f64) -> Scenario {
        Scenario {
            noise: Noise {
                shape: Shape::Lognormal,
                cv: 0.13,
            },
            change,
            alpha: 0.05,
            threshold: 0.02,
            better: Better::Higher,
            comparisons: 1,
            adjust: true,
        }
    }

    #[test]
    fn same_seed_same_figures_on_any_thread_count() {
        let procedure = Procedure::Peeking { every: 5, max: 30 };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| simulate(&scenario(0.0), &procedure, 300, 7));
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| simulate(&scenario(0.0), &procedure, 300, 7));
        assert_eq!(one, two);
        let other_seed = simulate(&scenario(0.0), &procedure, 300, 8);
        assert_ne!(one, other_seed);
    }

    #[test]
    fn fixed_rule_holds_alpha_and_finds_large_changes() {
        let fixed = Procedure::Fixed { runs: 10 };
        let null = simulate(&scenario(0.0), &fixed, 2000, 1);
        // Exact test at n = 10: level ≤ 0.05; 3 standard errors = 0.0146.
        assert!(null.change_rate() <= 0.05 + 0.0146, "{null:?}");
        assert!(null.change_rate() > 0.02, "{null:?}");
        assert!(null.coverage() > 0.93, "{null:?}");
        let large = simulate(&scenario(-0.30), &fixed, 500, 1);
        assert!(large.regression_rate() > 0.95, "{large:?}");
        assert_eq!(large.improvement, 0);
    }

    #[test]
    fn adaptive_stops_early_on_large_changes() {
        let design =
            SequentialDesign::new(SequentialSettings::new(40, 0.05, Better::Higher)).unwrap();
        let summary = simulate(&scenario(-0.30), &Procedure::Adaptive(design), 300, 3);
        assert!(summary.regression_rate() > 0.95, "{summary:?}");
        assert!(summary.mean_runs < 12.0, "{summary:?}");
        assert!(summary.coverage() > 0.93, "{summary:?}");
    }

    #[test]
    fn upper_bound_matches_clopper_pearson() {
        // Clopper-Pearson: 0 of 100 -> 1 - 0.05^(1/100) = 0.02951,
        // 500 of 10000 -> 0.05373 (the binomial tail solved exactly).
        assert!((upper_bound_95(0, 100) - 0.029_52).abs() < 1e-4);
        assert!((upper_bound_95(500, 10_000) - 0.053_73).abs() < 1e-4);
        assert_eq!(upper_bound_95(5, 5), 1.0);
    }
}
