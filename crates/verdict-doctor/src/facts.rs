//! Facts derived from a snapshot by combining several files: virtualization,
//! SELinux mode, preemption mode, LPAR configuration.
//!
//! Must not: read files (the snapshot holds them) or judge good and bad
//! (that is `checks`).

use crate::parse::{cgroup, cpuinfo, kconfig, lparcfg, sysfs, virtualization};
use crate::snapshot::Snapshot;
use std::collections::BTreeMap;

/// Virtualization and container detection; `None` when /proc/cpuinfo could
/// not be read (the main evidence).
pub fn virtualization(snapshot: &Snapshot) -> Option<virtualization::Detection> {
    let cpu = cpuinfo::parse(&snapshot.text("/proc/cpuinfo")?)?;
    let vendor = snapshot.value("/sys/class/dmi/id/sys_vendor");
    let product = snapshot.value("/sys/class/dmi/id/product_name");
    let hypervisor_type = snapshot.value("/sys/hypervisor/type");
    let clocksources =
        snapshot.value("/sys/devices/system/clocksource/clocksource0/available_clocksource");
    let environ_container = match snapshot.get("/proc/1/environ") {
        crate::files::FileRead::Present(bytes) => cgroup::container_variable(bytes),
        _ => None,
    };
    let cgroup_runtime = snapshot
        .text("/proc/1/cgroup")
        .and_then(|text| cgroup::parse_membership(&text))
        .and_then(|entries| cgroup::runtime_from_paths(&entries));
    let root_filesystem = snapshot
        .text("/proc/self/mountinfo")
        .and_then(|text| cgroup::root_filesystem_type(&text));
    Some(virtualization::detect(&virtualization::Evidence {
        hypervisor_flag: cpu.has_flag("hypervisor"),
        cpuinfo_platform: cpu.platform.as_deref(),
        cpuinfo_machine_model: cpu.machine_model.as_deref(),
        lparcfg_present: snapshot.get("/proc/ppc64/lparcfg").exists(),
        hypervisor_type: hypervisor_type.as_deref(),
        dmi_sys_vendor: vendor.as_deref(),
        dmi_product_name: product.as_deref(),
        available_clocksources: clocksources.as_deref(),
        environ_container: environ_container.as_deref(),
        containerenv_present: snapshot.get("/run/.containerenv").exists(),
        cgroup_runtime,
        dockerenv_present: snapshot.get("/.dockerenv").exists(),
        root_filesystem: root_filesystem.as_deref(),
    }))
}

/// SELinux mode: `enforcing` or `permissive` from selinuxfs; `disabled` when
/// the kernel has SELinux built in but selinuxfs is absent or the boot line
/// says `selinux=0`; `None` when SELinux is not built in or unknown.
pub fn selinux_mode(
    snapshot: &Snapshot,
    options: Option<&BTreeMap<String, String>>,
) -> Option<String> {
    match snapshot.value("/sys/fs/selinux/enforce").as_deref() {
        Some("1") => return Some("enforcing".to_string()),
        Some("0") => return Some("permissive".to_string()),
        _ => {}
    }
    let built_in = options.is_some_and(|options| kconfig::enabled(options, "SECURITY_SELINUX"));
    let mounted_but_unreadable = matches!(
        snapshot.get("/sys/fs/selinux/enforce"),
        crate::files::FileRead::NotReadable(_)
    );
    (built_in && !mounted_but_unreadable).then(|| "disabled".to_string())
}

/// Preemption mode: the current one from debugfs when readable; else the
/// boot line's `preempt=` when the kernel is PREEMPT_DYNAMIC; else the
/// built model from the config (e.g. `none+dynamic`).
pub fn preemption(
    snapshot: &Snapshot,
    options: Option<&BTreeMap<String, String>>,
) -> Option<String> {
    if let Some(mode) = snapshot
        .text("/sys/kernel/debug/sched/preempt")
        .and_then(|text| kconfig::debugfs_preempt_mode(&text))
    {
        return Some(mode);
    }
    let options = options?;
    if kconfig::enabled(options, "PREEMPT_DYNAMIC") {
        if let Some(mode) = snapshot
            .value("/proc/cmdline")
            .and_then(|line| sysfs::cmdline_parameter(&line, "preempt"))
            .filter(|mode| !mode.is_empty())
        {
            return Some(mode);
        }
    }
    kconfig::preemption_model(options)
}

/// The parsed /proc/ppc64/lparcfg, when present.
pub fn lpar(snapshot: &Snapshot) -> Option<lparcfg::Lparcfg> {
    lparcfg::parse(&snapshot.text("/proc/ppc64/lparcfg")?)
}
