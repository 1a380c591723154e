//! Fast equivalents of the decision rules for Monte-Carlo use: the same
//! decisions as `rank::mann_whitney`, `shift::relative_shift` and
//! `sequential::SequentialDesign::look`, computed from counts over sorted
//! logs instead of selecting order statistics, with the null distributions
//! cached per sample size.
//!
//! Why: an exact Mann–Whitney null or interval rank costs O(m·n·mn) to build;
//! rebuilding it at every look of every trial would make 10,000 trials take
//! minutes. Must not: decide differently from the library functions it
//! stands in for (tests/simulate_fast.rs-style unit tests below compare them
//! on random samples).
//!
//! Identities used (d = pairwise differences log c_j − log b_i, d₍ₖ₎ the
//! k-th smallest): d₍ₖ₎ ≤ x ⇔ #{d ≤ x} ≥ k and d₍ₖ₎ < x ⇔ #{d < x} ≥ k; the
//! Mann–Whitney U of the baseline is #{d < 0} + ½·#{d = 0}. Each count is
//! one O(m+n) two-pointer pass over sorted logs.

use std::collections::HashMap;

use crate::rank::{EXACT_LIMIT_WITHOUT_TIES, mann_whitney, untied_pmf};
use crate::sequential::{Better, Decision, Magnitude, SequentialDesign};
use crate::shift::interval_rank;

/// Sorted logs of both arms, grown one run at a time.
#[derive(Debug, Default, Clone)]
pub(crate) struct SortedArms {
    pub(crate) baseline: Vec<f64>,
    pub(crate) candidate: Vec<f64>,
}

impl SortedArms {
    #[cfg(test)]
    pub(crate) fn from_values(baseline: &[f64], candidate: &[f64]) -> Self {
        let mut arms = Self::default();
        for &value in baseline {
            insert_sorted(&mut arms.baseline, value.ln());
        }
        for &value in candidate {
            insert_sorted(&mut arms.candidate, value.ln());
        }
        arms
    }

    pub(crate) fn push(&mut self, baseline: f64, candidate: f64) {
        insert_sorted(&mut self.baseline, baseline.ln());
        insert_sorted(&mut self.candidate, candidate.ln());
    }

    fn pairs(&self) -> u64 {
        self.baseline.len() as u64 * self.candidate.len() as u64
    }

    /// #{c_j − b_i ≤ x} (or < x when `strict`), computed as in shift.rs.
    pub(crate) fn count(&self, x: f64, strict: bool) -> u64 {
        let mut count = 0u64;
        let mut prefix = 0usize;
        let candidate = &self.candidate;
        for &base in &self.baseline {
            while prefix < candidate.len() && {
                let difference = candidate[prefix] - base;
                if strict {
                    difference < x
                } else {
                    difference <= x
                }
            } {
                prefix += 1;
            }
            count += prefix as u64;
        }
        count
    }

    fn has_ties(&self) -> bool {
        let mut pooled: Vec<f64> = self
            .baseline
            .iter()
            .chain(&self.candidate)
            .copied()
            .collect();
        pooled.sort_unstable_by(f64::total_cmp);
        pooled.windows(2).any(|pair| pair[0] == pair[1])
    }
}

fn insert_sorted(sorted: &mut Vec<f64>, value: f64) {
    let position = sorted.partition_point(|existing| *existing <= value);
    sorted.insert(position, value);
}

/// An order-statistic interval d₍ₖ₎ .. d₍mn+1−k₎ judged by counts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RankInterval {
    rank: u64,
}

impl RankInterval {
    /// The interval `relative_shift` would use at `confidence` for m, n.
    pub(crate) fn new(m: usize, n: usize, confidence: f64) -> Option<Self> {
        interval_rank(m, n, confidence).map(|(rank, _)| Self { rank })
    }

    /// Lower end > x (on the log scale).
    fn low_above(self, arms: &SortedArms, x: f64) -> bool {
        arms.count(x, false) < self.rank
    }

    /// Lower end ≥ x.
    fn low_at_least(self, arms: &SortedArms, x: f64) -> bool {
        arms.count(x, true) < self.rank
    }

    /// Upper end < x.
    fn high_below(self, arms: &SortedArms, x: f64) -> bool {
        arms.count(x, true) > arms.pairs() - self.rank
    }

