//! `verdict simulate`'s text: the scenario line and one row per procedure
//! (or per boot analysis) with its verdict rates, coverage and runs, from
//! verdict-analysis's `simulate` results (re-exported here). Renders only:
//! every figure is given.

pub use verdict_analysis::simulate::*;

/// The text of `results`: `trials` trials of `scenario` from `seed`.
pub fn render(
    trials: usize,
    seed: u64,
    scenario: &Scenario,
    results: &[ProcedureResult],
) -> String {
    let mut text = format!(
        "{} trials, seed {}: {}, true change {:+.1}%, alpha {}, threshold {}%, {} comparison(s){}\n\n",
        trials,
        seed,
        scenario.noise.shape.describe(scenario.noise.cv),
        scenario.change * 100.0,
        scenario.alpha,
        scenario.threshold * 100.0,
        scenario.comparisons,
        if scenario.comparisons > 1 {
            if scenario.adjust {
                ", adjusted (Bonferroni/Holm)"
            } else {
                ", not adjusted"
            }
        } else {
            ""
        }
    );
    text.push_str(&format!(
        "{:<24} {:>10} {:>11} {:>11} {:>10} {:>9} {:>9} {:>9}\n",
        "procedure",
        "regression",
        "improvement",
        "equivalent",
        "undecided",
        "coverage",
        "mean runs",
        "p95 runs"
    ));
    for result in results {
        let summary = &result.summary;
        let counts = [
            summary.regression,
            summary.improvement,
            summary.equivalent,
            summary.undecided,
        ];
        text.push_str(&format!(
            "{:<24} {} {:>9} {:>9.1} {:>9}\n",
            result.procedure,
            rates(&counts, summary.trials),
            coverage(result.coverage),
            summary.mean_runs,
            summary.p95_runs
        ));
    }
    if scenario.change == 0.0 {
        text.push_str(NO_CHANGE);
    }
    text
}

/// The text of the boot analyses' `results`: `trials` trials of `scenario`
/// from `seed`; `rank_minimum_boots` is the fewest boots per level the rank
/// test over boots can call a change with at the scenario's alpha.
pub fn render_boots(
    trials: usize,
    seed: u64,
    scenario: &BootScenario,
    results: &[BootResult],
    rank_minimum_boots: usize,
) -> String {
    let mut text = format!(
        "{} trials, seed {}: {} boot(s) per level x {} iteration(s) per boot, boot effect CV {}%, \
         within each boot {}, true change {:+.1}%, alpha {}, threshold {}%; run times (lower is better)\n\n",
        trials,
        seed,
        scenario.boots,
        scenario.iterations,
        scenario.boot_cv * 100.0,
        scenario.noise.shape.describe(scenario.noise.cv),
        scenario.change * 100.0,
        scenario.alpha,
        scenario.threshold * 100.0,
    );
    text.push_str(&format!(
        "{:<14} {:>10} {:>11} {:>11} {:>10} {:>9}\n",
        "analysis", "regression", "improvement", "equivalent", "undecided", "coverage"
    ));
    for result in results {
        let tally = &result.tally;
        let counts = [
            tally.regression,
            tally.improvement,
            tally.equivalent,
            tally.undecided,
        ];
        text.push_str(&format!(
            "{:<14} {} {:>9}\n",
            result.label,
            rates(&counts, tally.trials),
            coverage(result.coverage),
        ));
    }
    text.push('\n');
    for result in results {
        text.push_str(&format!("{}: {}\n", result.label, result.description));
    }
    if scenario.change == 0.0 {
        text.push_str(NO_CHANGE);
    }
    if scenario.boots < rank_minimum_boots {
        text.push_str(&format!(
            "The rank test over boots needs at least {rank_minimum_boots} boots per level at alpha {}: with {} it cannot call a change.\n",
            scenario.alpha, scenario.boots
        ));
    }
    if scenario.boots < 2 {
        text.push_str("Welch's t over boots needs at least 2 boots per level: with 1 it cannot call a change.\n");
    }
    text
}

const NO_CHANGE: &str =
    "\nWith no true change, regression + improvement is the false-alarm rate.\n";

fn coverage(coverage: Option<f64>) -> String {
    coverage.map_or("-".to_string(), |coverage| format!("{coverage:.4}"))
}

/// The regression, improvement, equivalent and undecided columns: each
/// count as a fraction of `trials`.
fn rates(&[regression, improvement, equivalent, undecided]: &[usize; 4], trials: usize) -> String {
    let trials = trials as f64;
    format!(
        "{:>10.4} {:>11.4} {:>11.4} {:>10.4}",
        regression as f64 / trials,
        improvement as f64 / trials,
        equivalent as f64 / trials,
        undecided as f64 / trials
    )
}
