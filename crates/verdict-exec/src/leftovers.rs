//! Processes a command leaves behind: after its main process has been
//! reaped, the members of its process group still alive (found by a scan of
//! `/proc/*/stat` for the group id) are named and, when asked, killed with
//! one SIGKILL to the group, then waited for until they are dead.
//!
//! Why the group id is still ours after the reap: Linux does not reuse a
//! process id while any process still uses it as its process group id, so
//! as long as the group has members, `-pgid` names exactly the group the
//! executor created. The common case (no member left) costs one
//! `kill(-pgid, 0)` that fails with ESRCH; `/proc` is read only when the
//! group is not empty.
//!
//! This file must not signal anything but the process group it is given,
//! reap anything (a leftover's parent or init reaps it), or look beyond
//! `/proc`. Descendants that left the group (`setsid`, a double-forking
//! daemon) are not seen; a cgroup per iteration would see them and is not
//! used.

use std::io;
use std::time::{Duration, Instant};

/// How long [`crate::Leftovers::Kill`] waits for the killed processes to die
/// before giving up (SIGKILL is not deferrable, but a process in
/// uninterruptible sleep dies only when it wakes).
pub const LEFTOVER_GRACE: Duration = Duration::from_secs(2);

/// Names of the live (not zombie) members of process group `group`, after
/// its leader was reaped; kills them first-found-first-named when `kill`.
pub(crate) fn sweep(group: libc::pid_t, kill: bool) -> Vec<String> {
    // SAFETY: kill with signal 0 only checks; no memory arguments.
    let any = unsafe { libc::kill(-group, 0) } == 0
        || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    if !any {
        return Vec::new();
    }
    let members = live_members(group);
    if kill && !members.is_empty() {
        // SAFETY: kill has no memory arguments; the group is ours (above).
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        let deadline = Instant::now() + LEFTOVER_GRACE;
        while Instant::now() < deadline
            && members
                .iter()
                .any(|(pid, _)| process_state(*pid).is_some_and(|(_, state, _)| state != 'Z'))
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    members.into_iter().map(|(_, name)| name).collect()
}

/// (pid, name) of every process in `group` that is not a zombie, in the
/// order `/proc` lists them (ascending pid).
fn live_members(group: libc::pid_t) -> Vec<(libc::pid_t, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut members: Vec<(libc::pid_t, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|pid| {
            let (name, state, process_group) = process_state(pid)?;
            (process_group == group && state != 'Z').then_some((pid, name))
        })
        .collect();
    members.sort_unstable_by_key(|(pid, _)| *pid);
    members
}

/// (name, state, process group) of `pid` from `/proc/PID/stat`; `None`
/// when it is gone. The name is in parentheses and may itself hold `)` or
/// spaces, so the fields are read after the last `)`.
fn process_state(pid: libc::pid_t) -> Option<(String, char, libc::pid_t)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<(String, char, libc::pid_t)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let mut fields = text.get(close + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    Some((name, state, group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_awkward_names() {
        assert_eq!(
            parse_stat("4242 (sleep) S 1 4240 4240 0 -1 4194304 85 0 0 0"),
            Some(("sleep".to_string(), 'S', 4240))
        );
        assert_eq!(
            parse_stat("7 (a) b (c) Z 1 9 9 0"),
            Some(("a) b (c".to_string(), 'Z', 9))
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn an_empty_group_is_no_leftover() {
        // Our own process group has members (this test process), so use a
        // pid that cannot be a group: pid_max is below 2^22 + 1 on Linux.
        assert!(sweep(4_194_305, false).is_empty());
    }
}
