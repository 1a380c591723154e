//! Selections across runs and hosts, evaluated by the database, on both
//! backends: `host=` and `kernel=` match a run's host and recorded kernel
//! release when the cell has no factor of that name (a factor of that
//! name wins), `kernel=6.12` matches release `6.12.0-1-amd64` but not
//! `6.120`; `Database::list_runs_on_hosts` lists one host's runs. Must not
//! share a store between tests.

mod support;

use std::collections::BTreeMap;

use verdict_model::{Cell, Environment, RunId, Sample};
use verdict_store::{NewRun, Selection, Store};

fn new_run(host: &str, kernel: &str) -> NewRun {
    NewRun {
        name: "lab".to_string(),
        kind: verdict_model::RunKind::Run,
        placement: verdict_model::Placement::Local,
        experiment_text: String::new(),
        experiment_sha256: String::new(),
        experiment_json: "{}".to_string(),
        tool_version: "0.1.0".to_string(),
        seed: 1,
        host: host.to_string(),
        planned: 1,
        started_at_ms: 0,
        environment_start: Environment {
            kernel_release: Some(kernel.to_string()),
            ..Environment::default()
        },
        command_line: Vec::new(),
        bisect: None,
    }
}

fn sample(wall: f64) -> Sample {
    Sample {
        cell: 0,
        block: 0,
        sequence: 0,
        warmup: false,
        started_at_ms: 0,
        wall_seconds: wall,
        user_seconds: 0.0,
        sys_seconds: 0.0,
        max_rss_kib: 1,
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        metrics: [("wall".to_string(), wall)].into_iter().collect(),
        failure: None,
        missing: BTreeMap::new(),
        leftovers: Vec::new(),
    }
}

fn cell(levels: &[(&str, &str)]) -> Cell {
    Cell {
        levels: levels
            .iter()
            .map(|(factor, level)| (factor.to_string(), level.to_string()))
            .collect(),
    }
}

on_both_backends! {
    fn host_and_kernel_select_runs_unless_a_factor_has_that_name(backend) {
        let store = backend.open();
        let mut runs = Vec::new();
        for (host, kernel, levels, wall) in [
            ("lpar1", "6.12.0-1-amd64", vec![("mode", "a")], 1.0),
            ("lpar2", "6.12.3", vec![("mode", "a")], 2.0),
            ("lpar1", "6.120.1", vec![("mode", "a")], 3.0),
            // A factor named `kernel` is matched as a factor, not the run.
            ("lpar2", "6.12.0", vec![("mode", "a"), ("kernel", "7.1")], 4.0),
        ] {
            let run = store.create_run(&new_run(host, kernel)).unwrap();
            store.append_sample(run, &sample(wall), &cell(&levels)).unwrap();
            runs.push(run);
        }
        let values = |levels: &[(&str, &str)]| -> Vec<(RunId, f64)> {
            store
                .select_samples(&Selection {
                    run: None,
                    levels: levels
                        .iter()
                        .map(|(factor, level)| (factor.to_string(), level.to_string()))
                        .collect(),
                    metric: "wall".to_string(),
                })
                .unwrap()
                .iter()
                .map(|value| (value.run, value.value))
                .collect()
        };
        assert_eq!(values(&[("host", "lpar1")]), [(runs[0], 1.0), (runs[2], 3.0)]);
        assert_eq!(values(&[("kernel", "6.12")]), [(runs[0], 1.0), (runs[1], 2.0)]);
        assert_eq!(values(&[("kernel", "7.1")]), [(runs[3], 4.0)]);
        assert_eq!(
            values(&[("host", "lpar2"), ("kernel", "6.12"), ("mode", "a")]),
            [(runs[1], 2.0)]
        );
        assert!(values(&[("host", "lpar9")]).is_empty());
        // A value with SQL LIKE wildcards is text, not a pattern.
        assert!(values(&[("kernel", "6.1_")]).is_empty());
        assert!(values(&[("kernel", "%")]).is_empty());

        let on_host: Vec<RunId> = store
            .list_runs_on_hosts(&["lpar1".to_string()])
            .unwrap()
            .iter()
            .map(|run| run.id)
            .collect();
        assert_eq!(on_host, [runs[0], runs[2]]);
        assert_eq!(
            store
                .list_runs_on_hosts(&["lpar2".to_string(), "lpar1".to_string()])
                .unwrap()
                .len(),
            4
        );
    }
}
