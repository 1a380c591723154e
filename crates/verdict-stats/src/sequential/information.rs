//! Adaptive stopping without a planned cap: an information-based
//! group-sequential design whose end is set by the practical threshold and
//! the precision the data show so far, not by a run count the user has to
//! guess.
//!
//! What it does: the design's target is the statistical information a fixed
//! design would need to detect a change of the threshold t with the
//! requested power, times the cap inflation of the planned-cap design,
//! I_max = `CAP_INFLATION`·((z₁₋α/₂ + z_power) / ln(1 + t))² (on the log
//! scale). Which change that is: verdict's threshold is symmetric on the
//! relative scale (equivalent means inside (−t, +t), `crate::verdict::classify`),
//! so −t and +t are both changes *of* the threshold; on the log scale they
//! are ln(1 − t) and ln(1 + t), and the design plans for the smaller,
//! ln(1 + t) (0.174 for t = 19%, against 0.211 for ln 0.81), so that a
//! change of the threshold in either direction gets at least the power. At every look the information reached is estimated from the data
//! as 1/SE², SE² = (π/3)·σ̂²·2/n the Hodges–Lehmann log shift's variance
//! under normal theory (Lehmann 1975, §2.4), σ̂ a robust scale of the
//! *pooled* logs of both arms with the arm labels ignored
//! ([`pooled_scale`]). Label-free on purpose: under no change the pooled
//! values are independent of which arm each came from, which is all the
//! rank test looks at, so the look timing carries (asymptotically) no
//! information about the test statistic. An estimate from the test's own
//! interval length or from within-arm spreads would not be: a look whose
//! spread happens to be small would both spend more α and have a larger
//! studentized shift — measured, the rank interval's length raised A/A
//! false alarms to 0.057 at CV 13% (normal noise, 3,000 trials), a pooled
//! scale (then the median pairwise distance) 0.045 on the same trials. A
//! spread within each arm (Qₙ over the pairs of values from the same arm,
//! measured 2026-12) is worse: 0.072 A/A false alarms (lognormal CV 13%,
//! threshold 10%, γ = −1.5, 4,000 trials). The rank test is scale-free, so
//! it acts like a studentized statistic: for normal logs the within-arm
//! spread is independent of the arm means, but not of the ranks, and a
//! small spread comes with an extreme rank sum. The type I inflation known
//! for unblinded variance re-estimation (Wittes & Brittain 1990; Friede &
//! Kieser 2006, Biom. J. 48:537) is therefore large here, not slight.
//! The price of blinding: a real change θ widens the pooled spread to
//! about σ² + θ²/4 on the log scale (Kieser & Friede 2003, Stat. Med.
//! 22:3571; +8.8% at θ = ln 1.19 and +12.9% at ln 0.81 for CV 30%), so the
//! design ends later when there is a change (docs/statistics.md). Taking
//! the planned change's share out (Kieser & Friede's adjusted blinded
//! estimate, made exact for the quartile under a two-point mixture) stays
//! blind but under-estimates σ when nothing changed; measured (γ = −2, 2,000
//! trials), power at a change of the threshold fell to 0.886 and A/A false
//! alarms rose to 0.057 (γ = −1.5, 4,000 trials), so it is not used. The
//! information fraction f_k = I_k / I_max (kept non-decreasing, at most 1) sets how much
//! of α the look may spend under the Lan–DeMets spending function
//! ([`INFORMATION_SPENDING`])
//! (Lan & DeMets 1983, Biometrika 70:659), and the critical value follows
//! from the canonical joint distribution of the looks at their run counts
//! (`boundaries::Monitor`): information-based interim monitoring (Mehta &
//! Tsiatis 2001, Drug Inf. J. 35:1095), the group-sequential form of an
//! internal pilot study (Wittes & Brittain 1990, Stat. Med. 9:65) that
//! re-estimates the variance at every look. When f reaches 1 the look
//! spends the rest of α and, undecided, stops "inconclusive at the planned
//! information" (never before [`MIN_END_RUNS`]). Each look's interval is the repeated confidence interval
//! of `super::SequentialDesign` (Jennison & Turnbull 2000, ch. 9), so any
//! stop — regression, improvement or equivalent — keeps the error rate
//! ≤ α; the variance estimate only moves the look timing, which the
//! spending function absorbs (exactly for normal data, whose variance
//! estimate is independent of the shift estimate; measured for the other
//! shapes in docs/validation.md).
//!
//! Looks: after every run per arm from `min` up to 40, then about every 5%
//! (a fixed schedule, [`next_look`]), so a design that needs thousands of
//! runs still costs a few hundred looks.
//!
//! Must not: do I/O, or keep state between calls: every call replays all
//! looks from the samples passed (the caller passes all samples so far), so
//! a comparison that stopped at an earlier look stays stopped there.

use serde::Serialize;

use super::boundaries::Monitor;
use super::{
    Better, CAP_INFLATION, Decision, LookOutcome, LookState, Magnitude, ReplayOutcome,
    SequentialError, Spending,
};
use crate::plan::{normal_cdf, normal_quantile};
use crate::shift::relative_shift;

use crate::verdict::Verdict;

/// Most pooled values whose pairwise distances the scale is taken from;
/// longer sequences use every k-th run's pair of values.
pub const SCALE_VALUES: usize = 600;

