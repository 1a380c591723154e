//! What an iteration captures besides its metrics, to explain a change
//! later: the monitors (the system's counters around the workload, read on
//! the target by its `Target` as part of the same run request, and the
//! workload's own context switches), turned into named deltas by
//! verdict-parse; and, in profiled blocks, the profile of one extra
//! iteration (`profile.rs`). Never a comparison's own data. Must not read
//! /proc itself or store anything (the run loop stores the sample and its
//! details in one transaction).

use std::collections::BTreeMap;
use std::path::Path;

use verdict_exec::{Invocation, MonitorRequest, Outcome};
use verdict_model::Experiment;
use verdict_parse::proc::{
    CounterFile, WORKLOAD_INVOLUNTARY_SWITCHES, WORKLOAD_VOLUNTARY_SWITCHES, counter_deltas,
};

use crate::profile::Profiler;

/// What a run loop remembers while it captures: the profiler of its
/// target (proven once), and the counter files it already warned about.
#[derive(Debug, Default)]
pub(crate) struct CaptureState {
    pub(crate) profiler: Option<Profiler>,
    warned: Vec<String>,
}

/// `invocation` with the monitors' snapshots requested when the experiment
/// keeps them on.
pub(crate) fn monitored(experiment: &Experiment, invocation: Invocation) -> Invocation {
    if experiment.monitors.enabled {
        invocation.with_monitor(MonitorRequest::system_counters())
    } else {
        invocation
    }
}

/// The monitors' deltas of a finished iteration; empty when monitors are
/// off or the target sent no snapshots (an agent older than monitors).
/// A file that could not be read or parsed there is left out, with a note
/// (once per run loop) through `note`.
pub(crate) fn monitors_of(
    experiment: &Experiment,
    outcome: &Outcome,
    state: &mut CaptureState,
    note: &mut dyn FnMut(&str),
) -> BTreeMap<String, f64> {
    let mut monitors = BTreeMap::new();
    if !experiment.monitors.enabled {
        return monitors;
    }
    let Some(snapshots) = &outcome.monitor else {
        return monitors;
    };
    monitors.insert(
        WORKLOAD_VOLUNTARY_SWITCHES.to_string(),
        outcome.voluntary_switches as f64,
    );
    monitors.insert(
        WORKLOAD_INVOLUNTARY_SWITCHES.to_string(),
        outcome.involuntary_switches as f64,
    );
    for file in &snapshots.before {
        let path = file.path.to_string_lossy();
        let Some(kind) = CounterFile::from_path(&path) else {
            continue;
        };
        let problem = match snapshots.pair(Path::new(&*path)) {
            None => Some("it could not be read there".to_string()),
            Some((before, after)) => {
                match counter_deltas(kind, before, after, snapshots.ticks_per_second) {
                    Ok(deltas) => {
                        monitors.extend(deltas);
                        None
                    }
                    Err(error) => Some(error.to_string()),
                }
            }
        };
        if let Some(problem) = problem
            && !state.warned.contains(&path.to_string())
        {
            state.warned.push(path.to_string());
            note(&format!(
                "monitors: {path} is left out on this target: {problem}"
            ));
        }
    }
    monitors
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;
    use verdict_exec::{FileSnapshot, Snapshots};

    fn experiment(monitors: bool) -> Experiment {
        Experiment::parse(
            &format!("name = \"m\"\ncommand = [\"true\"]\n[monitors]\nenabled = {monitors}\n"),
            "m.toml",
        )
        .unwrap()
    }

    fn file(path: &str, text: Option<&str>) -> FileSnapshot {
        FileSnapshot {
            path: PathBuf::from(path),
            text: text.map(str::to_string),
        }
    }

    #[test]
    fn deltas_switches_and_one_note_per_unreadable_file() {
        let outcome = Outcome::exited(0, Duration::from_millis(5))
            .with_switches(4, 1)
            .with_monitor(Snapshots {
                ticks_per_second: 100,
                before: vec![
                    file(
                        "/proc/stat",
                        Some("cpu 10 0 5 100 0 0 0 0\nctxt 7\nprocesses 3\n"),
                    ),
                    file("/proc/softirqs", None),
                ],
                after: vec![
                    file(
                        "/proc/stat",
                        Some("cpu 12 0 6 104 0 0 0 0\nctxt 19\nprocesses 4\n"),
                    ),
                    file("/proc/softirqs", None),
                ],
            });
        let mut state = CaptureState::default();
        let mut notes = Vec::new();
        let monitors = monitors_of(&experiment(true), &outcome, &mut state, &mut |text| {
            notes.push(text.to_string())
        });
        assert_eq!(monitors["cpu.user"], 0.02);
        assert_eq!(monitors["context_switches"], 12.0);
        assert_eq!(monitors["forks"], 1.0);
        assert_eq!(monitors[WORKLOAD_VOLUNTARY_SWITCHES], 4.0);
        assert_eq!(monitors[WORKLOAD_INVOLUNTARY_SWITCHES], 1.0);
        assert_eq!(
            notes,
            ["monitors: /proc/softirqs is left out on this target: it could not be read there"]
        );
        monitors_of(&experiment(true), &outcome, &mut state, &mut |text| {
            notes.push(text.to_string())
        });
        assert_eq!(notes.len(), 1, "said once");
        assert!(
            monitors_of(&experiment(false), &outcome, &mut state, &mut |_| {}).is_empty(),
            "off"
        );
        let invocation = monitored(&experiment(false), Invocation::argv(["true"]));
        assert_eq!(invocation.monitor, None);
        let invocation = monitored(&experiment(true), Invocation::argv(["true"]));
        assert_eq!(invocation.monitor, Some(MonitorRequest::system_counters()));
    }
}
