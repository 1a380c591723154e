//! The bisection state machine: recorded evidence in, next action out.
//!
//! # What it does
//! The caller gives the linear order of candidates (`git rev-list --reverse
//! [--first-parent] good..bad`, so the bad endpoint is last) and then feeds
//! `Event`s: samples measured at a commit, or a skip (build failed, exit
//! 125). `Bisection::next_action` says what to do next: measure a commit N
//! more times, or stop with the culprit (a single commit, or a range when
//! skips make one commit impossible, as `git bisect` does), or abort.
//! The state is a fold of the events: `Bisection::replay(config, good,
//! candidates, events)` rebuilds it exactly, so resuming after SIGKILL is a
//! replay of the stored events. Must not: do I/O, read the clock, or use
//! randomness; every decision is a deterministic function of the events in
//! their order.
//!
//! # How a commit is classified (and why this rule)
//! Everything is measured in *blocks*: `max_batch` runs of one commit
//! followed at once by `max_batch` runs of another, and commits are
//! compared block by block (`blocks.rs`): per block, d = mean(ln X) −
//! mean(ln E); the Hodges–Lehmann estimate of d with its Wilcoxon
//! signed-rank (Walsh average) interval. Load on a shared machine that
//! changes slowly relative to a block cancels inside each block, and load
//! that differs between blocks does not enter the comparison at all.
//!
//! Phase 1 measures G (good) and B (bad) in blocks G, B, B, G, ... until
//! the interval of B/G − 1 excludes 0; its sign is the direction. If it
//! never does within `endpoint_max_runs` runs per endpoint, the bisection
//! aborts with the comparison.
//!
//! A candidate X is then measured with *concurrent controls*: blocks
//! G, X, B then B, X, G, ..., all taken after the previous classification
//! (the window of X's round). X is compared only with the endpoint runs of
//! its own window, never with older ones: an earlier version reused the
//! endpoint runs of phase 1, and on a loaded VM whose load came and went
//! between them it named the wrong commit (0.025 accuracy in the drift
//! simulation of tests/simulation.rs; 0.995 with concurrent blocks). At
//! fixed look points (`looks.rs`, counted in complete blocks):
//! - X is *like-bad* when the interval of X/G − 1 lies entirely on B's side
//!   of 0 (X is shifted away from G towards B);
//! - X is *like-good* when the interval of X/B − 1 lies entirely on G's side
//!   of 0;
//! - a rejection is only taken as a call when X's estimate is also nearer
//!   that endpoint (X goes with the nearer side);
//! - when both reject and X sits 25%–75% of the way from G to B, the call
//!   is still made by the nearer side but flagged `partial` and listed in
//!   the outcome: the change may be spread over several commits.
//!
//! The error that matters is "X is in fact distributed like G but is called
//! like-bad" (and the mirror case). Under that hypothesis, given the
//! machine's state during each block, X's and G's runs in a block are
//! exchangeable, so each block difference is symmetric about 0 and the
//! signed-rank null holds *exactly*, whatever the shape of the noise and
//! however the load differs from block to block: one look's one-sided
//! error is ≤ α_look with no model of the distribution. (It needs the load
//! to be steady within a block of 2·`max_batch` runs; a jump inside a
//! block biases that one block, in a random direction.) Over the K looks a
//! commit can ever get (including retest rounds) the errors add at most to
//! K·α_look (Bonferroni), so with α_look = step_error/K the
//! misclassification probability per commit is ≤ step_error (0.005 by
//! default: 8 steps for 200 commits then give ≥ 96% by the union bound).
//! The first look is at the fewest blocks n for which 2⁻ⁿ ≤ α_look (no
//! signed-rank test can reject earlier). This was chosen over an SPRT on a
//! fitted model (no error guarantee when the noise is skewed or bimodal)
//! and over a pooled Mann–Whitney test on concurrent samples (valid only if
//! X and G saw the same mix of load, and load variance adds to the noise).
//!
//! The price: endpoints are no longer amortised over steps, each step costs
//! about three times the candidate's runs (1667 runs per 200-commit
//! bisection at a 10% shift and 13% noise, against 568 before).
//! Samples are never discarded: re-measuring a commit appends to its
//! samples. A commit still undecided after `max_runs_per_step` runs is
//! avoided like a skip; if the search can only finish through it, it is
//! retested in a new round with a new window (the decision uses that
//! round's runs; the error budget covers every round's looks).
//!
//! `fixed_runs` is a baseline without statistics for comparison: N runs of
//! each endpoint and each commit, classified by the nearer median.
//!
//! # Designs
//! The text above is the `bonferroni` design (stored configs without a
//! `design` field). `group-sequential` (2026-12-01) judges the same two
//! comparisons with one Pocock-type boundary over all looks of both rounds
//! (`design.rs`) and measures a commit against one endpoint once its side
//! is clear. `search-confirm` (the default since 2026-12-02) keeps that
//! test as the *strict* one, continued over every visit to a commit, and
//! adds a looser *search* boundary on the same blocks: the search probes
//! the median of the posterior over the culprit's position (`search.rs`)
//! and moves on at a provisional call; the answer needs the culprit
//! strictly like-bad and its predecessor strictly like-good
//! (`SearchConfirm::search_target`). Each commit's strict test crosses on the
//! wrong side with probability ≤ `step_error` however its visits stop and
//! resume, and a wrong culprit needs a wrong strict call on the culprit or
//! its predecessor (which the search chose partly from their own blocks):
//! by the union bound over the commits measured, probability ≤
//! `step_error` × their number, as in the earlier designs.
//!
//! # Code layout
//! Each design is one `Design` (`bisection/designs.rs`) owning its
//! per-commit state: `bonferroni.rs`, `group_sequential.rs`,
//! `search_confirm.rs` and `fixed_runs.rs`; the binary search the first,
//! second and fourth share is `binary.rs`, the blocks and group-sequential
//! looks the second and third share are `blocked.rs`. This file keeps what
//! every design shares (`Core`: the order, samples, classes, endpoints'
//! comparison, steps and clock); `stored.rs` is the one serialized layout.
//!
//! # Cost
//! `next_action` is O(c) in the number of candidates; classifying a look
//! at n blocks costs O(n² log n) (Walsh averages) plus O(n³) for the exact
//! signed-rank distribution (n ≤ 75 by default).

