//! Kernel configuration text (`.config` format, as in /proc/config.gz or
//! /boot/config-RELEASE): option values and the preemption model.
//!
//! Must not: read or decompress files (the snapshot does), or model Kconfig
//! dependencies (that is verdict-kconfig).

use std::collections::BTreeMap;

/// `CONFIG_NAME=value` lines, keyed without the `CONFIG_` prefix; `# CONFIG_X
/// is not set` lines are recorded as `n`.
pub fn parse_options(text: &str) -> BTreeMap<String, String> {
    let mut options = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("# CONFIG_") {
            if let Some(name) = rest.strip_suffix(" is not set") {
                options.insert(name.to_string(), "n".to_string());
            }
        } else if let Some(rest) = line.strip_prefix("CONFIG_") {
            if let Some((name, value)) = rest.split_once('=') {
                options.insert(name.to_string(), value.trim_matches('"').to_string());
            }
        }
    }
    options
}

/// True when the option is `y` or `m`.
pub fn enabled(options: &BTreeMap<String, String>, name: &str) -> bool {
    matches!(options.get(name).map(String::as_str), Some("y" | "m"))
}

/// The built preemption model: `none`, `voluntary`, `full`, `lazy` or `rt`,
/// with `+dynamic` when PREEMPT_DYNAMIC lets the boot line or debugfs
/// change it.
pub fn preemption_model(options: &BTreeMap<String, String>) -> Option<String> {
    let model = [
        ("PREEMPT_RT", "rt"),
        ("PREEMPT_LAZY", "lazy"),
        ("PREEMPT", "full"),
        ("PREEMPT_VOLUNTARY", "voluntary"),
        ("PREEMPT_NONE", "none"),
    ]
    .iter()
    .find(|(name, _)| enabled(options, name))
    .map(|(_, model)| *model)?;
    Some(if enabled(options, "PREEMPT_DYNAMIC") {
        format!("{model}+dynamic")
    } else {
        model.to_string()
    })
}

/// The current mode in /sys/kernel/debug/sched/preempt, which lists all
/// modes with the current one in parentheses: `none voluntary (full) lazy`.
pub fn debugfs_preempt_mode(text: &str) -> Option<String> {
    let start = text.find('(')?;
    let end = text[start..].find(')')? + start;
    Some(text[start + 1..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_preemption() {
        let text = "CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_DYNAMIC=y\n\
                    CONFIG_LOCALVERSION=\"-fc\"\nCONFIG_HZ=250\n";
        let options = parse_options(text);
        assert_eq!(options.get("PREEMPT").map(String::as_str), Some("n"));
        assert_eq!(options.get("LOCALVERSION").map(String::as_str), Some("-fc"));
        assert!(enabled(&options, "PREEMPT_DYNAMIC"));
        assert!(!enabled(&options, "PREEMPT"));
        assert_eq!(preemption_model(&options).as_deref(), Some("none+dynamic"));
        assert_eq!(preemption_model(&BTreeMap::new()), None);
    }

    #[test]
    fn debugfs_mode() {
        assert_eq!(
            debugfs_preempt_mode("none voluntary (full) lazy\n").as_deref(),
            Some("full")
        );
        assert_eq!(debugfs_preempt_mode("none voluntary full"), None);
    }
}
