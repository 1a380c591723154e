//! `verdict run` of an experiment whose target verdict boots: `[target] vm`
//! (a QEMU verdict starts) or an ssh host with `[target] boot` (kexec, or a
//! level's hook and a reboot). The boot is the unit of the schedule. Builds
//! the booter from the file's settings (host programs found on PATH, this
//! executable as the agent), hands it to the engine's `BootRunner`, prints
//! the report, and maps a boot that failed for good (`on_boot_failure =
//! "stop"`) to exit 1 after the report, which shows the boot's console tail
//! (an ssh host's: the boot's log of steps); likewise a kernel that could
//! not be built (`build = { … }`; the engine's `KernelBuilder`, whose cache
//! directory is resolved here).
//!
//! Must not start QEMU or ssh itself (verdict-exec's `VmBooter` and
//! `SshBooter` do) or decide anything about the schedule.

use crate::common::DbArgs;
use crate::error::CliError;
use crate::progress::Progress;
use crate::run_report::{ReportOptionsArgs, print_run_report};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use verdict_engine::{BootRunner, EngineError, KernelBuilder, RunOutcome, StartOptions};
use verdict_exec::{
    Acceleration, Booter, Cancel, SshBootOptions, SshBooter, SshOptions, VmBooter, VmOptions,
};
use verdict_model::{
    Accelerator, BootHostSettings, Experiment, HostBoot, ReconnectTimeout, RunId, SshSettings,
    VmSpec,
};
use verdict_store::Store;

/// The booter for `vm`: its kernel and command line change per boot.
pub(crate) fn booter(vm: &VmSpec) -> Result<VmBooter, CliError> {
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
    let mut agent = crate::target::own_identity()?;
    // Every boot copies the agent into its initramfs: read this process's
    // own executable, which stays what was hashed even when the file at
    // its path is replaced during a long run (an upgrade, a rebuild).
    agent.local_path = PathBuf::from(format!("/proc/{}/exe", std::process::id()));
    Ok(VmBooter::new(options, agent))
}

