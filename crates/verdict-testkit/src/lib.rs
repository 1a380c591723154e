//! Test-only helpers shared by the workspace's test suites (a dev-dependency,
//! never linked into the `verdict` binary).
//!
//! A real test that needs an outside tool (stress-ng, sshd, qemu, chromium,
//! PostgreSQL, a kernel tree) asks for it here. A missing tool **fails** the
//! test with a message naming the Debian package that provides it, so a
//! green suite always means the test ran. Setting
//! `VERDICT_TEST_ALLOW_MISSING=1` turns that failure into a printed
//! `skipped: ...` line, for a developer who knowingly lacks the tool; CI
//! never sets it. `scripts/test` installs what is missing when it can.
//!
//! Must not: start services or change the machine; it only looks (and
//! runs git in a repository a test made for itself, such as `kernel_tree`'s
//! stand-in kernel tree) — except `postgres`,
//! which starts a throwaway PostgreSQL cluster in a temporary directory
//! for the test that asks (and stops it when dropped).

pub mod json_schema;
pub mod kernel_tree;
pub mod postgres;

use std::path::{Path, PathBuf};

/// The variable that lets a test whose tool is missing skip instead of fail.
pub const ALLOW_MISSING: &str = "VERDICT_TEST_ALLOW_MISSING";

/// Whether a missing tool may be skipped (`VERDICT_TEST_ALLOW_MISSING=1`).
pub fn missing_allowed() -> bool {
    std::env::var(ALLOW_MISSING).is_ok_and(|value| value == "1")
}

/// Handles a missing prerequisite named by `what`, installable as `how`
/// (for example `"apt-get install stress-ng"`): panics with a clear message,
/// or, when [`missing_allowed`], prints `skipped: ...` and returns `None` so
/// the caller can `return`.
///
/// # Panics
/// When the prerequisite is missing and skipping is not allowed.
pub fn missing<T>(what: &str, how: &str) -> Option<T> {
    if missing_allowed() {
        eprintln!("skipped: {what} is missing ({how}); {ALLOW_MISSING}=1 is set");
        None
    } else {
        panic!(
            "{what} is missing: {how} (scripts/test installs it), \
             or set {ALLOW_MISSING}=1 to skip the tests that need it"
        )
    }
}

/// Looks a program up in `PATH` (and in the sbin directories, where Debian
/// puts daemons such as sshd even for ordinary users' PATHs).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|directory| directory.join(name))
        .find(|candidate| is_executable(candidate))
}

/// The program `name` from `PATH`, or the outcome of [`missing`] naming the
/// Debian package that provides it.
///
/// ```no_run
/// let Some(stress_ng) = verdict_testkit::require_program("stress-ng", "stress-ng") else {
///     return;
/// };
/// ```
pub fn require_program(name: &str, debian_package: &str) -> Option<PathBuf> {
    find_program(name).or_else(|| {
        missing(
            &format!("the program `{name}`"),
            &format!("apt-get install {debian_package}"),
        )
    })
}

/// `path` if it exists, or the outcome of [`missing`] with `how` to get it.
pub fn require_path(path: &Path, how: &str) -> Option<PathBuf> {
    if path.exists() {
        Some(path.to_path_buf())
    } else {
        missing(&path.display().to_string(), how)
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Runs git in `repo` with a fixed author, which must succeed; returns
/// its trimmed standard output.
pub fn git(repo: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// Makes a git repository in `repo` with commits 0..=`commits` (returned
/// as full hashes, oldest first) of a `work.sh` that sleeps `seconds[0]`,
/// and `seconds[1]` from commit `slow_from` on; commit `broken` (if any)
/// carries a file `broken` that a build hook can test for. Sleeping does
/// not compete for the CPU, so the step stays large on a loaded machine.
pub fn sleep_repository(
    repo: &Path,
    commits: usize,
    slow_from: usize,
    broken: Option<usize>,
    seconds: [&str; 2],
) -> Vec<String> {
    git(repo, &["init", "-q"]);
    let mut hashes = Vec::new();
    for index in 0..=commits {
        let seconds = if index >= slow_from {
            seconds[1]
        } else {
            seconds[0]
        };
        std::fs::write(
            repo.join("work.sh"),
            format!("sleep {seconds}\n# revision {index}\n"),
        )
        .unwrap();
        let marker = repo.join("broken");
        if Some(index) == broken {
            std::fs::write(&marker, "the build fails here\n").unwrap();
        } else if marker.exists() {
            std::fs::remove_file(&marker).unwrap();
        }
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-qm", &format!("change number {index}")]);
        hashes.push(git(repo, &["rev-parse", "HEAD"]));
    }
    hashes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_program_every_machine_has() {
        assert!(find_program("sh").is_some());
        assert!(find_program("no-such-program-verdict-testkit").is_none());
    }
}
