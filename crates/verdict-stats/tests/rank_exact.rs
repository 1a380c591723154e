//! Mann–Whitney p-values against (a) brute-force enumeration of the
//! rank-sum permutation distribution, with and without ties, and (b) SciPy
//! reference values for samples beyond the exact limits.
//! Must not: share code with the implementation under test.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use verdict_stats::rank::mann_whitney;

/// 2·U of the first `m` of `pooled` against the rest: pairs with the first
/// larger count 2, ties count 1.
fn doubled_u(first: &[f64], second: &[f64]) -> u64 {
    let mut total = 0;
    for x in first {
        for y in second {
            total += match x.partial_cmp(y).unwrap() {
                std::cmp::Ordering::Greater => 2,
                std::cmp::Ordering::Equal => 1,
                std::cmp::Ordering::Less => 0,
            };
        }
    }
    total
}

/// The two-sided permutation p by enumerating all C(m+n, m) relabelings:
/// 2·min(P(U₁ ≤ u₁), P(U₁ ≥ u₁)), or 1 when U₁ = U₂. (benchstat doubles
/// P(U₁ ≤ min(u₁, u₂)), which is the same only when U₁'s tie-conditional
/// distribution is symmetric; with asymmetric ties it can be 0.)
fn brute_force_p(baseline: &[f64], candidate: &[f64]) -> f64 {
    let (m, n) = (baseline.len(), candidate.len());
    let pooled: Vec<f64> = baseline.iter().chain(candidate).copied().collect();
    let observed = doubled_u(baseline, candidate);
    let other = 2 * (m * n) as u64 - observed;
    if observed == other {
        return 1.0;
    }
    let (mut at_most, mut at_least, mut total) = (0u64, 0u64, 0u64);
    for mask in 0u32..(1 << (m + n)) {
        if mask.count_ones() as usize != m {
            continue;
        }
        let (mut first, mut second) = (Vec::new(), Vec::new());
        for (index, value) in pooled.iter().enumerate() {
            if mask & (1 << index) != 0 {
                first.push(*value);
            } else {
                second.push(*value);
            }
        }
        total += 1;
        let relabelled = doubled_u(&first, &second);
        at_most += u64::from(relabelled <= observed);
        at_least += u64::from(relabelled >= observed);
    }
    (2.0 * at_most.min(at_least) as f64 / total as f64).min(1.0)
}

fn random_case(rng: &mut ChaCha8Rng, with_ties: bool) -> (Vec<f64>, Vec<f64>) {
    let m = rng.random_range(1..=7);
    let n = rng.random_range(1..=14 - m);
    let shift = rng.random_range(0.0..3.0);
    let mut draw = |size: usize, offset: f64| -> Vec<f64> {
        (0..size)
            .map(|_| {
                let value = rng.random_range(0.0..6.0) + offset;
                if with_ties { value.round() } else { value }
            })
            .collect()
    };
    let baseline = draw(m, 0.0);
    let candidate = draw(n, shift);
    (baseline, candidate)
}

#[test]
fn exact_p_values_match_enumeration() {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut tied_cases = 0;
    for case in 0..60 {
        let with_ties = case % 2 == 0;
        let (baseline, candidate) = random_case(&mut rng, with_ties);
        let pooled_distinct = {
            let mut all: Vec<f64> = baseline.iter().chain(&candidate).copied().collect();
            all.sort_by(f64::total_cmp);
            all.dedup();
            all.len()
        };
        if pooled_distinct < baseline.len() + candidate.len() {
            tied_cases += 1;
        }
        let test = mann_whitney(&baseline, &candidate);
        let expected = brute_force_p(&baseline, &candidate);
        assert!(test.exact);
        assert!(
            (test.p_value - expected).abs() < 1e-6,
            "case {case}: {baseline:?} vs {candidate:?}: {} vs {expected}",
            test.p_value
        );
        assert_eq!(2.0 * test.u, doubled_u(&baseline, &candidate) as f64);
    }
    assert!(tied_cases >= 25, "only {tied_cases} cases had ties");
}

// Reference values from SciPy 1.17.1, produced by
//   scipy.stats.mannwhitneyu(b, c, alternative="two-sided",
//                            method=<method>, use_continuity=True)
// on the same formula-generated data (see each test); statistic is U of b.

#[test]
fn normal_approximation_with_ties_matches_scipy() {
    // method="asymptotic": 60 vs 70 with many ties (> 25, so not exact).
    let baseline: Vec<f64> = (0..60).map(|i| ((i * 37) % 23) as f64).collect();
    let candidate: Vec<f64> = (0..70).map(|j| ((j * 41) % 29) as f64 + 1.0).collect();
    let test = mann_whitney(&baseline, &candidate);
    assert!(!test.exact);
    assert_eq!(test.u, 1535.5);
    assert!(
        (test.p_value - 0.008_395_575_892_308_061).abs() < 1e-12,
        "{test:?}"
    );
}

#[test]
fn exact_without_ties_at_forty_five_matches_scipy() {
    // method="exact": 40 vs 45, no ties (≤ 50, so exact).
    let baseline: Vec<f64> = (0..40).map(|i| i as f64 + 0.25).collect();
    let candidate: Vec<f64> = (0..45).map(|j| j as f64 + 5.5).collect();
    let test = mann_whitney(&baseline, &candidate);
    assert!(test.exact);
    assert_eq!(test.u, 595.0);
    assert!(
        (test.p_value - 0.006_892_378_678_982_4).abs() < 1e-12,
        "{test:?}"
    );
}

#[test]
fn normal_approximation_without_ties_matches_scipy() {
    // method="asymptotic": 200 vs 300, no ties.
    let baseline: Vec<f64> = (0..200)
        .map(|i| ((i * 7919) % 10007) as f64 + 0.5)
        .collect();
    let candidate: Vec<f64> = (0..300)
        .map(|j| ((j * 6007) % 10009) as f64 + 30.25)
        .collect();
    let test = mann_whitney(&baseline, &candidate);
    assert!(!test.exact);
    assert_eq!(test.u, 34564.0);
    assert!(
        (test.p_value - 0.003_934_963_104_473_152).abs() < 1e-12,
        "{test:?}"
    );
}
