//! Timing of change point detection alone (no database): with Otava's
//! method a full `detect` over N points against `detect_incremental` after
//! appending one point, and the rank method's full `detect` (it keeps no
//! state), measured in the same process. `cargo run --release -p verdict-stats
//! --example changepoint_timing -- 10000`. Must not: be used as a test.

use std::time::Instant;

use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use verdict_stats::changepoint::{Settings, detect, detect_incremental};

fn main() {
    let length: usize = std::env::args()
        .nth(1)
        .map_or(10_000, |text| text.parse().expect("a point count"));
    let mut random = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let noise = Normal::new(0.0, 0.02).expect("valid normal");
    let series: Vec<f64> = (0..=length)
        .map(|index| {
            let level = if index > length * 7 / 10 { 1.15 } else { 1.0 };
            level * (1.0 + noise.sample(&mut random))
        })
        .collect();
    // Otava's method: its windows are what the incremental path saves.
    let settings = Settings::otava();
    let rounds = 20;
    let started = Instant::now();
    let mut previous = None;
    for _ in 0..rounds {
        previous = Some(detect(&series[..length], &settings).expect("valid series"));
    }
    let full = started.elapsed().as_secs_f64() / f64::from(rounds);
    let previous = previous.expect("ran");
    let started = Instant::now();
    let mut appended = None;
    for _ in 0..rounds {
        appended = Some(
            detect_incremental(&series, &settings, 1, &previous.weak_change_points)
                .expect("valid series"),
        );
    }
    let incremental = started.elapsed().as_secs_f64() / f64::from(rounds);
    let appended = appended.expect("ran");
    println!(
        "{length} points: detect {:.2} ms ({} windows); one point appended, detect_incremental {:.3} ms ({} windows); ratio {:.3}; {} and {} change points",
        full * 1e3,
        previous.windows_examined,
        incremental * 1e3,
        appended.windows_examined,
        incremental / full,
        previous.change_points.len(),
        appended.change_points.len()
    );
    let ranks = Settings::default();
    let started = Instant::now();
    let mut found = None;
    for _ in 0..rounds {
        found = Some(detect(&series[..length], &ranks).expect("valid series"));
    }
    let seconds = started.elapsed().as_secs_f64() / f64::from(rounds);
    let found = found.expect("ran");
    println!(
        "{length} points: ranks detect {:.2} ms, {} change points ({:?})",
        seconds * 1e3,
        found.change_points.len(),
        found
            .change_points
            .iter()
            .map(|point| point.index)
            .collect::<Vec<_>>()
    );
}
