//! A kernel tree's Kconfig read for evaluation, with its toolchain probes
//! run through the `Target` seam: the environment `make` exports to
//! scripts/kconfig (verdict-kconfig's `make_environment`, overridden by the
//! caller's variables except ARCH and SRCARCH, which follow the arch), and
//! every `$(shell,...)` run as the kernel's popen() runs it (`/bin/sh -c`,
//! in a scratch directory where cc-option creates and removes `.tmp_$$`).
//! Without probes nothing is run and their answers come from the config.
//! Must not print, read this process's environment (the caller passes it)
//! or start a process except through the target it is given.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use verdict_exec::{Cancel, Invocation, SystemExecutor, Target};
use verdict_kconfig::{
    Kconfig, KconfigError, NoProbes, ProbeRunner, load_tree_expanded, make_environment,
    require_kconfig,
};

/// How long one probe may run (a compiler invocation, usually milliseconds).
const PROBE_TIMEOUT: Duration = Duration::from_secs(120);

/// What to read: the tree, its arch and whether its probes run.
#[derive(Debug, Clone)]
pub struct ProbeSettings {
    /// The kernel source tree (the directory holding the top-level Kconfig).
    pub tree: PathBuf,
    /// The arch, an `ARCH` or `uname -m` name (`x86_64`, `arm64`, ...).
    pub arch: String,
    /// Run the tree's `$(shell,...)` probes on the target.
    pub run_probes: bool,
    /// Variables that override what `make` would export (`CC=clang`, ...);
    /// ARCH and SRCARCH among them are ignored.
    pub overrides: HashMap<String, String>,
    /// Where the probes run (a scratch directory on the target).
    pub scratch: PathBuf,
}

/// Runs `$(shell,...)` probes on a target with the variables `make` exports.
pub struct TargetProbes<'a> {
    target: &'a dyn Target,
    environment: HashMap<String, String>,
    directory: PathBuf,
}

impl<'a> TargetProbes<'a> {
    /// Probes run on `target` in `directory` with `environment`.
    pub fn new(
        target: &'a dyn Target,
        environment: HashMap<String, String>,
        directory: PathBuf,
    ) -> Self {
        Self {
            target,
            environment,
            directory,
        }
    }
}

impl std::fmt::Debug for TargetProbes<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TargetProbes")
            .field("target", &self.target.target_name())
            .field("directory", &self.directory)
            .finish_non_exhaustive()
    }
}

impl ProbeRunner for TargetProbes<'_> {
    /// The probe's standard output, as `$(shell,...)` expands it; `None` when
    /// it could not run at all (the probe then counts as not run).
    fn shell(&self, command: &str) -> Option<String> {
        let mut invocation = Invocation::shell(command)
            .with_cwd(self.directory.clone())
            .with_timeout(PROBE_TIMEOUT);
        for (name, value) in &self.environment {
            invocation = invocation.with_env(name.clone(), value.clone());
        }
        let outcome = self.target.run(&invocation, &Cancel::new()).ok()?;
        Some(String::from_utf8_lossy(&outcome.stdout).into_owned())
    }
}

/// The environment `make` exports for `settings` (the tree's canonical path
/// as `srctree`), with the caller's overrides except ARCH and SRCARCH.
pub fn probe_environment(settings: &ProbeSettings) -> HashMap<String, String> {
    let overrides: HashMap<String, String> = settings
        .overrides
        .iter()
        .filter(|(name, _)| name.as_str() != "ARCH" && name.as_str() != "SRCARCH")
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    make_environment(&canonical(&settings.tree), &settings.arch, &overrides)
}

/// Parses the tree for evaluation, running its probes on `target` when
/// `settings.run_probes` asks.
pub fn load_for_evaluation(
    target: &dyn Target,
    settings: &ProbeSettings,
) -> Result<Kconfig, KconfigError> {
    require_kconfig(&settings.tree)?;
    let tree = canonical(&settings.tree);
    let environment = probe_environment(settings);
    if settings.run_probes {
        let runner = TargetProbes::new(target, environment.clone(), settings.scratch.clone());
        load_tree_expanded(&tree, &settings.arch, &environment, &runner)
    } else {
        load_tree_expanded(&tree, &settings.arch, &environment, &NoProbes)
    }
}

/// [`load_for_evaluation`] on this machine: its probes, when asked, run
/// here (`verdict kconfig` evaluates the tree it is given locally).
pub fn load_here(settings: &ProbeSettings) -> Result<Kconfig, KconfigError> {
    load_for_evaluation(&SystemExecutor, settings)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_exec::{FakeExecutor, Outcome, Program};

    fn settings(run_probes: bool) -> ProbeSettings {
        ProbeSettings {
            tree: PathBuf::from("/nonexistent/kernel"),
            arch: "x86_64".to_string(),
            run_probes,
            overrides: HashMap::from([
                ("CC".to_string(), "clang".to_string()),
                ("ARCH".to_string(), "arm64".to_string()),
            ]),
            scratch: PathBuf::from("/scratch"),
        }
    }

    #[test]
    fn the_environment_is_makes_with_overrides_except_the_arch() {
        let environment = probe_environment(&settings(true));
        assert_eq!(environment["CC"], "clang");
        assert_eq!(environment["ARCH"], "x86");
        assert_eq!(environment["SRCARCH"], "x86");
        assert_eq!(environment["LD"], "ld");
    }

    #[test]
    fn a_probe_runs_on_the_target_in_the_scratch_directory_with_the_environment() {
        let target = FakeExecutor::with_queue([Ok(
            Outcome::exited(0, Duration::from_millis(3)).with_stdout("y\n")
        )]);
        let environment = probe_environment(&settings(true));
        let probes = TargetProbes::new(&target, environment, PathBuf::from("/scratch"));
        assert_eq!(probes.shell("echo y").as_deref(), Some("y\n"));
        let invocations = target.invocations();
        assert_eq!(invocations.len(), 1);
        let invocation = &invocations[0];
        assert!(matches!(&invocation.program, Program::Shell(script) if script == "echo y"));
        assert_eq!(invocation.cwd.as_deref(), Some(Path::new("/scratch")));
        assert!(
            invocation
                .env
                .iter()
                .any(|(name, value)| name == "CC" && value == "clang")
        );
    }

    #[test]
    fn a_probe_that_cannot_start_counts_as_not_run() {
        let target = FakeExecutor::with_queue([]);
        let probes = TargetProbes::new(&target, HashMap::new(), PathBuf::from("/scratch"));
        assert_eq!(probes.shell("true"), None);
    }

    #[test]
    fn a_missing_tree_is_an_error_naming_it() {
        let target = FakeExecutor::with_queue([]);
        let error = load_for_evaluation(&target, &settings(true)).unwrap_err();
        assert!(error.to_string().contains("/nonexistent/kernel"), "{error}");
        assert!(target.invocations().is_empty());
    }
}
