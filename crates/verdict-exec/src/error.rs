//! Why a command could not be run to an outcome.
//!
//! A command that runs and fails (non-zero exit, signal, timeout) is not an
//! error here: it is an [`Outcome`](crate::Outcome). Messages read after
//! "failed to" and name the command.

use std::io;
use std::path::PathBuf;
use verdict_exit::ExitClass;

/// Why [`Target::run`](crate::Target::run) returned no outcome.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The program could not be started (not found, not executable, ...).
    #[error("start `{program}`: {}", io_message(.source))]
    Spawn { program: String, source: io::Error },

    /// The working directory could not be entered.
    #[error("start `{program}` in `{}`: {}", .directory.display(), io_message(.source))]
    WorkingDirectory {
        program: String,
        directory: PathBuf,
        source: io::Error,
    },

    /// An argv with no program in it.
    #[error("start a command: the argument list is empty")]
    EmptyCommand,

    /// The [`Cancel`](crate::Cancel) token was cancelled: the process group
    /// was killed (or never started) and no outcome was recorded.
    #[error("finish the command: the run was cancelled")]
    Cancelled,

    /// An operating-system call around a started command failed.
    #[error("{operation} for `{program}`: {}", io_message(.source))]
    Io {
        operation: &'static str,
        program: String,
        source: io::Error,
    },

    /// The connection to a remote target went away during the request: the
    /// iteration has no outcome (it is recorded as failed, never as data).
    #[error("connection lost to {host}{}", if .detail.is_empty() { String::new() } else { format!(": {}", .detail) })]
    ConnectionLost { host: String, detail: String },

    /// A remote target stayed unreachable after a lost connection: its part
    /// of the run stops.
    #[error("host {host} is down: {message}")]
    HostDown { host: String, message: String },

    /// A remote target could not be prepared (unreachable, host key,
    /// architecture, agent) or answered nonsense.
    #[error("target {host}: {message}")]
    Target { host: String, message: String },

    /// A virtual machine did not boot, or booted but could not prove it is
    /// the boot asked for (nonce, command line, kernel release, boot id):
    /// never data. Carries the tail of its serial console.
    #[error("boot failed: {message}\n--- console tail ---\n{console_tail}")]
    BootFailed {
        message: String,
        console_tail: String,
    },

    /// A [`FakeExecutor`](crate::FakeExecutor) was asked to run more commands
    /// than it was given outcomes for.
    #[error("run `{program}` in the fake executor: no outcome is scripted for it")]
    Unscripted { program: String },
}

impl ExecError {
    /// The exit class this error ends a command with: a command the user
    /// named that cannot start is input; Ctrl-C is an interruption; a
    /// host, a boot or the operating system failing is internal.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            ExecError::Spawn { .. }
            | ExecError::WorkingDirectory { .. }
            | ExecError::EmptyCommand => ExitClass::Input,
            ExecError::Cancelled => ExitClass::Interrupted,
            ExecError::Io { .. }
            | ExecError::ConnectionLost { .. }
            | ExecError::HostDown { .. }
            | ExecError::Target { .. }
            | ExecError::BootFailed { .. }
            | ExecError::Unscripted { .. } => ExitClass::Internal,
        }
    }
}

/// `No such file or directory` rather than std's
/// `No such file or directory (os error 2)`: the number helps nobody.
fn io_message(error: &io::Error) -> String {
    let text = error.to_string();
    match error.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map(str::to_string)
            .unwrap_or(text),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_message_names_the_program_without_the_errno() {
        let error = ExecError::Spawn {
            program: "gzipp".into(),
            source: io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert_eq!(
            format!("failed to {error}"),
            "failed to start `gzipp`: No such file or directory"
        );
    }

    #[test]
    fn io_message_keeps_custom_errors_whole() {
        let error = ExecError::Io {
            operation: "wait",
            program: "x".into(),
            source: io::Error::other("strange"),
        };
        assert_eq!(error.to_string(), "wait for `x`: strange");
    }

    #[test]
    fn the_class_says_whose_failure_it_is() {
        assert_eq!(ExecError::EmptyCommand.exit_class(), ExitClass::Input);
        assert_eq!(ExecError::Cancelled.exit_class(), ExitClass::Interrupted);
        let lost = ExecError::HostDown {
            host: "h".into(),
            message: "gone".into(),
        };
        assert_eq!(lost.exit_class(), ExitClass::Internal);
    }
}
