//! What `verdict plan` measures from: a stored pilot run's noise (the
//! pooled log-scale spread within cells of the primary metric, as the
//! report plans from, and the median wall time of an iteration) and its
//! own settings, the within-block correlation a doctor JSON report's
//! probe iterations show, and on request the Monte-Carlo check of the
//! adaptive design. Must not print or render; the statistics are
//! verdict-stats'.

use std::path::Path;

use verdict_model::{Experiment, RunId};
use verdict_stats::sequential::{Better, SequentialDesign, SequentialSettings};
use verdict_stats::simulate::{Noise, Procedure, Scenario, Shape, Summary, simulate};
use verdict_stats::summary::summarize;
use verdict_store::Store;

use crate::error::CommandError;

/// The measured noise of a stored run, and the settings its report
/// decides with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pilot {
    /// The primary metric's spread within cells: the standard deviation
    /// of the logs pooled over the cells (as the report's "N runs would
    /// tell" pools it over a comparison's two cells) ...
    pub log_sd: f64,
    /// ... and its degrees of freedom (runs minus cells).
    pub degrees: usize,
    /// That spread as a CV, sqrt(exp(σ²) − 1).
    pub cv: f64,
    /// Median wall seconds per iteration (0 without data).
    pub wall_seconds: f64,
    pub cells: usize,
    /// The primary metric's threshold (its own, else the experiment's).
    pub threshold: f64,
    pub alpha: f64,
    pub power: f64,
    /// The comparisons the run's report makes (its multiplicity family).
    pub comparisons: usize,
}

/// The measured noise of the stored run `run`.
pub fn pilot(store: &dyn Store, run: RunId) -> Result<Pilot, CommandError> {
    let internal = |error: &dyn std::fmt::Display| CommandError::Internal(error.to_string());
    let record = store
        .run(run)
        .map_err(|error| CommandError::Input(error.to_string()))?;
    let experiment: Experiment =
        serde_json::from_str(&record.experiment_json).map_err(|error| internal(&error))?;
    let samples = store.samples(run).map_err(|error| internal(&error))?;
    let metric = experiment.primary_metric();
    let cells = experiment.cells().len();
    let values = verdict_analysis::run::cell_values(&samples, cells, &metric.name);
    let (mut squares, mut degrees) = (0.0, 0usize);
    for cell in values
        .iter()
        .filter(|cell| cell.len() >= 2 && cell.iter().all(|value| *value > 0.0))
    {
        let logs: Vec<f64> = cell.iter().map(|value| value.ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        squares += logs.iter().map(|log| (log - mean).powi(2)).sum::<f64>();
        degrees += logs.len() - 1;
    }
    if degrees == 0 {
        return Err(CommandError::Input(format!(
            "run {run} has no cell with 2 or more successful iterations of `{}` above 0",
            metric.name
        )));
    }
    let log_sd = (squares / degrees as f64).sqrt();
    let walls: Vec<f64> = samples
        .iter()
        .filter(|sample| sample.is_data())
        .map(|sample| sample.wall_seconds)
        .collect();
    let wall_seconds = summarize(&walls).map_or(0.0, |summary| summary.median);
    Ok(Pilot {
        log_sd,
        degrees,
        cv: (log_sd * log_sd).exp_m1().sqrt(),
        wall_seconds,
        cells,
        threshold: metric.threshold.unwrap_or(experiment.sampling.threshold),
        alpha: experiment.sampling.alpha,
        power: experiment.sampling.power,
        comparisons: experiment.comparisons().len().max(1),
    })
}

/// The within-block correlation a doctor report shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DoctorCorrelation {
    /// Lag-1 autocorrelation of the probe iterations' log times.
    pub correlation: f64,
    /// Probe iterations it came from.
    pub iterations: usize,
}

/// The within-block correlation from the doctor JSON report at `path`
/// (`verdict doctor --format json`): the lag-1 autocorrelation of the
/// probe iterations' log times (`verdict_stats::plan::neighbour_correlation`).
pub fn doctor_correlation(path: &Path) -> Result<DoctorCorrelation, CommandError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|error| CommandError::Input(format!("--doctor {shown}: {error}")))?;
    let report: serde_json::Value = serde_json::from_str(&text).map_err(|error| {
        CommandError::Input(format!(
            "{shown}:{}:{}: not a doctor JSON report: {error}",
            error.line(),
            error.column()
        ))
    })?;
    let seconds: Option<Vec<f64>> = report
        .pointer("/calibration/iterations")
        .and_then(|iterations| iterations.as_array())
        .map(|iterations| {
            iterations
                .iter()
                .filter_map(|iteration| iteration.get("seconds").and_then(|value| value.as_f64()))
                .collect()
        });
    let Some(seconds) = seconds else {
        return Err(CommandError::Input(format!(
            "{shown}: no calibration.iterations: expected the output of `verdict doctor --format json`"
        )));
    };
    let correlation =
        verdict_stats::plan::neighbour_correlation(&seconds).ok_or_else(|| {
            CommandError::Input(format!(
                "{shown}: {} probe iterations with a positive time: at least {} needed for a correlation",
                seconds.len(),
                verdict_stats::plan::NEIGHBOUR_MIN_VALUES
            ))
        })?;
    Ok(DoctorCorrelation {
        correlation,
        iterations: seconds.len(),
    })
}

/// The Monte-Carlo the numerical figures replaced: `trials` trials of the
/// adaptive design `settings` on lognormal noise of `cv`, with the change
/// at the threshold and with no change (seeds `seed` and `seed + 1`). Its
/// cost grows with the square of the cap.
pub fn monte_carlo(
    settings: SequentialSettings,
    cv: f64,
    trials: usize,
    seed: u64,
) -> Result<(Summary, Summary), CommandError> {
    let design =
        SequentialDesign::new(settings).map_err(|error| CommandError::Input(error.to_string()))?;
    let scenario = |change: f64| Scenario {
        noise: Noise {
            shape: Shape::Lognormal,
            cv,
        },
        change,
        alpha: settings.alpha,
        threshold: settings.threshold,
        better: Better::Lower,
        comparisons: 1,
        adjust: false,
    };
    let procedure = Procedure::Adaptive(design);
    let at_threshold = simulate(&scenario(settings.threshold), &procedure, trials, seed);
    let no_change = simulate(&scenario(0.0), &procedure, trials, seed.wrapping_add(1));
    Ok((at_threshold, no_change))
}
