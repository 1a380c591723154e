//! Bisecting kernels: the boot level a commit's build yields
//! ([`BootBuild`]: `--boot-kernel`, `--boot-initrd`, `--boot-cmdline`, a
//! `--boot-spec` file the build writes; or a kernel verdict builds itself
//! from the VM's `build` at each commit), the experiment that boots it on
//! the `[target] vm` of the bisection's experiment ([`commit_experiment`],
//! [`source_experiment`]),
//! and what the boots cost per step and per commit ([`BootCosts`], read
//! back from the store's `boots` of the bisection's runs).
//!
//! Every measurement of a commit is one run through the engine's
//! [`crate::BootRunner`] (the boot machinery of `verdict run`: nonce,
//! release, boot id, options, verify), one boot of that commit's kernel.
//!
//! Must not: boot anything (the booter the caller hands over does), decide
//! what to measure (verdict-bisect does), or print.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use verdict_bisect::{Bisection, CommitId, Event};
use verdict_exec::Booter;
use verdict_model::{BootPlan, Experiment, LevelBoot, RunStatus};
use verdict_store::{BisectId, Store};

use crate::bisect::Settings;
use crate::error::CommandError;

/// Where a commit's build leaves the kernel to boot (stored with the
/// bisection, so a resume boots the same way). Paths are relative to the
/// tree the commit was built in (absolute ones are taken as they are).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BootBuild {
    /// `--boot-kernel`: the image, e.g. `arch/x86/boot/bzImage`.
    pub kernel: Option<PathBuf>,
    /// `--boot-initrd`.
    pub initrd: Option<PathBuf>,
    /// `--boot-cmdline`: options after the VM's `cmdline`.
    #[serde(default)]
    pub cmdline: String,
    /// `--boot-spec`: a file the build writes in the tree, holding a `boot`
    /// table with a level's `boot` keys; where it names a kernel or initrd
    /// it wins over the flags, and its `cmdline` comes after theirs (or
    /// replaces everything with `cmdline_mode = "replace"`).
    pub spec: Option<PathBuf>,
    /// verdict builds each commit's kernel itself, from `[target] vm`'s
    /// `build` (its config, fragments and make arguments) with the
    /// repository at the commit as the tree: no checkout, no `--build`.
    #[serde(default)]
    pub from_source: bool,
}

/// Reads a booted machine's environment (and its kernel config) through
/// its target.
pub type BootEnvironment = Box<crate::boots::BootEnvironment<'static>>;

/// How a bisection boots: the booter of the experiment's `[target] vm`
/// (one for the whole session; each measurement is a fresh boot) and how a
/// booted machine's environment is read (stored per boot, as for `verdict
/// run`).
pub struct BootSite {
    pub booter: Box<dyn Booter>,
    pub environment: BootEnvironment,
    /// Builds each commit's kernel (a bisection from source).
    pub kernels: Option<crate::kernel_build::KernelBuilder>,
}

impl std::fmt::Debug for BootSite {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("BootSite").finish_non_exhaustive()
    }
}

/// Refuses a bisection whose experiment and boot flags do not fit: a VM
/// needs the commit's kernel, the flags need a VM, ssh hosts booted by
/// kexec are not supported yet. Checks the flags' values as a level's
/// `boot` is checked.
pub(crate) fn check(
    experiment: &Experiment,
    experiment_path: &Path,
    boot: Option<&BootBuild>,
    remote: bool,
    commands: bool,
) -> Result<(), CommandError> {
    let path = experiment_path.display();
    if experiment.target.host_boot().is_some() {
        return Err(CommandError::Input(format!(
            "{path}: `[target] boot` (ssh hosts booted by kexec) cannot be bisected yet; bisect kernels on `[target] vm`"
        )));
    }
    if let Some(build) = experiment.target.vm().and_then(|vm| vm.build.as_ref()) {
        return check_source(build, experiment_path, boot, remote, commands);
    }
    match (experiment.target.vm(), boot) {
        (Some(_), None) => Err(CommandError::Input(format!(
            "{path}: `[target] vm` boots the kernel each commit's build produces: give --boot-kernel PATH (e.g. arch/x86/boot/bzImage) or --boot-spec FILE"
        ))),
        (None, Some(_)) => Err(CommandError::Input(format!(
            "--boot-kernel, --boot-initrd, --boot-cmdline and --boot-spec boot each commit's kernel on a VM: {path} has no `[target] vm`"
        ))),
        (Some(_), Some(_)) if remote => Err(CommandError::Input(format!(
            "{path}: `[target] vm` boots each commit's kernel on this machine; --host does not apply"
        ))),
        (Some(_), Some(boot)) => {
            if boot.kernel.is_none() && boot.spec.is_none() {
                return Err(CommandError::Input(
                    "a kernel bisection needs the kernel each build produces: give --boot-kernel PATH or --boot-spec FILE"
                        .to_string(),
                ));
            }
            flag_level(boot).map(|_| ())
        }
        (None, None) => Ok(()),
    }
}

