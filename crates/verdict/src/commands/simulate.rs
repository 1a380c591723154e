//! `verdict simulate`: Monte-Carlo validation of decision procedures over a
//! noise shape, or (`--validate`) the full validation matrix as the markdown
//! of docs/validation.md; with `--boots K` the naive and boot-unit analyses
//! of levels measured across K boots each with a boot effect
//! (`--validate-boots`: the "Boot-to-boot variation" section).
//!
//! What it does: resolves the flags into a `Scenario` and procedures, runs
//! them through verdict-analysis `simulate` (re-exported by verdict-report,
//! which renders the text), prints text or JSON. Must not: compute
//! statistics itself (all figures come from verdict-stats).

use std::process::ExitCode;

use verdict_report::simulate::{self, BootOutput, SimulateOutput, boot_results, procedure_results};
use verdict_stats::boots::rank_minimum_boots;
use verdict_stats::sequential::{Better, SequentialDesign, SequentialSettings};
use verdict_stats::simulate::boots::{BootScenario, boots_report};
use verdict_stats::simulate::validation::{ValidationSettings, validation_report};
use verdict_stats::simulate::{Noise, Procedure, Scenario, Shape};

use crate::error::CliError;

/// Which procedures to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ProcedureChoice {
    /// benchstat's fixed-N rule (Mann–Whitney p < alpha).
    Fixed,
    /// Testing every `--every` runs up to `--max`, stopping at the first p < alpha.
    Peeking,
    /// verdict's group-sequential design.
    Adaptive,
    /// All three.
    All,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SimulateFormat {
    Text,
    Json,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SimulateArgs {
    /// Noise shape: normal, lognormal, bimodal, student-t, ties,
    /// drift-interleaved, drift-sequential, contaminated.
    #[arg(long, default_value = "lognormal")]
    shape: String,
    /// Coefficient of variation of the noise (0.13 = 13%).
    #[arg(long, default_value_t = 0.13, allow_hyphen_values = true)]
    cv: f64,
    /// True relative change of the candidate, C/B - 1 (-0.1 = 10% lower; for
    /// a higher-is-better metric a negative change is a regression).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    change: f64,
    /// Trials per procedure.
    #[arg(long, default_value_t = 10_000)]
    trials: usize,
    /// Seed; the same seed gives the same figures on any number of threads.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Procedure(s) to simulate.
    #[arg(long, value_enum, default_value_t = ProcedureChoice::All)]
    procedure: ProcedureChoice,
    /// Runs per cell of the fixed-N rule.
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Cap on runs per cell for peeking and adaptive.
    #[arg(long, default_value_t = 60)]
    max: usize,
    /// Runs per cell between tests when peeking.
    #[arg(long, default_value_t = 5)]
    every: usize,
    /// Runs per cell before the adaptive design's first look.
    #[arg(long, default_value_t = 6)]
    min: usize,
    /// Practical threshold t for "equivalent" (0.02 or 2%).
    #[arg(long, default_value_t = 0.02, value_parser = crate::common::parse_fraction)]
    threshold: f64,
    /// Two-sided false-alarm rate (0.05 or 5%).
    #[arg(long, default_value_t = 0.05, value_parser = crate::common::parse_fraction)]
    alpha: f64,
    /// Candidates sharing one baseline (5 = a 6-cell report); a trial is a
    /// false alarm when any comparison says regression or improvement.
    #[arg(long, default_value_t = 1)]
    comparisons: usize,
    /// With several comparisons, do not adjust for multiplicity.
    #[arg(long)]
    no_adjust: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SimulateFormat::Text)]
    format: SimulateFormat,
    /// Run the full validation matrix and print docs/validation.md (markdown).
    #[arg(long)]
    validate: bool,
    /// Boots per level: simulate levels measured across boots, each boot
    /// shifting all its iterations by a random boot effect, and compare the
    /// naive analysis (iterations pooled) with the boot-unit analyses.
    #[arg(long)]
    boots: Option<usize>,
    /// With --boots: iterations measured in each boot.
    #[arg(long, default_value_t = 30)]
    iterations_per_boot: usize,
    /// With --boots: coefficient of variation of the boot effect (0.05 =
    /// 5%; 0 = no boot effect). --cv is the noise within a boot.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    boot_cv: f64,
    /// Print the "Boot-to-boot variation" section of docs/validation.md.
    #[arg(long)]
    validate_boots: bool,
}

