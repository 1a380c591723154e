//! Virtualization and container detection from file evidence, without
//! external tools (no systemd-detect-virt, no cpuid instruction).
//!
//! Sources, strongest first: powerpc `platform`/`model` in /proc/cpuinfo and
//! the presence of /proc/ppc64/lparcfg (PowerVM); /sys/hypervisor/type (Xen);
//! DMI vendor and product names (the table follows systemd's
//! src/basic/virt.c); the clock sources the kernel registered (kvm-clock,
//! hyperv_clocksource_*, xen); the x86 `hypervisor` CPU flag. Containers:
//! `container=` in /proc/1/environ, /run/.containerenv, a runtime in
//! /proc/1/cgroup paths; /.dockerenv alone is weak (images copied into VMs
//! keep it) and is reported as a hint, not a detection. Must not: read files.

use serde::Serialize;

/// Everything detection looks at, already read. Absent evidence is `None`
/// or `false`.
#[derive(Debug, Clone, Default)]
pub struct Evidence<'a> {
    pub hypervisor_flag: bool,
    pub cpuinfo_platform: Option<&'a str>,
    pub cpuinfo_machine_model: Option<&'a str>,
    pub lparcfg_present: bool,
    pub hypervisor_type: Option<&'a str>,
    pub dmi_sys_vendor: Option<&'a str>,
    pub dmi_product_name: Option<&'a str>,
    pub available_clocksources: Option<&'a str>,
    pub environ_container: Option<&'a str>,
    pub containerenv_present: bool,
    pub cgroup_runtime: Option<&'a str>,
    pub dockerenv_present: bool,
    /// File system type of `/` in our mount namespace.
    pub root_filesystem: Option<&'a str>,
}

/// What detection concluded, with the evidence for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Detection {
    /// `kvm`, `powervm`, `xen`, `vmware`, `hyperv`, `virtualbox`,
    /// `unknown-hypervisor`; `None` when no hypervisor was detected.
    pub hypervisor: Option<String>,
    /// Container runtime (`docker`, `podman`, `kubernetes`, ...), `None`
    /// when not detected.
    pub container: Option<String>,
    /// Human-readable reasons, e.g. `clocksource kvm-clock`.
    pub evidence: Vec<String>,
    /// Weak signs that did not count, e.g. `/.dockerenv exists`.
    pub hints: Vec<String>,
}

impl Detection {
    /// The compact form stored in the environment: `kvm`,
    /// `container:docker`, `kvm+container:docker`, or `none`.
    pub fn label(&self) -> String {
        match (&self.hypervisor, &self.container) {
            (Some(hypervisor), Some(container)) => format!("{hypervisor}+container:{container}"),
            (Some(hypervisor), None) => hypervisor.clone(),
            (None, Some(container)) => format!("container:{container}"),
            (None, None) => "none".to_string(),
        }
    }
}

fn hypervisor_from_dmi(vendor: &str, product: &str) -> Option<&'static str> {
    // (substring of vendor or product, hypervisor); systemd virt.c dmi table.
    const TABLE: [(&str, &str); 12] = [
        ("KVM", "kvm"),
        ("OpenStack", "kvm"),
        ("KubeVirt", "kvm"),
        ("Amazon EC2", "kvm"),
        ("Google Compute Engine", "kvm"),
        ("QEMU", "qemu"),
        ("VMware", "vmware"),
        ("VMW", "vmware"),
        ("innotek GmbH", "virtualbox"),
        ("VirtualBox", "virtualbox"),
        ("Xen", "xen"),
        ("Parallels", "parallels"),
    ];
    if vendor.contains("Microsoft Corporation") && product.contains("Virtual Machine") {
        return Some("hyperv");
    }
    TABLE
        .iter()
        .find(|(marker, _)| vendor.contains(marker) || product.contains(marker))
        .map(|(_, name)| *name)
}

