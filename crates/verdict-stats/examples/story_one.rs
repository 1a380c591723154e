//! The mailing-list case replayed (a "19% regression" measured with 15 runs per cell): 15 runs per cell at ~30% run-to-run
//! variation (lognormal, seeded), rescaled so each cell's median is the published one, fed to
//! `compare`. Prints what verdict would conclude; docs/statistics.md quotes
//! this output. Run: `cargo run -p verdict-stats --example story_one`.
//! Must not: claim to be the engineer's raw data (only medians were
//! published; the samples here are simulated around them).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use verdict_stats::multiplicity::holm;
use verdict_stats::plan::{log_sd_from_cv, runs_per_cell};
use verdict_stats::summary::summarize;
use verdict_stats::verdict::{Better, CompareSettings, compare};

fn cell(rng: &mut ChaCha8Rng, median: f64, runs: usize) -> Vec<f64> {
    // A lognormal's median is exp(μ).
    let noise = LogNormal::new(median.ln(), log_sd_from_cv(0.30)).expect("valid");
    let values: Vec<f64> = (0..runs).map(|_| noise.sample(rng)).collect();
    // Rescale so the sample median is exactly the published median.
    let sample_median = summarize(&values).expect("non-empty").median;
    values
        .iter()
        .map(|value| value * median / sample_median)
        .collect()
}

fn main() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let table = [
        ("Enforcing", 68_275.0, 70_154.0),
        ("Permissive", 68_082.0, 67_166.0),
        ("Disabled", 99_654.0, 100_510.0),
    ];
    let settings = CompareSettings {
        family_size: table.len(),
        ..CompareSettings::new(Better::Higher)
    };
    println!(
        "15 runs per cell, CV 30%, 3 comparisons: intervals at {:.4} (Bonferroni), t = ±2%",
        settings.interval_confidence()
    );
    let mut p_values = Vec::new();
    let mut rows = Vec::new();
    for (mode, old, new) in table {
        let baseline = cell(&mut rng, old, 15);
        let candidate = cell(&mut rng, new, 15);
        let comparison = compare(&baseline, &candidate, &settings).expect("valid samples");
        p_values.push(comparison.p_value);
        rows.push((mode, comparison));
    }
    let adjusted = holm(&p_values);
    for ((mode, comparison), adjusted_p) in rows.iter().zip(adjusted) {
        let interval = comparison.shift.interval.expect("15 runs give an interval");
        println!(
            "{mode:<11} {:>7.0} -> {:>7.0}  {:+6.1}% [{:+6.1}%, {:+6.1}%]  p={:.3} (Holm {:.3})  {:?}  runs needed {:?}  CV {:.0}%/{:.0}%",
            comparison.baseline.median,
            comparison.candidate.median,
            100.0 * comparison.shift.estimate,
            100.0 * interval.low,
            100.0 * interval.high,
            comparison.p_value,
            adjusted_p,
            comparison.verdict,
            comparison.runs_needed,
            100.0 * comparison.baseline.cv.unwrap_or(f64::NAN),
            100.0 * comparison.candidate.cv.unwrap_or(f64::NAN),
        );
    }
    let sd = log_sd_from_cv(0.30);
    for (shift, power) in [(0.02, 0.8), (0.03, 0.8), (0.10, 0.8), (0.19, 0.8)] {
        println!(
            "plan: detect ±{:.0}% with {:.0}% power at α=0.05: {:?} runs per cell",
            100.0 * shift,
            100.0 * power,
            runs_per_cell(sd, shift, 0.05, power)
        );
    }
    let first = compare(
        &[69_107.0],
        &[56_247.0],
        &CompareSettings::new(Better::Higher),
    )
    .expect("valid");
    println!(
        "first table, one run per cell: {:?} (interval {:?})",
        first.verdict, first.shift.interval
    );
}
