//! The group-sequential design of a candidate's two one-sided tests (X
//! against G, X against B) and of the endpoints' test: where the looks
//! are, counted in blocks of that comparison, and the nominal confidence
//! of the signed-rank interval at each look.
//!
//! Looks are spaced geometrically (each ≥ 10% more blocks than the last)
//! from the first look to the cap of every round together (a retested
//! commit's rounds are pooled: its later rounds continue the same tests),
//! and every look uses one critical value c, the one-sided Pocock-type
//! boundary whose crossing probability over all looks is the test's error
//! under the canonical joint distribution of the standardized statistics
//! (`verdict_stats::group_looks`: Pocock 1977; Armitage, McPherson & Rowe
//! 1969; Jennison & Turnbull 2000, ch. 19). The Bonferroni split this
//! replaces tested each of K looks at error/K, ignoring that successive
//! looks share most of their data. The exact signed-rank test is run at
//! each look's nominal level 1 − Φ(c); the standardized signed-rank
//! statistics across looks follow the canonical joint distribution
//! asymptotically (a U-statistic with the independent-increments structure
//! of a score: Sen 1981, Sequential Nonparametrics, ch. 3), and the error
//! at small block counts is checked by simulation (tests/simulation.rs,
//! docs/validation.md).
//! Must not: depend on a commit's samples (that would void the error
//! bound), do I/O, or use randomness.

use verdict_stats::group_looks::{constant_boundary, geometric_looks};
use verdict_stats::plan::normal_cdf;

use crate::blocks::minimum_blocks;

/// Each look is at least this factor more blocks than the last.
const LOOK_GROWTH: f64 = 1.1;

/// The search tests of the `search-confirm` design look less often (each
/// look ≥ 25% more blocks than the last): fewer looks give a lower
/// constant boundary, so the first look comes earlier.
const SEARCH_GROWTH: f64 = 1.25;

/// Looks of one comparison and the nominal two-sided confidence of each.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct CandidateDesign {
    /// Block counts of the comparison at which it is evaluated.
    pub(crate) looks: Vec<usize>,
    /// Two-sided nominal confidence of the interval at each look (each
    /// side's error 1 − Φ(c)).
    pub(crate) confidence: Vec<f64>,
    /// Blocks of a commit per round: undecided after that many blocks in a
    /// round, it is put aside (and retested if the search needs it).
    pub(crate) round_blocks: usize,
}

/// The design for one-sided error `error` per test, rounds of
/// `round_blocks` blocks, `rounds` rounds, the first look at no fewer than
/// `first_blocks` blocks (raised until the look's nominal level lets the
/// exact signed-rank test reject at all: 2⁻ⁿ ≤ level). O(R·K·G²) for R ≤ 4
/// refinements of the first look (see `group_looks`).
pub(crate) fn candidate_design(
    error: f64,
    first_blocks: usize,
    round_blocks: usize,
    rounds: usize,
) -> CandidateDesign {
    cached_design(error, first_blocks, round_blocks, rounds, LOOK_GROWTH)
}

/// The design of one search test of the `search-confirm` design: one
/// round of `round_blocks` blocks, looks ≥ 25% apart, one-sided error
/// `error` per comparison.
pub(crate) fn search_design(
    error: f64,
    first_blocks: usize,
    round_blocks: usize,
) -> CandidateDesign {
    cached_design(error, first_blocks, round_blocks, 1, SEARCH_GROWTH)
}

fn cached_design(
    error: f64,
    first_blocks: usize,
    round_blocks: usize,
    rounds: usize,
    growth: f64,
) -> CandidateDesign {
    // Designs are pure functions of their arguments and cost tens of
    // milliseconds; a replay builds the same ones again, so they are kept.
    type Key = (u64, usize, usize, usize, u64);
    static DESIGNS: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<Key, CandidateDesign>>,
    > = std::sync::OnceLock::new();
    let key = (
        error.to_bits(),
        first_blocks,
        round_blocks,
        rounds,
        growth.to_bits(),
    );
    let designs = DESIGNS.get_or_init(Default::default);
    if let Some(design) = designs
        .lock()
        .ok()
        .and_then(|designs| designs.get(&key).cloned())
    {
        return design;
    }
    let design = compute_design(error, first_blocks, round_blocks, rounds, growth);
    if let Ok(mut designs) = designs.lock() {
        designs.insert(key, design.clone());
    }
    design
}

fn compute_design(
    error: f64,
    first_blocks: usize,
    round_blocks: usize,
    rounds: usize,
    growth: f64,
) -> CandidateDesign {
    let round_blocks = round_blocks.max(2);
    let rounds = rounds.max(1);
    let last = round_blocks * rounds;
    let required: Vec<usize> = (1..=rounds).map(|round| round * round_blocks).collect();
    let mut first = first_blocks.clamp(2, last);
    loop {
        let looks = geometric_looks(first, last, growth, &required);
        let information: Vec<f64> = looks.iter().map(|&look| look as f64).collect();
        let critical = constant_boundary(&information, error);
        let level = normal_cdf(-critical);
        let needed = minimum_blocks(level).min(last);
        if needed > first {
            first = needed;
            continue;
        }
        let confidence = vec![1.0 - 2.0 * level; looks.len()];
        return CandidateDesign {
            looks,
            confidence,
            round_blocks,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_boundary_is_less_strict_than_the_bonferroni_split() {
        let design = candidate_design(0.005, 4, 600, 2);
        assert!(design.looks.windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(design.looks.last(), Some(&1200));
        assert!(design.looks.contains(&600));
        let bonferroni = 0.005 / design.looks.len() as f64;
        let level = (1.0 - design.confidence[0]) / 2.0;
        assert!(level > 1.5 * bonferroni, "{level} vs {bonferroni}");
        assert!(level < 0.005);
        // The first look lets a signed-rank test reject at its level.
        assert!(minimum_blocks(level) <= design.looks[0]);
    }

    #[test]
    fn the_search_design_looks_earlier_than_the_strict_one() {
        // The bench's settings: blocks of 1, 600 runs per round, 2 rounds;
        // a search visit gets a quarter of a round.
        let strict = candidate_design(0.005, 4, 600, 2);
        let search = search_design(0.1, 4, 150);
        eprintln!(
            "strict: first look {} blocks, level {:.5}; search: first look {} blocks, level {:.5}",
            strict.looks[0],
            (1.0 - strict.confidence[0]) / 2.0,
            search.looks[0],
            (1.0 - search.confidence[0]) / 2.0
        );
        assert!(search.looks[0] < strict.looks[0]);
        assert_eq!(search.looks.last(), Some(&150));
        assert!(minimum_blocks((1.0 - search.confidence[0]) / 2.0) <= search.looks[0]);
    }
}
