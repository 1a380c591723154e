//! What a finished command did: how it ended, its wall and CPU time, its peak
//! RSS, and the bounded tails of its output.
//!
//! Plain data plus formatting; it must not start processes or decide whether
//! an exit status counts as success (the experiment decides that).

use std::fmt;
use std::time::Duration;

use crate::Snapshots;
use crate::signal::signal_name;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It exited by itself with this code.
    Exited(i32),
    /// A signal it did not handle killed it (not one verdict sent).
    Signaled(i32),
    /// It ran past its timeout and verdict killed its process group. The
    /// timeout itself is in the [`Invocation`](crate::Invocation).
    TimedOut,
}

impl Status {
    /// The exit code, when the command exited by itself.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            Status::Exited(code) => Some(*code),
            Status::Signaled(_) | Status::TimedOut => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Exited(code) => write!(formatter, "exit status {code}"),
            Status::Signaled(number) => match signal_name(*number) {
                Some(name) => write!(formatter, "killed by signal {number} ({name})"),
                None => write!(formatter, "killed by signal {number}"),
            },
            Status::TimedOut => formatter.write_str("timed out"),
        }
    }
}

/// Everything measured about one finished command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub status: Status,
    /// Monotonic clock, from just before spawning to the reap.
    pub wall: Duration,
    /// User CPU time of the child and the descendants it waited for (`wait4`).
    pub user: Duration,
    /// System CPU time, same scope as `user`.
    pub sys: Duration,
    /// Peak resident set size in KiB (`ru_maxrss`), same scope as `user`.
    pub max_rss_kib: u64,
    /// The last `output_limit` bytes the command wrote to stdout.
    pub stdout: Vec<u8>,
    /// The last `output_limit` bytes the command wrote to stderr.
    pub stderr: Vec<u8>,
    /// Whether stdout was longer than what is kept.
    pub stdout_truncated: bool,
    /// Whether stderr was longer than what is kept.
    pub stderr_truncated: bool,
    /// The names (`/proc/PID/comm`) of the processes of the command's
    /// process group still alive when the command exited, one per process,
    /// when the invocation asked ([`Leftovers`](crate::Leftovers)); empty
    /// otherwise. Descendants that left the group (`setsid`) are not seen.
    pub leftovers: Vec<String>,
    /// Voluntary context switches of the child and the descendants it
    /// waited for (`ru_nvcsw` from `wait4`): it blocked or yielded.
    pub voluntary_switches: u64,
    /// Involuntary context switches, same scope (`ru_nivcsw`): it was
    /// preempted.
    pub involuntary_switches: u64,
    /// The invocation's monitor files before and after, when it asked.
    pub monitor: Option<Snapshots>,
}

impl Outcome {
    /// An outcome with the given status and wall time, no CPU time, no RSS
    /// and no output: the starting point for scripted outcomes in tests.
    pub fn new(status: Status, wall: Duration) -> Self {
        Self {
            status,
            wall,
            user: Duration::ZERO,
            sys: Duration::ZERO,
            max_rss_kib: 0,
            stdout: Vec::new(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            leftovers: Vec::new(),
            voluntary_switches: 0,
            involuntary_switches: 0,
            monitor: None,
        }
    }

    /// `Outcome::new(Status::Exited(code), wall)`.
    pub fn exited(code: i32, wall: Duration) -> Self {
        Self::new(Status::Exited(code), wall)
    }

    /// Replaces stdout.
    pub fn with_stdout(mut self, stdout: impl Into<Vec<u8>>) -> Self {
        self.stdout = stdout.into();
        self
    }

    /// Replaces stderr.
    pub fn with_stderr(mut self, stderr: impl Into<Vec<u8>>) -> Self {
        self.stderr = stderr.into();
        self
    }

    /// Sets user time, system time and peak RSS.
    pub fn with_usage(mut self, user: Duration, sys: Duration, max_rss_kib: u64) -> Self {
        self.user = user;
        self.sys = sys;
        self.max_rss_kib = max_rss_kib;
        self
    }

    /// Sets the context switches.
    pub fn with_switches(mut self, voluntary: u64, involuntary: u64) -> Self {
        self.voluntary_switches = voluntary;
        self.involuntary_switches = involuntary;
        self
    }

    /// Sets the monitor snapshots.
    pub fn with_monitor(mut self, snapshots: Snapshots) -> Self {
        self.monitor = Some(snapshots);
        self
    }

    /// Replaces the leftover process names.
    pub fn with_leftovers<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.leftovers = names.into_iter().map(Into::into).collect();
        self
    }

