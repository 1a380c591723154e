//! Replays independently generated sequences through `sequential::replay`
//! (the same code path as `verdict compare --sequential`) and checks the
//! error rate and coverage claims of the adaptive design, plus that naive
//! peeking at the same looks would have failed the same check.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use verdict_stats::rank::mann_whitney;
use verdict_stats::sequential::{
    Better, Decision, ReplayState, SequentialDesign, SequentialSettings, replay,
};

/// Lognormal values with CV ≈ 13% (log-scale sd 0.13), median `scale`.
fn lognormal(rng: &mut ChaCha8Rng, runs: usize, scale: f64) -> Vec<f64> {
    (0..runs)
        .map(|_| {
            // Box–Muller; independent of the simulate module's generator.
            let radius = (-2.0 * (1.0 - rng.random::<f64>()).ln()).sqrt();
            let angle = std::f64::consts::TAU * rng.random::<f64>();
            scale * (0.13 * radius * angle.sin()).exp()
        })
        .collect()
}

fn small_design(better: Better) -> SequentialDesign {
    // Looks at 6, 8, ..., 16 runs per arm: 6 looks, small enough for a debug build.
    let mut settings = SequentialSettings::new(16, 0.02, better);
    settings.block = 2;
    SequentialDesign::new(settings).unwrap()
}

#[test]
fn aa_false_alarm_rate_stays_within_alpha_at_any_stop() {
    const TRIALS: u64 = 1500;
    let design = small_design(Better::Higher);
    let looks: Vec<usize> = design.looks().iter().map(|look| look.runs).collect();
    let outcomes: Vec<(bool, bool, bool)> = (0..TRIALS)
        .into_par_iter()
        .map(|trial| {
            let mut rng = ChaCha8Rng::seed_from_u64(0xA5A5_0000 + trial);
            let baseline = lognormal(&mut rng, 16, 100.0);
            let candidate = lognormal(&mut rng, 16, 100.0);
            let outcome = replay(&design, &baseline, &candidate);
            let false_alarm = matches!(
                outcome.decision,
                Some(Decision::Regression | Decision::Improvement)
            );
            // Coverage of the true shift 0 by the interval at the stop.
            let covered = outcome
                .interval
                .is_some_and(|interval| interval.low <= 0.0 && 0.0 <= interval.high);
            // Naive peeking at the same looks: any p < 0.05.
            let peeking = looks
                .iter()
                .any(|&runs| mann_whitney(&baseline[..runs], &candidate[..runs]).p_value < 0.05);
            assert!(outcome.state != ReplayState::OutOfData);
            (false_alarm, covered, peeking)
        })
        .collect();
    let trials = TRIALS as f64;
    let rate = |pick: fn(&(bool, bool, bool)) -> bool| {
        outcomes.iter().filter(|outcome| pick(outcome)).count() as f64 / trials
    };
    let false_alarms = rate(|outcome| outcome.0);
    let coverage = rate(|outcome| outcome.1);
    let peeking = rate(|outcome| outcome.2);
    let standard_error = (0.05f64 * 0.95 / trials).sqrt();
    assert!(
        false_alarms <= 0.05 + 3.0 * standard_error,
        "adaptive false alarms {false_alarms}"
    );
    assert!(
        coverage >= 0.95 - 3.0 * standard_error,
        "adaptive coverage {coverage}"
    );
    // The check has teeth: peeking at the same 6 looks exceeds the bound.
    assert!(
        peeking > 0.05 + 3.0 * standard_error,
        "peeking false alarms {peeking}"
    );
}

#[test]
fn replay_stops_early_on_a_large_change_and_names_it() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let baseline = lognormal(&mut rng, 16, 100.0);
    let candidate = lognormal(&mut rng, 16, 60.0);
    let outcome = replay(&small_design(Better::Higher), &baseline, &candidate);
    assert_eq!(outcome.state, ReplayState::Decided);
    assert_eq!(outcome.decision, Some(Decision::Regression));
    assert_eq!(outcome.stopped_at, 6);
    let interval = outcome.interval.unwrap();
    assert!(interval.high < 0.0 && interval.low < -0.2, "{interval:?}");
    assert!(
        outcome
            .procedure
            .contains("looks every 2 run(s) per arm from 6 to 16")
    );
    // The same data, lower-is-better: the candidate's drop is an improvement.
    let lower = replay(&small_design(Better::Lower), &baseline, &candidate);
    assert_eq!(lower.decision, Some(Decision::Improvement));
}

#[test]
fn replay_reports_the_cap_and_running_out_of_data() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let design = small_design(Better::Higher);
    // A small real change the design cannot resolve by 16 runs.
    let mut found_cap = false;
    for _ in 0..20 {
        let baseline = lognormal(&mut rng, 16, 100.0);
        let candidate = lognormal(&mut rng, 16, 99.0);
        let outcome = replay(&design, &baseline, &candidate);
        if outcome.state == ReplayState::InconclusiveAtCap {
            assert_eq!(outcome.stopped_at, 16);
            assert_eq!(outcome.looks, 6);
            assert_eq!(outcome.decision, None);
            found_cap = true;
            break;
        }
    }
    assert!(found_cap);
    let baseline = lognormal(&mut rng, 9, 100.0);
    let candidate = lognormal(&mut rng, 9, 99.0);
    let outcome = replay(&design, &baseline, &candidate);
    assert_eq!(outcome.state, ReplayState::OutOfData);
    assert_eq!(outcome.stopped_at, 8);
    let empty = replay(&design, &baseline[..3], &candidate[..3]);
    assert_eq!(empty.state, ReplayState::OutOfData);
    assert_eq!(empty.looks, 0);
}

#[test]
fn design_serializes_with_its_looks() {
    let design = small_design(Better::Higher);
    let json = serde_json::to_value(&design).unwrap();
    assert_eq!(json["settings"]["max"], 16);
    assert_eq!(json["settings"]["spending"]["family"], "hwang_shih_decani");
    assert_eq!(json["looks"].as_array().unwrap().len(), 6);
    let first = json["looks"][0]["nominal_confidence"].as_f64().unwrap();
    assert!(first > 0.95 && first < 1.0);
}
