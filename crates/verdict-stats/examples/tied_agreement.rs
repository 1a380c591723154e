//! How often the reported p-value and the shift interval of
//! `verdict::compare` disagree on tied (integer-valued) data: p < α while
//! the 1 − α interval contains 0, or the reverse. Prints the rate for small
//! samples (≤ 25 per side, where the interval inverts the exact
//! tie-conditional test, so it must be 0) and for larger ones (normal
//! approximations with and without the tie correction), and what the
//! untied Moses/Bauer interval gave. The figures in docs/statistics.md
//! ("Ties") come from `cargo run --release -p verdict-stats --example
//! tied_agreement`. Must not: do anything but compute and print.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use verdict_stats::rank::mann_whitney;
use verdict_stats::shift::relative_shift;
use verdict_stats::verdict::{Better, CompareSettings, compare};

fn excludes_zero(interval: Option<verdict_stats::shift::Interval>) -> bool {
    interval.is_some_and(|interval| interval.low > 0.0 || interval.high < 0.0)
}

fn main() {
    let alpha = 0.05;
    let mut settings = CompareSettings::new(Better::Lower);
    settings.threshold = 0.05;
    for (label, sizes) in [("3-25 per side", 3..=25), ("26-60 per side", 26..=60)] {
        let mut rng = ChaCha8Rng::seed_from_u64(2026);
        let cases = 2000;
        let (mut now, mut before, mut significant) = (0, 0, 0);
        for _ in 0..cases {
            let m = rng.random_range(sizes.clone());
            let n = rng.random_range(sizes.clone());
            let shift = rng.random_range(0..=2);
            let spread = rng.random_range(2..=5);
            let baseline: Vec<f64> = (0..m)
                .map(|_| 10.0 + rng.random_range(0..spread) as f64)
                .collect();
            let candidate: Vec<f64> = (0..n)
                .map(|_| 10.0 + (shift + rng.random_range(0..spread)) as f64)
                .collect();
            let comparison = compare(&baseline, &candidate, &settings).unwrap();
            let rejects = comparison.p_value < alpha;
            significant += usize::from(rejects);
            if rejects != excludes_zero(comparison.shift.interval) {
                now += 1;
                println!(
                    "  disagree: p {} interval {:?}\n    B {baseline:?}\n    C {candidate:?}",
                    comparison.p_value, comparison.shift.interval
                );
            }
            let old_p = mann_whitney(&baseline, &candidate).p_value;
            let old = relative_shift(&baseline, &candidate, 1.0 - alpha).unwrap();
            if (old_p < alpha) != excludes_zero(old.interval) {
                before += 1;
            }
        }
        println!(
            "{label}: {cases} tied cases, {significant} with p < {alpha}; p and interval disagree in {now} ({:.1}%); with the untied interval {before} ({:.1}%)",
            100.0 * now as f64 / cases as f64,
            100.0 * before as f64 / cases as f64
        );
    }
    // Cost at the size limit: 500 vs 500 integer-valued (many distinct
    // differences), against the untied interval alone.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let baseline: Vec<f64> = (0..500)
        .map(|_| 1000.0 + rng.random_range(0..400) as f64)
        .collect();
    let candidate: Vec<f64> = (0..500)
        .map(|_| 1010.0 + rng.random_range(0..400) as f64)
        .collect();
    let started = std::time::Instant::now();
    let comparison = compare(&baseline, &candidate, &settings).unwrap();
    let tied = started.elapsed();
    let started = std::time::Instant::now();
    let untied = relative_shift(&baseline, &candidate, 1.0 - alpha).unwrap();
    println!(
        "500 vs 500 tied: inverted test {:.1} ms {:?} p {:.4}; untied interval {:.1} ms {:?}",
        tied.as_secs_f64() * 1e3,
        comparison.shift.interval,
        comparison.p_value,
        started.elapsed().as_secs_f64() * 1e3,
        untied.interval
    );
}
