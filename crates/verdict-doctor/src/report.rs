//! The doctor's result: the serializable `DoctorReport` (JSON schema
//! `verdict.doctor/v1`), how it is produced (`run_doctor`), its text
//! rendering (80 columns) and its one-line summary.
//!
//! What it does: snapshot, probe, snapshot again, check, summarize,
//! recommend. Must not: print (the binary does), change the machine, or
//! plan runs with anything but verdict-stats' planner (`verdict plan` uses
//! the same one, so the two always agree).

use crate::checks::{self, Check, Status, Window, WindowUsage};
use crate::environment::{capture_environment, read_kernel_config};
use crate::facts;
use crate::files::{RealFiles, SystemFiles};
use crate::noise::{self, Iteration, NoiseSummary};
use crate::parse::{kconfig, lparcfg::Lparcfg, virtualization::Detection};
use crate::probe;
use crate::snapshot::Snapshot;
use serde::Serialize;
use std::time::{Duration, Instant};
use verdict_model::Environment;

/// The JSON schema name.
pub const SCHEMA: &str = "verdict.doctor/v1";

/// How long to calibrate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProbeLength {
    /// About 3 seconds in all.
    Quick,
    /// At most 15 seconds in all.
    Default,
    /// About a minute, for drift and rare interference.
    Long,
}

impl ProbeLength {
    /// The probe's time budget (the checks add milliseconds).
    pub fn budget(self) -> Duration {
        match self {
            Self::Quick => Duration::from_millis(2_500),
            Self::Default => Duration::from_secs(10),
            Self::Long => Duration::from_secs(60),
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Default => "default",
            Self::Long => "long",
        }
    }
}

/// Resolved doctor settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DoctorOptions {
    pub length: ProbeLength,
    /// The smallest relative change the user wants to detect (0.05 = 5%).
    pub threshold: f64,
    /// Two-sided significance level for the recommendation.
    pub alpha: f64,
    /// Power for the recommendation.
    pub power: f64,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        Self {
            length: ProbeLength::Default,
            threshold: 0.05,
            alpha: 0.05,
            power: verdict_stats::plan::DEFAULT_POWER,
        }
    }
}

/// The probe's measurements and their summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Calibration {
    /// What was measured: a fixed in-process CPU-bound loop.
    pub probe: String,
    pub rounds_per_iteration: u64,
    pub elapsed_seconds: f64,
    /// `None` when fewer than 3 iterations ran.
    pub summary: Option<NoiseSummary>,
    /// Every iteration, in order.
    pub iterations: Vec<Iteration>,
}

/// A user workload measured by doctor (`--experiment FILE`): the same
/// noise statistics as the probe, over the workload's own wall times.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkloadCalibration {
    pub name: String,
    pub summary: Option<NoiseSummary>,
    /// Runs per cell for the threshold at this workload's CV (same planner).
    pub runs_per_cell: Option<usize>,
}

/// Whose noise a recommendation is planned from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// doctor's CPU probe: the machine's floor.
    Probe,
    /// The user's workload (`--experiment`).
    Workload,
}

/// What doctor advises.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Recommendation {
    pub threshold: f64,
    pub alpha: f64,
    pub power: f64,
    /// The CV the plan used: the workload's when one was measured
    /// (`--experiment`), else the probe's.
    pub cv: Option<f64>,
    /// Whose CV that is: `probe`, or `workload` (the user's own, which is
    /// the noise the runs will have).
    pub noise_source: NoiseSource,
    /// Runs per cell from verdict-stats' planner (as `verdict plan`), a
    /// lower bound for real workloads, which vary more than the probe.
    pub runs_per_cell: Option<usize>,
    pub adaptive_advisable: bool,
    /// Why (or why not) adaptive sampling.
    pub adaptive_reason: String,
    /// The changes that would help most, best first (at most 3).
    pub changes: Vec<String>,
}

/// Everything doctor found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DoctorReport {
    pub schema: String,
    pub tool_version: String,
    pub options: DoctorOptions,
    pub environment: Environment,
    pub virtualization: Option<Detection>,
    pub lpar: Option<Lparcfg>,
    pub window: WindowUsage,
    pub checks: Vec<Check>,
    pub calibration: Calibration,
    pub recommendation: Recommendation,
    pub workloads: Vec<WorkloadCalibration>,
    /// Wall time doctor took, seconds.
    pub total_seconds: f64,
}

