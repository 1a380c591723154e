//! Test helpers: a measuring loop over the pure core with scripted or
//! simulated measurements, and the noise models of the simulations.
//! Must not: be used by the library (test-only).

use rand::{Rng, SeedableRng};
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
    drive_with(config, scripts, Noise::Pure { cv }, seed)
}

/// The machine's noise in a simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Noise {
    /// Independent lognormal noise with this coefficient of variation.
    Pure { cv: f64 },
    /// Lognormal noise times a machine load factor that is constant for a
    /// stretch of `min_stretch..=max_stretch` runs (counted over all
    /// commits: it is the machine's clock) and then jumps to a new value
    /// drawn uniformly in `[1 − swing, 1 + swing]`: other processes coming
    /// and going on a shared VM.
    Drift {
        cv: f64,
        swing: f64,
        min_stretch: usize,
        max_stretch: usize,
    },
    /// Lognormal noise times a factor drawn afresh for every run: 1 (the
    /// machine to itself) or, with probability `slow_share`, uniform in
    /// `[slow_low, slow_high]` (a run that shared the CPU with other
    /// builds): the development VM while other engineers build, where the
    /// bench's 2 ms program took 5–20 ms in about a third of its runs.
    Contended {
        cv: f64,
        slow_share: f64,
        slow_low: f64,
        slow_high: f64,
    },
}

/// The load factor of `Noise::Drift`, advanced one run at a time.
struct Load {
    factor: f64,
    left: usize,
}

impl Load {
    fn next(&mut self, noise: Noise, random: &mut ChaCha8Rng) -> f64 {
        if let Noise::Contended {
            slow_share,
            slow_low,
            slow_high,
            ..
        } = noise
        {
            return if random.random_bool(slow_share) {
                random.random_range(slow_low..=slow_high)
            } else {
                1.0
            };
        }
        let Noise::Drift {
            swing,
            min_stretch,
            max_stretch,
            ..
        } = noise
        else {
            return 1.0;
        };
        if self.left == 0 {
            self.factor = random.random_range(1.0 - swing..=1.0 + swing);
            self.left = random.random_range(min_stretch..=max_stretch);
        }
        self.left -= 1;
        self.factor
    }
}

/// `drive` under any noise model.
pub fn drive_with(
    config: Config,
    scripts: &[Script],
    noise: Noise,
    seed: u64,
) -> (Result<Outcome, Action>, Vec<Event>, Bisection) {
    let cv = match noise {
        Noise::Pure { cv } | Noise::Drift { cv, .. } | Noise::Contended { cv, .. } => cv,
    };
    let mut load = Load {
        factor: 1.0,
        left: 0,
    };
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
                        let lognormal = lognormal(median, cv);
                        Event::Samples {
                            commit,
                            values: (0..runs)
                                .map(|_| {
                                    let factor = load.next(noise, &mut random);
                                    factor * lognormal.sample(&mut random)
                                })
                                .collect(),
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