mod binary;
mod blocked;
mod bonferroni;
mod designs;
mod fixed_runs;
mod group_sequential;
mod search_confirm;
mod stored;

use serde::{Deserialize, Serialize};
use verdict_stats::shift::{Shift, relative_shift};

use crate::blocks::{block_differences, blocked_shift, minimum_blocks};
use crate::commit::CommitId;
use crate::error::{BisectError, Result};
use crate::looks::schedule;

use designs::{Design, Designs};

/// A commit significantly different from both endpoints is flagged partial
/// when it carries this share of the endpoints' log shift.
const INTERMEDIATE_LOW: f64 = 0.25;
const INTERMEDIATE_HIGH: f64 = 0.75;

/// Error rates and run caps of a bisection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Config {
    /// Bound on the probability that one commit is classified on the wrong
    /// side (each direction). 0.005: 8 steps are right ≥ 96% of the time.
    pub step_error: f64,
    /// Bound on the probability of calling equal endpoints different.
    pub endpoint_error: f64,
    /// Runs of a candidate before its first look (raised to the fewest
    /// blocks at which the signed-rank test can reject at its level).
    pub first_look: usize,
    /// Runs of a candidate per round (with as many of each endpoint);
    /// undecided after that, it is avoided like a skip and retested later
    /// only if the search needs it.
    pub max_runs_per_step: usize,
    /// Extra rounds of `max_runs_per_step` runs for undecided commits.
    pub retests: usize,
    /// Runs of each endpoint before the endpoints are first compared.
    pub endpoint_min_runs: usize,
    /// Runs of each endpoint after which the bisection aborts if the
    /// endpoints still cannot be told apart.
    pub endpoint_max_runs: usize,
    /// Largest batch asked for in one `Measure`, and the runs of each
    /// commit in one block of the search: a candidate is measured in
    /// blocks of `max_batch` runs of G, X and B back to back, and compared
    /// with the endpoints block by block, so that load changes on the
    /// machine slower than a block cancel. Small blocks are more robust to
    /// load changes; raise it when a checkout (build, install, reboot) is
    /// expensive.
    pub max_batch: usize,
    /// After the culprit is found, commits measured in each of the two
    /// already-settled sides (before the last good, after the first bad) to
    /// detect non-monotonic evidence. 0 disables.
    pub probes: usize,
    /// Baseline mode without statistics, for comparison: measure each
    /// endpoint and each commit exactly this many times and call a commit
    /// like the endpoint whose median is nearer (on the log scale), as a
    /// careful person with N runs per commit would. `None`: sequential.
    pub fixed_runs: Option<usize>,
    /// How a candidate's looks share the error budget. New bisections use
    /// `group-sequential`; a stored config without this field is a
    /// bisection from before it existed and replays as `bonferroni`, the
    /// way it ran.
    #[serde(default = "LookDesign::bonferroni")]
    pub design: LookDesign,
    /// `search-confirm` design: the one-sided error of each search test
    /// (each comparison of a commit measured to steer the search; its call
    /// is provisional, see `search.rs`).
    #[serde(default = "Config::default_search_error")]
    pub search_error: f64,
    /// `search-confirm` design: runs of a commit per search test before it
    /// is left undecided (`None`: a quarter of `max_runs_per_step`).
    #[serde(default)]
    pub search_max_runs: Option<usize>,
}

