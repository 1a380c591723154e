//! Which commit a build of verdict comes from, for `verdict --version`, the
//! stored runs' `tool_version` and the ssh agent's identity: the short hash
//! and commit date of the workspace's HEAD, "-dirty" when the files the
//! binary is built from (manifests, Cargo.lock, `crates/*/src`, build
//! scripts) differ from that commit, or why the commit is unknown (no `git`,
//! not a git checkout, no commit yet). Shared by build.rs and
//! tests/version_cli.rs.
//!
//! Build tooling, not the product: it runs `git` itself (read-only, optional
//! locks off, no network). Must not fail the build, and must not name a
//! path that does not exist among the watched files (Cargo would then rerun
//! the build script, and rebuild the binary, on every build).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The commit part of the version and the files whose change may change it.
#[derive(Debug)]
pub struct BuildCommit {
    /// `abc1234 2026-12-03`, `abc1234-dirty 2026-12-03`, or
    /// `commit unknown: REASON`.
    pub description: String,
    /// Existing files and directories to watch (`cargo:rerun-if-changed`).
    pub watched: Vec<PathBuf>,
}

/// Describes the workspace at `workspace` with the `git` program `git`.
pub fn describe(git: &OsStr, workspace: &Path) -> BuildCommit {
    let mut watched = build_inputs(workspace);
    let description = match commit(git, workspace) {
        Ok(description) => {
            watched.extend(git_files(git, workspace));
            description
        }
        Err(reason) => format!("commit unknown: {reason}"),
    };
    watched.retain(|path| path.exists());
    BuildCommit {
        description,
        watched,
    }
}

/// The pathspecs (relative to the workspace) of what the binary is built
/// from: a change outside them (docs, tests) does not make a build dirty.
const BUILD_PATHSPECS: [&str; 6] = [
    "Cargo.toml",
    "Cargo.lock",
    ":(glob)crates/*/Cargo.toml",
    ":(glob)crates/*/build.rs",
    ":(glob)crates/*/build/**",
    ":(glob)crates/*/src/**",
];

/// The files and directories `BUILD_PATHSPECS` names, as paths.
fn build_inputs(workspace: &Path) -> Vec<PathBuf> {
    let mut inputs = vec![workspace.join("Cargo.toml"), workspace.join("Cargo.lock")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(workspace.join("crates"))
        .map(|entries| {
            entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .collect()
        })
        .unwrap_or_default();
    crates.sort();
    for directory in crates {
        for part in ["Cargo.toml", "build.rs", "build", "src"] {
            inputs.push(directory.join(part));
        }
    }
    inputs
}

/// `HASH DATE` or `HASH-dirty DATE`, or why there is no commit to name.
fn commit(git: &OsStr, workspace: &Path) -> Result<String, &'static str> {
    // The workspace's own manifest must be tracked: a source tarball
    // unpacked inside some other repository is not a checkout of verdict.
    let tracked = run_git(
        git,
        workspace,
        &["ls-files", "--error-unmatch", "Cargo.toml"],
    )?;
    if tracked.is_none() {
        return Err("not built from a git checkout");
    }
    let head = run_git(
        git,
        workspace,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--format=%h %cs",
            "HEAD",
        ],
    )?
    .ok_or("the git checkout has no commit")?;
    let (hash, date) = head
        .trim()
        .split_once(' ')
        .ok_or("git log printed no hash and date")?;
    let mut status = vec!["status", "--porcelain", "--untracked-files=normal", "--"];
    status.extend(BUILD_PATHSPECS);
    let changes = run_git(git, workspace, &status)?.ok_or("git status failed")?;
    let dirty = if changes.trim().is_empty() {
        ""
    } else {
        "-dirty"
    };
    Ok(format!("{hash}{dirty} {date}"))
}

/// The git files that change when HEAD moves or the index changes.
fn git_files(git: &OsStr, workspace: &Path) -> Vec<PathBuf> {
    let mut arguments = vec!["rev-parse"];
    let mut names = vec!["HEAD", "index", "packed-refs", "logs/HEAD"];
    let branch = run_git(git, workspace, &["symbolic-ref", "-q", "HEAD"])
        .ok()
        .flatten()
        .map(|reference| reference.trim().to_string());
    if let Some(branch) = &branch {
        names.push(branch);
    }
    for name in &names {
        arguments.extend(["--git-path", name]);
    }
    let Ok(Some(paths)) = run_git(git, workspace, &arguments) else {
        return Vec::new();
    };
    paths.lines().map(|path| workspace.join(path)).collect()
}

/// stdout of `git -C WORKSPACE ARGUMENTS` when it succeeds, `None` when it
/// exits non-zero, an error when `git` cannot be started.
fn run_git(
    git: &OsStr,
    workspace: &Path,
    arguments: &[&str],
) -> Result<Option<String>, &'static str> {
    let output = Command::new(git)
        .arg("-C")
        .arg(workspace)
        .arg("--no-optional-locks")
        .args(arguments)
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .map_err(|_| "git is not installed")?;
    if !output.status.success() {
        return Ok(None);
    }
    Ok(String::from_utf8(output.stdout).ok())
}
