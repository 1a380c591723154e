//! The `search-confirm` design's search: the posterior over the
//! culprit's position from noisy calls, and the probe that halves it.
//!
//! Noisy binary search: each call "X is like-good" or "X is like-bad" is
//! taken as right with probability 1 − e (e the error of the test that
//! made it: `search_error` for a provisional call, `step_error` for a
//! strict one), wrong with probability e, independently. With the culprit
//! j (the first bad commit) uniform a priori, the posterior after the
//! calls is π(j) ∝ Π (1 − e or e), and the next probe is the commit at the
//! posterior's median, P(j ≤ X) nearest 1/2: the probabilistic bisection
//! algorithm (Horstein 1963; Ben-Or & Hassidim 2008; Waeber, Frazier &
//! Henderson 2013, who show its geometric convergence). A wrong
//! provisional call is not final: the calls after it move the mass back.
//! The answer never rests on a provisional call (see `bisection.rs`).
//!
//! When commits cost different amounts to probe (with `--worktrees` a
//! commit built before costs only its runs, a fresh one a build too), the
//! probe can instead be the commit with the most expected information
//! about the culprit per unit of expected cost: Lindley's (1956) expected
//! information of an experiment, here the mutual information between the
//! call at X and the culprit's position, I(X) = h(q(1 − e) + (1 − q)e) −
//! h(e) bits, with q = P(culprit ≤ X) and e the provisional call's error;
//! divided by X's expected cost (a greedy one-step rule: the most
//! information per unit of cost, not an optimal sequential plan). I(X) is
//! largest at q = 1/2 and falls as |q − 1/2| grows, so with equal costs it
//! picks the posterior's median (`probe_by_information`).
//! Must not: do I/O, or use randomness.

use serde::{Deserialize, Serialize};

/// One call of a finished test, for the posterior.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Call {
    /// Position in the order (0 = good endpoint).
    pub(crate) position: usize,
    /// Like-bad (true) or like-good.
    pub(crate) bad: bool,
    /// The error of the test that made it (its probability of being wrong).
    pub(crate) error: f64,
}

/// The log-likelihoods one piece of evidence about the commit at
/// `position` gives the culprit's positions: `bad` to every j ≤ position
/// (the commit is then like-bad), `good` to every j > position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Evidence {
    pub(crate) position: usize,
    pub(crate) bad: f64,
    pub(crate) good: f64,
}

impl Call {
    /// A call right with probability 1 − error.
    pub(crate) fn evidence(&self) -> Evidence {
        let (right, wrong) = ((-self.error).ln_1p(), self.error.ln());
        let (bad, good) = if self.bad {
            (right, wrong)
        } else {
            (wrong, right)
        };
        Evidence {
            position: self.position,
            bad,
            good,
        }
    }
}

/// Posterior probabilities of the culprit's position j for j in 0..=last
/// (j = 0 has probability 0: the good endpoint is good), from a uniform
/// prior on 1..=last and the `evidence`. O(n + e) by a difference array of
/// log-likelihoods.
pub(crate) fn posterior(last: usize, evidence: impl IntoIterator<Item = Evidence>) -> Vec<f64> {
    let mut increments = vec![0.0f64; last + 2];
    for item in evidence {
        let split = item.position.min(last);
        increments[1] += item.bad;
        increments[split + 1] += item.good - item.bad;
    }
    let mut log_likelihood = vec![f64::NEG_INFINITY; last + 1];
    let mut running = 0.0;
    for (position, value) in log_likelihood.iter_mut().enumerate().skip(1) {
        running += increments[position];
        *value = running;
    }
    let top = log_likelihood
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = log_likelihood
        .iter()
        .map(|value| (value - top).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    weights.iter().map(|weight| weight / total).collect()
}

/// Binary entropy in bits, h(p) = −p log₂ p − (1 − p) log₂(1 − p).
fn entropy(probability: f64) -> f64 {
    let term = |p: f64| if p > 0.0 { -p * p.log2() } else { 0.0 };
    term(probability) + term(1.0 - probability)
}

/// The expected information (bits) about the culprit of a call at a commit
/// with P(culprit ≤ commit) = `bad`, made with error `error` (Lindley
/// 1956): h(q(1 − e) + (1 − q)e) − h(e).
pub(crate) fn call_information(bad: f64, error: f64) -> f64 {
    entropy(bad * (1.0 - error) + (1.0 - bad) * error) - entropy(error)
}

/// A commit the search may probe: its position, P(culprit ≤ it), and its
/// expected cost in runs (expected runs to a call, plus the build in runs
/// if it is not built).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Probe {
    pub(crate) position: usize,
    pub(crate) bad: f64,
    pub(crate) cost: f64,
}

