//! Prints the "Adaptive stopping without a cap" section of
//! docs/validation-uncapped.md: `cargo run --release -p verdict-stats
//! --example uncapped_validation -- [TRIALS] [SEED]` (defaults 1000, 1).
//! Must not: write files (scripts/replay-uncapped.sh redirects its output).

fn main() {
    let mut arguments = std::env::args().skip(1);
    let trials = arguments
        .next()
        .map_or(1000, |value| value.parse().expect("TRIALS: a whole number"));
    let seed = arguments
        .next()
        .map_or(1, |value| value.parse().expect("SEED: a whole number"));
    print!(
        "{}",
        verdict_stats::sequential::validation::uncapped_report(trials, seed)
    );
}
