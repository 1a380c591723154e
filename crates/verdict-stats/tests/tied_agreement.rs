//! Tied data (integer-valued metrics): the p-value and the interval that
//! `verdict::compare` reports must agree, p < α exactly when the 1 − α
//! interval excludes 0, because both come from the exact tie-conditional
//! Mann–Whitney test (the interval inverts it). Issue 11's case, and a sweep
//! over many tied samples, which also shows the previous interval (the
//! untied Moses/Bauer order statistics) disagreed on a share of them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use verdict_stats::rank::mann_whitney;
use verdict_stats::shift::relative_shift;
use verdict_stats::verdict::{Better, CompareSettings, Verdict, compare};

fn settings() -> CompareSettings {
    let mut settings = CompareSettings::new(Better::Lower);
    settings.threshold = 0.05;
    settings
}

fn excludes_zero(interval: Option<verdict_stats::shift::Interval>) -> bool {
    interval.is_some_and(|interval| interval.low > 0.0 || interval.high < 0.0)
}

#[test]
fn issue_eleven_case_agrees() {
    let baseline = [10.0, 10.0, 10.0, 10.0];
    let candidate = [9.0, 11.0, 11.0, 12.0, 12.0, 12.0];
    // Before: p 0.048 with the interval [-10%, +20%] containing 0.
    let test = mann_whitney(&baseline, &candidate);
    assert!((test.p_value - 0.0476).abs() < 1e-3, "{test:?}");
    let untied = relative_shift(&baseline, &candidate, 0.95).unwrap();
    assert!(!excludes_zero(untied.interval), "{untied:?}");

    let comparison = compare(&baseline, &candidate, &settings()).unwrap();
    assert_eq!(comparison.p_value, test.p_value);
    let interval = comparison.shift.interval.unwrap();
    assert!(interval.low > 0.0, "{interval:?}");
    assert!(interval.high >= 0.2 - 1e-12, "{interval:?}");
    assert_eq!(comparison.verdict, Verdict::Regression);
}

#[test]
fn sweep_of_tied_samples_agrees() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let alpha = 0.05;
    let (mut cases, mut significant, mut old_disagreements) = (0, 0, 0);
    while cases < 600 {
        let m = rng.random_range(3..=25);
        let n = rng.random_range(3..=25);
        let shift = rng.random_range(0..=2);
        let spread = rng.random_range(2..=5);
        let baseline: Vec<f64> = (0..m)
            .map(|_| 10.0 + rng.random_range(0..spread) as f64)
            .collect();
        let candidate: Vec<f64> = (0..n)
            .map(|_| 10.0 + (shift + rng.random_range(0..spread)) as f64)
            .collect();
        cases += 1;
        let comparison = compare(&baseline, &candidate, &settings()).unwrap();
        let rejects = comparison.p_value < alpha;
        significant += usize::from(rejects);
        assert_eq!(
            rejects,
            excludes_zero(comparison.shift.interval),
            "{baseline:?} vs {candidate:?}: {comparison:?}"
        );
        let changed = matches!(
            comparison.verdict,
            Verdict::Regression | Verdict::Improvement
        );
        assert_eq!(rejects, changed, "{baseline:?} vs {candidate:?}");
        let old_p = mann_whitney(&baseline, &candidate).p_value;
        let old = relative_shift(&baseline, &candidate, 1.0 - alpha).unwrap();
        if (old_p < alpha) != excludes_zero(old.interval) {
            old_disagreements += 1;
        }
    }
    // The sweep exercises both outcomes, and the old pair disagreed often.
    assert!(significant > 120 && significant < 540, "{significant}");
    assert!(old_disagreements > 30, "{old_disagreements}");
    println!(
        "{cases} tied cases: {significant} significant; the untied interval disagreed with the test in {old_disagreements}"
    );
}
