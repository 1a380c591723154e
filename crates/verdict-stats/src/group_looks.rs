//! One-sided group-sequential boundaries at arbitrary look times: the
//! probability that a standardized statistic crosses given critical values
//! at some look, and the constant critical value (Pocock-type) that makes
//! that probability α.
//!
//! What it does: under H₀ the standardized statistics Z₁ … Z_K at looks
//! with information I₁ < … < I_K (runs or blocks) follow the canonical
//! joint distribution, Cov(Z_j, Z_k) = sqrt(I_j / I_k) (Jennison &
//! Turnbull 2000, §3.1). `crossing_probability` computes
//! P(Z_k ≥ c_k for some k) by the recursive numerical integration of
//! Armitage, McPherson & Rowe (1969, JRSS A 132:235), laid out in Jennison
//! & Turnbull ch. 19: the score S_k = Z_k·sqrt(I_k) has independent
//! N(0, I_k − I_{k−1}) increments, so the sub-density of S_k on the
//! continuation region is the previous one convolved with a normal kernel.
//! `constant_boundary` solves for the single c with crossing probability α
//! (Pocock 1977, Biometrika 64:191, one-sided, at unequal look times).
//! Unlike `sequential::boundaries` (two-sided, Lan–DeMets spending over
//! equally spaced looks up to a cap) it takes any look times, so looks can
//! be spaced geometrically: the number of looks, and with it the
//! critical value, grows only with the logarithm of the cap.
//! Must not: do I/O, or use randomness.
//!
//! Method details: trapezoid rule on a grid of step ≤ 1/6 of the smaller
//! adjacent increment's standard deviation, from −8·sqrt(I_k) (the mass
//! below is < 1e-15) to the boundary. O(K·G²) for K looks and grids of G
//! points; with geometric looks G stays about constant (≈ 150–300), a few
//! milliseconds per evaluation.

use crate::plan::{normal_cdf, normal_quantile};

/// Lower edge of each grid, in standard deviations of S_k.
const LOWER_EDGE: f64 = 8.0;

/// Grid step as a fraction of the increments' standard deviation.
const STEP_FRACTION: f64 = 1.0 / 6.0;