/// Normal-consistent scale of the pooled logs, ignoring which arm each
/// value came from: the first quartile of all pairwise distances
/// |xᵢ − xⱼ| over √2·z₀.₆₂₅ (the Qₙ estimator of Rousseeuw & Croux 1993,
/// JASA 88:1273: 82% efficient at the normal, 50% breakdown). The first
/// quartile rather than the median because a real change splits the pooled
/// values into two groups: about half of the pairs are then within a
/// group, and the first quartile stays among those, so a large change
/// relative to the noise inflates the scale by at most about 2× instead of
/// by the change itself. When the arms hold more than [`SCALE_VALUES`]
/// values together, the pairs of every k-th run are used, which keeps the
/// estimate label-free. Complexity O(P) for P ≤ [`SCALE_VALUES`]²/2 pairs.
pub fn pooled_scale(baseline: &[f64], candidate: &[f64]) -> Option<f64> {
    let runs = baseline.len().min(candidate.len());
    let stride = (2 * runs).div_ceil(SCALE_VALUES).max(1);
    let mut logs = Vec::with_capacity(2 * runs / stride + 2);
    for index in (0..runs).step_by(stride) {
        for value in [baseline[index], candidate[index]] {
            if !(value.is_finite() && value > 0.0) {
                return None;
            }
            logs.push(value.ln());
        }
    }
    if logs.len() < 3 {
        return None;
    }
    let mut distances = Vec::with_capacity(logs.len() * (logs.len() - 1) / 2);
    for (index, &first) in logs.iter().enumerate() {
        for &second in &logs[index + 1..] {
            distances.push((first - second).abs());
        }
    }
    let quartile = distances.len() / 4;
    let (_, first_quartile, _) = distances.select_nth_unstable_by(quartile, f64::total_cmp);
    let scale = *first_quartile / (std::f64::consts::SQRT_2 * normal_quantile(0.625));
    (scale > 0.0).then_some(scale)
}

/// Fewest runs per arm at which the design may end undecided: below that
/// the rank interval's discreteness, not the noise, limits its precision
/// (at 6 runs per arm the 97.5% interval is the 2nd smallest and largest
/// of 36 differences), so a low-noise comparison gets at least this many.
pub const MIN_END_RUNS: usize = 10;

/// Runs per arm up to which the design looks after every run.
pub const EVERY_RUN_UNTIL: usize = 40;

/// The look after one at `runs` per arm: every run up to
/// [`EVERY_RUN_UNTIL`], then ⌈runs / 20⌉ runs later (about 5%).
pub fn next_look(runs: usize) -> usize {
    if runs < EVERY_RUN_UNTIL {
        runs + 1
    } else {
        runs + runs.div_ceil(20)
    }
}

/// Spending function of the information-based design: the planned-cap
/// design's Hwang–Shih–DeCani γ = −2 ([`super::DEFAULT_SPENDING`]; Hwang,
/// Shih & DeCani 1990, Stat. Med. 9:1439). γ = −1 was measured as an
/// alternative (docs/statistics.md, "Adaptive stopping without a cap"):
/// 36.4 runs per arm at a true −19% (CV 30%, threshold 19%) instead of
/// 38.2–38.8 with γ = −2 (1,000–2,000 trials), power 0.916 at +19%, but
/// A/A false alarms of 0.051–0.052 on three noise shapes over 10,000
/// trials each, not shown ≤ α, so it is not the default. A smaller target
/// (inflation 1.1 instead of [`CAP_INFLATION`]) saved about a run at −19%
/// but left power 0.8965 (γ = −2) and 0.892 (γ = −1.5) at +19%, below the
/// 0.9 the design promises (2,000 trials, 2026-12). Spending × inflation,
/// an α margin, the Mann–Whitney look information ([`LookInformation`])
/// and a decrease side with its own spending ([`DecreaseSpending`]) were
/// measured on the same draws in 2026-12 (docs/statistics.md): the best
/// combination reached 35.28 runs at −19% with A/A ≤ α on lognormal and
/// bimodal noise over 10,000 trials, but ends fewer A/A comparisons
/// "equivalent" (0.822 against 0.871), so the default is unchanged.
pub const INFORMATION_SPENDING: Spending = super::DEFAULT_SPENDING;

/// Settings of an information-based design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InformationSettings {
    /// Runs per arm at the first look (at least 2).
    pub min: usize,
    /// Two-sided false-alarm rate over all looks together.
    pub alpha: f64,
    /// Power the target information is planned for, at a change of the
    /// threshold.
    pub power: f64,
    /// Practical threshold t as a relative change (0.02 = 2%); also the
    /// change the information is planned to detect.
    pub threshold: f64,
    /// Direction of improvement.
    pub better: Better,
    /// Alpha-spending function over the information fraction.
    pub spending: Spending,
    /// Target information over the fixed design's (the planned-cap
    /// design's cap inflation).
    pub inflation: f64,
    /// How the boundary recursion measures each look's information.
    pub look_information: LookInformation,
    /// Spending of the decrease side (candidate below baseline on the log
    /// scale); `spending` then spends the increase side, each side α/2.
    pub decrease: DecreaseSpending,
    /// A share of α spent on a schedule of runs that does not depend on
    /// the threshold, so that a change much larger than the threshold is
    /// called about as early as a fixed design would find it; `None`: all
    /// of α by the information fraction.
    pub early: Option<EarlySpending>,
    /// The boundaries are computed for α times this (at most 1): a margin
    /// for the repeated confidence intervals being exact only
    /// asymptotically ([`ALPHA_MARGIN`]).
    pub alpha_margin: f64,
}

/// `value` to 6 decimals, for printing (0.05·0.9 is 0.045000000000000005
/// in binary).
pub fn rounded(value: f64) -> f64 {
    (value * 1e6).round() / 1e6
}

/// The information-based design's boundaries are computed for 0.9·α
/// (0.045 for α = 0.05): without a margin its A/A false-alarm rate was α
/// itself on the noise shapes measured, with point estimates up to 0.0517
/// over 10,000 trials (docs/statistics.md), and the early stage spends α
/// at looks where the rank statistic is furthest from its normal limit
/// (with 0.94·α the bimodal shape still gave 0.0515; with 0.9·α every
/// shape's estimate is at most α, at +0.4 runs per arm).
pub const ALPHA_MARGIN: f64 = 0.9;

/// Share of α the information-based design spends by runs, whatever the
/// threshold ([`EarlySpending`]).
pub const EARLY_SHARE: f64 = 0.5;

/// Runs per arm by which that share is spent (linearly).
pub const EARLY_HORIZON: usize = 60;

