//! The edges of verdict's procedures, measured (docs/validation-edges.md):
//! whether each procedure's p-value and interval agree on tied integer
//! data (the interval must be the inversion of the printed test); how
//! often boots whose values lie on a coarse grid are called "equivalent"
//! when the levels differ; and how often the range printed with "N runs
//! would tell" covers the N that the true spread needs.
//!
//! Trial i draws from its own ChaCha8 generator seeded from (seed, i) and
//! the trials run in parallel with rayon, tallied in trial order, so a
//! seed gives the same figures on any number of threads (as `simulate.rs`).
//! Must not: do I/O or read a clock.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use verdict_stats::boots::{BootOptions, BootTest, compare_boots};
use verdict_stats::paired::{compare_paired, walsh_shift};
use verdict_stats::plan::{
    DEFAULT_POWER, PlannedTest, Spread, log_sd_from_cv, normal_cdf, runs_needed,
};
use verdict_stats::shift::Interval;
use verdict_stats::simulate::{Noise, Shape, standard_normal};
use verdict_stats::verdict::{Better, CompareSettings, Undecided, Verdict, compare};

/// A rate with its Monte-Carlo standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub hits: usize,
    pub trials: usize,
}

impl Rate {
    pub fn of(hits: usize, trials: usize) -> Self {
        Self { hits, trials }
    }

    pub fn estimate(&self) -> f64 {
        self.hits as f64 / self.trials.max(1) as f64
    }

    /// sqrt(p(1 − p)/n).
    pub fn standard_error(&self) -> f64 {
        let p = self.estimate();
        (p * (1.0 - p) / self.trials.max(1) as f64).sqrt()
    }

    /// `0.0123 (0.0011)`.
    pub fn text(&self) -> String {
        format!("{:.4} ({:.4})", self.estimate(), self.standard_error())
    }
}

fn generator(seed: u64, trial: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed.wrapping_mul(1_000_003).wrapping_add(trial as u64))
}

/// Integer values around `level`, uniform on ±`spread`.
fn integers(rng: &mut ChaCha8Rng, count: usize, level: i64, spread: i64) -> Vec<f64> {
    (0..count)
        .map(|_| (level + rng.random_range(-spread..=spread)) as f64)
        .collect()
}

fn excludes_zero(interval: Option<Interval>) -> bool {
    interval.is_some_and(|interval| interval.low > 0.0 || interval.high < 0.0)
}

/// One procedure's agreement on tied integer data.
#[derive(Debug, Clone, PartialEq)]
pub struct AgreementRow {
    pub procedure: &'static str,
    pub cases: usize,
    /// Cases whose verdict was a change.
    pub changes: usize,
    /// Cases where p < α/k and "the interval excludes 0" differ, or the
    /// verdict differs from both.
    pub disagreements: usize,
    /// The same count for the procedure before issue 29, where measured.
    pub before: Option<usize>,
}

/// The paired analysis before issue 29, kept to measure the change: the
/// Wilcoxon test with zeros dropped and the tie-corrected normal
/// approximation (exact only without ties), beside the untied Walsh
/// interval. Returns (p, interval excludes 0).
fn paired_before(differences: &[f64], level: f64) -> (f64, bool) {
    let mut nonzero: Vec<f64> = differences.iter().copied().filter(|d| *d != 0.0).collect();
    nonzero.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    let count = nonzero.len();
    let untied = walsh_shift(differences, 1.0 - level, |value| value)
        .is_some_and(|shift| excludes_zero(shift.interval));
    if count == 0 {
        return (1.0, untied);
    }
    let (mut positive, mut correction, mut start) = (0.0, 0.0, 0);
    while start < count {
        let mut end = start + 1;
        while end < count && nonzero[end].abs() == nonzero[start].abs() {
            end += 1;
        }
        let tied = (end - start) as f64;
        correction += tied * tied * tied - tied;
        let midrank = (start + 1 + end) as f64 / 2.0;
        positive += midrank * nonzero[start..end].iter().filter(|d| **d > 0.0).count() as f64;
        start = end;
    }
    let n = count as f64;
    if correction == 0.0 && count <= verdict_stats::paired::EXACT_LIMIT {
        // Untied: the exact test, as the statistic's own (unchanged) path.
        return (verdict_stats::paired::signed_rank(&nonzero).p_value, untied);
    }
    let variance = n * (n + 1.0) * (2.0 * n + 1.0) / 24.0 - correction / 48.0;
    let distance = ((positive - n * (n + 1.0) / 4.0).abs() - 0.5).max(0.0);
    let p = if variance > 0.0 {
        2.0 * normal_cdf(-distance / variance.sqrt())
    } else {
        1.0
    };
    (p.min(1.0), untied)
}

