//! What an experiment asks verdict to capture beside its metrics, to
//! explain a change: `[monitors]` (the system's counters around every
//! iteration, on by default) and `[profile]` (`perf record` of extra
//! iterations every so many blocks); and what one iteration captured
//! (`SampleDetails`: its monitors' deltas and, for a profiled one, its
//! profile). Serde types with validation; must not run perf or read
//! /proc (verdict-engine does, through the target).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use verdict_parse::proc::{CounterUnit, counter_unit};
pub use verdict_parse::{Stack, SymbolWeight};

/// `[monitors]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Monitors {
    /// Snapshot /proc/stat, /proc/interrupts, /proc/softirqs and
    /// /proc/vmstat around each iteration (default: on).
    pub enabled: bool,
}

impl Default for Monitors {
    fn default() -> Self {
        Self { enabled: true }
    }
}

impl Monitors {
    /// Whether these are the defaults (left out of the stored experiment).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// How `perf record` collects call chains (`--call-graph`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CallGraph {
    /// Frame pointers (`-g`): cheap; needs code built with frame pointers
    /// for complete user stacks (the kernel has them).
    #[default]
    Fp,
    /// DWARF unwinding of copied stack memory: complete stacks, large
    /// perf.data files.
    Dwarf,
    /// Last-branch records (recent Intel only).
    Lbr,
    /// No call chains: self weights only.
    None,
}

impl CallGraph {
    /// The `perf record` arguments for this mode.
    pub fn perf_arguments(self) -> &'static [&'static str] {
        match self {
            Self::Fp => &["-g"],
            Self::Dwarf => &["--call-graph", "dwarf"],
            Self::Lbr => &["--call-graph", "lbr"],
            Self::None => &[],
        }
    }
}

/// `[profile]`: every `every`-th block, each cell runs once more under
/// `perf record -e EVENT -F FREQUENCY`, right after its measured iteration;
/// that extra iteration's timing is never data (see docs/explain.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProfileSpec {
    /// A perf event: `cpu-clock` (software, works without a PMU),
    /// `cycles`, ...
    pub event: String,
    /// Samples per second (`-F`).
    pub frequency: u32,
    pub call_graph: CallGraph,
    /// Profile in every `every`-th measured block (1: every block).
    pub every: u32,
}

/// The `perf record` sampling frequency when none is given: 999 Hz (not a
/// round number, so sampling does not run in lockstep with periodic work).
pub const DEFAULT_FREQUENCY: u32 = 999;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMonitors {
    enabled: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    event: Option<String>,
    frequency: Option<i64>,
    call_graph: Option<toml::Value>,
    every: Option<i64>,
}

/// `[monitors]` from its TOML table.
pub(crate) fn monitors_from(value: toml::Value) -> Result<Monitors, String> {
    let raw: RawMonitors = value
        .try_into()
        .map_err(|error: toml::de::Error| format!("`[monitors]`: {}", error.message().trim()))?;
    Ok(Monitors {
        enabled: raw.enabled.unwrap_or(true),
    })
}

