//! End to end on a real git repository: 30 commits of a shell workload
//! whose loop count grows 8x at one commit (the effect is large on purpose:
//! on this shared 2-core VM the CPU time of the same run varies up to ~2x
//! with load, and this test proves the path, not the statistics, which
//! `simulation.rs` covers), a build hook that fails (exit
//! 125) at another, measured for real (CPU time of `sh work.sh` from
//! verdict-exec's wait4 rusage), with a simulated SIGKILL and resume by
//! replaying the recorded events, and the final log checked by `git bisect
//! replay`. This is the path `verdict bisect` takes; it runs in seconds.
//! Must not: touch any repository outside its temporary directory.

mod repo;

use std::path::Path;
use std::sync::Arc;

use repo::{commit_file, git, init};
use verdict_bisect::{Action, Bisection, Class, CommitId, Config, Culprit, Event, Git, Vcs};
use verdict_exec::{Cancel, Invocation, Status, SystemExecutor, Target};

const COMMITS: usize = 30;
const CULPRIT: usize = 19;
/// The first midpoint ((0 + 29) / 2): the search must step around it.
const BROKEN_BUILD: usize = 14;

fn workload(iterations: u32) -> String {
    format!("i=0\nwhile [ $i -lt {iterations} ]; do i=$((i+1)); done\n")
}

/// Builds the history: commit k sets the loop count (8x from CULPRIT on) and a build script that fails with 125 at BROKEN_BUILD.
fn build_repository(path: &Path) -> Vec<String> {
    init(path);
    (0..COMMITS)
        .map(|index| {
            let iterations = if index >= CULPRIT { 8000 } else { 1000 };
            std::fs::write(path.join("work.sh"), workload(iterations)).unwrap();
            let build = if index == BROKEN_BUILD {
                "exit 125\n"
            } else {
                "exit 0\n"
            };
            std::fs::write(path.join("build.sh"), build).unwrap();
            git(path, &["add", "work.sh", "build.sh"]);
            commit_file(
                path,
                "counter",
                &format!("{index}\n"),
                &format!("work: step {index}"),
            )
        })
        .collect()
}

/// The measuring edge `verdict bisect` will have: check out, build, run.
struct Runner<'a> {
    vcs: &'a Git,
    executor: SystemExecutor,
    cancel: Cancel,
    checked_out: Option<CommitId>,
}

impl Runner<'_> {
    fn measure(&mut self, commit: &CommitId, runs: usize) -> Event {
        if self.checked_out.as_ref() != Some(commit) {
            self.vcs.checkout(commit).unwrap();
            self.checked_out = Some(commit.clone());
            let build = Invocation::argv(["sh", "build.sh"]).with_cwd(self.vcs.repo());
            let outcome = self.executor.run(&build, &self.cancel).unwrap();
            if outcome.status != Status::Exited(0) {
                return Event::Skip {
                    commit: commit.clone(),
                    reason: format!("build: {}", outcome.status),
                };
            }
        }
        let run = Invocation::argv(["sh", "work.sh"]).with_cwd(self.vcs.repo());
        let values = (0..runs)
            .map(|_| {
                let outcome = self.executor.run(&run, &self.cancel).unwrap();
                assert_eq!(outcome.status, Status::Exited(0));
                // CPU time: robust to the other jobs sharing this machine.
                (outcome.user + outcome.sys).as_secs_f64().max(1e-6)
            })
            .collect();
        Event::Samples {
            commit: commit.clone(),
            values,
        }
    }
}

#[test]
fn bisects_a_real_repository_with_a_kill_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let hashes = build_repository(path);
    let vcs = Git::with_executor(path, Arc::new(SystemExecutor), Cancel::new());
    let head = vcs.head().unwrap();
    let good = vcs.resolve(&hashes[0]).unwrap();
    let bad = vcs.resolve("HEAD").unwrap();
    let candidates: Vec<CommitId> = vcs
        .candidates(&good, &bad, true)
        .unwrap()
        .into_iter()
        .map(|commit| commit.id)
        .collect();
    let config = Config::default();
    let mut runner = Runner {
        vcs: &vcs,
        executor: SystemExecutor,
        cancel: Cancel::new(),
        checked_out: None,
    };

    // The store: every event, in order. One run per event after the
    // endpoints, as the engine commits each sample before the next run.
    let mut stored: Vec<Event> = Vec::new();
    let mut bisection = Bisection::new(config.clone(), good.clone(), candidates.clone()).unwrap();
    let mut killed = false;
    let outcome = loop {
        match bisection.next_action() {
            Action::Measure { commit, runs } => {
                let runs = if bisection.endpoint_comparison().is_some() {
                    1
                } else {
                    runs
                };
                let event = runner.measure(&commit, runs);
                bisection.apply(&event).unwrap();
                stored.push(event);
            }
            Action::Done(outcome) => break outcome,
            Action::Abort { reason } => panic!("aborted: {reason:?}"),
        }
        if !killed && bisection.steps().len() == 3 {
            // SIGKILL: the in-memory state is gone; resume from the store.
            killed = true;
            let before = bisection.clone();
            bisection =
                Bisection::replay(config.clone(), good.clone(), candidates.clone(), &stored)
                    .unwrap();
            assert_eq!(bisection, before);
            runner.checked_out = None;
        }
    };
    assert!(killed);
    assert_eq!(
        outcome.culprit,
        Culprit::Single(CommitId::new(&hashes[CULPRIT])),
        "{outcome:?}"
    );
    let comparison = bisection.endpoint_comparison().unwrap();
    assert!(comparison.shift.estimate > 1.0, "{comparison:?}");
    // The culprit's effect against its parent, from the stored samples.
    let effect = bisection
        .compare(&outcome.last_good, &CommitId::new(&hashes[CULPRIT]), 0.95)
        .unwrap();
    assert!(
        effect.estimate > 0.3 && effect.interval.unwrap().low > 0.0,
        "{effect:?}"
    );
    let total: usize = stored
        .iter()
        .map(|event| match event {
            Event::Samples { values, .. } => values.len(),
            Event::Skip { .. } => 0,
        })
        .sum();
    assert_eq!(total, outcome.total_runs);
    eprintln!(
        "culprit {} after {} steps, {} runs; endpoints {:+.1}%",
        &hashes[CULPRIT][..12],
        outcome.steps,
        outcome.total_runs,
        comparison.shift.estimate * 100.0
    );

    // The broken build is the first midpoint: skipped, with its reason,
    // and the search stepped next to it.
    let first = &bisection.steps()[0];
    assert_eq!(first.commit.as_str(), hashes[BROKEN_BUILD]);
    assert_eq!(first.decision.class, Class::Skipped);
    assert_eq!(
        first.decision.reason.as_deref(),
        Some("build: exit status 125")
    );
    assert_eq!(outcome.skipped, vec![CommitId::new(&hashes[BROKEN_BUILD])]);

    vcs.restore(&head).unwrap();
    assert_eq!(vcs.head().unwrap(), head);
    let log = bisection.bisect_log(true, |id| vcs.subject(id).unwrap());
    let log_path = path.join(".git").join("verdict-bisect.log");
    std::fs::write(&log_path, &log).unwrap();
    let replay = git(path, &["bisect", "replay", log_path.to_str().unwrap()]);
    assert!(
        replay.contains(&format!("{} is the first bad commit", hashes[CULPRIT])),
        "{replay}"
    );
    git(path, &["bisect", "reset"]);
}
