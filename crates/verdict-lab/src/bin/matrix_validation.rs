//! Prints the validation matrix, the first part of docs/validation.md:
//! `cargo run --release -p verdict-lab --bin matrix_validation -- [TRIALS]
//! [SEED]` (defaults 10000, 1): every noise shape, true change and
//! procedure (fixed N, naive peeking, verdict's adaptive design), the
//! reference power table and the adaptive design's targets.
//! scripts/validate.sh runs it and appends the other sections.
//! Must not: write files (scripts/validate.sh redirects its output).

use std::process::ExitCode;

use verdict_lab::matrix::{ValidationSettings, validation_report};

fn main() -> ExitCode {
    let mut arguments = std::env::args().skip(1);
    match verdict_lab::trials_and_seed(&mut arguments, 10_000) {
        Ok((trials, seed)) if trials > 0 => {
            print!("{}", validation_report(ValidationSettings { trials, seed }));
            ExitCode::SUCCESS
        }
        Ok(_) => {
            eprintln!("matrix_validation: TRIALS must be at least 1");
            ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("matrix_validation: {error}");
            ExitCode::from(2)
        }
    }
}
