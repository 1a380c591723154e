//! What storing an iteration's monitors costs (scripts/bench-monitors.sh
//! runs it; docs/performance.md has its figures): samples per second into
//! SQLite and into PostgreSQL, one committed transaction per sample as
//! `verdict run` writes them, without details (the peer) and with the
//! monitors a real iteration on this machine captures (~100 counters),
//! alternating rounds; then a profile of 400 stacks per sample. PostgreSQL
//! is a throwaway cluster (verdict-testkit) with `synchronous_commit = off`
//! (a flushed commit costs this VM's fsync whatever the sample holds, which
//! would hide the rows' own cost). Must not: claim a figure it did not
//! measure, or leave the cluster or any file outside its temporary
//! directory behind.
//!
//! `cargo run --release -p verdict-store --example details_bench -- [WRITES] [ROUNDS] [POSTGRES_WRITES]`

use std::collections::BTreeMap;
use std::time::Instant;

use verdict_model::profile::{Stack, SymbolWeight};
use verdict_model::{Cell, Environment, ProfileRecord, Sample, SampleDetails};
use verdict_store::{Database, Location, NewRun, Store};
use verdict_testkit::postgres::PostgresServer;

fn new_run() -> NewRun {
    NewRun {
        name: "bench".to_string(),
        kind: verdict_model::RunKind::Run,
        placement: verdict_model::Placement::Local,
        experiment_text: "name = \"bench\"\ncommand = [\"true\"]\n".to_string(),
        experiment_sha256: "00".repeat(32),
        experiment_json: "{}".to_string(),
        tool_version: "bench".to_string(),
        seed: 1,
        host: "bench".to_string(),
        planned: 0,
        started_at_ms: 1_764_500_000_000,
        environment_start: Environment::default(),
        command_line: vec!["details_bench".to_string()],
        bisect: None,
    }
}

fn sample(sequence: u32) -> Sample {
    let wall = 0.01 + f64::from(sequence % 97) * 1e-5;
    Sample {
        cell: 0,
        block: sequence,
        sequence,
        warmup: false,
        started_at_ms: 1_764_500_000_000 + i64::from(sequence),
        wall_seconds: wall,
        user_seconds: wall / 2.0,
        sys_seconds: wall / 4.0,
        max_rss_kib: 2048,
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        metrics: BTreeMap::from([("wall".to_string(), wall)]),
        failure: None,
        missing: BTreeMap::new(),
        leftovers: Vec::new(),
    }
}

/// The counters one iteration captures here: the real names this
/// machine's /proc files give, with made-up values.
fn monitors(sequence: u32) -> BTreeMap<String, f64> {
    let mut names: Vec<String> = [
        "cpu.user",
        "cpu.nice",
        "cpu.system",
        "cpu.irq",
        "cpu.softirq",
        "cpu.idle",
        "cpu.iowait",
        "cpu.steal",
        "context_switches",
        "forks",
        "workload.voluntary_switches",
        "workload.involuntary_switches",
    ]
    .map(str::to_string)
    .to_vec();
    names.extend((0..40).map(|line| format!("interrupts.{line}:device-{line}")));
    names.extend((0..10).map(|kind| format!("softirqs.TYPE{kind}")));
    names.extend((0..40).map(|counter| format!("vmstat.counter_{counter}")));
    names
        .into_iter()
        .enumerate()
        .map(|(index, name)| (name, f64::from(sequence % 13) + index as f64))
        .collect()
}

fn profile(sequence: u32) -> ProfileRecord {
    let stacks: Vec<Stack> = (0..400)
        .map(|index| Stack {
            comm: "workload".to_string(),
            frames: (0..12)
                .map(|depth| format!("function_{}_{depth}", index % 60))
                .collect(),
            weight: 1_001_001 * u64::from(sequence % 3 + 1),
        })
        .collect();
    let symbols: Vec<SymbolWeight> = (0..200)
        .map(|index| SymbolWeight {
            symbol: format!("symbol_{index}"),
            self_weight: 1_001_001,
            inclusive_weight: 2_002_002,
        })
        .collect();
    ProfileRecord {
        event: "cpu-clock".to_string(),
        samples: 400,
        weight: 400 * 1_001_001,
        note: None,
        symbols,
        stacks,
    }
}

/// Microseconds per sample written with `details` from `make`.
fn write(store: &Database, writes: u32, make: &dyn Fn(u32) -> Option<SampleDetails>) -> f64 {
    let cell = Cell {
        levels: vec![("mode".to_string(), "a".to_string())],
    };
    let run = store.create_run(&new_run()).expect("create run");
    let started = Instant::now();
    for sequence in 0..writes {
        let written = sample(sequence);
        match make(sequence) {
            None => store.append_sample(run, &written, &cell),
            Some(details) => store.append_sample_details(run, &written, &cell, &details),
        }
        .expect("append");
    }
    started.elapsed().as_secs_f64() * 1e6 / f64::from(writes)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Alternating rounds of `writes` samples without details and with
/// monitors, then a tenth as many with monitors and a profile; prints each
/// round and the medians for `label`.
fn measure(label: &str, store: &Database, writes: u32, rounds: u32) {
    let plain_details = |_: u32| None;
    let with_monitors = |sequence: u32| {
        Some(SampleDetails {
            monitors: monitors(sequence),
            profile: None,
        })
    };
    let with_profile = |sequence: u32| {
        Some(SampleDetails {
            monitors: monitors(sequence),
            profile: Some(profile(sequence)),
        })
    };
    let (mut plain, mut monitored, mut profiled) = (Vec::new(), Vec::new(), Vec::new());
    println!("{label}\nround  plain us/sample  monitors us/sample  monitors+profile us/sample");
    for round in 0..rounds {
        let (a, b);
        if round % 2 == 0 {
            a = write(store, writes, &plain_details);
            b = write(store, writes, &with_monitors);
        } else {
            b = write(store, writes, &with_monitors);
            a = write(store, writes, &plain_details);
        }
        let c = write(store, (writes / 10).max(1), &with_profile);
        println!("{round:>5}  {a:>15.1}  {b:>18.1}  {c:>26.1}");
        plain.push(a);
        monitored.push(b);
        profiled.push(c);
    }
    let (a, b, c) = (median(plain), median(monitored), median(profiled));
    println!(
        "store, {label}: {a:.1} us per sample without details, {b:.1} us with ~100 monitors (+{:.1} us, {:.3}% of a 100 ms iteration), {c:.1} us with monitors and a 400-stack profile ({writes} samples x {rounds} rounds)",
        b - a,
        (b - a) / 1000.0
    );
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let argument = |index: usize, default: u32| -> u32 {
        arguments
            .get(index)
            .and_then(|text| text.parse().ok())
            .unwrap_or(default)
    };
    let (writes, rounds, postgres_writes) = (argument(1, 2000), argument(2, 5), argument(3, 500));
    let directory = tempfile::tempdir().expect("temporary directory");
    let sqlite =
        Database::open(&Location::Sqlite(directory.path().join("bench.db"))).expect("open");
    measure("SQLite (WAL, synchronous=NORMAL)", &sqlite, writes, rounds);
    let server = PostgresServer::start_with(&["fsync=on", "synchronous_commit=off"])
        .expect("PostgreSQL (apt-get install postgresql)");
    let url = server.create_database("bench");
    let postgres = Database::open(&Location::Postgres(url)).expect("open PostgreSQL");
    measure(
        "PostgreSQL (synchronous_commit=off, Unix socket)",
        &postgres,
        postgres_writes,
        rounds,
    );
}
