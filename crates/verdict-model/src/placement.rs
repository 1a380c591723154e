//! Where a run measured: the machine the workload ran on and how verdict
//! reached it. Stored with every run (a typed column) and shown by `verdict runs`.

use serde::{Deserialize, Serialize};

/// Where a run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// This machine, no boot.
    Local,
    /// One or more machines over ssh, no boot.
    Hosts,
    /// A virtual machine verdict boots (QEMU), one boot per boot level.
    Vm,
    /// A real machine over ssh that verdict reboots (kexec or reboot).
    BootedHost,
}

impl Placement {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Hosts => "hosts",
            Self::Vm => "vm",
            Self::BootedHost => "booted_host",
        }
    }

    /// The stored spelling back; `None` for anything else.
    pub fn parse(text: &str) -> Option<Placement> {
        match text {
            "local" => Some(Self::Local),
            "hosts" => Some(Self::Hosts),
            "vm" => Some(Self::Vm),
            "booted_host" => Some(Self::BootedHost),
            _ => None,
        }
    }
}

impl std::fmt::Display for Placement {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}
