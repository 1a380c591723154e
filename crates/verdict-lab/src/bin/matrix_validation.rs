//! Prints the validation matrix, the first part of docs/validation.md:
//! `cargo run --release -p verdict-lab --bin matrix_validation -- [TRIALS]
//! [SEED]` (defaults 10000, 1): every noise shape, true change and
//! procedure (fixed N, naive peeking, verdict's adaptive design), the
//! reference power table and the adaptive design's targets.
//! scripts/validate.sh runs it and appends the other sections.
//! Must not: write files (scripts/validate.sh redirects its output).

use verdict_lab::matrix::{ValidationSettings, validation_report};

fn main() -> std::process::ExitCode {
    verdict_lab::run_report("matrix_validation", 10_000, |trials, seed, _| {
        Ok(validation_report(ValidationSettings { trials, seed }))
    })
}
