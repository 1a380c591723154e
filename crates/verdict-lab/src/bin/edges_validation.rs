//! Prints docs/validation-edges.md: `cargo run --release -p verdict-lab
//! --bin edges_validation -- [TRIALS] [SEED]` (defaults 10000, 1):
//! agreement of every procedure's p-value and interval on tied data,
//! boots on a coarse grid, and the coverage of "N runs would tell".
//! Must not: write files (scripts/validate.sh redirects its output).

fn main() -> std::process::ExitCode {
    verdict_lab::run_report("edges_validation", 10_000, |trials, seed, _| {
        Ok(verdict_lab::edges::edges_report(trials, seed))
    })
}
