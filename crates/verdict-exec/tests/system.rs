//! Real-process tests of `SystemExecutor`: exit codes, signals, timeouts that
//! must kill grandchildren, cancellation, output bounds, per-child rusage,
//! spawn errors, verbatim argv, environment and working directory.
//!
//! Every test starts real processes through the public API only; none may
//! leave a live process behind.

use std::fs;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use verdict_exec::{
    Cancel, ExecError, Invocation, Outcome, Status, SystemExecutor, TERMINATION_GRACE, Target,
};

fn run(invocation: &Invocation) -> Result<Outcome, ExecError> {
    SystemExecutor.run(invocation, &Cancel::new())
}

fn stdout_text(outcome: &Outcome) -> String {
    String::from_utf8(outcome.stdout.clone()).unwrap()
}

/// Processes of group `pgid` that are still alive. Zombies do not count:
/// this machine's init may never reap reparented grandchildren, and a zombie
/// runs nothing. Retries for a while because SIGKILL delivery is asynchronous.
fn live_group_members(pgid: i32) -> Vec<(i32, char)> {
    let give_up = Instant::now() + Duration::from_secs(3);
    loop {
        // SAFETY: kill with signal 0 only checks for existence.
        let any = unsafe { libc::kill(-pgid, 0) } == 0;
        let mut live = Vec::new();
        if any {
            for entry in fs::read_dir("/proc").unwrap().flatten() {
                let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                    continue;
                };
                let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    continue;
                };
                // Fields after the parenthesised command: state ppid pgrp ...
                let after_command = &stat[stat.rfind(')').unwrap() + 2..];
                let fields: Vec<&str> = after_command.split_whitespace().collect();
                let state = fields[0].chars().next().unwrap();
                let group: i32 = fields[2].parse().unwrap();
                if group == pgid && state != 'Z' && state != 'X' {
                    live.push((pid, state));
                }
            }
        }
        if live.is_empty() || Instant::now() > give_up {
            return live;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn exit_codes_are_reported() {
    assert_eq!(
        run(&Invocation::argv(["true"])).unwrap().status,
        Status::Exited(0)
    );
    assert_eq!(
        run(&Invocation::argv(["false"])).unwrap().status,
        Status::Exited(1)
    );
    let outcome = run(&Invocation::shell("exit 3")).unwrap();
    assert_eq!(outcome.status, Status::Exited(3));
    assert_eq!(outcome.status.to_string(), "exit status 3");
}

#[test]
fn death_by_signal_is_reported() {
    let outcome = run(&Invocation::argv(["sh", "-c", "kill -9 $$"])).unwrap();
    assert_eq!(outcome.status, Status::Signaled(9));
    assert_eq!(outcome.status.to_string(), "killed by signal 9 (SIGKILL)");
    let outcome = run(&Invocation::shell("kill -SEGV $$")).unwrap();
    assert_eq!(outcome.status, Status::Signaled(libc::SIGSEGV));
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let invocation = Invocation::shell("echo $$; sleep 100 & sleep 100")
        .with_timeout(Duration::from_millis(200));
    let started = Instant::now();
    let outcome = run(&invocation).unwrap();
    let elapsed = started.elapsed();

    assert_eq!(outcome.status, Status::TimedOut);
    assert!(
        outcome.wall >= Duration::from_millis(200),
        "{:?}",
        outcome.wall
    );
    // sh and sleep die of SIGTERM at once, so this is far below the 100 s
    // the command would take; the margin is for a loaded machine.
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    let text = stdout_text(&outcome);
    assert!(!text.is_empty(), "the shell did not start within 200 ms");
    let pgid: i32 = text.trim().parse().unwrap();
    assert_eq!(live_group_members(pgid), vec![]);
}

#[test]
fn timeout_escalates_to_sigkill_when_sigterm_is_ignored() {
    let invocation =
        Invocation::shell("trap '' TERM; echo $$; sleep 100 & while :; do sleep 1; done")
            .with_timeout(Duration::from_millis(800));
    let started = Instant::now();
    let outcome = run(&invocation).unwrap();
    let elapsed = started.elapsed();
    assert_eq!(outcome.status, Status::TimedOut);
    // The shell ignores SIGTERM, so only the SIGKILL after the grace ends it.
    assert!(
        elapsed >= Duration::from_millis(800) + TERMINATION_GRACE,
        "{elapsed:?}"
    );
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
    let pgid: i32 = stdout_text(&outcome).trim().parse().unwrap();
    assert_eq!(live_group_members(pgid), vec![]);
}

#[test]
fn a_command_within_its_timeout_is_unaffected() {
    let outcome = run(&Invocation::argv(["true"]).with_timeout(Duration::from_secs(10))).unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
}

#[test]
fn cancel_kills_the_group_and_returns_cancelled_promptly() {
    // The group id is recorded in a file because a cancelled run returns no
    // output; the file appears once both sleeps have started.
    let directory = tempfile::tempdir().unwrap();
    let pid_file = directory.path().join("pid");
    let cancel = Cancel::new();
    let canceller = {
        let cancel = cancel.clone();
        let pid_file = pid_file.clone();
        thread::spawn(move || {
            let give_up = Instant::now() + Duration::from_secs(10);
            while !pid_file.exists() && Instant::now() < give_up {
                thread::sleep(Duration::from_millis(10));
            }
            let cancelled_at = Instant::now();
            cancel.cancel();
            cancelled_at
        })
    };
    let invocation = Invocation::shell("sleep 100 & echo $$ > pid.tmp; mv pid.tmp pid; sleep 100")
        .with_cwd(directory.path());
    let result = SystemExecutor.run(&invocation, &cancel);
    let returned_at = Instant::now();
    let cancelled_at = canceller.join().unwrap();

    assert!(matches!(result, Err(ExecError::Cancelled)), "{result:?}");
    let latency = returned_at - cancelled_at;
    assert!(
        latency < Duration::from_secs(1),
        "returned {latency:?} after the cancel"
    );
    let pgid: i32 = fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(live_group_members(pgid), vec![]);
}

#[test]
fn an_already_cancelled_token_starts_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let cancel = Cancel::new();
    cancel.cancel();
    let invocation = Invocation::argv(["touch", "started"]).with_cwd(directory.path());
    let result = SystemExecutor.run(&invocation, &cancel);
    assert!(matches!(result, Err(ExecError::Cancelled)));
    assert!(!directory.path().join("started").exists());
}

