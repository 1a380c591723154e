//! `Vcs` for git: runs the `git` binary in the repository (no shell, no
//! libgit2) through a `verdict_exec::Target`, with a fixed environment so
//! output does not depend on the user's configuration (no pager, C locale).
//! Must not: edit refs other than HEAD, touch `git bisect` state, or
//! discard local changes (checkout refuses on a dirty tree).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use verdict_exec::{Cancel, Invocation, Status, SystemExecutor, Target};

use crate::commit::{Commit, CommitId};
use crate::error::{BisectError, Result};
use crate::vcs::{Head, Vcs};

/// Output kept per git command: far above any `git log` of a bisection
/// range; a truncated output is an error, never parsed.
const OUTPUT_LIMIT: usize = 1 << 30;

/// A git work tree.
#[derive(Clone)]
pub struct Git {
    repo: PathBuf,
    executor: Arc<dyn Target>,
    cancel: Cancel,
}

impl fmt::Debug for Git {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Git")
            .field("repo", &self.repo)
            .finish_non_exhaustive()
    }
}

impl Git {
    /// Runs git with the real `SystemExecutor`.
    pub fn new(repo: impl Into<PathBuf>) -> Self {
        Git::with_executor(repo, Arc::new(SystemExecutor), Cancel::new())
    }

    /// Runs git through `executor`; cancelling `cancel` (Ctrl-C) kills a
    /// git command in flight.
    pub fn with_executor(
        repo: impl Into<PathBuf>,
        executor: Arc<dyn Target>,
        cancel: Cancel,
    ) -> Self {
        Git {
            repo: repo.into(),
            executor,
            cancel,
        }
    }

    pub fn repo(&self) -> &Path {
        &self.repo
    }

    /// Runs `git ARGS` in the repository; stdout on exit 0.
    fn run(&self, args: &[&str]) -> Result<String> {
        let command_text = format!("git {}", args.join(" "));
        let error = |reason: String| BisectError::Git {
            command: command_text.clone(),
            repo: self.repo.display().to_string(),
            reason,
        };
        let mut argv = vec![
            "git",
            "-c",
            "core.quotepath=off",
            "-c",
            "advice.detachedHead=false",
        ];
        argv.extend_from_slice(args);
        let invocation = Invocation::argv(argv)
            .with_cwd(&self.repo)
            .with_env("GIT_PAGER", "cat")
            .with_env("LC_ALL", "C")
            .with_env("GIT_TERMINAL_PROMPT", "0")
            .with_output_limit(OUTPUT_LIMIT);
        let outcome = self
            .executor
            .run(&invocation, &self.cancel)
            .map_err(|exec_error| error(exec_error.to_string()))?;
        if outcome.status != Status::Exited(0) {
            return Err(error(format!(
                "{}: {}",
                outcome.status,
                String::from_utf8_lossy(&outcome.stderr).trim()
            )));
        }
        if outcome.stdout_truncated {
            return Err(error(format!("its output exceeded {OUTPUT_LIMIT} bytes")));
        }
        Ok(String::from_utf8_lossy(&outcome.stdout).into_owned())
    }

    /// Checks `commit` out into its own worktree at `path` (detached), so
    /// several commits can be built side by side and measured in turns
    /// without a checkout between runs. A path left registered by an
    /// earlier, killed bisection is replaced.
    pub fn add_worktree(&self, commit: &CommitId, path: &Path) -> Result<()> {
        let path = path.to_string_lossy();
        self.prune_worktrees()?;
        self.run(&[
            "worktree",
            "add",
            "--force",
            "--detach",
            "--quiet",
            path.as_ref(),
            commit.as_str(),
        ])?;
        Ok(())
    }

    /// Removes a worktree made by `add_worktree` (its files included).
    pub fn remove_worktree(&self, path: &Path) -> Result<()> {
        let path = path.to_string_lossy();
        self.run(&["worktree", "remove", "--force", path.as_ref()])?;
        Ok(())
    }

    /// Forgets worktrees whose directories are gone.
    pub fn prune_worktrees(&self) -> Result<()> {
        self.run(&["worktree", "prune"])?;
        Ok(())
    }

    /// Local changes to tracked files (`git status --porcelain`), if any.
    pub fn local_changes(&self) -> Result<String> {
        Ok(self
            .run(&["status", "--porcelain", "--untracked-files=no"])?
            .trim_end()
            .to_owned())
    }
}

