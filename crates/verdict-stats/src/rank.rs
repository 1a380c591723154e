//! Two-sided Mann–Whitney U test, following benchstat (golang.org/x/perf
//! benchmath, which calls github.com/aclements/go-moremath/stats
//! `MannWhitneyUTest`): the exact null distribution including ties for small
//! samples, otherwise a normal approximation with tie and continuity
//! correction. Also the exact no-ties distribution that shift.rs uses for
//! its interval ends.
//!
//! Must not: do I/O, or drop values (NaN handling is the caller's job:
//! `verdict::compare` rejects non-finite input before calling here).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::plan::normal_cdf;

/// Largest per-side size for the exact distribution when there are no ties
/// (benchstat / go-moremath `MaxUNoTies`).
pub(crate) const EXACT_LIMIT_WITHOUT_TIES: usize = 50;
/// Largest per-side size for the exact distribution when there are ties
/// (go-moremath `MaxUTies`).
pub(crate) const EXACT_LIMIT_WITH_TIES: usize = 25;

/// Result of a two-sided Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RankTest {
    /// U of the baseline: #(b > c) + ½·#(b = c) over all pairs, i.e. the
    /// baseline rank sum minus m(m+1)/2 (benchstat's U1 with the baseline
    /// as the first sample). The candidate's U is m·n − u.
    pub u: f64,
    /// Two-sided p-value, benchstat convention: 2·P(U₁ ≤ min(U₁, U₂)) under
    /// the exact (tie-conditional) null, 1 when U₁ = U₂, capped at 1.
    pub p_value: f64,
    /// Whether the exact null distribution was used (else normal approx.).
    pub exact: bool,
}

/// Two-sided Mann–Whitney U test of baseline against candidate.
///
/// Source: Mann & Whitney (1947), Ann. Math. Statist. 18:50; exact
/// distribution with ties conditional on the tie pattern as in Klotz (1966),
/// JASA 61:772 (computed here by a direct dynamic programme over tie groups
/// rather than Cheung & Klotz's linked lists; same counts). Limits, p-value
/// convention and normal approximation match benchstat / go-moremath: exact
/// when both sides have ≤ 50 values and no ties, or ≤ 25 with ties; all
/// values equal, or an empty side, gives p = 1.
///
/// Complexity: O((m+n) log(m+n)) sorting plus, when exact, O(m·n·min(m,n)·u)
/// without ties or O(G·m·(m+n)²) with G tie groups — at most a few ms at
/// the limits; O(m+n) otherwise.
pub fn mann_whitney(baseline: &[f64], candidate: &[f64]) -> RankTest {
    let (m, n) = (baseline.len(), candidate.len());
    if m == 0 || n == 0 {
        return RankTest {
            u: 0.0,
            p_value: 1.0,
            exact: false,
        };
    }
    let ranking = rank_pattern(baseline, candidate);
    let u1 = ranking.baseline_rank_sum - (m * (m + 1)) as f64 / 2.0;
    let u2 = (m * n) as f64 - u1;
    let u_small = u1.min(u2);
    let total = m + n;
    let has_ties = ranking.ties.len() != total;
    let limit = if has_ties {
        EXACT_LIMIT_WITH_TIES
    } else {
        EXACT_LIMIT_WITHOUT_TIES
    };

    if m <= limit && n <= limit {
        let p_value = if ranking.ties.len() == 1 || u1 == u2 {
            // All equal: the test is meaningless (benchstat reports p = 1).
            // U₁ = U₂: the whole distribution, p = 1 (go-moremath comment).
            1.0
        } else if has_ties {
            // With ties U₁'s distribution need not be symmetric (the
            // midranks are not), so the two tails are computed separately:
            // P(U₁ ≤ u₁) and P(U₁ ≥ u₁) = P(U₂ ≤ u₂). go-moremath doubles
            // the lower tail of the smaller U for the first sample's size,
            // which is 0 for e.g. [1, 0, 1] against [0, 0, −1, 0] (the
            // permutation p-value is 8/35).
            2.0 * tied_cdf(m, &ranking.ties, u1).min(tied_cdf(n, &ranking.ties, u2))
        } else {
            2.0 * untied_cdf(m, n, u_small.floor() as usize)
        };
        return RankTest {
            u: u1,
            p_value: p_value.min(1.0),
            exact: true,
        };
    }

    let tie_correction: f64 = ranking
        .ties
        .iter()
        .map(|&size| {
            let size = size as f64;
            size * size * size - size
        })
        .sum();
    let total = total as f64;
    let mean = (m * n) as f64 / 2.0;
    let variance =
        (m * n) as f64 * ((total + 1.0) - tie_correction / (total * (total - 1.0))) / 12.0;
    if variance <= 0.0 {
        return RankTest {
            u: u1,
            p_value: 1.0,
            exact: false,
        };
    }
    let mut numerator = u1 - mean;
    // Continuity correction towards the mean (Go's sign(0) = 0).
    if numerator > 0.0 {
        numerator -= 0.5;
    } else if numerator < 0.0 {
        numerator += 0.5;
    }
    let z = numerator / variance.sqrt();
    RankTest {
        u: u1,
        p_value: (2.0 * normal_cdf(-z.abs())).min(1.0),
        exact: false,
    }
}

