//! The machine under test as the binary sees it: the local machine or an ssh
//! host behind one `verdict_exec::Target`, and the environment capture that
//! reads that machine's /proc and /sys through it (verdict-doctor's
//! `SystemFiles` over a target). Must not start processes itself (the target
//! does) or decide anything about the run.

use std::path::Path;
use std::sync::OnceLock;
use verdict_doctor::environment::KernelConfig;
use verdict_doctor::{FileRead, SystemFiles};
use verdict_exec::Target;
use verdict_model::Environment;

/// A target's files as verdict-doctor reads them.
pub(crate) struct TargetFiles<'a> {
    pub(crate) target: &'a dyn Target,
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
pub(crate) struct EnvironmentSource<'a> {
    target: &'a dyn Target,
    config: OnceLock<Option<KernelConfig>>,
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
    pub(crate) fn new(target: &'a dyn Target) -> Self {
        Self {
            target,
            config: OnceLock::new(),
        }
    }

    /// The kernel config of the target's running kernel, when readable.
    pub(crate) fn kernel_config(&self, release: Option<&str>) -> Option<KernelConfig> {
        self.config
            .get_or_init(|| {
                verdict_doctor::environment::read_kernel_config(
                    &TargetFiles {
                        target: self.target,
                    },
                    release,
                )
            })
            .clone()
    }

    /// The target's running kernel release (`uname -r`), when readable.
    pub(crate) fn release(&self) -> Option<String> {
        TargetFiles {
            target: self.target,
        }
        .read("/proc/sys/kernel/osrelease")
        .value()
    }

    /// Everything a run records about the machine, read on the target.
    pub(crate) fn capture(&self) -> Environment {
        verdict_doctor::environment::capture_environment_with(
            &TargetFiles {
                target: self.target,
            },
            &|release| self.kernel_config(release),
        )
    }
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
}