/// One tied-data case of `procedure` (0 two samples, 1 paired, 2 Welch
/// over boots, 3 ranks over boots): (change, disagrees, disagreed before).
fn agreement_case(procedure: usize, rng: &mut ChaCha8Rng, case: usize) -> (bool, bool, bool) {
    let spread = rng.random_range(1..=3);
    let shift = rng.random_range(0..=2);
    let family_size = 1 + case % 3;
    let settings = CompareSettings {
        threshold: 0.05,
        family_size,
        ..CompareSettings::new(Better::Lower)
    };
    let level = settings.level();
    let agrees = |p: f64, interval: Option<Interval>, verdict: Verdict| {
        let rejects = p < level;
        rejects == excludes_zero(interval) && rejects == verdict.is_change()
    };
    // Relative scale (values near 100) or absolute (near 0, some negative).
    let centre = if case % 3 == 0 { 0 } else { 100 };
    match procedure {
        0 | 1 => {
            let (m, n) = (rng.random_range(3..=25), rng.random_range(3..=25));
            let blocks = rng.random_range(4..=40);
            let baseline = integers(rng, if procedure == 0 { m } else { blocks }, centre, spread);
            let candidate = if procedure == 0 {
                integers(rng, n, centre + shift, spread)
            } else {
                let noise = integers(rng, blocks, shift, spread);
                baseline.iter().zip(&noise).map(|(b, d)| b + d).collect()
            };
            let compared = if procedure == 0 {
                compare(&baseline, &candidate, &settings)
            } else {
                compare_paired(&baseline, &candidate, &settings)
            }
            .expect("valid samples");
            let now = agrees(compared.p_value, compared.shift.interval, compared.verdict);
            let before = procedure == 1 && {
                let positive = baseline.iter().chain(&candidate).all(|value| *value > 0.0);
                let differences: Vec<f64> = baseline
                    .iter()
                    .zip(&candidate)
                    .map(|(b, c)| if positive { c.ln() - b.ln() } else { c - b })
                    .collect();
                let (p, excludes) = paired_before(&differences, level);
                (p < level) != excludes
            };
            (compared.verdict.is_change(), !now, before)
        }
        _ => {
            let boots = |rng: &mut ChaCha8Rng, count: usize, level: i64| -> Vec<Vec<f64>> {
                (0..count)
                    .map(|_| {
                        let offset = rng.random_range(-2..=2);
                        let iterations = rng.random_range(1..=5);
                        integers(rng, iterations, level + offset, 2)
                    })
                    .collect()
            };
            let (k_baseline, k_candidate) = (rng.random_range(2..=6), rng.random_range(2..=6));
            let baseline = boots(rng, k_baseline, 100);
            let candidate = boots(rng, k_candidate, 100 + shift);
            let mut options = BootOptions::new(Better::Lower);
            options.settings = settings;
            options.method.test = if procedure == 2 {
                BootTest::Welch
            } else {
                BootTest::Rank
            };
            let compared = compare_boots(&baseline, &candidate, &options).expect("valid boots");
            let now = agrees(compared.p_value, compared.shift.interval, compared.verdict);
            (compared.verdict.is_change(), !now, false)
        }
    }
}

/// Every procedure swept over `cases` random tied integer datasets.
pub fn agreement(cases: usize, seed: u64) -> Vec<AgreementRow> {
    let names = [
        "two samples (3-25 a side)",
        "paired blocks (4-40)",
        "boots, Welch (2-6 a level)",
        "boots, ranks (2-6 a level)",
    ];
    names
        .iter()
        .enumerate()
        .map(|(procedure, name)| {
            let outcomes: Vec<(bool, bool, bool)> = (0..cases)
                .into_par_iter()
                .map(|case| {
                    let mut rng = generator(seed.wrapping_add(procedure as u64 * 7919), case);
                    agreement_case(procedure, &mut rng, case)
                })
                .collect();
            AgreementRow {
                procedure: name,
                cases,
                changes: outcomes.iter().filter(|outcome| outcome.0).count(),
                disagreements: outcomes.iter().filter(|outcome| outcome.1).count(),
                before: (procedure == 1)
                    .then(|| outcomes.iter().filter(|outcome| outcome.2).count()),
            }
        })
        .collect()
}