struct RankPattern {
    /// Sum of the baseline's mid-ranks (1-based).
    baseline_rank_sum: f64,
    /// Sizes of the groups of equal values in the pooled sorted order.
    ties: Vec<usize>,
}

fn rank_pattern(baseline: &[f64], candidate: &[f64]) -> RankPattern {
    let mut pooled: Vec<(f64, bool)> = baseline
        .iter()
        .map(|&value| (value, true))
        .chain(candidate.iter().map(|&value| (value, false)))
        .collect();
    pooled.sort_unstable_by(|left, right| left.0.total_cmp(&right.0));
    let mut baseline_rank_sum = 0.0;
    let mut ties = Vec::new();
    let mut start = 0;
    while start < pooled.len() {
        let value = pooled[start].0;
        let mut end = start;
        let mut from_baseline = 0usize;
        while end < pooled.len() && pooled[end].0 == value {
            if pooled[end].1 {
                from_baseline += 1;
            }
            end += 1;
        }
        // Positions start+1 ..= end share the mid-rank (start+1+end)/2.
        baseline_rank_sum += (start + 1 + end) as f64 / 2.0 * from_baseline as f64;
        ties.push(end - start);
        start = end;
    }
    RankPattern {
        baseline_rank_sum,
        ties,
    }
}

/// P(U₁ ≤ u) for a first sample of size `first` given the tie-group sizes
/// `ties` of the pooled sample, under random assignment of the pooled values.
///
/// Dynamic programme over tie groups: the state is (values drawn so far,
/// twice their mid-rank sum); drawing r of group k's t values multiplies the
/// count by C(t, r). Counts are integers below C(50, 25) < 2⁵³, hence exact
/// in f64. Complexity O(G·first·S·max t) with S ≤ (m+n)·first the largest
/// doubled rank sum.
fn tied_cdf(first: usize, ties: &[usize], u: f64) -> f64 {
    let total: usize = ties.iter().sum();
    // 2·R₁ = 2·U₁ + first·(first+1); only sums up to the threshold matter.
    let threshold = (2.0 * u).round() as i64 + (first * (first + 1)) as i64;
    if threshold < 0 {
        return 0.0;
    }
    let threshold = threshold as usize;
    let width = threshold + 1;
    let mut counts = vec![0.0f64; (first + 1) * width];
    counts[0] = 1.0;
    let mut before = 0usize;
    for &size in ties {
        // Twice the mid-rank of this group.
        let doubled_rank = 2 * before + size + 1;
        let mut next = vec![0.0f64; (first + 1) * width];
        for drawn in 0..=first.min(before) {
            for sum in 0..width {
                let count = counts[drawn * width + sum];
                if count == 0.0 {
                    continue;
                }
                let mut binomial = 1.0;
                for take in 0..=size.min(first - drawn) {
                    if take > 0 {
                        binomial = binomial * (size - take + 1) as f64 / take as f64;
                    }
                    let new_sum = sum + take * doubled_rank;
                    if new_sum > threshold {
                        break;
                    }
                    next[(drawn + take) * width + new_sum] += count * binomial;
                }
            }
        }
        counts = next;
        before += size;
    }
    let favourable: f64 = counts[first * width..].iter().sum();
    favourable / binomial_coefficient(total, first)
}

fn binomial_coefficient(total: usize, chosen: usize) -> f64 {
    let chosen = chosen.min(total - chosen);
    let mut value = 1.0f64;
    for step in 0..chosen {
        value = value * (total - step) as f64 / (step + 1) as f64;
    }
    value.round()
}

/// P(U ≤ u) without ties for sample sizes m and n.
fn untied_cdf(m: usize, n: usize, u: usize) -> f64 {
    let product = m * n;
    if u >= product {
        return 1.0;
    }
    // Symmetric about m·n/2: sum the smaller tail (as go-moremath does).
    let flip = u >= product.div_ceil(2);
    let u_tail = if flip { product - u - 1 } else { u };
    let tail: f64 = untied_lower_half(m, n)[..=u_tail].iter().sum();
    if flip { 1.0 - tail } else { tail }
}

/// Null tables keyed by (smaller size, larger size).
type TableCache = HashMap<(usize, usize), Rc<[f64]>>;

