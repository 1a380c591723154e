//! The engine against a scripted executor and a real SQLite store: the
//! schedule, level switches, failures recorded not counted, Ctrl-C and
//! resume, and adaptive stopping.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use verdict_engine::{Engine, EngineError, Silent, StartOptions};
use verdict_exec::{Cancel, FakeExecutor, Invocation, Leftovers, Outcome, Program};
use verdict_model::{Environment, Experiment, RunStatus};
use verdict_store::{SqliteStore, Store};

fn options(text: &str, seed: u64) -> StartOptions {
    StartOptions {
        experiment: Experiment::parse(text, "test.toml").unwrap(),
        experiment_text: text.to_string(),
        seed,
        kind: verdict_model::RunKind::Run,
        command_line: vec!["verdict".into(), "run".into()],
        tool_version: "verdict test".to_string(),
        bisect: None,
        placement: verdict_model::Placement::Local,
    }
}

fn argv(invocation: &Invocation) -> Vec<String> {
    match &invocation.program {
        Program::Argv(argv) => argv.clone(),
        Program::Shell(text) => vec!["sh".into(), "-c".into(), text.clone()],
    }
}

fn no_environment() -> Environment {
    Environment::default()
}

fn engine_with<'a>(
    executor: &'a FakeExecutor,
    store: &'a SqliteStore,
    cancel: Cancel,
) -> Engine<'a> {
    Engine {
        executor,
        store,
        cancel,
        environment: &no_environment,
    }
}

const TWO_FACTORS: &str = r#"
name = "matrix"
command = ["work", "{kernel}", "{mode}"]

[factors.kernel]
levels = ["old", "new"]
setup = ["switch-kernel", "{kernel}"]

[factors.mode]
levels = [{ value = "a", setup = ["enter-a"], teardown = ["leave-a"] }, "b"]

[sampling]
iterations = 5
warmups = 1
"#;

#[test]
fn every_slot_is_recorded_and_levels_switch_with_setup_and_teardown() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let executor =
        FakeExecutor::with_function(|_| Ok(Outcome::exited(0, Duration::from_millis(10))));
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine.start(&options(TWO_FACTORS, 3), &mut Silent).unwrap();
    assert_eq!(summary.status, RunStatus::Complete);
    assert_eq!(summary.recorded, 4 * 6);
    let samples = store.samples(summary.run).unwrap();
    assert_eq!(samples.len(), 24);
    assert_eq!(samples.iter().filter(|sample| sample.warmup).count(), 4);
    for cell in 0..4 {
        assert_eq!(
            samples
                .iter()
                .filter(|sample| sample.cell == cell && sample.is_data())
                .count(),
            5
        );
    }
    // Replay the invocations: every workload runs with its cell's levels in
    // place, entered by setup and left by teardown.
    let mut kernel: Option<String> = None;
    let mut in_a = false;
    let mut workloads = 0;
    for invocation in executor.invocations() {
        let words = argv(&invocation);
        match words[0].as_str() {
            "switch-kernel" => kernel = Some(words[1].clone()),
            "enter-a" => {
                assert!(!in_a, "entered a twice");
                in_a = true;
            }
            "leave-a" => {
                assert!(in_a, "left a without entering");
                in_a = false;
            }
            "work" => {
                workloads += 1;
                assert_eq!(Some(&words[1]), kernel.as_ref());
                assert_eq!(
                    words[2] == "a",
                    in_a,
                    "mode a must be entered exactly when running it"
                );
                assert!(
                    invocation
                        .env
                        .contains(&("VERDICT_KERNEL".to_string(), words[1].clone()))
                );
            }
            other => panic!("unexpected command {other}"),
        }
    }
    assert_eq!(workloads, 24);
    assert!(!in_a, "the run must leave mode a at the end");
}

