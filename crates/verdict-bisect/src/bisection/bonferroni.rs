//! The `bonferroni` design (until 2026-11; stored configs without a
//! `design` field replay with it). A candidate is measured in blocks G, X,
//! B then B, X, G against the endpoint runs of its own round's window, and
//! looked at at geometrically spaced block counts (`looks.rs`), each look
//! at `step_error` split equally over every look of every round; a retest
//! round is judged on its own runs.
//! Must not: do I/O, or use randomness.

use verdict_stats::shift::Shift;

use crate::blocks::{block_differences, blocked_shift};

use super::binary::{self, Round, Stepwise};
use super::designs::Design;
use super::stored::StoredBisection;
use super::{
    Action, Class, Config, Core, Decision, Direction, INTERMEDIATE_HIGH, INTERMEDIATE_LOW,
    looks_in_blocks,
};

/// The `bonferroni` design's state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bonferroni {
    /// Looks within one round of a candidate (its round's own runs).
    candidate_looks: Vec<usize>,
    rounds: Vec<Round>,
    /// Per commit, the looks of its current round already evaluated.
    looks_done: Vec<usize>,
}

/// The candidates' looks of a config, in blocks.
pub(crate) fn candidate_looks(config: &Config) -> Vec<usize> {
    looks_in_blocks(
        config.first_look,
        config.max_runs_per_step,
        config.max_batch,
        config.step_error * 2.0,
        config.retests + 1,
    )
}

/// Two-sided confidence of each candidate look's interval: each side's
/// error is `step_error` split over every look of every round (Bonferroni).
fn look_confidence(config: &Config, looks_per_round: usize) -> f64 {
    1.0 - 2.0 * config.step_error / (looks_per_round * (config.retests + 1)) as f64
}

impl Bonferroni {
    pub(crate) fn new(config: &Config, commits: usize) -> Self {
        Bonferroni {
            candidate_looks: candidate_looks(config),
            rounds: vec![Round::default(); commits],
            looks_done: vec![0; commits],
        }
    }

    pub(crate) fn load(stored: &StoredBisection) -> Self {
        Bonferroni {
            candidate_looks: stored.candidate_looks.clone(),
            rounds: stored.rounds(),
            looks_done: stored
                .commits
                .iter()
                .map(|state| state.looks_done)
                .collect(),
        }
    }

    pub(crate) fn store(&self, stored: &mut StoredBisection) {
        stored.candidate_looks = self.candidate_looks.clone();
        stored.set_rounds(&self.rounds);
        for (state, &looks_done) in stored.commits.iter_mut().zip(&self.looks_done) {
            state.looks_done = looks_done;
        }
    }
}

impl Stepwise for Bonferroni {
    fn target(&self, core: &Core) -> Option<usize> {
        binary::target(core, &self.rounds, core.bounds(self))
    }

    /// Classifies the commit in progress at `position` if its round has
    /// reached its next look and both endpoints have enough concurrent
    /// runs for that look.
    fn evaluate(&mut self, core: &mut Core, position: usize) {
        let Some(direction) = core
            .comparison
            .as_ref()
            .map(|comparison| comparison.direction)
        else {
            return;
        };
        if position == 0 || position == core.last() || core.commits[position].class.is_some() {
            return;
        }
        let state = &core.commits[position];
        let round = &self.rounds[position];
        let block = core.config.max_batch;
        let samples = &state.samples[round.round_start..];
        let good = core.concurrent(0, round.window_start);
        let bad = core.concurrent(core.last(), round.window_start);
        let blocks = samples.len().min(good.len()).min(bad.len()) / block;
        let mut looks_done = self.looks_done[position];
        let mut advanced = false;
        while self
            .candidate_looks
            .get(looks_done)
            .is_some_and(|&look| look <= blocks)
        {
            looks_done += 1;
            advanced = true;
        }
        if !advanced {
            return;
        }
        let exhausted = looks_done == self.candidate_looks.len();
        // One-sided error per look: step_error split over every look of
        // every round the commit can get.
        let confidence = look_confidence(&core.config, self.candidate_looks.len());
        let used = blocks * block;
        let (samples, good, bad) = (&samples[..used], &good[..used], &bad[..used]);
        let versus_good = blocked_shift(&block_differences(good, samples, block), confidence);
        let versus_bad = blocked_shift(&block_differences(bad, samples, block), confidence);
        self.looks_done[position] = looks_done;
        let Some(decision) = classify(
            direction,
            versus_good,
            versus_bad,
            exhausted,
            used,
            confidence,
        ) else {
            return;
        };
        self.record(core, position, decision);
    }
}

