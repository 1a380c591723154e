//! Prints the "Adaptive stopping without a cap" section of
//! docs/validation-uncapped.md: `cargo run --release -p verdict-lab
//! --bin uncapped_validation -- [TRIALS] [SEED]` (defaults 1000, 1), or
//! with a third argument
//! - `precise [VARIANT]`: the section that replays only verdict's design
//!   without a cap (with VARIANT, that variant instead: a bare number is a
//!   Hwang–Shih–DeCani γ, else `gamma=G,inflation=F,alpha=A,looks=runs|rank`);
//! - `grid VARIANT...`: every variant on the same draws, one table row each
//!   (power and runs at ±19%, A/A false alarms lognormal and bimodal);
//! - `threshold T CV VARIANT...`: power and runs of every variant at a
//!   change of T both ways, lognormal noise of that CV;
//! - `thresholds VARIANT...`: every variant at a true −19% (CV 30%) with
//!   thresholds 2%, 5% and 19%, at +19% (threshold 19%), and A/A;
//! - `histogram [VARIANT]`: where the A/A false alarms happen, by runs per arm.
//!
//! Must not: write files (scripts/replay-uncapped.sh redirects its output).

use verdict_lab::uncapped::{
    Variant, uncapped_alarm_histogram, uncapped_grid_report, uncapped_precise_report,
    uncapped_report, uncapped_threshold_report, uncapped_thresholds_report,
};

fn variant(spec: &str) -> Variant {
    Variant::parse(spec).unwrap_or_else(|error| panic!("{error}"))
}

/// The next argument parsed, or `default` when there is none.
fn next_number<T: std::str::FromStr>(
    arguments: &mut impl Iterator<Item = String>,
    default: T,
    name: &str,
) -> T {
    arguments.next().map_or(default, |value| {
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name}: not a number: {value}"))
    })
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let trials = next_number(&mut arguments, 1000, "TRIALS");
    let seed = next_number(&mut arguments, 1, "SEED");
    let report = match arguments.next().as_deref() {
        None => uncapped_report(trials, seed),
        Some("precise") => {
            uncapped_precise_report(trials, seed, arguments.next().as_deref().map(variant))
        }
        Some("grid") => {
            let variants: Vec<Variant> = arguments.map(|spec| variant(&spec)).collect();
            uncapped_grid_report(trials, seed, &variants)
        }
        Some("thresholds") => {
            let variants: Vec<Variant> = arguments.map(|spec| variant(&spec)).collect();
            uncapped_thresholds_report(trials, seed, &variants)
        }
        Some("threshold") => {
            let threshold = next_number(&mut arguments, 0.05, "THRESHOLD");
            let cv = next_number(&mut arguments, 0.05, "CV");
            let variants: Vec<Variant> = arguments.map(|spec| variant(&spec)).collect();
            uncapped_threshold_report(trials, seed, threshold, cv, &variants)
        }
        Some("histogram") => uncapped_alarm_histogram(
            trials,
            seed,
            arguments
                .next()
                .as_deref()
                .map_or_else(Variant::default, variant),
        ),
        Some(other) => panic!(
            "unknown section `{other}` (expected `precise`, `grid`, `threshold`, `thresholds` or `histogram`)"
        ),
    };
    print!("{report}");
}
