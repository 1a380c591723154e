//! Monte-Carlo validation of `verdict explain`'s false-discovery control
//! (scripts/validate.sh appends its output to docs/validation.md):
//! 250 rows per trial shaped like an explained comparison (CPU times in
//! 10 ms ticks, counters from 0 to thousands with ties and zeros,
//! continuous values, profile shares), 10 iterations per side, each row
//! tested as explain tests it (`verdict_stats::verdict::compare`: the
//! Mann–Whitney p-value, ties included), then Benjamini–Hochberg and
//! Benjamini–Yekutieli at q = 0.05 over all rows at once.
//!
//! Scenarios: A/A with independent rows (BH's own conditions: the share
//! of trials with any discovery must be ≤ q); A/A with rows that move
//! together (a load factor per iteration, as counters on one machine do);
//! profile shares (negatively dependent: one symbol's gain is the others'
//! loss); and a tenth of the rows truly changed on top of the shared load
//! (the FDR, E[V/max(R,1)], and the power). Monte-Carlo standard errors
//! √(p(1−p)/T) beside every rate (for the FDR, the standard error of the
//! mean of V/R). Seeded: the same arguments give the same figures.
//!
//! `cargo run --release -p verdict-analysis --example explain_validation -- [TRIALS] [SEED]`

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution, LogNormal, Normal, Poisson};
use verdict_stats::fdr::{FdrMethod, adjust};
use verdict_stats::verdict::{Better, CompareSettings, compare};

const ROWS: usize = 250;
const ITERATIONS: usize = 10;
const Q: f64 = 0.05;

/// How a row's values are made (its kind decides ties and zeros).
#[derive(Clone, Copy)]
enum Kind {
    /// CPU time in 10 ms ticks, mean `ticks` per iteration.
    Ticks(f64),
    /// An event count with this mean.
    Count(f64),
    /// A continuous value with this coefficient of variation.
    Continuous(f64),
}

fn kinds(generator: &mut ChaCha8Rng) -> Vec<(Kind, f64)> {
    // (kind, sensitivity to the shared load: 0.5 to 1.5).
    let mut rows = Vec::with_capacity(ROWS);
    for index in 0..ROWS {
        let kind = match index % 5 {
            0 => Kind::Ticks(0.2 + 30.0 * generator.random::<f64>()),
            1 | 2 => Kind::Count(10f64.powf(-0.5 + 3.5 * generator.random::<f64>())),
            _ => Kind::Continuous(0.05 + 0.25 * generator.random::<f64>()),
        };
        rows.push((kind, 0.5 + generator.random::<f64>()));
    }
    rows
}

fn draw(kind: Kind, scale: f64, generator: &mut ChaCha8Rng) -> f64 {
    match kind {
        Kind::Ticks(mean) | Kind::Count(mean) => {
            let mean = (mean * scale).max(1e-9);
            Poisson::new(mean).map_or(0.0, |poisson| poisson.sample(generator))
        }
        Kind::Continuous(cv) => {
            let sigma = (1.0 + cv * cv).ln().sqrt();
            scale * LogNormal::new(0.0, sigma).expect("valid").sample(generator)
        }
    }
}

/// The p-value explain computes for a row.
fn p_value(baseline: &[f64], candidate: &[f64]) -> Option<f64> {
    let first = baseline[0];
    if baseline
        .iter()
        .chain(candidate)
        .all(|value| *value == first)
    {
        return None; // constant: not tested, as in explain
    }
    compare(
        baseline,
        candidate,
        &CompareSettings {
            threshold: 0.02,
            better: Better::Lower,
            alpha: Q,
            family_size: 1,
            power: verdict_stats::plan::DEFAULT_POWER,
        },
    )
    .ok()
    .map(|comparison| comparison.p_value)
}