/// Target information over the fixed design's, for the information-based
/// design with its early stage (the planned-cap design keeps
/// [`CAP_INFLATION`]): the half of α left for the end needs more
/// information to keep power at a change of the threshold.
pub const INFORMATION_INFLATION: f64 = 1.3;

/// A share of α spent by runs per arm rather than by the information the
/// threshold needs: a plain group-sequential test of "no change" whose
/// boundaries do not wait for the information a small threshold's
/// equivalence needs. The two schedules add up to one spending of α over
/// the looks (cumulative α at a look: share·α·S(runs/horizon) +
/// (1 − share)·α·S_info(f), all of α at the end), so the repeated
/// confidence intervals keep their joint coverage: both clocks are
/// label-free (the run count, and the pooled spread of
/// [`pooled_scale`]), so the look timing still carries no information
/// about the test (Lan & DeMets 1983: any spending of α over a time that
/// does not depend on the statistic).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EarlySpending {
    /// Share of α (0 to 1) spent on the run schedule.
    pub share: f64,
    /// Runs per arm by which that share is spent.
    pub horizon: usize,
    /// How it is spent over runs / horizon.
    pub spending: Spending,
}

/// How the decrease side (candidate below baseline on the log scale)
/// spends its α/2. Separate spending functions for the two sides: Kim &
/// DeMets (1987, Biometrics 43:857); Jennison & Turnbull (2000, §7.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DecreaseSpending {
    /// As the increase side: symmetric boundaries.
    Same,
    /// By this function.
    Given(Spending),
    /// Hwang–Shih–DeCani with the earliest-spending γ (from the increase
    /// side's γ up in steps of 0.25, at most [`MAX_DECREASE_GAMMA`]) whose
    /// power at the decrease of the threshold, ln(1 − t), is at least the
    /// increase side's at ln(1 + t), under normal theory
    /// ([`matched_decrease_gamma`]). A threshold's decrease is the larger
    /// change on the log scale, so at the information planned for ln(1 + t)
    /// the decrease side has power to spare, and spends it on stopping
    /// earlier; as t → 0 the two changes agree and the design is symmetric.
    Matched,
}

/// Most α-spending the matched decrease side may use: γ = 1, close to a
/// Pocock-type boundary (Hwang, Shih & DeCani 1990).
pub const MAX_DECREASE_GAMMA: f64 = 1.0;

/// Equally spaced looks of the normal-theory model the matched decrease
/// side is chosen on.
const MATCH_LOOKS: usize = 40;

/// The decrease side's Hwang–Shih–DeCani γ for [`DecreaseSpending::Matched`]:
/// under normal theory (the canonical process with [`MATCH_LOOKS`] equally
/// spaced looks up to the target information, `super::operating`), the
/// increase side's power at ln(1 + t) with symmetric boundaries is the
/// requirement, and γ rises from the increase side's in steps of 0.25
/// while the decrease side's power at ln(1 − t) still meets it. `None` when
/// `spending` is not Hwang–Shih–DeCani. O(steps·K·G·145), milliseconds.
pub fn matched_decrease_gamma(settings: &InformationSettings) -> Option<f64> {
    let Spending::HwangShihDeCani { gamma } = settings.spending else {
        return None;
    };
    let alpha = settings.design_alpha();
    let increase = settings.threshold.ln_1p();
    let decrease = -(-settings.threshold).ln_1p();
    // Canonical units: the increase of the threshold is a drift of 1.
    let target = settings.target_information() * increase * increase;
    let information: Vec<f64> = (1..=MATCH_LOOKS)
        .map(|look| target * look as f64 / MATCH_LOOKS as f64)
        .collect();
    let bounds = |decrease_gamma: f64| -> Vec<(f64, f64)> {
        let mut monitor = Monitor::default();
        let half = |gamma: f64, look: usize| {
            if look == MATCH_LOOKS {
                alpha / 2.0
            } else {
                Spending::HwangShihDeCani { gamma }
                    .cumulative(alpha, look as f64 / MATCH_LOOKS as f64)
                    / 2.0
            }
        };
        information
            .iter()
            .enumerate()
            .map(|(index, &info)| {
                monitor.next_sides(
                    info,
                    half(decrease_gamma, index + 1),
                    half(gamma, index + 1),
                )
            })
            .collect()
    };
    // The increase side's power: the mirrored process leaving below.
    let mirrored: Vec<(f64, f64)> = bounds(gamma)
        .into_iter()
        .map(|(lower, upper)| (upper, lower))
        .collect();
    let required = super::operating::lower_exit_probability(&information, &mirrored, -1.0);
    let mut chosen = gamma;
    let mut candidate = gamma + 0.25;
    while candidate <= MAX_DECREASE_GAMMA + 1e-9 {
        let power = super::operating::lower_exit_probability(
            &information,
            &bounds(candidate),
            -decrease / increase,
        );
        if power < required {
            break;
        }
        chosen = candidate;
        candidate += 0.25;
    }
    Some(chosen)
}

/// The information the boundary recursion gives a look at n runs per arm:
/// the scale on which the canonical joint distribution of the looks,
/// Cov(Z_j, Z_k) = sqrt(I_j / I_k), is computed (`boundaries::Monitor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LookInformation {
    /// I = n: the normal-theory form, which the Mann–Whitney statistic
    /// follows asymptotically (its Hájek projection is a sum over runs).
    Runs,
    /// I = n²/(2n + 1): the exact null covariance of the Mann–Whitney
    /// statistics of nested looks with n runs per arm. U_n = Σ 1{bᵢ > cₗ}
    /// over the n² pairs has Var U_n = n²(2n + 1)/12, and two pairs share a
    /// run with covariance 1/12, so Cov(U_j, U_k) = j²(2k + 1)/12 for j ≤ k
    /// (Mann & Whitney 1947; Lehmann 1975, §1.3), which is
    /// sqrt(I_j/I_k)·sqrt(Var U_j Var U_k) with I_n = n²/(2n + 1). Nested
    /// looks are slightly *less* correlated than I = n assumes (0.9514
    /// instead of 0.9535 from 10 to 11 runs), and less correlated looks
    /// give more chances to cross.
    RankExact,
}