/// How the looks at a candidate are designed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum LookDesign {
    /// Until 2026-11: every candidate measured in blocks G, X, B; looks at
    /// geometrically spaced block counts; `step_error` split equally over
    /// every look of every round; each round judged on its own runs.
    Bonferroni,
    /// 2026-12-01: one Pocock-type group-sequential boundary over
    /// geometric looks (`design.rs`); retest rounds pooled with earlier
    /// ones; after a first block of G, X, B, a candidate is measured only
    /// against the endpoint it does not resemble (the comparison that can
    /// decide it).
    GroupSequential,
    /// Since 2026-12-02: a cheap search and a confirmed answer. Commits
    /// are probed at the median of the posterior over the culprit's
    /// position (probabilistic bisection, `search.rs`), a visit ending at
    /// a provisional call when the looser `search_error` boundary is
    /// crossed; the answer needs its culprit strictly like-bad and the
    /// commit before it strictly like-good (the group-sequential test at
    /// `step_error`, continued on the same blocks). A strict call against
    /// the provisional ones is one more call and the search goes on.
    SearchConfirm,
}

impl LookDesign {
    /// The design of configs stored before the field existed.
    pub fn bonferroni() -> Self {
        LookDesign::Bonferroni
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            step_error: 0.005,
            endpoint_error: 0.005,
            first_look: 4,
            max_runs_per_step: 150,
            retests: 1,
            endpoint_min_runs: 20,
            max_batch: 2,
            endpoint_max_runs: 200,
            probes: 0,
            fixed_runs: None,
            design: LookDesign::SearchConfirm,
            search_error: Config::default_search_error(),
            search_max_runs: None,
        }
    }
}

impl Config {
    /// The default `search_error`: 0.1 (measured in
    /// tests/simulation.rs against 0.05 and 0.2).
    pub fn default_search_error() -> f64 {
        0.1
    }

    pub fn validate(&self) -> Result<()> {
        let fail = |message: &str| Err(BisectError::InvalidConfig(message.to_owned()));
        if !(self.step_error > 0.0 && self.step_error < 0.5) {
            return fail("step_error must be in (0, 0.5)");
        }
        if !(self.endpoint_error > 0.0 && self.endpoint_error < 0.5) {
            return fail("endpoint_error must be in (0, 0.5)");
        }
        if self.first_look < 2 || self.first_look > self.max_runs_per_step {
            return fail("first_look must be at least 2 and at most max_runs_per_step");
        }
        if self.max_batch == 0 {
            return fail("max_batch must be at least 1");
        }
        if self.endpoint_min_runs < 2 || self.endpoint_min_runs > self.endpoint_max_runs {
            return fail("endpoint_min_runs must be at least 2 and at most endpoint_max_runs");
        }
        if self.fixed_runs.is_some_and(|runs| runs == 0) {
            return fail("fixed_runs must be at least 1");
        }
        if !(self.search_error > 0.0 && self.search_error < 0.5) {
            return fail("search_error must be in (0, 0.5)");
        }
        Ok(())
    }
}

/// One recorded fact. The store keeps these in order; replaying them
/// rebuilds the state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Event {
    /// Measured values (all finite and > 0) of one commit, in run order.
    Samples { commit: CommitId, values: Vec<f64> },
    /// The commit could not be measured (build failed, exit 125, ...).
    Skip { commit: CommitId, reason: String },
}

/// Which way the bad endpoint moved the metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Values at the bad endpoint are higher (run time up, throughput up).
    Higher,
    /// Values at the bad endpoint are lower.
    Lower,
}

/// The phase-1 comparison of the endpoints: B/G − 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EndpointComparison {
    pub direction: Direction,
    pub shift: Shift,
    pub good_runs: usize,
    pub bad_runs: usize,
}

/// The class a commit was put in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Distributed like the good endpoint.
    Good,
    /// Distributed like the bad endpoint.
    Bad,
    /// Neither after its run cap (may be retested).
    Undecided,
    /// Could not be measured.
    Skipped,
}

