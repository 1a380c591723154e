//! The crate's error type. Messages are lowercase fragments that read after
//! "failed to" and name the commit or command involved.
//! Must not: carry presentation (colours, exit codes); the binary maps them.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum BisectError {
    #[error("start a bisection: {0}")]
    InvalidSetup(String),
    #[error("use configuration: {0}")]
    InvalidConfig(String),
    #[error("record samples for {commit}: {reason}")]
    InvalidSample { commit: String, reason: String },
    #[error("record an event for commit {0}: it is not the good endpoint or a candidate")]
    UnknownCommit(String),
    #[error("run `{command}` in {repo}: {reason}")]
    Git {
        command: String,
        repo: String,
        reason: String,
    },
    #[error("resolve revision {revision:?} in {repo}: {reason}")]
    UnknownRevision {
        revision: String,
        repo: String,
        reason: String,
    },
    #[error("bisect from {good} to {bad}: {good} is not an ancestor of {bad}")]
    NotAncestor { good: String, bad: String },
    #[error("check out {commit} in {repo}: the working tree has local changes:\n{changes}")]
    DirtyTree {
        commit: String,
        repo: String,
        changes: String,
    },
}

pub(crate) type Result<T, E = BisectError> = std::result::Result<T, E>;
