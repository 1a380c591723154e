//! What ran where: the machine facts recorded with every run. Plain data;
//! capturing it (reading /proc and /sys) is verdict-doctor's job. A fact that
//! could not be read is `None` ("absent"), never a guess.

use crate::kernel_build::KernelBuild;
use crate::provenance::{BuildProvenance, CpuFeature, CpuIdentity};
use serde::{Deserialize, Serialize};

/// Facts about the machine and kernel at one moment (start or end of a run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Environment {
    /// Host name (`/proc/sys/kernel/hostname`).
    pub hostname: Option<String>,
    /// `uname -r` (`/proc/sys/kernel/osrelease`).
    pub kernel_release: Option<String>,
    /// `uname -v` (`/proc/sys/kernel/version`).
    pub kernel_version: Option<String>,
    /// Machine architecture, e.g. `x86_64`, `ppc64le`.
    pub architecture: Option<String>,
    /// Boot command line (`/proc/cmdline`).
    pub kernel_cmdline: Option<String>,
    /// CPU model name (`model name` or `cpu` in /proc/cpuinfo).
    pub cpu_model: Option<String>,
    /// CPU feature flags relevant to performance claims, as listed by the
    /// kernel (x86 `flags`, arm64 `Features`), space separated.
    pub cpu_flags: Option<String>,
    /// Number of possible CPUs listed in /proc/cpuinfo.
    pub cpu_count: Option<u32>,
    /// `/sys/devices/system/cpu/online`, e.g. `0-7`.
    pub cpus_online: Option<String>,
    /// `/sys/devices/system/cpu/smt/control`: on, off, forceoff, notsupported.
    pub smt: Option<String>,
    /// cpufreq governor of cpu0, when cpufreq exists.
    pub cpufreq_governor: Option<String>,
    /// SHA-256 of the kernel config (/proc/config.gz decompressed, or
    /// /boot/config-RELEASE).
    pub kernel_config_sha256: Option<String>,
    /// Where the config was read from.
    pub kernel_config_source: Option<String>,
    /// SELinux mode: enforcing, permissive, disabled (absent when SELinux is
    /// not built in).
    pub selinux: Option<String>,
    /// Preemption mode from /sys/kernel/debug/sched/preempt, e.g. `full`.
    pub preempt: Option<String>,
    /// Clock source in use.
    pub clocksource: Option<String>,
    /// 1-, 5- and 15-minute load averages.
    pub load_average: Option<[f64; 3]>,
    /// Cumulative steal time in clock ticks over all CPUs (/proc/stat).
    pub steal_ticks: Option<u64>,
    /// Virtualization or container: e.g. `kvm`, `powervm`, `container:docker`,
    /// `kvm+container:docker`; `none` when /proc/cpuinfo was readable and
    /// nothing was detected; absent when it could not be read.
    pub virtualization: Option<String>,
    /// The CPU's identity: vendor, family, model, stepping, microcode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_identity: Option<CpuIdentity>,
    /// The architecture's short list of performance-relevant CPU
    /// features, each present or not (empty when /proc/cpuinfo was not
    /// read or the architecture has no list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_features: Vec<CpuFeature>,
    /// `/proc/version` as the kernel prints it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proc_version: Option<String>,
    /// The compiler and linker that built the running kernel, from
    /// `/proc/version` (e.g. `gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld
    /// (GNU Binutils for Debian) 2.40`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_compiler: Option<String>,
    /// `/etc/machine-id`: the installation's identity (two ssh "hosts"
    /// with the same one are one machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// `/proc/sys/kernel/random/boot_id`: new at every boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
    /// The address the machine was reached at over ssh (the server side
    /// of its `SSH_CONNECTION`); absent for a machine not reached by ssh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_address: Option<String>,
    /// How the measured program was built (a bisection's commit, its
    /// build command and compiler), when verdict built it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildProvenance>,
    /// A booted kernel that verdict built from source: what it is
    /// (commit, patches, config, compiler, make arguments), recorded with
    /// the boot; absent for every other environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_build: Option<KernelBuild>,
}
