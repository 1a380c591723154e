//! Bisecting kernels with real QEMU (TCG, the host's Debian kernel):
//! `verdict bisect` of a git repository whose build yields a boot level
//! per commit (the kernel copied into the tree, `--boot-kernel`, and a
//! commit-dependent command line the build writes into `--boot-spec`)
//! boots every measurement in a VM of that commit's kernel and command
//! line, proven as `verdict run`'s boots are. The workload reads
//! /proc/cmdline in the guest, so its metric is the commit's option.
//!
//! Checked: the right culprit is named; every stored sample belongs to a
//! proven boot whose requested and observed command line carry its own
//! commit's option (a sample measured in another commit's boot fails the
//! test); a commit whose kernel panics is skipped, its failed boot
//! recorded with the console tail, never data; the boots are counted per
//! step, in total and per commit (`bisect log`).
//!
//! Seven commits, `--fixed-runs 1`: 5 boots (the endpoints, the broken
//! commit's one failed boot, two candidates).

use verdict_store::{BisectId, BootRow, SqliteStore, Store};

mod common;

use common::vm::debian_kernel;

/// The culprit: from this commit on the cost is 200 instead of 100.
const CULPRIT: usize = 2;
/// This commit's kernel does not boot (no init: the kernel panics).
const BROKEN: usize = 3;
const COMMITS: usize = 7;

/// `options` of commit `index`: its cost, its own marker, and for the
/// broken commit options that make the kernel panic.
fn options(index: usize) -> String {
    let cost = if index >= CULPRIT { 200 } else { 100 };
    let mut options = format!("verdict_bisect.cost={cost} verdict_bisect.commit={index}");
    if index == BROKEN {
        options.push_str(" rdinit=/nonexistent root=/dev/verdict-none");
    }
    options
}

/// `verdict bisect` of `repo` from `good` to `bad` measuring `experiment`,
/// in `directory`.
fn bisect(
    directory: &std::path::Path,
    repo: &std::path::Path,
    good: &str,
    bad: &str,
    experiment: &str,
) -> assert_cmd::Command {
    let mut command = common::verdict(directory);
    command.arg("bisect").arg("--repo").arg(repo);
    command.args(["--good", good, "--bad", bad, "--experiment", experiment]);
    command
}

