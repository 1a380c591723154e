//! Prints the "Paired blocks against two independent samples" section of
//! docs/validation-paired.md: `cargo run --release -p verdict-lab
//! --bin paired_validation -- [TRIALS] [SEED]` (defaults 2000, 1); with
//! a third argument `null`, only the paired analysis's A/A false alarms
//! beside their exact rate.
//! Must not: write files (scripts/validate.sh redirects its output).

fn main() {
    let mut arguments = std::env::args().skip(1);
    let trials = arguments
        .next()
        .map_or(2000, |value| value.parse().expect("TRIALS: a whole number"));
    let seed = arguments
        .next()
        .map_or(1, |value| value.parse().expect("SEED: a whole number"));
    let report = match arguments.next().as_deref() {
        None => verdict_lab::paired::paired_report(trials, seed),
        Some("null") => verdict_lab::paired::paired_null_report(trials, seed),
        Some(other) => panic!("unknown section `{other}` (expected `null`)"),
    };
    print!("{report}");
}