/// Runs doctor on this machine.
pub fn run_doctor(options: &DoctorOptions) -> DoctorReport {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks_per_second = if ticks > 0 { ticks as f64 } else { 100.0 };
    // Unoptimized (debug) builds run the fixed work about 2x slower (10 ns
    // against 4.6 ns per round here); half the rounds keeps iterations near
    // 20 ms there. The count is reported.
    let rounds = if cfg!(debug_assertions) {
        probe::ROUNDS_PER_ITERATION / 2
    } else {
        probe::ROUNDS_PER_ITERATION
    };
    run_doctor_with(
        &RealFiles,
        options,
        Some(std::process::id()),
        ticks_per_second,
        rounds,
    )
}

/// Runs doctor against any `SystemFiles` (fixtures in tests); the probe
/// itself always runs on the real CPU.
pub fn run_doctor_with(
    files: &dyn SystemFiles,
    options: &DoctorOptions,
    own_pid: Option<u32>,
    ticks_per_second: f64,
    rounds_per_iteration: u64,
) -> DoctorReport {
    let started = Instant::now();
    let environment = capture_environment(files);
    let before = Snapshot::full(files);
    let window_start = Instant::now();
    let run = probe::run(files, options.length.budget(), rounds_per_iteration);
    let after = Snapshot::counters(files);
    let seconds = window_start.elapsed().as_secs_f64();
    let config = read_kernel_config(files, environment.kernel_release.as_deref())
        .map(|config| kconfig::parse_options(&config.text));
    let window = Window {
        before: &before,
        after: &after,
        seconds,
        ticks_per_second,
        own_pid,
    };
    let mut report = assemble(options, environment, &window, config.as_ref(), run);
    report.total_seconds = started.elapsed().as_secs_f64();
    report
}

/// Builds the report from what was read and measured (pure: no clock, no
/// files). `total_seconds` is left at the window's length.
pub fn assemble(
    options: &DoctorOptions,
    environment: Environment,
    window: &Window<'_>,
    config: Option<&std::collections::BTreeMap<String, String>>,
    run: probe::ProbeRun,
) -> DoctorReport {
    let usage = checks::window_usage(window);
    let found = checks::run_checks(window, &usage, config);
    let summary = noise::summarize(&run.iterations);
    let recommendation = recommend(options, summary.as_ref(), &usage, &found);
    DoctorReport {
        schema: SCHEMA.to_string(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        options: *options,
        environment,
        virtualization: facts::virtualization(window.before),
        lpar: facts::lpar(window.before),
        window: usage,
        checks: found,
        calibration: Calibration {
            probe: "in-process CPU-bound loop (splitmix64 rounds), no memory traffic".to_string(),
            rounds_per_iteration: run.rounds_per_iteration,
            elapsed_seconds: run.elapsed_seconds,
            summary,
            iterations: run.iterations,
        },
        recommendation,
        workloads: Vec::new(),
        total_seconds: window.seconds,
    }
}

/// Runs per cell from verdict-stats' planner at the measured CV.
pub fn planned_runs(cv: f64, options: &DoctorOptions) -> Option<usize> {
    verdict_stats::plan::runs_per_cell(
        verdict_stats::plan::log_sd_from_cv(cv),
        options.threshold,
        options.alpha,
        options.power,
    )
}

/// Runs per cell above which adaptive sampling is advised: a plan this
/// long usually stops much earlier for clear effects.
const ADAPTIVE_ABOVE: usize = 20;

/// Builds the recommendation (pure).
pub fn recommend(
    options: &DoctorOptions,
    summary: Option<&NoiseSummary>,
    usage: &WindowUsage,
    checks: &[Check],
) -> Recommendation {
    let cv = summary.map(|summary| summary.cv);
    let runs = cv.and_then(|cv| planned_runs(cv, options));
    let (adaptive_advisable, adaptive_reason) = match (runs, summary) {
        (Some(runs), _) if runs > ADAPTIVE_ABOVE => (
            true,
            format!("the plan needs {runs} runs per cell; clear effects are decided much sooner"),
        ),
        (_, Some(summary)) if summary.bimodal || summary.drift_significant => (
            true,
            "the noise is bimodal or drifting; stop on evidence rather than a fixed count"
                .to_string(),
        ),
        (Some(runs), _) => (
            false,
            format!("{runs} runs per cell is short; a fixed count is simpler"),
        ),
        (None, _) => (false, "no noise measurement".to_string()),
    };
    // Fixes first for the sources the measurements implicate.
    let implicated = |id: &str| -> bool {
        match id {
            "steal" => {
                summary.is_some_and(|s| s.steal_correlation.is_some_and(|rho| rho > 0.3))
                    || usage.steal_fraction.is_some_and(|fraction| fraction > 0.01)
            }
            "other-processes" => {
                summary.is_some_and(|s| s.preemption_correlation.is_some_and(|rho| rho > 0.3))
                    || usage.other_cpus.is_some_and(|cpus| cpus > 0.1)
            }
            _ => false,
        }
    };
    let mut warned: Vec<&Check> = checks
        .iter()
        .filter(|check| check.status == Status::Warn && check.fix.is_some())
        .collect();
    warned.sort_by_key(|check| !implicated(&check.id));
    let changes = warned
        .iter()
        .take(3)
        .map(|check| format!("{}: {}", check.id, check.fix.clone().unwrap_or_default()))
        .collect();
    Recommendation {
        threshold: options.threshold,
        alpha: options.alpha,
        power: options.power,
        cv,
        noise_source: NoiseSource::Probe,
        runs_per_cell: runs,
        adaptive_advisable,
        adaptive_reason,
        changes,
    }
}

/// Greedy word wrap: the first line starts with `first`, the others with
/// `rest`; no line exceeds `width` unless a single word does.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let length = line.chars().count();
        if !empty && length + 1 + word.chars().count() > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines.join("\n")
}