#[test]
fn one_token_cancels_runs_on_several_threads() {
    let cancel = Cancel::new();
    let executor = Arc::new(SystemExecutor);
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let cancel = cancel.clone();
            let executor = Arc::clone(&executor);
            thread::spawn(move || executor.run(&Invocation::argv(["sleep", "100"]), &cancel))
        })
        .collect();
    thread::sleep(Duration::from_millis(150));
    let started = Instant::now();
    cancel.cancel();
    for run in runs {
        assert!(matches!(run.join().unwrap(), Err(ExecError::Cancelled)));
    }
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn output_keeps_a_bounded_tail_of_each_stream() {
    // 200 000 bytes to stdout ending in a marker, 3 bytes to stderr.
    let script = "head -c 199990 /dev/zero | tr '\\0' x; printf 'END-MARKER'; printf err >&2";
    let outcome = run(&Invocation::shell(script).with_output_limit(1000)).unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    assert_eq!(outcome.stdout.len(), 1000);
    assert!(outcome.stdout.ends_with(b"xxEND-MARKER"));
    assert!(outcome.stdout_truncated);
    assert_eq!(outcome.stderr, b"err");
    assert!(!outcome.stderr_truncated);
    assert_eq!(outcome.output_tail(14), "END-MARKER\nerr");
}

#[test]
fn output_larger_than_a_pipe_does_not_block_the_child() {
    // Both streams at once, each well beyond the 64 KiB pipe buffer.
    let script = "head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2; echo done >&2";
    let outcome = run(&Invocation::shell(script).with_timeout(Duration::from_secs(20))).unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    assert_eq!(outcome.stdout.len(), 1_000_000);
    assert!(!outcome.stdout_truncated);
    assert_eq!(outcome.stderr.len(), 1_000_005);
    assert!(outcome.stderr.ends_with(b"done\n"));
}