/// Boots whose iteration values lie on a 10% grid: what the comparison
/// over boots says.
#[derive(Debug, Clone, PartialEq)]
pub struct GridRow {
    pub boots: usize,
    pub iterations: usize,
    pub change: f64,
    pub trials: usize,
    pub equivalent: Rate,
    /// A regression or an improvement.
    pub change_called: Rate,
    /// Inconclusive because every boot of each level had the same median.
    pub no_spread: Rate,
    /// What the rule before issue 29 said "equivalent" to: the same, plus
    /// the tied medians it called equivalent with a zero-width interval.
    pub equivalent_before: Rate,
}

/// One level's boots on the grid: level × boot effect (lognormal CV 2%) ×
/// within-boot noise (lognormal CV 5%), rounded to multiples of 10 (10% of
/// the baseline's 100).
fn grid_boots(rng: &mut ChaCha8Rng, boots: usize, iterations: usize, level: f64) -> Vec<Vec<f64>> {
    let (between, within) = (log_sd_from_cv(0.02), log_sd_from_cv(0.05));
    (0..boots)
        .map(|_| {
            let boot = level * (between * standard_normal(rng)).exp();
            (0..iterations)
                .map(|_| (boot * (within * standard_normal(rng)).exp() / 10.0).round() * 10.0)
                .collect()
        })
        .collect()
}

/// The grid scenarios: 2, 3 and 5 boots per level × 5 iterations, a true
/// change of 0 and +5%, threshold 2%, Welch over boots (the default).
pub fn grid(trials: usize, seed: u64) -> Vec<GridRow> {
    let mut rows = Vec::new();
    for (boots, change) in [(2, 0.05), (3, 0.05), (5, 0.05), (2, 0.0), (5, 0.0)] {
        let iterations = 5;
        let outcomes: Vec<(Verdict, bool, bool)> = (0..trials)
            .into_par_iter()
            .map(|trial| {
                let mut rng = generator(seed ^ (boots as u64) << 32, trial);
                let baseline = grid_boots(&mut rng, boots, iterations, 100.0);
                let candidate = grid_boots(&mut rng, boots, iterations, 100.0 * (1.0 + change));
                let options = BootOptions::new(Better::Lower);
                let compared = compare_boots(&baseline, &candidate, &options).expect("valid");
                let tied = compared.undecided == Some(Undecided::NoSpreadBetweenBoots);
                // Before: Welch with a zero standard error gave [d, d].
                let before_equivalent = tied && compared.shift.estimate.abs() < 0.02;
                (compared.verdict, tied, before_equivalent)
            })
            .collect();
        let count = |predicate: &dyn Fn(&(Verdict, bool, bool)) -> bool| {
            Rate::of(
                outcomes.iter().filter(|outcome| predicate(outcome)).count(),
                trials,
            )
        };
        let equivalent = count(&|outcome| outcome.0 == Verdict::Equivalent);
        rows.push(GridRow {
            boots,
            iterations,
            change,
            trials,
            equivalent,
            change_called: count(&|outcome| outcome.0.is_change()),
            no_spread: count(&|outcome| outcome.1),
            equivalent_before: count(&|outcome| outcome.0 == Verdict::Equivalent || outcome.2),
        });
    }
    rows
}

/// How well "N runs would tell" estimates the N the true spread needs.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageRow {
    pub design: String,
    /// The planner at the true spread.
    pub needed: usize,
    pub trials: usize,
    /// Median of the estimate over the needed N.
    pub median_ratio: f64,
    /// The estimate below half the needed N.
    pub below_half: Rate,
    /// The range [low, high] holds the needed N.
    pub covered: Rate,
    /// The range's upper end is at least the needed N.
    pub upper_covers: Rate,
}

