//! /proc/cpuinfo: processor count, model, identity (vendor, family, model,
//! stepping, microcode), feature flags and platform lines.
//!
//! Handles the x86 layout (`model name`, `vendor_id`, `cpu family`,
//! `stepping`, `microcode`, `flags`), arm64 (`Features`, `CPU implementer`,
//! `CPU architecture`, `CPU variant`, `CPU part`, `CPU revision`) and
//! powerpc (`cpu`, `revision`, `platform`, `model`, `machine`, `MMU`).
//! Must not: infer anything the file does not say.

use serde::Serialize;
use verdict_model::{CpuFeature, CpuIdentity};

/// The features that change performance, per architecture (as
/// `/proc/sys/kernel/arch` names it), by their /proc/cpuinfo names: on x86
/// the speculation controls the kernel's mitigations use and PTI (page
/// table isolation: a CR3 switch on every kernel entry); on arm64 pointer
/// authentication (address and generic keys) and branch target
/// identification, and SSBS; on powerpc the radix MMU (`MMU : Radix`,
/// against the hashed page table).
pub fn checked_features(architecture: &str) -> &'static [&'static str] {
    match architecture {
        "x86_64" | "i686" | "i586" | "i386" => &[
            "ibrs",
            "ibrs_enhanced",
            "ibpb",
            "stibp",
            "ssbd",
            "md_clear",
            "pti",
        ],
        "aarch64" | "arm64" => &["paca", "pacg", "bti", "ssbs"],
        "ppc64le" | "ppc64" | "powerpc" => &["radix"],
        _ => &[],
    }
}

/// The facts doctor uses from /proc/cpuinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CpuInfo {
    /// Number of `processor` stanzas.
    pub processors: u32,
    /// `model name` (x86, some arm), or powerpc's `cpu` line.
    pub model: Option<String>,
    /// `flags` (x86) or `Features` (arm64), space separated, first stanza.
    pub flags: Option<String>,
    /// powerpc `platform`, e.g. `pSeries` (PowerVM or KVM guest) or
    /// `PowerNV` (bare metal).
    pub platform: Option<String>,
    /// powerpc `model` (machine type), e.g. `IBM,9080-HEX`.
    pub machine_model: Option<String>,
    /// `siblings` and `cpu cores` of the first x86 stanza, when present.
    pub siblings: Option<u32>,
    pub cores: Option<u32>,
    /// The first stanza's identity lines, as printed.
    pub identity: CpuIdentity,
    /// powerpc `MMU` (`Radix` or `Hash`).
    pub mmu: Option<String>,
}

impl CpuInfo {
    /// The architecture's checked features (see [`checked_features`]),
    /// each present or not; empty for an architecture without a list.
    pub fn features(&self, architecture: &str) -> Vec<CpuFeature> {
        checked_features(architecture)
            .iter()
            .map(|name| CpuFeature {
                name: (*name).to_string(),
                present: if *name == "radix" {
                    self.mmu.as_deref() == Some("Radix")
                } else {
                    self.has_flag(name)
                },
            })
            .collect()
    }

    /// True when the flag list contains `flag` as a whole word.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags
            .as_deref()
            .is_some_and(|flags| flags.split_whitespace().any(|word| word == flag))
    }
}

/// Parses /proc/cpuinfo. `None` when no `processor` line is found.
pub fn parse(text: &str) -> Option<CpuInfo> {
    let mut info = CpuInfo::default();
    let mut arm_variant = (None, None);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let value = value.trim();
        let set = |slot: &mut Option<String>| {
            if slot.is_none() && !value.is_empty() {
                *slot = Some(value.to_string());
            }
        };
        match key {
            "processor" => info.processors += 1,
            "model name" => set(&mut info.model),
            // powerpc: "cpu : POWER10 (architected), altivec supported".
            "cpu" => set(&mut info.model),
            "flags" | "Features" => set(&mut info.flags),
            "platform" => set(&mut info.platform),
            // x86 `model` is a number; powerpc `model` is the machine type.
            "model" if value.parse::<u32>().is_err() => set(&mut info.machine_model),
            "siblings" if info.siblings.is_none() => info.siblings = value.parse().ok(),
            "cpu cores" if info.cores.is_none() => info.cores = value.parse().ok(),
            "MMU" => set(&mut info.mmu),
            _ => identity_line(&mut info.identity, &mut arm_variant, key, value),
        }
    }
    if info.identity.stepping.is_none()
        && let (Some(variant), Some(revision)) = (arm_variant.0, arm_variant.1)
    {
        // arm64 writes the variant and revision as `r<variant>p<revision>`.
        let number = |text: &str| {
            text.strip_prefix("0x")
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| text.parse().ok())
        };
        info.identity.stepping = match (number(&variant), number(&revision)) {
            (Some(variant), Some(revision)) => Some(format!("r{variant}p{revision}")),
            _ => Some(format!("variant {variant} revision {revision}")),
        };
    }
    (info.processors > 0).then_some(info)
}

