//! verdict-stats: the statistics verdict decides with. Pure: slices in,
//! values out. No I/O, no clock; randomness only through a seeded RNG that
//! the caller passes in. Methods are described in docs/statistics.md and
//! each public function cites its source and complexity.
//!
//! Entry points: [`summary::summarize`] (one cell), [`verdict::compare`]
//! (two cells, with verdict), [`shift::relative_shift`], [`rank::mann_whitney`],
//! [`multiplicity::holm`], [`bootstrap::ratio_difference`],
//! [`plan::runs_per_cell`], [`paired::compare_paired`] (two cells measured
//! in the same interleaved blocks), [`boots::compare_boots`] (two levels
//! measured across boots, the boot as the unit).

pub mod boot_spread;
pub mod boots;
pub mod bootstrap;
pub mod changepoint;
mod changepoint_ranks;
pub mod combine;
pub mod fdr;
pub mod group_looks;
pub mod multiplicity;
pub mod paired;
pub mod plan;
pub mod rank;
pub mod sequential;
pub mod shift;
mod signed_rank;
pub mod simulate;
pub mod summary;
mod tied;
pub mod verdict;

/// Why a statistic could not be computed. Messages read after "failed to".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("compare samples: the {side} sample has no values")]
    EmptySample { side: &'static str },
    #[error("compare samples: {side} value number {number} is {value}, expected a finite number")]
    InvalidValue {
        side: &'static str,
        /// 1-based position in the side's values.
        number: usize,
        value: f64,
    },
    #[error(
        "compare blocks: the baseline has {baseline} block values and the candidate {candidate}, expected one per block on each side"
    )]
    UnpairedBlocks { baseline: usize, candidate: usize },
    #[error(
        "compare blocks: no block holds runs of both cells; the paired analysis needs both cells run in the same interleaved blocks"
    )]
    NoCompleteBlocks,
    #[error("compare boots: the {side} level has no boots")]
    NoBoots { side: &'static str },
    #[error("compare boots: {side} boot number {boot} has no values")]
    EmptyBoot {
        side: &'static str,
        /// 1-based position of the boot.
        boot: usize,
    },
    #[error(
        "compare boots: {side} boot number {boot}, value number {number} is {value}, expected a finite number"
    )]
    InvalidBootValue {
        side: &'static str,
        /// 1-based position of the boot.
        boot: usize,
        /// 1-based position in the boot's values.
        number: usize,
        value: f64,
    },
    #[error("apply statistics setting {name} = {value}: expected {expected}")]
    InvalidSetting {
        name: &'static str,
        value: f64,
        expected: &'static str,
    },
}

/// Checks that a sample is non-empty and holds finite values (zero and
/// negative values are compared on the absolute scale). Complexity O(n).
pub(crate) fn check_sample(values: &[f64], side: &'static str) -> Result<(), StatsError> {
    if values.is_empty() {
        return Err(StatsError::EmptySample { side });
    }
    match values.iter().position(|value| !value.is_finite()) {
        Some(index) => Err(StatsError::InvalidValue {
            side,
            number: index + 1,
            value: values[index],
        }),
        None => Ok(()),
    }
}