/// One trial's p-values and which rows are truly changed. `load` is the
/// spread (log-scale standard deviation) of the per-iteration load factor
/// shared by every row; `changed` the share of rows with a real +50% shift.
fn counter_trial(generator: &mut ChaCha8Rng, load: f64, changed: f64) -> (Vec<f64>, Vec<bool>) {
    let rows = kinds(generator);
    let shared = Normal::new(0.0, load.max(1e-12)).expect("valid");
    let factors: Vec<f64> = (0..2 * ITERATIONS)
        .map(|_| {
            if load > 0.0 {
                shared.sample(generator)
            } else {
                0.0
            }
        })
        .collect();
    let mut p_values = Vec::new();
    let mut truth = Vec::new();
    for (kind, sensitivity) in rows {
        let real = generator.random::<f64>() < changed;
        let side = |offset: usize, effect: f64, generator: &mut ChaCha8Rng| -> Vec<f64> {
            (0..ITERATIONS)
                .map(|iteration| {
                    let scale = (sensitivity * factors[offset + iteration]).exp() * effect;
                    draw(kind, scale, generator)
                })
                .collect()
        };
        let baseline = side(0, 1.0, generator);
        let candidate = side(ITERATIONS, if real { 1.5 } else { 1.0 }, generator);
        if let Some(p) = p_value(&baseline, &candidate) {
            p_values.push(p);
            truth.push(real);
        }
    }
    (p_values, truth)
}

/// A/A on profile shares: every profiled iteration draws 400 samples over
/// 40 symbols from the same shares (multinomial, so the shares are
/// negatively dependent), self shares tested.
fn share_trial(generator: &mut ChaCha8Rng) -> (Vec<f64>, Vec<bool>) {
    const SYMBOLS: usize = 40;
    const SAMPLES: u64 = 400;
    let weights: Vec<f64> = (0..SYMBOLS).map(|rank| 1.0 / (rank as f64 + 1.0)).collect();
    let total: f64 = weights.iter().sum();
    let profile = |generator: &mut ChaCha8Rng| -> Vec<f64> {
        // Multinomial by successive binomials.
        let mut left = SAMPLES;
        let mut mass = 1.0;
        let mut counts = Vec::with_capacity(SYMBOLS);
        for weight in &weights {
            let share = weight / total;
            let p = if mass > 0.0 {
                (share / mass).min(1.0)
            } else {
                0.0
            };
            let count = Binomial::new(left, p).map_or(0, |binomial| binomial.sample(generator));
            counts.push(count as f64 / SAMPLES as f64);
            left -= count;
            mass -= share;
        }
        counts
    };
    let baseline: Vec<Vec<f64>> = (0..ITERATIONS).map(|_| profile(generator)).collect();
    let candidate: Vec<Vec<f64>> = (0..ITERATIONS).map(|_| profile(generator)).collect();
    let mut p_values = Vec::new();
    for symbol in 0..SYMBOLS {
        let column = |profiles: &[Vec<f64>]| {
            profiles
                .iter()
                .map(|shares| shares[symbol])
                .collect::<Vec<_>>()
        };
        if let Some(p) = p_value(&column(&baseline), &column(&candidate)) {
            p_values.push(p);
        }
    }
    let truth = vec![false; p_values.len()];
    (p_values, truth)
}

/// Over `trials`: the share of trials with any false discovery, the mean
/// false discovery proportion, and the mean share of true changes found,
/// for one method.
struct Tally {
    any_false: usize,
    proportions: Vec<f64>,
    power: Vec<f64>,
    tested: usize,
}

