//! The fixed-runs mode (`Config::fixed_runs`): a baseline without
//! statistics, kept to compare the designs with what a careful person with
//! N runs per commit would do. Each endpoint and each commit the binary
//! search visits is measured N times (in turns, at most `max_batch` runs
//! at a time); the endpoints' direction is the sign of their medians'
//! change and a commit goes with the endpoint whose median is nearer on
//! the log scale. No error bound.
//! Must not: do I/O, or use randomness.

use verdict_stats::shift::relative_shift;

use super::binary::{self, Round, Stepwise};
use super::designs::Design;
use super::stored::StoredBisection;
use super::{AbortReason, Action, Class, Core, Decision, Direction, median};

/// The fixed-runs mode's state: each commit's retest round (kept for the
/// binary search, although a median never leaves a commit undecided).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FixedRuns {
    /// Runs of each endpoint and each commit.
    runs: usize,
    rounds: Vec<Round>,
}

impl FixedRuns {
    pub(crate) fn new(runs: usize, commits: usize) -> Self {
        FixedRuns {
            runs,
            rounds: vec![Round::default(); commits],
        }
    }

    pub(crate) fn load(runs: usize, stored: &StoredBisection) -> Self {
        FixedRuns {
            runs,
            rounds: stored.rounds(),
        }
    }

    pub(crate) fn store(&self, stored: &mut StoredBisection) {
        stored.set_rounds(&self.rounds);
    }
}

impl Stepwise for FixedRuns {
    fn target(&self, core: &Core) -> Option<usize> {
        binary::target(core, &self.rounds, core.bounds(self))
    }

    /// Classifies `position` once it has its runs.
    fn evaluate(&mut self, core: &mut Core, position: usize) {
        if core.comparison.is_none()
            || position == 0
            || position == core.last()
            || core.commits[position].class.is_some()
        {
            return;
        }
        let samples = &core.commits[position].samples;
        if samples.len() < self.runs {
            return;
        }
        let good = &core.commits[0].samples;
        let bad = &core.commits[core.last()].samples;
        let value = median(samples).ln();
        let (to_good, to_bad) = (
            (value - median(good).ln()).abs(),
            (value - median(bad).ln()).abs(),
        );
        let versus_good = relative_shift(good, samples, 0.95);
        let versus_bad = relative_shift(bad, samples, 0.95);
        let span = median(bad).ln() - median(good).ln();
        let decision = Decision {
            class: if to_bad < to_good {
                Class::Bad
            } else {
                Class::Good
            },
            runs: samples.len(),
            endpoint_runs: core.endpoint_runs(),
            confidence: 0.95,
            versus_good,
            versus_bad,
            fraction: Some((value - median(good).ln()) / span),
            partial: false,
            reason: None,
        };
        self.record(core, position, decision);
    }
}

impl Design for FixedRuns {
    fn endpoint_action(&self, core: &Core) -> Action {
        let (good_runs, bad_runs) = core.endpoint_runs();
        core.measure_in_turns(&[
            (0, good_runs, self.runs),
            (core.last(), bad_runs, self.runs),
        ])
    }

    /// The direction is the sign of the median change; equal medians
    /// abort.
    fn evaluate_endpoints(&mut self, core: &mut Core) {
        let (good_runs, bad_runs) = core.endpoint_runs();
        if good_runs.min(bad_runs) < self.runs {
            return;
        }
        let good = median(&core.commits[0].samples);
        let bad = median(&core.commits[core.last()].samples);
        let shift = relative_shift(
            &core.commits[0].samples,
            &core.commits[core.last()].samples,
            0.95,
        );
        let direction = if bad > good {
            Some(Direction::Higher)
        } else if bad < good {
            Some(Direction::Lower)
        } else {
            None
        };
        match (direction, shift) {
            (Some(direction), Some(shift)) => core.settle(direction, shift, good_runs, bad_runs),
            _ => {
                core.abort = Some(AbortReason::EndpointsIndistinguishable {
                    shift,
                    good_runs,
                    bad_runs,
                });
            }
        }
    }

    fn before_samples(&mut self, core: &mut Core, position: usize) {
        let bounds = core.bounds(self);
        binary::before_samples(core, &mut self.rounds, position, bounds, 0);
    }

    fn samples_added(&mut self, core: &mut Core, position: usize, _values: &[f64]) {
        binary::samples_added(self, core, position);
    }

    fn next_action(&self, core: &Core) -> Action {
        match self.target(core) {
            Some(position) => core.measure_in_turns(&[(
                position,
                core.commits[position].samples.len(),
                self.runs,
            )]),
            None => Action::Done(core.outcome(self)),
        }
    }
}
