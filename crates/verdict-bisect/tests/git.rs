//! The git `Vcs` against real repositories generated in temporary
//! directories: ranges (linear and with merges, with and without
//! --first-parent), checkout and restore, errors, and the bisect log
//! replayed by `git bisect replay` itself.
//! Must not: touch any repository outside its temporary directory.

mod repo;

use repo::{commit_file, git, init};
use verdict_bisect::{BisectError, Bisection, CommitId, Config, Culprit, Event, Git, Vcs};

fn linear_repo(count: usize) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path());
    let hashes = (0..count)
        .map(|index| {
            commit_file(
                dir.path(),
                "value",
                &format!("{index}\n"),
                &format!("step {index}: set value"),
            )
        })
        .collect();
    (dir, hashes)
}

#[test]
fn candidates_of_a_linear_range_are_oldest_first_with_subjects() {
    let (dir, hashes) = linear_repo(10);
    let vcs = Git::new(dir.path());
    let good = vcs.resolve("HEAD~8").unwrap();
    let bad = vcs.resolve("HEAD").unwrap();
    assert_eq!(good.as_str(), hashes[1]);
    assert_eq!(bad.as_str().len(), 40);
    let candidates = vcs.candidates(&good, &bad, false).unwrap();
    let ids: Vec<&str> = candidates.iter().map(|commit| commit.id.as_str()).collect();
    assert_eq!(
        ids,
        hashes[2..].iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(candidates[0].subject, "step 2: set value");
    assert_eq!(vcs.subject(&bad).unwrap(), "step 9: set value");
}

#[test]
fn reversed_or_unknown_revisions_are_errors_naming_them() {
    let (dir, hashes) = linear_repo(3);
    let vcs = Git::new(dir.path());
    let error = vcs
        .candidates(
            &CommitId::new(&hashes[2]),
            &CommitId::new(&hashes[0]),
            false,
        )
        .unwrap_err();
    assert!(matches!(error, BisectError::NotAncestor { .. }), "{error}");
    let error = vcs.resolve("no-such-branch").unwrap_err();
    assert!(error.to_string().contains("no-such-branch"), "{error}");
}

#[test]
fn first_parent_follows_the_main_line_through_merges() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    init(path);
    let base = commit_file(path, "main.txt", "0\n", "main 0");
    let main_1 = commit_file(path, "main.txt", "1\n", "main 1");
    git(path, &["checkout", "--quiet", "-b", "topic", &base]);
    let topic_1 = commit_file(path, "topic.txt", "1\n", "topic 1");
    let topic_2 = commit_file(path, "topic.txt", "2\n", "topic 2");
    git(path, &["checkout", "--quiet", "main"]);
    git(
        path,
        &["merge", "--quiet", "--no-ff", "-m", "Merge topic", "topic"],
    );
    let merge = git(path, &["rev-parse", "HEAD"]).trim().to_owned();
    let main_2 = commit_file(path, "main.txt", "2\n", "main 2");

    let vcs = Git::new(path);
    let (good, bad) = (CommitId::new(&base), CommitId::new(&main_2));
    let all: Vec<String> = vcs
        .candidates(&good, &bad, false)
        .unwrap()
        .into_iter()
        .map(|commit| commit.id.0)
        .collect();
    assert_eq!(all.len(), 5);
    for hash in [&main_1, &topic_1, &topic_2, &merge, &main_2] {
        assert!(all.contains(hash));
    }
    assert_eq!(all.last(), Some(&main_2));
    let first_parent: Vec<String> = vcs
        .candidates(&good, &bad, true)
        .unwrap()
        .into_iter()
        .map(|commit| commit.id.0)
        .collect();
    assert_eq!(first_parent, vec![main_1, merge, main_2]);
}

#[test]
fn checkout_detaches_refuses_local_changes_and_restore_returns_to_the_branch() {
    let (dir, hashes) = linear_repo(4);
    let vcs = Git::new(dir.path());
    let head = vcs.head().unwrap();
    assert_eq!(head.branch.as_deref(), Some("main"));
    assert_eq!(head.commit.as_str(), hashes[3]);
    vcs.checkout(&CommitId::new(&hashes[1])).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("value")).unwrap(),
        "1\n"
    );
    assert_eq!(vcs.head().unwrap().branch, None);

    std::fs::write(dir.path().join("value"), "edited\n").unwrap();
    let error = vcs.checkout(&CommitId::new(&hashes[2])).unwrap_err();
    assert!(matches!(error, BisectError::DirtyTree { .. }), "{error}");
    assert!(error.to_string().contains("value"), "{error}");
    git(dir.path(), &["checkout", "--quiet", "--", "value"]);

    vcs.restore(&head).unwrap();
    assert_eq!(vcs.head().unwrap(), head);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("value")).unwrap(),
        "3\n"
    );
}

