//! Adaptive sampling: a group-sequential design whose repeated confidence
//! intervals let a comparison stop as soon as its verdict region is reached,
//! while the false-alarm rate stays ≤ α at whatever look it stops and the
//! interval reported at the stop keeps its coverage.
//!
//! What it does: looks after every `block` runs per arm from `min` to `max`;
//! at look k the interval is the Hodges–Lehmann/Moses relative shift
//! (`crate::shift::relative_shift`) at the per-look nominal confidence
//! 1 − 2(1 − Φ(c_k)), where c_k are the critical values of a Lan–DeMets
//! alpha-spending design (`boundaries.rs`). Because the intervals at all looks
//! cover the true shift simultaneously with probability ≥ 1 − α (repeated
//! confidence intervals, Jennison & Turnbull 1989, JRSS B 51:305; Jennison &
//! Turnbull 2000, ch. 9), stopping for any reason — regression, improvement
//! or equivalence — keeps both the error rate and the coverage.
//! Must not: do I/O, keep state between looks (the caller passes all samples
//! so far), or decide on a look before `min` runs per arm.

mod boundaries;
pub mod information;
pub mod operating;

use serde::Serialize;
use thiserror::Error;

pub use boundaries::Spending;
pub use information::{
    DecreaseSpending, EarlySpending, InformationDesign, InformationLook, InformationOutcome,
    InformationSettings, LookInformation, replay_information,
};
pub use operating::{OperatingCharacteristics, operating_characteristics};

use crate::plan::{log_sd_from_cv, runs_per_cell};
use crate::shift::{Shift, relative_shift};
use crate::verdict::Verdict;
pub use crate::verdict::{Better, Magnitude};

/// The verdict a sequential comparison stopped with (a [`Verdict`] that
/// cannot be `Inconclusive`: undecided looks say `Continue` or `Cap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The interval lies entirely on the bad side of 0.
    Regression,
    /// The interval lies entirely on the good side of 0.
    Improvement,
    /// The interval contains 0 and lies inside (−t, +t).
    Equivalent,
}

impl From<Decision> for Verdict {
    fn from(decision: Decision) -> Verdict {
        match decision {
            Decision::Regression => Verdict::Regression,
            Decision::Improvement => Verdict::Improvement,
            Decision::Equivalent => Verdict::Equivalent,
        }
    }
}

/// Why a design could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SequentialError {
    /// α outside (0, 1).
    #[error("build a sequential design: alpha {0} is not in (0, 1)")]
    Alpha(f64),
    /// Run counts that cannot form a schedule.
    #[error(
        "build a sequential design: need 2 <= min ({min}) <= max ({max}) and block >= 1 ({block})"
    )]
    Schedule {
        /// Smallest runs per arm before the first look.
        min: usize,
        /// Cap on runs per arm.
        max: usize,
        /// Runs per arm between looks.
        block: usize,
    },
    /// A threshold that is not a positive relative change below 1.
    #[error("build a sequential design: threshold {0} is not in (0, 1)")]
    Threshold(f64),
    /// Inputs for planning the cap that the planner rejects.
    #[error(
        "plan the run cap: no runs-per-cell for cv {cv}, shift {shift}, alpha {alpha}, power {power}"
    )]
    Planning {
        /// Coefficient of variation.
        cv: f64,
        /// Relative shift to detect.
        shift: f64,
        /// Two-sided level.
        alpha: f64,
        /// Target power.
        power: f64,
    },
}

/// Settings of a sequential design, before its critical values are computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SequentialSettings {
    /// Runs per arm at the first look (at least 2; 6 or more is needed
    /// before the rank interval can reach the first look's confidence).
    pub min: usize,
    /// Cap on runs per arm; at the cap the comparison stops undecided.
    pub max: usize,
    /// Runs per arm between looks.
    pub block: usize,
    /// Two-sided false-alarm rate over all looks together.
    pub alpha: f64,
    /// Practical threshold t as a relative change (0.02 = 2%).
    pub threshold: f64,
    /// Direction of improvement.
    pub better: Better,
    /// Alpha-spending function.
    pub spending: Spending,
}

