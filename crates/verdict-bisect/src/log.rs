//! Writes a `git bisect log`-compatible replay: the text `git bisect
//! replay FILE` accepts, in the format git 2.4x itself writes.
//! Must not: run git or read files; subjects come from the caller.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::bisection::{Bisection, Class, Culprit};
use crate::commit::Commit;

/// What `git bisect` is told about one commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum LogVerdict {
    Good,
    Bad,
    Skip,
}

impl LogVerdict {
    fn word(self) -> &'static str {
        match self {
            LogVerdict::Good => "good",
            LogVerdict::Bad => "bad",
            LogVerdict::Skip => "skip",
        }
    }

    /// Undecided and skipped commits are both `skip` to git.
    pub fn from_class(class: Class) -> Self {
        match class {
            Class::Good => LogVerdict::Good,
            Class::Bad => LogVerdict::Bad,
            Class::Undecided | Class::Skipped => LogVerdict::Skip,
        }
    }
}

/// One `git bisect good|bad|skip` line with its comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogEntry {
    pub commit: Commit,
    pub verdict: LogVerdict,
}

/// The replay text. `culprit` adds the final comment(s) git writes: `#
/// first bad commit: ...` or, for a range, `# only skipped commits left to
/// test` and one `# possible first bad commit: ...` per commit (given
/// oldest first, written newest first as git does).
pub fn bisect_log(
    good: &Commit,
    bad: &Commit,
    first_parent: bool,
    entries: &[LogEntry],
    culprit: Option<&[Commit]>,
) -> String {
    let mut text = String::new();
    let comment = |text: &mut String, word: &str, commit: &Commit| {
        let _ = writeln!(text, "# {word}: [{}] {}", commit.id, commit.subject);
    };
    comment(&mut text, "bad", bad);
    comment(&mut text, "good", good);
    let option = if first_parent {
        "'--first-parent' "
    } else {
        ""
    };
    let _ = writeln!(text, "git bisect start {option}'{}' '{}'", bad.id, good.id);
    for entry in entries {
        let word = entry.verdict.word();
        comment(&mut text, word, &entry.commit);
        let _ = writeln!(text, "git bisect {word} {}", entry.commit.id);
    }
    match culprit {
        Some([single]) => comment(&mut text, "first bad commit", single),
        Some(range) => {
            text.push_str("# only skipped commits left to test\n");
            // git walks back from the bad commit: newest first.
            for commit in range.iter().rev() {
                comment(&mut text, "possible first bad commit", commit);
            }
        }
        None => {}
    }
    text
}

impl Bisection {
    /// The replay of this bisection; `subject` names each commit (from
    /// `Vcs::subject` or the store).
    pub fn bisect_log(
        &self,
        first_parent: bool,
        subject: impl Fn(&crate::CommitId) -> String,
    ) -> String {
        let commit = |id: &crate::CommitId| Commit {
            id: id.clone(),
            subject: subject(id),
        };
        let entries: Vec<LogEntry> = self
            .log_entries()
            .into_iter()
            .map(|(id, class)| LogEntry {
                commit: commit(&id),
                verdict: LogVerdict::from_class(class),
            })
            .collect();
        let culprit: Option<Vec<Commit>> = match self.next_action() {
            crate::Action::Done(outcome) => Some(match outcome.culprit {
                Culprit::Single(id) => vec![commit(&id)],
                Culprit::Range(ids) => ids.iter().map(commit).collect(),
            }),
            _ => None,
        };
        bisect_log(
            &commit(self.good()),
            &commit(self.bad()),
            first_parent,
            &entries,
            culprit.as_deref(),
        )
    }
}
