//! Max RSS from `wait4` and what Linux folds into it. A child's `ru_maxrss`
//! is the larger of its own peak and the resident size of the address space
//! it exec'ed from: verdict's own (posix_spawn's vfork shares it; a fork
//! would copy it, which is no better). So the figure is exact whenever the
//! workload is larger than verdict, and at most verdict's own peak
//! otherwise; docs/experiments.md says so. Its own test binary: it makes
//! this process's peak RSS large on purpose, one step at a time.

use std::time::Duration;

use verdict_exec::{Cancel, Invocation, Status, SystemExecutor, Target};

fn max_rss_kib(invocation: Invocation) -> u64 {
    let outcome = SystemExecutor
        .run(
            &invocation.with_timeout(Duration::from_secs(20)),
            &Cancel::new(),
        )
        .unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    outcome.max_rss_kib
}

#[test]
fn max_rss_is_the_childs_when_it_is_larger_than_verdict() {
    let allocate = "b = b'x' * 50_000_000\nprint(len(b))";
    // While this process is small: `true` is a few MiB, and 50 MB of
    // Python is 48 828 KiB plus the interpreter.
    let small = max_rss_kib(Invocation::argv(["true"]));
    assert!(small < 20_000, "{small} KiB");
    let python = max_rss_kib(Invocation::argv(["python3", "-c", allocate]));
    assert!((48_000..200_000).contains(&python), "{python} KiB");

    // With this process at about 256 MiB resident, `true` reports that
    // instead (the kernel's doing), and the larger-than-verdict rule holds.
    let ballast = vec![1_u8; 256 * 1024 * 1024];
    let touched: u64 = ballast.iter().step_by(4096).map(|&b| u64::from(b)).sum();
    assert_eq!(touched, 65_536);
    let inflated = max_rss_kib(Invocation::argv(["true"]));
    assert!(inflated >= 250_000, "{inflated} KiB");
    let large = "b = b'x' * 400_000_000\nprint(len(b))";
    let python = max_rss_kib(Invocation::argv(["python3", "-c", large]));
    assert!((390_000..600_000).contains(&python), "{python} KiB");
    drop(ballast);
}