impl SequentialSettings {
    /// Defaults measured in docs/validation.md: min 6, a look after every
    /// run, α 0.05, [`DEFAULT_SPENDING`]; `max` and `threshold` as given.
    pub fn new(max: usize, threshold: f64, better: Better) -> Self {
        Self {
            min: 6,
            max,
            block: 1,
            alpha: 0.05,
            threshold,
            better,
            spending: DEFAULT_SPENDING,
        }
    }
}

impl SequentialSettings {
    /// One line naming the procedure these settings define, for reports,
    /// without computing its critical values (which for a cap of thousands
    /// of runs takes seconds). Complexity O(1).
    pub fn describe(&self) -> String {
        let looks = if self.block == 0 || self.max < self.min {
            0
        } else {
            (self.max - self.min).div_ceil(self.block) + 1
        };
        format!(
            "group-sequential repeated confidence intervals (Jennison & Turnbull 2000, ch. 9), \
             {}, two-sided alpha {}, looks every {} run(s) per arm from {} to {} ({} looks), \
             threshold {}%",
            self.spending.describe(),
            self.alpha,
            self.block,
            self.min,
            self.max,
            looks,
            self.threshold * 100.0
        )
    }
}

/// Default spending function: Hwang–Shih–DeCani with γ = −2. Chosen by
/// measured power per run (docs/validation.md, section 5): at exactly 0.9
/// power, Pocock-type, HSD(−1), HSD(−2) and HSD(−3) all need 0.64–0.67 of
/// the fixed N's runs on average, but HSD(−2) needs the smaller cap (1.10–
/// 1.17× the fixed N rather than 1.29–1.32× for Pocock-type) and reaches
/// "equivalent" with a smaller cap.
pub const DEFAULT_SPENDING: Spending = Spending::HwangShihDeCani { gamma: -2.0 };

/// Factor by which the cap exceeds the fixed-N runs per cell with the same
/// power, measured by `simulate` for [`DEFAULT_SPENDING`] with a look after
/// every run from 6: 1.10 (CV 30%, +19%) and 1.17 (CV 13%, +10%) at power
/// 0.9, rounded up to 1.2 (docs/validation.md, section 5, re-checks it).
/// Jennison & Turnbull (2000, Table 2.1) give 1.27–1.31 for the Pocock test
/// with 10–20 equally spaced looks under normal theory.
pub const CAP_INFLATION: f64 = 1.2;

/// Cap on runs per arm that gives the adaptive procedure about `power` to
/// detect a relative `shift` at level `alpha` under lognormal noise with
/// coefficient of variation `cv`: the fixed-N planner's answer
/// (`crate::plan::runs_per_cell`, which plans for ln(1 + |shift|) and so is
/// conservative for slowdowns) times [`CAP_INFLATION`], rounded up.
/// Complexity O(1).
pub fn cap_for_power(
    cv: f64,
    shift: f64,
    alpha: f64,
    power: f64,
) -> Result<usize, SequentialError> {
    let fixed = runs_per_cell(log_sd_from_cv(cv), shift, alpha, power).ok_or(
        SequentialError::Planning {
            cv,
            shift,
            alpha,
            power,
        },
    )?;
    Ok(((fixed as f64) * CAP_INFLATION).ceil() as usize)
}