/// A fraction as a short percentage number: 0.07 -> "7", 0.025 -> "2.5".
fn percent_number(value: f64) -> String {
    let text = format!("{:.2}", value * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn percent(value: f64) -> String {
    format!("{:.2}%", value * 100.0)
}

impl DoctorReport {
    /// The number of checks that warn.
    pub fn warnings(&self) -> usize {
        self.checks
            .iter()
            .filter(|check| check.status == Status::Warn)
            .count()
    }

    /// One line (at most 80 columns) for run reports, e.g.
    /// `noise: probe CV 1.23% (robust 0.80%), steal 0.0%, kvm, 2 warnings; 5% needs 3 runs/cell`.
    /// Add the calibration of a user workload (wall time per iteration and
    /// steal ticks during it), planned with the same planner as the probe.
    pub fn add_workload(
        &mut self,
        name: &str,
        iterations: &[crate::noise::Iteration],
        options: &DoctorOptions,
    ) {
        let summary = crate::noise::summarize(iterations);
        let runs_per_cell = summary
            .as_ref()
            .and_then(|summary| planned_runs(summary.cv, options));
        // The runs will have the workload's noise, not the probe's: plan
        // from it (the probe is the machine's floor).
        if let Some(measured) = &summary {
            self.recommendation = recommend(options, Some(measured), &self.window, &self.checks);
            self.recommendation.noise_source = NoiseSource::Workload;
        }
        self.workloads.push(WorkloadCalibration {
            name: name.to_string(),
            summary,
            runs_per_cell,
        });
    }

    pub fn summary_line(&self) -> String {
        let noise = match &self.calibration.summary {
            Some(summary) => format!("probe CV {}", percent(summary.cv)),
            None => "probe CV unknown".to_string(),
        };
        let steal = self
            .window
            .steal_fraction
            .map_or("steal ?".to_string(), |f| {
                format!("steal {:.1}%", f * 100.0)
            });
        let machine = self
            .virtualization
            .as_ref()
            .map_or("?".to_string(), Detection::label);
        let runs = self
            .recommendation
            .runs_per_cell
            .map_or("?".to_string(), |runs| runs.to_string());
        let tail = format!(
            "{} warn; {}% needs >= {runs} runs/cell",
            self.warnings(),
            percent_number(self.options.threshold)
        );
        let line = format!("noise: {noise}, {steal}, {machine}, {tail}");
        if line.chars().count() <= 80 {
            line
        } else {
            // A long machine label (e.g. kvm+container:kubernetes) goes first.
            format!("noise: {noise}, {steal}, {tail}")
        }
    }

    /// The report as text that fits 80 columns.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "verdict doctor ({}, {:.1} s)\n\n",
            self.options.length.word(),
            self.total_seconds
        ));
        self.text_machine(&mut out);
        self.text_checks(&mut out);
        out.push('\n');
        self.text_noise(&mut out);
        self.text_workloads(&mut out);
        out.push('\n');
        self.text_recommendation(&mut out);
        out
    }

    /// The text's `Machine` section: what the machine is.
    fn text_machine(&self, out: &mut String) {
        let environment = &self.environment;
        out.push_str("Machine\n");
        let machine = format!(
            "{} on {} {}, {} CPUs ({}), virtualization {}",
            environment.hostname.clone().unwrap_or_else(unknown),
            environment.kernel_release.clone().unwrap_or_else(unknown),
            environment.architecture.clone().unwrap_or_else(unknown),
            environment
                .cpu_count
                .map_or_else(unknown, |count| count.to_string()),
            environment.cpu_model.clone().unwrap_or_else(unknown),
            environment.virtualization.clone().unwrap_or_else(unknown),
        );
        out.push_str(&wrap(&machine, WIDTH, "  ", "  "));
    }

    /// The text's `Checks` section: each check's status, finding, evidence
    /// and fix.
    fn text_checks(&self, out: &mut String) {
        out.push_str("\n\nChecks\n");
        for check in &self.checks {
            let head = format!("{}: {}", check.id, check.finding);
            let first = format!("  {:<5} ", check.status.word());
            out.push_str(&wrap(&head, WIDTH, &first, "        "));
            out.push('\n');
            if !check.evidence.is_empty() {
                let evidence = format!("evidence: {}", check.evidence.join("; "));
                out.push_str(&wrap(&evidence, WIDTH, "        ", "          "));
                out.push('\n');
            }
            if let Some(fix) = &check.fix {
                out.push_str(&wrap(
                    &format!("fix: {fix}"),
                    WIDTH,
                    "        ",
                    "          ",
                ));
                out.push('\n');
            }
        }
    }

    /// The text's `Noise` section: the fixed CPU probe's summary.
    fn text_noise(&self, out: &mut String) {
        let calibration = &self.calibration;
        match &calibration.summary {
            Some(summary) => {
                out.push_str(&wrap(
                    &format!(
                        "Noise (fixed CPU probe: {} iterations of {:.1} ms in {:.1} s)",
                        summary.iterations,
                        summary.median_seconds * 1e3,
                        calibration.elapsed_seconds
                    ),
                    WIDTH,
                    "",
                    "  ",
                ));
                out.push('\n');
                let mut lines = vec![format!(
                    "CV {}, robust CV {}, range {:.2}..{:.2} ms, {} outlier{}",
                    percent(summary.cv),
                    summary.robust_cv.map_or_else(unknown, percent),
                    summary.min_seconds * 1e3,
                    summary.max_seconds * 1e3,
                    summary.outliers,
                    if summary.outliers == 1 { "" } else { "s" }
                )];
                let drift = match (summary.drift_rho, summary.drift_relative) {
                    (Some(rho), Some(relative)) => format!(
                        "drift: rank correlation with order {rho:.2} ({}); last third's median {:+.2}% from the first's",
                        if summary.drift_significant {
                            "significant"
                        } else {
                            "not significant"
                        },
                        relative * 100.0,
                    ),
                    _ => "drift: too few iterations".to_string(),
                };
                lines.push(drift);
                lines.push(match summary.bimodality_coefficient {
                    Some(value) => format!(
                        "bimodality coefficient {value:.2} ({})",
                        if summary.bimodal {
                            "two modes likely"
                        } else {
                            "one mode"
                        }
                    ),
                    None => "bimodality: not computable".to_string(),
                });
                let steal_window = self.window.steal_fraction.map_or_else(unknown, percent);
                lines.push(format!(
                    "steal {steal_window} of CPU time; in {:.0}% of iterations; correlation with slow iterations {}",
                    summary.iterations_with_steal * 100.0,
                    summary
                        .steal_correlation
                        .map_or("n/a (no steal)".to_string(), |rho| format!("{rho:.2}"))
                ));
                lines.push(format!(
                    "correlation of slow iterations with involuntary context switches {}",
                    summary
                        .preemption_correlation
                        .map_or("n/a (none)".to_string(), |rho| format!("{rho:.2}"))
                ));
                for line in lines {
                    out.push_str(&wrap(&line, WIDTH, "  ", "    "));
                    out.push('\n');
                }
            }
            None => out.push_str("Noise: too few probe iterations to summarize\n"),
        }
    }

    /// The text's `Workload` sections, one per workload measured.
    fn text_workloads(&self, out: &mut String) {
        for workload in &self.workloads {
            out.push_str(&format!("\nWorkload `{}`\n", workload.name));
            let line = match &workload.summary {
                Some(summary) => format!(
                    "{} iterations: CV {}, robust CV {}, median {:.3} s, drift {}{}; steal in {:.0}% of iterations; {}",
                    summary.iterations,
                    percent(summary.cv),
                    summary.robust_cv.map_or_else(unknown, percent),
                    summary.median_seconds,
                    summary
                        .drift_relative
                        .map_or("n/a".to_string(), |relative| format!(
                            "{:+.1}%",
                            relative * 100.0
                        )),
                    if summary.drift_significant {
                        " (significant)"
                    } else {
                        ""
                    },
                    summary.iterations_with_steal * 100.0,
                    match workload.runs_per_cell {
                        Some(runs) => format!(
                            "needs at least {runs} runs per cell for {:.1}%",
                            self.recommendation.threshold * 100.0
                        ),
                        None => "runs per cell unknown".to_string(),
                    }
                ),
                None => "too few successful iterations to summarize".to_string(),
            };
            out.push_str(&wrap(&line, WIDTH, "  ", "    "));
            out.push('\n');
        }
    }

    /// The text's `Recommendation` section: runs per cell, adaptive
    /// sampling and the changes that would help most.
    fn text_recommendation(&self, out: &mut String) {
        let recommendation = &self.recommendation;
        out.push_str(&format!(
            "Recommendation (threshold {:.1}%, alpha {}, power {})\n",
            recommendation.threshold * 100.0,
            recommendation.alpha,
            recommendation.power
        ));
        let plan = match (recommendation.runs_per_cell, recommendation.cv) {
            (Some(runs), Some(cv)) => match recommendation.noise_source {
                NoiseSource::Probe => format!(
                    "at least {runs} runs per cell to detect {:.1}% at the probe's CV {} (same planner as verdict plan); real workloads vary more: measure yours and re-plan",
                    recommendation.threshold * 100.0,
                    percent(cv)
                ),
                NoiseSource::Workload => format!(
                    "{runs} runs per cell to detect {:.1}% at the workload's CV {} (same planner as verdict plan and the report)",
                    recommendation.threshold * 100.0,
                    percent(cv)
                ),
            },
            _ => "runs per cell unknown: no noise measurement".to_string(),
        };
        out.push_str(&wrap(&plan, WIDTH, "  ", "  "));
        out.push('\n');
        out.push_str(&wrap(
            &format!(
                "adaptive sampling: {} ({})",
                if recommendation.adaptive_advisable {
                    "advisable"
                } else {
                    "not needed"
                },
                recommendation.adaptive_reason
            ),
            WIDTH,
            "  ",
            "  ",
        ));
        out.push('\n');
        if recommendation.changes.is_empty() {
            out.push_str("  no changes needed\n");
        } else {
            out.push_str("  changes that would help most:\n");
            for (index, change) in recommendation.changes.iter().enumerate() {
                out.push_str(&wrap(
                    &format!("{}. {change}", index + 1),
                    WIDTH,
                    "    ",
                    "       ",
                ));
                out.push('\n');
            }
        }
    }
}

