//! `verdict plan`: how many runs per cell an experiment needs, before it
//! starts. From a coefficient of variation, or from a stored pilot run (for
//! example an A/A run): the fixed design's runs per cell for the threshold,
//! α and power (printed at once), and the adaptive design's verdict rates
//! and expected and 95th-percentile runs (by normal-theory numerical
//! integration, `verdict_stats::sequential::operating_characteristics`, in
//! well under a second whatever the cap; `--trials N` adds a Monte-Carlo
//! check), the same for the adaptive design without a cap (it ends at the
//! information the threshold needs), and the block-paired fixed design's
//! runs for a within-block correlation (`--correlation`, or from a doctor
//! report's probe iterations with `--doctor FILE`); with a
//! per-iteration duration, the expected wall time.
//! Must not: simulate unless asked to (`--trials`).

use crate::common::{DbArgs, TextOrJson, parse_fraction};
use crate::error::CliError;
use std::io::Write;
use std::process::ExitCode;
use verdict_analysis::plan::{
    AdaptivePlan, AtThreshold, FixedPlan, MonteCarloCheck, NoChange, PLAN_SCHEMA, PairedPlan,
    PlanDocument, SimulatedAtThreshold, SimulatedNoChange, UncappedPlan,
};
use verdict_analysis::schema::sorted;
use verdict_engine::plan;
use verdict_model::{Experiment, RunId};
use verdict_report::Format;
use verdict_stats::plan::{
    PlannedTest, RunsNeeded, Spread, log_sd_from_cv, runs_needed, runs_per_cell,
};
use verdict_stats::sequential::{
    Better, InformationSettings, OperatingCharacteristics, SequentialSettings, cap_for_power,
    operating_characteristics,
};
use verdict_stats::simulate::Summary;

