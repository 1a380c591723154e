//! Prints the "Adaptive stopping without a cap" section of
//! docs/validation-uncapped.md: `cargo run --release -p verdict-stats
//! --example uncapped_validation -- [TRIALS] [SEED]` (defaults 1000, 1), or
//! with a third argument `precise` the section that replays only verdict's
//! design without a cap (`precise GAMMA`: with Hwang–Shih–DeCani spending
//! of that γ instead of the design's own).
//! Must not: write files (scripts/replay-uncapped.sh redirects its output).

fn main() {
    let mut arguments = std::env::args().skip(1);
    let trials = arguments
        .next()
        .map_or(1000, |value| value.parse().expect("TRIALS: a whole number"));
    let seed = arguments
        .next()
        .map_or(1, |value| value.parse().expect("SEED: a whole number"));
    let report = match arguments.next().as_deref() {
        None => verdict_stats::sequential::validation::uncapped_report(trials, seed),
        Some("precise") => verdict_stats::sequential::validation::uncapped_precise_report(
            trials,
            seed,
            arguments
                .next()
                .map(|gamma| gamma.parse().expect("GAMMA: a number")),
        ),
        Some(other) => panic!("unknown section `{other}` (expected `precise`)"),
    };
    print!("{report}");
}
