//! /proc/ppc64/lparcfg: the PowerVM logical partition's configuration.
//!
//! Source: the kernel's arch/powerpc/platforms/pseries/lparcfg.c, which
//! prints `lparcfg 1.9` and then `key=value` lines: shared_processor_mode
//! (1 shared, 0 dedicated), capped, partition_entitled_capacity (hundredths
//! of a processor), capacity_weight, partition_active_processors,
//! system_active_processors, pool, pool_capacity, dispatches and
//! dispatch_dispersions (sums over CPUs of the lppaca yield and dispersion
//! counts), purr, partition_name. Must not: read the file or decide whether
//! a value is bad.

use serde::Serialize;
use std::collections::BTreeMap;

/// The parsed lparcfg.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Lparcfg {
    /// Every `key=value` line, verbatim.
    pub fields: BTreeMap<String, String>,
    /// `shared_processor_mode`: true shared, false dedicated.
    pub shared: Option<bool>,
    /// `capped`: true when the partition cannot use more than its
    /// entitlement.
    pub capped: Option<bool>,
    /// `partition_entitled_capacity` in processors (the file has hundredths).
    pub entitled_capacity: Option<f64>,
    /// `partition_active_processors` (virtual processors).
    pub active_processors: Option<u32>,
    /// `system_active_processors`.
    pub system_active_processors: Option<u32>,
    /// `capacity_weight` (uncapped weight, 0-255).
    pub capacity_weight: Option<u32>,
    /// `dispatches`: cumulative hypervisor dispatches of our virtual CPUs.
    pub dispatches: Option<u64>,
    /// `dispatch_dispersions`: dispatches onto a different physical CPU.
    pub dispatch_dispersions: Option<u64>,
    /// `partition_name`.
    pub partition_name: Option<String>,
    /// `system_type`, e.g. `IBM,9080-HEX`.
    pub system_type: Option<String>,
}

impl Lparcfg {
    /// "shared" or "dedicated", when known.
    pub fn mode_word(&self) -> Option<&'static str> {
        self.shared
            .map(|shared| if shared { "shared" } else { "dedicated" })
    }
}

/// Parses lparcfg text. `None` when there is not a single `key=value` line.
pub fn parse(text: &str) -> Option<Lparcfg> {
    let mut fields = BTreeMap::new();
    for line in text.lines() {
        if let Some((key, value)) = line.split_once('=') {
            let key = key.trim();
            if !key.is_empty() {
                fields.insert(key.to_string(), value.trim().to_string());
            }
        }
    }
    if fields.is_empty() {
        return None;
    }
    let number = |key: &str| fields.get(key).and_then(|value| value.parse::<u64>().ok());
    let flag = |key: &str| number(key).map(|value| value != 0);
    let small = |key: &str| number(key).and_then(|value| u32::try_from(value).ok());
    let text_of = |key: &str| fields.get(key).filter(|value| !value.is_empty()).cloned();
    Some(Lparcfg {
        shared: flag("shared_processor_mode"),
        capped: flag("capped"),
        entitled_capacity: number("partition_entitled_capacity").map(|value| value as f64 / 100.0),
        active_processors: small("partition_active_processors"),
        system_active_processors: small("system_active_processors"),
        capacity_weight: small("capacity_weight"),
        dispatches: number("dispatches"),
        dispatch_dispersions: number("dispatch_dispersions"),
        partition_name: text_of("partition_name"),
        system_type: text_of("system_type"),
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_and_bad_values() {
        let parsed = parse("lparcfg 1.9\nshared_processor_mode=1\ncapped=x\n").unwrap();
        assert_eq!(parsed.shared, Some(true));
        assert_eq!(parsed.capped, None);
        assert_eq!(parsed.mode_word(), Some("shared"));
        assert_eq!(parse("lparcfg 1.9\n"), None);
        assert_eq!(parse(""), None);
    }
}
