//! Test helpers: a measuring loop over the pure core with scripted or
//! simulated measurements, and the noise models of the simulations.
//! Must not: be used by the library (test-only).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use verdict_bisect::{Action, Bisection, CommitId, Config, Event, Outcome};

/// What one simulated commit measures like.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Script {
    /// Lognormal around this median.
    Median(f64),
    /// Cannot be built: the caller reports a skip.
    Skip,
}

/// Lognormal noise with coefficient of variation `cv`: sigma of the logs is
/// sqrt(ln(1 + cv²)).
pub fn lognormal(median: f64, cv: f64) -> LogNormal<f64> {
    LogNormal::new(median.ln(), (1.0 + cv * cv).ln().sqrt()).expect("valid lognormal")
}

pub fn ids(count: usize) -> Vec<CommitId> {
    (0..count)
        .map(|index| CommitId::new(format!("c{index:03}")))
        .collect()
}

/// Runs the bisection to the end with scripted commits (`scripts[0]` is
/// the good endpoint, the last the bad one) and seeded lognormal noise.
/// Returns the outcome (or the abort as Err) and every event recorded.
pub fn drive(
    config: Config,
    scripts: &[Script],
    cv: f64,
    seed: u64,
) -> (Result<Outcome, Action>, Vec<Event>, Bisection) {
    let order = ids(scripts.len());
    let mut bisection =
        Bisection::new(config, order[0].clone(), order[1..].to_vec()).expect("valid setup");
    let mut random = ChaCha8Rng::seed_from_u64(seed);
    let mut events = Vec::new();
    for _ in 0..100_000 {
        let event = match bisection.next_action() {
            Action::Done(outcome) => return (Ok(outcome), events, bisection),
            abort @ Action::Abort { .. } => return (Err(abort), events, bisection),
            Action::Measure { commit, runs } => {
                let position = order
                    .iter()
                    .position(|id| *id == commit)
                    .expect("known commit");
                match scripts[position] {
                    Script::Skip => Event::Skip {
                        commit,
                        reason: "build failed".to_owned(),
                    },
                    Script::Median(median) => {
                        let noise = lognormal(median, cv);
                        Event::Samples {
                            commit,
                            values: (0..runs).map(|_| noise.sample(&mut random)).collect(),
                        }
                    }
                }
            }
        };
        bisection.apply(&event).expect("valid event");
        events.push(event);
    }
    panic!("bisection did not finish in 100000 actions");
}

/// `count` commits (endpoints included) whose median is 1 before
/// `first_bad` and `1 + shift` from it on.
pub fn step_script(count: usize, first_bad: usize, shift: f64) -> Vec<Script> {
    (0..count)
        .map(|position| {
            Script::Median(if position >= first_bad {
                1.0 + shift
            } else {
                1.0
            })
        })
        .collect()
}