fn tally(
    trials: usize,
    method: FdrMethod,
    mut trial: impl FnMut() -> (Vec<f64>, Vec<bool>),
) -> Tally {
    let mut tally = Tally {
        any_false: 0,
        proportions: Vec::with_capacity(trials),
        power: Vec::new(),
        tested: 0,
    };
    for _ in 0..trials {
        let (p_values, truth) = trial();
        tally.tested += p_values.len();
        let adjusted = adjust(&p_values, method);
        let found: Vec<bool> = adjusted.iter().map(|value| *value <= Q).collect();
        let false_found = found
            .iter()
            .zip(&truth)
            .filter(|(found, real)| **found && !**real)
            .count();
        let true_found = found
            .iter()
            .zip(&truth)
            .filter(|(found, real)| **found && **real)
            .count();
        let discoveries = false_found + true_found;
        if false_found > 0 {
            tally.any_false += 1;
        }
        tally
            .proportions
            .push(false_found as f64 / discoveries.max(1) as f64);
        let real = truth.iter().filter(|real| **real).count();
        if real > 0 {
            tally.power.push(true_found as f64 / real as f64);
        }
    }
    tally
}

fn mean_and_error(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values
        .iter()
        .map(|value| (value - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0).max(1.0);
    (mean, (variance / n).sqrt())
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let trials: usize = arguments
        .get(1)
        .and_then(|text| text.parse().ok())
        .unwrap_or(2000);
    let seed: u64 = arguments
        .get(2)
        .and_then(|text| text.parse().ok())
        .unwrap_or(1);
    println!("## verdict explain: false discoveries over many rows\n");
    println!(
        "{trials} trials per scenario and method (seed {seed}); each trial {ROWS} rows (counters, CPU ticks, continuous values) or 40 profile shares, {ITERATIONS} iterations per side, every row tested as `verdict explain` tests it (Mann-Whitney with ties; constant rows untested), then Benjamini-Hochberg (BH) or Benjamini-Yekutieli (BY) at q = {Q} over all rows at once. `any false` is the share of trials with at least one false discovery (under A/A it equals the FDR); `FDR` is the mean false discovery proportion V/max(R,1); `power` the mean share of the truly changed rows found. Monte-Carlo standard errors in parentheses. Generated by `crates/verdict-analysis/examples/explain_validation.rs`.\n"
    );
    println!("| scenario | method | rows tested (mean) | any false | FDR | power |");
    println!("|---|---|---:|---:|---:|---:|");
    type Scenario = (
        &'static str,
        Box<dyn Fn(&mut ChaCha8Rng) -> (Vec<f64>, Vec<bool>)>,
    );
    let scenarios: Vec<Scenario> = vec![
        (
            "A/A, independent rows",
            Box::new(|generator| counter_trial(generator, 0.0, 0.0)),
        ),
        (
            "A/A, rows sharing a load factor (log-sd 0.3)",
            Box::new(|generator| counter_trial(generator, 0.3, 0.0)),
        ),
        (
            "A/A, profile shares (multinomial, 400 samples)",
            Box::new(share_trial),
        ),
        (
            "10% of rows +50%, shared load",
            Box::new(|generator| counter_trial(generator, 0.3, 0.1)),
        ),
        (
            "10% of rows +50%, independent",
            Box::new(|generator| counter_trial(generator, 0.0, 0.1)),
        ),
    ];
    for (name, scenario) in &scenarios {
        for method in [FdrMethod::BenjaminiHochberg, FdrMethod::BenjaminiYekutieli] {
            let mut generator = ChaCha8Rng::seed_from_u64(seed);
            let result = tally(trials, method, || scenario(&mut generator));
            let any = result.any_false as f64 / trials as f64;
            let any_error = (any * (1.0 - any) / trials as f64).sqrt();
            let (fdr, fdr_error) = mean_and_error(&result.proportions);
            let power = if result.power.is_empty() {
                "-".to_string()
            } else {
                let (power, power_error) = mean_and_error(&result.power);
                format!("{power:.3} ({power_error:.3})")
            };
            println!(
                "| {name} | {} | {:.0} | {any:.4} ({any_error:.4}) | {fdr:.4} ({fdr_error:.4}) | {power} |",
                match method {
                    FdrMethod::BenjaminiHochberg => "BH",
                    FdrMethod::BenjaminiYekutieli => "BY",
                },
                result.tested as f64 / trials as f64
            );
        }
    }
    println!();
}
