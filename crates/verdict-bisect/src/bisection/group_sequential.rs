//! The `group-sequential` design (2026-12-01): the binary search of the
//! `bonferroni` design with each candidate's two one-sided tests looked
//! at with one Pocock-type boundary over the looks of every round
//! (`design.rs`), retest rounds pooled with earlier ones, and a candidate
//! measured against one endpoint only once its side is clear
//! (`blocked.rs`).
//! Must not: do I/O, or use randomness.

use crate::design::CandidateDesign;

use super::binary::{self, Round};
use super::blocked::{self, BlockDesign, Blocked};
use super::designs::{Design, EndpointTest};
use super::stored::StoredBisection;
use super::{Action, Config, Core};

/// The `group-sequential` design's state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GroupSequential {
    /// The candidates' looks, fixed at construction.
    design: CandidateDesign,
    rounds: Vec<Round>,
    blocked: Blocked,
}

impl GroupSequential {
    pub(crate) fn new(config: &Config, commits: usize) -> Self {
        GroupSequential {
            design: blocked::strict_design(config),
            rounds: vec![Round::default(); commits],
            blocked: Blocked::new(config, commits),
        }
    }

    pub(crate) fn load(config: &Config, stored: &StoredBisection) -> Self {
        GroupSequential {
            design: stored
                .candidate_design
                .clone()
                .unwrap_or_else(|| blocked::strict_design(config)),
            rounds: stored.rounds(),
            blocked: Blocked::load(config, stored),
        }
    }

    pub(crate) fn store(&self, stored: &mut StoredBisection) {
        stored.candidate_design = Some(self.design.clone());
        stored.set_rounds(&self.rounds);
        self.blocked.store(stored);
    }
}

impl Design for GroupSequential {
    fn endpoint_test(&self) -> &dyn EndpointTest {
        &self.blocked
    }

    fn evaluate_endpoints(&mut self, core: &mut Core) {
        core.evaluate_endpoints(self);
    }

    fn endpoints_told_apart(&mut self, core: &Core) {
        self.blocked.endpoints_told_apart(core);
    }

    fn before_samples(&mut self, core: &mut Core, position: usize) {
        let bounds = core.bounds(self);
        let blocks = self.blocked.commits[position].blocks;
        binary::before_samples(core, &mut self.rounds, position, bounds, blocks);
    }

    fn samples_added(&mut self, core: &mut Core, position: usize, values: &[f64]) {
        blocked::fill_block(self, core, position, values);
    }

    fn skipping(&mut self, position: usize) {
        self.blocked.skipping(position);
    }

    fn next_action(&self, core: &Core) -> Action {
        blocked::next_action(self, core)
    }
}

impl BlockDesign for GroupSequential {
    fn blocked(&self) -> &Blocked {
        &self.blocked
    }

    fn blocked_mut(&mut self) -> &mut Blocked {
        &mut self.blocked
    }

    fn candidate(&self, core: &Core) -> Option<usize> {
        binary::target(core, &self.rounds, core.bounds(self))
    }

    fn strict_design(&self) -> &CandidateDesign {
        &self.design
    }

    /// Each round is judged to its own cap of blocks.
    fn exhausted(&self, design: &CandidateDesign, candidate: usize) -> bool {
        let round_blocks =
            self.blocked.commits[candidate].blocks - self.rounds[candidate].round_block_start;
        round_blocks >= design.round_blocks
    }

    /// The culprit uniform over the commits still possible, so P(X like
    /// B) = (X − low)/(high − low) (the posterior over the culprit's
    /// position that noisy binary search weighs, Ben-Or & Hassidim 2008,
    /// with every classification taken as settled).
    fn side_prior(&self, core: &Core, candidate: usize) -> f64 {
        let (low, high) = core.bounds(self);
        if candidate > low && candidate < high {
            let bad = (candidate - low) as f64 / (high - low) as f64;
            (bad / (1.0 - bad)).ln()
        } else {
            0.0
        }
    }
}
