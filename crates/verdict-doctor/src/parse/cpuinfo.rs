//! /proc/cpuinfo: processor count, model, feature flags and platform lines.
//!
//! Handles the x86 layout (`model name`, `flags`), arm64 (`Features`, `CPU
//! implementer`) and powerpc (`cpu`, `platform`, `model`, `machine`). Must
//! not: infer anything the file does not say.

use serde::Serialize;

/// The facts doctor uses from /proc/cpuinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
}

impl CpuInfo {
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
            _ => {}
        }
    }
    (info.processors > 0).then_some(info)
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
    }

    #[test]
    fn powerpc_stanzas() {
        let text = "processor\t: 0\ncpu\t\t: POWER10 (architected), altivec supported\n\
                    clock\t\t: 2750.000000MHz\nrevision\t: 2.0 (pvr 0080 0200)\n\n\
                    timebase\t: 512000000\nplatform\t: pSeries\nmodel\t\t: IBM,9080-HEX\n\
                    machine\t\t: CHRP IBM,9080-HEX\n";
        let info = parse(text).unwrap();
        assert_eq!(info.processors, 1);
        assert_eq!(
            info.model.as_deref(),
            Some("POWER10 (architected), altivec supported")
        );
        assert_eq!(info.platform.as_deref(), Some("pSeries"));
        assert_eq!(info.machine_model.as_deref(), Some("IBM,9080-HEX"));
        assert_eq!(info.flags, None);
    }

    #[test]
    fn empty_is_none() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("garbage without colons\n"), None);
    }
}
