//! Store throughput, PostgreSQL against SQLite measured in the same run
//! (scripts/bench-store.sh runs it; docs/performance.md has its figures):
//! samples per second written by one writer, one committed transaction per
//! sample as `verdict run` and `verdict work` write them; then a run of
//! 10^6 samples (a declared metric besides the built-in ones) loaded into
//! each store, and `verdict report` (text and JSON), `verdict export` (CSV
//! and JSON) and a second `verdict push` of the run (which finds it whole)
//! over it, each timed as a child process with its CPU time and peak RSS
//! (wait4's rusage). PostgreSQL is a throwaway cluster (verdict-testkit)
//! with durable settings (`fsync=on`), measured with `synchronous_commit`
//! on (every commit flushed, as the server's default) and off (a commit
//! survives a crash of verdict but not of the machine — SQLite's
//! `synchronous=NORMAL` guarantee). Must not: leave the cluster or its
//! files behind, or claim a figure it did not measure.
//!
//! `cargo run -p verdict-store --example store_bench -- VERDICT_BINARY [WRITES] [REPORT_SAMPLES] [KEEP_SQLITE]`
//! (KEEP_SQLITE: a path where the loaded SQLite store is copied, to
//! profile a report of it afterwards)

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Instant;

use verdict_model::{Cell, Environment, Experiment, RunId, Sample};
use verdict_store::{Database, Location, NewRun, Store};
use verdict_testkit::postgres::PostgresServer;

const EXPERIMENT: &str = "name = \"bench\"\ncommand = [\"true\"]\n\n[factors]\nmode = [\"a\", \"b\"]\n\n\
    [[metrics]]\nname = \"ops\"\nsource = \"regex\"\npattern = 'ops: (\\d+)'\ndirection = \"higher\"\n";

/// A run on `host`: the write-rate runs and the run of 10^6 samples are on
/// different hosts, so that the report does not warn that they overlapped
/// (a warning that reads every iteration's time again).
fn new_run(planned: u64, host: &str) -> NewRun {
    let experiment = Experiment::parse(EXPERIMENT, "bench.toml").expect("bench experiment");
    NewRun {
        name: "bench".to_string(),
        kind: verdict_model::RunKind::Run,
        placement: verdict_model::Placement::Local,
        experiment_text: EXPERIMENT.to_string(),
        experiment_sha256: Experiment::text_hash(EXPERIMENT),
        experiment_json: serde_json::to_string(&experiment).unwrap(),
        tool_version: "bench".to_string(),
        seed: 1,
        host: host.to_string(),
        planned,
        started_at_ms: 1_764_500_000_000,
        environment_start: Environment::default(),
        command_line: vec!["store_bench".to_string()],
        bisect: None,
    }
}

fn sample(sequence: u32) -> (Sample, Cell) {
    let cell = (sequence % 2) as usize;
    // Values spread like measurements (hardly any ties).
    let wall = 0.01 + f64::from((sequence.wrapping_mul(104_729)) % 99_991) * 1e-7;
    let sample = Sample {
        cell,
        block: sequence / 2,
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
        metrics: [
            ("wall".to_string(), wall),
            (
                "ops".to_string(),
                1000.0
                    + f64::from(sequence.wrapping_mul(7919) % 100_003) / 100.0
                    + cell as f64 * 3.0,
            ),
        ]
        .into_iter()
        .collect::<BTreeMap<_, _>>(),
        failure: None,
        missing: BTreeMap::new(),
        leftovers: Vec::new(),
    };
    let level = if cell == 0 { "a" } else { "b" };
    (
        sample,
        Cell {
            levels: vec![("mode".to_string(), level.to_string())],
        },
    )
}

/// Samples per second appended one transaction each.
fn write_rate(store: &Database, count: u32) -> f64 {
    let run = store
        .create_run(&new_run(u64::from(count), "writer"))
        .unwrap();
    let started = Instant::now();
    for sequence in 0..count {
        let (sample, cell) = sample(sequence);
        store.append_sample(run, &sample, &cell).unwrap();
    }
    f64::from(count) / started.elapsed().as_secs_f64()
}

/// Loads a run of `count` samples (batches of 10,000) and returns its id.
fn load(store: &Database, count: u32) -> RunId {
    let run = store
        .create_run(&new_run(u64::from(count), "bench"))
        .unwrap();
    let mut batch = Vec::with_capacity(10_000);
    for sequence in 0..count {
        let (sample, cell) = sample(sequence);
        batch.push(verdict_store::BatchSample {
            sample,
            cell,
            host: None,
        });
        if batch.len() == 10_000 {
            store.append_samples(run, &batch).unwrap();
            batch.clear();
        }
    }
    store.append_samples(run, &batch).unwrap();
    store
        .finish_run(
            run,
            verdict_model::RunStatus::Complete,
            1_764_500_100_000,
            None,
        )
        .unwrap();
    run
}

/// What one `verdict` command took: wall and CPU (user + system) seconds
/// and peak resident set (KiB, `ru_maxrss`), all from wait4.
#[derive(Clone, Copy)]
struct Took {
    wall: f64,
    cpu: f64,
    rss_kib: i64,
}