/// Why and how a commit was classified.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Decision {
    pub class: Class,
    /// Runs of this commit's current round (the ones the decision used;
    /// a retested commit keeps its earlier rounds' samples too).
    pub runs: usize,
    /// Runs of the good and bad endpoints it was compared with: those
    /// measured concurrently with it (in turns, within its window), or all
    /// of them in fixed-runs mode and for skips.
    pub endpoint_runs: (usize, usize),
    /// Nominal two-sided confidence of each interval at this look (the
    /// per-look level after the Bonferroni split); 0 for a skip.
    pub confidence: f64,
    /// X/G − 1 with its interval at `confidence`.
    pub versus_good: Option<Shift>,
    /// X/B − 1 with its interval at `confidence`.
    pub versus_bad: Option<Shift>,
    /// Where X's estimate sits from G (0) to B (1) on the log scale.
    pub fraction: Option<f64>,
    /// Significantly different from both endpoints and 25%–75% of the way:
    /// a partial change (or drift); classified by the nearer side.
    pub partial: bool,
    /// For a skip, the caller's reason.
    pub reason: Option<String>,
}

/// A classification, in the order they happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Step {
    pub commit: CommitId,
    /// Index in the order (0 = good endpoint, last = bad endpoint).
    pub position: usize,
    pub decision: Decision,
    /// Total runs over all commits (endpoints included) at this point;
    /// the difference between consecutive steps is the cost of a step.
    pub total_runs: usize,
    /// Whether this commit was measured as a monotonicity probe.
    pub probe: bool,
    /// `search-confirm` design: a search call at the loose search error,
    /// which only steers the search (not in the git bisect log replay).
    #[serde(default)]
    pub provisional: bool,
}

/// The first bad commit, or the commits it may be when skipped or
/// undecided commits make one impossible (oldest first; the last one is
/// the first commit known to be bad).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", content = "commits", rename_all = "kebab-case")]
pub enum Culprit {
    Single(CommitId),
    Range(Vec<CommitId>),
}

/// Non-monotonic evidence: `bad` is earlier in the order than `good`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Conflict {
    pub bad: CommitId,
    pub good: CommitId,
}

/// The result of a finished bisection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Outcome {
    pub culprit: Culprit,
    /// The last commit classified like-good before the culprit (the good
    /// endpoint if none): the baseline for the culprit's effect.
    pub last_good: CommitId,
    /// The first commit classified like-bad.
    pub first_bad: CommitId,
    pub conflicts: Vec<Conflict>,
    /// Commits whose decision was `partial` (different from both
    /// endpoints, in between): a change spread over commits, or drift.
    pub partial: Vec<CommitId>,
    pub skipped: Vec<CommitId>,
    pub undecided: Vec<CommitId>,
    pub steps: usize,
    pub total_runs: usize,
}

/// Why a bisection cannot go on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AbortReason {
    /// After `good_runs`/`bad_runs` runs the endpoints are not shown to
    /// differ; `shift` is B/G − 1 with a 95% interval.
    EndpointsIndistinguishable {
        shift: Option<Shift>,
        good_runs: usize,
        bad_runs: usize,
    },
    /// An endpoint could not be measured.
    EndpointSkipped { commit: CommitId, reason: String },
}

/// What the caller should do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Action {
    /// Check out `commit`, run the workload `runs` more times and feed the
    /// values back as `Event::Samples` (in smaller batches is fine).
    Measure {
        commit: CommitId,
        runs: usize,
    },
    Done(Outcome),
    Abort {
        reason: AbortReason,
    },
}

/// Where the bisection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Endpoints,
    Search,
    Done,
    Aborted,
}

/// What is known about one commit, for `verdict bisect log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CommitEvidence {
    pub commit: CommitId,
    pub position: usize,
    pub samples: Vec<f64>,
    /// `None` while undecided and still being measured (or never measured).
    pub class: Option<Class>,
    pub decision: Option<Decision>,
}

/// What every design knows about one commit. The per-design state (rounds,
/// looks, blocks, search visits) lives with the design (`Design`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommitState {
    pub(crate) samples: Vec<f64>,
    /// For each sample, the number of runs (all commits) recorded before
    /// it: the bisection's clock, since events are stored in time order.
    pub(crate) times: Vec<usize>,
    pub(crate) class: Option<Class>,
    pub(crate) decision: Option<Decision>,
    /// Measured as a monotonicity probe (binary-search designs only).
    pub(crate) probe: bool,
}

