//! The binary's error type: user errors (exit 2), interruptions (exit 3) and
//! internal failures, each carrying enough context to act on.

use std::fmt;

/// An error that ends a command. Its exit code follows the CLI contract
/// (README, "Exit codes"): 2 for usage, input and internal errors, 3 for
/// an interrupted run.
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

/// `From` for an engine error with an `Input` and an `Internal` variant
/// (both exit 2; the message is the error's).
macro_rules! input_or_internal {
    ($($(#[$doc:meta])* $error:ident in $module:ident;)*) => {$(
        $(#[$doc])*
        impl From<verdict_engine::$module::$error> for CliError {
            fn from(error: verdict_engine::$module::$error) -> Self {
                let message = error.to_string();
                match error {
                    verdict_engine::$module::$error::Input(_) => Self::Input(message),
                    verdict_engine::$module::$error::Internal(_) => Self::Internal(message),
                }
            }
        }
    )*};
}

input_or_internal! {
    /// Loading and pairing `compare`'s sides.
    CompareError in compare;
    /// Reading `history`'s series.
    SourceError in history_source;
    /// Reading a run for `export`.
    ExportError in export;
    /// Reading `plan`'s pilot run or doctor report.
    PlanError in plan;
}