/// A bisection that builds each commit's kernel from `[target] vm`'s
/// `build`: no boot flags, no build or install command, no `ref` (the
/// bisection picks the commits), here (not on a host).
fn check_source(
    build: &verdict_model::BuildSpec,
    experiment_path: &Path,
    boot: Option<&BootBuild>,
    remote: bool,
    commands: bool,
) -> Result<(), CommandError> {
    let path = experiment_path.display();
    let refuse = |message: String| Err(CommandError::Input(format!("{path}: {message}")));
    if boot.is_some_and(|boot| !boot.from_source) {
        return refuse(
            "`[target] vm` has a `build`: verdict builds each commit's kernel itself; drop --boot-kernel/--boot-initrd/--boot-cmdline/--boot-spec (or the `build`)".to_string(),
        );
    }
    if commands {
        return refuse(
            "`[target] vm` has a `build`: verdict builds each commit's kernel itself; drop --build and --install".to_string(),
        );
    }
    if remote {
        return refuse(
            "`[target] vm` boots each commit's kernel on this machine; --host does not apply"
                .to_string(),
        );
    }
    if let Some(git_ref) = &build.git_ref {
        return refuse(format!(
            "`vm.build.ref = \"{git_ref}\"`: the bisection builds the commits between --good and --bad of --repo; remove `ref`"
        ));
    }
    Ok(())
}

/// `experiment` building and booting the kernel of `commit` of `repo`: its
/// `[target] vm`'s `build` with the repository as the tree and the commit
/// as the ref.
pub(crate) fn source_experiment(experiment: &Experiment, repo: &Path, commit: &str) -> Experiment {
    let mut experiment = experiment.clone();
    if let Some(build) = experiment.target.vm_mut().and_then(|vm| vm.build.as_mut()) {
        build.tree = Some(repo.to_path_buf());
        build.git_ref = Some(commit.to_string());
    }
    experiment
}

/// The flags' part of a commit's boot, validated as a level's `boot`.
fn flag_level(boot: &BootBuild) -> Result<LevelBoot, CommandError> {
    verdict_model::level_boot(
        boot.kernel.as_deref(),
        boot.initrd.as_deref(),
        &boot.cmdline,
    )
    .map_err(|message| {
        CommandError::Input(format!(
            "--boot-kernel/--boot-initrd/--boot-cmdline: {message}"
        ))
    })
}