/// Decides hypervisor and container from the evidence.
pub fn detect(evidence: &Evidence<'_>) -> Detection {
    let mut detection = Detection::default();
    let found = |name: &str, reason: String, detection: &mut Detection| {
        if detection.hypervisor.is_none() {
            detection.hypervisor = Some(name.to_string());
        }
        detection.evidence.push(reason);
    };

    match evidence.cpuinfo_platform {
        Some("pSeries") => {
            let model = evidence.cpuinfo_machine_model.unwrap_or("");
            if model.contains("qemu") {
                found("kvm", format!("cpuinfo model {model}"), &mut detection);
            } else {
                found(
                    "powervm",
                    "cpuinfo platform pSeries".to_string(),
                    &mut detection,
                );
            }
        }
        Some("PowerNV") => detection
            .evidence
            .push("cpuinfo platform PowerNV (bare metal)".to_string()),
        _ => {}
    }
    if evidence.lparcfg_present && evidence.cpuinfo_platform != Some("PowerNV") {
        found(
            "powervm",
            "/proc/ppc64/lparcfg exists".to_string(),
            &mut detection,
        );
    }
    if let Some(kind) = evidence.hypervisor_type.filter(|kind| !kind.is_empty()) {
        found(kind, format!("/sys/hypervisor/type {kind}"), &mut detection);
    }
    let vendor = evidence.dmi_sys_vendor.unwrap_or("");
    let product = evidence.dmi_product_name.unwrap_or("");
    if let Some(name) = hypervisor_from_dmi(vendor, product) {
        found(
            name,
            format!("DMI {vendor} {product}").trim().to_string(),
            &mut detection,
        );
    }
    if let Some(sources) = evidence.available_clocksources {
        for source in sources.split_whitespace() {
            let name = match source {
                "kvm-clock" => Some("kvm"),
                "xen" => Some("xen"),
                source if source.starts_with("hyperv_clocksource") => Some("hyperv"),
                _ => None,
            };
            if let Some(name) = name {
                found(name, format!("clocksource {source}"), &mut detection);
            }
        }
    }
    if evidence.hypervisor_flag {
        found(
            "unknown-hypervisor",
            "cpu flag hypervisor".to_string(),
            &mut detection,
        );
    }

    if let Some(value) = evidence.environ_container {
        detection.container = Some(value.to_string());
        detection
            .evidence
            .push(format!("/proc/1/environ container={value}"));
    }
    if evidence.containerenv_present {
        detection
            .container
            .get_or_insert_with(|| "podman".to_string());
        detection
            .evidence
            .push("/run/.containerenv exists".to_string());
    }
    if let Some(runtime) = evidence.cgroup_runtime {
        detection
            .container
            .get_or_insert_with(|| runtime.to_string());
        detection
            .evidence
            .push(format!("/proc/1/cgroup names {runtime}"));
    }
    if evidence.dockerenv_present {
        let overlay_root = evidence
            .root_filesystem
            .is_some_and(|kind| matches!(kind, "overlay" | "aufs" | "fuse-overlayfs"));
        if detection.container.is_some() {
            detection.evidence.push("/.dockerenv exists".to_string());
        } else if overlay_root {
            detection.container = Some("docker".to_string());
            detection
                .evidence
                .push("/.dockerenv exists and / is an overlay mount".to_string());
        } else {
            detection.hints.push(format!(
                "/.dockerenv exists but / is {}, not an overlay",
                evidence.root_filesystem.unwrap_or("of unknown type")
            ));
        }
    }
    detection
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_metal_is_none() {
        let detection = detect(&Evidence {
            dmi_sys_vendor: Some("Dell Inc."),
            dmi_product_name: Some("PowerEdge R650"),
            available_clocksources: Some("tsc hpet acpi_pm"),
            ..Evidence::default()
        });
        assert_eq!(detection.label(), "none");
        assert!(detection.evidence.is_empty());
    }

    #[test]
    fn kvm_from_clocksource_beats_generic_flag() {
        let detection = detect(&Evidence {
            hypervisor_flag: true,
            available_clocksources: Some("tsc kvm-clock"),
            dockerenv_present: true,
            ..Evidence::default()
        });
        assert_eq!(detection.label(), "kvm");
        assert_eq!(detection.evidence.len(), 2);
        assert_eq!(detection.hints.len(), 1);
    }

    #[test]
    fn hyperv_vmware_and_flag_only() {
        let hyperv = detect(&Evidence {
            dmi_sys_vendor: Some("Microsoft Corporation"),
            dmi_product_name: Some("Virtual Machine"),
            ..Evidence::default()
        });
        assert_eq!(hyperv.label(), "hyperv");
        let vmware = detect(&Evidence {
            dmi_sys_vendor: Some("VMware, Inc."),
            ..Evidence::default()
        });
        assert_eq!(vmware.label(), "vmware");
        let flag = detect(&Evidence {
            hypervisor_flag: true,
            ..Evidence::default()
        });
        assert_eq!(flag.label(), "unknown-hypervisor");
    }

    #[test]
    fn powerpc_platforms() {
        let powervm = detect(&Evidence {
            cpuinfo_platform: Some("pSeries"),
            cpuinfo_machine_model: Some("IBM,9080-HEX"),
            lparcfg_present: true,
            ..Evidence::default()
        });
        assert_eq!(powervm.label(), "powervm");
        let qemu = detect(&Evidence {
            cpuinfo_platform: Some("pSeries"),
            cpuinfo_machine_model: Some("IBM pSeries (emulated by qemu)"),
            lparcfg_present: true,
            ..Evidence::default()
        });
        assert_eq!(qemu.label(), "kvm");
        let powernv = detect(&Evidence {
            cpuinfo_platform: Some("PowerNV"),
            ..Evidence::default()
        });
        assert_eq!(powernv.label(), "none");
    }

    #[test]
    fn containers() {
        let docker = detect(&Evidence {
            cgroup_runtime: Some("docker"),
            dockerenv_present: true,
            ..Evidence::default()
        });
        assert_eq!(docker.label(), "container:docker");
        let namespaced = detect(&Evidence {
            dockerenv_present: true,
            root_filesystem: Some("overlay"),
            ..Evidence::default()
        });
        assert_eq!(namespaced.label(), "container:docker");
        let copied_image = detect(&Evidence {
            dockerenv_present: true,
            root_filesystem: Some("ext4"),
            ..Evidence::default()
        });
        assert_eq!(copied_image.label(), "none");
        assert_eq!(copied_image.hints.len(), 1);
        let podman_in_kvm = detect(&Evidence {
            environ_container: Some("podman"),
            available_clocksources: Some("kvm-clock tsc"),
            ..Evidence::default()
        });
        assert_eq!(podman_in_kvm.label(), "kvm+container:podman");
    }
}
