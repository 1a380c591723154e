//! relative_shift against a brute-force list of all m·n log differences,
//! its duality with the U test, and invariances (proptest): the interval
//! contains the estimate, swapping arms inverts the ratio, scaling both
//! samples changes nothing relative, p-values lie in [0, 1].
//! Must not: reuse the implementation's selection or null distribution.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use verdict_stats::rank::mann_whitney;
use verdict_stats::shift::relative_shift;
use verdict_stats::verdict::{Better, CompareSettings, compare};

fn all_differences(baseline: &[f64], candidate: &[f64]) -> Vec<f64> {
    let logs_b: Vec<f64> = baseline.iter().map(|value| value.ln()).collect();
    let logs_c: Vec<f64> = candidate.iter().map(|value| value.ln()).collect();
    let mut differences: Vec<f64> = logs_b
        .iter()
        .flat_map(|b| logs_c.iter().map(move |c| c - b))
        .collect();
    differences.sort_by(f64::total_cmp);
    differences
}

/// Largest k with P(U ≤ k−1) ≤ tail under the continuous null, by
/// enumerating all C(m+n, m) rank sets (small m+n only).
fn enumerated_rank(m: usize, n: usize, tail: f64) -> Option<usize> {
    let mut counts = vec![0u64; m * n + 1];
    let mut total = 0u64;
    for mask in 0u32..(1 << (m + n)) {
        if mask.count_ones() as usize != m {
            continue;
        }
        // U = Σ over first-sample positions of the second-sample positions below.
        let mut u = 0;
        let mut second_below = 0;
        for position in 0..m + n {
            if mask & (1 << position) != 0 {
                u += second_below;
            } else {
                second_below += 1;
            }
        }
        counts[u] += 1;
        total += 1;
    }
    let mut cumulative = 0u64;
    let mut best = None;
    for (u, count) in counts.iter().enumerate() {
        cumulative += count;
        if cumulative as f64 / total as f64 <= tail {
            best = Some(u + 1);
        } else {
            break;
        }
    }
    best
}

fn draw(rng: &mut ChaCha8Rng, size: usize, scale: f64, ties: bool) -> Vec<f64> {
    (0..size)
        .map(|_| {
            let value = scale * (rng.random_range(-0.4..0.4f64)).exp() * 100.0;
            if ties { value.round() } else { value }
        })
        .collect()
}

#[test]
fn matches_brute_force_on_small_samples() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut with_interval = 0;
    for case in 0..40 {
        let m = rng.random_range(1..=7);
        let n = rng.random_range(1..=14 - m);
        let ties = case % 2 == 0;
        let baseline = draw(&mut rng, m, 1.0, ties);
        let candidate = draw(&mut rng, n, 1.05, ties);
        let differences = all_differences(&baseline, &candidate);
        let pairs = differences.len();
        let median = if pairs % 2 == 1 {
            differences[pairs / 2]
        } else {
            (differences[pairs / 2 - 1] + differences[pairs / 2]) / 2.0
        };
        let shift = relative_shift(&baseline, &candidate, 0.90).unwrap();
        assert_eq!(shift.estimate, median.exp_m1(), "case {case}");
        match (enumerated_rank(m, n, 0.05), shift.interval) {
            (None, None) => {}
            (Some(k), Some(interval)) => {
                with_interval += 1;
                assert_eq!(interval.low, differences[k - 1].exp_m1(), "case {case}");
                assert_eq!(
                    interval.high,
                    differences[pairs - k].exp_m1(),
                    "case {case}"
                );
                assert!(interval.confidence >= 0.90);
            }
            (expected, got) => panic!("case {case} ({m} vs {n}): {expected:?} vs {got:?}"),
        }
    }
    assert!(with_interval >= 10, "{with_interval}");
}

#[test]
fn interval_ends_are_symmetric_order_statistics_on_larger_samples() {
    // Up to 80 per side covers the exact (≤ 50) and normal branches.
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for case in 0..20 {
        let m = rng.random_range(5..=80);
        let n = rng.random_range(5..=80);
        let baseline = draw(&mut rng, m, 1.0, case % 3 == 0);
        let candidate = draw(&mut rng, n, 0.97, case % 3 == 0);
        let differences = all_differences(&baseline, &candidate);
        let interval = relative_shift(&baseline, &candidate, 0.95)
            .unwrap()
            .interval
            .unwrap();
        let symmetric = (1..=differences.len() / 2).any(|k| {
            differences[k - 1].exp_m1() == interval.low
                && differences[differences.len() - k].exp_m1() == interval.high
        });
        assert!(symmetric, "case {case} ({m} vs {n}): {interval:?}");
        assert!((0.95..0.97).contains(&interval.confidence), "{interval:?}");
    }
}

