//! Micro-benchmark of the per-iteration cost of `SystemExecutor`: runs a
//! command (default `true`) N times (default 2000) and prints the mean time
//! per iteration of the whole loop and the mean `wall` it measured, to set
//! beside `hyperfine -N -r 2000 true` on the same machine.
//!
//! Usage: cargo run --release -p verdict-exec --example overhead -- [N] [COMMAND ARGS...]
//!
//! A benchmark, not a test: it asserts nothing and must not be run in CI.

use std::time::{Duration, Instant};

use verdict_exec::{Cancel, Executor, Invocation, Status, SystemExecutor};

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
    let invocation = Invocation::argv(argv);
    let cancel = Cancel::new();
    let executor = SystemExecutor;

    let warmups = (iterations / 20).clamp(1, 50);
    for _ in 0..warmups {
        executor.run(&invocation, &cancel).expect("warm-up run");
    }

    let mut walls = Vec::with_capacity(iterations as usize);
    let mut measured = Duration::ZERO;
    let mut user = Duration::ZERO;
    let mut sys = Duration::ZERO;
    let mut max_rss_kib = 0_u64;
    let mut failures = 0_u32;
    let loop_started = Instant::now();
    for _ in 0..iterations {
        let outcome = executor.run(&invocation, &cancel).expect("run");
        if outcome.status != Status::Exited(0) {
            failures += 1;
        }
        measured += outcome.wall;
        walls.push(outcome.wall);
        max_rss_kib = max_rss_kib.max(outcome.max_rss_kib);
        user += outcome.user;
        sys += outcome.sys;
    }
    let loop_time = loop_started.elapsed();

    walls.sort_unstable();
    let median = walls.get(walls.len() / 2).copied().unwrap_or_default();
    let per = |total: Duration| total.as_secs_f64() * 1e6 / f64::from(iterations);
    println!("command: {}", invocation.program);
    println!("iterations: {iterations} (after {warmups} warm-ups), failures: {failures}");
    println!("mean loop time per iteration: {:.1} us", per(loop_time));
    println!("mean measured wall:           {:.1} us", per(measured));
    println!(
        "median measured wall:         {:.1} us",
        median.as_secs_f64() * 1e6
    );
    println!(
        "harness time outside wall:    {:.1} us",
        per(loop_time.saturating_sub(measured))
    );
    println!(
        "mean child user / sys:        {:.1} us / {:.1} us",
        per(user),
        per(sys)
    );
    println!("largest child max RSS:        {max_rss_kib} KiB");
}