impl CommitState {
    fn new(class: Option<Class>) -> Self {
        CommitState {
            samples: Vec::new(),
            times: Vec::new(),
            class,
            decision: None,
            probe: false,
        }
    }
}

/// The state every design shares: the order, each commit's samples and
/// class, the endpoints' comparison, the steps and the clock.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Core {
    pub(crate) config: Config,
    /// Good endpoint, candidates oldest first, bad endpoint last.
    pub(crate) order: Vec<CommitId>,
    pub(crate) commits: Vec<CommitState>,
    pub(crate) endpoint_looks: Vec<usize>,
    pub(crate) endpoint_looks_done: usize,
    pub(crate) comparison: Option<EndpointComparison>,
    pub(crate) steps: Vec<Step>,
    pub(crate) abort: Option<AbortReason>,
    /// Runs recorded so far (the clock).
    pub(crate) clock: usize,
    /// Clock at the last classification or endpoint comparison: the
    /// runs after it were taken for the commit being measured now.
    pub(crate) settled_at: usize,
}

/// The state of one statistical bisection (serde: store it or rebuild it
/// with `replay`). Serialized in the one flat layout every version wrote
/// (`stored.rs`), whatever the design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(from = "stored::StoredBisection", into = "stored::StoredBisection")]
pub struct Bisection {
    pub(crate) core: Core,
    pub(crate) design: Designs,
}

