//! The serialized layout of a `Bisection`: one flat record per commit
//! with every design's fields, as every version so far has written it.
//! A snapshot from an earlier version loads into the design its config
//! names and resumes exactly where it stopped; a snapshot written now is
//! the one the earlier versions wrote (fields a design does not use keep
//! their defaults), so the layout is one format, not one per design.
//! Must not: decide anything; conversions only.

use serde::{Deserialize, Serialize};

use crate::blocks::BlockTest;
use crate::commit::CommitId;
use crate::design::CandidateDesign;
use crate::search::Call;

use super::binary::Round;
use super::blocked::OpenBlock;
use super::bonferroni::{Bonferroni, candidate_looks};
use super::designs::Designs;
use super::fixed_runs::FixedRuns;
use super::group_sequential::GroupSequential;
use super::search_confirm::{SearchConfirm, TestKind};
use super::{
    AbortReason, Bisection, Class, CommitState, Config, Core, Decision, EndpointComparison,
    LookDesign, Step,
};

/// One commit, every design's fields (see the designs' own state for
/// what each means).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct StoredCommit {
    samples: Vec<f64>,
    times: Vec<usize>,
    pub(crate) round_start: usize,
    pub(crate) window_start: usize,
    class: Option<Class>,
    decision: Option<Decision>,
    pub(crate) looks_done: usize,
    pub(crate) round: usize,
    probe: bool,
    #[serde(default)]
    pub(crate) versus_good: Vec<f64>,
    #[serde(default)]
    pub(crate) versus_bad: Vec<f64>,
    #[serde(default)]
    pub(crate) good_looks_done: usize,
    #[serde(default)]
    pub(crate) bad_looks_done: usize,
    #[serde(default)]
    pub(crate) blocks: usize,
    #[serde(default)]
    pub(crate) round_block_start: usize,
    #[serde(default)]
    pub(crate) holding: bool,
    #[serde(default)]
    pub(crate) test: Option<TestKind>,
    #[serde(default)]
    pub(crate) confirmed: Option<Class>,
    #[serde(default)]
    pub(crate) search_undecided: usize,
    #[serde(default)]
    pub(crate) search_good_looks_done: usize,
    #[serde(default)]
    pub(crate) search_bad_looks_done: usize,
    #[serde(default)]
    pub(crate) visit_start: usize,
}

/// A bisection, every design's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct StoredBisection {
    config: Config,
    order: Vec<CommitId>,
    pub(crate) commits: Vec<StoredCommit>,
    endpoint_looks: Vec<usize>,
    endpoint_looks_done: usize,
    pub(crate) candidate_looks: Vec<usize>,
    comparison: Option<EndpointComparison>,
    steps: Vec<Step>,
    abort: Option<AbortReason>,
    clock: usize,
    settled_at: usize,
    #[serde(default)]
    pub(crate) candidate_design: Option<CandidateDesign>,
    #[serde(default)]
    pub(crate) open_block: Option<OpenBlock>,
    #[serde(default)]
    pub(crate) endpoint_design: Option<CandidateDesign>,
    #[serde(default)]
    pub(crate) side_agreement: Option<f64>,
    #[serde(default)]
    pub(crate) block_test: Option<BlockTest>,
    #[serde(default)]
    pub(crate) search_design: Option<CandidateDesign>,
    #[serde(default)]
    pub(crate) calls: Vec<Call>,
    #[serde(default)]
    pub(crate) search_tests: usize,
    /// Was set while a provisional call was being recorded; never stored.
    #[serde(skip)]
    provisional: bool,
}

impl StoredBisection {
    /// Each commit's retest round.
    pub(crate) fn rounds(&self) -> Vec<Round> {
        self.commits
            .iter()
            .map(|state| Round {
                round: state.round,
                round_start: state.round_start,
                window_start: state.window_start,
                round_block_start: state.round_block_start,
            })
            .collect()
    }

    pub(crate) fn set_rounds(&mut self, rounds: &[Round]) {
        for (state, round) in self.commits.iter_mut().zip(rounds) {
            state.round = round.round;
            state.round_start = round.round_start;
            state.window_start = round.window_start;
            state.round_block_start = round.round_block_start;
        }
    }
}

impl From<StoredBisection> for Bisection {
    fn from(stored: StoredBisection) -> Self {
        let config = &stored.config;
        let design = match (config.fixed_runs, config.design) {
            (Some(runs), _) => Designs::FixedRuns(FixedRuns::load(runs, &stored)),
            (None, LookDesign::Bonferroni) => Designs::Bonferroni(Bonferroni::load(&stored)),
            (None, LookDesign::GroupSequential) => {
                Designs::GroupSequential(GroupSequential::load(config, &stored))
            }
            (None, LookDesign::SearchConfirm) => {
                Designs::SearchConfirm(SearchConfirm::load(config, &stored))
            }
        };
        let commits = stored
            .commits
            .into_iter()
            .map(|state| CommitState {
                samples: state.samples,
                times: state.times,
                class: state.class,
                decision: state.decision,
                probe: state.probe,
            })
            .collect();
        Bisection {
            core: Core {
                config: stored.config,
                order: stored.order,
                commits,
                endpoint_looks: stored.endpoint_looks,
                endpoint_looks_done: stored.endpoint_looks_done,
                comparison: stored.comparison,
                steps: stored.steps,
                abort: stored.abort,
                clock: stored.clock,
                settled_at: stored.settled_at,
            },
            design,
        }
    }
}

impl From<Bisection> for StoredBisection {
    fn from(bisection: Bisection) -> Self {
        let Bisection { core, design } = bisection;
        let commits = core
            .commits
            .into_iter()
            .map(|state| StoredCommit {
                samples: state.samples,
                times: state.times,
                round_start: 0,
                window_start: 0,
                class: state.class,
                decision: state.decision,
                looks_done: 0,
                round: 0,
                probe: state.probe,
                versus_good: Vec::new(),
                versus_bad: Vec::new(),
                good_looks_done: 0,
                bad_looks_done: 0,
                blocks: 0,
                round_block_start: 0,
                holding: false,
                test: None,
                confirmed: None,
                search_undecided: 0,
                search_good_looks_done: 0,
                search_bad_looks_done: 0,
                visit_start: 0,
            })
            .collect();
        let mut stored = StoredBisection {
            // Every version computed the Bonferroni looks whatever the
            // design; the Bonferroni design overwrites them with its own.
            candidate_looks: candidate_looks(&core.config),
            config: core.config,
            order: core.order,
            commits,
            endpoint_looks: core.endpoint_looks,
            endpoint_looks_done: core.endpoint_looks_done,
            comparison: core.comparison,
            steps: core.steps,
            abort: core.abort,
            clock: core.clock,
            settled_at: core.settled_at,
            candidate_design: None,
            open_block: None,
            endpoint_design: None,
            side_agreement: None,
            block_test: None,
            search_design: None,
            calls: Vec::new(),
            search_tests: 0,
            provisional: false,
        };
        match &design {
            Designs::FixedRuns(design) => design.store(&mut stored),
            Designs::Bonferroni(design) => design.store(&mut stored),
            Designs::GroupSequential(design) => design.store(&mut stored),
            Designs::SearchConfirm(design) => design.store(&mut stored),
        }
        stored
    }
}
