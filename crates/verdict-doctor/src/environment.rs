//! The run environment recorded with every `verdict run`: a fast, pure
//! reading of /proc and /sys into `verdict_model::Environment`.
//!
//! What it does: reads the configuration files once, parses them, hashes the
//! kernel config (SHA-256 of /proc/config.gz decompressed, or of
//! /boot/config-RELEASE). Must not: run processes, sleep, or guess: a fact
//! that cannot be read stays `None`. It costs a few milliseconds (the config
//! decompression dominates).

use crate::facts;
use crate::files::{FileRead, SystemFiles};
use crate::parse::{cpuinfo, kconfig, stat, sysfs};
use crate::snapshot::{CONFIGURATION_PATHS, Snapshot};
use sha2::{Digest, Sha256};
use std::io::Read;
use verdict_model::Environment;

/// The kernel config text and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelConfig {
    pub source: String,
    pub text: String,
}

/// Decompresses gzip bytes; `None` when they are not valid gzip.
pub(crate) fn gunzip(bytes: &[u8]) -> Option<String> {
    let mut decoder = flate2::read::GzDecoder::new(bytes);
    let mut text = String::new();
    decoder.read_to_string(&mut text).ok()?;
    Some(text)
}

/// Reads the kernel config: /proc/config.gz (CONFIG_IKCONFIG_PROC), else
/// /boot/config-RELEASE for the running release.
pub fn read_kernel_config(files: &dyn SystemFiles, release: Option<&str>) -> Option<KernelConfig> {
    if let FileRead::Present(bytes) = files.read("/proc/config.gz") {
        if let Some(text) = gunzip(&bytes) {
            return Some(KernelConfig {
                source: "/proc/config.gz".to_string(),
                text,
            });
        }
    }
    let path = format!("/boot/config-{}", release?);
    let text = files.read(&path).text()?;
    Some(KernelConfig { source: path, text })
}

/// SHA-256 of the config text, lowercase hex.
pub fn config_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Captures the environment from the machine's files. Never fails; absent
/// or unreadable facts are `None`.
pub fn capture_environment(files: &dyn SystemFiles) -> Environment {
    capture_environment_with(files, &|release| read_kernel_config(files, release))
}

/// Like `capture_environment`, with the kernel config from `config` (given
/// the running kernel's release): a caller that captures the environment
/// many times in one process reads and hashes the config once.
pub fn capture_environment_with(
    files: &dyn SystemFiles,
    config: &dyn Fn(Option<&str>) -> Option<KernelConfig>,
) -> Environment {
    let mut snapshot = Snapshot::read(files, CONFIGURATION_PATHS);
    snapshot.add(files, &["/proc/stat"]);
    let release = snapshot.value("/proc/sys/kernel/osrelease");
    let config = config(release.as_deref());
    environment_from(&snapshot, config.as_ref())
}

/// The pure part of `capture_environment`.
pub fn environment_from(snapshot: &Snapshot, config: Option<&KernelConfig>) -> Environment {
    let cpu = snapshot
        .text("/proc/cpuinfo")
        .and_then(|text| cpuinfo::parse(&text));
    let options = config.map(|config| kconfig::parse_options(&config.text));
    Environment {
        hostname: snapshot.value("/proc/sys/kernel/hostname"),
        kernel_release: snapshot.value("/proc/sys/kernel/osrelease"),
        kernel_version: snapshot.value("/proc/sys/kernel/version"),
        architecture: snapshot.value("/proc/sys/kernel/arch"),
        kernel_cmdline: snapshot.value("/proc/cmdline"),
        cpu_model: cpu.as_ref().and_then(|cpu| cpu.model.clone()),
        cpu_flags: cpu.as_ref().and_then(|cpu| cpu.flags.clone()),
        cpu_count: cpu.as_ref().map(|cpu| cpu.processors),
        cpus_online: snapshot.value("/sys/devices/system/cpu/online"),
        smt: snapshot.value("/sys/devices/system/cpu/smt/control"),
        cpufreq_governor: snapshot.value("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        kernel_config_sha256: config.map(|config| config_sha256(&config.text)),
        kernel_config_source: config.map(|config| config.source.clone()),
        selinux: facts::selinux_mode(snapshot, options.as_ref()),
        preempt: facts::preemption(snapshot, options.as_ref()),
        clocksource: snapshot
            .value("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        load_average: snapshot
            .text("/proc/loadavg")
            .and_then(|text| sysfs::parse_loadavg(&text)),
        steal_ticks: snapshot
            .text("/proc/stat")
            .and_then(|text| stat::parse(&text))
            .map(|stat| stat.total.steal),
        virtualization: facts::virtualization(snapshot).map(|detection| detection.label()),
        // Known to whoever built the kernel (the engine's kernel builder),
        // not readable from /proc.
        kernel_build: None,
    }
}