    /// At most `max_bytes` of output for a failure record, as lossy UTF-8:
    /// the end of stdout followed by the end of stderr (the relative order of
    /// writes to the two streams is not recorded). stderr, where failures are
    /// usually explained, gets the budget first; stdout gets what is left.
    pub fn output_tail(&self, max_bytes: usize) -> String {
        let stderr = trailing_bytes(&self.stderr, max_bytes);
        let separator_bytes = usize::from(!stderr.is_empty() && !self.stdout.is_empty());
        let stdout_budget = max_bytes.saturating_sub(stderr.len() + separator_bytes);
        let stdout = trailing_bytes(&self.stdout, stdout_budget);

        let mut text = String::from_utf8_lossy(stdout).into_owned();
        if !stdout.is_empty() && !stderr.is_empty() && !stdout.ends_with(b"\n") {
            text.push('\n');
        }
        text.push_str(&String::from_utf8_lossy(stderr));
        text
    }
}

/// The last `max_bytes` of `bytes`, moved forward past UTF-8 continuation
/// bytes so the cut never splits a character.
fn trailing_bytes(bytes: &[u8], max_bytes: usize) -> &[u8] {
    let mut start = bytes.len().saturating_sub(max_bytes);
    // At most three continuation bytes follow a leading byte.
    let limit = (start + 3).min(bytes.len());
    while start < limit && start > 0 && (bytes[start] & 0b1100_0000) == 0b1000_0000 {
        start += 1;
    }
    &bytes[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_messages() {
        assert_eq!(Status::Exited(3).to_string(), "exit status 3");
        assert_eq!(
            Status::Signaled(9).to_string(),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(Status::Signaled(40).to_string(), "killed by signal 40");
        assert_eq!(Status::TimedOut.to_string(), "timed out");
        assert_eq!(Status::Exited(0).exit_code(), Some(0));
        assert_eq!(Status::TimedOut.exit_code(), None);
    }

    #[test]
    fn output_tail_prefers_stderr_and_keeps_the_end() {
        let outcome = Outcome::exited(1, Duration::from_millis(5))
            .with_stdout("line one\nline two\n")
            .with_stderr("error: boom\n");
        assert_eq!(
            outcome.output_tail(1000),
            "line one\nline two\nerror: boom\n"
        );
        // 12 bytes of stderr, 1 byte reserved for a separator, 5 of stdout.
        assert_eq!(outcome.output_tail(18), " two\nerror: boom\n");
        assert_eq!(outcome.output_tail(6), " boom\n");
        let unterminated = Outcome::exited(1, Duration::ZERO)
            .with_stdout("abc")
            .with_stderr("err");
        assert_eq!(unterminated.output_tail(100), "abc\nerr");
    }

    #[test]
    fn output_tail_never_splits_a_character() {
        let outcome = Outcome::exited(1, Duration::ZERO).with_stderr("é!".as_bytes());
        // "é" is two bytes; keeping 2 bytes would start inside it.
        assert_eq!(outcome.output_tail(2), "!");
        assert_eq!(outcome.output_tail(3), "é!");
    }

    #[test]
    fn output_tail_of_silent_command_is_empty() {
        assert_eq!(Outcome::exited(0, Duration::ZERO).output_tail(100), "");
    }
}