/// `[profile]` from its TOML table.
pub(crate) fn profile_from(value: toml::Value) -> Result<ProfileSpec, String> {
    let raw: RawProfile = value
        .try_into()
        .map_err(|error: toml::de::Error| format!("`[profile]`: {}", error.message().trim()))?;
    let event = raw.event.unwrap_or_else(|| "cpu-clock".to_string());
    // Handed to perf as the value of `-e`: no option, no space, nothing a
    // reader could mistake for two arguments.
    let plain =
        |character: char| character.is_ascii_alphanumeric() || "-_:./=,@{}".contains(character);
    if event.is_empty() || event.starts_with('-') || !event.chars().all(plain) {
        return Err(format!(
            "`profile.event` = {event:?}; expected a perf event name such as \"cpu-clock\" or \"cycles\" (`perf list` shows them)"
        ));
    }
    let frequency = match raw.frequency {
        None => DEFAULT_FREQUENCY,
        Some(frequency) if (1..=100_000).contains(&frequency) => frequency as u32,
        Some(frequency) => {
            return Err(format!(
                "`profile.frequency` = {frequency}; expected samples per second between 1 and 100000"
            ));
        }
    };
    let call_graph = match raw.call_graph {
        None | Some(toml::Value::Boolean(true)) => CallGraph::Fp,
        Some(toml::Value::Boolean(false)) => CallGraph::None,
        Some(toml::Value::String(mode)) => match mode.as_str() {
            "fp" => CallGraph::Fp,
            "dwarf" => CallGraph::Dwarf,
            "lbr" => CallGraph::Lbr,
            "none" => CallGraph::None,
            other => {
                return Err(format!(
                    "`profile.call_graph` = {other:?}; expected \"fp\", \"dwarf\", \"lbr\" or \"none\" (or true/false)"
                ));
            }
        },
        Some(other) => {
            return Err(format!(
                "`profile.call_graph` = {other}; expected \"fp\", \"dwarf\", \"lbr\" or \"none\" (or true/false)"
            ));
        }
    };
    let every = match raw.every {
        None => 1,
        Some(every) if every >= 1 && every <= i64::from(u32::MAX) => every as u32,
        Some(every) => {
            return Err(format!(
                "`profile.every` = {every}; expected a block count of at least 1 (1: profile in every block)"
            ));
        }
    };
    Ok(ProfileSpec {
        event,
        frequency,
        call_graph,
        every,
    })
}

/// What a profiled extra iteration recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRecord {
    /// The event sampled (as perf recorded it).
    pub event: String,
    /// Samples perf took.
    pub samples: u64,
    /// Their summed weight (perf's periods: nanoseconds for `cpu-clock`).
    pub weight: u64,
    /// Why the profile is empty or partial (the workload was shorter than
    /// one sampling period; perf failed; its output was cut), for people.
    pub note: Option<String>,
    /// Every symbol's self and inclusive weight.
    pub symbols: Vec<SymbolWeight>,
    /// The distinct stacks.
    pub stacks: Vec<Stack>,
}

/// What an iteration captured besides its metrics: never a comparison's
/// own verdict, never `--fail-on`'s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampleDetails {
    /// The system's counters over the iteration, and the workload's
    /// context switches (names: `verdict_parse::proc`).
    pub monitors: BTreeMap<String, f64>,
    /// The profile of the extra iteration run right after this one, in
    /// profiled blocks.
    pub profile: Option<ProfileRecord>,
}

impl SampleDetails {
    /// Nothing captured.
    pub fn is_empty(&self) -> bool {
        self.monitors.is_empty() && self.profile.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        toml::from_str::<toml::Value>(text).unwrap()
    }

    #[test]
    fn defaults_and_settings() {
        assert_eq!(monitors_from(table("")).unwrap(), Monitors::default());
        assert!(!monitors_from(table("enabled = false")).unwrap().enabled);
        let profile = profile_from(table("")).unwrap();
        assert_eq!(
            profile,
            ProfileSpec {
                event: "cpu-clock".into(),
                frequency: 999,
                call_graph: CallGraph::Fp,
                every: 1
            }
        );
        let profile = profile_from(table(
            "event = \"cycles:u\"\nfrequency = 4000\ncall_graph = \"dwarf\"\nevery = 5",
        ))
        .unwrap();
        assert_eq!(
            profile.call_graph.perf_arguments(),
            ["--call-graph", "dwarf"]
        );
        assert_eq!((profile.frequency, profile.every), (4000, 5));
        assert_eq!(
            profile_from(table("call_graph = false"))
                .unwrap()
                .call_graph,
            CallGraph::None
        );
    }

    #[test]
    fn mistakes_are_named() {
        for (text, expected) in [
            ("event = \"-o /etc/passwd\"", "`profile.event`"),
            ("event = \"a b\"", "`profile.event`"),
            ("frequency = 0", "`profile.frequency` = 0"),
            ("every = 0", "`profile.every` = 0"),
            ("call_graph = \"stack\"", "`profile.call_graph` = \"stack\""),
            ("events = \"cycles\"", "unknown field `events`"),
        ] {
            let error = profile_from(table(text)).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
        let error = monitors_from(table("enable = false")).unwrap_err();
        assert!(error.contains("unknown field `enable`"), "{error}");
    }
}