#[derive(Debug, clap::Args)]
pub(crate) struct PlanArgs {
    /// Run-to-run coefficient of variation (0.13 or 13%).
    #[arg(long, value_parser = parse_fraction, required_unless_present = "run")]
    pub(crate) cv: Option<f64>,
    /// Take the noise (the log-scale spread pooled over cells, with the
    /// range it leaves), the iteration time and the run's own threshold,
    /// alpha, power and comparisons from a stored pilot run.
    #[arg(long, value_name = "RUN_ID")]
    pub(crate) run: Option<i64>,
    /// Take the threshold, alpha, power and number of cells from an experiment file.
    #[arg(long, value_name = "FILE")]
    pub(crate) experiment: Option<std::path::PathBuf>,
    /// Smallest relative change worth detecting (0.05 or 5%; default: the
    /// experiment's, else the pilot run's, else 5%).
    #[arg(long, value_parser = parse_fraction)]
    pub(crate) threshold: Option<f64>,
    /// Two-sided error rate (0.05 or 5%; default: the experiment's, else 0.05).
    #[arg(long, value_parser = parse_fraction)]
    pub(crate) alpha: Option<f64>,
    /// Power (0.9 or 90%; default: the experiment's, else 0.9).
    #[arg(long, value_parser = parse_fraction)]
    pub(crate) power: Option<f64>,
    /// Correlation of the two cells' log values measured in the same
    /// interleaved block (0 to 0.99; drift and autocorrelated noise make it
    /// positive; default 0, independent noise), for the block-paired design.
    #[arg(long, value_parser = parse_fraction)]
    pub(crate) correlation: Option<f64>,
    /// Take the within-block correlation from a `verdict doctor --format
    /// json` report: the lag-1 autocorrelation of its probe iterations' log
    /// times (`--correlation` wins when both are given).
    #[arg(long, value_name = "FILE")]
    pub(crate) doctor: Option<std::path::PathBuf>,
    /// Number of cells (for wall time; default: the experiment's or the run's, else 2).
    #[arg(long)]
    pub(crate) cells: Option<usize>,
    /// Seconds per iteration (default: the pilot run's median wall time).
    #[arg(long)]
    pub(crate) seconds: Option<f64>,
    /// Also check the adaptive figures by Monte-Carlo with N trials per line
    /// (slow for large caps: minutes to hours; default: no simulation).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub(crate) trials: usize,
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// text or json (`verdict.plan/v1`).
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: TextOrJson,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

/// Settings resolved from flags, then the experiment file, then the pilot
/// run's own experiment, then defaults.
struct Resolved {
    threshold: f64,
    alpha: f64,
    power: f64,
    cells: Option<usize>,
    /// The comparisons the report will make: each is tested at α/k.
    comparisons: usize,
}

fn resolve(args: &PlanArgs, pilot: Option<&plan::Pilot>) -> Result<Resolved, CliError> {
    let experiment = match &args.experiment {
        Some(path) => Some(Experiment::load(path).map_err(CliError::input)?),
        None => None,
    };
    let sampling = experiment.as_ref().map(|experiment| &experiment.sampling);
    Ok(Resolved {
        threshold: args
            .threshold
            .or_else(|| {
                experiment
                    .as_ref()
                    .map(|e| e.primary_metric().threshold.unwrap_or(e.sampling.threshold))
            })
            .or(pilot.map(|pilot| pilot.threshold))
            .unwrap_or(0.05),
        alpha: args
            .alpha
            .or(sampling.map(|s| s.alpha))
            .or(pilot.map(|pilot| pilot.alpha))
            .unwrap_or(0.05),
        power: args
            .power
            .or(sampling.map(|s| s.power))
            .or(pilot.map(|pilot| pilot.power))
            .unwrap_or(verdict_stats::plan::DEFAULT_POWER),
        cells: args.cells.or(experiment.as_ref().map(|e| e.cells().len())),
        comparisons: experiment
            .as_ref()
            .map(|e| e.comparisons().len().max(1))
            .or(pilot.map(|pilot| pilot.comparisons))
            .unwrap_or(1),
    })
}

pub(crate) fn run(args: &PlanArgs) -> Result<ExitCode, CliError> {
    let format = match args.format {
        TextOrJson::Text => Format::Text,
        TextOrJson::Json => Format::Json,
    };
    let pilot = match args.run {
        Some(run) => Some(plan::pilot(&args.db.open_read_only()?, RunId(run))?),
        None => None,
    };
    let resolved = resolve(args, pilot.as_ref())?;
    let (threshold, power) = (resolved.threshold, resolved.power);
    // Each of the report's k comparisons is tested at α/k (Bonferroni):
    // plan at that level, as the report's "N runs would tell" does.
    let alpha = resolved.alpha / resolved.comparisons as f64;
    let (cv, spread, seconds, cells, source) = noise(args, pilot.as_ref(), &resolved);
    // The one planner behind every "N runs would tell" (reports, compare,
    // doctor), with the range the pilot's spread leaves.
    let needed = runs_needed(
        PlannedTest::RankTwoSample,
        spread,
        threshold.abs().ln_1p(),
        alpha,
        power,
        0,
    )
    .ok_or_else(|| {
        CliError::input(
            "cannot plan with these settings (check --cv, --threshold, --alpha, --power)",
        )
    })?;
    let fixed = needed.runs;
    let time = |runs: f64| wall_time(runs, cells, seconds);
    if format != Format::Json {
        // The fixed design first, at once: everything after it is extra.
        let level = if resolved.comparisons > 1 {
            format!(
                "alpha {} over {} comparisons ({alpha:.4} each)",
                resolved.alpha, resolved.comparisons
            )
        } else {
            format!("alpha {alpha}")
        };
        outln!(
            "noise: CV {:.1}% (from {source}); detect +-{:.1}% at {level} with power {}",
            cv * 100.0,
            threshold * 100.0,
            power
        );
        let range = if needed.low == needed.high {
            String::new()
        } else {
            format!(" [{}-{}: 80% range of the spread]", needed.low, needed.high)
        };
        outln!(
            "fixed design:    {fixed} runs per cell{range}{}",
            time(fixed as f64)
        );
        let _ = std::io::stdout().flush();
    }
    let cap = cap_for_power(cv, threshold, alpha, power).map_err(CliError::input)?;
    let mut settings = SequentialSettings::new(cap.max(6), threshold, Better::Lower);
    settings.alpha = alpha;
    let at_threshold =
        operating_characteristics(&settings, cv, threshold).map_err(CliError::input)?;
    let no_change = operating_characteristics(&settings, cv, 0.0).map_err(CliError::input)?;
    // Without a cap: under normal theory with the variance known, the
    // information-based design is the planned-cap design whose cap is the
    // target information in runs; its label-free variance estimate also
    // counts the shift (σ² + θ²/4), so a real change ends later.
    let uncapped = InformationSettings {
        alpha,
        power,
        ..InformationSettings::new(threshold, Better::Lower)
    };
    let uncapped_end = |change: f64| -> usize {
        let log_sd = log_sd_from_cv(cv).max(1e-9);
        let variance = log_sd * log_sd + change.ln_1p().powi(2) / 4.0;
        let runs = uncapped.target_information() * 2.0 * std::f64::consts::PI / 3.0 * variance;
        (runs.ceil() as usize).max(uncapped.min)
    };
    let uncapped_figures = |change: f64| {
        let end = uncapped_end(change);
        let mut settings = SequentialSettings::new(end, threshold, Better::Lower);
        settings.alpha = uncapped.design_alpha();
        settings.spending = uncapped.capped_spending(end);
        operating_characteristics(&settings, cv, change)
    };
    let uncapped_threshold = uncapped_figures(threshold).map_err(CliError::input)?;
    let uncapped_none = uncapped_figures(0.0).map_err(CliError::input)?;
    let (correlation, correlation_source) = within_block_correlation(args)?;
    // Block-paired: the within-block log ratio has variance 2σ²(1 − ρ);
    // the signed-rank test's efficiency is also 3/π (Lehmann 1975, §3.3),
    // so the two-sample planner at spread σ·sqrt(1 − ρ) gives its runs.
    let paired = runs_per_cell(
        log_sd_from_cv(cv) * (1.0 - correlation).sqrt(),
        threshold,
        alpha,
        power,
    )
    .ok_or_else(|| CliError::input("cannot plan the paired design with these settings"))?;
    let check = if args.trials > 0 {
        // Its cost grows with the square of the cap: say what it is doing.
        eprintln!(
            "verdict: simulating {} trials per line at a cap of {} runs per cell (Ctrl-C to stop)...",
            args.trials, settings.max
        );
        Some(plan::monte_carlo(settings, cv, args.trials, args.seed)?)
    } else {
        None
    };
    let method = format!(
        "normal-theory numerical integration (Armitage, McPherson & Rowe 1969; Jennison & Turnbull 2000, ch. 19), lognormal noise, rank test efficiency 3/pi, {} looks evaluated",
        at_threshold.looks_evaluated
    );
    let designs = Designs {
        source,
        cv,
        seconds,
        cells,
        needed,
        settings,
        method,
        at_threshold,
        no_change,
        check,
        uncapped,
        uncapped_end: uncapped_end(0.0),
        uncapped_threshold,
        uncapped_none,
        correlation,
        correlation_source,
        paired,
    };
    if format == Format::Json {
        let document = plan_document(args, &resolved, designs);
        let document = sorted(&document).map_err(CliError::internal)?;
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).map_err(CliError::internal)?
        );
        return Ok(ExitCode::SUCCESS);
    }
    print_designs(args, &resolved, &designs);
    Ok(ExitCode::SUCCESS)
}

