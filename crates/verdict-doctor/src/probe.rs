//! The noise calibration probe: a fixed, in-process, CPU-bound piece of work
//! repeated until a time budget is used, each repetition timed, with the
//! machine's steal ticks and the thread's involuntary context switches
//! recorded around it.
//!
//! What it does: the edge of doctor that touches the clock and getrusage.
//! Must not: allocate or touch memory in the timed loop (the probe measures
//! CPU availability, not the memory system), spawn threads, or print.

use crate::files::SystemFiles;
use crate::noise::Iteration;
use crate::parse::stat;
use std::time::{Duration, Instant};

/// Rounds of the mixing function per iteration: about 18 ms in a release
/// build on the 2.1 GHz Xeon development VM (4.6 ns per round measured by
/// `examples/timing.rs`; twice that when the two vCPUs are oversubscribed).
/// Fixed so that results from different machines and days compare.
pub const ROUNDS_PER_ITERATION: u64 = 4_000_000;

/// Iterations to always measure, even past the budget, so the statistics
/// mean something on a very slow machine.
pub const MINIMUM_ITERATIONS: usize = 10;

/// The fixed work: a serial chain of multiply-xor-shift rounds (splitmix64
/// finalizer; each round depends on the previous one, so the CPU cannot
/// overlap them). Returns the final state so the work cannot be elided.
pub fn fixed_work(rounds: u64, seed: u64) -> u64 {
    let mut state = seed;
    for _ in 0..rounds {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut mixed = state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        state = mixed ^ (mixed >> 31);
    }
    state
}

/// Involuntary context switches of the calling thread so far (0 when
/// getrusage fails, which it cannot for RUSAGE_THREAD on Linux).
fn involuntary_switches() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a full rusage into the pointer we own; the
    // zeroed value is a valid rusage even if it wrote nothing.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    u64::try_from(usage.ru_nivcsw).unwrap_or(0)
}

fn steal_ticks(files: &dyn SystemFiles) -> u64 {
    files
        .read("/proc/stat")
        .text()
        .and_then(|text| stat::parse(&text))
        .map_or(0, |stat| stat.total.steal)
}

/// What the probe measured.
#[derive(Debug, Clone)]
pub struct ProbeRun {
    pub iterations: Vec<Iteration>,
    /// Wall time from the first to the last iteration, seconds.
    pub elapsed_seconds: f64,
    pub rounds_per_iteration: u64,
}

/// Runs the probe for about `budget` (at least `MINIMUM_ITERATIONS`), after
/// one untimed warm-up iteration.
pub fn run(files: &dyn SystemFiles, budget: Duration, rounds: u64) -> ProbeRun {
    let mut checksum = fixed_work(rounds, 1);
    let start = Instant::now();
    let mut iterations = Vec::new();
    while iterations.len() < MINIMUM_ITERATIONS || start.elapsed() < budget {
        let steal_before = steal_ticks(files);
        let switches_before = involuntary_switches();
        let began = Instant::now();
        checksum ^= fixed_work(std::hint::black_box(rounds), checksum);
        let seconds = began.elapsed().as_secs_f64();
        let switches_after = involuntary_switches();
        let steal_after = steal_ticks(files);
        iterations.push(Iteration {
            seconds,
            steal_ticks: steal_after.saturating_sub(steal_before),
            involuntary_switches: switches_after.saturating_sub(switches_before),
        });
        // Stop a runaway probe on a pathologically slow machine.
        if start.elapsed() > budget * 3 && iterations.len() >= 3 {
            break;
        }
    }
    std::hint::black_box(checksum);
    ProbeRun {
        iterations,
        elapsed_seconds: start.elapsed().as_secs_f64(),
        rounds_per_iteration: rounds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FixtureFiles;

    #[test]
    fn work_is_deterministic_and_depends_on_rounds() {
        assert_eq!(fixed_work(1000, 7), fixed_work(1000, 7));
        assert_ne!(fixed_work(1000, 7), fixed_work(1001, 7));
        assert_eq!(fixed_work(0, 7), 7);
    }

    #[test]
    fn short_probe_respects_minimum_and_budget() {
        // Without /proc/stat steal reads as 0; the probe still runs.
        let files = FixtureFiles::new();
        let run = run(&files, Duration::from_millis(50), 10_000);
        assert!(run.iterations.len() >= MINIMUM_ITERATIONS);
        assert!(run.elapsed_seconds < 1.0, "{}", run.elapsed_seconds);
        assert!(
            run.iterations
                .iter()
                .all(|iteration| iteration.seconds > 0.0)
        );
        assert!(
            run.iterations
                .iter()
                .all(|iteration| iteration.steal_ticks == 0)
        );
    }
}
