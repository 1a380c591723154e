//! Commit identity: `CommitId` (a full hash for git, any unique name for a
//! fake) and `Commit` (id plus subject line for reports).
//! Must not: talk to git; resolving revisions is the `Vcs`'s job.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A commit's full identifier (40 or 64 hex digits for git).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct CommitId(pub String);

impl CommitId {
    pub fn new(id: impl Into<String>) -> Self {
        CommitId(id.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 characters, as `git log --abbrev=12` prints them.
    pub fn short(&self) -> &str {
        let end = self
            .0
            .char_indices()
            .nth(12)
            .map_or(self.0.len(), |(index, _)| index);
        &self.0[..end]
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// A commit with its subject (first line of the message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Commit {
    pub id: CommitId,
    pub subject: String,
}