#[test]
fn a_kernel_bisection_boots_each_commits_kernel_and_skips_one_that_does_not_boot() {
    let Some(kernel) = debian_kernel() else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| verdict_testkit::git(&repo, args);
    git(&["init", "-q"]);
    let mut hashes = Vec::new();
    for index in 0..COMMITS {
        std::fs::write(repo.join("options"), format!("{}\n", options(index))).unwrap();
        git(&["add", "options"]);
        git(&["commit", "-q", "-m", &format!("commit {index}")]);
        hashes.push(git(&["rev-parse", "HEAD"]));
    }
    // The build: "builds" the kernel (a copy of Debian's) into the tree and
    // writes the commit's command line into verdict-boot.toml.
    let build = format!(
        "cp {} bzImage && printf '[boot]\\ncmdline = \"%s\"\\n' \"$(cat options)\" > verdict-boot.toml",
        kernel.display()
    );
    std::fs::write(
        directory.path().join("exp.toml"),
        format!(
            "name = \"cmdline-cost\"\ncommand = [\"cat\", \"/proc/cmdline\"]\n\
             [[metrics]]\nname = \"cost\"\nsource = \"regex\"\npattern = 'verdict_bisect\\.cost=(\\d+)'\ndirection = \"lower\"\n\
             [sampling]\nboot_retries = 0\n\
             [target]\nvm = {{ kernel = \"{}\", cmdline = \"no_timer_check\", cpus = 2, memory = \"1G\", accel = \"tcg\", boot_timeout = \"400s\" }}\n",
            kernel.display()
        ),
    )
    .unwrap();
    let output = bisect(
        directory.path(),
        &repo,
        &hashes[0],
        &hashes[COMMITS - 1],
        "exp.toml",
    )
    .args([
        "--worktrees",
        "--build",
        &build,
        "--boot-kernel",
        "bzImage",
        "--boot-cmdline",
        "verdict_bisect.flag=on",
        "--boot-spec",
        "verdict-boot.toml",
        "--fixed-runs",
        "1",
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}\n{stderr}");

    // (a) The culprit.
    assert!(
        stdout.contains(&format!(
            "first bad commit: {} commit {CULPRIT}",
            hashes[CULPRIT]
        )),
        "{stdout}\n{stderr}"
    );

    // (b) Every sample in a proven boot of its own commit's kernel and
    // command line.
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let runs = store.bisect_runs(BisectId(1)).unwrap();
    let release = verdict_exec::kernel_release(&kernel).unwrap();
    let mut measured = Vec::new();
    let mut samples_seen = 0;
    for run in &runs {
        let short = run.name.rsplit(' ').next().unwrap();
        let index = hashes
            .iter()
            .position(|hash| hash.starts_with(short))
            .unwrap_or_else(|| panic!("run {} of no commit", run.name));
        measured.push(index);
        let marker = format!("verdict_bisect.commit={index}");
        let boots = store.boots(run.id).unwrap();
        for sample in store.samples(run.id).unwrap() {
            samples_seen += 1;
            assert!(sample.is_data(), "{sample:?}");
            let boot = BootRow::of_sample(&boots, sample.sequence)
                .unwrap_or_else(|| panic!("sample {sample:?} of run {} in no boot", run.id));
            let boot = &boots[boot as usize];
            assert_eq!(boot.status, verdict_model::BootStatus::Complete, "{boot:?}");
            // Requested: the VM's, the flag's, then the spec file's options.
            let requested: Vec<&str> = boot.command_line.split_whitespace().collect();
            assert_eq!(requested[0], "no_timer_check", "{boot:?}");
            assert_eq!(requested[1], "verdict_bisect.flag=on", "{boot:?}");
            assert!(requested.contains(&marker.as_str()), "{marker}: {boot:?}");
            assert_eq!(boot.nonce.as_deref().map(str::len), Some(32), "{boot:?}");
            assert_eq!(boot.kernel_release.as_deref(), Some(release.as_str()));
            assert!(boot.kernel.contains("bzImage"), "{boot:?}");
            // Observed: the guest's /proc/cmdline as read after the proof.
            let environment = boot
                .environment
                .as_ref()
                .unwrap_or_else(|| panic!("boot {} without its environment", boot.id));
            let observed = environment.kernel_cmdline.as_deref().unwrap_or_default();
            assert!(
                observed.split_whitespace().any(|word| word == marker)
                    && observed
                        .contains(&format!("verdict.boot={}", boot.nonce.as_deref().unwrap())),
                "{marker} / nonce not in the guest's /proc/cmdline `{observed}`"
            );
            // And the metric the guest read is this commit's cost.
            let cost = if index >= CULPRIT { 200.0 } else { 100.0 };
            assert_eq!(sample.metrics.get("cost"), Some(&cost), "{sample:?}");
        }
    }
    assert!(samples_seen >= 4, "{samples_seen} samples");
    for index in [0, COMMITS - 1, BROKEN, CULPRIT] {
        assert!(
            measured.contains(&index),
            "commit {index} not measured: {measured:?}"
        );
    }

    // (c) The broken commit: skipped, its failed boot recorded with the
    // console's tail, no samples.
    let broken_run = runs
        .iter()
        .find(|run| hashes[BROKEN].starts_with(run.name.rsplit(' ').next().unwrap()))
        .unwrap();
    assert!(store.samples(broken_run.id).unwrap().is_empty());
    let broken_boots = store.boots(broken_run.id).unwrap();
    assert_eq!(broken_boots.len(), 1, "{broken_boots:?}");
    assert_eq!(broken_boots[0].status, verdict_model::BootStatus::Failed);
    assert!(
        broken_boots[0]
            .console_tail
            .as_deref()
            .unwrap_or_default()
            .contains("Kernel panic"),
        "{broken_boots:?}"
    );
    assert!(stderr.contains("kernel did not boot"), "{stderr}");

    // Boots: in the summary (per step and in total) and in the log.
    let total_boots: usize = runs
        .iter()
        .map(|run| store.boots(run.id).unwrap().len())
        .sum();
    assert!(
        stdout.contains(&format!("runs in total, {total_boots} boots (1 failed)")),
        "{stdout}"
    );
    let steps: Vec<&str> = stdout
        .lines()
        .filter(|line| line.contains("(step cost"))
        .collect();
    assert!(
        !steps.is_empty() && steps.iter().all(|line| line.contains(" boot")),
        "{stdout}"
    );
    let log = common::succeed(
        common::verdict(directory.path()).args(["bisect", "log", "--format", "json"]),
    );
    let log: serde_json::Value = serde_json::from_str(&log).unwrap();
    assert_eq!(log["total_boots"], total_boots);
    assert_eq!(log["failed_boots"], 1);
    let broken = log["commits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|commit| commit["commit"] == hashes[BROKEN])
        .unwrap();
    assert_eq!(broken["class"], "skipped", "{broken}");
    assert_eq!(broken["boots"], 1);
    assert_eq!(broken["failed_boots"], 1);
    let text = common::succeed(common::verdict(directory.path()).args(["bisect", "log"]));
    assert!(text.contains("boots"), "{text}");
    assert!(text.contains("1 (1 failed)"), "{text}");
}

/// Mistakes are refused before anything is built or booted (no QEMU
/// needed): a VM without the commit's kernel, boot flags without a VM, an
/// ssh host booted by kexec, a command line that cannot be checked.
#[test]
fn a_kernel_bisection_without_a_vm_or_a_kernel_is_refused_before_anything_runs() {
    let directory = tempfile::tempdir().unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| verdict_testkit::git(&repo, args);
    git(&["init", "-q"]);
    for index in 0..2 {
        std::fs::write(repo.join("options"), format!("{index}\n")).unwrap();
        git(&["add", "options"]);
        git(&["commit", "-q", "-m", &format!("commit {index}")]);
    }
    let files = [
        ("vm.toml", "vm = { kernel = \"/vmlinuz\" }"),
        ("plain.toml", ""),
        ("host.toml", "boot = { kernel = \"/boot/vmlinuz\" }"),
    ];
    for (name, target) in files {
        std::fs::write(
            directory.path().join(name),
            format!("name = \"k\"\ncommand = [\"true\"]\n[target]\n{target}\n"),
        )
        .unwrap();
    }
    let refused = |experiment: &str, extra: &[&str], expected: &str| {
        let output = bisect(directory.path(), &repo, "HEAD~1", "HEAD", experiment)
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    };
    refused("vm.toml", &[], "give --boot-kernel PATH");
    refused(
        "plain.toml",
        &["--boot-kernel", "bzImage"],
        "has no `[target] vm`",
    );
    refused(
        "host.toml",
        &["--boot-kernel", "bzImage"],
        "cannot be bisected yet",
    );
    refused(
        "vm.toml",
        &[
            "--boot-kernel",
            "bzImage",
            "--boot-cmdline",
            "verdict.boot=1",
        ],
        "boot.cmdline",
    );
    // Nothing was stored: no bisection was created.
    let log = common::verdict(directory.path())
        .args(["bisect", "log"])
        .output()
        .unwrap();
    assert!(!log.status.success());
}
