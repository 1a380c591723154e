//! verdict-lab: the research code behind verdict's documentation, kept out
//! of the product. The verdict binary does not depend on this crate; its
//! programs (src/bin) regenerate the validation documents
//! (scripts/validate.sh, scripts/replay-uncapped.sh) and replay design
//! variants that are not verdict's default (docs/research/).
//!
//! Modules: [`matrix`] (the validation matrix of docs/validation.md),
//! [`uncapped`] (adaptive stopping without a cap, and the variants of that
//! design with their command-line mini-language), [`edges`], [`paired`],
//! [`boots`] and [`changepoints`] (the sections of docs/validation-*.md).
//! Every figure comes from verdict-stats' own procedures, seeded; nothing
//! here reads a clock or writes a file (the scripts redirect the output).

pub mod boots;
pub mod changepoints;
pub mod edges;
pub mod matrix;
pub mod paired;
pub mod uncapped;

/// A program's whole front end: reads (trials, seed) from the command line
/// (defaults `default_trials`, 1), hands them and the remaining arguments
/// to `report`, prints what it returns; a bad argument is named on stderr
/// with exit 2.
pub fn run_report(
    program: &str,
    default_trials: usize,
    report: impl FnOnce(usize, u64, &mut dyn Iterator<Item = String>) -> Result<String, String>,
) -> std::process::ExitCode {
    let mut arguments = std::env::args().skip(1);
    let text = trials_and_seed(&mut arguments, default_trials).and_then(|(trials, seed)| {
        if trials == 0 {
            return Err("TRIALS must be at least 1".to_string());
        }
        report(trials, seed, &mut arguments)
    });
    match text {
        Ok(text) => {
            print!("{text}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{program}: {error}");
            std::process::ExitCode::from(2)
        }
    }
}

/// The first two command-line arguments as (trials, seed), with defaults;
/// [`run_report`]'s reading of them. Errors name the argument that failed.
fn trials_and_seed(
    arguments: &mut impl Iterator<Item = String>,
    default_trials: usize,
) -> Result<(usize, u64), String> {
    let trials = match arguments.next() {
        Some(value) => value
            .parse()
            .map_err(|_| format!("TRIALS: not a whole number: {value}"))?,
        None => default_trials,
    };
    let seed = match arguments.next() {
        Some(value) => value
            .parse()
            .map_err(|_| format!("SEED: not a whole number: {value}"))?,
        None => 1,
    };
    Ok((trials, seed))
}
