//! The "Boot-to-boot variation" section of docs/validation.md
//! (docs/validation-boots.md): naive pooling against boots as the unit,
//! over boot CV × boots per level, iterations per boot, and the four
//! boot-unit analyses on clean and contaminated noise. Every figure is
//! simulated by verdict-stats' `simulate::boots::simulate_boots` (the same
//! simulation `verdict simulate --boots` runs) with the given trials and
//! seed. Must not: do I/O or read a clock.

use std::fmt::Write as _;

use verdict_stats::boots::{BootMethod, BootSummary, BootTest};
use verdict_stats::simulate::boots::{BootAnalysis, BootScenario, simulate_boots};
use verdict_stats::simulate::{Noise, Shape};

/// Within-boot noise CV of the report's tables.
const NOISE_CV: f64 = 0.05;
/// Iterations per boot of the report's tables.
const ITERATIONS: usize = 30;
/// Boot CVs of the main table.
const BOOT_CVS: [f64; 3] = [0.0, 0.02, 0.05];
/// Boots per level of the main table.
const BOOT_COUNTS: [usize; 4] = [2, 3, 5, 8];
/// True change for power.
const POWER_CHANGE: f64 = 0.10;

fn table_scenario(noise: Noise, boot_cv: f64, boots: usize, change: f64) -> BootScenario {
    BootScenario {
        noise,
        boot_cv,
        boots,
        iterations: ITERATIONS,
        change,
        alpha: 0.05,
        threshold: 0.02,
    }
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// The markdown section "Boot-to-boot variation" of docs/validation.md:
/// naive against boot-unit false alarms and power over boot CV × boots per
/// level, then the four boot-unit analyses on clean and contaminated noise.
/// Every figure is simulated here with `trials` trials and `seed`.
pub fn boots_report(trials: usize, seed: u64) -> String {
    let mut out = String::new();
    main_table(&mut out, trials, seed);
    iterations_table(&mut out, trials, seed);
    choice_table(&mut out, trials, seed);
    out
}

/// Lognormal within-boot noise of the report's CV.
const LOGNORMAL: Noise = Noise {
    shape: Shape::Lognormal,
    cv: NOISE_CV,
};

/// The naive analysis, verdict's default boot-unit analysis and the rank
/// test over boot medians.
fn main_analyses() -> [BootAnalysis; 3] {
    [
        BootAnalysis::Naive,
        BootAnalysis::Boots(BootMethod::default()),
        BootAnalysis::Boots(BootMethod {
            summary: BootSummary::Median,
            test: BootTest::Rank,
        }),
    ]
}

/// The heading, the model, and naive against boot-unit false alarms and
/// power over boot CV × boots per level.
fn main_table(out: &mut String, trials: usize, seed: u64) {
    let lognormal = LOGNORMAL;
    let main = main_analyses();
    let _ = writeln!(out, "\n## Boot-to-boot variation\n");
    let _ = writeln!(
        out,
        "Reproduce: `cargo run --release -p verdict-lab --bin boots_validation -- \
         {trials} {seed}` ({trials} trials per point, seed {seed}; scripts/validate.sh appends \
         it here). One configuration at a time: `verdict simulate --boots K \
         --iterations-per-boot N --boot-cv X --cv 0.05 [--change 0.1]`.\n"
    );
    let _ = writeln!(
        out,
        "Each level (kernel) is booted K times; every boot multiplies all its {ITERATIONS} \
         iterations by one lognormal boot effect with the given CV (memory layout, cache \
         colouring, IRQ placement), and each iteration has its own lognormal noise of CV \
         {}%. Run times, lower is better, alpha = 0.05, threshold 2%. *naive*: every \
         iteration pooled as an independent sample (the two-sample analysis of an \
         experiment without boots). *verdict*: the boot as the unit, the median of each \
         boot's logs compared by Welch's t over boots (`boots::compare_boots`, the \
         default). *rank*: the same boot medians compared by the exact Mann-Whitney test \
         over boots. False alarms: A/A (the same kernel as both levels), a regression or \
         improvement called. Power: the candidate 10% slower, a regression called.\n",
        NOISE_CV * 100.0
    );
    let _ = writeln!(
        out,
        "| boot CV | boots per level | false alarms naive | false alarms verdict | false alarms rank | power naive | power verdict | power rank |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for boot_cv in BOOT_CVS {
        for boots in BOOT_COUNTS {
            let null = simulate_boots(
                &table_scenario(lognormal, boot_cv, boots, 0.0),
                &main,
                trials,
                seed,
            );
            let power = simulate_boots(
                &table_scenario(lognormal, boot_cv, boots, POWER_CHANGE),
                &main,
                trials,
                seed,
            );
            let _ = writeln!(
                out,
                "| {}% | {boots} | {} | {} | {} | {} | {} | {} |",
                boot_cv * 100.0,
                percent(null[0].change_rate()),
                percent(null[1].change_rate()),
                percent(null[2].change_rate()),
                percent(power[0].detection_rate(POWER_CHANGE)),
                percent(power[1].detection_rate(POWER_CHANGE)),
                percent(power[2].detection_rate(POWER_CHANGE)),
            );
        }
    }
    let error = (0.05 * 0.95 / trials as f64).sqrt();
    let _ = writeln!(
        out,
        "\nRead: the Monte-Carlo standard error of a rate near 5% is {:.2}%. With no boot \
         effect the naive analysis holds alpha; with a boot effect its false alarms are far \
         above alpha, and more boots do not bring them down: pooling reads the difference \
         between the boots of A and those of B as a kernel difference measured with the \
         precision of every iteration. Its power column is therefore no merit. The \
         boot-unit analysis stays at or below alpha for every K (Welch's t with equal boots \
         per level is conservative: its degrees of freedom are at most 2K - 2). With 2 or 3 \
         boots per level the rank test cannot call anything at alpha = 0.05 (smallest \
         two-sided p 1/3 and 1/10; it needs 4 boots per level), while Welch's t decides from \
         2. Its power at 2 boots is low; `boots_needed` says how many boots per level would \
         decide.\n",
        error * 100.0
    );
}

/// More iterations make the naive analysis worse, not better: A/A false
/// alarms as the iterations per boot grow.
fn iterations_table(out: &mut String, trials: usize, seed: u64) {
    let main = main_analyses();
    let _ = writeln!(
        out,
        "### More iterations per boot\n\n\
         Boot CV 2%, 3 boots per level, A/A: false alarms as the iterations per boot grow.\n"
    );
    let _ = writeln!(
        out,
        "| iterations per boot | false alarms naive | false alarms verdict |"
    );
    let _ = writeln!(out, "|---|---|---|");
    for iterations in [5, 30, 100] {
        let mut design = table_scenario(LOGNORMAL, 0.02, 3, 0.0);
        design.iterations = iterations;
        let null = simulate_boots(&design, &main[..2], trials, seed);
        let _ = writeln!(
            out,
            "| {iterations} | {} | {} |",
            percent(null[0].change_rate()),
            percent(null[1].change_rate()),
        );
    }
    let _ = writeln!(
        out,
        "\nRead: more iterations shrink the within-boot noise but not the boot effect, so \
         the naive analysis grows ever surer of a difference that is only the boots'. \
         Only more boots inform a comparison of kernels.\n"
    );
}

/// Choosing the summary and the test: the four boot-unit analyses on clean
/// and contaminated noise.
fn choice_table(out: &mut String, trials: usize, seed: u64) {
    let lognormal = LOGNORMAL;
    let contaminated = Noise {
        shape: Shape::Contaminated,
        cv: NOISE_CV,
    };
    let _ = writeln!(
        out,
        "### Choosing the boot summary and the test\n\n\
         Boot CV 2%, 5 boots per level, {ITERATIONS} iterations per boot, the four boot-unit \
         analyses on the same draws. *contaminated*: as lognormal, and 5% of the iterations \
         3x slower (a stray interrupt storm, a page-cache miss).\n"
    );
    let _ = writeln!(
        out,
        "| within-boot noise | analysis | false alarms | power at +10% | power at +5% | coverage at +5% |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let analyses = &BootAnalysis::ALL[1..];
    for (name, noise) in [
        ("lognormal CV 5%", lognormal),
        ("contaminated, CV 5%", contaminated),
    ] {
        let null = simulate_boots(&table_scenario(noise, 0.02, 5, 0.0), analyses, trials, seed);
        let large = simulate_boots(
            &table_scenario(noise, 0.02, 5, POWER_CHANGE),
            analyses,
            trials,
            seed,
        );
        let small = simulate_boots(
            &table_scenario(noise, 0.02, 5, 0.05),
            analyses,
            trials,
            seed,
        );
        for index in 0..analyses.len() {
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} | {} | {} |",
                analyses[index].label(),
                percent(null[index].change_rate()),
                percent(large[index].detection_rate(POWER_CHANGE)),
                percent(small[index].detection_rate(0.05)),
                percent(small[index].coverage()),
            );
        }
    }
    let _ = writeln!(
        out,
        "\nRead: on clean lognormal noise the mean of the logs is a little more efficient than \
         the median; one slow iteration in twenty moves a boot's mean log by ln 3/{ITERATIONS} \
         and costs the mean far more power than the median loses on clean noise, so verdict \
         summarises a boot by its median. Welch's t has more power than the rank test at \
         the same boots (the rank test's interval is coarse with few boots) and decides from \
         2 boots; the rank test remains available as the distribution-free choice \
         (`BootTest::Rank`) when there are enough boots."
    );
}