/// Cap on runs per arm that lets the adaptive procedure end "equivalent"
/// with probability about `power` when nothing changed, for threshold
/// `threshold`: the fixed N at which the 1 − α interval falls inside
/// (−t, +t) with probability `power`, n = 2(z₁₋α/₂ + z₍₁₊power₎/₂)²
/// (σ/ln(1+t))²/0.955 (the equivalence sample size at zero true difference,
/// Chow, Shao & Wang 2008, §3.2.4, with the rank test's efficiency), times
/// [`CAP_INFLATION`], rounded up. Complexity O(1).
pub fn cap_for_equivalence(
    cv: f64,
    threshold: f64,
    alpha: f64,
    power: f64,
) -> Result<usize, SequentialError> {
    let fixed = runs_per_cell(log_sd_from_cv(cv), threshold, alpha, (1.0 + power) / 2.0).ok_or(
        SequentialError::Planning {
            cv,
            shift: threshold,
            alpha,
            power,
        },
    )?;
    Ok(((fixed as f64) * CAP_INFLATION).ceil() as usize)
}

/// One planned look: its size and the nominal confidence of its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlannedLook {
    /// Runs per arm at this look.
    pub runs: usize,
    /// Information fraction runs / max.
    pub information_fraction: f64,
    /// Two-sided α spent up to and including this look.
    pub cumulative_alpha: f64,
    /// Two-sided critical value c_k on the standard normal scale.
    pub critical_z: f64,
    /// Confidence of the repeated confidence interval, 1 − 2(1 − Φ(c_k)).
    pub nominal_confidence: f64,
}

/// A group-sequential design with its computed looks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SequentialDesign {
    settings: SequentialSettings,
    looks: Vec<PlannedLook>,
}

/// What the caller should do after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LookState {
    /// Not decided yet: run another block.
    Continue,
    /// The interval reached a verdict region: stop.
    Decided {
        /// The verdict.
        decision: Decision,
        /// Its size against the threshold.
        magnitude: Magnitude,
    },
    /// The cap is reached without a verdict: stop, inconclusive at cap.
    Cap,
}

/// The result of one look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LookOutcome {
    /// What to do next.
    pub state: LookState,
    /// Runs per arm used for this look (the smaller arm).
    pub runs: usize,
    /// 1-based index of the planned look these runs correspond to; `None`
    /// before `min` runs per arm.
    pub look: Option<usize>,
    /// Nominal confidence of this look's interval.
    pub nominal_confidence: Option<f64>,
    /// The shift and its repeated confidence interval (`None` before the
    /// first look or when a side holds a value <= 0).
    pub shift: Option<Shift>,
}