/// Columns of the text report.
const WIDTH: usize = 80;

/// What the text shows for a fact that could not be read.
fn unknown() -> String {
    "?".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_respects_width_and_prefixes() {
        let text = "one two three four five six seven eight nine ten eleven twelve";
        let wrapped = wrap(text, 20, "  ", "    ");
        for line in wrapped.lines() {
            assert!(line.chars().count() <= 20, "{line:?}");
        }
        assert!(wrapped.starts_with("  one"));
        assert!(wrapped.lines().nth(1).unwrap().starts_with("    "));
        assert_eq!(wrap("", 20, "> ", "  "), "> ");
    }

    #[test]
    fn percent_numbers_are_short() {
        assert_eq!(percent_number(0.07), "7");
        assert_eq!(percent_number(0.025), "2.5");
        assert_eq!(percent_number(0.1), "10");
    }

    #[test]
    fn plan_agrees_with_verdict_stats() {
        let options = DoctorOptions::default();
        // 13% CV (this VM's stress-ng --kill), detect 5% at 90% power.
        let expected = verdict_stats::plan::runs_per_cell(
            verdict_stats::plan::log_sd_from_cv(0.13),
            0.05,
            0.05,
            0.9,
        );
        assert_eq!(planned_runs(0.13, &options), expected);
        // By hand: σ = sqrt(ln 1.0169) = 0.12949; (1.95996 + 1.28155)² = 10.5074;
        // 2·10.5074·(0.12949/0.04879)²/0.955 = 155.0 -> 155 or 156 by rounding up.
        let runs = planned_runs(0.13, &options).unwrap();
        assert!((155..=156).contains(&runs), "{runs}");
    }
}
