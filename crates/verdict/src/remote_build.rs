//! `--host` for `bisect` and `check`: build here, measure there. The build
//! runs on this machine in its tree as without `--host`; the files it
//! produced (`--copy PATH`, relative to the tree; by default the
//! experiment's program when that is a path inside the tree) are copied
//! through the ssh target into a directory of the host's verdict cache, and
//! the experiment runs there with that directory (mirroring the tree) as its
//! working directory, its environment read on the host.
//!
//! Must not: start processes itself (verdict-exec's `SshTarget` copies and
//! runs), run the build on the host, or hand a path to a remote shell other
//! than as a quoted argument.

use crate::error::CliError;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;
pub(crate) use verdict_engine::bisect::RemoteBuild;
use verdict_engine::bisect::{BisectRunError, Site};
use verdict_exec::{Executor, SshTarget, Status};
use verdict_model::{Environment, Experiment, experiment::CommandSpec};

/// Where a locally built tree is measured.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RemoteBuildArgs {
    /// Measure on this host over ssh while building here: the build's
    /// output (--copy) is copied to the host's verdict cache and the
    /// experiment runs there. The name is given to `ssh` as is.
    #[arg(long, value_name = "HOST")]
    pub(crate) host: Option<String>,
    /// ssh client configuration file (passed to ssh as -F).
    #[arg(long, value_name = "FILE", requires = "host")]
    pub(crate) ssh_config: Option<PathBuf>,
    /// A file or directory the build produced, relative to the tree, to copy
    /// to the host (repeatable) [default: the experiment's program, when it
    /// is a path inside the tree].
    #[arg(long = "copy", value_name = "PATH", requires = "host")]
    pub(crate) copy: Vec<PathBuf>,
    /// How long the host may stay unreachable after a lost connection
    /// before the measurement stops, e.g. 60s or 5m.
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = crate::common::parse_timeout)]
    pub(crate) reconnect_timeout: Duration,
}

/// The remote side asked for by `args`, `None` without `--host`. `tree` is
/// where the build runs; the default copy is the experiment's program when
/// it is a path inside it.
pub(crate) fn from_args(
    args: &RemoteBuildArgs,
    experiment: &Experiment,
    tree: &Path,
) -> Result<Option<RemoteBuild>, CliError> {
    let Some(host) = &args.host else {
        return Ok(None);
    };
    if !verdict_exec::valid_host(host) {
        return Err(CliError::input(format!(
            "--host `{host}`: not a valid host name (it must not start with `-` or contain spaces)"
        )));
    }
    let mut copy = Vec::new();
    for path in &args.copy {
        copy.push(inside_tree(path)?);
    }
    if copy.is_empty() {
        match program_in_tree(experiment, tree) {
            Some(program) => copy.push(program),
            None => {
                return Err(CliError::input(format!(
                    "--host {host}: nothing to copy; the experiment's program is not a path inside {}, so name what the build produces with --copy PATH (relative to it)",
                    tree.display()
                )));
            }
        }
    }
    Ok(Some(RemoteBuild {
        host: host.clone(),
        ssh_config: args.ssh_config.clone(),
        copy,
        reconnect: verdict_model::ReconnectTimeout::of(args.reconnect_timeout),
    }))
}

/// Connects to the host of `remote` (architecture check, agent); `label`
/// names this use's directory in the host's cache (`VERDICT_CACHE/label/...`).
pub(crate) fn connect(remote: &RemoteBuild, label: &str) -> Result<RemoteMachine, CliError> {
    let mut connected = crate::target::connect_hosts(
        std::slice::from_ref(&remote.host),
        remote.ssh_config.as_deref(),
        remote.reconnect.duration().max(Duration::from_secs(1)),
    )?;
    let target = connected.remove(0);
    let base = format!("{}/{label}", target.cache_directory());
    Ok(RemoteMachine {
        spec: remote.clone(),
        target,
        base,
        staged: Vec::new(),
    })
}