impl SequentialDesign {
    /// Builds the design and computes its critical values.
    /// Complexity: see `boundaries.rs`; tens of milliseconds for 60 looks.
    pub fn new(settings: SequentialSettings) -> Result<Self, SequentialError> {
        let SequentialSettings {
            min,
            max,
            block,
            alpha,
            threshold,
            ..
        } = settings;
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(SequentialError::Alpha(alpha));
        }
        if min < 2 || max < min || block == 0 {
            return Err(SequentialError::Schedule { min, max, block });
        }
        if !(threshold > 0.0 && threshold < 1.0) {
            return Err(SequentialError::Threshold(threshold));
        }
        let mut runs: Vec<usize> = (min..max).step_by(block).collect();
        runs.push(max);
        let critical = boundaries::critical_values(&runs, alpha, settings.spending);
        let looks = runs
            .iter()
            .zip(critical)
            .map(|(&runs, critical_z)| {
                let information_fraction = runs as f64 / max as f64;
                PlannedLook {
                    runs,
                    information_fraction,
                    cumulative_alpha: settings.spending.cumulative(alpha, information_fraction),
                    critical_z,
                    nominal_confidence: if critical_z.is_finite() {
                        1.0 - 2.0 * crate::plan::normal_cdf(-critical_z)
                    } else {
                        1.0
                    },
                }
            })
            .collect();
        Ok(Self { settings, looks })
    }

    /// The settings this design was built from.
    pub fn settings(&self) -> &SequentialSettings {
        &self.settings
    }

    /// The planned looks, in order; the last is at `max`.
    pub fn looks(&self) -> &[PlannedLook] {
        &self.looks
    }

    /// One line naming the procedure, for reports.
    pub fn describe(&self) -> String {
        self.settings.describe()
    }

    /// Index of the planned look that `runs` per arm corresponds to: the
    /// last planned look at or below `runs`. Looks between planned points
    /// use the previous point's (larger) critical value, which keeps the
    /// error rate; extra looks at the same point add no error.
    fn look_index(&self, runs: usize) -> Option<usize> {
        let count = self.looks.partition_point(|look| look.runs <= runs);
        count.checked_sub(1)
    }

    /// Looks at all samples so far (in execution order, one slice per arm)
    /// and says whether to stop. Complexity: that of `relative_shift`.
    pub fn look(&self, baseline: &[f64], candidate: &[f64]) -> LookOutcome {
        let runs = baseline.len().min(candidate.len());
        let Some(index) = self.look_index(runs) else {
            return LookOutcome {
                state: LookState::Continue,
                runs,
                look: None,
                nominal_confidence: None,
                shift: None,
            };
        };
        let planned = self.looks[index];
        let at_cap = runs >= self.settings.max;
        let undecided = if at_cap {
            LookState::Cap
        } else {
            LookState::Continue
        };
        let shift = if planned.nominal_confidence < 1.0 {
            relative_shift(baseline, candidate, planned.nominal_confidence)
        } else {
            None
        };
        let state = shift
            .and_then(|shift| shift.interval)
            .and_then(|interval| self.classify(interval.low, interval.high))
            .map_or(undecided, |(decision, magnitude)| LookState::Decided {
                decision,
                magnitude,
            });
        LookOutcome {
            state,
            runs,
            look: Some(index + 1),
            nominal_confidence: Some(planned.nominal_confidence),
            shift,
        }
    }

    /// Verdict region of an interval on the relative scale, if any: the
    /// shared rule of `crate::verdict::classify` (equivalent carries the
    /// magnitude "below threshold").
    fn classify(&self, low: f64, high: f64) -> Option<(Decision, Magnitude)> {
        let settings = &self.settings;
        match crate::verdict::classify(low, high, settings.threshold, settings.better) {
            (Verdict::Regression, magnitude) => Some((
                Decision::Regression,
                magnitude.unwrap_or(Magnitude::Unclear),
            )),
            (Verdict::Improvement, magnitude) => Some((
                Decision::Improvement,
                magnitude.unwrap_or(Magnitude::Unclear),
            )),
            (Verdict::Equivalent, _) => Some((Decision::Equivalent, Magnitude::BelowThreshold)),
            (Verdict::Inconclusive, _) => None,
        }
    }
}

/// The interval reported at a stop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StopInterval {
    /// Lower end, relative.
    pub low: f64,
    /// Upper end, relative.
    pub high: f64,
    /// Confidence the order-statistic interval achieves at this look; the
    /// simultaneous coverage over all looks is ≥ 1 − α.
    pub confidence: f64,
}

/// Outcome of replaying stored sequences through a design.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReplayOutcome {
    /// Runs per arm at the stop.
    pub stopped_at: usize,
    /// 1-based look index of the stop (0 when no look was reached).
    pub looks: usize,
    /// How it stopped: decided, at the cap, or out of data before either.
    pub state: ReplayState,
    /// The verdict when decided.
    pub decision: Option<Decision>,
    /// Its magnitude when decided.
    pub magnitude: Option<Magnitude>,
    /// Hodges–Lehmann relative shift at the stop.
    pub estimate: Option<f64>,
    /// The repeated confidence interval at the stop.
    pub interval: Option<StopInterval>,
    /// Nominal confidence of the interval at the stop.
    pub nominal_confidence: Option<f64>,
    /// The procedure, in words.
    pub procedure: String,
    /// Out of data: runs per arm by which the design ends at the latest
    /// (its cap; for the information-based design, where the target
    /// information is reached at the precision seen so far) ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_to_end: Option<usize>,
    /// ... and, for the information-based design, that end over the 80%
    /// chi-square interval of the spread it was estimated from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_to_end_range: Option<(usize, usize)>,
}

