//! Appends samples to a verdict database in a loop, printing each sequence
//! number on stdout after its commit returns. The crash test SIGKILLs it
//! mid-loop; with `--count N` it also times `append_sample` (µs per sample,
//! on stderr). Must not be used as a real workload.
//!
//!     append_loop DB [--run ID] [--count N]
//!
//! Without `--run` it creates a run and prints `run ID` first; with it, it
//! continues that run after its last stored sample, like `verdict run --resume`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use verdict_model::{Cell, Environment, Failure, RunId, Sample};
use verdict_store::{NewRun, SqliteStore, Store};

fn main() {
    let mut arguments = std::env::args().skip(1);
    let path = PathBuf::from(
        arguments
            .next()
            .expect("usage: append_loop DB [--run ID] [--count N]"),
    );
    let mut run = None;
    let mut count = None;
    while let Some(flag) = arguments.next() {
        let value = arguments.next().expect("flag value");
        match flag.as_str() {
            "--run" => run = Some(RunId(value.parse().expect("run id"))),
            "--count" => count = Some(value.parse::<u32>().expect("count")),
            _ => panic!("unknown flag {flag}"),
        }
    }
    let store = SqliteStore::open(&path).unwrap_or_else(|error| panic!("failed to {error}"));
    let cells = [
        Cell {
            levels: vec![
                ("kernel".into(), "6.1".into()),
                ("selinux".into(), "enforcing".into()),
            ],
        },
        Cell {
            levels: vec![
                ("kernel".into(), "7.1".into()),
                ("selinux".into(), "enforcing".into()),
            ],
        },
    ];
    let stdout = std::io::stdout();
    let mut stdout = stdout.lock();
    let (run, first) = match run {
        Some(run) => {
            let stored = store
                .samples(run)
                .unwrap_or_else(|error| panic!("failed to {error}"));
            (run, stored.len() as u32)
        }
        None => {
            let run = store
                .create_run(&NewRun {
                    name: "append-loop".into(),
                    kind: verdict_model::RunKind::Run,
                    placement: verdict_model::Placement::Local,
                    experiment_text: "name = \"append-loop\"\n".into(),
                    experiment_sha256: "0".repeat(64),
                    experiment_json: "{}".into(),
                    tool_version: env!("CARGO_PKG_VERSION").into(),
                    seed: u64::MAX - 1,
                    host: "localhost".into(),
                    planned: u64::from(count.unwrap_or(u32::MAX)),
                    started_at_ms: 0,
                    environment_start: Environment::default(),
                    command_line: std::env::args().collect(),
                    bisect: None,
                })
                .unwrap_or_else(|error| panic!("failed to {error}"));
            writeln!(stdout, "run {run}").expect("stdout");
            stdout.flush().expect("stdout");
            (run, 0)
        }
    };
    let last = count.map_or(u32::MAX, |count| first.saturating_add(count));
    let started = Instant::now();
    for sequence in first..last {
        let cell = (sequence % 2) as usize;
        let mut metrics = BTreeMap::new();
        metrics.insert("wall".to_string(), 0.001 + f64::from(sequence) * 1e-6);
        metrics.insert("user".to_string(), 0.0005);
        metrics.insert("sys".to_string(), 0.0004);
        metrics.insert("maxrss".to_string(), 1800.0);
        metrics.insert("bogo-ops/s".to_string(), 12345.0 + f64::from(sequence));
        let failed = sequence % 17 == 16;
        let sample = Sample {
            cell,
            block: sequence / 2,
            sequence,
            warmup: sequence < 2,
            started_at_ms: 1_700_000_000_000 + i64::from(sequence),
            wall_seconds: 0.001,
            user_seconds: 0.0005,
            sys_seconds: 0.0004,
            max_rss_kib: 1800,
            exit_code: Some(if failed { 1 } else { 0 }),
            signal: None,
            timed_out: false,
            metrics,
            failure: failed.then(|| Failure {
                reason: "exit status 1".into(),
                output_tail: "stress-ng: error: out of memory\n".into(),
            }),
            missing: BTreeMap::new(),
            leftovers: Vec::new(),
        };
        store
            .append_sample(run, &sample, &cells[cell])
            .unwrap_or_else(|error| panic!("failed to {error}"));
        // Printed only after the commit returned: every number the parent
        // reads must survive a SIGKILL.
        writeln!(stdout, "{sequence}").expect("stdout");
        stdout.flush().expect("stdout");
    }
    if let Some(count) = count {
        let elapsed = started.elapsed();
        eprintln!(
            "appended {count} samples in {:.1} ms: {:.1} µs per sample",
            elapsed.as_secs_f64() * 1e3,
            elapsed.as_secs_f64() * 1e6 / f64::from(count.max(1)),
        );
    }
}
