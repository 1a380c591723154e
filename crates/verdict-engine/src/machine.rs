//! The machine under test as the engine reaches it: the local machine or
//! an ssh host behind one `verdict_exec::Target`, the environment capture
//! that reads that machine's /proc and /sys through it (verdict-doctor's
//! `SystemFiles` over a target), and the connection to ssh hosts with this
//! binary as their agent. Must not start processes itself (the target
//! does) or decide anything about the run.

use std::path::Path;
use std::sync::OnceLock;
use verdict_doctor::environment::KernelConfig;
use verdict_doctor::{FileRead, SystemFiles};
use verdict_exec::Target;
use verdict_model::Environment;

use crate::error::CommandError;

/// A target's files as verdict-doctor reads them.
pub struct TargetFiles<'a> {
    pub target: &'a dyn Target,
}

impl std::fmt::Debug for TargetFiles<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TargetFiles")
            .field("target", &self.target.target_name())
            .finish()
    }
}

impl SystemFiles for TargetFiles<'_> {
    fn read(&self, path: &str) -> FileRead {
        FileRead::from_io(self.target.read_file(Path::new(path)))
    }

    fn list(&self, path: &str) -> Vec<String> {
        self.target
            .list_directory(Path::new(path))
            .unwrap_or_default()
    }
}

/// Captures a target's environment, reading its kernel config once (the
/// kernel does not change under a run, which records the environment at
/// its start and its end and stores the config itself).
pub struct EnvironmentSource<'a> {
    target: &'a dyn Target,
    config: OnceLock<Option<KernelConfig>>,
    /// The kernel image a VM booted, on this machine: its neighbour holds
    /// the config a guest without one of its own booted.
    image: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for EnvironmentSource<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("EnvironmentSource")
            .field("target", &self.target.target_name())
            .finish_non_exhaustive()
    }
}

impl<'a> EnvironmentSource<'a> {
    pub fn new(target: &'a dyn Target) -> Self {
        Self {
            target,
            config: OnceLock::new(),
            image: None,
        }
    }

    /// The source of a VM guest booted from `image` (a real path on this
    /// machine).
    pub fn with_image(target: &'a dyn Target, image: Option<std::path::PathBuf>) -> Self {
        Self {
            image,
            ..Self::new(target)
        }
    }

    /// The kernel config of the target's running kernel, when readable:
    /// the target's own, else the VM image's neighbour on this machine.
    pub fn kernel_config(&self, release: Option<&str>) -> Option<KernelConfig> {
        self.config
            .get_or_init(|| {
                verdict_doctor::environment::read_kernel_config(
                    &TargetFiles {
                        target: self.target,
                    },
                    release,
                )
                .or_else(|| {
                    let image = self.image.as_ref()?.to_str()?;
                    verdict_doctor::environment::image_neighbour_config(
                        &TargetFiles {
                            target: &verdict_exec::SystemExecutor,
                        },
                        image,
                        release?,
                    )
                })
            })
            .clone()
    }

    /// The target's running kernel release (`uname -r`), when readable.
    pub fn release(&self) -> Option<String> {
        TargetFiles {
            target: self.target,
        }
        .read("/proc/sys/kernel/osrelease")
        .value()
    }

    /// Everything a run records about the machine, read on the target.
    pub fn capture(&self) -> Environment {
        verdict_doctor::environment::capture_environment_with(
            &TargetFiles {
                target: self.target,
            },
            &|release| self.kernel_config(release),
        )
    }
}

/// This machine as a target, with its environment capture (the kernel
/// config read once per process).
pub fn local() -> &'static EnvironmentSource<'static> {
    static LOCAL: OnceLock<EnvironmentSource<'static>> = OnceLock::new();
    LOCAL.get_or_init(|| EnvironmentSource::new(&verdict_exec::SystemExecutor))
}

/// This machine's environment, as every run here records it (at its start
/// and its end).
pub fn capture_local() -> Environment {
    local().capture()
}

/// How verdict reaches an ssh host: `--ssh-config` and the time after
/// which a host that stopped answering is given up.
pub(crate) fn ssh_options(
    config_file: Option<&Path>,
    reconnect_timeout: std::time::Duration,
) -> verdict_exec::SshOptions {
    verdict_exec::SshOptions {
        config_file: config_file.map(Path::to_path_buf),
        host_down_after: reconnect_timeout,
        ..verdict_exec::SshOptions::default()
    }
}

/// Connects to every host at once (one thread each), with `agent` as the
/// agent binary; the first failure is
/// the error, naming its host, and nothing is measured.
pub fn connect_hosts(
    hosts: &[String],
    config_file: Option<&Path>,
    reconnect_timeout: std::time::Duration,
    agent: &verdict_exec::AgentBinary,
) -> Result<Vec<verdict_exec::SshTarget>, CommandError> {
    let options = ssh_options(config_file, reconnect_timeout);
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = hosts
            .iter()
            .map(|host| {
                let agent = agent.clone();
                let options = options.clone();
                scope.spawn(move || verdict_exec::SshTarget::connect(host, options, agent))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("connect thread"))
            .collect()
    });
    let mut targets = Vec::new();
    for result in results {
        targets.push(result.map_err(|error| CommandError::of_class(error.exit_class(), error))?);
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_exec::FakeExecutor;

    #[test]
    fn the_environment_is_read_through_the_target() {
        let fake = FakeExecutor::with_queue([]);
        fake.insert_file("/proc/sys/kernel/hostname", "far-away\n");
        fake.insert_file("/proc/sys/kernel/osrelease", "6.1.0-far\n");
        fake.insert_file("/boot/config-6.1.0-far", "CONFIG_PREEMPT=y\n");
        let source = EnvironmentSource::new(&fake);
        let environment = source.capture();
        assert_eq!(environment.hostname.as_deref(), Some("far-away"));
        assert_eq!(environment.kernel_release.as_deref(), Some("6.1.0-far"));
        assert_eq!(
            environment.kernel_config_source.as_deref(),
            Some("/boot/config-6.1.0-far")
        );
        // Not this machine's facts: the fake has no /proc/cpuinfo.
        assert_eq!(environment.cpu_count, None);
    }

    #[test]
    fn a_guest_without_a_config_gets_its_image_s_neighbour_on_this_machine() {
        let directory = tempfile::tempdir().unwrap();
        let image = directory.path().join("vmlinuz-6.1.0-guest");
        std::fs::write(&image, "not a kernel").unwrap();
        std::fs::write(
            directory.path().join("config-6.1.0-guest"),
            "CONFIG_PREEMPT_DYNAMIC=y\n",
        )
        .unwrap();
        let guest = FakeExecutor::with_queue([]);
        guest.insert_file("/proc/sys/kernel/osrelease", "6.1.0-guest\n");
        let source = EnvironmentSource::with_image(&guest, Some(image.clone()));
        let environment = source.capture();
        assert_eq!(
            environment.kernel_config_source,
            Some(format!(
                "controller:{}",
                directory.path().join("config-6.1.0-guest").display()
            ))
        );
        assert_eq!(
            source.kernel_config(Some("6.1.0-guest")).unwrap().text,
            "CONFIG_PREEMPT_DYNAMIC=y\n"
        );
        // Without the image, nothing is guessed.
        let bare = EnvironmentSource::new(&guest).capture();
        assert_eq!(bare.kernel_config_source, None);
    }
}
