//! The run environment recorded with every `verdict run`: a fast, pure
//! reading of /proc and /sys into `verdict_model::Environment`.
//!
//! What it does: reads the configuration files once, parses them, hashes the
//! kernel config (SHA-256 of /proc/config.gz decompressed, or of
//! /boot/config-RELEASE), and records the provenance a maintainer asks for:
//! the CPU's identity and performance-relevant features, `/proc/version`
//! and the compiler it names, the machine and boot ids, and the address an
//! ssh session reached the machine at (only that, from the reading
//! process's own environment block). Must not: run processes, sleep, or
//! guess: a fact that cannot be read stays `None`. It costs a few
//! milliseconds (the config decompression dominates).

use crate::facts;
use crate::files::{FileRead, SystemFiles};
use crate::parse::{cpuinfo, identity, kconfig, stat, sysfs};
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

/// The config of a kernel image that booted a VM, read on the machine
/// that holds the image (the controller), for a guest that has neither
/// /proc/config.gz nor /boot/config-RELEASE: the image's neighbour
/// `config-RELEASE` (Debian's /boot/config-R beside /boot/vmlinuz-R), or
/// for an image inside a kernel tree (`TREE/arch/ARCH/boot/bzImage`) the
/// tree's `.config`. `image` must be the image's real path (symbolic links
/// resolved: /vmlinuz is a link into /boot). The source names the
/// controller.
pub fn image_neighbour_config(
    files: &dyn SystemFiles,
    image: &str,
    release: &str,
) -> Option<KernelConfig> {
    let (directory, _) = image.rsplit_once('/')?;
    let mut candidates = vec![format!("{directory}/config-{release}")];
    // TREE/arch/ARCH/boot/IMAGE: the tree's .config.
    let parts: Vec<&str> = directory.rsplitn(4, '/').collect();
    if let [boot, _, arch, tree] = parts.as_slice()
        && *boot == "boot"
        && *arch == "arch"
    {
        candidates.push(format!("{tree}/.config"));
    }
    candidates.into_iter().find_map(|path| {
        let text = files.read(&path).text()?;
        Some(KernelConfig {
            source: format!("controller:{path}"),
            text,
        })
    })
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
    let mut environment = environment_from(&snapshot, config.as_ref());
    // Read apart from the snapshot: only the ssh address is kept of it.
    if let FileRead::Present(environ) = files.read("/proc/self/environ") {
        environment.ssh_address = identity::ssh_server_address(&environ);
    }
    environment
}

/// Only the facts that tell machines apart (machine id, boot id, the
/// address ssh reached the machine at): three small reads, for the check
/// before measuring on several hosts.
pub fn capture_identity(files: &dyn SystemFiles) -> Environment {
    Environment {
        machine_id: files.read("/etc/machine-id").value(),
        boot_id: files.read("/proc/sys/kernel/random/boot_id").value(),
        ssh_address: match files.read("/proc/self/environ") {
            FileRead::Present(environ) => identity::ssh_server_address(&environ),
            _ => None,
        },
        ..Environment::default()
    }
}

/// Two hosts that are one machine, and why that is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedMachine {
    pub first: String,
    pub second: String,
    /// `same machine id 3d1219c7...`, `same boot id ...`, `same address
    /// 127.0.0.1`.
    pub reasons: Vec<String>,
}

