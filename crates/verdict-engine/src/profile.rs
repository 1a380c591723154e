//! Profiles (`[profile]`): in every `every`-th measured block, right after a
//! cell's measured iteration, the same command runs once more under
//! `perf record` on the target, and `perf script` there resolves its
//! symbols (kernel and user). That extra iteration is never a sample: its
//! timing, perturbed by perf, feeds no verdict; its profile is stored with
//! the measured iteration it follows. Every cell runs in every block, so
//! every cell gets the same number of profiles (adaptive runs: the cells
//! still running).
//!
//! Before the first iteration, perf is proven on the target: a private
//! directory for its files (`mktemp -d`), a one-shot `perf record -e EVENT
//! -- true`, and `perf evlist` on what it wrote (perf quietly records
//! `cpu-clock` when asked for `cycles` on a machine without a PMU: that is
//! an error here, not a profile of something else). Everything runs through
//! the `Target` as argv, never a shell; each perf.data is removed after
//! `perf script` has read it, and the directory when the run loop ends.
//! Must not parse perf's output (verdict-parse folds it) or store anything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use verdict_exec::{Cancel, ExecError, Invocation, Program, Status, Target};
use verdict_model::{Experiment, ProfileRecord, ProfileSpec};

use crate::schedule::Slot;

/// Bytes of `perf script` output kept: beyond this the profile is partial,
/// and says so.
const SCRIPT_OUTPUT_LIMIT: usize = 256 * 1024 * 1024;

/// How long the perf commands around a profiled iteration may take.
const PERF_TIMEOUT: Duration = Duration::from_secs(600);

/// `perf script`'s fields: what `verdict_parse::fold_perf_script` reads.
const SCRIPT_FIELDS: &str = "comm,tid,period,ip,sym,dso";

/// Why profiling cannot start on a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("profile on {target}: {message}")]
pub struct ProfileError {
    pub target: String,
    pub message: String,
}

/// Whether the iteration in `slot` is followed by a profiled one.
pub(crate) fn due(experiment: &Experiment, slot: Slot) -> bool {
    let Some(spec) = &experiment.profile else {
        return false;
    };
    !slot.warmup
        && slot
            .block
            .checked_sub(experiment.sampling.warmups)
            .is_some_and(|measured| measured % spec.every.max(1) == 0)
}

/// perf on one target, proven.
#[derive(Debug)]
pub(crate) struct Profiler {
    /// The private directory on the target for perf.data files.
    directory: PathBuf,
    spec: ProfileSpec,
    profiled: u32,
}

/// `argv` with no extra environment, a timeout and a large output bound.
fn perf_command<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Invocation {
    Invocation::argv(argv)
        .with_timeout(PERF_TIMEOUT)
        .with_output_limit(SCRIPT_OUTPUT_LIMIT)
}

/// `words` followed by `path`, as [`perf_command`].
fn command_on(words: &[&str], path: &Path) -> Invocation {
    perf_command(
        words
            .iter()
            .map(|word| word.to_string())
            .chain([path.display().to_string()]),
    )
}

/// The first line of the command's stderr (or stdout), trimmed, for a
/// message.
fn said(outcome: &verdict_exec::Outcome) -> String {
    let text = outcome.output_tail(2048);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    if lines.is_empty() {
        "it printed nothing".to_string()
    } else {
        lines.join(" / ")
    }
}

/// The event's name without modifiers (`cycles:u` is `cycles`).
fn base_event(event: &str) -> &str {
    event.split([':', '/']).next().unwrap_or(event)
}

impl Profiler {
    /// Proves perf and the event on `target` (see the module
    /// documentation) and keeps a private directory there.
    pub(crate) fn prepare(
        target: &dyn Target,
        spec: &ProfileSpec,
    ) -> Result<Profiler, ProfileError> {
        let name = target.target_name().to_string();
        let error = |message: String| ProfileError {
            target: name.clone(),
            message,
        };
        let cancel = Cancel::new();
        let made = target
            .run(
                &perf_command(["mktemp", "-d", "-t", "verdict-profile.XXXXXXXX"]),
                &cancel,
            )
            .map_err(|problem| {
                error(format!(
                    "cannot make a directory for perf's files (`mktemp -d`): {problem}"
                ))
            })?;
        let directory = String::from_utf8_lossy(&made.stdout).trim().to_string();
        if made.status != Status::Exited(0) || !directory.starts_with('/') {
            return Err(error(format!(
                "cannot make a directory for perf's files (`mktemp -d` {}): {}",
                made.status,
                said(&made)
            )));
        }
        let profiler = Profiler {
            directory: PathBuf::from(directory),
            spec: spec.clone(),
            profiled: 0,
        };
        let checked = profiler.check_event(target, &cancel);
        if let Err(message) = checked {
            profiler.remove(target);
            return Err(error(message));
        }
        Ok(profiler)
    }