/// `path` as a relative path inside the tree, or an error.
fn inside_tree(path: &Path) -> Result<PathBuf, CliError> {
    let normal = path
        .components()
        .all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    let relative: PathBuf = path
        .components()
        .filter(|component| matches!(component, Component::Normal(_)))
        .collect();
    if !normal || relative.as_os_str().is_empty() || relative.to_str().is_none() {
        return Err(CliError::input(format!(
            "--copy {}: expected a path relative to the tree, inside it (no `..`, not absolute, UTF-8)",
            path.display()
        )));
    }
    Ok(relative)
}

/// The experiment's program relative to `tree`, when it is a path (it has
/// a `/`) that lies inside `tree`.
fn program_in_tree(experiment: &Experiment, tree: &Path) -> Option<PathBuf> {
    let CommandSpec::Argv(argv) = &experiment.command else {
        return None;
    };
    let program = Path::new(argv.first()?);
    if !argv[0].contains('/') {
        return None;
    }
    let absolute = if program.is_absolute() {
        program.to_path_buf()
    } else {
        experiment
            .workdir
            .clone()
            .unwrap_or_else(|| tree.to_path_buf())
            .join(program)
    };
    let relative = lexical(&absolute)
        .strip_prefix(lexical(tree))
        .ok()?
        .to_path_buf();
    inside_tree(&relative).ok()
}

/// `path` with `.` and `..` resolved by name (no file system access).
fn lexical(path: &Path) -> PathBuf {
    let mut result = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                result.pop();
            }
            other => result.push(other),
        }
    }
    result
}

/// A connected host that measures locally built trees.
pub(crate) struct RemoteMachine {
    spec: RemoteBuild,
    target: SshTarget,
    /// `VERDICT_CACHE/label` on the host.
    base: String,
    /// Keys already copied in this session.
    staged: Vec<String>,
}

impl std::fmt::Debug for RemoteMachine {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("RemoteMachine")
            .field("host", &self.spec.host)
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl RemoteMachine {
    pub(crate) fn target(&self) -> &SshTarget {
        &self.target
    }

    /// The host's environment, read on the host.
    pub(crate) fn environment(&self) -> Environment {
        crate::target::EnvironmentSource::new(&self.target).capture()
    }

    fn error(&self, message: impl std::fmt::Display) -> CliError {
        CliError::input(format!("host {}: {message}", self.spec.host))
    }

    /// Copies the build output of `tree` to `VERDICT_CACHE/label/key` on
    /// the host (once per key and session) and returns `experiment` as it
    /// runs there: its working directory the same place in the copied tree
    /// (the copy's root when it was outside the tree), a program that is a
    /// copied path made absolute.
    pub(crate) fn stage(
        &mut self,
        experiment: &Experiment,
        tree: &Path,
        key: &str,
    ) -> Result<Experiment, CliError> {
        let root = format!("{}/{key}", self.base);
        let local_workdir = experiment
            .workdir
            .clone()
            .unwrap_or_else(|| tree.to_path_buf());
        let workdir_inside = lexical(&local_workdir)
            .strip_prefix(lexical(tree))
            .ok()
            .map(Path::to_path_buf);
        let remote_workdir = match workdir_inside.as_ref().and_then(|path| path.to_str()) {
            Some("") | None => root.clone(),
            Some(relative) => format!("{root}/{relative}"),
        };
        if !self.staged.iter().any(|staged| staged == key) {
            let mut files = Vec::new();
            for relative in &self.spec.copy {
                collect_files(tree, relative, &mut files).map_err(|error| self.error(error))?;
            }
            for relative in &files {
                let text = relative
                    .to_str()
                    .ok_or_else(|| self.error(format!("{}: not UTF-8", relative.display())))?;
                self.target
                    .upload(&tree.join(relative), &format!("{root}/{text}"))
                    .map_err(|error| self.error(error))?;
            }
            let outcome = self
                .target
                .run_direct(&["mkdir", "-p", "--", &remote_workdir])
                .map_err(|error| self.error(error))?;
            if outcome.status != Status::Exited(0) {
                return Err(self.error(format!(
                    "mkdir -p {remote_workdir}: {}",
                    outcome.output_tail(400).trim()
                )));
            }
            self.staged.push(key.to_string());
        }
        let mut remote = experiment.clone();
        remote.workdir = Some(PathBuf::from(&remote_workdir));
        if let CommandSpec::Argv(argv) = &mut remote.command
            && let Some(program) = program_in_tree(experiment, tree)
            && self
                .spec
                .copy
                .iter()
                .any(|copied| program.starts_with(copied))
            && let Some(text) = program.to_str()
        {
            argv[0] = format!("{root}/{text}");
        }
        Ok(remote)
    }

    /// Removes `VERDICT_CACHE/label` on the host; a failure is a warning.
    pub(crate) fn remove_all(&self) {
        let removed = self.target.run_direct(&["rm", "-rf", "--", &self.base]);
        if !matches!(&removed, Ok(outcome) if outcome.status == Status::Exited(0)) {
            eprintln!(
                "verdict: warning: could not remove {} on {}",
                self.base, self.spec.host
            );
        }
    }
}

impl Site for RemoteMachine {
    fn executor(&self) -> &dyn Executor {
        &self.target
    }