/// A spread estimate per trial and the planner's true N: the coverage row.
fn coverage_row(
    design: String,
    test: PlannedTest,
    true_sd: f64,
    estimates: Vec<Spread>,
) -> CoverageRow {
    let effect = 0.02f64.ln_1p();
    let plan = |spread: Spread| {
        runs_needed(test, spread, effect, 0.05, DEFAULT_POWER, 0).expect("valid spread")
    };
    let needed = plan(Spread {
        sd: true_sd,
        degrees: f64::INFINITY,
    })
    .runs;
    let planned: Vec<_> = estimates.into_iter().map(plan).collect();
    let trials = planned.len();
    let mut ratios: Vec<f64> = planned
        .iter()
        .map(|plan| plan.runs as f64 / needed as f64)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let count = |predicate: &dyn Fn(&verdict_stats::plan::RunsNeeded) -> bool| {
        Rate::of(
            planned.iter().filter(|plan| predicate(plan)).count(),
            trials,
        )
    };
    CoverageRow {
        design,
        needed,
        trials,
        median_ratio: ratios[trials / 2],
        below_half: count(&|plan| 2 * plan.runs < needed),
        covered: count(&|plan| plan.low <= needed && needed <= plan.high),
        upper_covers: count(&|plan| plan.high >= needed),
    }
}

