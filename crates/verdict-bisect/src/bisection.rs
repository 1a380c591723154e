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
//! (`Bisection::search_target`). Each commit's strict test crosses on the
//! wrong side with probability ≤ `step_error` however its visits stop and
//! resume, and a wrong culprit needs a wrong strict call on the culprit or
//! its predecessor (which the search chose partly from their own blocks):
//! by the union bound over the commits measured, probability ≤
//! `step_error` × their number, as in the earlier designs.
//!
//! # Cost
//! `next_action` is O(c) in the number of candidates; classifying a look
//! at n blocks costs O(n² log n) (Walsh averages) plus O(n³) for the exact
//! signed-rank distribution (n ≤ 75 by default).

use serde::{Deserialize, Serialize};
use verdict_stats::shift::{Shift, relative_shift};

use crate::blocks::{BlockTest, block_differences, blocked_shift, minimum_blocks, sign_shift};
use crate::commit::CommitId;
use crate::design::{CandidateDesign, candidate_design, search_design};
use crate::error::{BisectError, Result};
use crate::looks::schedule;
use crate::search::{Call, posterior};

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct CommitState {
    samples: Vec<f64>,
    /// For each sample, the number of runs (all commits) recorded before
    /// it: the bisection's clock, since events are stored in time order.
    times: Vec<usize>,
    /// Index in `samples` where the current measurement round began.
    round_start: usize,
    /// Clock value at which the current round's window began: endpoint
    /// samples at or after it are concurrent with this commit's round.
    window_start: usize,
    class: Option<Class>,
    decision: Option<Decision>,
    /// Number of entries of the look schedule already evaluated.
    looks_done: usize,
    /// Retest round (0 = first).
    round: usize,
    probe: bool,
    /// Group-sequential design: block differences against G (ln X − ln G,
    /// block means), over every round.
    #[serde(default)]
    versus_good: Vec<f64>,
    /// Likewise against B.
    #[serde(default)]
    versus_bad: Vec<f64>,
    /// Looks of the design reached by each comparison.
    #[serde(default)]
    good_looks_done: usize,
    #[serde(default)]
    bad_looks_done: usize,
    /// Completed blocks of this commit, over every round, and at the start
    /// of the current round.
    #[serde(default)]
    blocks: usize,
    #[serde(default)]
    round_block_start: usize,
    /// Group-sequential design: one test rejected while X sat 25%–75% of
    /// the way between the endpoints; the other comparison is measured up
    /// to as many blocks before the call, to tell a partial change.
    #[serde(default)]
    holding: bool,
    /// `search-confirm` design: the test in progress (fresh blocks since
    /// it started), if any.
    #[serde(default)]
    test: Option<TestKind>,
    /// `search-confirm` design: the class given by this commit's latest
    /// confirmation test.
    #[serde(default)]
    confirmed: Option<Class>,
    /// `search-confirm` design: search tests of this commit that ended
    /// undecided.
    #[serde(default)]
    search_undecided: usize,
    /// `search-confirm` design: the search test's looks reached (its
    /// provisional boundary, on the same blocks as the strict test), and
    /// the commit's blocks when its current visit began.
    #[serde(default)]
    search_good_looks_done: usize,
    #[serde(default)]
    search_bad_looks_done: usize,
    #[serde(default)]
    visit_start: usize,
}

/// A visit to a commit in the `search-confirm` design (every visit
/// continues the commit's one pooled test).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
enum TestKind {
    /// Until the provisional boundary (`search_error`) or the strict one
    /// is crossed: a provisional call that steers the search.
    Search,
    /// Until the strict boundary (`step_error`) is crossed: a call the
    /// answer may rest on.
    Confirm,
}

impl CommitState {
    fn new(class: Option<Class>) -> Self {
        CommitState {
            samples: Vec::new(),
            times: Vec::new(),
            round_start: 0,
            window_start: 0,
            class,
            decision: None,
            looks_done: 0,
            round: 0,
            probe: false,
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
        }
    }
}

/// The state of one statistical bisection (serde: store it or rebuild it
/// with `replay`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Bisection {
    config: Config,
    /// Good endpoint, candidates oldest first, bad endpoint last.
    order: Vec<CommitId>,
    commits: Vec<CommitState>,
    endpoint_looks: Vec<usize>,
    endpoint_looks_done: usize,
    /// Looks within one round of a candidate (its round's own runs).
    candidate_looks: Vec<usize>,
    comparison: Option<EndpointComparison>,
    steps: Vec<Step>,
    abort: Option<AbortReason>,
    /// Runs recorded so far (the clock).
    clock: usize,
    /// Clock at the last classification or endpoint comparison: the
    /// runs after it were taken for the commit being measured now.
    settled_at: usize,
    /// Group-sequential design: the candidates' looks, fixed when the
    /// endpoints are told apart.
    #[serde(default)]
    candidate_design: Option<CandidateDesign>,
    /// Group-sequential design: the block being measured.
    #[serde(default)]
    open_block: Option<OpenBlock>,
    /// Group-sequential design: the endpoints' looks and levels.
    #[serde(default)]
    endpoint_design: Option<CandidateDesign>,
    /// Group-sequential design: share of the endpoints' block differences
    /// beyond half their shift (towards B) when they were told apart,
    /// clamped to [0.55, 0.95] (`side_log_odds`).
    #[serde(default)]
    side_agreement: Option<f64>,
    /// Group-sequential design: the test run on candidates' block
    /// differences, chosen from the endpoints' blocks when they were told
    /// apart (before any candidate is measured).
    #[serde(default)]
    block_test: Option<BlockTest>,
    /// `search-confirm` design: the search tests' looks and levels.
    #[serde(default)]
    search_design: Option<CandidateDesign>,
    /// `search-confirm` design: every good/bad call with its error, for
    /// the posterior over the culprit's position.
    #[serde(default)]
    calls: Vec<Call>,
    /// `search-confirm` design: search and confirmation tests started.
    #[serde(default)]
    search_tests: usize,
    /// Set while a provisional call is being recorded.
    #[serde(skip)]
    provisional: bool,
}

/// A block in progress: `max_batch` runs of each commit in `turns`, in
/// that order, back to back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct OpenBlock {
    candidate: usize,
    turns: Vec<usize>,
    values: Vec<Vec<f64>>,
}