impl LookInformation {
    /// The information of a look at `runs` per arm on this scale.
    pub fn at(self, runs: usize) -> f64 {
        let n = runs as f64;
        match self {
            Self::Runs => n,
            Self::RankExact => n * n / (2.0 * n + 1.0),
        }
    }
}

impl InformationSettings {
    /// min 6, α 0.05, power 0.9, [`INFORMATION_SPENDING`], [`CAP_INFLATION`].
    pub fn new(threshold: f64, better: Better) -> Self {
        Self {
            min: 6,
            alpha: 0.05,
            power: crate::plan::DEFAULT_POWER,
            threshold,
            better,
            spending: INFORMATION_SPENDING,
            inflation: INFORMATION_INFLATION,
            look_information: LookInformation::Runs,
            decrease: DecreaseSpending::Same,
            early: Some(EarlySpending {
                share: EARLY_SHARE,
                horizon: EARLY_HORIZON,
                spending: Spending::HwangShihDeCani { gamma: 0.0 },
            }),
            alpha_margin: ALPHA_MARGIN,
        }
    }

    /// The design as it was before issue 29: all of α by the information
    /// fraction, the planned-cap design's inflation, no α margin (for
    /// comparison in the validation).
    pub fn without_early_stage(threshold: f64, better: Better) -> Self {
        Self {
            inflation: CAP_INFLATION,
            early: None,
            alpha_margin: 1.0,
            ..Self::new(threshold, better)
        }
    }

    /// The α the boundaries are computed for: α·[`Self::alpha_margin`].
    pub fn design_alpha(&self) -> f64 {
        self.alpha * self.alpha_margin
    }

    /// The spending of this design as one function of the fraction of a
    /// design that ends at `end_runs` per arm with information proportional
    /// to runs (the normal-theory model of `verdict plan`): the early stage
    /// becomes [`Spending::Staged`] with its horizon as a share of the end.
    pub fn capped_spending(&self, end_runs: usize) -> Spending {
        match (self.early, self.spending) {
            (
                Some(EarlySpending {
                    share,
                    horizon,
                    spending: Spending::HwangShihDeCani { gamma: early_gamma },
                }),
                Spending::HwangShihDeCani { gamma },
            ) => Spending::Staged {
                share,
                horizon: horizon as f64 / end_runs.max(1) as f64,
                early_gamma,
                gamma,
            },
            _ => self.spending,
        }
    }

    /// Cumulative two-sided α spent by a look at `runs` per arm with
    /// information fraction `fraction` (< 1), under `spending` for the
    /// information part: all by the information fraction, or the early
    /// share by runs plus the rest by the fraction. O(1).
    fn spent(&self, spending: Spending, runs: usize, fraction: f64) -> f64 {
        match self.early {
            None => spending.cumulative(self.design_alpha(), fraction),
            Some(early) => {
                let alpha = self.design_alpha();
                let by_runs = (runs as f64 / early.horizon.max(1) as f64).min(1.0);
                (early.spending.cumulative(early.share * alpha, by_runs)
                    + spending.cumulative((1.0 - early.share) * alpha, fraction))
                .min(alpha)
            }
        }
    }

    /// One line naming the procedure, for reports. Complexity O(1).
    pub fn describe(&self) -> String {
        let looks = match self.look_information {
            LookInformation::Runs => "",
            LookInformation::RankExact => {
                ", looks correlated as the Mann-Whitney statistics are (information n^2/(2n+1))"
            }
        };
        let margin = if self.alpha_margin < 1.0 {
            format!(", boundaries for alpha {}", rounded(self.design_alpha()))
        } else {
            String::new()
        };
        let spending = match self.early {
            None => self.spending.describe(),
            Some(early) => format!(
                "{}% of alpha spent {} over the first {} runs per arm whatever the threshold and {}% by the information ({})",
                early.share * 100.0,
                match early.spending {
                    Spending::HwangShihDeCani { gamma } if gamma.abs() < 1e-9 => {
                        "evenly".to_string()
                    }
                    other => format!("by {}", other.describe()),
                },
                early.horizon,
                (1.0 - early.share) * 100.0,
                self.spending.describe()
            ),
        };
        format!(
            "information-based group-sequential repeated confidence intervals (Mehta & Tsiatis 2001; \
             Jennison & Turnbull 2000, ch. 9), {spending}, two-sided alpha {}, looks from {} runs per arm \
             until the information to detect {}% with power {} (x{} inflation, variance \
             re-estimated at every look{looks}){margin}, threshold {}%",
            self.alpha,
            self.min,
            self.threshold * 100.0,
            self.power,
            self.inflation,
            self.threshold * 100.0
        )
    }

    /// Target information on the log scale, 1/SE² of the log shift.
    pub fn target_information(&self) -> f64 {
        let z = normal_quantile(1.0 - self.design_alpha() / 2.0) + normal_quantile(self.power);
        let delta = self.threshold.ln_1p();
        self.inflation * (z / delta).powi(2)
    }

    fn check(&self) -> Result<(), SequentialError> {
        if !(self.alpha > 0.0
            && self.alpha < 1.0
            && self.alpha_margin > 0.0
            && self.alpha_margin <= 1.0)
        {
            return Err(SequentialError::Alpha(self.alpha));
        }
        if self.min < 2 {
            return Err(SequentialError::Schedule {
                min: self.min,
                max: usize::MAX,
                block: 1,
            });
        }
        if !(self.threshold > 0.0 && self.threshold < 1.0) {
            return Err(SequentialError::Threshold(self.threshold));
        }
        let early_valid = self.early.is_none_or(|early| {
            early.share >= 0.0 && early.share <= 1.0 && early.horizon >= self.min
        });
        if !(self.power > 0.0 && self.power < 1.0 && self.inflation >= 1.0 && early_valid) {
            return Err(SequentialError::Planning {
                cv: f64::NAN,
                shift: self.threshold,
                alpha: self.alpha,
                power: self.power,
            });
        }
        Ok(())
    }
}

