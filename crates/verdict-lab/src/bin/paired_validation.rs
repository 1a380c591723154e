//! Prints the "Paired blocks against two independent samples" section of
//! docs/validation-paired.md: `cargo run --release -p verdict-lab
//! --bin paired_validation -- [TRIALS] [SEED]` (defaults 2000, 1); with
//! a third argument `null`, only the paired analysis's A/A false alarms
//! beside their exact rate.
//! Must not: write files (scripts/validate.sh redirects its output).

fn main() -> std::process::ExitCode {
    verdict_lab::run_report("paired_validation", 2000, |trials, seed, rest| {
        match rest.next().as_deref() {
            None => Ok(verdict_lab::paired::paired_report(trials, seed)),
            Some("null") => Ok(verdict_lab::paired::paired_null_report(trials, seed)),
            Some(other) => Err(format!("unknown section `{other}` (expected `null`)")),
        }
    })
}
