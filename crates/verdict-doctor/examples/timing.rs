//! Measures, on this machine, what doctor costs: the environment capture
//! recorded with every run (must stay well under 50 ms), a full snapshot,
//! and one probe iteration (aimed at about 20 ms). Run with
//! `cargo run --release -p verdict-doctor --example timing`.
//! Must not: be used as a test (timings depend on the machine's load).

use std::time::Instant;
use verdict_doctor::snapshot::Snapshot;
use verdict_doctor::{RealFiles, capture_environment, probe};

fn median_milliseconds(repeats: usize, mut action: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..repeats)
        .map(|_| {
            let started = Instant::now();
            action();
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[repeats / 2]
}

fn main() {
    let capture = median_milliseconds(21, || {
        std::hint::black_box(capture_environment(&RealFiles));
    });
    let snapshot = median_milliseconds(21, || {
        std::hint::black_box(Snapshot::full(&RealFiles));
    });
    let iteration = median_milliseconds(21, || {
        std::hint::black_box(probe::fixed_work(probe::ROUNDS_PER_ITERATION, 1));
    });
    println!("capture_environment: {capture:.2} ms (median of 21)");
    println!("Snapshot::full:      {snapshot:.2} ms (median of 21)");
    println!(
        "probe iteration:     {iteration:.2} ms ({} rounds, median of 21)",
        probe::ROUNDS_PER_ITERATION
    );
}