#[test]
fn failed_iterations_are_recorded_with_reason_and_never_counted() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let calls = AtomicUsize::new(0);
    let executor = FakeExecutor::with_function(move |_| {
        let call = calls.fetch_add(1, Ordering::SeqCst);
        Ok(match call % 4 {
            0 => Outcome::exited(3, Duration::from_millis(5)).with_stderr("boom: disk full\n"),
            1 => Outcome::exited(0, Duration::from_millis(5)).with_stdout("no number here\n"),
            _ => Outcome::exited(0, Duration::from_millis(5)).with_stdout("ops: 1234\n"),
        })
    });
    let text = r#"
name = "parse"
command = ["bench"]
[[metrics]]
name = "ops"
source = "regex"
pattern = 'ops: (?P<value>\d+)'
direction = "higher"
[sampling]
iterations = 8
"#;
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine.start(&options(text, 1), &mut Silent).unwrap();
    let samples = store.samples(summary.run).unwrap();
    assert_eq!(samples.len(), 8);
    let failures: Vec<_> = samples
        .iter()
        .filter_map(|sample| sample.failure.clone())
        .collect();
    assert_eq!(failures.len(), 4);
    assert!(
        failures
            .iter()
            .any(|failure| failure.reason == "exit status 3"
                && failure.output_tail.contains("disk full"))
    );
    assert!(
        failures
            .iter()
            .any(|failure| failure.reason.starts_with("metric `ops`:"))
    );
    let data: Vec<f64> = samples
        .iter()
        .filter(|sample| sample.is_data())
        .map(|sample| sample.metrics["ops"])
        .collect();
    assert_eq!(data, vec![1234.0; 4]);
}

#[test]
fn a_failing_setup_stops_the_run_with_its_output() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let executor = FakeExecutor::with_function(|invocation| {
        Ok(if argv(invocation)[0] == "enter-a" {
            Outcome::exited(1, Duration::from_millis(1))
                .with_stderr("setenforce: permission denied\n")
        } else {
            Outcome::exited(0, Duration::from_millis(1))
        })
    });
    let engine = engine_with(&executor, &store, Cancel::new());
    let error = engine
        .start(&options(TWO_FACTORS, 3), &mut Silent)
        .unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, EngineError::Setup { .. }), "{message}");
    assert!(
        message.contains("mode=a") && message.contains("permission denied"),
        "{message}"
    );
    let runs = store.list_runs().unwrap();
    assert_eq!(runs[0].status, RunStatus::Failed);
}

#[test]
fn an_interrupted_run_resumes_with_the_same_schedule_and_no_duplicates() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let cancel = Cancel::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let (counter, trigger) = (calls.clone(), cancel.clone());
    let executor = FakeExecutor::with_function(move |invocation| {
        if argv(invocation)[0] == "work" && counter.fetch_add(1, Ordering::SeqCst) == 9 {
            trigger.cancel();
            return Err(verdict_exec::ExecError::Cancelled);
        }
        Ok(Outcome::exited(0, Duration::from_millis(1)))
    });
    let engine = engine_with(&executor, &store, cancel);
    let first = engine
        .start(&options(TWO_FACTORS, 11), &mut Silent)
        .unwrap();
    assert_eq!(first.status, RunStatus::Interrupted);
    assert_eq!(first.recorded, 9, "the iteration in flight is not recorded");

    let executor =
        FakeExecutor::with_function(|_| Ok(Outcome::exited(0, Duration::from_millis(1))));
    let engine = engine_with(&executor, &store, Cancel::new());
    let resumed = engine.resume(first.run, &mut Silent).unwrap();
    assert_eq!(resumed.status, RunStatus::Complete);
    let samples = store.samples(first.run).unwrap();
    assert_eq!(samples.len(), 24);
    let sequences: Vec<u32> = samples.iter().map(|sample| sample.sequence).collect();
    assert_eq!(sequences, (0..24).collect::<Vec<_>>());
    // The same schedule as an uninterrupted run with the same seed.
    let store_two = SqliteStore::open(directory.path().join("w.db")).unwrap();
    let engine = engine_with(&executor, &store_two, Cancel::new());
    let straight = engine
        .start(&options(TWO_FACTORS, 11), &mut Silent)
        .unwrap();
    let cells = |store: &SqliteStore, run| {
        store
            .samples(run)
            .unwrap()
            .iter()
            .map(|sample| sample.cell)
            .collect::<Vec<_>>()
    };
    assert_eq!(cells(&store, first.run), cells(&store_two, straight.run));
    // A complete run cannot be resumed.
    assert!(matches!(
        engine.resume(straight.run, &mut Silent),
        Err(EngineError::NotResumable { .. })
    ));
}

