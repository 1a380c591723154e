//! verdict-exit: the classes a command can end in and the one table of
//! their exit codes.
//!
//! The exit code is part of the CLI contract (docs/cli.md, "Exit codes"):
//! scripts and CI branch on it. Every error type that can end a command
//! names its class (`exit_class()`), and every exit site in the binary
//! turns a class into a code through [`ExitClass::code`], so the numbers
//! live here and nowhere else.
//!
//! A leaf crate with no dependencies, so that every library whose errors
//! can end a command (verdict-exec and verdict-kconfig too, which depend
//! on no other verdict crate but verdict-exec) names its class with the
//! same type; verdict-model re-exports it as `verdict_model::ExitClass`.
//! Must not depend on anything, decide a class for another crate's error,
//! or exit the process.

/// How a command ended, as far as its exit code is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitClass {
    /// It did what was asked (also when iterations failed: they are
    /// recorded and shown), or `check` found the candidate like the
    /// baseline.
    Success,
    /// A finding the user asked to fail on: `--fail-on` met, a boot that
    /// failed with `on_boot_failure = "stop"`, `check` found a change.
    Finding,
    /// Bad usage or input the user can fix: a flag, a file, a run id.
    Input,
    /// Interrupted (Ctrl-C / SIGTERM); the message says how to resume.
    Interrupted,
    /// Something failed that is not the user's input: the store, I/O, a
    /// host. The contract gives it the input code (see [`ExitClass::code`]).
    Internal,
    /// `check` could not decide: `git bisect run`'s "skip this commit".
    Skip,
}

impl ExitClass {
    /// Every class, in the order of their codes.
    pub const ALL: [ExitClass; 6] = [
        ExitClass::Success,
        ExitClass::Finding,
        ExitClass::Input,
        ExitClass::Internal,
        ExitClass::Interrupted,
        ExitClass::Skip,
    ];

    /// The process exit code: the one table of them.
    pub const fn code(self) -> u8 {
        match self {
            ExitClass::Success => 0,
            ExitClass::Finding => 1,
            ExitClass::Input => 2,
            // The documented contract has one code for "usage, input and
            // other errors"; scripts rely on it, so an internal failure
            // exits as input does.
            ExitClass::Internal => 2,
            ExitClass::Interrupted => 3,
            // `git bisect run` skips a commit on 125.
            ExitClass::Skip => 125,
        }
    }
}

impl From<ExitClass> for std::process::ExitCode {
    fn from(class: ExitClass) -> Self {
        std::process::ExitCode::from(class.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_contracts() {
        let codes: Vec<u8> = ExitClass::ALL.iter().map(|class| class.code()).collect();
        assert_eq!(codes, [0, 1, 2, 2, 3, 125]);
    }
}