impl std::fmt::Display for Took {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "{:>7.2} s (CPU {:>6.2} s)  {:>7.1} MB RSS",
            self.wall,
            self.cpu,
            self.rss_kib as f64 / 1024.0
        )
    }
}

/// What `verdict ARGUMENTS` took, its output discarded; panics when it
/// fails. On a machine shared with other work the CPU time is the figure
/// that does not depend on how busy it was.
#[expect(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, for its rusage"
)]
fn measure(verdict: &str, arguments: &[&str]) -> Took {
    let started = Instant::now();
    let child = Command::new(verdict)
        .args(arguments)
        .env_remove("VERDICT_DB")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the child is ours and not reaped yet.
    let reaped = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        reaped > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "verdict {arguments:?} failed (status {status})"
    );
    let time = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    Took {
        wall: seconds,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        rss_kib: usage.ru_maxrss,
    }
}

/// The median of three `measure`s by wall time.
fn median_of_three(verdict: &str, arguments: &[&str]) -> Took {
    let mut runs: Vec<Took> = (0..3).map(|_| measure(verdict, arguments)).collect();
    runs.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    runs[1]
}

/// Report, export and re-push over run `run` of `db`, one line each.
fn reading(verdict: &str, label: &str, db: &str, run: RunId, copy: &str) {
    let run = run.0.to_string();
    println!("  {label}:");
    for (what, arguments) in [
        ("report (text)", vec!["report", &run, "--db", db]),
        (
            "report --format json",
            vec!["report", &run, "--db", db, "--format", "json"],
        ),
        ("export (csv)", vec!["export", &run, "--db", db]),
        (
            "export --format json",
            vec!["export", &run, "--db", db, "--format", "json"],
        ),
    ] {
        println!("    {what:<22} {}", median_of_three(verdict, &arguments));
    }
    let first = measure(verdict, &["push", &run, "--db", db, "--to", copy]);
    let again = measure(verdict, &["push", &run, "--db", db, "--to", copy]);
    println!("    {:<22} {first}", "push (new)");
    println!("    {:<22} {again}", "push (known, again)");
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let verdict = arguments
        .next()
        .expect("usage: store_bench VERDICT [WRITES] [REPORT_SAMPLES] [KEEP_SQLITE]");
    let writes: u32 = arguments.next().map_or(5_000, |text| text.parse().unwrap());
    let report_samples: u32 = arguments
        .next()
        .map_or(1_000_000, |text| text.parse().unwrap());
    // Where to keep a copy of the loaded SQLite store (for profiling).
    let keep_sqlite = arguments.next();
    let directory = tempfile::tempdir().unwrap();
    let sqlite_path = directory.path().join("bench.db");
    let sqlite = Database::open(&Location::Sqlite(sqlite_path.clone())).unwrap();
    let server = PostgresServer::start_with(&["fsync=on", "shared_buffers=128MB"])
        .expect("PostgreSQL (apt-get install postgresql)");
    let url = server.create_database("bench");
    let postgres = Database::open(&Location::Postgres(url.clone())).unwrap();

    let sqlite_rate = write_rate(&sqlite, writes);
    let postgres_rate = write_rate(&postgres, writes);
    server.psql("postgres", "ALTER SYSTEM SET synchronous_commit = off");
    server.psql("postgres", "SELECT pg_reload_conf()");
    let relaxed = Database::open(&Location::Postgres(url.clone())).unwrap();
    let postgres_relaxed_rate = write_rate(&relaxed, writes);
    println!("writes: {writes} samples, one transaction each, one writer");
    println!("  sqlite (WAL, synchronous=NORMAL):         {sqlite_rate:>9.0} samples/s");
    println!("  postgresql (synchronous_commit=on):       {postgres_rate:>9.0} samples/s");
    println!("  postgresql (synchronous_commit=off):      {postgres_relaxed_rate:>9.0} samples/s");
    println!(
        "  ratio postgresql/sqlite: {:.3} (commit flushed), {:.3} (not flushed)",
        postgres_rate / sqlite_rate,
        postgres_relaxed_rate / sqlite_rate
    );

    let started = Instant::now();
    let sqlite_run = load(&sqlite, report_samples);
    let sqlite_load = started.elapsed().as_secs_f64();
    drop(sqlite);
    let started = Instant::now();
    let postgres_run = load(&relaxed, report_samples);
    let postgres_load = started.elapsed().as_secs_f64();
    println!(
        "one run of {report_samples} stored samples (loaded in {sqlite_load:.1} s into SQLite, \
         {postgres_load:.1} s into PostgreSQL, 10,000 per transaction); median of 3:"
    );
    let sqlite_copy = directory
        .path()
        .join("copy-of-sqlite.db")
        .display()
        .to_string();
    let postgres_copy = directory
        .path()
        .join("copy-of-postgres.db")
        .display()
        .to_string();
    reading(
        &verdict,
        "sqlite",
        &sqlite_path.display().to_string(),
        sqlite_run,
        &sqlite_copy,
    );
    reading(&verdict, "postgresql", &url, postgres_run, &postgres_copy);
    if let Some(keep) = keep_sqlite {
        std::fs::copy(&sqlite_path, &keep).unwrap();
        println!("the SQLite store (run {}) is kept in {keep}", sqlite_run.0);
    }
}