    /// Upper end ≤ x.
    fn high_at_most(self, arms: &SortedArms, x: f64) -> bool {
        arms.count(x, false) > arms.pairs() - self.rank
    }

    /// Whether the interval contains the relative change `change`.
    pub(crate) fn covers(self, arms: &SortedArms, change: f64) -> bool {
        let x = change.ln_1p();
        !self.low_above(arms, x) && !self.high_below(arms, x)
    }

    /// The verdict region the interval is in, as `SequentialDesign` would
    /// classify it (interval on the bad/good side of 0, or inside (−t, t)).
    pub(crate) fn classify(
        self,
        arms: &SortedArms,
        threshold: f64,
        better: Better,
    ) -> Option<(Decision, Magnitude)> {
        let upper = threshold.ln_1p();
        let lower = (-threshold).ln_1p();
        let low_above_zero = self.low_above(arms, 0.0);
        let high_below_zero = self.high_below(arms, 0.0);
        let magnitude = if self.low_at_least(arms, upper) || self.high_at_most(arms, lower) {
            Magnitude::AboveThreshold
        } else if self.low_above(arms, lower) && self.high_below(arms, upper) {
            Magnitude::BelowThreshold
        } else {
            Magnitude::Unclear
        };
        let (bad_side, good_side) = match better {
            Better::Higher => (high_below_zero, low_above_zero),
            Better::Lower => (low_above_zero, high_below_zero),
        };
        if bad_side {
            Some((Decision::Regression, magnitude))
        } else if good_side {
            Some((Decision::Improvement, magnitude))
        } else if magnitude == Magnitude::BelowThreshold {
            Some((Decision::Equivalent, magnitude))
        } else {
            None
        }
    }
}

/// Exact no-ties Mann–Whitney null CDFs, cached per (m, n).
#[derive(Debug, Default)]
pub(crate) struct NullTables {
    cumulative: HashMap<(usize, usize), Vec<f64>>,
}

impl NullTables {
    /// Prepares the table for m, n (no-op above the exact limit).
    pub(crate) fn prepare(&mut self, m: usize, n: usize) {
        if m <= EXACT_LIMIT_WITHOUT_TIES && n <= EXACT_LIMIT_WITHOUT_TIES && m > 0 && n > 0 {
            self.cumulative.entry((m, n)).or_insert_with(|| {
                let half = m * n / 2;
                let mut total = 0.0;
                untied_pmf(m, n, half)
                    .into_iter()
                    .map(|probability| {
                        total += probability;
                        total
                    })
                    .collect()
            });
        }
    }

    /// Two-sided p-value and the baseline's U, exactly as
    /// `rank::mann_whitney` computes them; falls back to it for ties or
    /// sizes without a prepared table.
    pub(crate) fn mann_whitney(
        &self,
        arms: &SortedArms,
        baseline: &[f64],
        candidate: &[f64],
    ) -> (f64, f64) {
        let (m, n) = (arms.baseline.len(), arms.candidate.len());
        let table = self.cumulative.get(&(m, n));
        if let Some(table) = table
            && !arms.has_ties()
        {
            // Without ties, U of the baseline = #(b > c) = #{d < 0}.
            let u1 = arms.count(0.0, true) as f64;
            let u2 = (m * n) as f64 - u1;
            if u1 == u2 {
                return (1.0, u1);
            }
            let small = u1.min(u2).floor() as usize;
            // small < mn/2 here, so the cached half-table covers it.
            let p_value = (2.0 * table[small.min(table.len() - 1)]).min(1.0);
            return (p_value, u1);
        }
        let test = mann_whitney(baseline, candidate);
        (test.p_value, test.u)
    }
}

/// A `SequentialDesign` with its per-look interval ranks precomputed.
#[derive(Debug)]
pub(crate) struct FastDesign<'a> {
    pub(crate) design: &'a SequentialDesign,
    /// (runs per arm, interval) per planned look.
    looks: Vec<(usize, Option<RankInterval>)>,
}

/// Where a fast replay stopped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FastStop {
    pub(crate) runs: usize,
    pub(crate) decision: Option<(Decision, Magnitude)>,
    pub(crate) interval: Option<RankInterval>,
}

