//! The source of a kernel verdict builds: the tree (a git repository, or a
//! tarball imported once into a bare repository of the cache), the commit
//! its `ref` names and that commit's git tree id, and a checkout of the
//! commit with the build's patches applied (`git apply`, in order) in a
//! worktree of the cache that every build of the tree reuses, so `make`
//! rebuilds only what a change touched. Every `git` and `tar` runs through
//! the controller's [`Target`], as an argv (no shell); the tarball's
//! import is deterministic (fixed author, date and message), so the same
//! tarball gives the same commit on every machine.
//!
//! Must not: run `make` (kernel_build does), touch the user's checkout
//! (only a worktree of the repository, registered in it), or delete
//! anything outside the cache.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};
use verdict_exec::{Cancel, ExecError, Invocation, Outcome, Status, Target};
use verdict_model::{AppliedPatch, BuildSpec, BuildStep};

use crate::kernel_build::KernelBuildError;

/// A resolved source: the repository, the commit and its content hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    /// The repository holding the commit (the user's, or a bare import).
    pub git_dir: PathBuf,
    /// `true` when `git_dir` is a bare repository (an imported tarball).
    pub bare: bool,
    pub commit: String,
    pub tree_id: String,
    /// The imported tarball's SHA-256.
    pub tarball_sha256: Option<String>,
    /// The tree as the experiment named it.
    pub label: String,
}

/// The environment of every `git` of an import: no user or system
/// configuration (autocrlf, hooks, signing) may change what is committed.
const IMPORT_ENVIRONMENT: [(&str, &str); 7] = [
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_AUTHOR_NAME", "verdict"),
    ("GIT_AUTHOR_EMAIL", "verdict@localhost"),
    ("GIT_AUTHOR_DATE", "1970-01-01T00:00:01+0000"),
    ("GIT_COMMITTER_NAME", "verdict"),
    ("GIT_COMMITTER_EMAIL", "verdict@localhost"),
];

/// What runs the source's commands.
pub(crate) struct Commands<'a> {
    pub executor: &'a dyn Target,
    pub cancel: &'a Cancel,
}

impl Commands<'_> {
    /// Runs `argv` (in `cwd`, with `env` added); a failure to start, a
    /// cancellation or (with `check`) a non-zero exit is an error of
    /// `step` naming the command and the end of its output.
    pub fn run(
        &self,
        step: BuildStep,
        argv: &[&str],
        cwd: Option<&Path>,
        env: &[(&str, &str)],
        check: bool,
    ) -> Result<Outcome, KernelBuildError> {
        let mut invocation = Invocation::argv(argv.iter().copied())
            .with_timeout(Duration::from_secs(6 * 3600))
            .with_output_limit(64 * 1024 * 1024);
        for (name, value) in env {
            invocation = invocation.with_env(*name, *value);
        }
        if let Some(cwd) = cwd {
            invocation = invocation.with_cwd(cwd);
        }
        let shown = invocation.program.to_string();
        let outcome = self
            .executor
            .run(&invocation, self.cancel)
            .map_err(|error| match error {
                ExecError::Cancelled => KernelBuildError::Cancelled,
                other => KernelBuildError::failed(step, format!("{shown}: {other}")),
            })?;
        if check && outcome.status != Status::Exited(0) {
            return Err(KernelBuildError::failed(
                step,
                format!("{shown}: {}: {}", outcome.status, one_line(&outcome)),
            ));
        }
        Ok(outcome)
    }

    /// The trimmed standard output of a successful `argv`.
    pub fn output(
        &self,
        step: BuildStep,
        argv: &[&str],
        env: &[(&str, &str)],
    ) -> Result<String, KernelBuildError> {
        let outcome = self.run(step, argv, None, env, true)?;
        Ok(String::from_utf8_lossy(&outcome.stdout).trim().to_string())
    }
}

