//! Config fragments verdict ships (`verdict kconfig fragment NAME`): today
//! `vm-guest`, the options a kernel built from source needs to boot in
//! verdict's VM target with no module file (the serial console, the
//! initramfs, virtio-net on PCI, the file systems `/init` mounts, the
//! system calls sshd and the agent use, SMP and SMT control), kept as a
//! file in the repository and compiled in. Also the check that a resolved
//! `.config` holds every assignment of a fragment ([`unmet`]), which names
//! a missing feature before anything is built or booted. Works on text;
//! must not read files or run `make`.

use crate::config::DotConfig;
use crate::error::KconfigError;

/// What verdict's guest cannot boot without (checked before a build).
const VM_GUEST_NEEDS: &str = include_str!("fragments/vm-guest-needs.config");

/// `(name, text)` of every fragment verdict ships.
const FRAGMENTS: &[(&str, &str)] = &[(
    "vm-guest",
    concat!(
        include_str!("fragments/vm-guest-needs.config"),
        include_str!("fragments/vm-guest-extras.config")
    ),
)];

/// The part of the `vm-guest` fragment a kernel must hold to boot in
/// verdict's VM target (the rest is recommended).
pub fn vm_guest_needs() -> &'static str {
    VM_GUEST_NEEDS
}

/// The names of verdict's fragments.
pub fn fragment_names() -> Vec<&'static str> {
    FRAGMENTS.iter().map(|(name, _)| *name).collect()
}

/// The text of verdict's fragment `name`.
pub fn fragment(name: &str) -> Option<&'static str> {
    FRAGMENTS
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, text)| *text)
}

/// An assignment of a fragment that a config does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmet {
    /// Without `CONFIG_`.
    pub symbol: String,
    /// What the fragment asks for (`y`, `m`, `n`, a number or a string).
    pub wanted: String,
    /// What the config has (`None`: the symbol is absent, as a symbol
    /// whose dependencies are unmet is).
    pub found: Option<String>,
}

impl std::fmt::Display for Unmet {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.found {
            Some(found) => write!(
                formatter,
                "CONFIG_{}={} (the config has {found})",
                self.symbol, self.wanted
            ),
            None => write!(
                formatter,
                "CONFIG_{}={} (absent from the config: its dependencies are not met)",
                self.symbol, self.wanted
            ),
        }
    }
}

/// The assignments of `fragment` (`.config` text) that `config` does not
/// hold, in name order: `m` wanted and `y` found counts as met, `n`
/// wanted and the symbol absent as met, and `y` wanted and `m` found as
/// met only when `modules` (the module is built and its files go with the
/// kernel). `origin` names the fragment in a parse error.
pub fn unmet(
    fragment: &str,
    config: &DotConfig,
    modules: bool,
    origin: &str,
) -> Result<Vec<Unmet>, KconfigError> {
    let wanted = DotConfig::parse(fragment, origin)?;
    Ok(wanted
        .iter()
        .filter_map(|(symbol, wanted)| {
            let found = config.get(symbol);
            let met = match (wanted, found) {
                ("n", None | Some("n")) => true,
                ("m", Some("y" | "m")) => true,
                ("y", Some("m")) => modules,
                (wanted, Some(found)) => wanted == found,
                (_, None) => false,
            };
            (!met).then(|| Unmet {
                symbol: symbol.to_string(),
                wanted: wanted.to_string(),
                found: found.map(str::to_string),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vm_guest_fragment_parses_and_asks_for_what_the_guest_uses() {
        let text = fragment("vm-guest").unwrap();
        let parsed = DotConfig::parse(text, "vm-guest").unwrap();
        for symbol in [
            "64BIT",
            "VIRTIO_NET",
            "VIRTIO_PCI",
            "DEVTMPFS",
            "EVENTFD",
            "SIGNALFD",
            "TIMERFD",
            "EPOLL",
            "UNIX",
            "INET",
            "TMPFS",
            "PROC_FS",
            "SYSFS",
            "UNIX98_PTYS",
            "SERIAL_8250_CONSOLE",
            "BLK_DEV_INITRD",
            "SMP",
            "SCHED_SMT",
            "HOTPLUG_CPU",
            "IKCONFIG_PROC",
        ] {
            assert_eq!(parsed.get(symbol), Some("y"), "{symbol}");
        }
        assert_eq!(fragment_names(), ["vm-guest"]);
        // What is checked is a part of what is printed.
        let needs = DotConfig::parse(vm_guest_needs(), "needs").unwrap();
        assert!(needs.get("EVENTFD").is_some() && needs.get("IKCONFIG").is_none());
        assert!(
            needs
                .iter()
                .all(|(symbol, value)| parsed.get(symbol) == Some(value))
        );
        assert_eq!(fragment("nope"), None);
    }

    #[test]
    fn unmet_assignments_are_named_with_what_the_config_has() {
        let config = DotConfig::from_pairs([("EVENTFD", "y"), ("VIRTIO_NET", "m"), ("A", "y")]);
        let fragment = "CONFIG_EVENTFD=y\nCONFIG_VIRTIO_NET=y\nCONFIG_SIGNALFD=y\nCONFIG_A=m\n# CONFIG_B is not set\n";
        let missing = unmet(fragment, &config, false, "f").unwrap();
        assert_eq!(
            missing.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "CONFIG_SIGNALFD=y (absent from the config: its dependencies are not met)",
                "CONFIG_VIRTIO_NET=y (the config has m)",
            ]
        );
        assert_eq!(unmet(fragment, &config, true, "f").unwrap().len(), 1);
        assert!(unmet("CONFIG_X", &config, false, "f").is_err());
    }
}
