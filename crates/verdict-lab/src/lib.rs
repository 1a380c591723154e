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

/// The first two command-line arguments as (trials, seed), with defaults;
/// the programs' shared front end. Errors name the argument that failed.
pub fn trials_and_seed(
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