/// Both comparisons of a candidate at their latest looks
/// (`Bisection::look`).
struct Looked {
    good_done: usize,
    bad_done: usize,
    advanced: bool,
    like_good: bool,
    like_bad: bool,
    versus_good: Option<Shift>,
    good_confidence: f64,
    versus_bad: Option<Shift>,
    bad_confidence: f64,
}

/// Which endpoints a candidate's next block measures it against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Against {
    Both,
    Good,
    Bad,
}

/// Blocks against both endpoints before a candidate is measured against
/// one only.
const BOTH_BLOCKS: usize = 1;

/// `search-confirm` design: the posterior probability that the culprit
/// lies in one gap between usable commits at which the search stops and
/// the gap's ends are confirmed.
const CONFIRM_MASS: f64 = 0.8;

/// Posterior log odds (`Bisection::side_log_odds`) of a candidate's side
/// beyond which it is measured against the other endpoint only: ln 2,
/// p = 2/3 (see `Bisection::against`).
const SIDE_LOG_ODDS: f64 = std::f64::consts::LN_2;

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
        let candidate_looks = looks_in_blocks(
            config.first_look,
            config.max_runs_per_step,
            config.max_batch,
            config.step_error * 2.0,
            config.retests + 1,
        );
        let grouped = config.design != LookDesign::Bonferroni && config.fixed_runs.is_none();
        // Group-sequential: the endpoints' two-sided tests (signed-rank and
        // sign, the error split between them) at level `endpoint_error`
        // together over looks up to their cap (one round).
        let endpoint_design = grouped.then(|| {
            candidate_design(
                config.endpoint_error / 4.0,
                config.endpoint_min_runs.div_ceil(config.max_batch),
                (config.endpoint_max_runs / config.max_batch).max(2),
                1,
            )
        });
        // Group-sequential: each of a candidate's two one-sided tests at
        // level `step_error` over every round's looks.
        let search_confirm = grouped && config.design == LookDesign::SearchConfirm;
        let search_design = search_confirm.then(|| {
            let runs = config
                .search_max_runs
                .unwrap_or(config.max_runs_per_step / 4)
                .max(config.first_look);
            search_design(
                config.search_error,
                config.first_look.div_ceil(config.max_batch),
                (runs / config.max_batch).max(2),
            )
        });
        let candidate_design = (grouped && !search_confirm).then(|| {
            candidate_design(
                config.step_error,
                config.first_look.div_ceil(config.max_batch),
                (config.max_runs_per_step / config.max_batch).max(2),
                config.retests + 1,
            )
        });
        let endpoint_looks = match &endpoint_design {
            Some(design) => design.looks.clone(),
            None => looks_in_blocks(
                config.endpoint_min_runs,
                config.endpoint_max_runs,
                config.max_batch,
                config.endpoint_error,
                1,
            ),
        };
        Ok(Bisection {
            config,
            order,
            commits,
            endpoint_looks,
            endpoint_looks_done: 0,
            candidate_looks,
            comparison: None,
            steps: Vec::new(),
            abort: None,
            clock: 0,
            settled_at: 0,
            candidate_design,
            open_block: None,
            endpoint_design,
            side_agreement: None,
            block_test: None,
            search_design,
            calls: Vec::new(),
            search_tests: 0,
            provisional: false,
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
            Event::Samples { commit, values } => {
                let position = self.position(commit)?;
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
                let (low, high) = self.bounds();
                let is_endpoint = position == 0 || position == self.last();
                let (retests, settled_at, clock) =
                    (self.config.retests, self.settled_at, self.clock);
                let search_confirm = self.search_confirm();
                let state = &mut self.commits[position];
                if state.samples.is_empty()
                    && self.comparison.is_some()
                    && !search_confirm
                    && (position <= low || position >= high)
                {
                    state.probe = true;
                }
                if !is_endpoint && !search_confirm {
                    if state.class == Some(Class::Undecided) && state.round < retests {
                        // A retest: a new round with a new window.
                        state.round += 1;
                        state.class = None;
                        state.looks_done = 0;
                        state.round_start = state.samples.len();
                        state.round_block_start = state.blocks;
                        state.window_start = settled_at;
                    } else if state.samples.is_empty() {
                        state.window_start = settled_at;
                    }
                }
                state.samples.extend_from_slice(values);
                state.times.extend(clock..clock + values.len());
                self.clock += values.len();
                if self.abort.is_some() {
                    return Ok(());
                }
                if self.comparison.is_none() {
                    if is_endpoint {
                        self.evaluate_endpoints();
                    }
                } else if self.grouped() {
                    self.fill_block(position, values);
                } else {
                    if !is_endpoint {
                        self.evaluate_candidate(position);
                    }
                    // Endpoint runs (or the candidate's own) may complete
                    // the concurrent evidence of the commit in progress.
                    if let Some(target) = self.target()
                        && target != position
                    {
                        self.evaluate_candidate(target);
                    }
                }
            }
            Event::Skip { commit, reason } => {
                let position = self.position(commit)?;
                if position == 0 || position == self.last() {
                    if self.abort.is_none() {
                        self.abort = Some(AbortReason::EndpointSkipped {
                            commit: commit.clone(),
                            reason: reason.clone(),
                        });
                    }
                    return Ok(());
                }
                let state = &self.commits[position];
                if matches!(state.class, Some(Class::Good | Class::Bad | Class::Skipped)) {
                    return Ok(());
                }
                if self
                    .open_block
                    .as_ref()
                    .is_some_and(|block| block.candidate == position)
                {
                    self.open_block = None;
                }
                let decision = Decision {
                    class: Class::Skipped,
                    runs: state.samples.len(),
                    endpoint_runs: self.endpoint_runs(),
                    confidence: 0.0,
                    versus_good: None,
                    versus_bad: None,
                    fraction: None,
                    partial: false,
                    reason: Some(reason.clone()),
                };
                self.record(position, decision);
            }
        }
        Ok(())
    }

    /// The next thing to do. Pure: calling it twice gives the same answer.
    pub fn next_action(&self) -> Action {
        if let Some(reason) = &self.abort {
            return Action::Abort {
                reason: reason.clone(),
            };
        }
        let (good_runs, bad_runs) = self.endpoint_runs();
        if self.comparison.is_none() {
            if let Some(runs) = self.config.fixed_runs {
                return self
                    .measure_in_turns(&[(0, good_runs, runs), (self.last(), bad_runs, runs)]);
            }
            // Blocks of `max_batch` runs, G then B, then B then G.
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
            return Action::Measure {
                commit: self.order[position].clone(),
                runs: target.saturating_sub(done).max(1),
            };
        }
        if self.grouped() {
            return match self.plan() {
                Some((turns, index, filled)) => Action::Measure {
                    commit: self.order[turns[index]].clone(),
                    runs: self.config.max_batch - filled,
                },
                None => Action::Done(self.outcome()),
            };
        }
        let Some(position) = self.target() else {
            return Action::Done(self.outcome());
        };
        let state = &self.commits[position];
        if let Some(runs) = self.config.fixed_runs {
            return self.measure_in_turns(&[(position, state.samples.len(), runs)]);
        }
        // A commit whose round has not started yet (no runs, or undecided
        // and about to be retested) starts its window now.
        let starting = state.samples.is_empty() || state.class == Some(Class::Undecided);
        let (round_runs, window_start) = if starting {
            (0, self.settled_at)
        } else {
            (state.samples.len() - state.round_start, state.window_start)
        };
        let (good_concurrent, bad_concurrent) = self.concurrent_runs(window_start);
        // Blocks in turns G, X, B then B, X, G (a linear trend cancels over
        // two blocks); each block is `max_batch` runs of each.
        let block = self.config.max_batch;
        let complete = round_runs.min(good_concurrent).min(bad_concurrent) / block;
        let target = (complete + 1) * block;
        let turns = if complete % 2 == 0 {
            [
                (0, good_concurrent),
                (position, round_runs),
                (self.last(), bad_concurrent),
            ]
        } else {
            [
                (self.last(), bad_concurrent),
                (position, round_runs),
                (0, good_concurrent),
            ]
        };
        let (position, done) = turns
            .into_iter()
            .find(|(_, done)| *done < target)
            .unwrap_or(turns[2]);
        Action::Measure {
            commit: self.order[position].clone(),
            runs: target.saturating_sub(done).max(1),
        }
    }

    pub fn phase(&self) -> Phase {
        match self.next_action() {
            Action::Abort { .. } => Phase::Aborted,
            Action::Done(_) => Phase::Done,
            Action::Measure { .. } if self.comparison.is_none() => Phase::Endpoints,
            Action::Measure { .. } => Phase::Search,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Good endpoint, candidates, bad endpoint.
    pub fn order(&self) -> &[CommitId] {
        &self.order
    }

    pub fn good(&self) -> &CommitId {
        &self.order[0]
    }

    pub fn bad(&self) -> &CommitId {
        &self.order[self.last()]
    }

    /// The phase-1 result, once the endpoints are known to differ.
    pub fn endpoint_comparison(&self) -> Option<&EndpointComparison> {
        self.comparison.as_ref()
    }

    /// Classifications in the order they were made.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn samples(&self, commit: &CommitId) -> Option<&[f64]> {
        let position = self.order.iter().position(|id| id == commit)?;
        Some(&self.commits[position].samples)
    }

    pub fn total_runs(&self) -> usize {
        self.commits.iter().map(|state| state.samples.len()).sum()
    }

    /// Every commit that was measured, skipped or is an endpoint, in order.
    pub fn evidence(&self) -> Vec<CommitEvidence> {
        self.order
            .iter()
            .zip(&self.commits)
            .enumerate()
            .filter(|(position, (_, state))| {
                *position == 0
                    || *position == self.last()
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
        let (_, high) = self.bounds();
        (high + 1..self.order.len())
            .filter(|&position| self.settled_class(position) == Some(Class::Good))
            .map(|position| Conflict {
                bad: self.order[high].clone(),
                good: self.order[position].clone(),
            })
            .collect()
    }

    /// The final verdict of each classified commit, ordered by when it was
    /// last classified, as `git bisect` would have been told.
    pub fn log_entries(&self) -> Vec<(CommitId, Class)> {
        let mut seen = vec![false; self.order.len()];
        let mut entries = Vec::new();
        for step in self.steps.iter().rev().filter(|step| !step.provisional) {
            if !std::mem::replace(&mut seen[step.position], true) {
                entries.push((step.commit.clone(), step.decision.class));
            }
        }
        entries.reverse();
        entries
    }

    fn last(&self) -> usize {
        self.order.len() - 1
    }

    fn position(&self, commit: &CommitId) -> Result<usize> {
        self.order
            .iter()
            .position(|id| id == commit)
            .ok_or_else(|| BisectError::UnknownCommit(commit.to_string()))
    }

    fn endpoint_runs(&self) -> (usize, usize) {
        (
            self.commits[0].samples.len(),
            self.commits[self.last()].samples.len(),
        )
    }

    /// The endpoint samples recorded at or after clock `window_start`.
    /// O(log n) to find, by binary search on the sorted clock values.
    fn concurrent(&self, position: usize, window_start: usize) -> &[f64] {
        let state = &self.commits[position];
        let first = state.times.partition_point(|&time| time < window_start);
        &state.samples[first..]
    }

    fn concurrent_runs(&self, window_start: usize) -> (usize, usize) {
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
    fn measure_in_turns(&self, targets: &[(usize, usize, usize)]) -> Action {
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

    /// (last like-good before the first like-bad, first like-bad).
    fn bounds(&self) -> (usize, usize) {
        let high = (0..self.order.len())
            .find(|&position| self.settled_class(position) == Some(Class::Bad))
            .unwrap_or(self.last());
        let low = (0..high)
            .rev()
            .find(|&position| self.settled_class(position) == Some(Class::Good))
            .unwrap_or(0);
        (low, high)
    }

    /// The class that counts for the answer: a commit's class, or in the
    /// `search-confirm` design its latest confirmation's (search calls are
    /// provisional).
    fn settled_class(&self, position: usize) -> Option<Class> {
        let state = &self.commits[position];
        if self.search_confirm() && position != 0 && position != self.last() {
            state.confirmed
        } else {
            state.class
        }
    }

    /// `search-confirm` design: the test to run next, if any: the test in
    /// progress; else, while no gap between usable commits holds
    /// `CONFIRM_MASS` of the posterior over the culprit, a search test at
    /// the posterior's median (probabilistic bisection, `search.rs`); else
    /// a confirmation of that gap's ends (its lower end like-good, its
    /// upper end like-bad). `None` when both are confirmed (or the test
    /// limits are reached): the search is over. O(n + c).
    fn search_target(&self) -> Option<(usize, TestKind)> {
        if let Some(position) = (1..self.last()).find(|&position| {
            let state = &self.commits[position];
            state.test.is_some() && state.class.is_none()
        }) {
            return Some((position, self.commits[position].test?));
        }
        let last = self.last();
        let probabilities = self.culprit_posterior();
        let mut cumulative = Vec::with_capacity(probabilities.len());
        let mut running = 0.0;
        for probability in &probabilities {
            running += probability;
            cumulative.push(running);
        }
        // Commits that can still end a gap: not skipped, not left
        // undecided by a confirmation or by every search round.
        let usable = |position: usize| {
            let state = &self.commits[position];
            state.class != Some(Class::Skipped)
                && state.confirmed != Some(Class::Undecided)
                && state.search_undecided <= self.config.retests
        };
        let fences: Vec<usize> = std::iter::once(0)
            .chain((1..last).filter(|&position| usable(position)))
            .chain(std::iter::once(last))
            .collect();
        let (mut best, mut best_mass) = ((0, last), f64::NEG_INFINITY);
        for pair in fences.windows(2) {
            let mass = cumulative[pair[1]] - cumulative[pair[0]];
            if mass > best_mass {
                (best, best_mass) = ((pair[0], pair[1]), mass);
            }
        }
        let search_limit = 4 * (usize::BITS - last.leading_zeros()) as usize + 8;
        if best_mass < CONFIRM_MASS && self.search_tests < search_limit {
            let median = fences[1..fences.len() - 1]
                .iter()
                .copied()
                .filter(|&position| self.commits[position].confirmed.is_none())
                .min_by(|&first, &second| {
                    (cumulative[first] - 0.5)
                        .abs()
                        .total_cmp(&(cumulative[second] - 0.5).abs())
                        .then(first.cmp(&second))
                });
            if let Some(position) = median {
                // A commit visited before is at the median again: the
                // provisional evidence is split there, so its test goes on
                // to the strict boundary.
                let kind = if self.commits[position].samples.is_empty() {
                    TestKind::Search
                } else {
                    TestKind::Confirm
                };
                return Some((position, kind));
            }
        }
        let (low, high) = best;
        let (low_class, high_class) = (self.commits[low].confirmed, self.commits[high].confirmed);
        if low_class == Some(Class::Bad) || high_class == Some(Class::Good) {
            // Strict calls contradict the provisional ones here: the search
            // ends with the strict calls' bounds and their conflicts.
            return None;
        }
        if low != 0 && low_class != Some(Class::Good) {
            return Some((low, TestKind::Confirm));
        }
        if high != last && high_class != Some(Class::Bad) {
            return Some((high, TestKind::Confirm));
        }
        None
    }

    /// `search-confirm` design: a visit of kind `kind` to `candidate`
    /// begins; its blocks continue the commit's one test.
    fn start_test(&mut self, candidate: usize, kind: TestKind) {
        if kind == TestKind::Search {
            self.search_tests += 1;
        }
        let state = &mut self.commits[candidate];
        state.holding = false;
        state.class = None;
        state.visit_start = state.blocks;
        state.test = Some(kind);
    }

    /// The commit to measure next, if any.
    fn target(&self) -> Option<usize> {
        if self.search_confirm() {
            return self.search_target().map(|(position, _)| position);
        }
        let (low, high) = self.bounds();
        let middle = (low + high) / 2;
        let nearest = |predicate: &dyn Fn(&CommitState) -> bool,
                       range: std::ops::Range<usize>,
                       middle: usize| {
            range
                .filter(|&position| predicate(&self.commits[position]))
                .min_by_key(|&position| (position.abs_diff(middle), position))
        };
        let inside = low + 1..high;
        // A commit already being measured is finished first (its runs would
        // otherwise be wasted, and a resumed bisection continues it).
        nearest(
            &|state| state.class.is_none() && !state.samples.is_empty(),
            inside.clone(),
            middle,
        )
        .or_else(|| nearest(&|state| state.class.is_none(), inside.clone(), middle))
        .or_else(|| {
            nearest(
                &|state| state.class == Some(Class::Undecided) && state.round < self.config.retests,
                inside.clone(),
                middle,
            )
        })
        .or_else(|| self.probe_target(low, high))
    }

    /// Monotonicity probes: the middle of the widest unmeasured gap on each
    /// settled side, until `probes` commits were probed on that side.
    fn probe_target(&self, low: usize, high: usize) -> Option<usize> {
        if self.config.probes == 0 {
            return None;
        }
        let in_progress = (0..self.order.len()).find(|&position| {
            self.commits[position].probe && self.commits[position].class.is_none()
        });
        if in_progress.is_some() {
            return in_progress;
        }
        for side in [0..low + 1, high..self.order.len()] {
            let probed = side
                .clone()
                .filter(|&position| self.commits[position].probe)
                .count();
            if probed >= self.config.probes {
                continue;
            }
            let settled: Vec<usize> = side
                .clone()
                .filter(|&position| {
                    position == side.start
                        || position == side.end - 1
                        || self.commits[position].class.is_some()
                })
                .collect();
            let widest = settled
                .windows(2)
                .filter(|pair| pair[1] - pair[0] >= 2)
                .max_by_key(|pair| (pair[1] - pair[0], std::cmp::Reverse(pair[0])));
            if let Some(pair) = widest {
                return Some((pair[0] + pair[1]) / 2);
            }
        }
        None
    }

    fn evaluate_endpoints(&mut self) {
        let (good_runs, bad_runs) = self.endpoint_runs();
        let runs = good_runs.min(bad_runs);
        if let Some(fixed) = self.config.fixed_runs {
            if runs >= fixed {
                self.compare_endpoint_medians(good_runs, bad_runs);
            }
            return;
        }
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
        let confidence = match &self.endpoint_design {
            Some(design) => design.confidence[self.endpoint_looks_done - 1],
            None => 1.0 - self.config.endpoint_error / self.endpoint_looks.len() as f64,
        };
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
        if direction.is_none() && self.endpoint_design.is_some() {
            // Group-sequential: the sign test too, each at half the error
            // (`new`), so that blocks spoiled by load changes (large, of
            // random sign) cannot hide the shift from both.
            let sign = sign_shift(&differences, confidence);
            if let Some(found) = direction_of(sign) {
                direction = Some(found);
                shift = sign;
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
    fn settle(&mut self, direction: Direction, shift: Shift, good_runs: usize, bad_runs: usize) {
        self.comparison = Some(EndpointComparison {
            direction,
            shift,
            good_runs,
            bad_runs,
        });
        self.settled_at = self.clock;
        if self.endpoint_design.is_some() {
            let differences = block_differences(
                &self.commits[0].samples,
                &self.commits[self.last()].samples,
                self.config.max_batch,
            );
            self.block_test = Some(BlockTest::choose(&differences));
            let half = shift.estimate.ln_1p() / 2.0;
            let beyond = differences
                .iter()
                .filter(|&&difference| (difference - half) * half > 0.0)
                .count();
            if !differences.is_empty() {
                self.side_agreement =
                    Some((beyond as f64 / differences.len() as f64).clamp(0.55, 0.95));
            }
        }
    }

    /// Fixed-runs mode: the direction is the sign of the median change;
    /// equal medians abort.
    fn compare_endpoint_medians(&mut self, good_runs: usize, bad_runs: usize) {
        let good = median(&self.commits[0].samples);
        let bad = median(&self.commits[self.last()].samples);
        let shift = relative_shift(
            &self.commits[0].samples,
            &self.commits[self.last()].samples,
            0.95,
        );
        let direction = if bad > good {
            Some(Direction::Higher)
        } else if bad < good {
            Some(Direction::Lower)
        } else {
            None
        };
        match (direction, shift) {
            (Some(direction), Some(shift)) => self.settle(direction, shift, good_runs, bad_runs),
            _ => {
                self.abort = Some(AbortReason::EndpointsIndistinguishable {
                    shift,
                    good_runs,
                    bad_runs,
                });
            }
        }
    }

    /// Fixed-runs mode: after `fixed` runs, X goes with the endpoint whose
    /// median (all its runs) is nearer on the log scale. No error bound.
    fn classify_by_median(&mut self, position: usize, fixed: usize) {
        let samples = &self.commits[position].samples;
        if samples.len() < fixed {
            return;
        }
        let good = &self.commits[0].samples;
        let bad = &self.commits[self.last()].samples;
        let value = median(samples).ln();
        let (to_good, to_bad) = (
            (value - median(good).ln()).abs(),
            (value - median(bad).ln()).abs(),
        );
        let versus_good = relative_shift(good, samples, 0.95);
        let versus_bad = relative_shift(bad, samples, 0.95);
        let span = median(bad).ln() - median(good).ln();
        let decision = Decision {
            class: if to_bad < to_good {
                Class::Bad
            } else {
                Class::Good
            },
            runs: samples.len(),
            endpoint_runs: self.endpoint_runs(),
            confidence: 0.95,
            versus_good,
            versus_bad,
            fraction: Some((value - median(good).ln()) / span),
            partial: false,
            reason: None,
        };
        self.record(position, decision);
    }

    /// Classifies the commit in progress at `position` if its round has
    /// reached its next look and both endpoints have enough concurrent
    /// runs for that look.
    fn evaluate_candidate(&mut self, position: usize) {
        let Some(direction) = self
            .comparison
            .as_ref()
            .map(|comparison| comparison.direction)
        else {
            return;
        };
        if position == 0 || position == self.last() || self.commits[position].class.is_some() {
            return;
        }
        if let Some(fixed) = self.config.fixed_runs {
            self.classify_by_median(position, fixed);
            return;
        }
        let state = &self.commits[position];
        let (window_start, round_start) = (state.window_start, state.round_start);
        let block = self.config.max_batch;
        let samples = &state.samples[round_start..];
        let good = self.concurrent(0, window_start);
        let bad = self.concurrent(self.last(), window_start);
        let blocks = samples.len().min(good.len()).min(bad.len()) / block;
        let mut looks_done = state.looks_done;
        let mut advanced = false;
        while self
            .candidate_looks
            .get(looks_done)
            .is_some_and(|&look| look <= blocks)
        {
            looks_done += 1;
            advanced = true;
        }
        if !advanced {
            return;
        }
        let exhausted = looks_done == self.candidate_looks.len();
        // One-sided error per look: step_error split over every look of
        // every round the commit can get.
        let confidence = look_confidence(&self.config, self.candidate_looks.len());
        let used = blocks * block;
        let (samples, good, bad) = (&samples[..used], &good[..used], &bad[..used]);
        let versus_good = blocked_shift(&block_differences(good, samples, block), confidence);
        let versus_bad = blocked_shift(&block_differences(bad, samples, block), confidence);
        self.commits[position].looks_done = looks_done;
        let towards_bad = |shift: Option<Shift>| {
            shift
                .and_then(|shift| shift.interval)
                .is_some_and(|interval| match direction {
                    Direction::Higher => interval.low > 0.0,
                    Direction::Lower => interval.high < 0.0,
                })
        };
        let towards_good = |shift: Option<Shift>| {
            shift
                .and_then(|shift| shift.interval)
                .is_some_and(|interval| match direction {
                    Direction::Higher => interval.high < 0.0,
                    Direction::Lower => interval.low > 0.0,
                })
        };
        // Where X sits between G (0) and B (1) on the log scale, from the
        // Hodges–Lehmann estimates against the concurrent endpoint samples:
        // with a = ln(X/G) and b = ln(X/B), ln(B/G) ≈ a − b and the fraction
        // is a/(a − b). A test rejecting G is only taken as like-bad when X
        // is also nearer B (|b| < |a|), and vice versa. These extra
        // conditions can only make a call rarer, so the error bound is
        // unchanged.
        let (Some(shift_good), Some(shift_bad)) = (versus_good, versus_bad) else {
            return;
        };
        let (from_good, from_bad) = (shift_good.estimate.ln_1p(), shift_bad.estimate.ln_1p());
        let nearer_good = from_good.abs() < from_bad.abs();
        let nearer_bad = from_bad.abs() < from_good.abs();
        let fraction = if from_good == from_bad {
            0.5
        } else {
            from_good / (from_good - from_bad)
        };
        let (like_good, like_bad) = (towards_good(versus_bad), towards_bad(versus_good));
        let partial =
            like_good && like_bad && (INTERMEDIATE_LOW..=INTERMEDIATE_HIGH).contains(&fraction);
        let class = match (like_good, like_bad) {
            (true, _) if nearer_good => Class::Good,
            (_, true) if nearer_bad => Class::Bad,
            _ if exhausted => Class::Undecided,
            _ => return,
        };
        let decision = Decision {
            class,
            runs: used,
            endpoint_runs: (used, used),
            confidence,
            versus_good,
            versus_bad,
            fraction: Some(fraction),
            partial,
            reason: None,
        };
        self.record(position, decision);
    }

    /// Whether candidates are measured and judged by the group-sequential
    /// design (after the endpoints are told apart).
    fn grouped(&self) -> bool {
        match self.config.design {
            LookDesign::Bonferroni => false,
            LookDesign::GroupSequential => {
                self.config.fixed_runs.is_none()
                    && self.comparison.is_some()
                    && self.candidate_design.is_some()
            }
            LookDesign::SearchConfirm => {
                self.config.fixed_runs.is_none()
                    && self.comparison.is_some()
                    && self.search_design.is_some()
            }
        }
    }

    fn search_confirm(&self) -> bool {
        self.config.design == LookDesign::SearchConfirm && self.search_design.is_some()
    }

    /// The strict design of `candidate`'s test: the candidates' design; in
    /// the `search-confirm` design the same looks and levels, its rounds
    /// pooled into one test over every visit.
    fn design_of(&self) -> Option<CandidateDesign> {
        if !self.search_confirm() {
            return self.candidate_design.clone();
        }
        Some(candidate_design(
            self.config.step_error,
            self.config.first_look.div_ceil(self.config.max_batch),
            (self.config.max_runs_per_step / self.config.max_batch).max(2),
            self.config.retests + 1,
        ))
    }

    /// The block to measure next in the group-sequential design: its turns
    /// (positions, in order), the turn to measure and the runs already in
    /// it; `None` when the search is over. Continues the open block if it
    /// belongs to the commit to measure, else plans a new one. O(c + n).
    fn plan(&self) -> Option<(Vec<usize>, usize, usize)> {
        let candidate = self.target()?;
        let block = self.config.max_batch;
        if let Some(open) = &self.open_block
            && open.candidate == candidate
            && let Some(index) = open.values.iter().position(|values| values.len() < block)
        {
            return Some((open.turns.clone(), index, open.values[index].len()));
        }
        Some((self.turns(candidate), 0, 0))
    }

    /// The turns of a new block of `candidate`: G, X, B (then B, X, G, so
    /// that a linear trend cancels over two blocks) for the first blocks
    /// and whenever its position between the endpoints is unclear; once it
    /// clearly resembles one endpoint, only X and the other endpoint
    /// (E, X then X, E), the comparison that can classify it. The choice
    /// depends on earlier blocks only, so each block difference is still
    /// symmetric about 0 under the null given everything before it.
    fn turns(&self, candidate: usize) -> Vec<usize> {
        let state = &self.commits[candidate];
        let (good, bad) = (0, self.last());
        let even = state.blocks % 2 == 0;
        match self.against(candidate) {
            Against::Both if even => vec![good, candidate, bad],
            Against::Both => vec![bad, candidate, good],
            Against::Good if even => vec![good, candidate],
            Against::Good => vec![candidate, good],
            Against::Bad if even => vec![bad, candidate],
            Against::Bad => vec![candidate, bad],
        }
    }

    fn against(&self, candidate: usize) -> Against {
        let state = &self.commits[candidate];
        if state.versus_good.len() < BOTH_BLOCKS || state.versus_bad.len() < BOTH_BLOCKS {
            return Against::Both;
        }
        if state.holding {
            return if state.versus_good.len() < state.versus_bad.len() {
                Against::Good
            } else {
                Against::Bad
            };
        }
        // A block against one endpoint costs 2 runs and helps the test
        // that can decide X with the posterior probability p of that side;
        // against both it costs 3 and always helps: one endpoint is the
        // better buy when p/2 > 1/3, that is p > 2/3.
        let odds = self.side_log_odds(candidate);
        if odds < -SIDE_LOG_ODDS {
            // Looks like G: only rejecting "X is like B" can classify it.
            Against::Bad
        } else if odds > SIDE_LOG_ODDS {
            Against::Good
        } else {
            Against::Both
        }
    }

    /// Log posterior odds that X is like B rather than like G, for
    /// choosing the next block's endpoints only (never for a decision).
    /// Prior: the culprit uniform over the commits still possible, so
    /// P(X like B) = (X − low)/(high − low) (the posterior over the
    /// culprit's position that noisy binary search weighs, Ben-Or &
    /// Hassidim 2008, with every classification taken as settled).
    /// Likelihood from signs only, so that a block spoiled by a load
    /// change (large, of random sign) counts once: a block difference
    /// against G lies beyond Δ/2 (towards B's side) with probability p if X
    /// is like B and 1 − p if like G, and one against B beyond −Δ/2 the
    /// same way, with Δ the endpoints' log shift and p the share of the
    /// endpoints' own block differences beyond Δ/2; each block adds
    /// ±ln(p/(1 − p)). O(n + c).
    fn side_log_odds(&self, candidate: usize) -> f64 {
        let state = &self.commits[candidate];
        let Some(likelihood) = self.votes(&state.versus_good, &state.versus_bad) else {
            return 0.0;
        };
        let (low, high) = self.bounds();
        let prior = if self.search_confirm() {
            // The posterior probability that X is like B, P(culprit ≤ X),
            // kept within [0.1, 0.9] so that a few blocks can overturn it.
            let bad = self.probability_bad(candidate).clamp(0.1, 0.9);
            (bad / (1.0 - bad)).ln()
        } else if candidate > low && candidate < high {
            let bad = (candidate - low) as f64 / (high - low) as f64;
            (bad / (1.0 - bad)).ln()
        } else {
            0.0
        };
        prior + likelihood
    }

    /// Sign votes of block differences against G and against B: each adds
    /// ±ln(p/(1 − p)) towards B's side or G's (see `side_log_odds`).
    /// `None` before the endpoints are told apart. O(n).
    fn votes(&self, versus_good: &[f64], versus_bad: &[f64]) -> Option<f64> {
        let (Some(comparison), Some(agreement)) = (&self.comparison, self.side_agreement) else {
            return None;
        };
        let shift = comparison.shift.estimate.ln_1p();
        if !(shift.is_finite() && shift != 0.0) {
            return None;
        }
        let weight = (agreement / (1.0 - agreement)).ln();
        let vote = |centred: f64| {
            let towards_bad = centred * shift.signum();
            if towards_bad > 0.0 {
                weight
            } else if towards_bad < 0.0 {
                -weight
            } else {
                0.0
            }
        };
        Some(
            versus_good
                .iter()
                .map(|difference| vote(difference - shift / 2.0))
                .chain(
                    versus_bad
                        .iter()
                        .map(|difference| vote(difference + shift / 2.0)),
                )
                .sum(),
        )
    }

    /// `search-confirm` design: the posterior over the culprit's position
    /// from every call (provisional ones at `search_error`, strict ones at
    /// `step_error`). O(n + c).
    fn culprit_posterior(&self) -> Vec<f64> {
        posterior(self.last(), self.calls.iter().map(Call::evidence))
    }

    /// `search-confirm` design: the posterior probability that the commit
    /// at `position` is like B, P(culprit ≤ position). O(n + c).
    fn probability_bad(&self, position: usize) -> f64 {
        self.culprit_posterior()[..=position].iter().sum()
    }

    /// Where X sits from G (0) to B (1) on the log scale: the medians of
    /// its block differences against each endpoint, each turned into a
    /// position with the endpoints' log shift, weighted by block counts.
    /// 0.5 when nothing is known. O(n log n).
    fn position_estimate(&self, candidate: usize) -> f64 {
        let state = &self.commits[candidate];
        let Some(comparison) = &self.comparison else {
            return 0.5;
        };
        let shift = comparison.shift.estimate.ln_1p();
        if !(shift.is_finite() && shift != 0.0) {
            return 0.5;
        }
        let (from_good, from_bad) = (state.versus_good.len(), state.versus_bad.len());
        if from_good + from_bad == 0 {
            return 0.5;
        }
        let mut weighted = 0.0;
        if from_good > 0 {
            weighted += from_good as f64 * median(&state.versus_good) / shift;
        }
        if from_bad > 0 {
            weighted += from_bad as f64 * (1.0 + median(&state.versus_bad) / shift);
        }
        weighted / (from_good + from_bad) as f64
    }

    /// Adds `values` of `position` to the open block if it is that
    /// commit's turn (runs measured out of turn are kept as samples but
    /// enter no block), and closes the block when every turn is full.
    fn fill_block(&mut self, position: usize, values: &[f64]) {
        let Some((turns, index, filled)) = self.plan() else {
            return;
        };
        if turns[index] != position {
            return;
        }
        let candidate = self.target().expect("a plan has a target");
        if self.search_confirm() && self.commits[candidate].test.is_none() {
            let (_, kind) = self.search_target().expect("a plan has a target");
            self.start_test(candidate, kind);
        }
        let block = self.config.max_batch;
        let open = match &mut self.open_block {
            Some(open) if open.candidate == candidate && open.turns == turns => open,
            slot => slot.insert(OpenBlock {
                candidate,
                values: vec![Vec::new(); turns.len()],
                turns,
            }),
        };
        let take = values.len().min(block - filled);
        open.values[index].extend_from_slice(&values[..take]);
        if open.values.iter().all(|values| values.len() == block) {
            let open = self.open_block.take().expect("the block is open");
            self.close_block(open);
        }
    }

    /// Records the block differences of a full block and evaluates the
    /// candidate's tests at any look they reached.
    fn close_block(&mut self, open: OpenBlock) {
        let mean_log = |values: &[f64]| {
            values.iter().map(|value| value.ln()).sum::<f64>() / values.len() as f64
        };
        let candidate = open.candidate;
        let index = open
            .turns
            .iter()
            .position(|&turn| turn == candidate)
            .expect("a block measures its candidate");
        let own = mean_log(&open.values[index]);
        let last = self.last();
        let (mut good, mut bad) = (Vec::new(), Vec::new());
        for (&turn, values) in open.turns.iter().zip(&open.values) {
            if turn == 0 {
                good.push(own - mean_log(values));
            } else if turn == last {
                bad.push(own - mean_log(values));
            }
        }
        let state = &mut self.commits[candidate];
        state.versus_good.extend(good);
        state.versus_bad.extend(bad);
        state.blocks += 1;
        self.evaluate_grouped(candidate);
        let state = &self.commits[candidate];
        if state.class.is_none() && state.test == Some(TestKind::Search) {
            self.evaluate_search(candidate);
        }
    }

    /// `search-confirm` design: a search visit ends with a provisional
    /// call when the search design's boundary (one-sided `search_error`
    /// per comparison over its looks, on the commit's blocks) is crossed
    /// with X's estimate on that side, or undecided after
    /// `search_max_runs` runs of the visit. The strict test
    /// (`evaluate_grouped`) runs on the same blocks first; a provisional
    /// call never enters it.
    fn evaluate_search(&mut self, candidate: usize) {
        let Some(design) = self.search_design.clone() else {
            return;
        };
        let state = &self.commits[candidate];
        let exhausted = state.blocks - state.visit_start >= design.round_blocks;
        let Some(looked) = self.look(
            &design,
            candidate,
            state.search_good_looks_done,
            state.search_bad_looks_done,
        ) else {
            return;
        };
        if !looked.advanced && !exhausted {
            return;
        }
        let fraction = self.position_estimate(candidate);
        let state = &mut self.commits[candidate];
        state.search_good_looks_done = looked.good_done;
        state.search_bad_looks_done = looked.bad_done;
        if let Some(decision) = self.call(candidate, looked, fraction, false, exhausted) {
            self.provisional = true;
            self.record(candidate, decision);
        }
    }

    /// Group-sequential looks: each comparison (X against G, X against B)
    /// is a one-sided signed-rank test evaluated when its block count
    /// reaches a look of the design, at that look's nominal level. X is
    /// like-bad when the test against G rejects towards B, like-good when
    /// the test against B rejects towards G, in either case only when X's
    /// estimated position is also on that side (which can only make calls
    /// rarer). Undecided when its round reaches the round's blocks.
    fn evaluate_grouped(&mut self, candidate: usize) {
        let Some(design) = self.design_of() else {
            return;
        };
        let state = &self.commits[candidate];
        if state.class.is_some() {
            return;
        }
        let Some(looked) = self.look(
            &design,
            candidate,
            state.good_looks_done,
            state.bad_looks_done,
        ) else {
            return;
        };
        let Looked {
            good_done,
            bad_done,
            advanced,
            like_good,
            like_bad,
            ..
        } = looked;
        let round_blocks = state.blocks - state.round_block_start;
        let exhausted = if self.search_confirm() {
            // One test, its rounds pooled: undecided at its last look.
            design
                .looks
                .last()
                .is_some_and(|&last| state.blocks >= last)
        } else {
            round_blocks >= design.round_blocks
        };
        let fraction = self.position_estimate(candidate);
        let state = &mut self.commits[candidate];
        state.good_looks_done = good_done;
        state.bad_looks_done = bad_done;
        if !advanced && !exhausted {
            return;
        }
        let intermediate = (INTERMEDIATE_LOW..=INTERMEDIATE_HIGH).contains(&fraction);
        let partial = like_good && like_bad && intermediate;
        // A call halfway between the endpoints waits until the other
        // comparison has as many blocks: both rejecting is a partial change.
        let other_behind = (like_bad && state.versus_bad.len() < state.versus_good.len())
            || (like_good && state.versus_good.len() < state.versus_bad.len());
        state.holding = intermediate && !partial && other_behind && !exhausted;
        if state.holding {
            return;
        }
        if let Some(decision) = self.call(candidate, looked, fraction, partial, exhausted) {
            self.record(candidate, decision);
        }
    }

    /// Both comparisons of `candidate` at the latest looks of `design`
    /// their block counts reached (`good_before`, `bad_before`: the looks
    /// already evaluated): each one's interval on that look's blocks (a
    /// later block changes nothing until the next look) and whether it
    /// rejects towards the other endpoint. `None` before the endpoints are
    /// told apart. O(n² log n) per comparison.
    fn look(
        &self,
        design: &CandidateDesign,
        candidate: usize,
        good_before: usize,
        bad_before: usize,
    ) -> Option<Looked> {
        let direction = self.comparison.as_ref()?.direction;
        let test = self.block_test.unwrap_or(BlockTest::SignedRank);
        let state = &self.commits[candidate];
        let advance = |count: usize, mut done: usize| {
            while design.looks.get(done).is_some_and(|&look| look <= count) {
                done += 1;
            }
            done
        };
        let good_done = advance(state.versus_good.len(), good_before);
        let bad_done = advance(state.versus_bad.len(), bad_before);
        let at_look = |differences: &[f64], done: usize| -> (Option<Shift>, f64) {
            if done == 0 {
                return (test.shift(differences, 0.95), 0.0);
            }
            let look = design.looks[done - 1];
            let confidence = design.confidence[done - 1];
            (test.shift(&differences[..look], confidence), confidence)
        };
        let (versus_good, good_confidence) = at_look(&state.versus_good, good_done);
        let (versus_bad, bad_confidence) = at_look(&state.versus_bad, bad_done);
        let rejects = |shift: Option<Shift>, towards_bad: bool| {
            shift
                .and_then(|shift| shift.interval)
                .is_some_and(|interval| match (direction, towards_bad) {
                    (Direction::Higher, true) | (Direction::Lower, false) => interval.low > 0.0,
                    (Direction::Higher, false) | (Direction::Lower, true) => interval.high < 0.0,
                })
        };
        Some(Looked {
            good_done,
            bad_done,
            advanced: good_done > good_before || bad_done > bad_before,
            like_bad: good_done > 0 && rejects(versus_good, true),
            like_good: bad_done > 0 && rejects(versus_bad, false),
            versus_good,
            good_confidence,
            versus_bad,
            bad_confidence,
        })
    }

    /// The decision a look makes, if any: like-good or like-bad when that
    /// comparison rejects and X's estimated position is on that side,
    /// undecided when `exhausted`.
    fn call(
        &self,
        candidate: usize,
        looked: Looked,
        fraction: f64,
        partial: bool,
        exhausted: bool,
    ) -> Option<Decision> {
        let (class, confidence) = match (looked.like_good, looked.like_bad) {
            (true, _) if fraction < 0.5 => (Class::Good, looked.bad_confidence),
            (_, true) if fraction > 0.5 => (Class::Bad, looked.good_confidence),
            _ if exhausted => (
                Class::Undecided,
                looked.good_confidence.max(looked.bad_confidence),
            ),
            _ => return None,
        };
        let state = &self.commits[candidate];
        let block = self.config.max_batch;
        Some(Decision {
            class,
            runs: state.samples.len(),
            endpoint_runs: (
                state.versus_good.len() * block,
                state.versus_bad.len() * block,
            ),
            confidence,
            versus_good: looked.versus_good,
            versus_bad: looked.versus_bad,
            fraction: Some(fraction),
            partial,
            reason: None,
        })
    }

    fn record(&mut self, position: usize, decision: Decision) {
        let total_runs = self.total_runs();
        self.settled_at = self.clock;
        let search_confirm = self.search_confirm();
        let state = &mut self.commits[position];
        state.class = Some(decision.class);
        state.decision = Some(decision.clone());
        state.test = None;
        let provisional = search_confirm && self.provisional;
        if search_confirm && decision.class != Class::Skipped {
            let error = if provisional {
                if decision.class == Class::Undecided {
                    state.search_undecided += 1;
                }
                // Weighted as wrong with probability half the search
                // test's error: in the simulation (tests/simulation.rs)
                // fewer runs than the full error (more probes) and than a
                // quarter (slower to recover from a wrong call).
                self.config.search_error / 2.0
            } else {
                state.confirmed = Some(decision.class);
                self.config.step_error
            };
            if matches!(decision.class, Class::Good | Class::Bad) {
                self.calls.push(Call {
                    position,
                    bad: decision.class == Class::Bad,
                    error,
                });
            }
        }
        self.provisional = false;
        self.steps.push(Step {
            commit: self.order[position].clone(),
            position,
            decision,
            total_runs,
            probe: state.probe,
            provisional,
        });
    }

    fn outcome(&self) -> Outcome {
        let (low, high) = self.bounds();
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
            conflicts: self.conflicts(),
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

/// Two-sided confidence of each candidate look's interval: each side's
/// error is `step_error` split over every look of every round (Bonferroni).
fn look_confidence(config: &Config, looks_per_round: usize) -> f64 {
    1.0 - 2.0 * config.step_error / (looks_per_round * (config.retests + 1)) as f64
}

/// Looks counted in complete blocks of `block` runs, from `first_runs` to
/// `last_runs`, with the first look raised to the fewest blocks at which a
/// signed-rank interval at the per-look level exists; `error` is the
/// two-sided error split over all `rounds × looks` looks.
fn looks_in_blocks(
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
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}