#[test]
fn stdin_is_empty() {
    let outcome =
        run(&Invocation::argv(["wc", "-c"]).with_timeout(Duration::from_secs(10))).unwrap();
    assert_eq!(stdout_text(&outcome).trim(), "0");
}

#[test]
fn cpu_time_is_that_childs_only() {
    // The clock is polled every 100,000 loop steps: where clock_gettime is a
    // real system call (some VMs), a tight poll spends its time in sys.
    let burn = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 0.2:\n    for _ in range(100000): pass";
    let burner = run(&Invocation::argv(["python3", "-c", burn])).unwrap();
    assert_eq!(burner.status, Status::Exited(0));
    assert!(
        burner.user >= Duration::from_millis(100),
        "user {:?} sys {:?}",
        burner.user,
        burner.sys
    );

    // The previous child's CPU time does not leak into the next one.
    let quiet = run(&Invocation::argv(["true"])).unwrap();
    assert!(
        quiet.user + quiet.sys < Duration::from_millis(50),
        "{quiet:?}"
    );

    // Through a shell, the rusage includes what the shell waited for.
    let script = format!("python3 -c '{burn}'");
    let through_shell = run(&Invocation::shell(script)).unwrap();
    assert!(
        through_shell.user >= Duration::from_millis(100),
        "{through_shell:?}"
    );
}

#[test]
fn max_rss_is_reported_in_kib() {
    let allocate = "b = b'x' * 50_000_000\nprint(len(b))";
    let outcome = run(&Invocation::argv(["python3", "-c", allocate])).unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    // 50 MB is 48 828 KiB; python itself adds a few MiB.
    assert!(outcome.max_rss_kib >= 48_000, "{} KiB", outcome.max_rss_kib);
    assert!(outcome.max_rss_kib < 200_000, "{} KiB", outcome.max_rss_kib);
    // A child smaller than this test process reports at most the process's
    // own peak (tests/max_rss.rs), so `true` is checked there, alone.
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let error = run(&Invocation::argv(["gzipp", "-9"])).unwrap_err();
    assert!(matches!(error, ExecError::Spawn { .. }), "{error:?}");
    assert_eq!(
        format!("failed to {error}"),
        "failed to start `gzipp`: No such file or directory"
    );
    let error = run(&Invocation::argv(Vec::<String>::new())).unwrap_err();
    assert!(matches!(error, ExecError::EmptyCommand));
}

#[test]
fn a_missing_working_directory_is_named() {
    let error = run(&Invocation::argv(["true"]).with_cwd("/nonexistent/verdict")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "start `true` in `/nonexistent/verdict`: No such file or directory"
    );
}

#[test]
fn argv_elements_reach_the_program_verbatim() {
    let arguments = ["a b", "c;d", "{}", "$HOME", "'q'", "*", ""];
    let mut argv = vec!["printf", "[%s]\\n"];
    argv.extend(arguments);
    let outcome = run(&Invocation::argv(argv)).unwrap();
    let expected: String = arguments
        .iter()
        .map(|argument| format!("[{argument}]\n"))
        .collect();
    assert_eq!(stdout_text(&outcome), expected);
}

#[test]
fn environment_is_added_to_the_inherited_one() {
    let outcome = run(
        &Invocation::shell("echo \"$VERDICT_TEST_LEVEL|${PATH:+has-path}\"")
            .with_env("VERDICT_TEST_LEVEL", "nine 9"),
    )
    .unwrap();
    assert_eq!(stdout_text(&outcome), "nine 9|has-path\n");
}

#[test]
fn working_directory_is_used() {
    let directory = tempfile::tempdir().unwrap();
    fs::write(directory.path().join("data.txt"), "hello").unwrap();
    let outcome = run(&Invocation::argv(["cat", "data.txt"]).with_cwd(directory.path())).unwrap();
    assert_eq!(stdout_text(&outcome), "hello");
}

#[test]
fn wall_time_covers_the_run() {
    let outcome = run(&Invocation::argv(["sleep", "0.2"])).unwrap();
    assert!(
        outcome.wall >= Duration::from_millis(200),
        "{:?}",
        outcome.wall
    );
    assert!(outcome.wall < Duration::from_secs(3), "{:?}", outcome.wall);
}

