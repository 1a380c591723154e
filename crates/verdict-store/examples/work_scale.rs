//! Shared work at scale, measured (scripts/bench-work.sh runs it;
//! docs/performance.md has its figures): on a throwaway PostgreSQL cluster
//! (verdict-testkit, durable: `fsync=on`, the server's default
//! `synchronous_commit=on`), with the built `verdict` binary,
//!
//! 1. the cost per sample of `verdict work` (one controller) against
//!    `verdict run` into the same server, workload `true`, alternating, median of
//!    rounds;
//! 2. parallel efficiency: blocks per second of 8 controllers on 8 host
//!    names against 8 times one controller's, a 20 ms workload;
//! 3. the scale run: one detached run of BLOCKS blocks (2 cells, so 2
//!    samples a block), 16 controllers over 8 host names, a 20 ms
//!    workload: blocks per second over the first and the last 1,000
//!    blocks to complete, and where the machine's CPU went (/proc/stat,
//!    the controllers' and their workloads' from wait4, the rest).
//!
//! Not a test: it times, and asserts nothing but that every run ends with
//! its planned samples. Must not leave the cluster or its processes behind.
//!
//! `cargo run --release -p verdict-store --example work_scale -- VERDICT [BLOCKS] [ROUNDS] [PARTS]`
//! (defaults 10000, 9, `cost,parallel,scale`)

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use verdict_testkit::postgres::PostgresServer;