/// The end of a command's output on one line (its lines joined by `; `),
/// for a failure's message.
pub(crate) fn one_line(outcome: &Outcome) -> String {
    outcome
        .output_tail(2000)
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// SHA-256 of a file, hex.
pub(crate) fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

/// SHA-256 of text, hex.
pub(crate) fn text_sha256(text: &[u8]) -> String {
    hex::encode(Sha256::digest(text))
}

/// The source `spec` names, importing a tarball into `cache/sources`
/// first if it is not there yet.
pub(crate) fn resolve(
    commands: &Commands<'_>,
    spec: &BuildSpec,
    cache: &Path,
    note: &mut dyn FnMut(&str),
) -> Result<Source, KernelBuildError> {
    let Some(tree) = &spec.tree else {
        return Err(KernelBuildError::failed(
            BuildStep::Source,
            "the build names no `tree`".to_string(),
        ));
    };
    let label = tree.display().to_string();
    if BuildSpec::tree_is_tarball(tree) {
        let sha256 = file_sha256(tree).map_err(|error| {
            KernelBuildError::failed(BuildStep::Source, format!("read {label}: {error}"))
        })?;
        let git_dir = import_tarball(commands, tree, &sha256, cache, note)?;
        let commit = git_output(
            commands,
            &git_dir,
            &["rev-parse", "--verify", "HEAD^{commit}"],
        )?;
        let tree_id = git_output(
            commands,
            &git_dir,
            &["rev-parse", &format!("{commit}^{{tree}}")],
        )?;
        return Ok(Source {
            git_dir,
            bare: true,
            commit,
            tree_id,
            tarball_sha256: Some(sha256),
            label,
        });
    }
    let git_dir = std::fs::canonicalize(tree).map_err(|error| {
        KernelBuildError::failed(
            BuildStep::Source,
            format!("the tree {label}: {error} (a git repository or a tarball)"),
        )
    })?;
    let git_ref = spec.git_ref.as_deref().unwrap_or("HEAD");
    let commit = git_output(
        commands,
        &git_dir,
        &[
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{git_ref}^{{commit}}"),
        ],
    )
    .map_err(|error| {
        KernelBuildError::failed(
            BuildStep::Source,
            format!("`ref = \"{git_ref}\"` in {label}: {error}"),
        )
    })?;
    let tree_id = git_output(
        commands,
        &git_dir,
        &["rev-parse", &format!("{commit}^{{tree}}")],
    )?;
    Ok(Source {
        git_dir,
        bare: false,
        commit,
        tree_id,
        tarball_sha256: None,
        label,
    })
}

fn git_output(
    commands: &Commands<'_>,
    repository: &Path,
    arguments: &[&str],
) -> Result<String, KernelBuildError> {
    let directory = repository.to_string_lossy();
    let mut argv = vec!["git", "-C", &directory];
    argv.extend_from_slice(arguments);
    commands.output(BuildStep::Source, &argv, &[])
}

/// `cache/sources/SHA.git`, a bare repository holding one commit of the
/// tarball's tree (its single top directory), made once: extracted into a
/// temporary directory, committed with a fixed author, date and message,
/// then renamed into place (a killed import leaves only a temporary
/// directory, removed by the next).
fn import_tarball(
    commands: &Commands<'_>,
    tarball: &Path,
    sha256: &str,
    cache: &Path,
    note: &mut dyn FnMut(&str),
) -> Result<PathBuf, KernelBuildError> {
    let sources = cache.join("sources");
    let git_dir = sources.join(format!("{}.git", &sha256[..20]));
    if git_dir.is_dir() {
        return Ok(git_dir);
    }
    let io = |what: &str, error: std::io::Error| {
        KernelBuildError::failed(BuildStep::Source, format!("{what}: {error}"))
    };
    std::fs::create_dir_all(&sources).map_err(|error| io("create the source cache", error))?;
    let _lock = verdict_exec::FileLock::exclusive(&sources.join(format!("{}.lock", &sha256[..20])))
        .map_err(|error| io("lock the source cache", error))?;
    if git_dir.is_dir() {
        return Ok(git_dir);
    }
    note(&format!(
        "importing {} into a git repository of the cache (once per tarball)",
        tarball.display()
    ));
    let scratch = sources.join(format!("{}.import", &sha256[..20]));
    let _ = std::fs::remove_dir_all(&scratch);
    let extracted = scratch.join("tree");
    let staged = scratch.join("repository.git");
    std::fs::create_dir_all(&extracted)
        .map_err(|error| io("create the import directory", error))?;
    let extracted_text = extracted.to_string_lossy().into_owned();
    let tarball_text = tarball.to_string_lossy().into_owned();
    commands.run(
        BuildStep::Source,
        &["tar", "-x", "-f", &tarball_text, "-C", &extracted_text],
        None,
        &[],
        true,
    )?;
    let root = single_directory(&extracted)
        .map_err(|error| io(&format!("read {}", extracted.display()), error))?;
    let root_text = root.to_string_lossy().into_owned();
    let staged_text = staged.to_string_lossy().into_owned();
    let date = ("GIT_COMMITTER_DATE", "1970-01-01T00:00:01+0000");
    let mut environment: Vec<(&str, &str)> = IMPORT_ENVIRONMENT.to_vec();
    environment.push(date);
    let git = |arguments: &[&str]| -> Result<Outcome, KernelBuildError> {
        let mut argv = vec![
            "git",
            "--git-dir",
            &staged_text,
            "--work-tree",
            &root_text,
            "-c",
            "core.autocrlf=false",
            "-c",
            "commit.gpgsign=false",
        ];
        argv.extend_from_slice(arguments);
        commands.run(BuildStep::Source, &argv, None, &environment, true)
    };
    commands.run(
        BuildStep::Source,
        &["git", "init", "-q", "--bare", &staged_text],
        None,
        &environment,
        true,
    )?;
    // `-f`: a packaged tree may ignore its own files (Debian's
    // linux-source ignores everything at its top level).
    git(&["add", "-A", "-f"])?;
    let message = format!("verdict: import of a tarball (sha256 {sha256})");
    git(&["commit", "-q", "--no-verify", "-m", &message])?;
    std::fs::rename(&staged, &git_dir).map_err(|error| io("put the import in place", error))?;
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(git_dir)
}

/// The one directory a tarball extracts to (`linux-source-6.1/`), or the
/// extraction directory itself when it holds several entries.
fn single_directory(directory: &Path) -> std::io::Result<PathBuf> {
    let entries: Vec<_> = std::fs::read_dir(directory)?.collect::<Result<_, _>>()?;
    match entries.as_slice() {
        [entry] if entry.file_type()?.is_dir() => Ok(entry.path()),
        _ => Ok(directory.to_path_buf()),
    }
}

/// What the shared checkout holds (`state` beside it): the commit and
/// the patches applied, so an unchanged checkout is not touched (and
/// `make` finds nothing to do).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct CheckoutState {
    commit: String,
    patches: Vec<String>,
}

