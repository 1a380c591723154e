//! The binary's error type: what ends a command with an error, its message
//! (printed as `verdict: error: ...`) and its exit class, whose code comes
//! from the one table (`verdict_model::ExitClass::code`).

use std::fmt;

use verdict_model::ExitClass;

/// An error that ends a command. Its exit code follows the CLI contract
/// (docs/cli.md, "Exit codes") through [`CliError::exit_class`].
#[derive(Debug)]
pub(crate) enum CliError {
    /// Bad input from the user: a malformed file, an unknown run, bad flags.
    Input(String),
    /// The run was interrupted; the message says how to resume.
    Interrupted(String),
    /// Something failed that is not the user's input (I/O, database).
    Internal(String),
}

impl CliError {
    pub(crate) fn input(message: impl fmt::Display) -> Self {
        Self::Input(message.to_string())
    }

    pub(crate) fn internal(message: impl fmt::Display) -> Self {
        Self::Internal(message.to_string())
    }

    /// An error of `class` (a library error's `exit_class()`) saying
    /// `message`; a class no error has (success, a finding, skip) is
    /// internal.
    pub(crate) fn of_class(class: ExitClass, message: impl fmt::Display) -> Self {
        let message = message.to_string();
        match class {
            ExitClass::Interrupted => Self::Interrupted(message),
            ExitClass::Input => Self::Input(message),
            _ => Self::Internal(message),
        }
    }

    /// The class the command ends with; its code is the process's exit
    /// status.
    pub(crate) fn exit_class(&self) -> ExitClass {
        match self {
            Self::Input(_) => ExitClass::Input,
            Self::Interrupted(_) => ExitClass::Interrupted,
            Self::Internal(_) => ExitClass::Internal,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input(message) | Self::Interrupted(message) | Self::Internal(message) => {
                formatter.write_str(message)
            }
        }
    }
}

impl std::error::Error for CliError {}

/// The engine's command errors keep their class and their message.
impl From<verdict_engine::CommandError> for CliError {
    fn from(error: verdict_engine::CommandError) -> Self {
        Self::of_class(error.exit_class(), error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/cli.md's exit-code table lists every code of the one table
    /// (check's skip code in the sentence under it), and nothing else.
    #[test]
    fn the_documented_exit_codes_are_the_tables() {
        let cli = include_str!("../../../docs/cli.md");
        let section = cli
            .split("### Exit codes")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .expect("docs/cli.md has an exit-code section");
        let mut documented: Vec<u8> = section
            .lines()
            .filter_map(|line| line.strip_prefix("| "))
            .filter_map(|row| row.split(" |").next()?.trim().parse().ok())
            .collect();
        assert!(
            section.contains(&format!("{} skip", ExitClass::Skip.code())),
            "docs/cli.md names check's skip code"
        );
        documented.push(ExitClass::Skip.code());
        documented.sort_unstable();
        let mut table: Vec<u8> = ExitClass::ALL.iter().map(|class| class.code()).collect();
        table.sort_unstable();
        table.dedup();
        assert_eq!(documented, table);
    }
}
