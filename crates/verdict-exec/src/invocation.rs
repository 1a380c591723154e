//! What to run: the program (an argv or, only when asked, a shell string),
//! extra environment, working directory, timeout and output bound.
//!
//! Plain data; it must not start anything or touch the file system.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::MonitorRequest;

/// Bytes of each output stream kept by default (the tail): 1 MiB.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1024 * 1024;

/// The command to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// Executed directly (`execvp`): every element is exactly one argument and
    /// no shell ever sees it. The first element is the program, looked up in
    /// `PATH` when it has no slash.
    Argv(Vec<String>),
    /// Run as `/bin/sh -c STRING`; only for experiments that ask for a shell.
    Shell(String),
}

impl Program {
    /// The name used in error messages: the program of an argv, or `/bin/sh`.
    pub fn program_name(&self) -> &str {
        match self {
            Program::Argv(argv) => argv.first().map(String::as_str).unwrap_or(""),
            Program::Shell(_) => "/bin/sh",
        }
    }
}

/// Renders the command as a user could paste it into a shell: argv elements
/// are quoted where needed, a shell string is shown as `sh -c '...'`.
impl fmt::Display for Program {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Program::Argv(argv) => {
                for (index, argument) in argv.iter().enumerate() {
                    if index > 0 {
                        formatter.write_str(" ")?;
                    }
                    formatter.write_str(&shell_quote(argument))?;
                }
                Ok(())
            }
            Program::Shell(script) => write!(formatter, "sh -c {}", shell_quote(script)),
        }
    }
}

/// Quotes `text` for a POSIX shell only when it contains anything but plainly
/// safe characters, so common commands read naturally in messages.
fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-_./=:,+%@".contains(&byte));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// What to do with processes of the command's process group that are still
/// alive when the command itself has exited (`sh -c 'daemon & echo started'`
/// leaves `daemon` behind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Leftovers {
    /// Do not look: a setup hook may start a daemon on purpose.
    #[default]
    Ignore,
    /// List them in [`Outcome::leftovers`](crate::Outcome::leftovers) and
    /// leave them running.
    Report,
    /// List them, then SIGKILL the process group and wait (up to
    /// [`LEFTOVER_GRACE`](crate::LEFTOVER_GRACE)) until they have died.
    Kill,
}

/// One command to run, with everything that shapes how it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: Program,
    /// Added to (and overriding) the environment verdict inherited.
    pub env: Vec<(String, String)>,
    /// Working directory; verdict's own when `None`.
    pub cwd: Option<PathBuf>,
    /// Wall-clock limit; the whole process group is killed when it passes.
    pub timeout: Option<Duration>,
    /// Bytes kept per stream; the tail is kept.
    pub output_limit: usize,
    /// The measured workload, run again and again: where its program was
    /// found in `PATH` may be remembered until anything else (a setup, a
    /// teardown, a build) is started, which forgets every remembered
    /// lookup. Everything else is looked up afresh each time.
    pub repeated: bool,
    /// Processes the command leaves behind in its process group.
    pub leftovers: Leftovers,
    /// Files to snapshot on the target just before the command starts and
    /// just after it is reaped ([`Outcome::monitor`](crate::Outcome::monitor)).
    pub monitor: Option<MonitorRequest>,
}

impl Invocation {
    /// An invocation of `program` with no extra environment, the current
    /// directory, no timeout and [`DEFAULT_OUTPUT_LIMIT`].
    pub fn new(program: Program) -> Self {
        Self {
            program,
            env: Vec::new(),
            cwd: None,
            timeout: None,
            output_limit: DEFAULT_OUTPUT_LIMIT,
            repeated: false,
            leftovers: Leftovers::Ignore,
            monitor: None,
        }
    }

    /// An argv invocation: `Invocation::argv(["gzip", "-9", "data.bin"])`.
    pub fn argv<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::new(Program::Argv(argv.into_iter().map(Into::into).collect()))
    }

    /// A `/bin/sh -c SCRIPT` invocation.
    pub fn shell(script: impl Into<String>) -> Self {
        Self::new(Program::Shell(script.into()))
    }

    /// Adds one environment variable.
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Sets the working directory.
    pub fn with_cwd(mut self, directory: impl Into<PathBuf>) -> Self {
        self.cwd = Some(directory.into());
        self
    }

    /// Sets the timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Marks the invocation as the repeated workload (see `repeated`).
    pub fn repeated(mut self) -> Self {
        self.repeated = true;
        self
    }

    /// Sets what happens to processes the command leaves behind.
    pub fn with_leftovers(mut self, leftovers: Leftovers) -> Self {
        self.leftovers = leftovers;
        self
    }

    /// Snapshots the request's files around the command.
    pub fn with_monitor(mut self, request: MonitorRequest) -> Self {
        self.monitor = Some(request);
        self
    }

    /// Sets the number of bytes kept per output stream.
    pub fn with_output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_display_quotes_only_what_needs_quoting() {
        let program = Program::Argv(vec![
            "gzip".into(),
            "-9".into(),
            "my file".into(),
            "it's".into(),
            "".into(),
        ]);
        assert_eq!(program.to_string(), r"gzip -9 'my file' 'it'\''s' ''");
    }

    #[test]
    fn shell_display_shows_the_shell() {
        let program = Program::Shell("echo $HOME | wc -c".into());
        assert_eq!(program.to_string(), "sh -c 'echo $HOME | wc -c'");
        assert_eq!(program.program_name(), "/bin/sh");
    }

    #[test]
    fn builders_set_fields_and_defaults() {
        let invocation = Invocation::argv(["true"])
            .with_env("A", "1")
            .with_cwd("/tmp")
            .with_timeout(Duration::from_secs(2))
            .with_output_limit(10);
        assert_eq!(invocation.program, Program::Argv(vec!["true".into()]));
        assert_eq!(invocation.env, vec![("A".to_string(), "1".to_string())]);
        assert_eq!(invocation.cwd, Some(PathBuf::from("/tmp")));
        assert_eq!(invocation.timeout, Some(Duration::from_secs(2)));
        assert_eq!(invocation.output_limit, 10);
        assert_eq!(Invocation::shell("x").output_limit, DEFAULT_OUTPUT_LIMIT);
    }
}