fn adaptive_run(candidate_factor: f64, seed: u64) -> (usize, Vec<String>) {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let state = AtomicUsize::new(seed as usize);
    let executor = FakeExecutor::with_function(move |invocation| {
        // Deterministic pseudo-noise, about 3% spread.
        let step = state.fetch_add(1, Ordering::SeqCst) as u64;
        let noise = ((step.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0 - 0.5) * 0.06;
        let base = if argv(invocation)[1] == "b" {
            candidate_factor
        } else {
            1.0
        };
        Ok(Outcome::exited(
            0,
            Duration::from_secs_f64(0.1 * base * (1.0 + noise)),
        ))
    });
    let text = r#"
name = "adaptive"
command = ["work", "{version}"]
[factors]
version = ["a", "b"]
[sampling]
mode = "adaptive"
min = 6
max = 60
threshold = 0.1
"#;
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine.start(&options(text, seed), &mut Silent).unwrap();
    (summary.recorded, summary.decisions)
}

#[test]
fn adaptive_runs_stop_early_on_a_clear_change_and_on_equivalence() {
    let (recorded, decisions) = adaptive_run(1.5, 5);
    assert!(
        recorded < 40,
        "a 50% change should be decided quickly, took {recorded}"
    );
    assert!(decisions[0].ends_with("regression"), "{decisions:?}");
    let (recorded, decisions) = adaptive_run(1.0, 6);
    assert!(
        recorded < 120,
        "A/A with 3% noise and a 10% threshold should end equivalent before the cap, took {recorded}"
    );
    assert!(decisions[0].ends_with("equivalent"), "{decisions:?}");
}

/// `--until-decided` without `-n`: no cap in the experiment.
fn uncapped_run(candidate_factor: f64, seed: u64) -> (usize, Vec<String>) {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let state = AtomicUsize::new(seed as usize);
    let executor = FakeExecutor::with_function(move |invocation| {
        // Deterministic pseudo-noise, uniform ±15% (log sd about 0.087).
        let step = state.fetch_add(1, Ordering::SeqCst) as u64;
        let noise = ((step.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0 - 0.5) * 0.3;
        let base = if argv(invocation)[1] == "b" {
            candidate_factor
        } else {
            1.0
        };
        Ok(Outcome::exited(
            0,
            Duration::from_secs_f64(0.1 * base * (1.0 + noise)),
        ))
    });
    let text = "name = \"uncapped\"\ncommand = [\"work\", \"{version}\"]\n[factors]\nversion = [\"a\", \"b\"]\n[sampling]\nthreshold = 0.1\n";
    let mut start = options(text, seed);
    start.experiment.sampling.mode = verdict_model::SamplingMode::Uncapped { min: 6 };
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine.start(&start, &mut Silent).unwrap();
    let adaptive = store.adaptive(summary.run).unwrap();
    let procedure = adaptive.procedure.unwrap();
    assert!(procedure.starts_with("information-based"), "{procedure}");
    assert_eq!(adaptive.decisions.len(), 1);
    assert!(
        summary.decisions[0].ends_with(adaptive.decisions[0].outcome()),
        "{:?}",
        summary.decisions
    );
    (summary.recorded, summary.decisions)
}

#[test]
fn without_a_cap_a_run_ends_at_the_information_its_threshold_needs() {
    let (recorded, decisions) = uncapped_run(1.5, 5);
    assert!(
        recorded < 30,
        "a 50% change is decided quickly, took {recorded}"
    );
    assert!(decisions[0].ends_with("regression"), "{decisions:?}");
    // No change: the threshold (10%) at this noise needs about 22 runs per
    // cell (1.2·(1.96 + 1.28)²/ln(1.1)² · (2π/3)·0.087²): the run ends, by
    // "equivalent" or at that information, without any cap given.
    let (recorded, decisions) = uncapped_run(1.0, 6);
    assert!(recorded < 2 * 45, "took {recorded}");
    assert!(
        !decisions[0].ends_with("regression") && !decisions[0].ends_with("improvement"),
        "{decisions:?}"
    );
}

#[test]
fn a_metric_printed_on_the_other_stream_is_still_found() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let executor = FakeExecutor::with_function(|_| {
        Ok(Outcome::exited(0, Duration::from_millis(5)).with_stderr("latency: 17 us\n"))
    });
    let text = "name = \"x\"\ncommand = [\"bench\"]\n[[metrics]]\nname = \"latency\"\nsource = \"regex\"\npattern = 'latency: (?P<value>\\d+)'\ndirection = \"lower\"\n[sampling]\niterations = 2\n";
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine.start(&options(text, 1), &mut Silent).unwrap();
    let samples = store.samples(summary.run).unwrap();
    assert!(
        samples
            .iter()
            .all(|sample| sample.metrics.get("latency") == Some(&17.0)),
        "{samples:?}"
    );
}

#[test]
fn an_interrupted_adaptive_run_resumes_to_the_same_decisions() {
    let text = "name = \"adaptive\"\ncommand = [\"work\", \"{version}\"]\n[factors]\nversion = [\"a\", \"b\"]\n[sampling]\nmode = \"adaptive\"\nmin = 6\nmax = 40\nthreshold = 0.1\n";
    // Deterministic pseudo-noise per cell (about 3%), candidate 30% slower.
    let responder = |cancel_at: Option<usize>, trigger: Option<Cancel>| {
        let calls = AtomicUsize::new(0);
        let per_cell = [AtomicUsize::new(0), AtomicUsize::new(0)];
        FakeExecutor::with_function(move |invocation| {
            let call = calls.fetch_add(1, Ordering::SeqCst);
            if Some(call) == cancel_at {
                if let Some(trigger) = &trigger {
                    trigger.cancel();
                }
                return Err(verdict_exec::ExecError::Cancelled);
            }
            let cell = usize::from(argv(invocation)[1] == "b");
            let index = per_cell[cell].fetch_add(1, Ordering::SeqCst) as u64;
            let noise = ((index.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0 - 0.5) * 0.06;
            let base = if cell == 1 { 1.3 } else { 1.0 };
            Ok(Outcome::exited(
                0,
                Duration::from_secs_f64(0.1 * base * (1.0 + noise)),
            ))
        })
    };
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let cancel = Cancel::new();
    let executor = responder(Some(9), Some(cancel.clone()));
    let engine = engine_with(&executor, &store, cancel);
    let first = engine.start(&options(text, 3), &mut Silent).unwrap();
    assert_eq!(first.status, RunStatus::Interrupted);
    let executor = responder(None, None);
    let stored = store.samples(first.run).unwrap().len();
    let engine = engine_with(&executor, &store, Cancel::new());
    let resumed = engine.resume(first.run, &mut Silent).unwrap();
    assert_eq!(resumed.status, RunStatus::Complete);
    assert!(
        resumed.decisions[0].ends_with("regression"),
        "{:?}",
        resumed.decisions
    );
    let samples = store.samples(first.run).unwrap();
    let sequences: Vec<u32> = samples.iter().map(|sample| sample.sequence).collect();
    assert_eq!(
        sequences,
        (0..samples.len() as u32).collect::<Vec<_>>(),
        "no gap, no duplicate"
    );
    assert!(
        samples.len() > stored && samples.len() < 80,
        "stopped early: {}",
        samples.len()
    );
    // Every block holds each still-active cell once: the schedule was continued, not restarted.
    let mut blocks: std::collections::BTreeMap<u32, Vec<usize>> = std::collections::BTreeMap::new();
    for sample in &samples {
        blocks.entry(sample.block).or_default().push(sample.cell);
    }
    for cells in blocks.values() {
        let mut sorted = cells.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            cells.len(),
            "a cell twice in one block: {cells:?}"
        );
    }
}

#[test]
fn adaptive_with_the_sequential_order_is_refused_before_anything_runs() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let executor =
        FakeExecutor::with_function(|_| Ok(Outcome::exited(0, Duration::from_millis(10))));
    let engine = engine_with(&executor, &store, Cancel::new());
    // The file format refuses the pair; `--until-decided` used to build it
    // after parsing, which is what the engine must catch.
    let mut start = options(TWO_FACTORS, 3);
    start.experiment.sampling.order = verdict_model::Order::Sequential;
    start.experiment.sampling.mode = verdict_model::SamplingMode::Adaptive { min: 5, max: 13 };
    let error = engine.start(&start, &mut Silent).unwrap_err();
    assert!(
        matches!(error, EngineError::AdaptiveSequential { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("order = \"sequential\""),
        "{error}"
    );
    assert!(executor.invocations().is_empty(), "a setup or workload ran");
    assert!(store.list_runs().unwrap().is_empty());
}

/// `perf stat -x,` on a VM without a PMU (crates/verdict-parse fixture
/// perf-6.1-x-vm-workload.csv): `cycles` is `<not supported>`.
const PERF_WITHOUT_PMU: &str = "0.71,msec,task-clock,710224,100.00,0.412,CPUs utilized\n\
<not supported>,,cycles,0,100.00,,\n\
113,,page-faults,710224,100.00,159.104,K/sec\n";

const PERF_EXPERIMENT: &str = r#"
name = "perf"
command = ["perf", "stat", "-x,", "-e", "task-clock,cycles,page-faults", "work"]

[factors]
mode = ["a", "b"]

[[metrics]]
name = "task-clock"
source = "perf-stat"
event = "task-clock"

[[metrics]]
name = "cycles"
source = "perf-stat"
event = "cycles"

[[metrics]]
name = "wall"

[sampling]
iterations = 3
"#;

#[test]
fn an_unsupported_counter_is_a_missing_value_and_the_iteration_counts() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let executor = FakeExecutor::with_function(|_| {
        Ok(Outcome::exited(0, Duration::from_millis(10)).with_stderr(PERF_WITHOUT_PMU))
    });
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine
        .start(&options(PERF_EXPERIMENT, 1), &mut Silent)
        .unwrap();
    assert_eq!(summary.failed, 0);
    let samples = store.samples(summary.run).unwrap();
    assert_eq!(samples.len(), 6);
    for sample in &samples {
        assert!(sample.is_data(), "{:?}", sample.failure);
        assert_eq!(sample.metrics["task-clock"], 0.71);
        assert_eq!(sample.metrics["wall"], 0.01);
        assert!(!sample.metrics.contains_key("cycles"));
        assert!(
            sample.missing["cycles"].contains("<not supported>"),
            "{:?}",
            sample.missing
        );
    }
    // An event perf never printed still fails the iteration: the
    // experiment asks for something this output does not have.
    let typo = PERF_EXPERIMENT.replace("event = \"cycles\"", "event = \"cycels\"");
    let summary = engine.start(&options(&typo, 1), &mut Silent).unwrap();
    assert_eq!(summary.failed, 6);
}

#[test]
fn the_workload_kills_its_leftovers_unless_the_experiment_opts_out() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let executor = FakeExecutor::with_function(|_| {
        Ok(Outcome::exited(0, Duration::from_millis(10)).with_leftovers(["sleep"]))
    });
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine.start(&options(TWO_FACTORS, 3), &mut Silent).unwrap();
    let samples = store.samples(summary.run).unwrap();
    assert!(samples.iter().all(|sample| sample.leftovers == ["sleep"]));
    let workloads: Vec<Invocation> = executor
        .invocations()
        .into_iter()
        .filter(|invocation| argv(invocation)[0] == "work")
        .collect();
    assert_eq!(workloads.len(), 24);
    assert!(
        workloads
            .iter()
            .all(|invocation| invocation.leftovers == Leftovers::Kill)
    );
    // Hooks may start daemons on purpose: never looked at.
    assert!(
        executor
            .invocations()
            .iter()
            .filter(|invocation| argv(invocation)[0] != "work")
            .all(|invocation| invocation.leftovers == Leftovers::Ignore)
    );

    let opt_out = TWO_FACTORS.replace("warmups = 1", "warmups = 1\nkill_leftovers = false");
    let executor =
        FakeExecutor::with_function(|_| Ok(Outcome::exited(0, Duration::from_millis(10))));
    let engine = engine_with(&executor, &store, Cancel::new());
    engine.start(&options(&opt_out, 3), &mut Silent).unwrap();
    assert!(
        executor
            .invocations()
            .iter()
            .filter(|invocation| argv(invocation)[0] == "work")
            .all(|invocation| invocation.leftovers == Leftovers::Report)
    );
}