impl Bisection {
    /// `candidates`: the commits in good..bad, oldest first, the bad
    /// endpoint last (`git rev-list --reverse [--first-parent] good..bad`).
    pub fn new(config: Config, good: CommitId, candidates: Vec<CommitId>) -> Result<Self> {
        config.validate()?;
        if candidates.is_empty() {
            return Err(BisectError::InvalidSetup(
                "no commits between the good and the bad endpoint".to_owned(),
            ));
        }
        let mut order = Vec::with_capacity(candidates.len() + 1);
        order.push(good);
        order.extend(candidates);
        let mut sorted: Vec<&CommitId> = order.iter().collect();
        sorted.sort();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(BisectError::InvalidSetup(format!(
                "commit {} appears twice in the order",
                pair[0]
            )));
        }
        let last = order.len() - 1;
        let commits = (0..order.len())
            .map(|position| match position {
                0 => CommitState::new(Some(Class::Good)),
                position if position == last => CommitState::new(Some(Class::Bad)),
                _ => CommitState::new(None),
            })
            .collect();
        let design = Designs::new(&config, order.len());
        let endpoint_looks = design.get().endpoint_test().looks(&config);
        Ok(Bisection {
            core: Core {
                config,
                order,
                commits,
                endpoint_looks,
                endpoint_looks_done: 0,
                comparison: None,
                steps: Vec::new(),
                abort: None,
                clock: 0,
                settled_at: 0,
            },
            design,
        })
    }

    /// Rebuilds the state from the recorded events, in order. Resume is
    /// `replay` of the stored events followed by `next_action`.
    pub fn replay<'a>(
        config: Config,
        good: CommitId,
        candidates: Vec<CommitId>,
        events: impl IntoIterator<Item = &'a Event>,
    ) -> Result<Self> {
        let mut bisection = Bisection::new(config, good, candidates)?;
        for event in events {
            bisection.apply(event)?;
        }
        Ok(bisection)
    }

    /// Records one event and makes any decision it completes.
    pub fn apply(&mut self, event: &Event) -> Result<()> {
        match event {
            Event::Samples { commit, values } => self.apply_samples(commit, values),
            Event::Skip { commit, reason } => self.apply_skip(commit, reason),
        }
    }

    fn apply_samples(&mut self, commit: &CommitId, values: &[f64]) -> Result<()> {
        let core = &mut self.core;
        let design = self.design.get_mut();
        let position = core.position(commit)?;
        if let Some(value) = values
            .iter()
            .find(|value| !(value.is_finite() && **value > 0.0))
        {
            return Err(BisectError::InvalidSample {
                commit: commit.to_string(),
                reason: format!("value {value} is not a finite positive number"),
            });
        }
        if values.is_empty() {
            return Ok(());
        }
        let is_endpoint = position == 0 || position == core.last();
        design.before_samples(core, position);
        let clock = core.clock;
        let state = &mut core.commits[position];
        state.samples.extend_from_slice(values);
        state.times.extend(clock..clock + values.len());
        core.clock += values.len();
        if core.abort.is_some() {
            return Ok(());
        }
        if core.comparison.is_some() {
            design.samples_added(core, position, values);
        } else if is_endpoint {
            design.evaluate_endpoints(core);
            if core.comparison.is_some() {
                design.endpoints_told_apart(core);
            }
        }
        Ok(())
    }

    fn apply_skip(&mut self, commit: &CommitId, reason: &str) -> Result<()> {
        let core = &mut self.core;
        let design = self.design.get_mut();
        let position = core.position(commit)?;
        if position == 0 || position == core.last() {
            if core.abort.is_none() {
                core.abort = Some(AbortReason::EndpointSkipped {
                    commit: commit.clone(),
                    reason: reason.to_owned(),
                });
            }
            return Ok(());
        }
        let state = &core.commits[position];
        if matches!(state.class, Some(Class::Good | Class::Bad | Class::Skipped)) {
            return Ok(());
        }
        design.skipping(position);
        let decision = Decision {
            class: Class::Skipped,
            runs: state.samples.len(),
            endpoint_runs: core.endpoint_runs(),
            confidence: 0.0,
            versus_good: None,
            versus_bad: None,
            fraction: None,
            partial: false,
            reason: Some(reason.to_owned()),
        };
        design.record(core, position, decision);
        Ok(())
    }

    /// The next thing to do. Pure: calling it twice gives the same answer.
    pub fn next_action(&self) -> Action {
        let core = &self.core;
        if let Some(reason) = &core.abort {
            return Action::Abort {
                reason: reason.clone(),
            };
        }
        if core.comparison.is_none() {
            return self.design.get().endpoint_action(core);
        }
        self.design.get().next_action(core)
    }

    pub fn phase(&self) -> Phase {
        match self.next_action() {
            Action::Abort { .. } => Phase::Aborted,
            Action::Done(_) => Phase::Done,
            Action::Measure { .. } if self.core.comparison.is_none() => Phase::Endpoints,
            Action::Measure { .. } => Phase::Search,
        }
    }

    pub fn config(&self) -> &Config {
        &self.core.config
    }

    /// Good endpoint, candidates, bad endpoint.
    pub fn order(&self) -> &[CommitId] {
        &self.core.order
    }

    pub fn good(&self) -> &CommitId {
        &self.core.order[0]
    }

    pub fn bad(&self) -> &CommitId {
        &self.core.order[self.core.last()]
    }

    /// The phase-1 result, once the endpoints are known to differ.
    pub fn endpoint_comparison(&self) -> Option<&EndpointComparison> {
        self.core.comparison.as_ref()
    }

    /// Classifications in the order they were made.
    pub fn steps(&self) -> &[Step] {
        &self.core.steps
    }

    pub fn samples(&self, commit: &CommitId) -> Option<&[f64]> {
        let position = self.core.order.iter().position(|id| id == commit)?;
        Some(&self.core.commits[position].samples)
    }

    pub fn total_runs(&self) -> usize {
        self.core.total_runs()
    }

    /// Every commit that was measured, skipped or is an endpoint, in order.
    pub fn evidence(&self) -> Vec<CommitEvidence> {
        let core = &self.core;
        core.order
            .iter()
            .zip(&core.commits)
            .enumerate()
            .filter(|(position, (_, state))| {
                *position == 0
                    || *position == core.last()
                    || !state.samples.is_empty()
                    || state.class.is_some()
            })
            .map(|(position, (commit, state))| CommitEvidence {
                commit: commit.clone(),
                position,
                samples: state.samples.clone(),
                class: state.class,
                decision: state.decision.clone(),
            })
            .collect()
    }

    /// `candidate/baseline − 1` from the stored samples (for the culprit's
    /// effect against its parent). `None` if either has no valid samples.
    pub fn compare(
        &self,
        baseline: &CommitId,
        candidate: &CommitId,
        confidence: f64,
    ) -> Option<Shift> {
        relative_shift(
            self.samples(baseline)?,
            self.samples(candidate)?,
            confidence,
        )
    }

    /// Non-monotonic evidence so far: like-good commits after the first
    /// like-bad one.
    pub fn conflicts(&self) -> Vec<Conflict> {
        self.core.conflicts(self.design.get())
    }

    /// The final verdict of each classified commit, ordered by when it was
    /// last classified, as `git bisect` would have been told.
    pub fn log_entries(&self) -> Vec<(CommitId, Class)> {
        let mut seen = vec![false; self.core.order.len()];
        let mut entries = Vec::new();
        for step in self
            .core
            .steps
            .iter()
            .rev()
            .filter(|step| !step.provisional)
        {
            if !std::mem::replace(&mut seen[step.position], true) {
                entries.push((step.commit.clone(), step.decision.class));
            }
        }
        entries.reverse();
        entries
    }
}

