//! Every run from start to end, for `run`, `ab` and `check`, on every
//! placement: `TargetSpec::placement` (verdict-model) decides once where a
//! new run measures (this machine, ssh hosts, a VM verdict boots, an ssh
//! host verdict boots) from the experiment's `[target]` and the hosts the
//! command line resolved; that choice is stored with the run and picks its
//! launcher. [`start`]
//! hands a new run to that launcher, [`resume`] a stored one to the
//! launcher its run was started with (its host group, the target its
//! experiment boots, or this machine). The launchers connect to the hosts
//! (this binary as their agent), boot the targets (`booted`) and measure
//! through the engine; what they tell as they go goes to the caller's
//! [`LaunchProgress`], and how the run ended comes back as [`Launched`],
//! which the caller reports.
//!
//! Must not print, or render a report.

use crate::commit::RunCommit;
use crate::error::CommandError;
use crate::hosts::{HostPart, HostWork, run_on_hosts};
use crate::machine::{EnvironmentSource, TargetFiles, connect_hosts};
use crate::runner::{Engine, EngineError, Observer, RunOutcome, StartOptions};
use std::path::PathBuf;
use std::time::Duration;
use verdict_exec::{AgentBinary, Cancel, SshTarget, Target};
use verdict_model::{
    BuildFailure, Experiment, HostGroupSettings, Placement, ReconnectTimeout, RunId, RunStatus,
    SshSettings, TargetSpec,
};
use verdict_store::{Database, Location, Store};

/// The ssh hosts a run measures on and how they are reached: `--host` (or
/// the file's `[target] hosts`), `--ssh-config` and the reconnect timeout.
#[derive(Debug, Clone, Default)]
pub struct HostSettings {
    pub hosts: Vec<String>,
    pub ssh_config: Option<PathBuf>,
    pub reconnect_timeout: Duration,
}

/// What a launch tells as it goes; the caller shows it.
pub trait LaunchProgress: Sync {
    /// The observer of a run on one machine whose primary metric is
    /// `metric`.
    fn run(&self, metric: &str) -> Box<dyn Observer>;
    /// The observer of host `host`'s run of a host group.
    fn host(&self, host: &str) -> Box<dyn Observer + Send>;
    /// Something the user should know before trusting the result.
    fn warning(&self, message: &str);
    /// What the launch is doing (which runs it resumes).
    fn note(&self, message: &str);
}

/// The collaborators of a launch.
pub struct Launcher<'a> {
    pub store: &'a Database,
    /// Where `store` is: each host's thread opens its own connection.
    pub location: &'a Location,
    pub cancel: Cancel,
    pub progress: &'a dyn LaunchProgress,
    /// This binary as the agent of ssh hosts and VM guests (computed only
    /// when a launch needs it).
    pub agent: &'a (dyn Fn() -> Result<AgentBinary, CommandError> + Sync),
}

impl std::fmt::Debug for Launcher<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Launcher").finish_non_exhaustive()
    }
}

/// A new run as the command line resolved it.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// What to run; its `placement` picks the launcher.
    pub options: StartOptions,
    pub hosts: HostSettings,
    /// The quick doctor measurement to store with a run on this machine.
    pub doctor: Option<serde_json::Value>,
    /// The commit the run measures (`verdict history`).
    pub commit: Option<RunCommit>,
}

/// How a launch ended.
#[derive(Debug)]
pub enum Launched {
    /// One run on one machine (this machine, a VM, a booted host) ended:
    /// complete, or interrupted.
    Run(RunOutcome),
    /// A booted run stopped for good; its report shows why.
    Stopped { run: RunId, stop: Stop },
    /// One run per host of a host group, in the hosts' order.
    Group(Vec<HostEnd>),
}

/// Why a booted run stopped before its end.
#[derive(Debug)]
pub enum Stop {
    /// A boot failed after its retries (`on_boot_failure = "stop"`).
    Boot {
        boot: u32,
        level_key: String,
        message: String,
    },
    /// The kernel of boot levels `levels` was not built.
    KernelBuild {
        levels: String,
        failure: BuildFailure,
    },
}

