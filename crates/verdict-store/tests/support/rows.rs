//! The rows the store tests write: a cell from (factor, level) pairs, a
//! new run, a data sample. Must not open a store.

use std::collections::BTreeMap;

use verdict_model::{Cell, Environment, Sample};
use verdict_store::NewRun;

pub fn cell(levels: &[(&str, &str)]) -> Cell {
    Cell {
        levels: levels
            .iter()
            .map(|(factor, level)| (factor.to_string(), level.to_string()))
            .collect(),
    }
}

pub fn new_run(name: &str) -> NewRun {
    NewRun {
        name: name.to_string(),
        kind: verdict_model::RunKind::Run,
        placement: verdict_model::Placement::Local,
        experiment_text: format!("name = \"{name}\"\ncommand = [\"true\"]\n"),
        experiment_sha256: "ab".repeat(32),
        experiment_json: format!("{{\"name\":\"{name}\"}}"),
        tool_version: "0.1.0".to_string(),
        seed: 0xfedc_ba98_7654_3210,
        host: "testhost".to_string(),
        planned: 6,
        started_at_ms: 1_764_500_000_000,
        environment_start: Environment {
            hostname: Some("testhost".to_string()),
            kernel_release: Some("6.12.0".to_string()),
            cpu_count: Some(8),
            load_average: Some([0.25, 0.5, 1.0]),
            ..Environment::default()
        },
        command_line: vec!["verdict".into(), "run".into(), "a b.toml".into()],
        bisect: None,
    }
}

pub fn sample(sequence: u32, cell: usize, wall: f64) -> Sample {
    let mut metrics = BTreeMap::new();
    metrics.insert("wall".to_string(), wall);
    metrics.insert("bogo-ops/s".to_string(), 1000.0 / wall);
    Sample {
        cell,
        block: sequence / 2,
        sequence,
        warmup: false,
        started_at_ms: 1_764_500_000_000 + i64::from(sequence) * 10,
        wall_seconds: wall,
        user_seconds: wall / 2.0,
        sys_seconds: wall / 4.0,
        max_rss_kib: 2048 + u64::from(sequence),
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        metrics,
        failure: None,
        missing: BTreeMap::new(),
        leftovers: Vec::new(),
    }
}
