//! `verdict run` of an experiment with `[target] vm`: the boot is the unit
//! of the schedule. Builds the VM booter from the file's settings (host
//! programs found on PATH, this executable as the agent), hands it to the
//! engine's `BootRunner`, prints the report, and maps a boot that failed
//! for good (`on_boot_failure = "stop"`) to exit 1 after the report, which
//! shows the boot's console tail.
//!
//! Must not start QEMU itself (verdict-exec's `VmBooter` does) or decide
//! anything about the schedule.

use crate::common::DbArgs;
use crate::error::CliError;
use crate::progress::Progress;
use crate::run_report::{ReportOptionsArgs, print_run_report};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use verdict_engine::{BootRunner, EngineError, RunSummary, StartOptions};
use verdict_exec::{Acceleration, Cancel, VmBooter, VmOptions};
use verdict_model::{Accelerator, Experiment, RunId, VmSpec};
use verdict_store::Store;

/// The booter for `vm`: its kernel and command line change per boot.
fn booter(vm: &VmSpec) -> Result<VmBooter, CliError> {
    let mut options = VmOptions::new(&vm.kernel, vm.cmdline.clone());
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

/// Starts `options` on the VM its experiment names.
pub(crate) fn start_on_vm(
    store: &dyn Store,
    options: &StartOptions,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let vm = options
        .experiment
        .vm
        .as_ref()
        .expect("the caller checked [target] vm");
    let mut booter = booter(vm)?;
    let mut runner = BootRunner {
        booter: &mut booter,
        store,
        cancel,
        environment: &crate::common::capture_environment,
    };
    let mut progress = Progress::new(&options.experiment.primary_metric().name);
    let result = runner.start(options, &[], &mut progress);
    finish(store, result, db, report)
}

/// Continues run `run` of an experiment with `[target] vm`.
pub(crate) fn resume_on_vm(
    store: &dyn Store,
    run: RunId,
    experiment: &Experiment,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let vm = experiment
        .vm
        .as_ref()
        .expect("the caller checked [target] vm");
    let mut booter = booter(vm)?;
    let mut runner = BootRunner {
        booter: &mut booter,
        store,
        cancel,
        environment: &crate::common::capture_environment,
    };
    let mut progress = Progress::new(&experiment.primary_metric().name);
    let result = runner.resume(run, &mut progress);
    finish(store, result, db, report)
}

fn finish(
    store: &dyn Store,
    result: Result<RunSummary, EngineError>,
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
            Ok(ExitCode::from(1))
        }
        Err(error) => Err(CliError::input(error)),
    }
}