/// How one host's part of a host group ended.
#[derive(Debug)]
pub struct HostEnd {
    pub host: String,
    pub result: Result<RunOutcome, EngineError>,
}

/// Starts `run` where its placement says.
pub fn start(launcher: &Launcher<'_>, run: NewRun) -> Result<Launched, CommandError> {
    let NewRun {
        options,
        hosts,
        doctor,
        commit,
    } = run;
    let launched = match (&options.experiment.target, options.placement) {
        (TargetSpec::Vm(vm), _) => crate::booted::start_vm(launcher, vm, &options)?,
        (TargetSpec::BootedHost { boot, .. }, _) => {
            crate::booted::start_on_host(launcher, &hosts, boot, &options)?
        }
        (_, Placement::Hosts) => return start_on_hosts(launcher, &hosts, options),
        (_, _) => {
            let engine = local_engine(launcher.store, launcher.cancel.clone());
            let summary = start_on(
                &engine,
                &options,
                crate::machine::local(),
                doctor,
                launcher.progress,
            )?;
            crate::commit::record_commit(launcher.store, summary.run, commit)
                .map_err(CommandError::internal)?;
            return Ok(Launched::Run(summary));
        }
    };
    // A booted run ends inside its launcher (a failed boot still has a
    // report); the commit goes with the run it created.
    if let Some(latest) = launcher
        .store
        .latest_run()
        .map_err(CommandError::internal)?
    {
        crate::commit::record_commit(launcher.store, latest.id, commit)
            .map_err(CommandError::internal)?;
    }
    Ok(launched)
}

/// Continues stored run `run` where it measured: its host group, the
/// target its experiment boots, or this machine.
pub fn resume(launcher: &Launcher<'_>, run: RunId) -> Result<Launched, CommandError> {
    let store = launcher.store;
    if let Some(group) = store
        .annotations(run)
        .map_err(CommandError::input)?
        .remove("target")
    {
        return resume_group(launcher, run, &group);
    }
    let record = store.run(run).map_err(CommandError::input)?;
    refuse_if_still_running(store, record.id, record.status)?;
    let experiment: Experiment =
        serde_json::from_str(&record.experiment_json).map_err(CommandError::internal)?;
    experiment
        .check_shell_splices(&format!("run {run}"))
        .map_err(CommandError::input)?;
    match &experiment.target {
        TargetSpec::Vm(vm) => {
            let booter = Box::new(crate::booted::booter(vm, (launcher.agent)()?)?);
            crate::booted::resume_booted(launcher, run, &experiment, booter)
        }
        TargetSpec::BootedHost { boot, .. } => {
            let booter = Box::new(crate::booted::stored_host_booter(launcher, run, boot)?);
            crate::booted::resume_booted(launcher, run, &experiment, booter)
        }
        TargetSpec::Local | TargetSpec::Hosts(_) => {
            let engine = local_engine(store, launcher.cancel.clone());
            let mut observer = launcher.progress.run(&experiment.primary_metric().name);
            let summary = engine
                .resume(run, observer.as_mut())
                .map_err(CommandError::input)?;
            Ok(Launched::Run(summary))
        }
    }
}

/// The engine on this machine: real processes, the given store, the
/// environment captured from /proc and /sys.
pub fn local_engine(store: &dyn Store, cancel: Cancel) -> Engine<'_> {
    Engine {
        executor: &verdict_exec::SystemExecutor,
        store,
        cancel,
        environment: &crate::machine::capture_local,
    }
}

/// Starts a run on the one machine of `engine` (this machine, or the host
/// `verdict check --host` measures on), whose environment `source` reads:
/// stores that machine's kernel config, and the doctor report when one
/// was measured.
pub fn start_on(
    engine: &Engine<'_>,
    options: &StartOptions,
    source: &EnvironmentSource<'_>,
    doctor: Option<serde_json::Value>,
    progress: &dyn LaunchProgress,
) -> Result<RunOutcome, CommandError> {
    let mut observer = progress.run(&options.experiment.primary_metric().name);
    let summary = engine
        .start(options, observer.as_mut())
        .map_err(CommandError::input)?;
    store_kernel_config(engine.store, source, progress);
    if let Some(doctor) = doctor {
        engine
            .store
            .put_annotation(summary.run, "doctor", &doctor)
            .map_err(CommandError::internal)?;
    }
    Ok(summary)
}

