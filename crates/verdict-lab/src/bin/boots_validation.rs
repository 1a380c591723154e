//! Prints the "Boot-to-boot variation" section of docs/validation.md
//! (docs/validation-boots.md): `cargo run --release -p verdict-lab
//! --bin boots_validation -- [TRIALS] [SEED]` (defaults 2000, 1).
//! Must not: write files (scripts/validate.sh redirects its output).

fn main() {
    let mut arguments = std::env::args().skip(1);
    let trials = arguments
        .next()
        .map_or(2000, |value| value.parse().expect("TRIALS: a whole number"));
    let seed = arguments
        .next()
        .map_or(1, |value| value.parse().expect("SEED: a whole number"));
    print!("{}", verdict_lab::boots::boots_report(trials, seed));
}
