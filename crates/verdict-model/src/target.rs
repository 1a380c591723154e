//! Where an experiment runs, as one typed value ([`TargetSpec`]): this
//! machine, ssh hosts, a VM verdict boots, or ssh hosts verdict boots. The
//! experiment file's `[target]` keys (`hosts`, `vm`, `boot`) and the
//! stored experiment JSON keep their flat shape (three optional keys);
//! both are converted here, so a combination that cannot run (a VM and
//! hosts, a VM and a host boot) cannot be built. Also the settings a run
//! stores to reach its ssh target again on resume ([`SshSettings`]), with
//! the reconnect timeout in one unit.
//!
//! Must not connect to anything or read any file.

use crate::boot::{HostBoot, VmSpec};
use crate::placement::Placement;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Where an experiment runs (`[target]`). Stored in the flat shape
/// (`hosts`, `vm`, `host_boot`) every version wrote.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(try_from = "StoredTarget", into = "StoredTarget")]
pub enum TargetSpec {
    /// No `[target]` (or an empty one): this machine, unless `--host`
    /// names hosts on the command line.
    #[default]
    Local,
    /// `[target] hosts`: these ssh hosts (never empty).
    Hosts(Vec<String>),
    /// `[target] vm`: the virtual machine verdict boots.
    Vm(Box<VmSpec>),
    /// `[target] boot`: ssh hosts verdict boots per boot level; `hosts`
    /// are the file's `[target] hosts` (possibly empty: `--host` names
    /// the host then).
    BootedHost { boot: HostBoot, hosts: Vec<String> },
}

impl TargetSpec {
    /// Where a run of this target measures, given the ssh hosts it
    /// measures on (`--host`, which wins over the file's `[target] hosts`,
    /// or those; empty when the run stays on this machine): the target
    /// verdict boots when there is one, else the hosts when any are named,
    /// else here. The one rule that both chooses a run's launcher and is
    /// stored with it.
    pub fn placement(&self, hosts: &[String]) -> Placement {
        match self {
            TargetSpec::Vm(_) => Placement::Vm,
            TargetSpec::BootedHost { .. } => Placement::BootedHost,
            TargetSpec::Local | TargetSpec::Hosts(_) if hosts.is_empty() => Placement::Local,
            TargetSpec::Local | TargetSpec::Hosts(_) => Placement::Hosts,
        }
    }

    /// The ssh hosts the file names (`[target] hosts`); empty for this
    /// machine and a VM.
    pub fn hosts(&self) -> &[String] {
        match self {
            TargetSpec::Hosts(hosts) | TargetSpec::BootedHost { hosts, .. } => hosts,
            TargetSpec::Local | TargetSpec::Vm(_) => &[],
        }
    }

    /// The VM verdict boots, for a VM target.
    pub fn vm(&self) -> Option<&VmSpec> {
        match self {
            TargetSpec::Vm(vm) => Some(vm.as_ref()),
            _ => None,
        }
    }

    /// The VM verdict boots, to change (a bisection's kernel per commit).
    pub fn vm_mut(&mut self) -> Option<&mut VmSpec> {
        match self {
            TargetSpec::Vm(vm) => Some(vm.as_mut()),
            _ => None,
        }
    }

    /// How verdict boots the ssh hosts, for a booted-host target.
    pub fn host_boot(&self) -> Option<&HostBoot> {
        match self {
            TargetSpec::BootedHost { boot, .. } => Some(boot),
            _ => None,
        }
    }

    /// Whether verdict boots the target (a VM or booted ssh hosts): the
    /// boot is then the unit of the schedule.
    pub fn boots(&self) -> bool {
        matches!(self, TargetSpec::Vm(_) | TargetSpec::BootedHost { .. })
    }

    /// The target of the flat shape (`hosts`, `vm`, `host_boot`); `Err`
    /// says which two keys cannot go together.
    pub fn from_parts(
        hosts: Vec<String>,
        vm: Option<VmSpec>,
        host_boot: Option<HostBoot>,
    ) -> Result<TargetSpec, &'static str> {
        match (vm, host_boot) {
            (Some(_), Some(_)) => Err("both `vm` and `boot`"),
            (Some(_), None) if !hosts.is_empty() => Err("both `hosts` and `vm`"),
            (Some(vm), None) => Ok(TargetSpec::Vm(Box::new(vm))),
            (None, Some(boot)) => Ok(TargetSpec::BootedHost { boot, hosts }),
            (None, None) if hosts.is_empty() => Ok(TargetSpec::Local),
            (None, None) => Ok(TargetSpec::Hosts(hosts)),
        }
    }
}

/// The stored shape of the target inside an experiment's JSON, as every
/// verdict version wrote it: three optional keys.
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct StoredTarget {
    #[serde(default)]
    hosts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vm: Option<VmSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host_boot: Option<HostBoot>,
}

impl TryFrom<StoredTarget> for TargetSpec {
    type Error = String;

    fn try_from(stored: StoredTarget) -> Result<TargetSpec, String> {
        TargetSpec::from_parts(stored.hosts, stored.vm, stored.host_boot)
            .map_err(|both| format!("the stored target has {both}, which cannot run together"))
    }
}