/// `experiment` booting the kernel the build of a commit left in `tree`:
/// its `[target] vm` with the commit's kernel, initrd and command line (the
/// VM's `cmdline` first, then `--boot-cmdline`, then the spec file's).
/// `Err(reason)` when the build did not leave a bootable level (no spec
/// file, an invalid one, no kernel image, no initrd): the commit is then
/// skipped, as a failed build is.
pub(crate) fn commit_experiment(
    experiment: &Experiment,
    boot: &BootBuild,
    tree: &Path,
) -> Result<Experiment, String> {
    let Some(vm) = experiment.target.vm() else {
        return Err("the experiment has no `[target] vm`".to_string());
    };
    let resolve = |path: &Path| tree.join(path);
    let mut flags = flag_level(boot).map_err(|error| error.to_string())?;
    flags.kernel = flags.kernel.as_deref().map(resolve);
    flags.initrd = flags.initrd.as_deref().map(resolve);
    let mut levels = vec![flags];
    if let Some(spec) = &boot.spec {
        let path = resolve(spec);
        let text = std::fs::read_to_string(&path).map_err(|error| {
            format!(
                "--boot-spec {}: the build did not write it ({error})",
                spec.display()
            )
        })?;
        let mut level = verdict_model::parse_boot_file(&text, &spec.display().to_string())
            .map_err(|error| format!("--boot-spec {error}"))?;
        if level.hook.is_some() {
            return Err(format!(
                "--boot-spec {}: `hook` arranges the next boot of an ssh host; a VM boots the kernel itself",
                spec.display()
            ));
        }
        level.kernel = level.kernel.as_deref().map(resolve);
        level.initrd = level.initrd.as_deref().map(resolve);
        levels.push(level);
    }
    let plan = BootPlan::combine(vm, &levels);
    let Some(kernel) = plan.kernel.or_else(|| vm.kernel.clone()) else {
        return Err("the experiment's `[target] vm` names no kernel".to_string());
    };
    if boot.kernel.is_none() && levels.iter().all(|level| level.kernel.is_none()) {
        return Err(format!(
            "--boot-spec {}: names no `kernel` (and there is no --boot-kernel)",
            boot.spec.as_deref().unwrap_or(Path::new("")).display()
        ));
    }
    // The image must name its release (the proof compares it with the
    // guest's `uname -r`): a build that left no bzImage is skipped here.
    verdict_exec::kernel_release(&kernel)
        .map_err(|error| format!("the kernel the build left: {error}"))?;
    if let Some(initrd) = &plan.initrd
        && !initrd.is_file()
    {
        return Err(format!(
            "the initrd the build left: {} is not a file",
            initrd.display()
        ));
    }
    let mut experiment = experiment.clone();
    let mut vm = vm.clone();
    vm.kernel = Some(kernel);
    vm.initrd = plan.initrd;
    vm.cmdline = plan.cmdline;
    experiment.target = verdict_model::TargetSpec::Vm(Box::new(vm));
    Ok(experiment)
}

/// What a boot bisection's boots cost, from the `boots` of its runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BootCosts {
    /// Every boot (proven, failed or cut off).
    pub total: usize,
    /// Boots that failed (never data).
    pub failed: usize,
    /// Boots up to each step of `Bisection::steps` (cumulative, like
    /// `Step::total_runs`; the difference between steps is a step's cost).
    pub per_step: Vec<usize>,
    /// Per commit of the range, in order (good endpoint first): (boots,
    /// failed boots).
    pub per_commit: Vec<(CommitId, usize, usize)>,
}

impl BootCosts {
    /// (boots, failed) of `commit`.
    pub fn of(&self, commit: &CommitId) -> (usize, usize) {
        self.per_commit
            .iter()
            .find(|(known, _, _)| known == commit)
            .map_or((0, 0), |(_, boots, failed)| (*boots, *failed))
    }
}

/// The boot costs of bisection `id` (`None` unless it boots a kernel per
/// commit). A measurement run's boots count towards the bisection event
/// its annotation names (`"event"`: the event recorded after it; a run
/// that failed with an error shares it with the run that measured
/// again). Bisections recorded before runs named their event are matched
/// by order (`events_by_order`). O(runs + events).
pub(crate) fn boot_costs(
    store: &dyn Store,
    id: BisectId,
    settings: &Settings,
    events: &[Event],
) -> Result<Option<BootCosts>, CommandError> {
    if settings.boot.is_none() {
        return Ok(None);
    }
    let internal = |error: verdict_store::StoreError| CommandError::Internal(error.to_string());
    let mut runs = Vec::new();
    let mut named = Vec::new();
    for run in store.bisect_runs(id).map_err(internal)? {
        let boots = store.boots(run.id).map_err(internal)?;
        let failed = boots.iter().filter(|boot| !boot.status.booted()).count();
        let short = run.name.rsplit(' ').next().unwrap_or_default().to_string();
        let event = store
            .annotations(run.id)
            .map_err(internal)?
            .get("bisect")
            .and_then(|annotation| annotation.get("event"))
            .and_then(serde_json::Value::as_u64)
            .map(|event| (event as usize).min(events.len()));
        named.push(event);
        runs.push((short, run.status, boots.len(), failed));
    }
    // The event each run's boots count towards (`events.len()`: a
    // measurement still under way, or cut off by a kill).
    let owners = match named.into_iter().collect::<Option<Vec<usize>>>() {
        Some(owners) => owners,
        None => events_by_order(&runs, events),
    };
    let mut by_event = vec![Vec::new(); events.len() + 1];
    for (run, owner) in owners.into_iter().enumerate() {
        by_event[owner].push(run);
    }
    let commits: Vec<CommitId> = std::iter::once(settings.good.clone())
        .chain(settings.candidates.iter().cloned())
        .collect();
    let mut costs = BootCosts {
        per_commit: commits
            .iter()
            .map(|commit| (commit.clone(), 0, 0))
            .collect(),
        ..BootCosts::default()
    };
    let add = |costs: &mut BootCosts, run: usize| {
        let (short, _, boots, failed) = &runs[run];
        costs.total += boots;
        costs.failed += failed;
        if let Some(entry) = costs
            .per_commit
            .iter_mut()
            .find(|(commit, _, _)| commit.to_string().starts_with(short.as_str()))
        {
            entry.1 += boots;
            entry.2 += failed;
        }
    };
    let mut bisection = Bisection::new(
        settings.config.clone(),
        settings.good.clone(),
        settings.candidates.clone(),
    )
    .map_err(|error| CommandError::Internal(error.to_string()))?;
    for (event, owned) in events.iter().zip(&by_event) {
        for &run in owned {
            add(&mut costs, run);
        }
        let steps = bisection.steps().len();
        bisection
            .apply(event)
            .map_err(|error| CommandError::Internal(error.to_string()))?;
        for _ in steps..bisection.steps().len() {
            costs.per_step.push(costs.total);
        }
    }
    for &run in &by_event[events.len()] {
        add(&mut costs, run);
    }
    Ok(Some(costs))
}