/// One identity line of the first stanza (later stanzas repeat it):
/// x86's and powerpc's into `identity`, arm64's variant and revision into
/// `arm_variant` until both are known.
fn identity_line(
    identity: &mut CpuIdentity,
    arm_variant: &mut (Option<String>, Option<String>),
    key: &str,
    value: &str,
) {
    let slot = match key {
        "vendor_id" | "CPU implementer" => &mut identity.vendor,
        "cpu family" | "CPU architecture" => &mut identity.family,
        // x86 `model` is a number (the machine-type `model` of powerpc is
        // not an identity).
        "model" if value.parse::<u32>().is_ok() => &mut identity.model,
        "CPU part" => &mut identity.model,
        "stepping" | "revision" => &mut identity.stepping,
        "microcode" => &mut identity.microcode,
        "CPU variant" => &mut arm_variant.0,
        "CPU revision" => &mut arm_variant.1,
        _ => return,
    };
    if slot.is_none() && !value.is_empty() {
        *slot = Some(value.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_stanzas() {
        let text = "processor\t: 0\nmodel\t\t: 207\nmodel name\t: Intel(R) Xeon(R) Processor\n\
                    siblings\t: 2\ncpu cores\t: 2\nflags\t\t: fpu hypervisor avx2\n\n\
                    processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu hypervisor avx2\n";
        let info = parse(text).unwrap();
        assert_eq!(info.processors, 2);
        assert_eq!(info.model.as_deref(), Some("Intel(R) Xeon(R) Processor"));
        assert!(info.has_flag("hypervisor"));
        assert!(!info.has_flag("hyper"));
        assert_eq!(info.machine_model, None);
        assert_eq!((info.siblings, info.cores), (Some(2), Some(2)));
        assert_eq!(info.identity.model.as_deref(), Some("207"));
    }

    #[test]
    fn x86_identity_and_features() {
        // This machine's first stanza (a KVM guest on AMD EPYC), cut.
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n\
                    model name\t: AMD EPYC\nstepping\t: 1\nmicrocode\t: 0x1000065\n\
                    flags\t\t: fpu ibpb stibp hypervisor\n\nprocessor\t: 1\nvendor_id\t: Other\n";
        let info = parse(text).unwrap();
        assert_eq!(
            info.identity.line(),
            "AuthenticAMD family 26 model 2 stepping 1 microcode 0x1000065"
        );
        assert_eq!(
            verdict_model::provenance::features_line(&info.features("x86_64")),
            "ibrs- ibrs_enhanced- ibpb+ stibp+ ssbd- md_clear- pti-"
        );
        assert!(info.features("riscv64").is_empty());
    }

    #[test]
    fn arm64_identity_and_pointer_authentication() {
        // An Ampere Altra (Neoverse N1) stanza, and a Graviton3 (Neoverse
        // V1) one with pointer authentication.
        let altra = "processor\t: 0\nBogoMIPS\t: 50.00\n\
                     Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\n\
                     CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
        let info = parse(altra).unwrap();
        assert_eq!(
            info.identity.line(),
            "0x41 family 8 model 0xd0c stepping r3p1"
        );
        assert_eq!(
            verdict_model::provenance::features_line(&info.features("aarch64")),
            "paca- pacg- bti- ssbs+"
        );
        let graviton = "processor\t: 0\nFeatures\t: fp asimd paca pacg dcpop sha3 sve\n\
                        CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\nCPU revision\t: 1\n";
        let info = parse(graviton).unwrap();
        assert_eq!(
            verdict_model::provenance::features_line(&info.features("aarch64")),
            "paca+ pacg+ bti- ssbs-"
        );
    }

    #[test]
    fn powerpc_stanzas() {
        let text = "processor\t: 0\ncpu\t\t: POWER10 (architected), altivec supported\n\
                    clock\t\t: 2750.000000MHz\nrevision\t: 2.0 (pvr 0080 0200)\n\n\
                    timebase\t: 512000000\nplatform\t: pSeries\nmodel\t\t: IBM,9080-HEX\n\
                    machine\t\t: CHRP IBM,9080-HEX\nMMU\t\t: Radix\n";
        let info = parse(text).unwrap();
        assert_eq!(info.processors, 1);
        assert_eq!(
            info.model.as_deref(),
            Some("POWER10 (architected), altivec supported")
        );
        assert_eq!(info.platform.as_deref(), Some("pSeries"));
        assert_eq!(info.machine_model.as_deref(), Some("IBM,9080-HEX"));
        assert_eq!(info.flags, None);
        assert_eq!(
            info.identity.stepping.as_deref(),
            Some("2.0 (pvr 0080 0200)")
        );
        assert_eq!(info.identity.model, None);
        assert_eq!(
            verdict_model::provenance::features_line(&info.features("ppc64le")),
            "radix+"
        );
    }

    #[test]
    fn empty_is_none() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("garbage without colons\n"), None);
    }
}