impl<'a> FastDesign<'a> {
    pub(crate) fn new(design: &'a SequentialDesign) -> Self {
        let looks = design
            .looks()
            .iter()
            .map(|look| {
                let interval = if look.nominal_confidence < 1.0 {
                    RankInterval::new(look.runs, look.runs, look.nominal_confidence)
                } else {
                    None
                };
                (look.runs, interval)
            })
            .collect();
        Self { design, looks }
    }

    /// The same stop as `sequential::replay` on these sequences (both at
    /// least `max` long), returning the sorted arms at the stop.
    pub(crate) fn replay(&self, baseline: &[f64], candidate: &[f64]) -> (FastStop, SortedArms) {
        let settings = self.design.settings();
        let mut arms = SortedArms::default();
        let mut filled = 0;
        let mut stop = FastStop {
            runs: 0,
            decision: None,
            interval: None,
        };
        for &(runs, interval) in &self.looks {
            while filled < runs {
                arms.push(baseline[filled], candidate[filled]);
                filled += 1;
            }
            stop = FastStop {
                runs,
                decision: interval.and_then(|interval| {
                    interval.classify(&arms, settings.threshold, settings.better)
                }),
                interval,
            };
            if stop.decision.is_some() {
                break;
            }
        }
        (stop, arms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequential::{LookState, SequentialSettings, replay};
    use crate::shift::relative_shift;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn sample(rng: &mut ChaCha8Rng, runs: usize, scale: f64) -> Vec<f64> {
        (0..runs)
            .map(|_| scale * (0.3 * (rng.random::<f64>() - 0.5)).exp())
            .collect()
    }

    #[test]
    fn cached_test_matches_mann_whitney() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut tables = NullTables::default();
        for &(m, n) in &[(5, 5), (10, 10), (12, 9), (20, 20), (60, 60)] {
            tables.prepare(m, n);
            for _ in 0..20 {
                let baseline = sample(&mut rng, m, 1.0);
                let candidate = sample(&mut rng, n, 1.04);
                let arms = SortedArms::from_values(&baseline, &candidate);
                let (p_value, u) = tables.mann_whitney(&arms, &baseline, &candidate);
                let reference = mann_whitney(&baseline, &candidate);
                assert_eq!(u, reference.u);
                assert!((p_value - reference.p_value).abs() < 1e-12, "{m} {n}");
            }
        }
    }

    #[test]
    fn counted_interval_matches_relative_shift() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for &(runs, confidence) in &[(6, 0.95), (10, 0.99), (15, 0.9), (30, 0.995)] {
            let interval = RankInterval::new(runs, runs, confidence).unwrap();
            for _ in 0..20 {
                let baseline = sample(&mut rng, runs, 1.0);
                let candidate = sample(&mut rng, runs, 1.05);
                let arms = SortedArms::from_values(&baseline, &candidate);
                let shift = relative_shift(&baseline, &candidate, confidence).unwrap();
                let reference = shift.interval.unwrap();
                for probe in [-0.1, -0.02, 0.0, 0.02, 0.05, 0.08, 0.12] {
                    let inside = reference.low <= probe && probe <= reference.high;
                    assert_eq!(
                        interval.covers(&arms, probe),
                        inside,
                        "{probe} {reference:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn fast_replay_matches_replay() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let mut settings = SequentialSettings::new(20, 0.05, Better::Higher);
        settings.block = 2;
        let design = SequentialDesign::new(settings).unwrap();
        let fast = FastDesign::new(&design);
        for trial in 0..40 {
            let scale = [1.0, 0.85, 1.02, 1.2][trial % 4];
            let baseline = sample(&mut rng, 20, 1.0);
            let candidate = sample(&mut rng, 20, scale);
            let (stop, _) = fast.replay(&baseline, &candidate);
            let reference = replay(&design, &baseline, &candidate);
            assert_eq!(stop.runs, reference.stopped_at);
            assert_eq!(
                stop.decision.map(|(decision, _)| decision),
                reference.decision
            );
            assert_eq!(
                stop.decision.map(|(_, magnitude)| magnitude),
                reference.magnitude
            );
            let look = design.look(&baseline[..stop.runs], &candidate[..stop.runs]);
            assert_ne!(look.state, LookState::Continue);
        }
    }
}