/// The call of one look: like-bad when X/G − 1 rejects towards B's side,
/// like-good when X/B − 1 rejects towards G's, either only when X is also
/// nearer that endpoint; undecided at the last look of the round.
fn classify(
    direction: Direction,
    versus_good: Option<Shift>,
    versus_bad: Option<Shift>,
    exhausted: bool,
    used: usize,
    confidence: f64,
) -> Option<Decision> {
    let towards_bad = |shift: Option<Shift>| {
        shift
            .and_then(|shift| shift.interval)
            .is_some_and(|interval| match direction {
                Direction::Higher => interval.low > 0.0,
                Direction::Lower => interval.high < 0.0,
            })
    };
    let towards_good = |shift: Option<Shift>| {
        shift
            .and_then(|shift| shift.interval)
            .is_some_and(|interval| match direction {
                Direction::Higher => interval.high < 0.0,
                Direction::Lower => interval.low > 0.0,
            })
    };
    // Where X sits between G (0) and B (1) on the log scale, from the
    // Hodges–Lehmann estimates against the concurrent endpoint samples:
    // with a = ln(X/G) and b = ln(X/B), ln(B/G) ≈ a − b and the fraction
    // is a/(a − b). A test rejecting G is only taken as like-bad when X
    // is also nearer B (|b| < |a|), and vice versa. These extra
    // conditions can only make a call rarer, so the error bound is
    // unchanged.
    let (Some(shift_good), Some(shift_bad)) = (versus_good, versus_bad) else {
        return None;
    };
    let (from_good, from_bad) = (shift_good.estimate.ln_1p(), shift_bad.estimate.ln_1p());
    let nearer_good = from_good.abs() < from_bad.abs();
    let nearer_bad = from_bad.abs() < from_good.abs();
    let fraction = if from_good == from_bad {
        0.5
    } else {
        from_good / (from_good - from_bad)
    };
    let (like_good, like_bad) = (towards_good(versus_bad), towards_bad(versus_good));
    let partial =
        like_good && like_bad && (INTERMEDIATE_LOW..=INTERMEDIATE_HIGH).contains(&fraction);
    let class = match (like_good, like_bad) {
        (true, _) if nearer_good => Class::Good,
        (_, true) if nearer_bad => Class::Bad,
        _ if exhausted => Class::Undecided,
        _ => return None,
    };
    Some(Decision {
        class,
        runs: used,
        endpoint_runs: (used, used),
        confidence,
        versus_good,
        versus_bad,
        fraction: Some(fraction),
        partial,
        reason: None,
    })
}

impl Design for Bonferroni {
    fn evaluate_endpoints(&mut self, core: &mut Core) {
        core.evaluate_endpoints(self);
    }

    fn before_samples(&mut self, core: &mut Core, position: usize) {
        let bounds = core.bounds(self);
        if binary::before_samples(core, &mut self.rounds, position, bounds, 0) {
            self.looks_done[position] = 0;
        }
    }

    fn samples_added(&mut self, core: &mut Core, position: usize, _values: &[f64]) {
        binary::samples_added(self, core, position);
    }

    fn next_action(&self, core: &Core) -> Action {
        let Some(position) = self.target(core) else {
            return Action::Done(core.outcome(self));
        };
        let state = &core.commits[position];
        let round = &self.rounds[position];
        // A commit whose round has not started yet (no runs, or undecided
        // and about to be retested) starts its window now.
        let starting = state.samples.is_empty() || state.class == Some(Class::Undecided);
        let (round_runs, window_start) = if starting {
            (0, core.settled_at)
        } else {
            (state.samples.len() - round.round_start, round.window_start)
        };
        let (good_concurrent, bad_concurrent) = core.concurrent_runs(window_start);
        // Blocks in turns G, X, B then B, X, G (a linear trend cancels over
        // two blocks); each block is `max_batch` runs of each.
        let block = core.config.max_batch;
        let complete = round_runs.min(good_concurrent).min(bad_concurrent) / block;
        let target = (complete + 1) * block;
        let turns = if complete % 2 == 0 {
            [
                (0, good_concurrent),
                (position, round_runs),
                (core.last(), bad_concurrent),
            ]
        } else {
            [
                (core.last(), bad_concurrent),
                (position, round_runs),
                (0, good_concurrent),
            ]
        };
        let (position, done) = turns
            .into_iter()
            .find(|(_, done)| *done < target)
            .unwrap_or(turns[2]);
        Action::Measure {
            commit: core.order[position].clone(),
            runs: target.saturating_sub(done).max(1),
        }
    }
}