/// Keep the running kernel's config (for `compare --config-diff`), when it
/// is readable: once per distinct config in the database, under the
/// SHA-256 the run's environment records. A failure is a warning.
pub fn store_kernel_config(
    store: &dyn Store,
    source: &EnvironmentSource<'_>,
    progress: &dyn LaunchProgress,
) {
    let release = source.release();
    if let Some(config) = source.kernel_config(release.as_deref()) {
        let sha256 = verdict_doctor::environment::config_sha256(&config.text);
        if let Err(error) = store.put_kernel_config(&sha256, &config.source, &config.text) {
            progress.warning(&format!("could not store the kernel config: {error}"));
        }
    }
}

/// Refuses to resume `run` while another live verdict process still
/// executes it (the `process` annotation a running run carries).
pub fn refuse_if_still_running(
    store: &dyn Store,
    run: RunId,
    status: RunStatus,
) -> Result<(), CommandError> {
    if status == RunStatus::Running
        && let Some(pid) = store
            .annotations(run)
            .map_err(CommandError::internal)?
            .get("process")
            .and_then(|process| process["pid"].as_u64())
        && is_live_verdict(pid)
    {
        return Err(CommandError::input(format!(
            "run {run} is still being executed by verdict process {pid}; stop it first (kill -INT {pid}) or let it finish"
        )));
    }
    Ok(())
}

/// Whether `pid` is a live verdict process other than this one (a killed
/// run's process is gone, or its pid reused by something else).
pub fn is_live_verdict(pid: u64) -> bool {
    pid != u64::from(std::process::id())
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|name| name.trim() == "verdict")
}

/// Starts `options` on every host of `hosts`, each its own run of one
/// group. Nothing is measured before every host is reachable and has a
/// usable agent.
fn start_on_hosts(
    launcher: &Launcher<'_>,
    hosts: &HostSettings,
    mut options: StartOptions,
) -> Result<Launched, CommandError> {
    let agent = (launcher.agent)()?;
    let connected = connect_hosts(
        &hosts.hosts,
        hosts.ssh_config.as_deref(),
        hosts.reconnect_timeout,
        &agent,
    )?;
    warn_of_shared_machines(&connected, launcher.progress);
    // A workdir on this machine means nothing on another one: the agent
    // runs in the remote login directory unless the experiment names an
    // absolute one.
    if options.kind == verdict_model::RunKind::Ab {
        options.experiment.workdir = None;
    }
    let group = HostGroupSettings {
        hosts: hosts.hosts.clone(),
        ssh: SshSettings {
            ssh_config: hosts.ssh_config.clone(),
            reconnect: ReconnectTimeout::of(hosts.reconnect_timeout),
        },
        group: format!("{}-{}", options.seed, std::process::id()),
        host: String::new(),
    };
    let work = connected
        .iter()
        .enumerate()
        .map(|(index, target)| {
            let mut host_options = options.clone();
            // Each host its own randomized order, derived from the recorded seed.
            host_options.seed = options.seed.wrapping_add(index as u64);
            let mut settings = group.clone();
            settings.host = target.host().to_string();
            let annotation = serde_json::to_value(&settings).map_err(CommandError::internal)?;
            Ok(HostWork::Start {
                options: Box::new(host_options),
                annotations: vec![("target".to_string(), annotation)],
            })
        })
        .collect::<Result<_, CommandError>>()?;
    execute(launcher, &connected, work)
}

/// `hosts a and b are one machine (same machine id ...): ...`.
pub fn shared_machine_message(shared: &verdict_doctor::environment::SharedMachine) -> String {
    format!(
        "hosts {} and {} are one machine ({}): their runs compete for its CPUs and are not independent evidence",
        shared.first,
        shared.second,
        shared.reasons.join(", ")
    )
}

