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
//! The answer never rests on a provisional call (see
//! `bisection/search_confirm.rs`).
//! Must not: do I/O, or use randomness.

use serde::{Deserialize, Serialize};

/// One call of a finished test, for the posterior.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

#[cfg(test)]
mod tests {
    use super::*;

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