/// How a replay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReplayState {
    /// A verdict region was reached.
    Decided,
    /// The cap was reached undecided: inconclusive at cap.
    InconclusiveAtCap,
    /// The sequences ended before a verdict or the cap: still undecided.
    OutOfData,
}

impl ReplayState {
    /// The serialized name, for text output.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplayState::Decided => "decided",
            ReplayState::InconclusiveAtCap => "inconclusive_at_cap",
            ReplayState::OutOfData => "out_of_data",
        }
    }
}

/// Replays `baseline` and `candidate` (execution order) through `design`,
/// looking after every `design.settings().block` runs per arm, as the engine
/// would have, and reports where and how it stops. Complexity: one
/// `relative_shift` per look.
pub fn replay(design: &SequentialDesign, baseline: &[f64], candidate: &[f64]) -> ReplayOutcome {
    let available = baseline.len().min(candidate.len());
    let mut last: Option<LookOutcome> = None;
    for planned in design.looks() {
        if planned.runs > available {
            break;
        }
        let outcome = design.look(&baseline[..planned.runs], &candidate[..planned.runs]);
        let stop = outcome.state != LookState::Continue;
        last = Some(outcome);
        if stop {
            break;
        }
    }
    let procedure = design.describe();
    let Some(outcome) = last else {
        return ReplayOutcome {
            stopped_at: available,
            looks: 0,
            state: ReplayState::OutOfData,
            decision: None,
            magnitude: None,
            estimate: None,
            interval: None,
            nominal_confidence: None,
            procedure,
            runs_to_end: Some(design.settings().max),
            runs_to_end_range: None,
        };
    };
    let mut replayed = replay_outcome(&outcome, procedure);
    if replayed.state == ReplayState::OutOfData {
        replayed.runs_to_end = Some(design.settings().max);
    }
    replayed
}