/// Before measuring: a warning for every two hosts that are one machine
/// (the same machine id, boot id or address), naming why. Their runs
/// would compete for one machine's CPUs, and their results would count
/// as two machines' evidence.
fn warn_of_shared_machines(connected: &[SshTarget], progress: &dyn LaunchProgress) {
    let identities: Vec<(String, verdict_model::Environment)> = connected
        .iter()
        .map(|target| {
            (
                target.host().to_string(),
                verdict_doctor::environment::capture_identity(&TargetFiles { target }),
            )
        })
        .collect();
    for shared in verdict_doctor::environment::shared_machines(&identities) {
        progress.warning(&shared_machine_message(&shared));
    }
}

/// Continues the unfinished runs of the host group `run` belongs to.
fn resume_group(
    launcher: &Launcher<'_>,
    run: RunId,
    annotation: &serde_json::Value,
) -> Result<Launched, CommandError> {
    let store = launcher.store;
    let settings: HostGroupSettings =
        serde_json::from_value(annotation.clone()).map_err(|error| {
            CommandError::input(format!(
                "run {run}: the stored `target` settings of its host group do not load: {error}"
            ))
        })?;
    let members = crate::host_group::group_runs(store, &annotation["group"])
        .map_err(CommandError::internal)?;
    let unfinished: Vec<_> = members
        .iter()
        .filter(|(summary, _)| summary.status != RunStatus::Complete)
        .collect();
    for (summary, _) in &unfinished {
        refuse_if_still_running(store, summary.id, summary.status)?;
    }
    if unfinished.is_empty() {
        return Err(CommandError::input(format!(
            "run {run} and the other runs of its host group are complete; nothing to resume"
        )));
    }
    let hosts: Vec<String> = unfinished.iter().map(|(_, host)| host.clone()).collect();
    launcher.progress.note(&format!(
        "resuming {} on {}",
        unfinished
            .iter()
            .map(|(summary, _)| format!("run {}", summary.id))
            .collect::<Vec<_>>()
            .join(", "),
        hosts.join(", ")
    ));
    let agent = (launcher.agent)()?;
    let connected = connect_hosts(
        &hosts,
        settings.ssh.ssh_config.as_deref(),
        settings.ssh.reconnect.duration(),
        &agent,
    )?;
    let work = unfinished
        .iter()
        .map(|(summary, _)| HostWork::Resume(summary.id))
        .collect();
    execute(launcher, &connected, work)
}

/// Runs every connected host's work at once; stores the kernel config of
/// every host whose part ended.
fn execute(
    launcher: &Launcher<'_>,
    connected: &[SshTarget],
    work: Vec<HostWork>,
) -> Result<Launched, CommandError> {
    let sources: Vec<_> = connected
        .iter()
        .map(|target| EnvironmentSource::new(target))
        .collect();
    let captures: Vec<Box<dyn Fn() -> verdict_model::Environment + Sync + '_>> = sources
        .iter()
        .map(|source| {
            Box::new(move || source.capture()) as Box<dyn Fn() -> verdict_model::Environment + Sync>
        })
        .collect();
    let parts: Vec<(HostPart<'_>, HostWork)> = connected
        .iter()
        .zip(&captures)
        .zip(work)
        .map(|((target, capture), host_work)| {
            (
                HostPart {
                    target: target as &dyn Target,
                    environment: &**capture,
                },
                host_work,
            )
        })
        .collect();
    let location = launcher.location.clone();
    let open = move || -> Result<Box<dyn Store>, verdict_store::StoreError> {
        Ok(Box::new(Database::open(&location)?))
    };
    let results = run_on_hosts(parts, &open, &launcher.cancel, &|host| {
        launcher.progress.host(host)
    });
    for (source, result) in sources.iter().zip(&results) {
        if result.is_ok() {
            store_kernel_config(launcher.store, source, launcher.progress);
        }
    }
    Ok(Launched::Group(
        connected
            .iter()
            .zip(results)
            .map(|(target, result)| HostEnd {
                host: target.host().to_string(),
                result,
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_never_blocks_its_own_resume() {
        assert!(!is_live_verdict(u64::from(std::process::id())));
    }
}