pub(crate) fn run(args: &SimulateArgs) -> Result<ExitCode, CliError> {
    if args.trials == 0 {
        return Err(CliError::input("simulate: --trials must be at least 1"));
    }
    if args.validate {
        out!(
            "{}",
            validation_report(ValidationSettings {
                trials: args.trials,
                seed: args.seed,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.validate_boots {
        out!("{}", boots_report(args.trials, args.seed));
        return Ok(ExitCode::SUCCESS);
    }
    let shape = Shape::from_name(&args.shape).ok_or_else(|| {
        let names: Vec<&str> = Shape::ALL.iter().map(|shape| shape.name()).collect();
        CliError::input(format!(
            "simulate: unknown --shape {:?} (one of: {})",
            args.shape,
            names.join(", ")
        ))
    })?;
    if !(args.cv > 0.0 && args.cv.is_finite()) {
        return Err(CliError::input(format!(
            "simulate: --cv {} must be a positive number",
            args.cv
        )));
    }
    if !(args.change > -1.0 && args.change.is_finite()) {
        return Err(CliError::input(format!(
            "simulate: --change {} must be above -1",
            args.change
        )));
    }
    if let Some(boots) = args.boots {
        return run_boots(args, Noise { shape, cv: args.cv }, boots);
    }
    if args.runs < 2 || args.every == 0 || args.max < args.every || args.comparisons == 0 {
        return Err(CliError::input(
            "simulate: need --runs >= 2, --every >= 1, --max >= --every and --comparisons >= 1",
        ));
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(CliError::input(format!(
            "simulate: --alpha {} must be in (0, 1)",
            args.alpha
        )));
    }
    let adjust = !args.no_adjust;
    let scenario = Scenario {
        noise: Noise { shape, cv: args.cv },
        change: args.change,
        alpha: args.alpha,
        threshold: args.threshold,
        better: Better::Higher,
        comparisons: args.comparisons,
        adjust,
    };
    let mut procedures = Vec::new();
    let wanted = |choice| args.procedure == choice || args.procedure == ProcedureChoice::All;
    if wanted(ProcedureChoice::Fixed) {
        procedures.push(Procedure::Fixed { runs: args.runs });
    }
    if wanted(ProcedureChoice::Peeking) {
        procedures.push(Procedure::Peeking {
            every: args.every,
            max: args.max,
        });
    }
    if wanted(ProcedureChoice::Adaptive) {
        let mut settings = SequentialSettings::new(args.max, args.threshold, Better::Higher);
        settings.min = args.min;
        settings.alpha = if adjust && args.comparisons > 1 {
            args.alpha / args.comparisons as f64
        } else {
            args.alpha
        };
        let design = SequentialDesign::new(settings)
            .map_err(|error| CliError::input(format!("simulate: failed to {error}")))?;
        procedures.push(Procedure::Adaptive(design));
    }

    let results = procedure_results(&scenario, &procedures, args.trials, args.seed);
    match args.format {
        SimulateFormat::Json => {
            let output = SimulateOutput {
                schema: "verdict.simulate/v1",
                seed: args.seed,
                trials: args.trials,
                scenario: &scenario,
                results,
            };
            let text = serde_json::to_string_pretty(&output)
                .map_err(|error| CliError::internal(format!("failed to write JSON: {error}")))?;
            outln!("{text}");
        }
        SimulateFormat::Text => out!(
            "{}",
            simulate::render(args.trials, args.seed, &scenario, &results)
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// `verdict simulate --boots K`: the naive and boot-unit analyses of one
/// design with a boot effect.
fn run_boots(args: &SimulateArgs, noise: Noise, boots: usize) -> Result<ExitCode, CliError> {
    if boots == 0 || args.iterations_per_boot == 0 {
        return Err(CliError::input(
            "simulate: need --boots >= 1 and --iterations-per-boot >= 1",
        ));
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(CliError::input(format!(
            "simulate: --alpha {} must be in (0, 1)",
            args.alpha
        )));
    }
    if !(args.boot_cv >= 0.0 && args.boot_cv.is_finite()) {
        return Err(CliError::input(format!(
            "simulate: --boot-cv {} must be 0 or a positive number",
            args.boot_cv
        )));
    }
    let scenario = BootScenario {
        noise,
        boot_cv: args.boot_cv,
        boots,
        iterations: args.iterations_per_boot,
        change: args.change,
        alpha: args.alpha,
        threshold: args.threshold,
    };
    let results = boot_results(&scenario, args.trials, args.seed);
    match args.format {
        SimulateFormat::Json => {
            let output = BootOutput {
                schema: "verdict.simulate_boots/v1",
                seed: args.seed,
                trials: args.trials,
                scenario: &scenario,
                results,
            };
            let text = serde_json::to_string_pretty(&output)
                .map_err(|error| CliError::internal(format!("failed to write JSON: {error}")))?;
            outln!("{text}");
        }
        SimulateFormat::Text => out!(
            "{}",
            simulate::render_boots(
                args.trials,
                args.seed,
                &scenario,
                &results,
                rank_minimum_boots(scenario.alpha),
            )
        ),
    }
    Ok(ExitCode::SUCCESS)
}