impl Core {
    pub(crate) fn last(&self) -> usize {
        self.order.len() - 1
    }

    fn position(&self, commit: &CommitId) -> Result<usize> {
        self.order
            .iter()
            .position(|id| id == commit)
            .ok_or_else(|| BisectError::UnknownCommit(commit.to_string()))
    }

    pub(crate) fn total_runs(&self) -> usize {
        self.commits.iter().map(|state| state.samples.len()).sum()
    }

    pub(crate) fn endpoint_runs(&self) -> (usize, usize) {
        (
            self.commits[0].samples.len(),
            self.commits[self.last()].samples.len(),
        )
    }

    /// The endpoint samples recorded at or after clock `window_start`.
    /// O(log n) to find, by binary search on the sorted clock values.
    pub(crate) fn concurrent(&self, position: usize, window_start: usize) -> &[f64] {
        let state = &self.commits[position];
        let first = state.times.partition_point(|&time| time < window_start);
        &state.samples[first..]
    }

    pub(crate) fn concurrent_runs(&self, window_start: usize) -> (usize, usize) {
        (
            self.concurrent(0, window_start).len(),
            self.concurrent(self.last(), window_start).len(),
        )
    }

    /// `targets`: (position, runs counted so far, target). Measures the
    /// commit furthest behind its target (smallest share of it done; ties
    /// in the given order), at most `max_batch` runs. When all are at their
    /// targets (cannot happen: reaching them evaluates) the last one gets
    /// one more run.
    pub(crate) fn measure_in_turns(&self, targets: &[(usize, usize, usize)]) -> Action {
        let behind = targets
            .iter()
            .filter(|(_, done, target)| done < target)
            .min_by(
                |(_, first_done, first_target), (_, second_done, second_target)| {
                    // done/target compared without division: a/b < c/d ⇔ a·d < c·b.
                    (first_done * second_target).cmp(&(second_done * first_target))
                },
            );
        let (position, runs) = match behind {
            Some(&(position, done, target)) => (position, target - done),
            None => (targets[targets.len() - 1].0, 1),
        };
        Action::Measure {
            commit: self.order[position].clone(),
            runs: runs.min(self.config.max_batch),
        }
    }

    /// (last like-good before the first like-bad, first like-bad), by the
    /// classes that count for the answer (`Design::settled_class`).
    pub(crate) fn bounds(&self, design: &dyn Design) -> (usize, usize) {
        let high = (0..self.order.len())
            .find(|&position| design.settled_class(self, position) == Some(Class::Bad))
            .unwrap_or(self.last());
        let low = (0..high)
            .rev()
            .find(|&position| design.settled_class(self, position) == Some(Class::Good))
            .unwrap_or(0);
        (low, high)
    }

    fn conflicts(&self, design: &dyn Design) -> Vec<Conflict> {
        let (_, high) = self.bounds(design);
        (high + 1..self.order.len())
            .filter(|&position| design.settled_class(self, position) == Some(Class::Good))
            .map(|position| Conflict {
                bad: self.order[high].clone(),
                good: self.order[position].clone(),
            })
            .collect()
    }

    /// Phase 1 of the statistical designs: blocks of `max_batch` runs, G
    /// then B, then B then G.
    pub(crate) fn endpoint_blocks_action(&self) -> Action {
        let (good_runs, bad_runs) = self.endpoint_runs();
        let block = self.config.max_batch;
        let complete = good_runs.min(bad_runs) / block;
        let target = (complete + 1) * block;
        let turns = if complete % 2 == 0 {
            [(0, good_runs), (self.last(), bad_runs)]
        } else {
            [(self.last(), bad_runs), (0, good_runs)]
        };
        let (position, done) = turns
            .into_iter()
            .find(|(_, done)| *done < target)
            .unwrap_or(turns[1]);
        Action::Measure {
            commit: self.order[position].clone(),
            runs: target.saturating_sub(done).max(1),
        }
    }

