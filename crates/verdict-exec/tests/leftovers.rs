//! Processes a workload leaves behind in its process group, with real
//! processes: named in the outcome, killed by default for the workload,
//! left alone when asked. Every process a test starts is gone when it ends.

use std::time::{Duration, Instant};
use verdict_exec::{Cancel, Invocation, Leftovers, Status, SystemExecutor, Target};

/// Waits until background job `$!` runs its program (a forked shell is
/// named `sh` until it execs, and a loaded machine can scan in between).
const AWAIT_EXEC: &str = r#"until [ "$(cat /proc/$!/comm 2>/dev/null)" != sh ]; do :; done"#;

/// A shell that starts `sleep 31` in the background, prints its pid and
/// exits as soon as the sleep runs.
fn leaves_a_sleep() -> Invocation {
    Invocation::shell(format!("sleep 31 & {AWAIT_EXEC}; echo $!; echo started"))
}

fn pid_from(stdout: &[u8]) -> libc::pid_t {
    let text = String::from_utf8_lossy(stdout);
    text.lines().next().unwrap().trim().parse().unwrap()
}

/// The process state letter from /proc, `None` when it is gone.
fn state(pid: libc::pid_t) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text[text.rfind(')')? + 1..].trim_start().chars().next()
}

fn alive(pid: libc::pid_t) -> bool {
    state(pid).is_some_and(|state| state != 'Z')
}

/// Kills a process the test left running on purpose.
struct KillOnDrop(libc::pid_t);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // SAFETY: kill has no memory arguments; the pid is the test's sleep.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
        }
    }
}

#[test]
fn a_leftover_sleep_is_named_and_killed() {
    let started = Instant::now();
    let outcome = SystemExecutor
        .run(
            &leaves_a_sleep().with_leftovers(Leftovers::Kill),
            &Cancel::new(),
        )
        .unwrap();
    let sleep = pid_from(&outcome.stdout);
    let _cleanup = KillOnDrop(sleep);
    assert_eq!(outcome.status, Status::Exited(0));
    assert_eq!(outcome.leftovers, vec!["sleep".to_string()]);
    assert!(
        !alive(sleep),
        "sleep {sleep} still runs after the iteration: {:?}",
        state(sleep)
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        outcome.wall < Duration::from_secs(5),
        "the sweep is not measured"
    );
}

#[test]
fn report_only_names_the_sleep_and_leaves_it_running() {
    let outcome = SystemExecutor
        .run(
            &leaves_a_sleep().with_leftovers(Leftovers::Report),
            &Cancel::new(),
        )
        .unwrap();
    let sleep = pid_from(&outcome.stdout);
    let _cleanup = KillOnDrop(sleep);
    assert_eq!(outcome.leftovers, vec!["sleep".to_string()]);
    assert!(alive(sleep), "the opt-out must leave it alone");
}

#[test]
fn ignore_does_not_look_and_a_clean_command_has_no_leftovers() {
    let outcome = SystemExecutor
        .run(&leaves_a_sleep(), &Cancel::new())
        .unwrap();
    let sleep = pid_from(&outcome.stdout);
    let _cleanup = KillOnDrop(sleep);
    assert!(outcome.leftovers.is_empty());
    assert!(alive(sleep), "hooks may start daemons on purpose");

    let clean = SystemExecutor
        .run(
            &Invocation::shell("sleep 0.01 & wait; echo done").with_leftovers(Leftovers::Kill),
            &Cancel::new(),
        )
        .unwrap();
    assert!(clean.leftovers.is_empty(), "{:?}", clean.leftovers);
}

#[test]
fn several_leftovers_are_each_named() {
    let outcome = SystemExecutor
        .run(
            &Invocation::shell(format!(
                "sleep 31 & {AWAIT_EXEC}; sleep 32 & {AWAIT_EXEC}; \
                 cat > /dev/null < /dev/zero & {AWAIT_EXEC}; echo $!"
            ))
            .with_leftovers(Leftovers::Kill),
            &Cancel::new(),
        )
        .unwrap();
    let mut names = outcome.leftovers.clone();
    names.sort();
    assert_eq!(names, ["cat", "sleep", "sleep"]);
    let cat = pid_from(&outcome.stdout);
    let _cleanup = KillOnDrop(cat);
    assert!(!alive(cat), "the CPU-hungry leftover must be dead");
}
