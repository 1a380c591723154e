//! Metrics that can be zero or negative (Go's `allocs/op`, `B/op`, signed
//! offsets) are compared on the absolute scale: the Hodges–Lehmann shift
//! C − B in the metric's unit with its Moses/Bauer interval, the threshold
//! t·|median of B|. Before, any value <= 0 was an error that aborted the
//! whole comparison.

use verdict_stats::verdict::{Better, CompareSettings, Magnitude, Scale, Verdict, compare};

fn settings() -> CompareSettings {
    CompareSettings::new(Better::Lower)
}

#[test]
fn zero_allocations_on_both_sides_are_equivalent() {
    let zeros = [0.0; 10];
    let comparison = compare(&zeros, &zeros, &settings()).unwrap();
    assert_eq!(comparison.scale, Scale::Absolute);
    assert_eq!(comparison.absolute_threshold, Some(0.0));
    assert_eq!(comparison.shift.estimate, 0.0);
    let interval = comparison.shift.interval.unwrap();
    assert_eq!((interval.low, interval.high), (0.0, 0.0));
    assert_eq!(comparison.verdict, Verdict::Equivalent);
    assert_eq!(comparison.p_value, 1.0);
}

#[test]
fn one_new_allocation_is_a_regression_in_allocations() {
    let comparison = compare(&[0.0; 10], &[1.0; 10], &settings()).unwrap();
    assert_eq!(comparison.scale, Scale::Absolute);
    assert_eq!(comparison.shift.estimate, 1.0);
    let interval = comparison.shift.interval.unwrap();
    assert_eq!((interval.low, interval.high), (1.0, 1.0));
    assert_eq!(comparison.verdict, Verdict::Regression);
    assert_eq!(comparison.magnitude, Some(Magnitude::AboveThreshold));
    assert!(comparison.p_value < 0.001, "{comparison:?}");
}

#[test]
fn negative_values_shift_in_their_unit() {
    // A signed offset around −5 that moves to around −3 (lower is better).
    let baseline: Vec<f64> = (0..12).map(|i| -5.0 + 0.1 * (i % 4) as f64).collect();
    let candidate: Vec<f64> = (0..12).map(|i| -3.0 + 0.1 * ((i + 1) % 4) as f64).collect();
    let comparison = compare(&baseline, &candidate, &settings()).unwrap();
    assert_eq!(comparison.scale, Scale::Absolute);
    assert!(
        (comparison.shift.estimate - 2.0).abs() < 0.15,
        "{comparison:?}"
    );
    let interval = comparison.shift.interval.unwrap();
    assert!(interval.low > 1.5 && interval.high < 2.5, "{interval:?}");
    assert_eq!(comparison.verdict, Verdict::Regression);
    // Threshold 2% of |median of B| ≈ 0.1 in the unit: far exceeded.
    let threshold = comparison.absolute_threshold.unwrap();
    assert!((threshold - 0.02 * 4.85).abs() < 0.01, "{threshold}");
    assert_eq!(comparison.magnitude, Some(Magnitude::AboveThreshold));
}

#[test]
fn positive_values_stay_relative() {
    let comparison = compare(&[10.0, 11.0, 12.0], &[10.5, 11.5, 12.5], &settings()).unwrap();
    assert_eq!(comparison.scale, Scale::Relative);
    assert_eq!(comparison.absolute_threshold, None);
}