    fn environment(&self) -> Environment {
        RemoteMachine::environment(self)
    }

    fn stage(
        &mut self,
        experiment: &Experiment,
        tree: &Path,
        key: &str,
    ) -> Result<Experiment, BisectRunError> {
        RemoteMachine::stage(self, experiment, tree, key)
            .map_err(|error| BisectRunError::Input(error.to_string()))
    }

    fn remove_all(&self) {
        RemoteMachine::remove_all(self);
    }
}

/// The regular files at `relative` under `tree` (itself, or everything
/// below it when it is a directory), relative to `tree`.
fn collect_files(tree: &Path, relative: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let path = tree.join(relative);
    let metadata = std::fs::metadata(&path).map_err(|error| {
        format!(
            "--copy {}: {} (did the build produce it?)",
            relative.display(),
            error
        )
    })?;
    if metadata.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(&path)
            .map_err(|error| format!("read {}: {error}", path.display()))?
            .filter_map(Result::ok)
            .map(|entry| entry.file_name())
            .collect();
        entries.sort();
        for name in entries {
            collect_files(tree, &relative.join(name), files)?;
        }
    } else if metadata.is_file() {
        files.push(relative.to_path_buf());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_paths_stay_inside_the_tree() {
        assert_eq!(
            inside_tree(Path::new("./build/prog")).unwrap(),
            PathBuf::from("build/prog")
        );
        assert!(inside_tree(Path::new("../prog")).is_err());
        assert!(inside_tree(Path::new("build/../../prog")).is_err());
        assert!(inside_tree(Path::new("/usr/bin/prog")).is_err());
        assert!(inside_tree(Path::new(".")).is_err());
    }

    #[test]
    fn the_default_copy_is_a_program_inside_the_tree() {
        let text = "name = \"x\"\ncommand = [\"./build/prog\", \"--fast\"]\n";
        let mut experiment = Experiment::parse(text, "x.toml").unwrap();
        experiment.workdir = Some(PathBuf::from("/repo"));
        assert_eq!(
            program_in_tree(&experiment, Path::new("/repo")),
            Some(PathBuf::from("build/prog"))
        );
        experiment.command = CommandSpec::Argv(vec!["sh".into(), "work.sh".into()]);
        assert_eq!(program_in_tree(&experiment, Path::new("/repo")), None);
        experiment.command = CommandSpec::Argv(vec!["/usr/bin/true".into()]);
        assert_eq!(program_in_tree(&experiment, Path::new("/repo")), None);
        experiment.command = CommandSpec::Argv(vec!["../other/prog".into()]);
        assert_eq!(program_in_tree(&experiment, Path::new("/repo")), None);
    }
}
