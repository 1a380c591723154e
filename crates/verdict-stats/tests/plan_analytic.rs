//! Checks the analytic operating characteristics of the adaptive design
//! (`sequential::operating_characteristics`, what `verdict plan` prints)
//! against the Monte-Carlo simulation `verdict plan` used before
//! (`simulate::simulate` with the adaptive procedure, lognormal noise), at
//! settings where the simulation is affordable in a debug build.
//!
//! Tolerances: mean runs within 6% of the simulated mean; verdict rates
//! (power, "equivalent", false alarms) within 0.05 absolute. The
//! Monte-Carlo standard error at 1,000 trials is ≤ 0.016 for a rate and
//! about 1.5% for the mean runs, so the tolerances are about 3 standard
//! errors plus the normal-theory approximation error (observed ≤ 2%).

use verdict_stats::plan::DEFAULT_POWER;
use verdict_stats::sequential::{
    Better, SequentialDesign, SequentialSettings, cap_for_power, operating_characteristics,
};
use verdict_stats::simulate::{Noise, Procedure, Scenario, Shape, simulate};

const TRIALS: usize = 1000;

fn check(cv: f64, threshold: f64) {
    let cap = cap_for_power(cv, threshold, 0.05, DEFAULT_POWER).unwrap();
    let settings = SequentialSettings::new(cap.max(6), threshold, Better::Lower);
    let design = SequentialDesign::new(settings).unwrap();
    for (change, seed) in [(threshold, 1), (0.0, 2)] {
        let scenario = Scenario {
            noise: Noise {
                shape: Shape::Lognormal,
                cv,
            },
            change,
            alpha: 0.05,
            threshold,
            better: Better::Lower,
            comparisons: 1,
            adjust: false,
        };
        let simulated = simulate(
            &scenario,
            &Procedure::Adaptive(design.clone()),
            TRIALS,
            seed,
        );
        let analytic = operating_characteristics(&settings, cv, change).unwrap();
        let context = format!(
            "cv {cv}, threshold {threshold}, cap {cap}, change {change}:\n  simulated {simulated:?}\n  analytic {analytic:?}"
        );
        println!("{context}");
        let relative = (analytic.mean_runs - simulated.mean_runs).abs() / simulated.mean_runs;
        assert!(relative < 0.06, "mean runs off by {relative:.3}; {context}");
        let pairs = [
            (
                analytic.regression,
                simulated.regression_rate(),
                "regression",
            ),
            (
                analytic.equivalent,
                simulated.equivalent_rate(),
                "equivalent",
            ),
            (
                analytic.change_rate(),
                simulated.change_rate(),
                "any change",
            ),
        ];
        for (computed, measured, what) in pairs {
            assert!(
                (computed - measured).abs() < 0.05,
                "{what}: {computed:.3} vs {measured:.3}; {context}"
            );
        }
    }
}

#[test]
fn agrees_with_simulation_at_cv_13_threshold_10() {
    check(0.13, 0.10);
}

#[test]
fn agrees_with_simulation_at_cv_30_threshold_19() {
    check(0.30, 0.19);
}

#[test]
fn agrees_with_simulation_at_cv_13_threshold_5() {
    check(0.13, 0.05);
}