/// The metric file and the sample's start time come from the target (here a
/// fake machine), never from the controller's file system or clock: the
/// workdir below does not exist on this machine.
#[test]
fn metric_files_and_clock_are_read_on_the_target() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let executor =
        FakeExecutor::with_function(|_| Ok(Outcome::exited(0, Duration::from_millis(40))));
    executor.insert_file("/on/the/target/score-1.txt", "score: 7.5\n");
    executor.insert_file("/on/the/target/score-2.txt", "score: 9\n");
    let text = r#"
name = "file metric"
command = ["work", "{n}"]
workdir = "/on/the/target"

[factors.n]
levels = ["1", "2"]

[[metrics]]
name = "score"
source = "regex"
pattern = 'score: ([0-9.]+)'
file = "score-{n}.txt"
direction = "higher"

[sampling]
iterations = 2
"#;
    let mut start = options(text, 5);
    start.experiment.workdir = Some("/on/the/target".into());
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine.start(&start, &mut Silent).unwrap();
    assert_eq!(summary.failed, 0);
    let samples = store.samples(summary.run).unwrap();
    let cells = start.experiment.cells();
    for sample in &samples {
        let expected = if cells[sample.cell].levels[0].1 == "1" {
            7.5
        } else {
            9.0
        };
        assert_eq!(sample.metrics["score"], expected);
    }
    // The fake clock starts at a fixed instant and advances 40 ms per run.
    let starts: Vec<i64> = samples.iter().map(|sample| sample.started_at_ms).collect();
    let first = verdict_exec::FAKE_CLOCK_START_MS;
    assert_eq!(starts, vec![first, first + 40, first + 80, first + 120]);
}

