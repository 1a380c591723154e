//! The closed sets of words a store keeps as text: what started a run
//! (`RunKind`) and how a boot went (`BootStatus`), next to `RunStatus` and
//! `Placement`. Each has one spelling (`as_str`, serde, `Display`) and one
//! way back (`parse`, `FromStr`), so no other code compares the stored
//! text; the database's CHECK constraints list the same spellings.

use serde::{Deserialize, Serialize};

use crate::{Placement, RunStatus};

/// A stored word that names none of its type's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{text}`")]
pub struct UnknownSpelling {
    /// What the word should have named ("run kind", "boot status", ...).
    pub what: &'static str,
    pub text: String,
}

/// What started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// `verdict run FILE`.
    Run,
    /// `verdict ab A B`.
    Ab,
    /// `verdict check`.
    Check,
    /// A measurement of one commit by `verdict bisect`.
    Bisect,
}

impl RunKind {
    /// Every kind, in the order the CHECK constraint lists them.
    pub const ALL: [RunKind; 4] = [Self::Run, Self::Ab, Self::Check, Self::Bisect];

    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Ab => "ab",
            Self::Check => "check",
            Self::Bisect => "bisect",
        }
    }

    /// The stored spelling back; `None` for anything else.
    pub fn parse(text: &str) -> Option<RunKind> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// How one boot attempt of a run went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BootStatus {
    /// Started; the machine has not answered yet.
    #[default]
    Booting,
    /// The booted kernel and command line were checked: measuring.
    Proven,
    /// Every iteration of the boot's slot was measured.
    Complete,
    /// Did not come up (or was not the kernel asked for): no samples.
    Failed,
    /// Stopped before its slot was done (cancelled, lost, resumed later).
    Interrupted,
}

impl BootStatus {
    /// Every status, in the order the CHECK constraint lists them.
    pub const ALL: [BootStatus; 5] = [
        Self::Booting,
        Self::Proven,
        Self::Complete,
        Self::Failed,
        Self::Interrupted,
    ];

    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Booting => "booting",
            Self::Proven => "proven",
            Self::Complete => "complete",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
        }
    }

    /// The stored spelling back; `None` for anything else.
    pub fn parse(text: &str) -> Option<BootStatus> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }

    /// Whether the boot came up (every status but `failed`): its samples
    /// count, and it owns the samples after its first.
    pub fn booted(self) -> bool {
        self != Self::Failed
    }

    /// Whether the boot was still going when its run stopped.
    pub fn unfinished(self) -> bool {
        matches!(self, Self::Booting | Self::Proven)
    }
}

/// `Display` and `FromStr` through each type's `as_str` and `parse`.
macro_rules! spelled {
    ($($type:ty => $what:literal),* $(,)?) => {$(
        impl std::fmt::Display for $type {
            fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $type {
            type Err = UnknownSpelling;

            fn from_str(text: &str) -> Result<Self, UnknownSpelling> {
                <$type>::parse(text).ok_or_else(|| UnknownSpelling {
                    what: $what,
                    text: text.to_string(),
                })
            }
        }
    )*};
}

spelled!(RunKind => "run kind", BootStatus => "boot status", RunStatus => "run status");

// `Placement` has its own `Display` (placement.rs).
impl std::str::FromStr for Placement {
    type Err = UnknownSpelling;

    fn from_str(text: &str) -> Result<Self, UnknownSpelling> {
        Placement::parse(text).ok_or_else(|| UnknownSpelling {
            what: "placement",
            text: text.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde, `as_str`, `Display` and `parse` agree on every value.
    #[test]
    fn every_spelling_round_trips() {
        for kind in RunKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
            assert_eq!(kind.to_string().parse::<RunKind>(), Ok(kind));
        }
        for status in BootStatus::ALL {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
            assert_eq!(status.to_string().parse::<BootStatus>(), Ok(status));
        }
        for placement in [
            Placement::Local,
            Placement::Hosts,
            Placement::Vm,
            Placement::BootedHost,
        ] {
            assert_eq!(serde_json::to_value(placement).unwrap(), placement.as_str());
            assert_eq!(placement.to_string().parse::<Placement>(), Ok(placement));
        }
        assert_eq!(
            "group".parse::<RunKind>(),
            Err(UnknownSpelling {
                what: "run kind",
                text: "group".to_string()
            })
        );
        assert_eq!(BootStatus::default(), BootStatus::Booting);
    }
}
