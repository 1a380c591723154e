//! The launchers of runs whose target verdict boots: `[target] vm` (a
//! QEMU verdict starts) or an ssh host with `[target] boot` (kexec, or a
//! level's hook and a reboot). The boot is the unit of the schedule.
//! Builds the booter from the file's settings (host programs found on
//! PATH, this binary as the agent) and hands it to the `BootRunner`; a
//! boot that failed for good (`on_boot_failure = "stop"`) or a kernel that
//! could not be built (`build = { … }`, the `KernelBuilder` with its cache
//! directory resolved here) ends the launch as `Launched::Stopped`.
//!
//! Must not start QEMU or ssh itself (verdict-exec's `VmBooter` and
//! `SshBooter` do) or decide anything about the schedule.

use crate::error::CommandError;
use crate::launch::{HostSettings, Launched, Launcher, Stop};
use crate::machine::EnvironmentSource;
use crate::{BootRunner, EngineError, KernelBuilder, RunOutcome, StartOptions};
use std::path::{Path, PathBuf};
use verdict_exec::{
    Acceleration, AgentBinary, Booter, Cancel, SshBootOptions, SshBooter, VmBooter, VmOptions,
};
use verdict_model::{
    Accelerator, BootHostSettings, Experiment, HostBoot, ReconnectTimeout, RunId, SshSettings,
    VmSpec,
};
use verdict_store::Store;

/// The booter for `vm`: its kernel and command line change per boot.
/// `agent` is this binary, which every boot copies into the guest.
pub fn booter(vm: &VmSpec, mut agent: AgentBinary) -> Result<VmBooter, CommandError> {
    // A VM whose kernel is built gets each boot's image from the build.
    let mut options = VmOptions::new(vm.kernel.clone().unwrap_or_default(), vm.cmdline.clone());
    options.modules = vm.modules.clone();
    options.smp = vm.smp.clone();
    options.memory = vm.memory.clone();
    options.cpu = vm.cpu.clone();
    options.acceleration = match vm.accel {
        Accelerator::Auto => Acceleration::Auto,
        Accelerator::Tcg => Acceleration::Tcg,
        Accelerator::Kvm => Acceleration::Kvm,
    };
    options.boot_timeout = vm.boot_timeout;
    options.initrd = vm.initrd.clone();
    options.programs = vm
        .programs
        .iter()
        .map(|program| find_program(program))
        .collect::<Result<_, _>>()?;
    // Every boot copies the agent into its initramfs: read this process's
    // own executable, which stays what was hashed even when the file at
    // its path is replaced during a long run (an upgrade, a rebuild).
    agent.local_path = PathBuf::from(format!("/proc/{}/exe", std::process::id()));
    Ok(VmBooter::new(options, agent))
}