/// The event each run measured for, for bisections whose runs do not name
/// it: a run belongs to the next event of its commit in event order (a
/// run that failed with an error has no event; its boots go to the next
/// one); `events.len()` for runs after the last event. `runs`: (commit's
/// short id, status, boots, failed boots), oldest first. O(runs + events).
fn events_by_order(runs: &[(String, RunStatus, usize, usize)], events: &[Event]) -> Vec<usize> {
    let mut owners = Vec::with_capacity(runs.len());
    for (index, event) in events.iter().enumerate() {
        let commit = match event {
            Event::Samples { commit, .. } | Event::Skip { commit, .. } => commit,
        };
        // Runs that ended in an error (no event), then this event's run.
        while let Some((short, status, _, _)) = runs.get(owners.len()) {
            let ours = commit.to_string().starts_with(short.as_str());
            if *status == RunStatus::Failed && !ours {
                owners.push(index);
                continue;
            }
            if ours && *status == RunStatus::Complete {
                owners.push(index);
            }
            break;
        }
    }
    owners.resize(runs.len(), events.len());
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(target: &str) -> Experiment {
        Experiment::parse(
            &format!("name = \"k\"\ncommand = [\"true\"]\n[target]\n{target}\n"),
            "k.toml",
        )
        .unwrap()
    }

    fn vm() -> Experiment {
        experiment("vm = { kernel = \"/vmlinuz\", cmdline = \"quiet\" }")
    }

    /// The start of a bzImage naming `release` (the setup header's magic
    /// and its pointer to the version string).
    fn bzimage(release: &str) -> Vec<u8> {
        let mut bytes = vec![0u8; 0x600];
        bytes[0x202..0x206].copy_from_slice(b"HdrS");
        bytes[0x20E..0x210].copy_from_slice(&0x200u16.to_le_bytes());
        let version = format!("{release} (builder@host) #1 SMP");
        bytes[0x400..0x400 + version.len()].copy_from_slice(version.as_bytes());
        bytes
    }

    #[test]
    fn a_commit_boots_the_kernel_and_command_line_its_build_left() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("arch")).unwrap();
        std::fs::write(tree.path().join("arch/bzImage"), bzimage("6.9.0-test")).unwrap();
        let boot = BootBuild {
            kernel: Some("arch/bzImage".into()),
            cmdline: "mitigations=off".into(),
            spec: Some("verdict-boot.toml".into()),
            ..BootBuild::default()
        };
        // No spec file written: skipped with the reason.
        let reason = commit_experiment(&vm(), &boot, tree.path()).unwrap_err();
        assert!(reason.contains("did not write"), "{reason}");
        // The flags, then the file, after the VM's options.
        std::fs::write(
            tree.path().join("verdict-boot.toml"),
            "[boot]\ncmdline = \"preempt=full\"\n",
        )
        .unwrap();
        let measured = commit_experiment(&vm(), &boot, tree.path()).unwrap();
        let vm = measured.target.vm().cloned().unwrap();
        assert_eq!(vm.kernel, Some(tree.path().join("arch/bzImage")));
        assert_eq!(vm.cmdline, "quiet mitigations=off preempt=full");
        // A file naming its own kernel wins; `replace` drops the rest.
        std::fs::write(tree.path().join("other"), bzimage("6.10.0-rc1")).unwrap();
        std::fs::write(
            tree.path().join("verdict-boot.toml"),
            "[boot]\nkernel = \"other\"\ncmdline = \"nosmt\"\ncmdline_mode = \"replace\"\n",
        )
        .unwrap();
        let vm = commit_experiment(&self::vm(), &boot, tree.path())
            .unwrap()
            .target
            .vm()
            .cloned()
            .unwrap();
        assert_eq!(vm.kernel, Some(tree.path().join("other")));
        assert_eq!(vm.cmdline, "nosmt");
        // A build that left no bzImage, a file that does not load, a hook.
        std::fs::write(tree.path().join("other"), "not a kernel").unwrap();
        let reason = commit_experiment(&self::vm(), &boot, tree.path()).unwrap_err();
        assert!(reason.contains("not a bzImage"), "{reason}");
        std::fs::write(
            tree.path().join("verdict-boot.toml"),
            "[boot]\ncmdline = 3\n",
        )
        .unwrap();
        let reason = commit_experiment(&self::vm(), &boot, tree.path()).unwrap_err();
        assert!(reason.contains("verdict-boot.toml:"), "{reason}");
        std::fs::write(
            tree.path().join("verdict-boot.toml"),
            "[boot]\nhook = [\"grub-reboot\", \"1\"]\n",
        )
        .unwrap();
        let reason = commit_experiment(&self::vm(), &boot, tree.path()).unwrap_err();
        assert!(reason.contains("hook"), "{reason}");
    }

    #[test]
    fn a_kernel_bisection_needs_a_vm_and_the_commits_kernel() {
        let path = Path::new("k.toml");
        let kernel = BootBuild {
            kernel: Some("bzImage".into()),
            ..BootBuild::default()
        };
        let error = |result: Result<(), CommandError>| result.unwrap_err().to_string();
        assert!(error(check(&vm(), path, None, false, false)).contains("--boot-kernel"));
        assert!(
            error(check(&experiment(""), path, Some(&kernel), false, false))
                .contains("no `[target] vm`")
        );
        assert!(error(check(&vm(), path, Some(&kernel), true, false)).contains("--host"));
        let only_options = BootBuild {
            cmdline: "quiet".into(),
            ..BootBuild::default()
        };
        assert!(
            error(check(&vm(), path, Some(&only_options), false, false)).contains("--boot-spec")
        );
        let quoted = BootBuild {
            cmdline: "a=\"b\"".into(),
            ..kernel.clone()
        };
        assert!(error(check(&vm(), path, Some(&quoted), false, false)).contains("boot.cmdline"));
        let host = experiment("boot = { kernel = \"/boot/vmlinuz\" }");
        assert!(
            error(check(&host, path, Some(&kernel), false, false))
                .contains("cannot be bisected yet")
        );
        assert!(check(&vm(), path, Some(&kernel), false, false).is_ok());
        assert!(check(&experiment(""), path, None, false, false).is_ok());
        // A VM that builds its kernel: each commit built by verdict, no
        // flags, commands, host or ref.
        let built = experiment("vm = { build = { config = \"tinyconfig\" } }");
        let source = BootBuild {
            from_source: true,
            ..BootBuild::default()
        };
        assert!(check(&built, path, Some(&source), false, false).is_ok());
        assert!(error(check(&built, path, Some(&kernel), false, false)).contains("--boot-kernel"));
        assert!(error(check(&built, path, Some(&source), false, true)).contains("--build"));
        assert!(error(check(&built, path, Some(&source), true, false)).contains("--host"));
        let with_ref = experiment("vm = { build = { config = \"tinyconfig\", ref = \"v1\" } }");
        assert!(
            error(check(&with_ref, path, Some(&source), false, false)).contains("remove `ref`")
        );
        let at = source_experiment(&built, Path::new("/src/linux"), "abc");
        let build = at.target.vm().cloned().unwrap().build.unwrap();
        assert_eq!(
            (build.tree, build.git_ref),
            (Some("/src/linux".into()), Some("abc".to_string()))
        );
    }

    /// A bisection of three commits measured once each (`fixed_runs`),
    /// whose candidate's first measurement ended in an error (a failed
    /// boot, no event) and was measured again: the boots of both runs
    /// belong to the candidate's event, the one that classified it. The
    /// order the store lists runs in would give that step only the
    /// endpoints' boots.
    #[test]
    fn boots_count_towards_the_event_their_run_names() {
        use verdict_store::{NewBisect, NewBoot, NewRun, SqliteStore};
        let directory = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
        let ids: Vec<CommitId> = ["aaaa", "bbbb", "cccc"]
            .iter()
            .map(|id| CommitId::new(id.repeat(10)))
            .collect();
        let settings = Settings {
            repo: directory.path().to_path_buf(),
            good: ids[0].clone(),
            bad: ids[2].clone(),
            candidates: ids[1..].to_vec(),
            first_parent: true,
            build: None,
            install: None,
            config: verdict_bisect::Config {
                fixed_runs: Some(1),
                ..verdict_bisect::Config::default()
            },
            experiment_path: "k.toml".into(),
            seed: 1,
            worktrees: false,
            remote: None,
            boot: Some(BootBuild::default()),
        };
        let id = store
            .create_bisect(&NewBisect {
                repo: "repo".into(),
                good: ids[0].to_string(),
                bad: ids[2].to_string(),
                experiment_text: String::new(),
                config: serde_json::to_value(&settings).unwrap(),
                started_at_ms: 0,
            })
            .unwrap();
        // (commit, status, boots failed, boots proven, event it names)
        let runs = [
            (0, RunStatus::Complete, 0, 1, 0),
            (2, RunStatus::Complete, 0, 1, 1),
            (1, RunStatus::Failed, 1, 0, 2),
            (1, RunStatus::Complete, 0, 1, 2),
        ];
        for (commit, status, failed, proven, event) in runs {
            let run = store
                .create_run(&NewRun {
                    name: format!("bisect {} {}", id.0, ids[commit].short()),
                    kind: verdict_model::RunKind::Bisect,
                    placement: verdict_model::Placement::Vm,
                    experiment_text: String::new(),
                    experiment_sha256: String::new(),
                    experiment_json: String::new(),
                    tool_version: String::new(),
                    seed: 1,
                    host: "vm".into(),
                    planned: 1,
                    started_at_ms: 0,
                    environment_start: verdict_model::Environment::default(),
                    command_line: Vec::new(),
                    bisect: Some(id),
                })
                .unwrap();
            for boot in 0..failed + proven {
                let new = NewBoot {
                    slot: 0,
                    attempt: boot,
                    level_key: String::new(),
                    first_sequence: 0,
                    kernel: "bzImage".into(),
                    command_line: String::new(),
                    started_at_ms: 0,
                };
                let boot_id = store.create_boot(run, &new).unwrap();
                let mut row = store.boots(run).unwrap()[boot_id as usize].clone();
                row.status = if boot < failed {
                    verdict_model::BootStatus::Failed
                } else {
                    verdict_model::BootStatus::Proven
                };
                store.update_boot(run, &row).unwrap();
            }
            store
                .put_annotation(
                    run,
                    "bisect",
                    &serde_json::json!({ "bisect": id.0, "commit": ids[commit].to_string(), "event": event }),
                )
                .unwrap();
            store.finish_run(run, status, 1, None).unwrap();
        }
        let events: Vec<Event> = [(0, 1.0), (2, 2.0), (1, 2.0)]
            .into_iter()
            .map(|(commit, value)| Event::Samples {
                commit: ids[commit].clone(),
                values: vec![value],
            })
            .collect();
        let costs = boot_costs(&store, id, &settings, &events).unwrap().unwrap();
        assert_eq!((costs.total, costs.failed), (4, 1));
        assert_eq!(costs.per_step, vec![4], "{costs:?}");
        assert_eq!(costs.of(&ids[1]), (2, 1));
        // Without the events named, the order of the store's runs leaves
        // the failed run unmatched and both of the candidate's runs after
        // the last step.
        let listed: Vec<(String, RunStatus, usize, usize)> = runs
            .iter()
            .map(|&(commit, status, failed, proven, _)| {
                let (boots, failed) = ((failed + proven) as usize, failed as usize);
                (ids[commit].short().to_string(), status, boots, failed)
            })
            .collect();
        assert_eq!(events_by_order(&listed, &events), vec![0, 1, 3, 3]);
    }
}