/// The patches' names and hashes, read before anything changes.
pub(crate) fn patch_hashes(spec: &BuildSpec) -> Result<Vec<AppliedPatch>, KernelBuildError> {
    spec.patches
        .iter()
        .map(|path| {
            let sha256 = file_sha256(path).map_err(|error| {
                KernelBuildError::failed(
                    BuildStep::Patch,
                    format!("read the patch {}: {error}", path.display()),
                )
            })?;
            Ok(AppliedPatch {
                name: path.file_name().map_or_else(
                    || path.display().to_string(),
                    |name| name.to_string_lossy().into_owned(),
                ),
                sha256,
            })
        })
        .collect()
}

/// Makes `work/src` a checkout of `source.commit` with `patches` applied:
/// a worktree of the repository made once, then switched (`checkout
/// --force`, `clean -fdx`, which rewrite only what differs) and patched.
/// A patch that does not apply is an error naming it, with git's words;
/// the checkout is then marked unknown, so the next build starts clean.
pub(crate) fn checkout(
    commands: &Commands<'_>,
    source: &Source,
    spec: &BuildSpec,
    patches: &[AppliedPatch],
    work: &Path,
) -> Result<PathBuf, KernelBuildError> {
    let src = work.join("src");
    let state_path = work.join("state.json");
    let wanted = CheckoutState {
        commit: source.commit.clone(),
        patches: patches.iter().map(|patch| patch.sha256.clone()).collect(),
    };
    let current: Option<CheckoutState> = std::fs::read(&state_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    if current.as_ref() == Some(&wanted) && src.join(".git").exists() {
        return Ok(src);
    }
    let _ = std::fs::remove_file(&state_path);
    let src_text = src.to_string_lossy().into_owned();
    let git_dir = source.git_dir.to_string_lossy().into_owned();
    let repository = |arguments: &[&str]| -> Vec<String> {
        let mut argv: Vec<String> = if source.bare {
            vec!["git".into(), "--git-dir".into(), git_dir.clone()]
        } else {
            vec!["git".into(), "-C".into(), git_dir.clone()]
        };
        argv.extend(arguments.iter().map(|argument| argument.to_string()));
        argv
    };
    let run = |argv: Vec<String>| -> Result<Outcome, KernelBuildError> {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        commands.run(BuildStep::Source, &argv, None, &[], true)
    };
    if !src.join(".git").exists() {
        let _ = std::fs::remove_dir_all(&src);
        // A worktree the cache lost (removed by hand) is still registered.
        run(repository(&["worktree", "prune"]))?;
        run(repository(&[
            "worktree",
            "add",
            "--force",
            "--detach",
            &src_text,
            &source.commit,
        ]))?;
    } else {
        run(vec![
            "git".into(),
            "-C".into(),
            src_text.clone(),
            "checkout".into(),
            "-q".into(),
            "--force".into(),
            "--detach".into(),
            source.commit.clone(),
        ])?;
        run(vec![
            "git".into(),
            "-C".into(),
            src_text.clone(),
            "clean".into(),
            "-q".into(),
            "-f".into(),
            "-d".into(),
            "-x".into(),
        ])?;
    }
    for (path, patch) in spec.patches.iter().zip(patches) {
        let path_text = path.to_string_lossy().into_owned();
        let outcome = commands.run(
            BuildStep::Patch,
            &[
                "git",
                "-C",
                &src_text,
                "apply",
                "--whitespace=nowarn",
                &path_text,
            ],
            None,
            &[],
            false,
        )?;
        if outcome.status != Status::Exited(0) {
            return Err(KernelBuildError::failed(
                BuildStep::Patch,
                format!(
                    "the patch {} (sha256 {}) does not apply to {} at {}: {}",
                    patch.name,
                    &patch.sha256[..12],
                    source.label,
                    &source.commit[..source.commit.len().min(12)],
                    one_line(&outcome)
                ),
            ));
        }
    }
    let state = serde_json::to_vec(&wanted).expect("a checkout state serializes");
    std::fs::write(&state_path, state).map_err(|error| {
        KernelBuildError::failed(
            BuildStep::Source,
            format!("write {}: {error}", state_path.display()),
        )
    })?;
    Ok(src)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tarball_extracts_to_its_one_directory() {
        let directory = tempfile::tempdir().unwrap();
        std::fs::create_dir(directory.path().join("linux-6.1")).unwrap();
        assert_eq!(
            single_directory(directory.path()).unwrap(),
            directory.path().join("linux-6.1")
        );
        std::fs::write(directory.path().join("README"), "").unwrap();
        assert_eq!(
            single_directory(directory.path()).unwrap(),
            directory.path()
        );
    }
}