/// P(U = 0), …, P(U = ⌊mn/2⌋) without ties, memoised per thread: the table
/// depends only on the sizes, and Monte-Carlo loops or reports with many
/// cells of the same size ask for it repeatedly. Bounded at 256 entries.
pub(crate) fn untied_lower_half(m: usize, n: usize) -> Rc<[f64]> {
    thread_local! {
        static TABLES: RefCell<TableCache> = RefCell::new(HashMap::new());
    }
    let key = (m.min(n), m.max(n));
    TABLES.with(|tables| {
        if let Some(table) = tables.borrow().get(&key) {
            return Rc::clone(table);
        }
        let table: Rc<[f64]> = untied_pmf(key.0, key.1, key.0 * key.1 / 2).into();
        let mut tables = tables.borrow_mut();
        if tables.len() >= 256 {
            tables.clear();
        }
        tables.insert(key, Rc::clone(&table));
        table
    })
}

/// The null probabilities P(U = 0), …, P(U = max_u) without ties.
///
/// Source: the Mann & Whitney (1947) recurrence
/// p_{n,m}(U) = (n·p_{n−1,m}(U−m) + m·p_{n,m−1}(U))/(n+m), evaluated
/// bottom-up keeping one plane (as in go-moremath `UDist.p`). All terms are
/// positive, so there is no cancellation in the tails.
/// Complexity O(m·n·max_u) time, O(min(m,n)·max_u) memory.
pub(crate) fn untied_pmf(m: usize, n: usize, max_u: usize) -> Vec<f64> {
    let (small, large) = if m <= n { (m, n) } else { (n, m) };
    let width = max_u + 1;
    let mut memo = vec![vec![0.0f64; width]; small + 1];
    for columns in 0..=large {
        memo[0][0] = 1.0;
        for rows in 1..=small.min(columns) {
            let (lower, upper) = memo.split_at_mut(rows);
            let previous = &lower[rows - 1];
            let output = &mut upper[0];
            let in_place = rows < columns;
            let limit = (rows * columns).min(max_u);
            let weight_sum = (rows + columns) as f64;
            for u in (0..=limit).rev() {
                let left = if u >= columns {
                    rows as f64 * previous[u - columns]
                } else {
                    0.0
                };
                // p_{rows, columns-1}: this row before overwriting, or, on the
                // diagonal, p_{columns-1, rows} = the previous row.
                let right_source = if in_place { output[u] } else { previous[u] };
                output[u] = (left + columns as f64 * right_source) / weight_sum;
            }
        }
    }
    memo.swap_remove(small)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untied_pmf_sums_to_one_and_matches_small_case() {
        // m = n = 2: U ∈ {0,1,2,2,3,4} over C(4,2)=6 arrangements.
        let pmf = untied_pmf(2, 2, 4);
        let expected = [1.0, 1.0, 2.0, 1.0, 1.0].map(|count| count / 6.0);
        for (got, want) in pmf.iter().zip(expected) {
            assert!((got - want).abs() < 1e-15);
        }
        let total: f64 = untied_pmf(7, 11, 77).iter().sum();
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn tied_cdf_without_ties_equals_untied() {
        let ties = vec![1; 13];
        for u in 0..=40 {
            let tied = tied_cdf(6, &ties, u as f64);
            let untied = untied_cdf(6, 7, u);
            assert!((tied - untied).abs() < 1e-14, "u={u}: {tied} vs {untied}");
        }
    }

    #[test]
    fn fully_separated_ten_by_ten() {
        let low: Vec<f64> = (0..10).map(f64::from).collect();
        let high: Vec<f64> = (10..20).map(f64::from).collect();
        let test = mann_whitney(&high, &low);
        assert!(test.exact);
        assert_eq!(test.u, 100.0);
        // 2 / C(20,10)
        assert!((test.p_value - 2.0 / 184_756.0).abs() < 1e-18);
    }

    #[test]
    fn tied_p_values_match_the_permutation_test() {
        // scipy.stats.permutation_test of the U statistic, every
        // arrangement (scipy 1.17.1): asymmetric tie patterns.
        let cases: [(&[f64], &[f64], f64); 3] = [
            (
                &[1.0, 0.0, 1.0],
                &[0.0, 0.0, -1.0, 0.0],
                0.228_571_428_571_428_56,
            ),
            (
                &[10.0, 10.0, 11.0, 12.0],
                &[9.0, 9.0, 9.0, 10.0, 10.0, 13.0],
                0.238_095_238_095_238_08,
            ),
            (
                &[1.0, 1.0, 2.0, 2.0, 2.0],
                &[2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 4.0],
                0.010_101_010_101_010_102,
            ),
        ];
        for (baseline, candidate, want) in cases {
            for (first, second) in [(baseline, candidate), (candidate, baseline)] {
                let test = mann_whitney(first, second);
                assert!(test.exact);
                assert!(
                    (test.p_value - want).abs() < 1e-12,
                    "{first:?} {second:?}: {test:?}"
                );
            }
        }
    }

    #[test]
    fn all_equal_gives_one() {
        let test = mann_whitney(&[3.0; 5], &[3.0; 7]);
        assert_eq!(test.p_value, 1.0);
        assert_eq!(test.u, 17.5);
    }
}