/// Every pair of `hosts` whose environments show one machine: the same
/// /etc/machine-id, the same boot id, or the same ssh address. Their runs
/// would compete for the same CPUs and count as independent evidence
/// when they are not. Pure.
pub fn shared_machines(hosts: &[(String, Environment)]) -> Vec<SharedMachine> {
    let mut shared = Vec::new();
    for (index, (first, one)) in hosts.iter().enumerate() {
        for (second, other) in &hosts[index + 1..] {
            let mut reasons = Vec::new();
            for (what, left, right) in [
                ("machine id", &one.machine_id, &other.machine_id),
                ("boot id", &one.boot_id, &other.boot_id),
                ("address", &one.ssh_address, &other.ssh_address),
            ] {
                if let (Some(left), Some(right)) = (left, right)
                    && left == right
                {
                    reasons.push(format!("same {what} {left}"));
                }
            }
            if !reasons.is_empty() {
                shared.push(SharedMachine {
                    first: first.clone(),
                    second: second.clone(),
                    reasons,
                });
            }
        }
    }
    shared
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
        cpu_identity: cpu
            .as_ref()
            .map(|cpu| cpu.identity.clone())
            .filter(|identity| !identity.is_empty()),
        cpu_features: match (&cpu, snapshot.value("/proc/sys/kernel/arch")) {
            (Some(cpu), Some(architecture)) => cpu.features(&architecture),
            _ => Vec::new(),
        },
        proc_version: snapshot.value("/proc/version"),
        kernel_compiler: snapshot
            .value("/proc/version")
            .and_then(|line| identity::kernel_compiler(&line)),
        machine_id: snapshot.value("/etc/machine-id"),
        boot_id: snapshot.value("/proc/sys/kernel/random/boot_id"),
        ssh_address: None,
        build: None,
        // Known to whoever built the kernel (the engine's kernel builder),
        // not readable from /proc.
        kernel_build: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FixtureFiles;

    #[test]
    fn a_vm_image_s_config_is_its_neighbour_or_its_tree_s() {
        let mut files = FixtureFiles::new();
        files
            .insert("/boot/config-6.1.0-57-amd64", "CONFIG_PREEMPT_DYNAMIC=y\n")
            .insert("/src/linux/.config", "CONFIG_PREEMPT=y\n");
        let debian =
            image_neighbour_config(&files, "/boot/vmlinuz-6.1.0-57-amd64", "6.1.0-57-amd64")
                .unwrap();
        assert_eq!(debian.source, "controller:/boot/config-6.1.0-57-amd64");
        assert_eq!(debian.text, "CONFIG_PREEMPT_DYNAMIC=y\n");
        let built =
            image_neighbour_config(&files, "/src/linux/arch/x86/boot/bzImage", "6.19.0-rc1")
                .unwrap();
        assert_eq!(built.source, "controller:/src/linux/.config");
        // Another release's config is not this kernel's.
        assert_eq!(
            image_neighbour_config(&files, "/boot/vmlinuz-6.1.0-58-amd64", "6.1.0-58-amd64"),
            None
        );
        assert_eq!(image_neighbour_config(&files, "bzImage", "6.1"), None);
    }

    #[test]
    fn hosts_that_share_an_id_or_an_address_are_one_machine() {
        let mut files = FixtureFiles::new();
        files
            .insert("/etc/machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n")
            .insert("/proc/sys/kernel/random/boot_id", "f09174d3\n")
            .insert(
                "/proc/self/environ",
                "SSH_CONNECTION=127.0.0.1 4000 127.0.0.1 2222\0SECRET=x\0",
            );
        let one = capture_identity(&files);
        assert_eq!(one.ssh_address.as_deref(), Some("127.0.0.1"));
        let other = Environment {
            boot_id: Some("another".to_string()),
            ..one.clone()
        };
        let elsewhere = Environment {
            machine_id: Some("other".to_string()),
            boot_id: Some("other".to_string()),
            ssh_address: Some("10.0.0.2".to_string()),
            ..Environment::default()
        };
        let shared = shared_machines(&[
            ("a".to_string(), one),
            ("b".to_string(), other),
            ("c".to_string(), elsewhere),
        ]);
        assert_eq!(
            shared,
            vec![SharedMachine {
                first: "a".to_string(),
                second: "b".to_string(),
                reasons: vec![
                    "same machine id 3d1219c7c4c5404aaa1f6d2a48adfda4".to_string(),
                    "same address 127.0.0.1".to_string()
                ],
            }]
        );
    }
}
