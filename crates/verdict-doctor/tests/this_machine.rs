//! The environment capture on the machine running the tests, cross-checked
//! against the same files read independently with std::fs, and its cost.

use std::time::Instant;
use verdict_doctor::{RealFiles, capture_environment};

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_string())
}

#[test]
fn capture_agrees_with_the_files() {
    let environment = capture_environment(&RealFiles);
    let cpuinfo = read("/proc/cpuinfo").expect("Linux test machine");
    let hypervisor_flag = cpuinfo
        .lines()
        .filter(|line| line.starts_with("flags"))
        .any(|line| line.split_whitespace().any(|flag| flag == "hypervisor"));
    let virtualization = environment.virtualization.clone().unwrap();
    if hypervisor_flag {
        assert_ne!(virtualization, "none", "a hypervisor flag means a VM");
    }
    assert_eq!(environment.smt, read("/sys/devices/system/cpu/smt/control"));
    assert_eq!(
        environment.cpufreq_governor,
        read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    );
    assert_eq!(
        environment.kernel_release,
        read("/proc/sys/kernel/osrelease")
    );
    let processors = cpuinfo
        .lines()
        .filter(|line| line.starts_with("processor"))
        .count();
    assert_eq!(environment.cpu_count, Some(processors as u32));
    let steal_now: u64 = read("/proc/stat")
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(8)
        .map_or(0, |value| value.parse().unwrap());
    let captured = environment.steal_ticks.unwrap();
    assert!(captured <= steal_now, "steal never decreases");
}

#[test]
fn capture_is_fast() {
    // Recorded at the start and end of every run: well under 50 ms.
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(capture_environment(&RealFiles));
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    assert!(times[2] < 50.0, "median capture {:.1} ms", times[2]);
}
