//! The one error type of the engine's commands that read the user's input
//! and the store (compare, explain, export, history, plan, bisect): its
//! variant is the error's exit class, its message the one the user sees.

use verdict_model::ExitClass;

/// Why a command could not be done. The messages name what failed (the
/// side, the file and line, the run, the revision).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Input or surroundings the user can fix: a file that does not parse,
    /// a selection that selects nothing, an unknown run, a revision.
    #[error("{0}")]
    Input(String),
    /// The store or the stored state failed.
    #[error("{0}")]
    Internal(String),
    /// Cancelled (Ctrl-C); everything measured is stored and the message
    /// says how to resume.
    #[error("{0}")]
    Interrupted(String),
}

impl CommandError {
    pub fn input(message: impl std::fmt::Display) -> Self {
        Self::Input(message.to_string())
    }

    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::Internal(message.to_string())
    }

    /// An error of a lower layer, keeping the exit class it names: a
    /// command that cannot start is input, a lost host is internal, a
    /// cancel is an interruption.
    pub fn of_class(class: ExitClass, message: impl std::fmt::Display) -> Self {
        match class {
            ExitClass::Interrupted => Self::Interrupted(message.to_string()),
            ExitClass::Internal => Self::Internal(message.to_string()),
            ExitClass::Success | ExitClass::Finding | ExitClass::Input | ExitClass::Skip => {
                Self::Input(message.to_string())
            }
        }
    }

    /// The exit class this error ends a command with.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            Self::Input(_) => ExitClass::Input,
            Self::Internal(_) => ExitClass::Internal,
            Self::Interrupted(_) => ExitClass::Interrupted,
        }
    }
}
