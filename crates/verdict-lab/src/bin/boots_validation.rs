//! Prints the "Boot-to-boot variation" section of docs/validation.md
//! (docs/validation-boots.md): `cargo run --release -p verdict-lab
//! --bin boots_validation -- [TRIALS] [SEED]` (defaults 2000, 1).
//! Must not: write files (scripts/validate.sh redirects its output).

fn main() -> std::process::ExitCode {
    verdict_lab::run_report("boots_validation", 2000, |trials, seed, _| {
        Ok(verdict_lab::boots::boots_report(trials, seed))
    })
}