/// A connection lost mid-iteration is a failed iteration ("connection
/// lost"), never data, and the run goes on; a host that stays down stops
/// the run with a message naming it.
#[test]
fn a_lost_connection_is_a_failed_iteration_and_a_down_host_stops_the_run() {
    use verdict_exec::ExecError;
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let text = r#"
name = "remote"
command = ["work", "{v}"]

[factors.v]
levels = ["a", "b"]

[sampling]
iterations = 3
"#;
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let executor =
        FakeExecutor::with_function(move |_| match counter.fetch_add(1, Ordering::SeqCst) {
            2 => Err(ExecError::ConnectionLost {
                host: "lpar1".into(),
                detail: "Connection reset by peer".into(),
            }),
            _ => Ok(Outcome::exited(0, Duration::from_millis(10))),
        });
    let engine = engine_with(&executor, &store, Cancel::new());
    let summary = engine.start(&options(text, 3), &mut Silent).unwrap();
    assert_eq!(summary.status, RunStatus::Complete);
    assert_eq!(summary.recorded, 6);
    assert_eq!(summary.failed, 1);
    let samples = store.samples(summary.run).unwrap();
    let lost = samples[2].failure.as_ref().unwrap();
    assert_eq!(lost.reason, "connection lost");
    assert!(lost.output_tail.contains("lpar1"), "{}", lost.output_tail);
    assert!(samples[2].metrics.is_empty());

    let executor = FakeExecutor::with_queue([
        Ok(Outcome::exited(0, Duration::from_millis(10))),
        Err(ExecError::HostDown {
            host: "lpar2".into(),
            message: "unreachable for 60s".into(),
        }),
    ]);
    let engine = engine_with(&executor, &store, Cancel::new());
    let error = engine.start(&options(text, 3), &mut Silent).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("host lpar2 is down: unreachable for 60s"),
        "{error}"
    );
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(store.samples(run.id).unwrap().len(), 1);
}