#[test]
fn a_background_descendant_keeps_running_and_writing_after_the_run() {
    // The daemon writes to the captured stdout after the shell has exited;
    // it must not die of SIGPIPE because verdict stopped reading.
    let directory = tempfile::tempdir().unwrap();
    let script = "echo started; (sleep 0.3; echo late; echo survived > survived) &";
    let outcome = run(&Invocation::shell(script).with_cwd(directory.path())).unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    assert_eq!(stdout_text(&outcome), "started\n");
    let marker = directory.path().join("survived");
    let give_up = Instant::now() + Duration::from_secs(5);
    while !marker.exists() && Instant::now() < give_up {
        thread::sleep(Duration::from_millis(20));
    }
    assert!(
        marker.exists(),
        "the background process did not survive its write"
    );
}

#[test]
fn a_background_descendant_holding_the_pipes_does_not_block_the_run() {
    // The shell exits at once; its background child keeps stdout open.
    let invocation = Invocation::shell("echo $$; echo ready; sleep 10 &");
    let started = Instant::now();
    let outcome = run(&invocation).unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let text = stdout_text(&outcome);
    assert!(text.ends_with("ready\n"), "{text:?}");
    // Not our business to kill it after a normal exit; clean up here.
    let pgid: i32 = text.lines().next().unwrap().parse().unwrap();
    // SAFETY: kill has no memory arguments.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

#[test]
fn concurrent_runs_do_not_share_cpu_time() {
    // With RUSAGE_CHILDREN differences, the sleeper would be charged for the
    // burner that was reaped while it slept; wait4 charges each its own.
    let burn = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 0.2:\n    for _ in range(100000): pass";
    let burner = thread::spawn(move || run(&Invocation::argv(["python3", "-c", burn])).unwrap());
    let sleeper = run(&Invocation::argv(["sleep", "0.6"])).unwrap();
    let burner = burner.join().unwrap();
    assert!(burner.user >= Duration::from_millis(100), "{burner:?}");
    assert!(
        sleeper.user + sleeper.sys < Duration::from_millis(50),
        "{sleeper:?}"
    );
}

#[test]
fn a_timed_out_command_gets_sigterm_first_and_can_clean_up() {
    let script = "trap 'echo cleaned up; exit 0' TERM; echo started; sleep 100 & wait";
    let outcome = run(&Invocation::shell(script).with_timeout(Duration::from_millis(800))).unwrap();
    assert_eq!(outcome.status, Status::TimedOut);
    assert_eq!(stdout_text(&outcome), "started\ncleaned up\n");
}

#[test]
fn a_zero_output_limit_keeps_nothing() {
    let outcome = run(&Invocation::shell("echo out; echo err >&2").with_output_limit(0)).unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    assert!(outcome.stdout.is_empty() && outcome.stderr.is_empty());
    assert!(outcome.stdout_truncated && outcome.stderr_truncated);
}

#[test]
fn the_invocation_environment_overrides_once_and_its_path_finds_the_program() {
    let directory = tempfile::tempdir().unwrap();
    let tool = directory.path().join("verdict-test-tool");
    fs::write(&tool, "#!/bin/sh\nenv\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&tool, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("/nonexistent:{}:/usr/bin:/bin", directory.path().display());
    let outcome = run(&Invocation::argv(["verdict-test-tool"])
        .with_env("PATH", path.clone())
        .with_env("HOME", "/verdict-home"))
    .unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    let environment = String::from_utf8(outcome.stdout).unwrap();
    let lines: Vec<&str> = environment.lines().collect();
    assert_eq!(
        lines
            .iter()
            .filter(|line| line.starts_with("HOME="))
            .collect::<Vec<_>>(),
        vec![&"HOME=/verdict-home"],
        "{environment}"
    );
    assert!(
        lines.contains(&format!("PATH={path}").as_str()),
        "{environment}"
    );
    // Inherited variables are still there.
    let inherited = std::env::vars().count();
    assert!(lines.len() >= inherited, "{} < {inherited}", lines.len());
    // Without that PATH entry the program is not found.
    let error =
        run(&Invocation::argv(["verdict-test-tool"]).with_env("PATH", "/nonexistent")).unwrap_err();
    assert!(matches!(error, ExecError::Spawn { .. }), "{error:?}");
}

/// The child starts with no signal blocked (verdict blocks them all around
/// the clone), `SIGPIPE` at its default (Rust ignores it in verdict), and
/// whatever verdict's own parent set to ignored still ignored, like std's
/// `Command`.
#[test]
fn the_child_starts_with_an_empty_mask_and_sigpipe_at_its_default() {
    let outcome = run(&Invocation::argv([
        "grep",
        "-E",
        "^Sig(Blk|Ign):",
        "/proc/self/status",
    ]))
    .unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    let text = String::from_utf8(outcome.stdout).unwrap();
    let mask = |name: &str| {
        let line = text
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing: {text}"));
        u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
    };
    assert_eq!(mask("SigBlk:"), 0, "{text}");
    let sigpipe_bit = 1_u64 << (libc::SIGPIPE - 1);
    assert_eq!(mask("SigIgn:") & sigpipe_bit, 0, "{text}");
    // This test process's own ignored set, minus SIGPIPE, is inherited.
    let own = std::fs::read_to_string("/proc/self/status").unwrap();
    let own_ignored = own
        .lines()
        .find(|line| line.starts_with("SigIgn:"))
        .map(|line| u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap())
        .unwrap();
    assert_eq!(mask("SigIgn:"), own_ignored & !sigpipe_bit, "{text}");
}

#[test]
fn a_file_that_cannot_be_executed_is_a_spawn_error() {
    let directory = tempfile::tempdir().unwrap();
    let garbage = directory.path().join("not-a-program");
    fs::write(&garbage, [0x7f_u8, b'E', b'L', b'F', 0, 1, 2, 3]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&garbage, fs::Permissions::from_mode(0o755)).unwrap();
    let error = run(&Invocation::argv([garbage.to_str().unwrap()])).unwrap_err();
    assert!(matches!(error, ExecError::Spawn { .. }), "{error:?}");
    assert!(error.to_string().contains("Exec format error"), "{error}");
}

/// A repeated workload's PATH lookup is remembered only until something
/// else starts: a program that a "setup" installs earlier in PATH is then
/// the one that runs.
#[test]
fn a_program_installed_earlier_in_path_by_a_setup_is_found() {
    use std::os::unix::fs::PermissionsExt;
    let directory = tempfile::tempdir().unwrap();
    let (early, late) = (
        directory.path().join("early"),
        directory.path().join("late"),
    );
    fs::create_dir_all(&early).unwrap();
    fs::create_dir_all(&late).unwrap();
    let write_tool = |dir: &std::path::Path, word: &str| {
        let tool = dir.join("verdict-path-tool");
        fs::write(&tool, format!("#!/bin/sh\necho {word}\n")).unwrap();
        fs::set_permissions(&tool, fs::Permissions::from_mode(0o755)).unwrap();
    };
    write_tool(&late, "late");
    let path = format!("{}:{}:/usr/bin:/bin", early.display(), late.display());
    let workload = Invocation::argv(["verdict-path-tool"])
        .with_env("PATH", path.clone())
        .repeated();
    let said = |outcome: Outcome| String::from_utf8(outcome.stdout).unwrap();
    assert_eq!(said(run(&workload).unwrap()), "late\n");
    assert_eq!(said(run(&workload).unwrap()), "late\n");
    // A setup installs the tool earlier in PATH, then the workload runs.
    let setup = Invocation::shell(format!(
        "printf '#!/bin/sh\\necho early\\n' > '{0}/verdict-path-tool' && chmod +x '{0}/verdict-path-tool'",
        early.display()
    ));
    assert_eq!(run(&setup).unwrap().status, Status::Exited(0));
    assert_eq!(said(run(&workload).unwrap()), "early\n");
    // Removed again: the remembered file is gone, the lookup starts over.
    fs::remove_file(early.join("verdict-path-tool")).unwrap();
    assert_eq!(said(run(&workload).unwrap()), "late\n");
}
