//! The `Design` trait: what a bisection design decides (how the endpoints
//! are told apart, which commit is measured next and how, when a commit is
//! classified, which classes the answer rests on), and `Designs`, the one
//! place that picks the implementation from the config.
//!
//! The bisection (`Core`) owns what every design shares (the order, each
//! commit's samples and class, the endpoints' comparison, the steps and
//! the clock); each design owns its own per-commit state. The designs
//! stay side by side because a stored bisection replays with the design
//! it ran with (`Config::design`): an old config without the field is a
//! `bonferroni` bisection and must decide as it did.
//! Must not: do I/O, read the clock, or use randomness.

use verdict_stats::shift::Shift;

use super::bonferroni::Bonferroni;
use super::fixed_runs::FixedRuns;
use super::group_sequential::GroupSequential;
use super::search_confirm::SearchConfirm;
use super::{Action, Class, Config, Core, Decision, LookDesign, looks_in_blocks};

/// One bisection design. The bisection calls it at every point where the
/// designs differ; the defaults are the statistical designs' shared
/// behaviour (blocked endpoint test, plain classes).
pub(crate) trait Design {
    /// How the endpoints are told apart (the statistical designs): by
    /// default geometric looks with `endpoint_error` split equally over
    /// them.
    fn endpoint_test(&self) -> &dyn EndpointTest {
        &SplitEndpoints
    }

    /// What to measure while the endpoints are not told apart yet.
    fn endpoint_action(&self, core: &Core) -> Action {
        core.endpoint_blocks_action()
    }

    /// Endpoint runs were added before the endpoints are told apart
    /// (the statistical designs: `Core::evaluate_endpoints`).
    fn evaluate_endpoints(&mut self, core: &mut Core);

    /// The endpoints were just told apart (`Core::comparison` is set).
    fn endpoints_told_apart(&mut self, _core: &Core) {}

    /// Runs of `position` are about to be added (its samples are still
    /// the earlier ones).
    fn before_samples(&mut self, _core: &mut Core, _position: usize) {}

    /// Runs of `position` were added after the endpoints were told apart.
    fn samples_added(&mut self, core: &mut Core, position: usize, values: &[f64]);

    /// `position` (a candidate) is about to be recorded as skipped.
    fn skipping(&mut self, _position: usize) {}

    /// Records a decision of `position` as a step.
    fn record(&mut self, core: &mut Core, position: usize, decision: Decision) {
        core.record(position, decision, false);
    }

    /// What to do once the endpoints are told apart (no abort).
    fn next_action(&self, core: &Core) -> Action;

    /// The class of `position` the answer rests on.
    fn settled_class(&self, core: &Core, position: usize) -> Option<Class> {
        core.commits[position].class
    }
}

/// The endpoints' blocked test of a statistical design: where it looks,
/// at what confidence, and a second test tried when the first does not
/// tell the endpoints apart.
pub(crate) trait EndpointTest {
    /// The endpoints' looks, in blocks (fixed at construction).
    fn looks(&self, config: &Config) -> Vec<usize>;

    /// The two-sided confidence of the endpoints' interval at the latest
    /// look reached (`Core::endpoint_looks_done`).
    fn confidence(&self, core: &Core) -> f64;

    /// A second test of the endpoints' block differences.
    fn second_test(&self, _differences: &[f64], _confidence: f64) -> Option<Shift> {
        None
    }
}

/// Geometric looks with the Bonferroni split of `endpoint_error` over
/// them, and no second test (the `bonferroni` design).
pub(crate) struct SplitEndpoints;

impl EndpointTest for SplitEndpoints {
    fn looks(&self, config: &Config) -> Vec<usize> {
        looks_in_blocks(
            config.endpoint_min_runs,
            config.endpoint_max_runs,
            config.max_batch,
            config.endpoint_error,
            1,
        )
    }

    fn confidence(&self, core: &Core) -> f64 {
        1.0 - core.config.endpoint_error / core.endpoint_looks.len() as f64
    }
}

/// The design of a bisection, chosen once from its config.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Designs {
    FixedRuns(FixedRuns),
    Bonferroni(Bonferroni),
    GroupSequential(GroupSequential),
    SearchConfirm(SearchConfirm),
}

impl Designs {
    /// The design `config` asks for, for `commits` commits (endpoints
    /// included): `fixed_runs` overrides `design`.
    pub(crate) fn new(config: &Config, commits: usize) -> Self {
        if let Some(runs) = config.fixed_runs {
            return Designs::FixedRuns(FixedRuns::new(runs, commits));
        }
        match config.design {
            LookDesign::Bonferroni => Designs::Bonferroni(Bonferroni::new(config, commits)),
            LookDesign::GroupSequential => {
                Designs::GroupSequential(GroupSequential::new(config, commits))
            }
            LookDesign::SearchConfirm => {
                Designs::SearchConfirm(SearchConfirm::new(config, commits))
            }
        }
    }

    pub(crate) fn get(&self) -> &dyn Design {
        match self {
            Designs::FixedRuns(design) => design,
            Designs::Bonferroni(design) => design,
            Designs::GroupSequential(design) => design,
            Designs::SearchConfirm(design) => design,
        }
    }

    pub(crate) fn get_mut(&mut self) -> &mut dyn Design {
        match self {
            Designs::FixedRuns(design) => design,
            Designs::Bonferroni(design) => design,
            Designs::GroupSequential(design) => design,
            Designs::SearchConfirm(design) => design,
        }
    }
}