#[test]
fn interval_excludes_zero_exactly_when_the_test_rejects() {
    // Without ties the Moses interval and the exact U test are duals.
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let (mut rejected, mut kept) = (0, 0);
    for _ in 0..200 {
        let m = rng.random_range(4..=30);
        let n = rng.random_range(4..=30);
        let baseline = draw(&mut rng, m, 1.0, false);
        let scale = rng.random_range(0.85..1.15);
        let candidate = draw(&mut rng, n, scale, false);
        let test = mann_whitney(&baseline, &candidate);
        assert!(test.exact);
        let interval = relative_shift(&baseline, &candidate, 0.95)
            .unwrap()
            .interval
            .unwrap();
        let excludes_zero = interval.low > 0.0 || interval.high < 0.0;
        assert_eq!(
            excludes_zero,
            test.p_value <= 0.05,
            "p={} {interval:?}",
            test.p_value
        );
        if excludes_zero {
            rejected += 1
        } else {
            kept += 1
        }
    }
    assert!(rejected > 20 && kept > 20, "{rejected} {kept}");
}

fn sample(ties: bool) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(1.0..2000.0f64, 1..40).prop_map(move |values| {
        if ties {
            values.iter().map(|v| (v / 100.0).ceil()).collect()
        } else {
            values
        }
    })
}

fn close(left: f64, right: f64) -> bool {
    (left - right).abs() <= 1e-9 * (1.0 + left.abs().max(right.abs()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn interval_contains_estimate(
        baseline in sample(false), candidate in sample(true), confidence in 0.5..0.999f64
    ) {
        let shift = relative_shift(&baseline, &candidate, confidence).unwrap();
        if let Some(interval) = shift.interval {
            prop_assert!(interval.low <= shift.estimate && shift.estimate <= interval.high);
            prop_assert!(interval.confidence >= confidence - 1e-9);
        }
    }

    #[test]
    fn swapping_arms_inverts_the_ratio(baseline in sample(true), candidate in sample(false)) {
        let forward = relative_shift(&baseline, &candidate, 0.95).unwrap();
        let backward = relative_shift(&candidate, &baseline, 0.95).unwrap();
        prop_assert!(close(1.0 + backward.estimate, 1.0 / (1.0 + forward.estimate)));
        prop_assert_eq!(forward.interval.is_some(), backward.interval.is_some());
        if let (Some(there), Some(back)) = (forward.interval, backward.interval) {
            prop_assert!(close(1.0 + back.low, 1.0 / (1.0 + there.high)));
            prop_assert!(close(1.0 + back.high, 1.0 / (1.0 + there.low)));
        }
        let forward_test = mann_whitney(&baseline, &candidate);
        let backward_test = mann_whitney(&candidate, &baseline);
        prop_assert_eq!(
            forward_test.u + backward_test.u,
            (baseline.len() * candidate.len()) as f64
        );
    }

    #[test]
    fn scaling_both_samples_changes_nothing_relative(
        baseline in sample(false), candidate in sample(false), exponent in -20i32..20
    ) {
        let scale = 2f64.powi(exponent) * 3.0;
        let scaled_b: Vec<f64> = baseline.iter().map(|value| value * scale).collect();
        let scaled_c: Vec<f64> = candidate.iter().map(|value| value * scale).collect();
        let plain = relative_shift(&baseline, &candidate, 0.95).unwrap();
        let scaled = relative_shift(&scaled_b, &scaled_c, 0.95).unwrap();
        prop_assert!(close(plain.estimate, scaled.estimate));
        if let (Some(left), Some(right)) = (plain.interval, scaled.interval) {
            prop_assert!(close(left.low, right.low) && close(left.high, right.high));
        }
        let settings = CompareSettings::new(Better::Lower);
        let plain_compare = compare(&baseline, &candidate, &settings).unwrap();
        let scaled_compare = compare(&scaled_b, &scaled_c, &settings).unwrap();
        prop_assert_eq!(plain_compare.verdict, scaled_compare.verdict);
        prop_assert!(close(plain_compare.p_value, scaled_compare.p_value));
    }

    #[test]
    fn p_value_is_a_probability(baseline in sample(true), candidate in sample(true)) {
        let test = mann_whitney(&baseline, &candidate);
        prop_assert!((0.0..=1.0).contains(&test.p_value), "{:?}", test);
    }
}