/// An information-based design (no cap: it ends at the target information).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InformationDesign {
    settings: InformationSettings,
    target: f64,
    /// The decrease side's own spending, when it differs.
    decrease_spending: Option<Spending>,
}

/// One look as it happened.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InformationLook {
    /// Runs per arm at this look.
    pub runs: usize,
    /// Information fraction reached (non-decreasing, ≤ 1).
    pub fraction: f64,
    /// Runs per arm at which the target information would be reached at
    /// the precision seen so far (runs / fraction).
    pub projected_runs: Option<usize>,
    /// Two-sided α spent up to and including this look.
    pub cumulative_alpha: f64,
    /// Critical value on the standard normal scale.
    pub critical_z: f64,
    /// Confidence of this look's repeated confidence interval.
    pub nominal_confidence: f64,
}

/// The result of looking at all samples so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InformationOutcome {
    /// What to do, and the interval, as for the planned-cap design; `runs`
    /// is where the design stopped when it did, else the runs available.
    pub outcome: LookOutcome,
    /// The look the outcome is from (`None` before the first look).
    pub last_look: Option<InformationLook>,
}

impl InformationDesign {
    /// Checks the settings and computes the target information. O(1).
    pub fn new(settings: InformationSettings) -> Result<Self, SequentialError> {
        settings.check()?;
        let decrease_spending = match settings.decrease {
            DecreaseSpending::Same => None,
            DecreaseSpending::Given(spending) => Some(spending),
            DecreaseSpending::Matched => {
                matched_decrease_gamma(&settings).map(|gamma| Spending::HwangShihDeCani { gamma })
            }
        }
        .filter(|spending| *spending != settings.spending);
        Ok(Self {
            target: settings.target_information(),
            settings,
            decrease_spending,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &InformationSettings {
        &self.settings
    }

    /// One line naming the procedure, for reports.
    pub fn describe(&self) -> String {
        match self.decrease_spending {
            None => self.settings.describe(),
            Some(decrease) => format!(
                "{}; the decrease side spends by {} (separate boundaries per side, Kim & DeMets 1987)",
                self.settings.describe(),
                decrease.describe()
            ),
        }
    }

    /// The decrease side's spending when it differs from the increase
    /// side's (`None`: symmetric boundaries).
    pub fn decrease_spending(&self) -> Option<Spending> {
        self.decrease_spending
    }

    /// The standard error of the log shift after `runs` runs per arm,
    /// from the pooled sample with the arm labels ignored (see the module
    /// documentation); `None` when a value is not positive or the spread
    /// is 0 (ties).
    fn standard_error(baseline: &[f64], candidate: &[f64]) -> Option<f64> {
        let runs = baseline.len().min(candidate.len());
        let scale = pooled_scale(&baseline[..runs], &candidate[..runs])?;
        Some((std::f64::consts::PI / 3.0 * scale * scale * 2.0 / runs as f64).sqrt())
    }

    /// Replays every look on the samples (execution order, one slice per
    /// arm) and returns the first stop, or the state at the last look.
    /// Complexity: per look two `relative_shift` calls and one step of the
    /// boundary recursion (O(G·145), G ≤ a few hundred grid points).
    pub fn look(&self, baseline: &[f64], candidate: &[f64]) -> InformationOutcome {
        let available = baseline.len().min(candidate.len());
        let mut monitor = Monitor::default();
        let mut fraction: f64 = 0.0;
        let mut last_look = None;
        let mut last_shift = None;
        let mut runs = self.settings.min;
        while runs <= available {
            let (base, cand) = (&baseline[..runs], &candidate[..runs]);
            if let Some(error) = Self::standard_error(base, cand) {
                fraction = fraction.max(1.0 / (self.target * error * error));
            }
            let fraction_here = fraction.min(1.0).min(if runs < MIN_END_RUNS {
                // Not the end yet (see MIN_END_RUNS): at most the fraction
                // just below it.
                runs as f64 / MIN_END_RUNS as f64
            } else {
                1.0
            });
            let final_look = fraction_here >= 1.0;
            let cumulative = if final_look {
                self.settings.design_alpha()
            } else {
                self.settings
                    .spent(self.settings.spending, runs, fraction_here)
            };
            let information = self.settings.look_information.at(runs);
            let (decrease_z, critical_z) = match self.decrease_spending {
                None => {
                    let critical = monitor.next(information, cumulative);
                    (critical, critical)
                }
                Some(decrease) => {
                    let half = |spending: Spending| {
                        if final_look {
                            self.settings.design_alpha() / 2.0
                        } else {
                            self.settings.spent(spending, runs, fraction_here) / 2.0
                        }
                    };
                    monitor.next_sides(information, half(decrease), half(self.settings.spending))
                }
            };
            let confidence = |critical: f64| {
                if critical.is_finite() {
                    1.0 - 2.0 * normal_cdf(-critical)
                } else {
                    1.0
                }
            };
            let nominal_confidence =
                1.0 - (1.0 - confidence(critical_z)) / 2.0 - (1.0 - confidence(decrease_z)) / 2.0;
            let look = InformationLook {
                runs,
                fraction: fraction_here,
                projected_runs: (fraction_here > 0.0)
                    .then(|| ((runs as f64) / fraction_here).ceil() as usize),
                cumulative_alpha: cumulative,
                critical_z,
                nominal_confidence,
            };
            let shift = if decrease_z == critical_z {
                (nominal_confidence < 1.0)
                    .then(|| relative_shift(base, cand, nominal_confidence))
                    .flatten()
            } else {
                asymmetric_shift(base, cand, confidence(decrease_z), confidence(critical_z))
            };
            let decided = shift
                .and_then(|shift| shift.interval)
                .and_then(|interval| self.classify(interval.low, interval.high));
            last_look = Some(look);
            last_shift = shift;
            let state = match decided {
                Some((decision, magnitude)) => Some(LookState::Decided {
                    decision,
                    magnitude,
                }),
                None if final_look => Some(LookState::Cap),
                None => None,
            };
            if let Some(state) = state {
                return InformationOutcome {
                    outcome: LookOutcome {
                        state,
                        runs,
                        look: Some(look_index(self.settings.min, runs)),
                        nominal_confidence: Some(nominal_confidence),
                        shift,
                    },
                    last_look,
                };
            }
            runs = next_look(runs);
        }
        InformationOutcome {
            outcome: LookOutcome {
                state: LookState::Continue,
                runs: available,
                look: last_look.map(|look| look_index(self.settings.min, look.runs)),
                nominal_confidence: last_look.map(|look| look.nominal_confidence),
                shift: last_shift,
            },
            last_look,
        }
    }

    /// Verdict region of an interval, as for the planned-cap design.
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

/// The repeated confidence interval of asymmetric boundaries: a decrease
/// is called when Z ≤ −a, i.e. when the upper end of the interval at the
/// decrease side's confidence is below 0, and an increase when the lower
/// end at the increase side's confidence is above 0 (Jennison & Turnbull
/// 2000, §9.1: the interval is the set of shifts neither side rejects).
/// `None` when either side's confidence is 1 (no α to spend yet).
fn asymmetric_shift(
    baseline: &[f64],
    candidate: &[f64],
    decrease_confidence: f64,
    increase_confidence: f64,
) -> Option<crate::shift::Shift> {
    if decrease_confidence >= 1.0 || increase_confidence >= 1.0 {
        return None;
    }
    let upper = relative_shift(baseline, candidate, decrease_confidence)?;
    let lower = relative_shift(baseline, candidate, increase_confidence)?;
    let interval = match (lower.interval, upper.interval) {
        (Some(low), Some(high)) => Some(crate::shift::Interval {
            low: low.low,
            high: high.high,
            confidence: 1.0 - (1.0 - low.confidence) / 2.0 - (1.0 - high.confidence) / 2.0,
        }),
        _ => None,
    };
    Some(crate::shift::Shift {
        estimate: lower.estimate,
        interval,
    })
}

/// 1-based index of the look at `runs` in the schedule from `min`.
fn look_index(min: usize, runs: usize) -> usize {
    let mut index = 1;
    let mut at = min;
    while at < runs {
        at = next_look(at);
        index += 1;
    }
    index
}

/// Replays `baseline` and `candidate` (execution order) through the
/// information-based design and reports where and how it stops, in the
/// form of `super::replay`. "Inconclusive at cap" means the target
/// information was reached undecided. Complexity: that of
/// [`InformationDesign::look`].
pub fn replay_information(
    design: &InformationDesign,
    baseline: &[f64],
    candidate: &[f64],
) -> ReplayOutcome {
    let result = design.look(baseline, candidate);
    let mut replayed = super::replay_outcome(&result.outcome, design.describe());
    if replayed.state == super::ReplayState::OutOfData
        && let Some(look) = result.last_look
        && let Some(projected) = look.projected_runs
    {
        // The end is proportional to the pooled variance, estimated from
        // the 2n values of both arms: its range over the 80% chi-square
        // interval with 2n − 2 degrees of freedom (as "N runs would tell").
        let degrees = (2 * look.runs).saturating_sub(2).max(1) as f64;
        let tail = (1.0 - crate::plan::RUNS_NEEDED_RANGE) / 2.0;
        let scaled = |probability: f64| {
            let factor = degrees / crate::plan::chi_square_quantile(probability, degrees);
            ((projected as f64 * factor).ceil() as usize).max(look.runs + 1)
        };
        replayed.runs_to_end = Some(projected.max(look.runs + 1));
        replayed.runs_to_end_range = Some((scaled(1.0 - tail), scaled(tail)));
    }
    replayed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequential::ReplayState;
    use rand::{Rng, SeedableRng};

    fn lognormal(rng: &mut rand_chacha::ChaCha8Rng, runs: usize, sd: f64, scale: f64) -> Vec<f64> {
        (0..runs)
            .map(|_| {
                let radius = (-2.0 * (1.0 - rng.random::<f64>()).ln()).sqrt();
                let angle = std::f64::consts::TAU * rng.random::<f64>();
                scale * (sd * radius * angle.cos()).exp()
            })
            .collect()
    }

    #[test]
    fn schedule_looks_every_run_then_every_five_percent() {
        assert_eq!(next_look(6), 7);
        assert_eq!(next_look(39), 40);
        assert_eq!(next_look(40), 42);
        assert_eq!(next_look(200), 210);
        assert_eq!(look_index(6, 6), 1);
        assert_eq!(look_index(6, 40), 35);
        assert_eq!(look_index(6, 42), 36);
    }

    #[test]
    fn rank_look_information_is_the_mann_whitney_covariance() {
        // Cov(U_10, U_11)/sqrt(Var U_10 · Var U_11) from the pair counts:
        // 10²·23/12 over sqrt(10²·21/12 · 11²·23/12) = 0.951 39.
        let (ten, eleven) = (
            LookInformation::RankExact.at(10),
            LookInformation::RankExact.at(11),
        );
        let exact = 100.0 * 23.0 / (100.0 * 21.0 * 121.0 * 23.0f64).sqrt();
        assert!(((ten / eleven).sqrt() - exact).abs() < 1e-12);
        assert_eq!(LookInformation::Runs.at(10), 10.0);
    }

    #[test]
    fn target_information_is_the_inflated_fixed_design() {
        // Planned for α·0.9 = 0.045 (z = 2.004654), power 0.9, ×1.3:
        // (2.004654 + 1.281552)² / ln(1.19)² · 1.3 = 463.946 (scipy).
        let settings = InformationSettings::new(0.19, Better::Lower);
        assert!((settings.target_information() - 463.946_122).abs() < 1e-3);
        // Before issue 29: α 0.05, ×1.2.
        let before = InformationSettings::without_early_stage(0.19, Better::Lower);
        let expected = 1.2 * (1.959_964 + 1.281_552_f64).powi(2) / 1.19_f64.ln().powi(2);
        assert!((before.target_information() - expected).abs() < 1e-3);
        let mut bad = settings;
        bad.power = 1.0;
        assert!(InformationDesign::new(bad).is_err());
        bad = settings;
        bad.threshold = 0.0;
        assert_eq!(
            InformationDesign::new(bad).unwrap_err(),
            SequentialError::Threshold(0.0)
        );
    }

    #[test]
    fn projected_runs_follow_the_noise_and_the_threshold() {
        // At CV 30% (log sd 0.294) the planned-cap design for 19% has a cap
        // of 76; the projection from 40 runs per arm should be near it, and
        // four times the variance should need about four times the runs.
        let design = InformationDesign::new(InformationSettings::new(0.19, Better::Lower)).unwrap();
        let mut projections = Vec::new();
        for sd in [0.294, 0.588] {
            let mut total = 0.0;
            for seed in 0..40 {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let baseline = lognormal(&mut rng, 40, sd, 100.0);
                let candidate = lognormal(&mut rng, 40, sd, 100.0);
                let error = InformationDesign::standard_error(&baseline, &candidate).unwrap();
                total += 40.0 / (1.0 / (design.target * error * error));
            }
            projections.push(total / 40.0);
        }
        assert!(
            projections[0] > 60.0 && projections[0] < 95.0,
            "{projections:?}"
        );
        let ratio = projections[1] / projections[0];
        assert!(ratio > 3.3 && ratio < 4.7, "{projections:?}");
    }

    #[test]
    fn a_real_change_widens_the_pooled_scale_by_its_share() {
        // The price of a label-free scale: two arms 0.174 apart on the log
        // scale, each with log sd 0.294 (CV 30%, a change of +19%), pool to
        // a spread of about sqrt(σ² + δ²/4) (Kieser & Friede 2003), 4.3%
        // above σ, and the information reached at each look is about 8.8%
        // lower than the planned-cap design assumes.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (mut changed, mut unchanged) = (0.0, 0.0);
        for _ in 0..40 {
            let baseline = lognormal(&mut rng, 300, 0.294, 100.0);
            let candidate = lognormal(&mut rng, 300, 0.294, 119.0);
            changed += pooled_scale(&baseline, &candidate).unwrap() / 40.0;
            let same = lognormal(&mut rng, 300, 0.294, 100.0);
            unchanged += pooled_scale(&baseline, &same).unwrap() / 40.0;
        }
        let inflated = (0.294_f64.powi(2) + 1.19_f64.ln().powi(2) / 4.0).sqrt();
        assert!(
            (changed - inflated).abs() < 0.008,
            "{changed} vs {inflated}"
        );
        assert!((unchanged - 0.294).abs() < 0.008, "{unchanged}");
    }

    #[test]
    fn the_information_is_blind_to_the_arm_labels() {
        // What keeps the error rate: swapping the two values of any run
        // between the arms changes the rank test but not the look timing.
        // The standard error (so the information fraction, the α spent and
        // the critical value) depends only on the pooled values, which
        // under no change are independent of the labels the test looks at.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut baseline = lognormal(&mut rng, 50, 0.13, 100.0);
        let mut candidate = lognormal(&mut rng, 50, 0.13, 90.0);
        let before = InformationDesign::standard_error(&baseline, &candidate).unwrap();
        for index in (0..50).step_by(3) {
            std::mem::swap(&mut baseline[index], &mut candidate[index]);
        }
        let after = InformationDesign::standard_error(&baseline, &candidate).unwrap();
        assert!((before - after).abs() < 1e-12 * before);
        // A spread taken within each arm is not blind: the same swap moves it.
        let within = |first: &[f64], second: &[f64]| {
            let spread = |arm: &[f64]| {
                let logs: Vec<f64> = arm.iter().map(|value| value.ln()).collect();
                let mean = logs.iter().sum::<f64>() / logs.len() as f64;
                logs.iter().map(|log| (log - mean).powi(2)).sum::<f64>()
            };
            spread(first) + spread(second)
        };
        let swapped = within(&baseline, &candidate);
        for index in (0..50).step_by(3) {
            std::mem::swap(&mut baseline[index], &mut candidate[index]);
        }
        assert!((within(&baseline, &candidate) - swapped).abs() > 1e-6 * swapped);
    }

    #[test]
    fn a_clear_change_stops_early_and_stays_stopped() {
        let design =
            InformationDesign::new(InformationSettings::new(0.19, Better::Higher)).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let baseline = lognormal(&mut rng, 300, 0.05, 100.0);
        let candidate = lognormal(&mut rng, 300, 0.05, 70.0);
        let first = design.look(&baseline, &candidate);
        assert!(matches!(
            first.outcome.state,
            LookState::Decided {
                decision: Decision::Regression,
                ..
            }
        ));
        assert!(first.outcome.runs < 12, "{first:?}");
        // More data after the stop does not move it.
        let again = design.look(&baseline[..200], &candidate[..200]);
        assert_eq!(again.outcome.runs, first.outcome.runs);
        let replayed = replay_information(&design, &baseline, &candidate);
        assert_eq!(replayed.state, ReplayState::Decided);
        assert_eq!(replayed.stopped_at, first.outcome.runs);
    }

    #[test]
    fn the_matched_decrease_side_spends_earlier_only_when_its_change_is_larger() {
        // ln(1 − t) and ln(1 + t) agree as t → 0: symmetric; at 19% the
        // decrease (−0.211 against +0.174) has power to spare.
        let gamma = |threshold: f64| {
            let mut settings = InformationSettings::new(threshold, Better::Lower);
            settings.decrease = DecreaseSpending::Matched;
            matched_decrease_gamma(&settings).unwrap()
        };
        let (small, large) = (gamma(0.001), gamma(0.19));
        assert_eq!(small, -2.0);
        assert_eq!(large, MAX_DECREASE_GAMMA);
        assert!(gamma(0.02) <= gamma(0.05) && gamma(0.05) <= gamma(0.10));
        let mut settings = InformationSettings::new(0.19, Better::Lower);
        settings.decrease = DecreaseSpending::Matched;
        let design = InformationDesign::new(settings).unwrap();
        assert_eq!(
            design.decrease_spending(),
            Some(Spending::HwangShihDeCani { gamma: large })
        );
        assert!(design.describe().contains("the decrease side spends by"));
        settings.decrease = DecreaseSpending::Same;
        assert_eq!(
            InformationDesign::new(settings)
                .unwrap()
                .decrease_spending(),
            None
        );
    }

    #[test]
    fn an_earlier_spending_decrease_side_stops_a_decrease_sooner() {
        // A decrease of the threshold (−19% at CV 30%) stops sooner on
        // average when the decrease side spends by γ = 1 (more α at early
        // looks, less at late ones) than with symmetric γ = −2 boundaries.
        let mut settings = InformationSettings::new(0.19, Better::Higher);
        let symmetric = InformationDesign::new(settings).unwrap();
        settings.decrease = DecreaseSpending::Given(Spending::HwangShihDeCani { gamma: 1.0 });
        let asymmetric = InformationDesign::new(settings).unwrap();
        let (mut symmetric_runs, mut asymmetric_runs, mut earlier) = (0, 0, 0);
        for seed in 0..40 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let baseline = lognormal(&mut rng, 300, 0.294, 100.0);
            let candidate = lognormal(&mut rng, 300, 0.294, 81.0);
            let one = symmetric.look(&baseline, &candidate).outcome.runs;
            let two = asymmetric.look(&baseline, &candidate).outcome.runs;
            symmetric_runs += one;
            asymmetric_runs += two;
            earlier += usize::from(two < one);
        }
        assert!(
            asymmetric_runs < symmetric_runs && earlier >= 10,
            "{asymmetric_runs} against {symmetric_runs} runs, {earlier} earlier"
        );
    }

    #[test]
    fn before_min_runs_it_continues() {
        let design = InformationDesign::new(InformationSettings::new(0.05, Better::Lower)).unwrap();
        let outcome = design.look(&[1.0, 1.1, 1.2], &[1.0, 1.1, 1.3]);
        assert_eq!(outcome.outcome.state, LookState::Continue);
        assert!(outcome.last_look.is_none());
    }

    #[test]
    fn the_design_ends_at_the_target_information() {
        // No change, a 10% threshold and CV 30%: it cannot decide quickly,
        // and must end "inconclusive at the planned information" near the
        // projected runs, not run forever.
        let design = InformationDesign::new(InformationSettings::new(0.10, Better::Lower)).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let baseline = lognormal(&mut rng, 2000, 0.294, 100.0);
        let candidate = lognormal(&mut rng, 2000, 0.294, 100.0);
        let outcome = design.look(&baseline, &candidate);
        assert_ne!(outcome.outcome.state, LookState::Continue);
        let last = outcome.last_look.unwrap();
        if outcome.outcome.state == LookState::Cap {
            assert!((last.fraction - 1.0).abs() < 1e-12);
            assert!((last.cumulative_alpha - 0.05).abs() < 1e-12);
        }
        assert!(outcome.outcome.runs < 600, "{outcome:?}");
    }

    #[test]
    fn out_of_data_says_how_far_the_design_would_go() {
        // 30 runs a side of a no-change comparison at a 2% threshold and CV
        // 30%: far from the information 2% needs. Before, `out_of_data`
        // gave no estimate.
        let design = InformationDesign::new(InformationSettings::new(0.02, Better::Lower)).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let baseline = lognormal(&mut rng, 30, 0.294, 100.0);
        let candidate = lognormal(&mut rng, 30, 0.294, 100.0);
        let replayed = replay_information(&design, &baseline, &candidate);
        assert_eq!(replayed.state, crate::sequential::ReplayState::OutOfData);
        let end = replayed.runs_to_end.unwrap();
        let (low, high) = replayed.runs_to_end_range.unwrap();
        // About 1.2·(z + z)²/ln(1.02)²·(2π/3)·σ² = 5,800 runs a side.
        assert!(end > 2000 && end < 20_000, "{end}");
        assert!(low < end && end < high, "{low} {end} {high}");
    }

    #[test]
    fn a_change_ten_times_the_threshold_stops_as_early_as_a_fixed_design() {
        // Issue 29: at CV 30% a true −19% took 85 runs per arm with the
        // default 2% threshold (69 at 5%): the design waited for the
        // information a 2% change needs. A fixed-N rank test needs 45. With
        // half of α spent over the first 60 runs whatever the threshold, it
        // stops near the fixed design's count: 42.4 runs per arm on these
        // 120 seeded trials (before: 80.4); docs/validation.md has the
        // replay at 10,000 trials: 42.61 runs at 2%.
        let trials = 120;
        let mean_runs = |settings: InformationSettings| -> (f64, usize) {
            let design = InformationDesign::new(settings).unwrap();
            let (mut runs, mut regressions) = (0, 0);
            for seed in 0..trials {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1000 + seed);
                let baseline = lognormal(&mut rng, 300, 0.294, 100.0);
                let candidate = lognormal(&mut rng, 300, 0.294, 81.0);
                let outcome = design.look(&baseline, &candidate).outcome;
                runs += outcome.runs;
                regressions += usize::from(matches!(
                    outcome.state,
                    LookState::Decided {
                        decision: Decision::Regression,
                        ..
                    }
                ));
            }
            (runs as f64 / trials as f64, regressions)
        };
        let (now, power) = mean_runs(InformationSettings::new(0.02, Better::Higher));
        let (before, _) = mean_runs(InformationSettings::without_early_stage(
            0.02,
            Better::Higher,
        ));
        assert!(now <= 45.0, "{now} runs per arm (before {before})");
        assert!(before > 70.0, "{before}");
        assert!(power as f64 >= 0.9 * trials as f64, "{power} of {trials}");
    }
}
