//! The version-control boundary of bisection: the `Vcs` trait and a
//! deterministic in-memory fake for tests of callers.
//! Must not: measure, decide, or start processes (the git implementation
//! lives in `git.rs`).

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::commit::{Commit, CommitId};
use crate::error::{BisectError, Result};

/// What was checked out before bisecting, to restore at the end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Head {
    pub commit: CommitId,
    /// The branch HEAD pointed to (`main`), or `None` when detached.
    pub branch: Option<String>,
}

/// A repository that bisection can walk.
pub trait Vcs {
    /// Resolves a revision (`HEAD~3`, `v6.1`, a hash) to a full commit id.
    fn resolve(&self, revision: &str) -> Result<CommitId>;
    /// The commits in good..bad, oldest first, bad last; with
    /// `first_parent`, only the first-parent chain from bad back to good.
    /// Fails when good is not an ancestor of bad.
    fn candidates(
        &self,
        good: &CommitId,
        bad: &CommitId,
        first_parent: bool,
    ) -> Result<Vec<Commit>>;
    /// Checks the commit out (detached). Fails on local changes.
    fn checkout(&self, commit: &CommitId) -> Result<()>;
    /// The subject line of the commit's message.
    fn subject(&self, commit: &CommitId) -> Result<String>;
    /// The current HEAD.
    fn head(&self) -> Result<Head>;
    /// Returns to a recorded HEAD (its branch if it had one).
    fn restore(&self, head: &Head) -> Result<()>;
}

/// An in-memory linear history for tests: commits `c00`, `c01`, ...
/// with subjects "commit N"; records every checkout.
#[derive(Debug)]
pub struct FakeVcs {
    commits: Vec<Commit>,
    current: RefCell<CommitId>,
    checkouts: RefCell<Vec<CommitId>>,
}

impl FakeVcs {
    pub fn linear(count: usize) -> Self {
        let commits: Vec<Commit> = (0..count)
            .map(|index| Commit {
                id: CommitId::new(format!("c{index:02}")),
                subject: format!("commit {index}"),
            })
            .collect();
        let current = commits
            .last()
            .map_or_else(|| CommitId::new(""), |commit| commit.id.clone());
        FakeVcs {
            commits,
            current: RefCell::new(current),
            checkouts: RefCell::new(Vec::new()),
        }
    }

    pub fn commits(&self) -> &[Commit] {
        &self.commits
    }

    /// Every commit checked out so far, in order.
    pub fn checkouts(&self) -> Vec<CommitId> {
        self.checkouts.borrow().clone()
    }

    fn index(&self, commit: &CommitId) -> Result<usize> {
        self.commits
            .iter()
            .position(|candidate| &candidate.id == commit)
            .ok_or_else(|| BisectError::UnknownRevision {
                revision: commit.to_string(),
                repo: "fake".to_owned(),
                reason: "no such commit".to_owned(),
            })
    }
}

impl Vcs for FakeVcs {
    fn resolve(&self, revision: &str) -> Result<CommitId> {
        let id = CommitId::new(revision);
        self.index(&id).map(|_| id)
    }

    fn candidates(
        &self,
        good: &CommitId,
        bad: &CommitId,
        _first_parent: bool,
    ) -> Result<Vec<Commit>> {
        let (good_index, bad_index) = (self.index(good)?, self.index(bad)?);
        if good_index >= bad_index {
            return Err(BisectError::NotAncestor {
                good: good.to_string(),
                bad: bad.to_string(),
            });
        }
        Ok(self.commits[good_index + 1..=bad_index].to_vec())
    }

    fn checkout(&self, commit: &CommitId) -> Result<()> {
        self.index(commit)?;
        self.checkouts.borrow_mut().push(commit.clone());
        *self.current.borrow_mut() = commit.clone();
        Ok(())
    }

    fn subject(&self, commit: &CommitId) -> Result<String> {
        Ok(self.commits[self.index(commit)?].subject.clone())
    }

    fn head(&self) -> Result<Head> {
        Ok(Head {
            commit: self.current.borrow().clone(),
            branch: None,
        })
    }

    fn restore(&self, head: &Head) -> Result<()> {
        self.checkout(&head.commit)
    }
}