impl From<TargetSpec> for StoredTarget {
    fn from(target: TargetSpec) -> StoredTarget {
        let (hosts, vm, host_boot) = match target {
            TargetSpec::Local => (Vec::new(), None, None),
            TargetSpec::Hosts(hosts) => (hosts, None, None),
            TargetSpec::Vm(vm) => (Vec::new(), Some(*vm), None),
            TargetSpec::BootedHost { boot, hosts } => (hosts, None, Some(boot)),
        };
        StoredTarget {
            hosts,
            vm,
            host_boot,
        }
    }
}

/// How long a target reached over ssh may stay unreachable after a lost
/// connection before its part of the run stops, in milliseconds. Runs
/// stored by older versions wrote seconds (`reconnect_timeout_s`, a float);
/// that spelling still reads. A missing or garbled value is an error,
/// never a default: a resume reconnects as the run was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StoredReconnect")]
pub struct ReconnectTimeout {
    pub reconnect_timeout_ms: u64,
}

impl ReconnectTimeout {
    /// The timeout of `duration` (whole milliseconds).
    pub fn of(duration: Duration) -> ReconnectTimeout {
        ReconnectTimeout {
            reconnect_timeout_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        }
    }

    pub fn duration(self) -> Duration {
        Duration::from_millis(self.reconnect_timeout_ms)
    }
}

/// Either spelling of the reconnect timeout, as stored.
#[derive(Deserialize)]
struct StoredReconnect {
    reconnect_timeout_ms: Option<u64>,
    reconnect_timeout_s: Option<f64>,
}

impl TryFrom<StoredReconnect> for ReconnectTimeout {
    type Error = String;

    fn try_from(stored: StoredReconnect) -> Result<ReconnectTimeout, String> {
        match (stored.reconnect_timeout_ms, stored.reconnect_timeout_s) {
            (Some(milliseconds), _) => Ok(ReconnectTimeout {
                reconnect_timeout_ms: milliseconds,
            }),
            (None, Some(seconds)) if seconds.is_finite() && seconds >= 0.0 => {
                Ok(ReconnectTimeout::of(Duration::from_secs_f64(seconds)))
            }
            (None, Some(seconds)) => Err(format!(
                "`reconnect_timeout_s` = {seconds} is not a duration"
            )),
            (None, None) => Err("no `reconnect_timeout_ms`".to_string()),
        }
    }
}

/// How verdict reaches an ssh target, as a run stores it so that a resume
/// connects the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshSettings {
    /// `--ssh-config FILE` (passed to ssh as -F).
    pub ssh_config: Option<PathBuf>,
    #[serde(flatten)]
    pub reconnect: ReconnectTimeout,
}

/// The `target` annotation of each run of a host group (`verdict run
/// --host A --host B`): the group's hosts, this run's host, the group's
/// name and how the hosts are reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostGroupSettings {
    pub hosts: Vec<String>,
    #[serde(flatten)]
    pub ssh: SshSettings,
    pub group: String,
    pub host: String,
}

/// The `boot_host` annotation of a run on an ssh host verdict boots: the
/// host and how it is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootHostSettings {
    pub host: String,
    #[serde(flatten)]
    pub ssh: SshSettings,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reconnect_timeout_reads_in_either_unit_and_never_defaults() {
        let settings: BootHostSettings = serde_json::from_str(
            r#"{"host": "lpar1", "ssh_config": null, "reconnect_timeout_ms": 90000}"#,
        )
        .unwrap();
        assert_eq!(settings.ssh.reconnect.duration(), Duration::from_secs(90));
        // Older runs stored seconds.
        let group: HostGroupSettings = serde_json::from_str(
            r#"{"hosts": ["a", "b"], "ssh_config": "/c", "reconnect_timeout_s": 2.5, "group": "7-1", "host": "b"}"#,
        )
        .unwrap();
        assert_eq!(group.ssh.reconnect.reconnect_timeout_ms, 2500);
        assert_eq!(group.ssh.ssh_config, Some(PathBuf::from("/c")));
        // Written back in one unit.
        let json = serde_json::to_value(&group).unwrap();
        assert_eq!(json["reconnect_timeout_ms"], 2500);
        assert!(json.get("reconnect_timeout_s").is_none());
        for garbled in [
            r#"{"host": "h", "ssh_config": null}"#,
            r#"{"host": "h", "ssh_config": null, "reconnect_timeout_ms": "soon"}"#,
            r#"{"host": "h", "ssh_config": null, "reconnect_timeout_s": -1.0}"#,
        ] {
            assert!(
                serde_json::from_str::<BootHostSettings>(garbled).is_err(),
                "{garbled}"
            );
        }
    }

    #[test]
    fn the_flat_shape_converts_and_refuses_what_cannot_run() {
        assert_eq!(
            TargetSpec::from_parts(Vec::new(), None, None),
            Ok(TargetSpec::Local)
        );
        assert_eq!(
            TargetSpec::from_parts(vec!["a".into()], None, None).map(|t| t.placement(t.hosts())),
            Ok(Placement::Hosts)
        );
        // A file's hosts that a command measures here (a bisection
        // without --host) stay here; --host alone goes there.
        let named = TargetSpec::Hosts(vec!["a".to_string()]);
        assert_eq!(named.placement(&[]), Placement::Local);
        assert_eq!(
            TargetSpec::Local.placement(&["b".to_string()]),
            Placement::Hosts
        );
        assert_eq!(TargetSpec::Local.placement(&[]), Placement::Local);
        let stored: Result<StoredTarget, _> =
            serde_json::from_str(r#"{"hosts": ["a"], "vm": null}"#);
        assert!(TargetSpec::try_from(stored.unwrap()).is_ok());
    }
}