/// Bisects a real history with scripted values and checks that `git bisect
/// replay` of the generated log reaches the same first bad commit.
fn replay_in_git(first_parent: bool, skip_culprit: bool) {
    let (dir, hashes) = linear_repo(12);
    let path = dir.path();
    let vcs = Git::new(path);
    let good = vcs.resolve(&hashes[0]).unwrap();
    let bad = vcs.resolve("HEAD").unwrap();
    let candidates = vcs.candidates(&good, &bad, first_parent).unwrap();
    let ids: Vec<CommitId> = candidates.iter().map(|commit| commit.id.clone()).collect();
    let first_bad = 7; // hashes[7]
    let mut bisection = Bisection::new(Config::default(), good.clone(), ids).unwrap();
    let mut value = 0u32;
    loop {
        let event = match bisection.next_action() {
            verdict_bisect::Action::Measure { commit, runs } => {
                let index = hashes.iter().position(|hash| *hash == commit.0).unwrap();
                if skip_culprit && index == first_bad {
                    Event::Skip {
                        commit,
                        reason: "exit 125".to_owned(),
                    }
                } else {
                    let median = if index >= first_bad { 2.0 } else { 1.0 };
                    let values = (0..runs)
                        .map(|_| {
                            value += 1;
                            median * (1.0 + f64::from(value % 7) / 100.0)
                        })
                        .collect();
                    Event::Samples { commit, values }
                }
            }
            verdict_bisect::Action::Done(_) => break,
            verdict_bisect::Action::Abort { reason } => panic!("{reason:?}"),
        };
        bisection.apply(&event).unwrap();
    }
    let log = bisection.bisect_log(first_parent, |id| vcs.subject(id).unwrap());
    let log_path = path
        .join("..")
        .join(format!("bisect-{}.log", std::process::id()));
    let log_path = if skip_culprit {
        log_path.with_extension("skip.log")
    } else {
        log_path
    };
    std::fs::write(&log_path, &log).unwrap();
    let replayed = repo::git_output(path, &["bisect", "replay", log_path.to_str().unwrap()]);
    let replay = String::from_utf8(replayed.stdout).unwrap();
    // git exits 2 when only skipped commits are left ("We cannot bisect more!").
    assert_eq!(
        replayed.status.code(),
        Some(if skip_culprit { 2 } else { 0 }),
        "{replay}"
    );
    std::fs::remove_file(&log_path).unwrap();
    let Some(verdict_bisect::Action::Done(outcome)) = Some(bisection.next_action()) else {
        unreachable!()
    };
    if skip_culprit {
        assert_eq!(
            outcome.culprit,
            Culprit::Range(vec![CommitId::new(&hashes[7]), CommitId::new(&hashes[8])])
        );
        assert!(
            log.contains("# only skipped commits left to test\n"),
            "{log}"
        );
        assert!(
            log.contains(&format!("git bisect skip {}\n", hashes[7])),
            "{log}"
        );
        assert!(replay.contains("only 'skip'ped commits left"), "{replay}");
        assert!(
            replay.contains(&hashes[7]) && replay.contains(&hashes[8]),
            "{replay}"
        );
    } else {
        assert_eq!(
            outcome.culprit,
            Culprit::Single(CommitId::new(&hashes[first_bad]))
        );
        assert!(
            log.ends_with(&format!(
                "# first bad commit: [{}] step 7: set value\n",
                hashes[7]
            )),
            "{log}"
        );
        assert!(
            replay.contains(&format!("{} is the first bad commit", hashes[7])),
            "{replay}"
        );
        assert_eq!(
            git(path, &["rev-parse", "refs/bisect/bad"]).trim(),
            hashes[7]
        );
    }
    let start = format!(
        "git bisect start {}'{}' '{}'\n",
        if first_parent {
            "'--first-parent' "
        } else {
            ""
        },
        hashes[11],
        hashes[0]
    );
    assert!(log.contains(&start), "{log}");
    // git's own log of the replayed session is our text, byte for byte.
    assert_eq!(git(path, &["bisect", "log"]), log);
    git(path, &["bisect", "reset"]);
}

#[test]
fn git_bisect_replay_of_the_log_names_the_same_first_bad_commit() {
    replay_in_git(false, false);
    replay_in_git(true, false);
}

#[test]
fn git_bisect_replay_with_a_skipped_culprit_reports_the_same_range() {
    replay_in_git(false, true);
}
