//! How much one level's metric moves from boot to boot, as a run report
//! describes it when the boot is the unit: each boot summarised by the
//! median of its iterations ([`boot_medians`], the values a comparison of
//! boot levels compares), the range of those medians, their coefficient of
//! variation (the between-boot CV) next to the typical CV within a boot.
//! Descriptive only: the decision over boots and the variance components
//! (one-way random-effects ANOVA) are in [`crate::boots`].
//!
//! Must not: decide anything, do I/O, or render text.

use serde::{Deserialize, Serialize};

use crate::summary::summarize;

/// One value per boot, each boot summarised by its median; boots without
/// a finite value are left out. The boot is the experimental unit when
/// levels differ by boot: iterations within one boot share its memory
/// layout, IRQ placement and cache colouring, so they are not independent
/// replicates of the level (pseudo-replication, Hurlbert 1984, Ecological
/// Monographs 54(2)); summarising each unit and comparing the summaries is
/// the standard remedy (e.g. Lazic 2010, BMC Neuroscience 11:5). The one
/// place to swap in another per-boot summary. O(n log n).
pub fn boot_medians(per_boot: &[Vec<f64>]) -> Vec<f64> {
    per_boot
        .iter()
        .filter_map(|values| summarize(values).map(|summary| summary.median))
        .collect()
}

/// The boot-to-boot spread of one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BootSpread {
    /// Boots with a finite value (see [`boot_medians`]).
    pub boots: usize,
    /// Lowest and highest per-boot median.
    pub median_low: Option<f64>,
    pub median_high: Option<f64>,
    /// CV (sample standard deviation over the mean) of the per-boot
    /// medians; `None` below 2 boots.
    pub between_boot_cv: Option<f64>,
    /// Median over boots of each boot's CV (the upper median for an even
    /// count); `None` when no boot has 2 values.
    pub within_boot_cv: Option<f64>,
}

/// The spread of one level measured in `per_boot` (one `Vec` of iteration
/// values per boot). O(n log n).
pub fn boot_spread(per_boot: &[Vec<f64>]) -> BootSpread {
    let medians = boot_medians(per_boot);
    let mut within: Vec<f64> = per_boot
        .iter()
        .filter_map(|values| summarize(values).and_then(|summary| summary.cv))
        .collect();
    within.sort_unstable_by(f64::total_cmp);
    BootSpread {
        boots: medians.len(),
        median_low: medians.iter().copied().reduce(f64::min),
        median_high: medians.iter().copied().reduce(f64::max),
        between_boot_cv: summarize(&medians).and_then(|summary| summary.cv),
        within_boot_cv: (!within.is_empty()).then(|| within[within.len() / 2]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_boot_becomes_its_median() {
        assert_eq!(
            boot_medians(&[vec![1.0, 9.0, 2.0], vec![], vec![4.0, 6.0]]),
            vec![2.0, 5.0]
        );
    }

    #[test]
    fn the_spread_is_the_range_and_cv_of_the_medians_beside_the_median_within_cv() {
        // Boot medians 2, 4, 6: mean 4, sd 2, CV 0.5. Within-boot CVs:
        // [1, 2, 3] → 0.5; [4, 4] → 0; [5, 6, 7] → 1/6; upper median 1/6.
        let spread = boot_spread(&[vec![1.0, 2.0, 3.0], vec![4.0, 4.0], vec![5.0, 6.0, 7.0]]);
        assert_eq!(spread.boots, 3);
        assert_eq!(
            (spread.median_low, spread.median_high),
            (Some(2.0), Some(6.0))
        );
        assert!((spread.between_boot_cv.unwrap() - 0.5).abs() < 1e-12);
        assert!((spread.within_boot_cv.unwrap() - 1.0 / 6.0).abs() < 1e-12);
        let one = boot_spread(&[vec![3.0]]);
        assert_eq!(one.boots, 1);
        assert_eq!((one.between_boot_cv, one.within_boot_cv), (None, None));
        assert_eq!(boot_spread(&[]).median_low, None);
    }
}