/// Every design's figures, as `run` computed them.
struct Designs {
    source: String,
    cv: f64,
    seconds: f64,
    cells: usize,
    needed: RunsNeeded,
    settings: SequentialSettings,
    method: String,
    at_threshold: OperatingCharacteristics,
    no_change: OperatingCharacteristics,
    check: Option<(Summary, Summary)>,
    uncapped: InformationSettings,
    uncapped_end: usize,
    uncapped_threshold: OperatingCharacteristics,
    uncapped_none: OperatingCharacteristics,
    correlation: f64,
    correlation_source: String,
    paired: usize,
}

/// `verdict.plan/v1` from the figures.
fn plan_document(args: &PlanArgs, resolved: &Resolved, designs: Designs) -> PlanDocument {
    let Designs {
        source,
        cv,
        seconds,
        cells,
        needed,
        settings,
        method,
        at_threshold,
        no_change,
        check,
        uncapped,
        uncapped_end,
        uncapped_threshold,
        uncapped_none,
        correlation,
        correlation_source,
        paired,
    } = designs;
    let (threshold, power) = (resolved.threshold, resolved.power);
    let alpha = resolved.alpha / resolved.comparisons as f64;
    let fixed = needed.runs;
    let hours = |runs: f64| runs * cells as f64 * seconds / 3600.0;
    PlanDocument {
        schema: PLAN_SCHEMA,
        source,
        cv,
        threshold,
        alpha: resolved.alpha,
        comparisons: resolved.comparisons,
        level: alpha,
        power,
        cells,
        seconds_per_iteration: seconds,
        fixed: FixedPlan {
            runs_per_cell: fixed,
            range: [needed.low, needed.high],
            wall_hours: hours(fixed as f64),
        },
        adaptive: AdaptivePlan {
            procedure: verdict_report::escape::text(&settings.describe()),
            method,
            cap_per_cell: settings.max,
            if_change_is_threshold: at_threshold_figures(&at_threshold, hours),
            if_no_change: no_change_figures(&no_change, hours),
            trials: args.trials,
            monte_carlo: check.as_ref().map(|(at_threshold, no_change)| MonteCarloCheck {
                if_change_is_threshold: SimulatedAtThreshold {
                    mean_runs: at_threshold.mean_runs,
                    p95_runs: at_threshold.p95_runs,
                    power: at_threshold.regression_rate(),
                },
                if_no_change: SimulatedNoChange {
                    mean_runs: no_change.mean_runs,
                    p95_runs: no_change.p95_runs,
                    equivalent: no_change.equivalent_rate(),
                    false_alarms: no_change.change_rate(),
                },
            }),
        },
        adaptive_without_cap: UncappedPlan {
            procedure: verdict_report::escape::text(&uncapped.describe()),
            method: "normal theory with the variance known: the planned-cap design with the cap at the target information in runs (its pooled variance estimate includes the shift)".to_string(),
            planned_end_if_no_change: uncapped_end,
            if_change_is_threshold: at_threshold_figures(&uncapped_threshold, hours),
            if_no_change: no_change_figures(&uncapped_none, hours),
        },
        paired: PairedPlan {
            correlation,
            correlation_source,
            runs_per_cell: paired,
            wall_hours: hours(paired as f64),
        },
    }
}