/// Writes an experiment of `cells` cells running `command` `iterations`
/// times each (no warmups).
fn experiment(
    directory: &Path,
    name: &str,
    command: &str,
    cells: usize,
    iterations: u32,
) -> String {
    let levels: Vec<String> = (0..cells).map(|cell| format!("\"c{cell}\"")).collect();
    let path = directory.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\ncommand = {command}\n\n[factors]\nmode = [{}]\n\n\
             [sampling]\niterations = {iterations}\nwarmups = 0\n",
            levels.join(", ")
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn run_verdict(verdict: &str, arguments: &[&str]) -> String {
    let output = Command::new(verdict)
        .args(arguments)
        .env_remove("VERDICT_DB")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "verdict {arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Detaches `experiment` into `url`; the run id.
fn detach(verdict: &str, experiment: &str, url: &str) -> String {
    run_verdict(verdict, &["run", experiment, "--detach", "--db", url])
        .trim()
        .to_string()
}

/// CPU seconds (user + system) of a reaped child and its waited-for
/// descendants.
fn wait_cpu(child: Child) -> f64 {
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the child is ours and not reaped yet.
    let reaped = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert!(
        reaped > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "a worker failed (status {status})"
    );
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Busy and total jiffies of the whole machine (/proc/stat's `cpu` line).
fn machine_jiffies() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let fields: Vec<u64> = stat
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(|field| field.parse().unwrap())
        .collect();
    let total: u64 = fields.iter().sum();
    // idle and iowait are not busy.
    (total - fields[3] - fields[4], total)
}

/// CPU seconds of the PostgreSQL server so far: its postmaster's and its
/// ended backends' (utime, stime, cutime, cstime of /proc/PID/stat).
fn server_cpu(server: &PostgresServer) -> f64 {
    let pid_file = server
        .socket_directory()
        .parent()
        .unwrap()
        .join("data/postmaster.pid");
    let pid = std::fs::read_to_string(pid_file).unwrap();
    let stat =
        std::fs::read_to_string(format!("/proc/{}/stat", pid.lines().next().unwrap())).unwrap();
    let fields: Vec<f64> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .map(|field| field.parse().unwrap_or(0.0))
        .collect();
    // utime, stime, cutime, cstime are fields 14 to 17 (from 3 here).
    fields[11..15].iter().sum::<f64>() / 100.0
}

/// What a set of controllers did.
struct Worked {
    wall: f64,
    /// CPU of the controllers and their workloads.
    workers_cpu: f64,
    /// CPU of the PostgreSQL server meanwhile.
    server_cpu: f64,
    /// CPU of the whole machine meanwhile.
    machine_cpu: f64,
}

/// `workers` controllers of run `run`, controller `index` on host
/// `h{index % hosts}`, until they all finish.
fn work(
    verdict: &str,
    server: &PostgresServer,
    url: &str,
    run: &str,
    workers: usize,
    hosts: usize,
    logs: &Path,
) -> Worked {
    let ticks = 100.0; // USER_HZ
    let (busy_before, _) = machine_jiffies();
    let server_before = server_cpu(server);
    let started = Instant::now();
    let children: Vec<Child> = (0..workers)
        .map(|index| {
            Command::new(verdict)
                .args(["work", run, "--db", url, "--lease", "10"])
                .args(["--host", &format!("h{}", index % hosts)])
                .args(["--worker", &format!("w{index}")])
                .env_remove("VERDICT_DB")
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(logs.join(format!("w{index}.log"))).unwrap())
                .spawn()
                .unwrap()
        })
        .collect();
    let workers_cpu = children.into_iter().map(wait_cpu).sum();
    let wall = started.elapsed().as_secs_f64();
    // The server reaps a backend (and counts its CPU) a moment after its
    // controller went away.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (busy_after, _) = machine_jiffies();
    Worked {
        wall,
        workers_cpu,
        server_cpu: server_cpu(server) - server_before,
        machine_cpu: (busy_after - busy_before) as f64 / ticks,
    }
}

/// When each block of `run` completed (its last sample's end), sorted.
fn completions(server: &PostgresServer, run: &str) -> Vec<i64> {
    let text = server.psql(
        "bench",
        &format!(
            "SELECT MAX(s.started_at_ms + CAST(ROUND(s.wall_seconds * 1000) AS BIGINT)) \
             FROM work_blocks w JOIN samples s ON s.run_id = w.run_id \
                AND s.sequence >= w.first_sequence AND s.sequence < w.first_sequence + w.slots \
             WHERE w.run_id = {run} GROUP BY w.block ORDER BY 1"
        ),
    );
    text.lines()
        .map(|line| line.trim().parse().unwrap())
        .collect()
}

/// Blocks per second from the `from`-th to the `to`-th completion.
fn rate(times: &[i64], from: usize, to: usize) -> f64 {
    (to - from) as f64 / ((times[to] - times[from]) as f64 / 1000.0)
}

fn check_complete(server: &PostgresServer, run: &str, planned: usize) {
    let stored = server.psql(
        "bench",
        &format!("SELECT COUNT(*), COUNT(DISTINCT sequence) FROM samples WHERE run_id = {run}"),
    );
    assert_eq!(stored.trim(), format!("{planned}|{planned}"), "run {run}");
}

/// 1: seconds per sample of `run` and of `work` (one controller), workload
/// `true`, in rounds of alternating order (run first, then work first).
fn per_sample_cost(
    verdict: &str,
    server: &PostgresServer,
    url: &str,
    directory: &Path,
    rounds: usize,
) {
    let samples = 500;
    let file = experiment(directory, "cost", "[\"true\"]", 1, samples);
    let mut run_costs = Vec::new();
    let mut work_costs = Vec::new();
    let mut ratios = Vec::new();
    for round in 0..rounds {
        let measure_run = || {
            let started = Instant::now();
            run_verdict(verdict, &["run", &file, "--db", url, "--format", "json"]);
            started.elapsed().as_secs_f64() / f64::from(samples)
        };
        let measure_work = || {
            let run = detach(verdict, &file, url);
            let worked = work(verdict, server, url, &run, 1, 1, directory);
            check_complete(server, &run, samples as usize);
            worked.wall / f64::from(samples)
        };
        let (run_cost, work_cost) = if round % 2 == 0 {
            let run_cost = measure_run();
            (run_cost, measure_work())
        } else {
            let work_cost = measure_work();
            (measure_run(), work_cost)
        };
        println!(
            "  round {}: run {:.3} ms/sample, work {:.3} ms/sample",
            round + 1,
            run_cost * 1000.0,
            work_cost * 1000.0
        );
        run_costs.push(run_cost);
        work_costs.push(work_cost);
        ratios.push(work_cost / run_cost);
    }
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    println!(
        "per sample (workload `true`, {samples} samples, {rounds} rounds): median run {:.3} ms, \
         work {:.3} ms; median of the rounds' work/run {:.3}",
        median(&mut run_costs) * 1000.0,
        median(&mut work_costs) * 1000.0,
        median(&mut ratios)
    );
}

/// 2: blocks per second of one controller and of eight.
fn parallel_efficiency(verdict: &str, server: &PostgresServer, url: &str, directory: &Path) {
    let blocks = 300;
    let sleep = "[\"sleep\", \"0.02\"]";
    let single = experiment(directory, "single", sleep, 2, blocks);
    let run = detach(verdict, &single, url);
    let one = work(verdict, server, url, &run, 1, 1, directory);
    check_complete(server, &run, 2 * blocks as usize);
    let times = completions(server, &run);
    let one_rate = rate(&times, 0, times.len() - 1);
    let eight_file = experiment(directory, "eight", sleep, 2, 8 * blocks);
    let run = detach(verdict, &eight_file, url);
    let eight = work(verdict, server, url, &run, 8, 8, directory);
    check_complete(server, &run, 16 * blocks as usize);
    let times = completions(server, &run);
    let eight_rate = rate(&times, 0, times.len() - 1);
    println!(
        "parallel (20 ms workload, 2 samples a block): 1 controller {one_rate:.1} blocks/s \
         ({:.2} s wall, {:.1} s CPU, PostgreSQL {:.1} s); 8 controllers on 8 hosts \
         {eight_rate:.1} blocks/s ({:.2} s wall, {:.1} s CPU of theirs, PostgreSQL {:.1} s, {:.1} \
         s of the machine's); efficiency {:.1}% of 8x",
        one.wall,
        one.workers_cpu,
        one.server_cpu,
        eight.wall,
        eight.workers_cpu,
        eight.server_cpu,
        eight.machine_cpu,
        100.0 * eight_rate / (8.0 * one_rate)
    );
}

/// 3: the scale run.
fn scale(verdict: &str, server: &PostgresServer, url: &str, directory: &Path, blocks: u32) {
    let file = experiment(directory, "scale", "[\"sleep\", \"0.02\"]", 2, blocks);
    let run = detach(verdict, &file, url);
    let worked = work(verdict, server, url, &run, 16, 8, directory);
    check_complete(server, &run, 2 * blocks as usize);
    let times = completions(server, &run);
    let count = times.len();
    let window = 1000.min(count - 1);
    let first = rate(&times, 0, window);
    let last = rate(&times, count - 1 - window, count - 1);
    println!(
        "scale: {count} blocks ({} samples), 16 controllers over 8 hosts, 20 ms workload: \
         {:.1} s wall; blocks/s first {window}: {first:.1}, last {window}: {last:.1}, \
         last/first {:.3}",
        2 * count,
        worked.wall,
        last / first
    );
    let windows: Vec<String> = (0..count / window)
        .map(|index| {
            format!(
                "{:.0}",
                rate(
                    &times,
                    index * window,
                    ((index + 1) * window).min(count - 1)
                )
            )
        })
        .collect();
    println!(
        "  blocks/s in each window of {window} blocks, in order: {}",
        windows.join(" ")
    );
    println!(
        "  CPU: machine busy {:.1} s of {:.1} s available (2 CPUs: {:.0}%): controllers and \
         their workloads {:.1} s ({:.2} ms a sample), PostgreSQL {:.1} s ({:.2} ms a sample), \
         everything else (other processes, the kernel) {:.1} s",
        worked.machine_cpu,
        2.0 * worked.wall,
        100.0 * worked.machine_cpu / (2.0 * worked.wall),
        worked.workers_cpu,
        1000.0 * worked.workers_cpu / (2 * count) as f64,
        worked.server_cpu,
        1000.0 * worked.server_cpu / (2 * count) as f64,
        worked.machine_cpu - worked.workers_cpu - worked.server_cpu
    );
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let verdict = arguments
        .next()
        .expect("usage: work_scale VERDICT [BLOCKS] [ROUNDS] [PARTS]");
    let blocks: u32 = arguments
        .next()
        .map_or(10_000, |text| text.parse().unwrap());
    let rounds: usize = arguments.next().map_or(9, |text| text.parse().unwrap());
    // Which parts: `cost`, `parallel`, `scale` (default: all).
    let parts: String = arguments
        .next()
        .unwrap_or_else(|| "cost,parallel,scale".to_string());
    let directory = tempfile::tempdir().unwrap();
    let server =
        PostgresServer::start_with(&["fsync=on", "shared_buffers=128MB", "max_connections=100"])
            .expect("PostgreSQL (apt-get install postgresql)");
    let url = server.create_database("bench");
    if parts.contains("cost") {
        per_sample_cost(&verdict, &server, &url, directory.path(), rounds);
    }
    if parts.contains("parallel") {
        parallel_efficiency(&verdict, &server, &url, directory.path());
    }
    if parts.contains("scale") {
        scale(&verdict, &server, &url, directory.path(), blocks);
    }
}
