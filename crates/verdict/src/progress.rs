//! Progress on stderr: a bar with done/total, elapsed, ETA and the current
//! median per cell when stderr is a terminal (indicatif; NO_COLOR honoured),
//! plain periodic lines otherwise. Nothing for runs shorter than a few
//! seconds. Never writes to stdout (reports go there).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};
use verdict_engine::{ComparisonStatus, Observer};
use verdict_model::{Cell, RunId, Sample};

const QUIET_START: Duration = Duration::from_secs(3);
const PLAIN_INTERVAL: Duration = Duration::from_secs(10);
/// The bar's message (medians: a sort per cell) is refreshed at most this
/// often, so progress costs nothing measurable per iteration.
const BAR_REFRESH: Duration = Duration::from_millis(250);

pub(crate) struct Progress {
    metric: String,
    started: Instant,
    /// When the engine said the measurement started (after any kernel
    /// builds): the ETA's rate counts from here, not from `started`.
    measuring_since: Instant,
    bar: Option<ProgressBar>,
    last_plain: Instant,
    last_bar: Instant,
    last_decisions: Option<Instant>,
    values: Vec<Vec<f64>>,
    labels: Vec<String>,
    done_at_start: usize,
    /// `verdict work`: one controller among others; `done` is the run's
    /// position (the sequence it measures), the medians its own samples.
    shared: bool,
    /// Samples this process measured.
    measured: usize,
}

impl Progress {
    pub(crate) fn new(metric: &str) -> Progress {
        Progress {
            metric: metric.to_string(),
            started: Instant::now(),
            measuring_since: Instant::now(),
            bar: None,
            last_plain: Instant::now(),
            last_bar: Instant::now(),
            last_decisions: None,
            values: Vec::new(),
            labels: Vec::new(),
            done_at_start: 0,
            shared: false,
            measured: 0,
        }
    }

    /// Progress of one controller of shared work (`verdict work`): the
    /// run's position and this controller's medians.
    pub(crate) fn shared_work(metric: &str) -> Progress {
        let mut progress = Progress::new(metric);
        progress.shared = true;
        progress
    }

    fn medians(&self) -> String {
        self.labels
            .iter()
            .zip(&self.values)
            .filter(|(_, values)| !values.is_empty())
            .map(|(label, values)| {
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                let middle = sorted.len() / 2;
                let median = if sorted.len() % 2 == 0 {
                    (sorted[middle - 1] + sorted[middle]) / 2.0
                } else {
                    sorted[middle]
                };
                format!("{label} {}", verdict_report::format::value(median, ""))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn eta(&self, done: usize, planned: usize) -> String {
        let new = done.saturating_sub(self.done_at_start);
        if new == 0 || planned <= done {
            return "-".to_string();
        }
        let per = self.measuring_since.elapsed().as_secs_f64() / new as f64;
        format_seconds(per * (planned - done) as f64)
    }
}

fn format_seconds(seconds: f64) -> String {
    let whole = seconds.round() as u64;
    if whole >= 3600 {
        format!("{}h{:02}m", whole / 3600, whole % 3600 / 60)
    } else if whole >= 60 {
        format!("{}m{:02}s", whole / 60, whole % 60)
    } else {
        format!("{whole}s")
    }
}

impl Observer for Progress {
    fn started(&mut self, run: RunId, planned: usize, done: usize, cells: &[Cell]) {
        // Labels quote levels: escaped, so a control character in one
        // cannot rewrite the terminal the progress line is drawn on.
        self.labels = cells
            .iter()
            .map(|cell| verdict_report::escape::text(&cell.label()))
            .collect();
        self.values = vec![Vec::new(); cells.len()];
        self.done_at_start = done;
        self.measuring_since = Instant::now();
        if self.shared {
            eprintln!("verdict: working on run {run} from {done}/{planned}");
        } else if done > 0 {
            eprintln!("verdict: resuming run {run} at {done}/{planned}");
        }
        if std::io::stderr().is_terminal() {
            let bar =
                ProgressBar::with_draw_target(Some(planned as u64), ProgressDrawTarget::stderr());
            let colour = std::env::var_os("NO_COLOR").is_none();
            let template = if colour {
                "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} ETA {eta} {msg}"
            } else {
                "{elapsed_precise} [{bar:30}] {pos}/{len} ETA {eta} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_position(done as u64);
            bar.set_draw_target(ProgressDrawTarget::hidden());
            self.bar = Some(bar);
        }
    }

    fn sample(&mut self, sample: &Sample, _cells: &[Cell], done: usize, planned: usize) {
        self.measured += 1;
        if sample.is_data()
            && let (Some(value), Some(values)) = (
                sample.metrics.get(&self.metric),
                self.values.get_mut(sample.cell),
            )
        {
            values.push(*value);
        }
        let elapsed = self.started.elapsed();
        if let Some(bar) = &self.bar {
            if elapsed >= QUIET_START && bar.is_hidden() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_position(done as u64);
            if self.last_bar.elapsed() >= BAR_REFRESH {
                self.last_bar = Instant::now();
                bar.set_message(self.medians());
            }
            return;
        }
        if elapsed >= QUIET_START && self.last_plain.elapsed() >= PLAIN_INTERVAL {
            self.last_plain = Instant::now();
            let position = if self.shared {
                format!(
                    "run at {done}/{planned} iterations (this worker: {})",
                    self.measured
                )
            } else {
                format!("{done}/{planned} iterations")
            };
            eprintln!(
                "verdict: {position}, elapsed {}, ETA {}; median {}: {}",
                format_seconds(elapsed.as_secs_f64()),
                self.eta(done, planned),
                self.metric,
                self.medians()
            );
        }
    }

    fn decisions(&mut self, statuses: &[ComparisonStatus]) {
        // Plain output: one line per interval, not per block.
        if self.bar.as_ref().is_none_or(ProgressBar::is_hidden) {
            if self
                .last_decisions
                .is_some_and(|last| last.elapsed() < PLAIN_INTERVAL)
            {
                return;
            }
            self.last_decisions = Some(Instant::now());
        }
        let line = statuses
            .iter()
            .map(|status| {
                let interval = match (status.low, status.high) {
                    (Some(low), Some(high)) => {
                        format!(" [{:+.1}%, {:+.1}%]", low * 100.0, high * 100.0)
                    }
                    _ => String::new(),
                };
                let state = status.outcome();
                format!(
                    "{} vs {}: {state}{interval} (n={})",
                    status.candidate_label, status.baseline_label, status.runs
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        self.note(&line);
    }

    fn note(&mut self, message: &str) {
        match &self.bar {
            Some(bar) if !bar.is_hidden() => bar.println(format!("verdict: {message}")),
            _ => {
                if self.started.elapsed() >= QUIET_START || !message.contains(" vs ") {
                    eprintln!("verdict: {message}");
                }
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_counts_from_the_start_of_the_measurement_not_from_kernel_builds_before_it() {
        let mut progress = Progress::new("wall");
        assert_eq!(progress.eta(0, 3), "-");
        // Ten minutes of kernel builds, then the engine starts measuring:
        // one sample in about no time leaves a rate of about nothing per
        // sample, not 600 s.
        progress.started = Instant::now()
            .checked_sub(Duration::from_secs(600))
            .expect("the clock started long enough ago");
        progress.started(RunId(1), 3, 0, &[]);
        assert_eq!(progress.eta(1, 3), "0s");
        assert_eq!(progress.eta(3, 3), "-");
    }
}
