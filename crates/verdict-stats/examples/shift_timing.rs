//! Times `relative_shift` on 10⁶ vs 10⁶ lognormal-ish values (the brief's
//! budget: under one second on two cores, release build). Run with
//! `cargo run --release -p verdict-stats --example shift_timing`.
//! Must not: be part of the test suite (it is a measurement, not a check).

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use verdict_stats::shift::relative_shift;

fn main() {
    let size: usize = std::env::args()
        .nth(1)
        .and_then(|argument| argument.parse().ok())
        .unwrap_or(1_000_000);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    // Values with ~30% spread and a 5% shift, plus coarse rounding for ties.
    let mut draw = |scale: f64| -> Vec<f64> {
        (0..size)
            .map(|_| {
                let noise: f64 = rng.random_range(-0.5..0.5) + rng.random_range(-0.5..0.5);
                (scale * (0.6 * noise).exp() * 100.0).round() / 100.0
            })
            .collect()
    };
    let baseline = draw(1000.0);
    let candidate = draw(1050.0);
    for _ in 0..3 {
        let start = Instant::now();
        let cpu_start = process_cpu_seconds();
        let shift = relative_shift(&baseline, &candidate, 0.95).expect("positive data");
        let elapsed = start.elapsed();
        let cpu = process_cpu_seconds() - cpu_start;
        println!(
            "{size} vs {size}: {:.3} s wall, {cpu:.3} s CPU, estimate {:+.4}, interval {:?}",
            elapsed.as_secs_f64(),
            shift.estimate,
            shift.interval
        );
    }
}

/// User + system CPU time of this process from /proc/self/stat (Linux),
/// so that a busy shared machine does not hide the real cost.
fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields overall, in clock ticks (100 per second on Linux).
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |index: usize| {
        fields
            .get(index)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}
