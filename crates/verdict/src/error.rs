//! The binary's error type: user errors (exit 2), interruptions (exit 3) and
//! internal failures, each carrying enough context to act on.

use std::fmt;

/// An error that ends a command. The exit code follows the CLI contract in
/// The CLI contract (README, "Exit codes"): 2 for usage or input errors, 3 for interruptions.
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

    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Input(_) => 2,
            Self::Interrupted(_) => 3,
            Self::Internal(_) => 2,
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

/// Exit codes of the bisection driver's errors: the user's input and the
/// store exit 2, an interruption 3.
impl From<verdict_engine::bisect::BisectRunError> for CliError {
    fn from(error: verdict_engine::bisect::BisectRunError) -> Self {
        use verdict_engine::bisect::BisectRunError;
        let message = error.to_string();
        match error {
            BisectRunError::Input(_) => Self::Input(message),
            BisectRunError::Internal(_) => Self::Internal(message),
            BisectRunError::Interrupted(_) => Self::Interrupted(message),
        }
    }
}

/// Exit codes of loading and pairing `compare`'s sides: both exit 2.
impl From<verdict_engine::compare::CompareError> for CliError {
    fn from(error: verdict_engine::compare::CompareError) -> Self {
        use verdict_engine::compare::CompareError;
        let message = error.to_string();
        match error {
            CompareError::Input(_) => Self::Input(message),
            CompareError::Internal(_) => Self::Internal(message),
        }
    }
}

/// Exit codes of reading `history`'s series: both exit 2.
impl From<verdict_engine::history_source::SourceError> for CliError {
    fn from(error: verdict_engine::history_source::SourceError) -> Self {
        use verdict_engine::history_source::SourceError;
        let message = error.to_string();
        match error {
            SourceError::Input(_) => Self::Input(message),
            SourceError::Internal(_) => Self::Internal(message),
        }
    }
}

/// Exit codes of reading a run for `export`: both exit 2.
impl From<verdict_engine::export::ExportError> for CliError {
    fn from(error: verdict_engine::export::ExportError) -> Self {
        use verdict_engine::export::ExportError;
        let message = error.to_string();
        match error {
            ExportError::Input(_) => Self::Input(message),
            ExportError::Internal(_) => Self::Internal(message),
        }
    }
}
