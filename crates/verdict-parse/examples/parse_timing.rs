//! Measures how long each extractor takes on the committed fixtures, to show
//! that parsing is negligible next to running a workload. Prints a table;
//! reads fixture files; does nothing else.
//! Run: `cargo run -p verdict-parse --example parse_timing [--release]`.

use std::path::PathBuf;
use std::time::Instant;

use verdict_parse::{Extractor, extract, go_benchmarks, hyperfine_times};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

fn time_per_call(label: &str, bytes: usize, mut call: impl FnMut()) {
    const REPETITIONS: u32 = 2000;
    call();
    let start = Instant::now();
    for _ in 0..REPETITIONS {
        call();
    }
    let per_call = start.elapsed() / REPETITIONS;
    println!(
        "{label:<44} {bytes:>7} B  {:>9.1} µs/call",
        per_call.as_secs_f64() * 1e6
    );
}

fn main() {
    let stress = fixture("stress-ng-0.15.06-kill-cpu-metrics.txt");
    let stress_ng = Extractor::StressNg {
        stressor: Some("kill".to_string()),
        field: "bogo-ops-per-second-real-time".to_string(),
    };
    time_per_call(
        "stress-ng text (--metrics, 2 stressors)",
        stress.len(),
        || {
            extract(&stress_ng, b"", &stress).unwrap();
        },
    );
    let yaml = fixture("stress-ng-0.15.06-kill-cpu.yaml");
    let stress_ng_yaml = Extractor::StressNgYaml {
        stressor: Some("cpu".to_string()),
        field: "bogo-ops".to_string(),
    };
    time_per_call("stress-ng --yaml", yaml.len(), || {
        extract(&stress_ng_yaml, &yaml, b"").unwrap();
    });
    let perf = fixture("perf-x-spr-hardware.csv");
    let cycles = Extractor::PerfStat {
        event: "cycles".to_string(),
    };
    time_per_call("perf stat -x, (13 lines)", perf.len(), || {
        extract(&cycles, b"", &perf).unwrap();
    });
    let time = fixture("gnu-time-v-stress-ng.txt");
    let max_rss = Extractor::TimeVerbose {
        field: "max-rss".to_string(),
    };
    time_per_call("time -v", time.len(), || {
        extract(&max_rss, b"", &time).unwrap();
    });
    let regex = Extractor::Regex {
        pattern: r"kill\s+(?P<value>\d+)".to_string(),
    };
    time_per_call("regex (compiled on every call)", stress.len(), || {
        extract(&regex, &stress, b"").unwrap();
    });
    let hyperfine = fixture("hyperfine-1.15-two-commands.json");
    let text = String::from_utf8(hyperfine.clone()).unwrap();
    time_per_call(
        "hyperfine --export-json (2 commands)",
        hyperfine.len(),
        || {
            hyperfine_times(&text, Some("sleep 0.02")).unwrap();
        },
    );
    let crc = String::from_utf8(fixture("benchstat/crc-old.txt")).unwrap();
    time_per_call(
        "Go benchmark format (crc-old.txt, 360 lines)",
        crc.len(),
        || {
            go_benchmarks(&crc).unwrap();
        },
    );
}
