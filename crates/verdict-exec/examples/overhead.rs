//! Micro-benchmark of the per-iteration cost of `SystemExecutor`: runs a
//! command (default `true`) N times (default 2000) and prints the mean time
//! per iteration of the whole loop and the wall it measured, to set beside
//! `hyperfine -N -r 2000 true` on the same machine.
//!
//! To take machine noise out of the comparison, every iteration is paired
//! with a run of the same command the way hyperfine -N runs it (std
//! `Command`, output to /dev/null, `wait`), alternating which goes first,
//! and both are reported.
//!
//! Usage: cargo run --release -p verdict-exec --example overhead -- [N] [COMMAND ARGS...]
//!
//! A benchmark, not a test: it asserts nothing and must not be run in CI.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use verdict_exec::{Cancel, Invocation, Program, Status, SystemExecutor, Target};

#[derive(Default)]
struct Tally {
    walls: Vec<Duration>,
    loop_time: Duration,
}

impl Tally {
    fn report(&mut self, label: &str) {
        let count = self.walls.len() as f64;
        let total: Duration = self.walls.iter().sum();
        self.walls.sort_unstable();
        let median = self.walls[self.walls.len() / 2];
        println!(
            "{label}: per iteration {:.1} us (loop), measured wall mean {:.1} us, median {:.1} us",
            self.loop_time.as_secs_f64() * 1e6 / count,
            total.as_secs_f64() * 1e6 / count,
            median.as_secs_f64() * 1e6,
        );
    }
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let iterations: u32 = match arguments.next() {
        Some(text) => text.parse().unwrap_or_else(|_| {
            eprintln!("overhead: the first argument must be an iteration count, not `{text}`");
            std::process::exit(2);
        }),
        None => 2000,
    };
    let mut argv: Vec<String> = arguments.collect();
    if argv.is_empty() {
        argv.push("true".to_string());
    }
    let invocation = Invocation::argv(argv.clone());
    let cancel = Cancel::new();
    let executor = SystemExecutor;

    let run_executor = |tally: &mut Tally, max_rss_kib: &mut u64, failures: &mut u32| {
        let started = Instant::now();
        let outcome = executor.run(&invocation, &cancel).expect("run");
        tally.loop_time += started.elapsed();
        tally.walls.push(outcome.wall);
        *max_rss_kib = (*max_rss_kib).max(outcome.max_rss_kib);
        if outcome.status != Status::Exited(0) {
            *failures += 1;
        }
    };
    let run_baseline = |tally: &mut Tally| {
        let started = Instant::now();
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        child.wait().expect("wait");
        let wall = started.elapsed();
        tally.loop_time += wall;
        tally.walls.push(wall);
    };

    let warmups = (iterations / 20).clamp(1, 50);
    let mut ignored = (Tally::default(), 0, 0);
    for _ in 0..warmups {
        run_executor(&mut ignored.0, &mut ignored.1, &mut ignored.2);
        run_baseline(&mut ignored.0);
    }

    let mut executor_tally = Tally::default();
    let mut baseline_tally = Tally::default();
    let mut max_rss_kib = 0_u64;
    let mut failures = 0_u32;
    for iteration in 0..iterations {
        if iteration % 2 == 0 {
            run_executor(&mut executor_tally, &mut max_rss_kib, &mut failures);
            run_baseline(&mut baseline_tally);
        } else {
            run_baseline(&mut baseline_tally);
            run_executor(&mut executor_tally, &mut max_rss_kib, &mut failures);
        }
    }

    println!("command: {}", Program::Argv(argv.clone()));
    println!("iterations: {iterations} each (after {warmups} warm-ups), failures: {failures}");
    executor_tally.report("SystemExecutor          ");
    baseline_tally.report("std Command + /dev/null ");
    println!("largest child max RSS through SystemExecutor: {max_rss_kib} KiB");
}
