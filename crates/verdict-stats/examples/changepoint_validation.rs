//! Prints the change point section of docs/validation-history.md:
//! `cargo run --release -p verdict-stats --example changepoint_validation
//! -- [TRIALS] [SEED]` (defaults 2000, 1): false change points on
//! no-change series with heavy tails, steps found, and precision and
//! recall on series with several steps, for the rank method and Otava's.
//! Must not: write files (scripts/validate.sh redirects its output).

fn main() {
    let mut arguments = std::env::args().skip(1);
    let trials = arguments
        .next()
        .map_or(2000, |value| value.parse().expect("TRIALS: a whole number"));
    let seed = arguments
        .next()
        .map_or(1, |value| value.parse().expect("SEED: a whole number"));
    print!(
        "{}",
        verdict_stats::simulate::changepoints::changepoints_report(trials, seed)
    );
}
