//! verdict-stats: the statistics verdict decides with. Pure: slices in,
//! values out. No I/O, no clock; randomness only through a seeded RNG that
//! the caller passes in. Methods follow ../shared/design/STATISTICS.md and
//! each public function cites its source and complexity.

pub mod bootstrap;
pub mod multiplicity;
pub mod plan;
pub mod rank;
pub mod sequential;
pub mod shift;
pub mod simulate;
pub mod summary;
pub mod verdict;