/// Pooled within-cell SD of the logs of two cells and its degrees of freedom.
fn pooled_logs(cells: &[Vec<f64>]) -> Spread {
    let (mut squares, mut degrees) = (0.0, 0usize);
    for cell in cells {
        let logs: Vec<f64> = cell.iter().map(|value| value.ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        squares += logs.iter().map(|log| (log - mean).powi(2)).sum::<f64>();
        degrees += logs.len() - 1;
    }
    Spread {
        sd: (squares / degrees as f64).sqrt(),
        degrees: degrees as f64,
    }
}

/// One boot's summary: the median of `iterations` log values with boot
/// effect CV 2% and within-boot CV 5%.
fn boot_summary(rng: &mut ChaCha8Rng, iterations: usize) -> f64 {
    let (between, within) = (log_sd_from_cv(0.02), log_sd_from_cv(0.05));
    let boot = between * standard_normal(rng);
    let mut logs: Vec<f64> = (0..iterations)
        .map(|_| boot + within * standard_normal(rng))
        .collect();
    logs.sort_by(f64::total_cmp);
    verdict_stats::summary::median_of_sorted(&logs)
}

/// The coverage scenarios: runs per cell from a two-cell A/A pilot
/// (lognormal CV 10%, and heavier tails), boots per level (boot CV 2%,
/// within 5%, 30 iterations, median summaries); threshold 2%, α 0.05,
/// power 0.9.
pub fn coverage(trials: usize, seed: u64) -> Vec<CoverageRow> {
    let mut rows = Vec::new();
    let cv = 0.10;
    for (shape, runs) in [
        (Shape::Lognormal, 3),
        (Shape::Lognormal, 5),
        (Shape::Lognormal, 10),
        (Shape::Lognormal, 30),
        (Shape::StudentT, 10),
        (Shape::Contaminated, 10),
    ] {
        let noise = Noise { shape, cv };
        // The population log spread, from one long draw.
        let population =
            pooled_logs(&noise.draw(&mut generator(seed, usize::MAX), 1, 400_000, 0.0));
        let estimates: Vec<Spread> = (0..trials)
            .into_par_iter()
            .map(|trial| pooled_logs(&noise.draw(&mut generator(seed, trial), 2, runs, 0.0)))
            .collect();
        rows.push(coverage_row(
            format!("{runs} runs a cell, {}", noise.shape.describe(cv)),
            PlannedTest::RankTwoSample,
            population.sd,
            estimates,
        ));
    }
    let iterations = 30;
    let population: Vec<f64> = {
        let mut rng = generator(seed ^ 0x5eed, usize::MAX);
        (0..200_000)
            .map(|_| boot_summary(&mut rng, iterations))
            .collect()
    };
    let true_sd = pooled_logs(&[population.iter().map(|log| log.exp()).collect()]).sd;
    for boots in [2, 3, 5, 10] {
        let estimates: Vec<Spread> = (0..trials)
            .into_par_iter()
            .map(|trial| {
                let mut rng = generator(seed ^ 0x5eed, trial);
                let level = |rng: &mut ChaCha8Rng| -> Vec<f64> {
                    (0..boots)
                        .map(|_| boot_summary(rng, iterations).exp())
                        .collect()
                };
                pooled_logs(&[level(&mut rng), level(&mut rng)])
            })
            .collect();
        rows.push(coverage_row(
            format!("{boots} boots a level x {iterations} iterations, boot CV 2%, within 5%"),
            PlannedTest::Welch,
            true_sd,
            estimates,
        ));
    }
    rows
}

/// The whole section as markdown.
pub fn edges_report(trials: usize, seed: u64) -> String {
    let mut out = format!(
        "## The edges: ties, single runs and boots, and \"N runs would tell\"\n\n\
         `cargo run --release -p verdict-lab --bin edges_validation -- {trials} {seed}` \
         (seeded; standard errors in parentheses).\n\n\
         ### The interval is the inversion of the printed test\n\n\
         Random integer data (values on a grid of 1 around 100, or around 0 with negative \
         values: the absolute scale), 0 to 2 units of shift, families of 1 to 3 comparisons. \
         A disagreement is a case where p < α/k and \"the interval excludes 0\" differ, or the \
         verdict is a change when they say no (or the reverse).\n\n\
         | procedure | cases | changes called | disagreements | before issue 29 |\n|---|---|---|---|---|\n"
    );
    for row in agreement(trials, seed) {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            row.procedure,
            row.cases,
            row.changes,
            row.disagreements,
            row.before.map_or("-".to_string(), |before| format!(
                "{before} ({:.1}%)",
                100.0 * before as f64 / row.cases as f64
            ))
        ));
    }
    out.push_str(
        "\n\"Before\" for the paired analysis is its test then (zeros dropped, tie-corrected normal \
         approximation) beside the untied Walsh-average interval.\n\n\
         ### Boots on a coarse grid\n\n\
         Iteration values rounded to multiples of 10 (10% of the baseline), boot effect CV 2%, \
         within-boot CV 5%, 5 iterations per boot, threshold 2%, Welch over boots. \"Before\": \
         tied per-boot medians gave a zero-width interval, called equivalent when the medians \
         agreed.\n\n\
         | boots a level | true change | equivalent | change called | no spread (inconclusive) | equivalent before |\n|---|---|---|---|---|---|\n",
    );
    for row in grid(trials, seed) {
        out.push_str(&format!(
            "| {} | {:+.0}% | {} | {} | {} | {} |\n",
            row.boots,
            row.change * 100.0,
            row.equivalent.text(),
            row.change_called.text(),
            row.no_spread.text(),
            row.equivalent_before.text()
        ));
    }
    out.push_str(
        "\n### \"N runs would tell\" and its range\n\n\
         A pilot's spread estimate planned for ±2% at α 0.05 and power 0.9; \"needed\" is the \
         planner at the population spread. The range is the planner at the ends of the 80% \
         chi-square interval of the spread (exact for normal log values).\n\n\
         | pilot | needed | median estimate / needed | estimate below half | range covers | upper end covers |\n|---|---|---|---|---|---|\n",
    );
    for row in coverage(trials, seed) {
        out.push_str(&format!(
            "| {} | {} | {:.2} | {} | {} | {} |\n",
            row.design,
            row.needed,
            row.median_ratio,
            row.below_half.text(),
            row.covered.text(),
            row.upper_covers.text()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_procedure_agrees_and_the_paired_one_did_not_before() {
        let rows = agreement(400, 3);
        for row in &rows {
            assert_eq!(row.disagreements, 0, "{row:?}");
            assert!(row.changes > 10, "{row:?}");
        }
        assert!(rows[1].before.unwrap() > 10, "{:?}", rows[1]);
    }

    #[test]
    fn coarse_grid_boots_are_not_called_equivalent_beyond_alpha() {
        let rows = grid(400, 5);
        let first = &rows[0];
        assert_eq!((first.boots, first.change), (2, 0.05));
        // Three standard errors above α at most; before, far above it.
        assert!(
            first.equivalent.estimate() <= 0.05 + 3.0 * first.equivalent.standard_error(),
            "{first:?}"
        );
        assert!(first.equivalent_before.estimate() > 0.10, "{first:?}");
    }
}