impl Vcs for Git {
    fn resolve(&self, revision: &str) -> Result<CommitId> {
        let spec = format!("{revision}^{{commit}}");
        match self.run(&[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ]) {
            Ok(output) => Ok(CommitId::new(output.trim())),
            Err(error) => Err(BisectError::UnknownRevision {
                revision: revision.to_owned(),
                repo: self.repo.display().to_string(),
                reason: match error {
                    BisectError::Git { reason, .. } => reason,
                    other => other.to_string(),
                },
            }),
        }
    }

    fn candidates(
        &self,
        good: &CommitId,
        bad: &CommitId,
        first_parent: bool,
    ) -> Result<Vec<Commit>> {
        if self
            .run(&["merge-base", "--is-ancestor", good.as_str(), bad.as_str()])
            .is_err()
        {
            return Err(BisectError::NotAncestor {
                good: good.to_string(),
                bad: bad.to_string(),
            });
        }
        let range = format!("{good}..{bad}");
        let mut args = vec!["log", "--reverse", "--format=%H %s"];
        if first_parent {
            args.push("--first-parent");
        }
        args.extend(["--end-of-options", &range]);
        let output = self.run(&args)?;
        let commits: Vec<Commit> = output
            .lines()
            .filter(|line| !line.is_empty())
            .map(|line| {
                let (id, subject) = line.split_once(' ').unwrap_or((line, ""));
                Commit {
                    id: CommitId::new(id),
                    subject: subject.to_owned(),
                }
            })
            .collect();
        if commits.last().map(|commit| &commit.id) != Some(bad) {
            return Err(BisectError::Git {
                command: format!("git log --reverse {range}"),
                repo: self.repo.display().to_string(),
                reason: "the bad commit is not the last of the range".to_owned(),
            });
        }
        Ok(commits)
    }

    fn checkout(&self, commit: &CommitId) -> Result<()> {
        let changes = self.local_changes()?;
        if !changes.is_empty() {
            return Err(BisectError::DirtyTree {
                commit: commit.to_string(),
                repo: self.repo.display().to_string(),
                changes,
            });
        }
        self.run(&["checkout", "--quiet", "--detach", commit.as_str()])?;
        Ok(())
    }

    fn subject(&self, commit: &CommitId) -> Result<String> {
        let output = self.run(&[
            "log",
            "-1",
            "--format=%s",
            "--end-of-options",
            commit.as_str(),
        ])?;
        Ok(output.trim_end_matches('\n').to_owned())
    }

    fn head(&self) -> Result<Head> {
        let commit = self.resolve("HEAD")?;
        let branch = self
            .run(&["symbolic-ref", "--quiet", "--short", "HEAD"])
            .ok()
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty());
        Ok(Head { commit, branch })
    }

    fn restore(&self, head: &Head) -> Result<()> {
        match &head.branch {
            Some(branch) => {
                self.run(&["checkout", "--quiet", branch.as_str(), "--"])?;
                Ok(())
            }
            None => self.checkout(&head.commit),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use verdict_exec::{FakeExecutor, Outcome, Program};

    use super::*;

    #[test]
    fn commands_go_through_the_executor_and_failures_name_them() {
        let hash = "0123456789abcdef0123456789abcdef01234567";
        let fake = Arc::new(FakeExecutor::with_queue([
            Ok(Outcome::exited(0, Duration::ZERO).with_stdout(format!("{hash}\n"))),
            Ok(Outcome::exited(128, Duration::ZERO).with_stderr("fatal: bad object")),
        ]));
        let git = Git::with_executor("/repo", fake.clone(), Cancel::new());
        assert_eq!(git.resolve("HEAD").unwrap(), CommitId::new(hash));
        let error = git.subject(&CommitId::new(hash)).unwrap_err().to_string();
        assert!(
            error.contains("git log -1") && error.contains("/repo"),
            "{error}"
        );
        assert!(
            error.contains("exit status 128: fatal: bad object"),
            "{error}"
        );
        let invocations = fake.invocations();
        assert_eq!(invocations[0].cwd.as_deref(), Some(Path::new("/repo")));
        let Program::Argv(argv) = &invocations[0].program else {
            panic!("git must run without a shell");
        };
        assert_eq!(argv[0], "git");
        assert!(argv.contains(&"rev-parse".to_owned()));
    }
}