    /// `perf record -e EVENT -- true`, then `perf evlist` on its file: the
    /// reason when perf is missing or the event cannot be recorded as asked.
    fn check_event(&self, target: &dyn Target, cancel: &Cancel) -> Result<(), String> {
        let file = self.directory.join("check.data");
        let record = perf_command(self.record_argv(&file, &["true".to_string()]));
        let recorded = target.run(&record, cancel);
        let outcome = match recorded {
            Ok(outcome) => outcome,
            Err(problem) => {
                return Err(format!(
                    "perf could not be started: {problem}; install perf there (Debian: linux-perf; for a VM target, list `perf` in `[target] vm` `programs`)"
                ));
            }
        };
        let result = if outcome.status != Status::Exited(0) {
            Err(format!(
                "perf cannot record the event `{}` there (`{}` {}): {}",
                self.spec.event,
                record.program,
                outcome.status,
                said(&outcome)
            ))
        } else {
            let listed = target.run(&command_on(&["perf", "evlist", "-i"], &file), cancel);
            match listed {
                Ok(listed) if listed.status == Status::Exited(0) => {
                    let text = String::from_utf8_lossy(&listed.stdout);
                    let recorded = text.lines().next().unwrap_or("").trim().to_string();
                    if base_event(&recorded) == base_event(&self.spec.event) {
                        Ok(())
                    } else {
                        Err(format!(
                            "the event `{}` is not supported there: perf recorded `{recorded}` instead (it falls back when the machine has no counter for the event); profile with `event = \"{recorded}\"`, or on a machine that has `{}`",
                            self.spec.event, self.spec.event
                        ))
                    }
                }
                Ok(listed) => Err(format!(
                    "`perf evlist` {}: {}",
                    listed.status,
                    said(&listed)
                )),
                Err(problem) => Err(format!("`perf evlist`: {problem}")),
            }
        };
        self.remove_file(target, &file);
        result
    }

    fn record_argv(&self, file: &Path, command: &[String]) -> Vec<String> {
        let mut argv: Vec<String> = vec![
            "perf".into(),
            "record".into(),
            "-e".into(),
            self.spec.event.clone(),
            "-F".into(),
            self.spec.frequency.to_string(),
        ];
        argv.extend(
            self.spec
                .call_graph
                .perf_arguments()
                .iter()
                .map(|argument| argument.to_string()),
        );
        argv.extend([
            "-o".into(),
            file.display().to_string(),
            "-q".into(),
            "--".into(),
        ]);
        argv.extend(command.iter().cloned());
        argv
    }

    /// Runs `workload` once under `perf record` and reads its profile with
    /// `perf script`; a failure of either is a note in the profile, never
    /// an error of the run (only cancellation is).
    pub(crate) fn profile(
        &mut self,
        target: &dyn Target,
        workload: &Invocation,
        success_codes: &[i32],
        cancel: &Cancel,
    ) -> Result<ProfileRecord, ExecError> {
        self.profiled += 1;
        let file = self
            .directory
            .join(format!("iteration-{}.data", self.profiled));
        let command = match &workload.program {
            Program::Argv(argv) => argv.clone(),
            Program::Shell(script) => vec!["/bin/sh".into(), "-c".into(), script.clone()],
        };
        let mut invocation = workload.clone();
        invocation.program = Program::Argv(self.record_argv(&file, &command));
        invocation.monitor = None;
        invocation.repeated = false;
        let recorded = target.run(&invocation, cancel);
        let result = self.read_profile(target, &file, recorded, success_codes, cancel);
        self.remove_file(target, &file);
        result
    }