/// The directory of verdict's kernel cache: `$VERDICT_KERNEL_CACHE`, else
/// `${XDG_CACHE_HOME:-$HOME/.cache}/verdict/kernels`.
pub(crate) fn kernel_cache() -> PathBuf {
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
pub(crate) fn kernel_builder(cancel: Cancel) -> KernelBuilder {
    KernelBuilder {
        executor: Box::new(verdict_exec::SystemExecutor),
        cache: kernel_cache(),
        cancel,
        jobs: std::thread::available_parallelism().map_or(1, usize::from),
        environment: verdict_engine::kernel_build::MAKE_ENVIRONMENT
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
fn find_program(program: &str) -> Result<PathBuf, CliError> {
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
            CliError::input(format!(
                "`[target] vm` programs: `{program}` is not on PATH on this machine (the guest gets the host's programs)"
            ))
        })
}

/// Starts `options` on the VM of `[target] vm`.
pub(crate) fn start_vm(
    store: &dyn Store,
    vm: &VmSpec,
    options: &StartOptions,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let mut booter = booter(vm)?;
    run_booted(store, &mut booter, options, &[], db, report, cancel)
}

/// Continues run `run` of an experiment that boots its target with
/// `booter`: the VM, or the ssh host it was started on.
pub(crate) fn resume_booted(
    store: &dyn Store,
    run: RunId,
    experiment: &Experiment,
    mut booter: Box<dyn Booter>,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let kernels = kernel_builder(cancel.clone());
    let mut runner = BootRunner {
        booter: booter.as_mut(),
        store,
        cancel,
        environment: &crate::common::capture_environment,
        boot_environment: &booted_environment,
        kernels: Some(&kernels),
    };
    let mut progress = Progress::new(&experiment.primary_metric().name);
    let result = runner.resume(run, &mut progress);
    finish(store, result, db, report)
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
) -> Result<SshBooter, CliError> {
    if !verdict_exec::valid_host(host) {
        return Err(CliError::input(format!(
            "`{host}` is not a host name (it must not start with `-` or contain spaces)"
        )));
    }
    let ssh = SshOptions {
        config_file: ssh_config.map(Path::to_path_buf),
        host_down_after: reconnect_timeout,
        ..SshOptions::default()
    };
    Ok(SshBooter::new(
        host,
        ssh,
        crate::target::own_identity()?,
        SshBootOptions {
            timeout: boot.timeout,
            power_cycle: boot.power_cycle.clone(),
        },
    ))
}

/// Starts `options` on the one ssh host of `target`, booting it per boot
/// level (`[target] boot`).
pub(crate) fn start_on_host(
    store: &dyn Store,
    target: &crate::common::TargetArgs,
    boot: &HostBoot,
    options: &StartOptions,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let host = match target.hosts.as_slice() {
        [host] => host,
        [] => {
            return Err(CliError::input(
                "`[target] boot` boots ssh hosts: give one with --host or `[target] hosts`",
            ));
        }
        _ => {
            return Err(CliError::input(
                "`[target] boot`: a run boots one ssh host; give one --host per run",
            ));
        }
    };
    let ssh_config = match &target.ssh_config {
        Some(path) => Some(std::fs::canonicalize(path).map_err(|error| {
            CliError::input(format!("--ssh-config {}: {error}", path.display()))
        })?),
        None => None,
    };
    let mut booter = host_booter(host, ssh_config.as_deref(), target.reconnect_timeout, boot)?;
    let settings = BootHostSettings {
        host: host.clone(),
        ssh: SshSettings {
            ssh_config,
            reconnect: ReconnectTimeout::of(target.reconnect_timeout),
        },
    };
    let annotation = serde_json::to_value(&settings).map_err(CliError::internal)?;
    run_booted(
        store,
        &mut booter,
        options,
        &[(BOOT_HOST, annotation)],
        db,
        report,
        cancel,
    )
}

/// The booter of the ssh host run `run` was started on, as its
/// `boot_host` annotation stored it (a missing or garbled one is an error
/// naming the run).
pub(crate) fn stored_host_booter(
    store: &dyn Store,
    run: RunId,
    boot: &HostBoot,
) -> Result<SshBooter, CliError> {
    let annotations = store.annotations(run).map_err(CliError::input)?;
    let Some(stored) = annotations.get(BOOT_HOST) else {
        return Err(CliError::input(format!(
            "run {run} has no `{BOOT_HOST}` annotation: the host it booted is unknown"
        )));
    };
    let settings: BootHostSettings = serde_json::from_value(stored.clone()).map_err(|error| {
        CliError::input(format!(
            "run {run}: the stored `{BOOT_HOST}` settings do not load: {error}"
        ))
    })?;
    host_booter(
        &settings.host,
        settings.ssh.ssh_config.as_deref(),
        settings.ssh.reconnect.duration(),
        boot,
    )
}

/// The booted machine's environment, read through its target, with the
/// booted kernel's config: the machine's own (/proc/config.gz,
/// /boot/config-RELEASE), else for a VM the image's neighbour on this
/// machine (see `verdict_doctor::environment::image_neighbour_config`).
pub(crate) fn booted_environment(
    target: &dyn verdict_exec::Target,
    spec: &verdict_exec::BootSpec,
) -> verdict_engine::BootCapture {
    let image = spec
        .kernel
        .as_ref()
        .map(|kernel| std::fs::canonicalize(kernel).unwrap_or_else(|_| kernel.clone()));
    let source = crate::target::EnvironmentSource::with_image(target, image);
    let environment = source.capture();
    verdict_engine::BootCapture {
        kernel_config: source.kernel_config(environment.kernel_release.as_deref()),
        environment,
    }
}

/// Starts `options` with `booter`.
fn run_booted(
    store: &dyn Store,
    booter: &mut dyn Booter,
    options: &StartOptions,
    annotations: &[(&str, serde_json::Value)],
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let kernels = kernel_builder(cancel.clone());
    let mut runner = BootRunner {
        booter,
        store,
        cancel,
        environment: &crate::common::capture_environment,
        boot_environment: &booted_environment,
        kernels: Some(&kernels),
    };
    let mut progress = Progress::new(&options.experiment.primary_metric().name);
    let result = runner.start(options, annotations, &mut progress);
    finish(store, result, db, report)
}

fn finish(
    store: &dyn Store,
    result: Result<RunOutcome, EngineError>,
    db: &DbArgs,
    report: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    match result {
        Ok(summary) => crate::launch::finish(store, &summary, db, report),
        Err(EngineError::BootFailed {
            run,
            boot,
            level_key,
            message,
            ..
        }) => {
            // The report first: it shows the failed boot's console tail.
            print_run_report(store, run, report)?;
            eprintln!(
                "verdict: run {run} stopped: boot {boot} ({level_key}) failed: {message} (on_boot_failure = \"stop\"; `verdict run --resume {run}` boots it again)"
            );
            Ok(ExitCode::from(verdict_model::ExitClass::Finding))
        }
        Err(EngineError::KernelBuild {
            run,
            levels,
            failure,
        }) => {
            // The report first: it shows the failed build and its log's end.
            print_run_report(store, run, report)?;
            eprintln!(
                "verdict: run {run} stopped before measuring: the kernel of {levels} was not built: {failure} (`verdict run --resume {run}` builds it again)"
            );
            Ok(ExitCode::from(verdict_model::ExitClass::Finding))
        }
        Err(error) => Err(CliError::input(error)),
    }
}