/// The directory of verdict's kernel cache: `$VERDICT_KERNEL_CACHE`, else
/// `${XDG_CACHE_HOME:-$HOME/.cache}/verdict/kernels`.
pub fn kernel_cache() -> PathBuf {
    if let Some(directory) =
        std::env::var_os("VERDICT_KERNEL_CACHE").filter(|value| !value.is_empty())
    {
        return PathBuf::from(directory);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("verdict").join("kernels")
}

/// Builds the kernels of boot levels with `build = { … }` on this machine,
/// into [`kernel_cache`], `make -jN` with N this machine's CPUs unless the
/// build says otherwise.
pub fn kernel_builder(cancel: Cancel) -> KernelBuilder {
    KernelBuilder {
        executor: Box::new(verdict_exec::SystemExecutor),
        cache: kernel_cache(),
        cancel,
        jobs: std::thread::available_parallelism().map_or(1, usize::from),
        environment: crate::kernel_build::MAKE_ENVIRONMENT
            .iter()
            .filter_map(|name| {
                std::env::var(name)
                    .ok()
                    .map(|value| (name.to_string(), value))
            })
            .collect(),
    }
}

/// `program` as an absolute path: as given when absolute, else the first
/// match on PATH (the guest gets it at the same path).
fn find_program(program: &str) -> Result<PathBuf, CommandError> {
    if Path::new(program).is_absolute() {
        return Ok(PathBuf::from(program));
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|directory| directory.join(program))
        .find(|candidate| candidate.is_file())
        .and_then(|path| std::fs::canonicalize(path).ok())
        .ok_or_else(|| {
            CommandError::input(format!(
                "`[target] vm` programs: `{program}` is not on PATH on this machine (the guest gets the host's programs)"
            ))
        })
}

/// Starts `options` on the VM of `[target] vm`.
pub(crate) fn start_vm(
    launcher: &Launcher<'_>,
    vm: &VmSpec,
    options: &StartOptions,
) -> Result<Launched, CommandError> {
    let mut booter = booter(vm, (launcher.agent)()?)?;
    run_booted(launcher, &mut booter, options, &[])
}

/// Continues run `run` of an experiment that boots its target with
/// `booter`: the VM, or the ssh host it was started on.
pub(crate) fn resume_booted(
    launcher: &Launcher<'_>,
    run: RunId,
    experiment: &Experiment,
    mut booter: Box<dyn Booter>,
) -> Result<Launched, CommandError> {
    let kernels = kernel_builder(launcher.cancel.clone());
    let mut runner = BootRunner {
        booter: booter.as_mut(),
        store: launcher.store,
        cancel: launcher.cancel.clone(),
        environment: &crate::machine::capture_local,
        boot_environment: &booted_environment,
        kernels: Some(&kernels),
    };
    let mut observer = launcher.progress.run(&experiment.primary_metric().name);
    ended(runner.resume(run, observer.as_mut()))
}

/// The annotation naming the ssh host a booted run runs on (what
/// `--resume` connects to again).
const BOOT_HOST: &str = "boot_host";

/// The booter for an ssh host of `[target] boot`.
fn host_booter(
    host: &str,
    ssh_config: Option<&Path>,
    reconnect_timeout: std::time::Duration,
    boot: &HostBoot,
    agent: AgentBinary,
) -> Result<SshBooter, CommandError> {
    if !verdict_exec::valid_host(host) {
        return Err(CommandError::input(format!(
            "`{host}` is not a host name (it must not start with `-` or contain spaces)"
        )));
    }
    let ssh = crate::machine::ssh_options(ssh_config, reconnect_timeout);
    Ok(SshBooter::new(
        host,
        ssh,
        agent,
        SshBootOptions {
            timeout: boot.timeout,
            power_cycle: boot.power_cycle.clone(),
        },
    ))
}

/// Starts `options` on the one ssh host of `target`, booting it per boot
/// level (`[target] boot`).
pub(crate) fn start_on_host(
    launcher: &Launcher<'_>,
    target: &HostSettings,
    boot: &HostBoot,
    options: &StartOptions,
) -> Result<Launched, CommandError> {
    let host = match target.hosts.as_slice() {
        [host] => host,
        [] => {
            return Err(CommandError::input(
                "`[target] boot` boots ssh hosts: give one with --host or `[target] hosts`",
            ));
        }
        _ => {
            return Err(CommandError::input(
                "`[target] boot`: a run boots one ssh host; give one --host per run",
            ));
        }
    };
    let ssh_config = match &target.ssh_config {
        Some(path) => Some(std::fs::canonicalize(path).map_err(|error| {
            CommandError::input(format!("--ssh-config {}: {error}", path.display()))
        })?),
        None => None,
    };
    let mut booter = host_booter(
        host,
        ssh_config.as_deref(),
        target.reconnect_timeout,
        boot,
        (launcher.agent)()?,
    )?;
    let settings = BootHostSettings {
        host: host.clone(),
        ssh: SshSettings {
            ssh_config,
            reconnect: ReconnectTimeout::of(target.reconnect_timeout),
        },
    };
    let annotation = serde_json::to_value(&settings).map_err(CommandError::internal)?;
    run_booted(launcher, &mut booter, options, &[(BOOT_HOST, annotation)])
}

/// The booter of the ssh host run `run` was started on, as its
/// `boot_host` annotation stored it (a missing or garbled one is an error
/// naming the run).
pub(crate) fn stored_host_booter(
    launcher: &Launcher<'_>,
    run: RunId,
    boot: &HostBoot,
) -> Result<SshBooter, CommandError> {
    let annotations = launcher
        .store
        .annotations(run)
        .map_err(CommandError::input)?;
    let Some(stored) = annotations.get(BOOT_HOST) else {
        return Err(CommandError::input(format!(
            "run {run} has no `{BOOT_HOST}` annotation: the host it booted is unknown"
        )));
    };
    let settings: BootHostSettings = serde_json::from_value(stored.clone()).map_err(|error| {
        CommandError::input(format!(
            "run {run}: the stored `{BOOT_HOST}` settings do not load: {error}"
        ))
    })?;
    host_booter(
        &settings.host,
        settings.ssh.ssh_config.as_deref(),
        settings.ssh.reconnect.duration(),
        boot,
        (launcher.agent)()?,
    )
}

/// The booted machine's environment, read through its target, with the
/// booted kernel's config: the machine's own (/proc/config.gz,
/// /boot/config-RELEASE), else for a VM the image's neighbour on this
/// machine (see `verdict_doctor::environment::image_neighbour_config`).
pub fn booted_environment(
    target: &dyn verdict_exec::Target,
    spec: &verdict_exec::BootSpec,
) -> crate::BootCapture {
    let image = spec
        .kernel
        .as_ref()
        .map(|kernel| std::fs::canonicalize(kernel).unwrap_or_else(|_| kernel.clone()));
    let source = EnvironmentSource::with_image(target, image);
    let environment = source.capture();
    crate::BootCapture {
        kernel_config: source.kernel_config(environment.kernel_release.as_deref()),
        environment,
    }
}

/// Starts `options` with `booter`.
fn run_booted(
    launcher: &Launcher<'_>,
    booter: &mut dyn Booter,
    options: &StartOptions,
    annotations: &[(&str, serde_json::Value)],
) -> Result<Launched, CommandError> {
    let kernels = kernel_builder(launcher.cancel.clone());
    let mut runner = BootRunner {
        booter,
        store: launcher.store,
        cancel: launcher.cancel.clone(),
        environment: &crate::machine::capture_local,
        boot_environment: &booted_environment,
        kernels: Some(&kernels),
    };
    let mut observer = launcher
        .progress
        .run(&options.experiment.primary_metric().name);
    ended(runner.start(options, annotations, observer.as_mut()))
}

/// How a booted run ended: a boot that failed for good and a kernel that
/// was not built stop it (its report shows why); any other error is the
/// launch's.
fn ended(result: Result<RunOutcome, EngineError>) -> Result<Launched, CommandError> {
    match result {
        Ok(summary) => Ok(Launched::Run(summary)),
        Err(EngineError::BootFailed {
            run,
            boot,
            level_key,
            message,
            ..
        }) => Ok(Launched::Stopped {
            run,
            stop: Stop::Boot {
                boot,
                level_key,
                message,
            },
        }),
        Err(EngineError::KernelBuild {
            run,
            levels,
            failure,
        }) => Ok(Launched::Stopped {
            run,
            stop: Stop::KernelBuild { levels, failure },
        }),
        Err(error) => Err(CommandError::input(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boot_that_failed_for_good_stops_the_run_and_other_errors_are_the_launch_s() {
        let failed = ended(Err(EngineError::BootFailed {
            run: RunId(4),
            boot: 2,
            level_key: "preempt=full".to_string(),
            message: "no agent".to_string(),
            console_tail: String::new(),
        }));
        match failed {
            Ok(Launched::Stopped {
                run,
                stop: Stop::Boot {
                    boot, level_key, ..
                },
            }) => {
                assert_eq!((run, boot), (RunId(4), 2));
                assert_eq!(level_key, "preempt=full");
            }
            other => panic!("expected a stopped run, got {other:?}"),
        }
        let error = ended(Err(EngineError::NeedsBooter { run: None })).unwrap_err();
        assert_eq!(error.exit_class(), verdict_model::ExitClass::Input);
    }
}