/// A design's figures when the change is the threshold.
fn at_threshold_figures(
    figures: &OperatingCharacteristics,
    hours: impl Fn(f64) -> f64,
) -> AtThreshold {
    AtThreshold {
        mean_runs: figures.mean_runs,
        p95_runs: figures.p95_runs,
        power: figures.regression,
        wall_hours: hours(figures.mean_runs),
    }
}

/// A design's figures when nothing changed.
fn no_change_figures(figures: &OperatingCharacteristics, hours: impl Fn(f64) -> f64) -> NoChange {
    NoChange {
        mean_runs: figures.mean_runs,
        p95_runs: figures.p95_runs,
        equivalent: figures.equivalent,
        false_alarms: figures.change_rate(),
        wall_hours: hours(figures.mean_runs),
    }
}

/// `, ~N min for C cells` (or hours): the wall time of `runs` per cell,
/// when the seconds per iteration are known.
fn wall_time(runs: f64, cells: usize, seconds: f64) -> String {
    if seconds > 0.0 {
        let total = runs * cells as f64 * seconds;
        if total >= 3600.0 {
            format!(", ~{:.1} h for {cells} cells", total / 3600.0)
        } else {
            format!(", ~{:.0} min for {cells} cells", total / 60.0)
        }
    } else {
        String::new()
    }
}