fn normal_density(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// P(Z_k ≥ `critical[k]` for some k) under H₀ for looks at information
/// `information` (strictly increasing, > 0). An infinite critical value is
/// a look that cannot stop. O(K·G²).
pub fn crossing_probability(information: &[f64], critical: &[f64]) -> f64 {
    assert_eq!(
        information.len(),
        critical.len(),
        "one critical value per look"
    );
    let Some(&first) = information.first() else {
        return 0.0;
    };
    let increment_sd = |index: usize| {
        if index == 0 {
            first.sqrt()
        } else {
            (information[index] - information[index - 1]).sqrt()
        }
    };
    let mut crossed = normal_cdf(-critical[0]);
    // Grid (x) and sub-density (f) of S_1 on the continuation region.
    let mut grid: Vec<f64> = Vec::new();
    let mut density: Vec<f64> = Vec::new();
    for index in 0..information.len() {
        if index > 0 {
            // Exit through look `index`, then carry the density to it.
            let sd = increment_sd(index);
            let bound = critical[index] * information[index].sqrt();
            let step = grid.get(1).map_or(1.0, |second| second - grid[0]);
            let weight = |j: usize| {
                if j == 0 || j + 1 == grid.len() {
                    step / 2.0
                } else {
                    step
                }
            };
            crossed += (0..grid.len())
                .map(|j| weight(j) * density[j] * normal_cdf((grid[j] - bound) / sd))
                .sum::<f64>();
            if index + 1 == information.len() {
                break;
            }
            let next = make_grid(information, critical, index);
            let next_density: Vec<f64> = next
                .iter()
                .map(|&y| {
                    (0..grid.len())
                        .map(|j| weight(j) * density[j] * normal_density((y - grid[j]) / sd) / sd)
                        .sum()
                })
                .collect();
            grid = next;
            density = next_density;
        } else {
            if information.len() == 1 {
                break;
            }
            grid = make_grid(information, critical, 0);
            let sd = first.sqrt();
            density = grid.iter().map(|&x| normal_density(x / sd) / sd).collect();
        }
    }
    crossed.min(1.0)
}

/// Grid of S at look `index` over its continuation region.
fn make_grid(information: &[f64], critical: &[f64], index: usize) -> Vec<f64> {
    let own = if index == 0 {
        information[0]
    } else {
        information[index] - information[index - 1]
    };
    let next = information
        .get(index + 1)
        .map_or(own, |&next| next - information[index]);
    let step = own.min(next).sqrt() * STEP_FRACTION;
    let sd = information[index].sqrt();
    let low = -LOWER_EDGE * sd;
    let high = if critical[index].is_finite() {
        critical[index] * sd
    } else {
        LOWER_EDGE * sd
    };
    let points = ((high - low) / step).ceil().max(2.0) as usize + 1;
    let step = (high - low) / (points - 1) as f64;
    (0..points).map(|j| low + step * j as f64).collect()
}

/// The constant critical value c with P(Z_k ≥ c for some k) = `alpha`
/// under H₀ at looks with `information` (Pocock-type, one-sided). Between
/// the single-look value z₁₋α and the Bonferroni value z₁₋α/K. Bisection
/// to 1e-4 in z: O(14·K·G²).
pub fn constant_boundary(information: &[f64], alpha: f64) -> f64 {
    let looks = information.len().max(1);
    let (mut low, mut high) = (
        normal_quantile(1.0 - alpha),
        normal_quantile(1.0 - alpha / looks as f64) + 1e-9,
    );
    while high - low > 1e-4 {
        let middle = (low + high) / 2.0;
        if crossing_probability(information, &vec![middle; information.len()]) > alpha {
            low = middle;
        } else {
            high = middle;
        }
    }
    high
}

/// Geometrically spaced looks from `first` to `last` (inclusive, ratio
/// `growth` > 1, at least one more each time), always including every
/// value of `required` in that range. O(K log K).
pub fn geometric_looks(first: usize, last: usize, growth: f64, required: &[usize]) -> Vec<usize> {
    let first = first.max(1);
    let last = last.max(first);
    let mut looks = Vec::new();
    let mut current = first;
    while current < last {
        looks.push(current);
        current = ((current as f64 * growth).ceil() as usize).max(current + 1);
    }
    looks.push(last);
    looks.extend(
        required
            .iter()
            .copied()
            .filter(|&value| value >= first && value <= last),
    );
    looks.sort_unstable();
    looks.dedup();
    looks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_look_is_the_normal_tail() {
        let p = crossing_probability(&[10.0], &[1.96]);
        assert!((p - 0.025).abs() < 1e-3, "{p}");
        let c = constant_boundary(&[25.0], 0.005);
        assert!((c - 2.5758).abs() < 1e-3, "{c}");
    }

    #[test]
    fn matches_pocock_table_for_equal_looks() {
        // Pocock (1977) two-sided α = 0.05 with K = 5 equally spaced looks:
        // c = 2.413; one-sided α = 0.025 is the same boundary to within
        // the negligible chance of crossing both sides.
        let information: Vec<f64> = (1..=5).map(f64::from).collect();
        let c = constant_boundary(&information, 0.025);
        assert!((c - 2.413).abs() < 0.01, "{c}");
        // K = 10: 2.555.
        let information: Vec<f64> = (1..=10).map(f64::from).collect();
        let c = constant_boundary(&information, 0.025);
        assert!((c - 2.555).abs() < 0.01, "{c}");
    }

    #[test]
    fn agrees_with_a_monte_carlo_of_the_canonical_process() {
        // Brownian motion observed at geometric looks; a deterministic
        // linear-congruential generator with Box–Muller keeps the test
        // free of dependencies and seeds.
        let looks = geometric_looks(10, 600, 1.2, &[300]);
        let information: Vec<f64> = looks.iter().map(|&look| look as f64).collect();
        let c = constant_boundary(&information, 0.01);
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut uniform = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let paths = 200_000;
        let mut crossed = 0;
        for _ in 0..paths {
            let mut score = 0.0;
            let mut previous = 0.0;
            for &info in &information {
                let (u, v) = (uniform(), uniform());
                let normal = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
                score += normal * (info - previous).sqrt();
                previous = info;
                if score / info.sqrt() >= c {
                    crossed += 1;
                    break;
                }
            }
        }
        let rate = crossed as f64 / paths as f64;
        // 0.01 ± 4 standard errors (0.00022 each).
        assert!((rate - 0.01).abs() < 0.0009, "{rate} at c = {c}");
        // Fewer than Bonferroni's z at 0.01 / K, more than one look's.
        assert!(c > normal_quantile(0.99));
        assert!(c < normal_quantile(1.0 - 0.01 / looks.len() as f64));
    }
}