/// The probe with the most expected information per expected cost
/// (`call_information` / cost), ties to the one nearer the median, then
/// the earlier one. `None` for no candidates. O(c).
pub(crate) fn probe_by_information(candidates: &[Probe], error: f64) -> Option<usize> {
    candidates
        .iter()
        .map(|probe| {
            (
                call_information(probe.bad, error) / probe.cost,
                (probe.bad - 0.5).abs(),
                probe.position,
            )
        })
        .max_by(|first, second| {
            first
                .0
                .total_cmp(&second.0)
                .then(second.1.total_cmp(&first.1))
                .then(second.2.cmp(&first.2))
        })
        .map(|(_, _, position)| position)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn information_is_largest_at_the_median_and_zero_at_the_ends() {
        let error = 0.05;
        assert!((call_information(0.5, error) - (1.0 - entropy(error))).abs() < 1e-12);
        assert!(call_information(0.0, error).abs() < 1e-12);
        assert!(call_information(1.0, error).abs() < 1e-12);
        let mut previous = call_information(0.5, error);
        for step in 1..=50 {
            let below = call_information(0.5 - step as f64 / 100.0, error);
            let above = call_information(0.5 + step as f64 / 100.0, error);
            assert!((below - above).abs() < 1e-12);
            assert!(below < previous, "{step}");
            previous = below;
        }
    }

    #[test]
    fn equal_costs_pick_the_median_and_a_built_commit_wins_when_builds_cost() {
        let at = |position: usize, bad: f64, cost: f64| Probe {
            position,
            bad,
            cost,
        };
        let equal = [at(3, 0.2, 30.0), at(5, 0.45, 30.0), at(6, 0.58, 30.0)];
        assert_eq!(probe_by_information(&equal, 0.05), Some(5));
        // Equally far from the median: the earlier one, as the median rule.
        let tied = [at(4, 0.4, 30.0), at(6, 0.6, 30.0)];
        assert_eq!(probe_by_information(&tied, 0.05), Some(4));
        // Commit 3 is built; the others cost a build of 3000 runs.
        let costed = [at(3, 0.2, 30.0), at(5, 0.45, 3030.0), at(6, 0.58, 3030.0)];
        assert_eq!(probe_by_information(&costed, 0.05), Some(3));
        assert_eq!(probe_by_information(&[], 0.05), None);
    }

    #[test]
    fn posterior_follows_the_calls() {
        let uniform = posterior(4, []);
        assert_eq!(uniform[0], 0.0);
        assert!(uniform[1..].iter().all(|&p| (p - 0.25).abs() < 1e-12));
        // X = 2 like-good at error 0.1: j ∈ {3, 4} nine times as likely.
        let calls = [Call {
            position: 2,
            bad: false,
            error: 0.1,
        }];
        let after = posterior(4, calls.iter().map(Call::evidence));
        assert!((after[1] - 0.1 / 2.0).abs() < 1e-12, "{after:?}");
        assert!((after[3] - 0.9 / 2.0).abs() < 1e-12, "{after:?}");
        assert!((after.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