/// The adaptive and block-paired designs as text (the fixed design is
/// printed first, before the slower figures are computed).
fn print_designs(args: &PlanArgs, resolved: &Resolved, designs: &Designs) {
    let Designs {
        cells,
        seconds,
        settings,
        method,
        at_threshold,
        no_change,
        check,
        uncapped_end,
        uncapped_threshold,
        uncapped_none,
        correlation,
        correlation_source,
        paired,
        ..
    } = designs;
    let threshold = resolved.threshold;
    let time = |runs: f64| wall_time(runs, *cells, *seconds);
    outln!(
        "adaptive design: cap {} per cell; if the change is {:.1}%: mean {:.1}, 95th pct {} runs per cell (power {:.2}){}",
        settings.max,
        threshold * 100.0,
        at_threshold.mean_runs,
        at_threshold.p95_runs,
        at_threshold.regression,
        time(at_threshold.mean_runs)
    );
    outln!(
        "                 if nothing changed: mean {:.1}, 95th pct {} runs per cell (ends equivalent {:.0}%){}",
        no_change.mean_runs,
        no_change.p95_runs,
        no_change.equivalent * 100.0,
        time(no_change.mean_runs)
    );
    if let Some((simulated_threshold, simulated_none)) = &check {
        outln!(
            "  Monte-Carlo check ({} trials per line): mean {:.1}, 95th pct {} (power {:.2}); nothing changed: mean {:.1}, 95th pct {} (equivalent {:.0}%)",
            args.trials,
            simulated_threshold.mean_runs,
            simulated_threshold.p95_runs,
            simulated_threshold.regression_rate(),
            simulated_none.mean_runs,
            simulated_none.p95_runs,
            simulated_none.equivalent_rate() * 100.0
        );
    }
    outln!(
        "  ({}; {method})",
        verdict_report::escape::text(&settings.describe())
    );
    outln!(
        "adaptive, no cap: ends by ~{} runs per cell; if the change is {:.1}%: mean {:.1}, 95th pct {} runs per cell (power {:.2}){}",
        uncapped_end,
        threshold * 100.0,
        uncapped_threshold.mean_runs,
        uncapped_threshold.p95_runs,
        uncapped_threshold.regression,
        time(uncapped_threshold.mean_runs)
    );
    outln!(
        "                 if nothing changed: mean {:.1}, 95th pct {} runs per cell (ends equivalent {:.0}%){}",
        uncapped_none.mean_runs,
        uncapped_none.p95_runs,
        uncapped_none.equivalent * 100.0,
        time(uncapped_none.mean_runs)
    );
    outln!(
        "block-paired:    {paired} runs per cell at within-block correlation {:.2} (from {}; fixed N, signed-rank on within-block log ratios){}",
        correlation,
        correlation_source,
        time(*paired as f64)
    );
}

/// The noise to plan for (the CV, the log-scale spread with its degrees
/// of freedom), the seconds per iteration, the cells and where the noise
/// came from: `--cv`, else the pilot run.
fn noise(
    args: &PlanArgs,
    pilot: Option<&plan::Pilot>,
    resolved: &Resolved,
) -> (f64, Spread, f64, usize, String) {
    match (pilot, args.cv) {
        (Some(pilot), measured) => (
            measured.unwrap_or(pilot.cv),
            match measured {
                Some(cv) => Spread {
                    sd: log_sd_from_cv(cv),
                    degrees: f64::INFINITY,
                },
                None => Spread {
                    sd: pilot.log_sd,
                    degrees: pilot.degrees as f64,
                },
            },
            args.seconds.unwrap_or(pilot.wall_seconds),
            resolved.cells.unwrap_or(pilot.cells),
            format!(
                "run {}: log-scale spread pooled over {} cells, {} degrees of freedom",
                args.run.unwrap_or_default(),
                pilot.cells,
                pilot.degrees
            ),
        ),
        (None, cv) => {
            let cv = cv.expect("clap requires --cv without --run");
            (
                cv,
                Spread {
                    sd: log_sd_from_cv(cv),
                    degrees: f64::INFINITY,
                },
                args.seconds.unwrap_or(0.0),
                resolved.cells.unwrap_or(2),
                "--cv".to_string(),
            )
        }
    }
}

/// The within-block correlation of the two cells' log values and where
/// it came from: `--correlation`, else a doctor report, else 0.
fn within_block_correlation(args: &PlanArgs) -> Result<(f64, String), CliError> {
    let (correlation, correlation_source) = match (args.correlation, &args.doctor) {
        (Some(correlation), _) => (correlation, "--correlation".to_string()),
        (None, Some(path)) => {
            let found = plan::doctor_correlation(path)?;
            (
                found.correlation,
                format!(
                    "doctor report {}: lag-1 autocorrelation of {} probe iterations' log times",
                    verdict_report::escape::text(&path.display().to_string()),
                    found.iterations
                ),
            )
        }
        (None, None) => (0.0, "default: independent noise".to_string()),
    };
    if !(0.0..1.0).contains(&correlation) {
        return Err(CliError::input(format!(
            "--correlation {correlation} is not in [0, 1): the within-block correlation of the two cells' log values"
        )));
    }
    Ok((correlation, correlation_source))
}
