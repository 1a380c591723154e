//! Prints docs/validation-edges.md: `cargo run --release -p verdict-lab
//! --bin edges_validation -- [TRIALS] [SEED]` (defaults 10000, 1):
//! agreement of every procedure's p-value and interval on tied data,
//! boots on a coarse grid, and the coverage of "N runs would tell".
//! Must not: write files (scripts/validate.sh redirects its output).

fn main() {
    let mut arguments = std::env::args().skip(1);
    let trials = arguments.next().map_or(10_000, |value| {
        value.parse().expect("TRIALS: a whole number")
    });
    let seed = arguments
        .next()
        .map_or(1, |value| value.parse().expect("SEED: a whole number"));
    print!("{}", verdict_lab::edges::edges_report(trials, seed));
}
