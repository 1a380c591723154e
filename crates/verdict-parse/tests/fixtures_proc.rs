//! The /proc counter parsers on files captured on the development VM (see
//! tests/fixtures/README.md): two snapshots 0.3 s apart, the monitors'
//! deltas between them.

use verdict_parse::proc::{CounterFile, counter_deltas};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/proc")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn deltas(file: CounterFile, name: &str) -> Vec<(String, f64)> {
    counter_deltas(
        file,
        &fixture(&format!("{name}-before.txt")),
        &fixture(&format!("{name}-after.txt")),
        100,
    )
    .unwrap()
}

#[test]
fn cpu_time_by_mode_adds_up_to_the_elapsed_time_on_both_cpus() {
    let stat = deltas(CounterFile::Stat, "stat");
    let cpu: f64 = stat
        .iter()
        .filter(|(name, _)| name.starts_with("cpu."))
        .map(|(_, value)| value)
        .sum();
    // 0.3 s of sleep between the captures (and the reads around it) on 2
    // CPUs: 0.6 s and a little more, at 10 ms ticks.
    assert!((0.55..=0.9).contains(&cpu), "{cpu}: {stat:?}");
    assert!(
        stat.iter()
            .any(|(name, value)| name == "context_switches" && *value > 0.0)
    );
    assert!(stat.iter().any(|(name, _)| name == "forks"));
}

#[test]
fn interrupts_softirqs_and_vmstat_rows() {
    let interrupts = deltas(CounterFile::Interrupts, "interrupts");
    let names: Vec<&str> = interrupts.iter().map(|(name, _)| name.as_str()).collect();
    for expected in [
        "interrupts.LOC",
        "interrupts.RES",
        "interrupts.36:virtio1-req.0",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let local_timer = interrupts
        .iter()
        .find(|(name, _)| name == "interrupts.LOC")
        .unwrap()
        .1;
    // A tick per CPU every few ms at most (HZ 250 or 1000, NO_HZ idle).
    assert!(local_timer > 0.0 && local_timer < 1000.0, "{local_timer}");
    let softirqs = deltas(CounterFile::Softirqs, "softirqs");
    assert_eq!(softirqs.len(), 10, "{softirqs:?}");
    assert!(
        softirqs
            .iter()
            .any(|(name, value)| name == "softirqs.TIMER" && *value > 0.0)
    );
    let vmstat = deltas(CounterFile::Vmstat, "vmstat");
    assert!(
        vmstat
            .iter()
            .all(|(name, value)| name.starts_with("vmstat.") && *value >= 0.0)
    );
    assert!(vmstat.iter().any(|(name, _)| name == "vmstat.pgfault"));
    assert!(
        vmstat
            .iter()
            .any(|(name, _)| name == "vmstat.thp_fault_alloc")
    );
}