/// Where and how a replay stopped, from the outcome of its last look (the
/// planned-cap and the information-based designs alike).
pub(crate) fn replay_outcome(outcome: &LookOutcome, procedure: String) -> ReplayOutcome {
    let (state, decision, magnitude) = match outcome.state {
        LookState::Decided {
            decision,
            magnitude,
        } => (ReplayState::Decided, Some(decision), Some(magnitude)),
        LookState::Cap => (ReplayState::InconclusiveAtCap, None, None),
        LookState::Continue => (ReplayState::OutOfData, None, None),
    };
    ReplayOutcome {
        stopped_at: outcome.runs,
        looks: outcome.look.unwrap_or(0),
        state,
        decision,
        magnitude,
        estimate: outcome.shift.map(|shift| shift.estimate),
        interval: outcome
            .shift
            .and_then(|shift| shift.interval)
            .map(|interval| StopInterval {
                low: interval.low,
                high: interval.high,
                confidence: interval.confidence,
            }),
        nominal_confidence: outcome.nominal_confidence,
        procedure,
        runs_to_end: None,
        runs_to_end_range: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn design(max: usize) -> SequentialDesign {
        SequentialDesign::new(SequentialSettings::new(max, 0.05, Better::Higher)).unwrap()
    }

    #[test]
    fn schedule_runs_from_min_to_max() {
        let design = design(20);
        let runs: Vec<usize> = design.looks().iter().map(|look| look.runs).collect();
        assert_eq!(runs, (6..=20).collect::<Vec<_>>());
        let last = design.looks().last().unwrap();
        assert!((last.cumulative_alpha - 0.05).abs() < 1e-12);
        // Every look is stricter than a single 95% interval.
        assert!(
            design
                .looks()
                .iter()
                .all(|look| look.nominal_confidence > 0.95)
        );
    }

    #[test]
    fn settings_describe_counts_the_looks_of_the_design() {
        for (max, block) in [(20, 1), (23, 5), (6, 1), (100, 7)] {
            let mut settings = SequentialSettings::new(max, 0.05, Better::Lower);
            settings.block = block;
            let design = SequentialDesign::new(settings).unwrap();
            assert_eq!(settings.describe(), design.describe());
            assert!(
                design
                    .describe()
                    .contains(&format!("({} looks)", design.looks().len()))
            );
        }
    }

    #[test]
    fn uneven_block_still_ends_at_max() {
        let mut settings = SequentialSettings::new(23, 0.05, Better::Lower);
        settings.block = 5;
        let design = SequentialDesign::new(settings).unwrap();
        let runs: Vec<usize> = design.looks().iter().map(|look| look.runs).collect();
        assert_eq!(runs, vec![6, 11, 16, 21, 23]);
        assert_eq!(design.look_index(5), None);
        assert_eq!(design.look_index(6), Some(0));
        assert_eq!(design.look_index(15), Some(1));
        assert_eq!(design.look_index(40), Some(4));
    }

    #[test]
    fn invalid_settings_are_rejected() {
        let mut settings = SequentialSettings::new(20, 0.05, Better::Higher);
        settings.alpha = 1.5;
        assert_eq!(
            SequentialDesign::new(settings).unwrap_err(),
            SequentialError::Alpha(1.5)
        );
        let settings = SequentialSettings::new(4, 0.05, Better::Higher);
        assert!(matches!(
            SequentialDesign::new(settings),
            Err(SequentialError::Schedule { .. })
        ));
        let settings = SequentialSettings::new(20, 0.0, Better::Higher);
        assert_eq!(
            SequentialDesign::new(settings).unwrap_err(),
            SequentialError::Threshold(0.0)
        );
    }

    #[test]
    fn classification_follows_direction_and_threshold() {
        let higher = design(20);
        assert_eq!(
            higher.classify(-0.30, -0.08),
            Some((Decision::Regression, Magnitude::AboveThreshold))
        );
        assert_eq!(
            higher.classify(-0.03, -0.01),
            Some((Decision::Regression, Magnitude::BelowThreshold))
        );
        assert_eq!(
            higher.classify(0.01, 0.09),
            Some((Decision::Improvement, Magnitude::Unclear))
        );
        assert_eq!(
            higher.classify(-0.02, 0.03),
            Some((Decision::Equivalent, Magnitude::BelowThreshold))
        );
        assert_eq!(higher.classify(-0.02, 0.07), None);
        let lower =
            SequentialDesign::new(SequentialSettings::new(20, 0.05, Better::Lower)).unwrap();
        assert_eq!(
            lower.classify(0.06, 0.2),
            Some((Decision::Regression, Magnitude::AboveThreshold))
        );
    }

    #[test]
    fn cap_for_power_inflates_the_fixed_design() {
        // Fixed N for 19% at CV 30%, power 0.9: 2·(1.96+1.2816)²·(0.29356/0.17395)²/0.955.
        let fixed = runs_per_cell(log_sd_from_cv(0.30), 0.19, 0.05, 0.9).unwrap();
        let cap = cap_for_power(0.30, 0.19, 0.05, 0.9).unwrap();
        assert_eq!(cap, ((fixed as f64) * CAP_INFLATION).ceil() as usize);
        assert!(cap_for_power(0.30, 0.0, 0.05, 0.9).is_err());
        // Equivalence at CV 13%, t = 10%, power 0.9: 2·(1.96+1.645)²·(0.12940/0.09531)²/0.955
        // = 50.2 -> 51 runs, cap ⌈51·1.2⌉ = 62.
        assert_eq!(cap_for_equivalence(0.13, 0.10, 0.05, 0.9).unwrap(), 62);
    }
}