    /// Phase 1 of the statistical designs: the endpoints' blocked test at
    /// each of their looks, at the design's level (and its second test, if
    /// it has one); aborts at the last look if they are not told apart.
    pub(crate) fn evaluate_endpoints(&mut self, design: &dyn Design) {
        let (good_runs, bad_runs) = self.endpoint_runs();
        let runs = good_runs.min(bad_runs);
        let block = self.config.max_batch;
        let blocks = runs / block;
        let mut advanced = false;
        while self
            .endpoint_looks
            .get(self.endpoint_looks_done)
            .is_some_and(|&look| look <= blocks)
        {
            self.endpoint_looks_done += 1;
            advanced = true;
        }
        if !advanced {
            return;
        }
        let confidence = design.endpoint_test().confidence(self);
        let good = &self.commits[0].samples;
        let bad = &self.commits[self.last()].samples;
        // Block by block, like the candidates: load changes slower than a
        // block cancel (see blocks.rs).
        let differences = block_differences(good, bad, block);
        let direction_of = |shift: Option<Shift>| {
            shift.and_then(|shift| shift.interval).and_then(|interval| {
                if interval.low > 0.0 {
                    Some(Direction::Higher)
                } else if interval.high < 0.0 {
                    Some(Direction::Lower)
                } else {
                    None
                }
            })
        };
        let mut shift = blocked_shift(&differences, confidence);
        let mut direction = direction_of(shift);
        if direction.is_none() {
            let second = design.endpoint_test().second_test(&differences, confidence);
            if let Some(found) = direction_of(second) {
                direction = Some(found);
                shift = second;
            }
        }
        if let (Some(direction), Some(shift)) = (direction, shift) {
            self.settle(direction, shift, good_runs, bad_runs);
        } else if self.endpoint_looks_done == self.endpoint_looks.len() {
            self.abort = Some(AbortReason::EndpointsIndistinguishable {
                shift: blocked_shift(&block_differences(good, bad, block), 0.95),
                good_runs,
                bad_runs,
            });
        }
    }

    /// The endpoints are told apart: the search phase starts now.
    pub(crate) fn settle(
        &mut self,
        direction: Direction,
        shift: Shift,
        good_runs: usize,
        bad_runs: usize,
    ) {
        self.comparison = Some(EndpointComparison {
            direction,
            shift,
            good_runs,
            bad_runs,
        });
        self.settled_at = self.clock;
    }

    /// Records a decision as a step. `provisional`: a search call of the
    /// `search-confirm` design (which does its own bookkeeping first).
    pub(crate) fn record(&mut self, position: usize, decision: Decision, provisional: bool) {
        let total_runs = self.total_runs();
        self.settled_at = self.clock;
        let state = &mut self.commits[position];
        state.class = Some(decision.class);
        state.decision = Some(decision.clone());
        self.steps.push(Step {
            commit: self.order[position].clone(),
            position,
            decision,
            total_runs,
            probe: state.probe,
            provisional,
        });
    }

    pub(crate) fn outcome(&self, design: &dyn Design) -> Outcome {
        let (low, high) = self.bounds(design);
        let culprit = if high - low == 1 {
            Culprit::Single(self.order[high].clone())
        } else {
            Culprit::Range(self.order[low + 1..=high].to_vec())
        };
        let with_class = |class: Class| -> Vec<CommitId> {
            (0..self.order.len())
                .filter(|&position| self.commits[position].class == Some(class))
                .map(|position| self.order[position].clone())
                .collect()
        };
        Outcome {
            culprit,
            last_good: self.order[low].clone(),
            first_bad: self.order[high].clone(),
            conflicts: self.conflicts(design),
            partial: self
                .order
                .iter()
                .zip(&self.commits)
                .filter(|(_, state)| {
                    state
                        .decision
                        .as_ref()
                        .is_some_and(|decision| decision.partial)
                })
                .map(|(commit, _)| commit.clone())
                .collect(),
            skipped: with_class(Class::Skipped),
            undecided: with_class(Class::Undecided),
            steps: self.steps.len(),
            total_runs: self.total_runs(),
        }
    }
}

/// Looks counted in complete blocks of `block` runs, from `first_runs` to
/// `last_runs`, with the first look raised to the fewest blocks at which a
/// signed-rank interval at the per-look level exists; `error` is the
/// two-sided error split over all `rounds × looks` looks.
pub(crate) fn looks_in_blocks(
    first_runs: usize,
    last_runs: usize,
    block: usize,
    error: f64,
    rounds: usize,
) -> Vec<usize> {
    let block = block.max(1);
    let last = (last_runs / block).max(1);
    let mut first = first_runs.div_ceil(block).max(2).min(last);
    loop {
        let looks = schedule(first, last, &[]);
        let alpha = error / 2.0 / (looks.len() * rounds) as f64;
        let needed = minimum_blocks(alpha).min(last);
        if needed <= first {
            return looks;
        }
        first = needed;
    }
}

/// The median of a non-empty sample (mean of the middle two for even n).
/// O(n log n).
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}