    fn read_profile(
        &self,
        target: &dyn Target,
        file: &Path,
        recorded: Result<verdict_exec::Outcome, ExecError>,
        success_codes: &[i32],
        cancel: &Cancel,
    ) -> Result<ProfileRecord, ExecError> {
        let mut notes = Vec::new();
        let wall = match recorded {
            Err(ExecError::Cancelled) => return Err(ExecError::Cancelled),
            Err(problem) => return Ok(self.empty(format!("perf record could not run: {problem}"))),
            Ok(outcome) => {
                let success =
                    matches!(outcome.status, Status::Exited(code) if success_codes.contains(&code));
                if !success {
                    notes.push(format!(
                        "the profiled iteration ended with {}: {}",
                        outcome.status,
                        said(&outcome)
                    ));
                }
                outcome.wall
            }
        };
        let script = target.run(
            &command_on(&["perf", "script", "-F", SCRIPT_FIELDS, "-i"], file),
            cancel,
        );
        let output = match script {
            Err(ExecError::Cancelled) => return Err(ExecError::Cancelled),
            Err(problem) => {
                notes.push(format!("perf script could not run: {problem}"));
                return Ok(self.empty(notes.join("; ")));
            }
            Ok(output) if output.status != Status::Exited(0) => {
                notes.push(format!("perf script {}: {}", output.status, said(&output)));
                return Ok(self.empty(notes.join("; ")));
            }
            Ok(output) => output,
        };
        if output.stdout_truncated {
            notes.push(format!(
                "perf script printed more than {} MiB; the profile holds its last part",
                SCRIPT_OUTPUT_LIMIT / (1024 * 1024)
            ));
        }
        let folded = verdict_parse::fold_perf_script(&output.stdout);
        if folded.unparsed_lines > 0 {
            notes.push(format!(
                "{} line(s) of perf script output were not understood and left out",
                folded.unparsed_lines
            ));
        }
        if folded.samples == 0 {
            notes.push(format!(
                "no samples: the profiled iteration ran {:.1} ms, and at {} Hz perf samples every {:.1} ms; a longer workload or a higher `frequency` would give samples",
                wall.as_secs_f64() * 1000.0,
                self.spec.frequency,
                1000.0 / f64::from(self.spec.frequency.max(1))
            ));
        }
        Ok(ProfileRecord {
            event: self.spec.event.clone(),
            samples: folded.samples,
            weight: folded.weight,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            symbols: verdict_parse::symbol_weights(&folded.stacks),
            stacks: folded.stacks,
        })
    }

    fn empty(&self, note: String) -> ProfileRecord {
        ProfileRecord {
            event: self.spec.event.clone(),
            samples: 0,
            weight: 0,
            note: Some(note),
            symbols: Vec::new(),
            stacks: Vec::new(),
        }
    }

    fn remove_file(&self, target: &dyn Target, file: &Path) {
        let _ = target.run(&command_on(&["rm", "-f", "--"], file), &Cancel::new());
    }

    /// Removes the directory and what is left in it.
    pub(crate) fn remove(&self, target: &dyn Target) {
        let _ = target.run(
            &command_on(&["rm", "-rf", "--"], &self.directory),
            &Cancel::new(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_exec::{FakeExecutor, Outcome};

    fn spec(event: &str) -> ProfileSpec {
        ProfileSpec {
            event: event.into(),
            frequency: 999,
            call_graph: verdict_model::CallGraph::Fp,
            every: 2,
        }
    }

    #[test]
    fn profiled_blocks_skip_warmups_and_follow_every() {
        let experiment = Experiment::parse(
            "name = \"p\"\ncommand = [\"true\"]\n[sampling]\niterations = 6\nwarmups = 1\n[profile]\nevery = 2\n",
            "p.toml",
        )
        .unwrap();
        let profiled: Vec<u32> = (0..7)
            .filter(|&block| {
                due(
                    &experiment,
                    Slot {
                        cell: 0,
                        block,
                        warmup: block == 0,
                    },
                )
            })
            .collect();
        assert_eq!(profiled, [1, 3, 5]);
    }

    #[test]
    fn a_silent_fallback_to_another_event_is_refused() {
        // perf on a machine without a PMU: `cycles` records `cpu-clock`.
        let fake = FakeExecutor::with_function(|invocation| {
            let Program::Argv(argv) = &invocation.program else {
                panic!("never a shell: {invocation:?}")
            };
            Ok(match (argv[0].as_str(), argv.get(1).map(String::as_str)) {
                ("mktemp", _) => {
                    Outcome::exited(0, Duration::ZERO).with_stdout("/tmp/verdict-profile.x\n")
                }
                ("perf", Some("evlist")) => {
                    Outcome::exited(0, Duration::ZERO).with_stdout("cpu-clock\n")
                }
                _ => Outcome::exited(0, Duration::ZERO),
            })
        });
        let error = Profiler::prepare(&fake, &spec("cycles")).unwrap_err();
        assert!(
            error.message.contains(
                "the event `cycles` is not supported there: perf recorded `cpu-clock` instead"
            ),
            "{error}"
        );
        // The directory was removed again; the check file first.
        let last = fake.invocations().pop().unwrap();
        assert_eq!(last.program.to_string(), "rm -rf -- /tmp/verdict-profile.x");
        assert!(Profiler::prepare(&fake, &spec("cpu-clock")).is_ok());
    }
}