/// Two hosts run concurrently, each its own complete run recorded under its
/// name with its own environment; a host that goes down ends alone.
#[test]
fn hosts_run_concurrently_each_its_own_run_and_a_down_host_ends_alone() {
    use verdict_engine::{HostPart, HostWork, run_on_hosts};
    use verdict_exec::ExecError;
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v.db");
    let text = r#"
name = "hosts"
command = ["work", "{v}"]

[factors.v]
levels = ["a", "b"]

[sampling]
iterations = 4
"#;
    let healthy =
        FakeExecutor::with_function(|_| Ok(Outcome::exited(0, Duration::from_millis(10))))
            .named("lpar1");
    let calls = AtomicUsize::new(0);
    let failing = FakeExecutor::with_function(move |_| {
        if calls.fetch_add(1, Ordering::SeqCst) < 3 {
            Ok(Outcome::exited(0, Duration::from_millis(10)))
        } else {
            Err(ExecError::HostDown {
                host: "lpar2".into(),
                message: "unreachable".into(),
            })
        }
    })
    .named("lpar2");
    let environment_one = || Environment {
        hostname: Some("one.example".into()),
        ..Environment::default()
    };
    let environment_two = || Environment {
        hostname: Some("two.example".into()),
        ..Environment::default()
    };
    let work = vec![
        (
            HostPart {
                target: &healthy,
                environment: &environment_one,
            },
            HostWork::Start {
                options: Box::new(options(text, 1)),
                annotations: vec![("target".into(), serde_json::json!({"host": "lpar1"}))],
            },
        ),
        (
            HostPart {
                target: &failing,
                environment: &environment_two,
            },
            HostWork::Start {
                options: Box::new(options(text, 2)),
                annotations: vec![],
            },
        ),
    ];
    let open = || -> Result<Box<dyn Store>, verdict_store::StoreError> {
        Ok(Box::new(SqliteStore::open(&path)?))
    };
    let results = run_on_hosts(work, &open, &Cancel::new(), &|_| Box::new(Silent));
    let first = results[0].as_ref().unwrap();
    assert_eq!(first.status, RunStatus::Complete);
    assert_eq!(first.recorded, 8);
    assert!(
        results[1]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("lpar2")
    );
    let store = SqliteStore::open(&path).unwrap();
    let record = store.run(first.run).unwrap();
    assert_eq!(record.host, "lpar1");
    assert_eq!(
        record.environment_start.hostname.as_deref(),
        Some("one.example")
    );
    assert_eq!(
        store.annotations(first.run).unwrap()["target"]["host"],
        "lpar1"
    );
    let runs = store.list_runs().unwrap();
    let second = runs.iter().find(|run| run.host == "lpar2").unwrap();
    assert_eq!(second.status, RunStatus::Failed);
    assert_eq!(second.done, 3);
}

#[test]
fn adaptive_with_the_paired_analysis_is_refused_before_anything_runs() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let executor =
        FakeExecutor::with_function(|_| Ok(Outcome::exited(0, Duration::from_millis(10))));
    let engine = engine_with(&executor, &store, Cancel::new());
    let mut start = options(TWO_FACTORS, 3);
    start.experiment.sampling.analysis = verdict_model::Analysis::Paired;
    start.experiment.sampling.mode = verdict_model::SamplingMode::Adaptive { min: 5, max: 13 };
    let error = engine.start(&start, &mut Silent).unwrap_err();
    assert!(
        matches!(error, EngineError::AdaptivePaired { .. }),
        "{error}"
    );
    assert!(executor.invocations().is_empty(), "a setup or workload ran");
    // With a fixed number of iterations the paired analysis runs.
    start.experiment.sampling.mode = verdict_model::SamplingMode::Fixed;
    engine.start(&start, &mut Silent).unwrap();
    assert!(!executor.invocations().is_empty());
}
