//! The store suite, every body run on both backends (a real SQLite file in
//! a temporary directory, and a real PostgreSQL cluster started for the
//! test): runs, samples with failures and metrics, duplicates, selections
//! across runs, annotations, bisection state, errors. Must not depend on
//! another test's database.

mod support;

use serde_json::json;
use verdict_model::adaptive::Verdict;
use verdict_model::{
    AdaptiveRecord, ComparisonState, ComparisonStatus, Environment, Failure, RunId, RunStatus,
};
use verdict_store::{NewBisect, Selection, Store, StoreError};

use support::rows::{cell, new_run, sample};

/// The `decisions` annotation a version-10 store held for an adaptive run
/// (the engine's JSON, fields in the order serde_json's map kept them).
const VERSION_10_DECISIONS: &str = r#"[{"baseline_cell":0,"baseline_label":"variant=1.0","candidate_cell":1,"candidate_label":"variant=1.5","confidence":0.9978354978354979,"estimate":0.5044518137748131,"factor":"variant","high":0.513842012015876,"low":0.47693288854003124,"projected_runs":null,"runs":6,"state":"decided","verdict":"regression"},{"baseline_cell":0,"baseline_label":"variant=1.0","candidate_cell":2,"candidate_label":"variant=1.03","confidence":null,"estimate":0.02848971997924096,"factor":"variant","high":null,"low":null,"projected_runs":10,"runs":4,"state":"cap","verdict":null}]"#;

/// Takes a store back from schema 14 to 13: without the tables of what
/// iterations capture besides their metrics.
fn undo_migration_14(backend: &support::Backend) {
    for table in ["profile_symbols", "sample_profiles", "sample_monitors"] {
        backend.raw_rows(&format!("DROP TABLE {table}"));
    }
}

/// Takes a store back to schema version 12: without migration 13's
/// takeovers, open-blocks index and sample hosts.
fn undo_migration_13(backend: &support::Backend) {
    backend.raw_rows("DROP TABLE work_takeovers");
    backend.raw_rows("DROP INDEX work_blocks_open");
    backend.raw_rows("ALTER TABLE samples DROP COLUMN host");
}

/// A comparison of `candidate` against `variant=1.0` (cells 0 and 1).
fn status(candidate: &str, state: ComparisonState, verdict: Option<Verdict>) -> ComparisonStatus {
    ComparisonStatus {
        factor: "variant".to_string(),
        baseline_cell: 0,
        candidate_cell: 1,
        baseline_label: "variant=1.0".to_string(),
        candidate_label: candidate.to_string(),
        state,
        verdict,
        runs: 5,
        estimate: None,
        low: None,
        high: None,
        confidence: None,
        projected_runs: None,
    }
}

on_both_backends! {
    fn runs_and_samples_round_trip_through_the_store(backend) {
        let cells = [
            cell(&[("kernel", "6.1"), ("selinux", "enforcing")]),
            cell(&[("kernel", "7.1"), ("selinux", "enforcing")]),
        ];
        let mut written = vec![];
        let run;
        {
            let store = backend.open();
            assert!(store.latest_run().unwrap().is_none());
            run = store.create_run(&new_run("kill")).unwrap();
            let mut warmup = sample(0, 0, 0.5);
            warmup.warmup = true;
            let data = sample(1, 1, 0.25);
            let mut failed = sample(2, 0, 3.0);
            failed.exit_code = None;
            failed.signal = Some(9);
            failed.timed_out = true;
            failed.metrics.clear();
            failed.failure = Some(Failure {
                reason: "timed out after 3s".to_string(),
                output_tail: "line 1\nline \u{e9}2\n".to_string(),
            });
            let mut metric_failure = sample(3, 1, 0.125);
            metric_failure.metrics.remove("bogo-ops/s");
            metric_failure.failure = Some(Failure {
                reason: "metric `bogo-ops/s`: no stress-ng metrics row".to_string(),
                output_tail: String::new(),
            });
            written = vec![warmup, data, failed, metric_failure];
            for sample in &written {
                store
                    .append_sample(run, sample, &cells[sample.cell])
                    .unwrap();
            }
            store.set_planned(run, 8).unwrap();
            let environment_end = Environment {
                load_average: Some([2.0, 1.0, 0.5]),
                ..Environment::default()
            };
            store
                .finish_run(
                    run,
                    RunStatus::Complete,
                    1_764_500_009_000,
                    Some(&environment_end),
                )
                .unwrap();
        }

        let store = backend.open();
        assert_eq!(store.samples(run).unwrap(), written);
        let record = store.run(run).unwrap();
        let expected = new_run("kill");
        assert_eq!(record.id, run);
        assert_eq!(record.name, "kill");
        assert_eq!(record.kind, verdict_model::RunKind::Run);
        assert_eq!(record.status, RunStatus::Complete);
        assert_eq!(record.experiment_text, expected.experiment_text);
        assert_eq!(record.experiment_sha256, expected.experiment_sha256);
        assert_eq!(record.experiment_json, expected.experiment_json);
        assert_eq!(record.tool_version, "0.1.0");
        assert_eq!(
            record.seed, 0xfedc_ba98_7654_3210,
            "u64 above i64::MAX survives"
        );
        assert_eq!(record.host, "testhost");
        assert_eq!(record.planned, 8);
        assert_eq!((record.done, record.failed), (4, 2));
        assert_eq!(record.started_at_ms, 1_764_500_000_000);
        assert_eq!(record.finished_at_ms, Some(1_764_500_009_000));
        assert_eq!(record.environment_start, expected.environment_start);
        assert_eq!(
            record.environment_end.unwrap().load_average,
            Some([2.0, 1.0, 0.5])
        );
        assert_eq!(record.command_line, expected.command_line);

        let runs = store.list_runs().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(
            (runs[0].id, runs[0].planned, runs[0].done, runs[0].failed),
            (run, 8, 4, 2)
        );
        assert_eq!(store.latest_run().unwrap().unwrap().id, run);
    }

    fn a_sample_is_never_stored_twice(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("dup")).unwrap();
        let only = cell(&[("mode", "a")]);
        store.append_sample(run, &sample(0, 0, 1.0), &only).unwrap();
        let error = store
            .append_sample(run, &sample(0, 0, 2.0), &only)
            .unwrap_err();
        assert!(
            matches!(error, StoreError::DuplicateSample { sequence: 0, .. }),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("sample 0 of run 1 in")
                && error.to_string().contains("already stored"),
            "{error}"
        );
        // The refused sample left nothing behind, not even its metrics.
        let samples = store.samples(run).unwrap();
        assert_eq!(samples, vec![sample(0, 0, 1.0)]);
        // The same sequence in another run is a different sample.
        let other = store.create_run(&new_run("other")).unwrap();
        store
            .append_sample(other, &sample(0, 0, 2.0), &only)
            .unwrap();
    }

    fn a_cell_index_keeps_its_levels_within_a_run(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("cells")).unwrap();
        store
            .append_sample(run, &sample(0, 0, 1.0), &cell(&[("mode", "a")]))
            .unwrap();
        let error = store
            .append_sample(run, &sample(1, 0, 1.0), &cell(&[("mode", "b")]))
            .unwrap_err();
        assert!(
            error.to_string().contains("cell 0 is stored with levels"),
            "{error}"
        );
        assert_eq!(store.samples(run).unwrap().len(), 1);
    }

    fn non_finite_values_are_refused_with_the_metric_named(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("nan")).unwrap();
        let mut bad = sample(0, 0, 1.0);
        bad.metrics.insert("ipc".to_string(), f64::NAN);
        let error = store
            .append_sample(run, &bad, &cell(&[("mode", "a")]))
            .unwrap_err();
        assert!(error.to_string().contains("`ipc` is NaN"), "{error}");
        assert!(store.samples(run).unwrap().is_empty());
    }

    fn an_environment_that_would_not_read_back_is_refused(backend) {
        let store = backend.open();
        let mut run = new_run("nan-load");
        run.environment_start.load_average = Some([f64::NAN, 1.0, 1.0]);
        let error = store.create_run(&run).unwrap_err();
        assert!(error.to_string().contains("not a number"), "{error}");
        assert!(store.list_runs().unwrap().is_empty());
        let good = store.create_run(&new_run("good")).unwrap();
        let end = Environment {
            load_average: Some([1.0, f64::INFINITY, 1.0]),
            ..Environment::default()
        };
        assert!(
            store
                .finish_run(good, RunStatus::Complete, 1, Some(&end))
                .is_err()
        );
        assert_eq!(store.run(good).unwrap().status, RunStatus::Running);
    }

    fn selections_pick_data_values_across_runs_in_execution_order(backend) {
        let store = backend.open();
        let cells = [
            cell(&[("kernel", "6.1"), ("selinux", "enforcing")]),
            cell(&[("kernel", "7.1"), ("selinux", "enforcing")]),
            cell(&[("kernel", "7.1"), ("selinux", "permissive")]),
        ];
        let first = store.create_run(&new_run("first")).unwrap();
        let second = store.create_run(&new_run("second")).unwrap();
        // Appended out of order on purpose: results come back by (run, sequence).
        for (run, sequence, cell_index, wall) in [
            (second, 1, 1, 21.0),
            (first, 2, 1, 12.0),
            (first, 0, 1, 10.0),
            (first, 1, 0, 11.0),
            (second, 0, 2, 20.0),
            (first, 3, 2, 13.0),
            (second, 2, 1, 22.0),
        ] {
            store
                .append_sample(run, &sample(sequence, cell_index, wall), &cells[cell_index])
                .unwrap();
        }
        let mut warmup = sample(3, 1, 99.0);
        warmup.warmup = true;
        store.append_sample(second, &warmup, &cells[1]).unwrap();
        let mut failed = sample(4, 1, 98.0);
        failed.failure = Some(Failure {
            reason: "exit status 1".to_string(),
            output_tail: String::new(),
        });
        store.append_sample(second, &failed, &cells[1]).unwrap();

        let select = |run: Option<RunId>, levels: &[(&str, &str)], metric: &str| {
            store
                .select_samples(&Selection {
                    run,
                    levels: levels
                        .iter()
                        .map(|(factor, level)| (factor.to_string(), level.to_string()))
                        .collect(),
                    metric: metric.to_string(),
                })
                .unwrap()
        };
        let values = select(None, &[("kernel", "7.1"), ("selinux", "enforcing")], "wall");
        let picked: Vec<_> = values
            .iter()
            .map(|value| (value.run, value.sequence, value.value))
            .collect();
        assert_eq!(
            picked,
            vec![
                (first, 0, 10.0),
                (first, 2, 12.0),
                (second, 1, 21.0),
                (second, 2, 22.0)
            ]
        );
        assert_eq!(values[0].levels, cells[1].levels);
        assert_eq!(values[0].started_at_ms, 1_764_500_000_000);

        let kernel: Vec<_> = select(Some(second), &[("kernel", "7.1")], "wall")
            .iter()
            .map(|value| value.value)
            .collect();
        assert_eq!(kernel, vec![20.0, 21.0, 22.0]);
        let everything = select(None, &[], "bogo-ops/s");
        assert_eq!(everything.len(), 7);
        assert!(select(None, &[("kernel", "8.0")], "wall").is_empty());
        assert!(select(None, &[], "no-such-metric").is_empty());
        let error = store
            .select_samples(&Selection {
                run: Some(RunId(77)),
                levels: vec![],
                metric: "wall".to_string(),
            })
            .unwrap_err();
        assert!(matches!(error, StoreError::UnknownRun { .. }), "{error:?}");
    }

    fn unknown_runs_are_named_with_the_database_and_the_way_out(backend) {
        let store = backend.open();
        let error = store.run(RunId(42)).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "find run 42: no run 42 in {}; `verdict runs` lists them",
                backend.name()
            )
        );
        assert!(matches!(
            store.samples(RunId(42)),
            Err(StoreError::UnknownRun { .. })
        ));
        assert!(matches!(
            store.append_sample(RunId(42), &sample(0, 0, 1.0), &cell(&[("mode", "a")])),
            Err(StoreError::UnknownRun { .. })
        ));
        assert!(matches!(
            store.set_status(RunId(42), RunStatus::Interrupted),
            Err(StoreError::UnknownRun { .. })
        ));
        assert!(matches!(
            store.set_planned(RunId(42), 3),
            Err(StoreError::UnknownRun { .. })
        ));
        assert!(matches!(
            store.finish_run(RunId(42), RunStatus::Complete, 0, None),
            Err(StoreError::UnknownRun { .. })
        ));
        assert!(matches!(
            store.put_annotation(RunId(42), "doctor", &json!({})),
            Err(StoreError::UnknownRun { .. })
        ));
        assert!(matches!(
            store.annotations(RunId(42)),
            Err(StoreError::UnknownRun { .. })
        ));
    }

    fn status_changes_and_resume_clear_the_end_time(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("status")).unwrap();
        assert_eq!(store.run(run).unwrap().status, RunStatus::Running);
        store
            .finish_run(run, RunStatus::Interrupted, 1_764_500_001_000, None)
            .unwrap();
        let record = store.run(run).unwrap();
        assert_eq!(record.status, RunStatus::Interrupted);
        assert_eq!(record.finished_at_ms, Some(1_764_500_001_000));
        assert_eq!(record.environment_end, None);
        store.set_status(run, RunStatus::Running).unwrap();
        let record = store.run(run).unwrap();
        assert_eq!(record.status, RunStatus::Running);
        assert_eq!(record.finished_at_ms, None);
        store.set_status(run, RunStatus::Failed).unwrap();
        assert_eq!(store.list_runs().unwrap()[0].status, RunStatus::Failed);
    }

    fn annotations_are_stored_and_replaced_per_key(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("annotated")).unwrap();
        let other = store.create_run(&new_run("other")).unwrap();
        store
            .put_annotation(
                run,
                "doctor",
                &json!({"governor": "powersave", "warnings": 2}),
            )
            .unwrap();
        store
            .put_annotation(run, "decisions", &json!([{"look": 1, "decided": false}]))
            .unwrap();
        store
            .put_annotation(run, "decisions", &json!([{"look": 2, "decided": true}]))
            .unwrap();
        let annotations = store.annotations(run).unwrap();
        assert_eq!(annotations.len(), 2);
        assert_eq!(annotations["doctor"]["warnings"], json!(2));
        assert_eq!(
            annotations["decisions"],
            json!([{"look": 2, "decided": true}])
        );
        assert!(store.annotations(other).unwrap().is_empty());
    }

    fn adaptive_state_round_trips_typed_and_is_replaced(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("adaptive")).unwrap();
        let fixed = store.create_run(&new_run("fixed")).unwrap();
        assert_eq!(store.adaptive(run).unwrap(), AdaptiveRecord::default());
        store.record_adaptive_procedure(run, "first design").unwrap();
        store.record_adaptive_procedure(run, "group-sequential, γ = -2").unwrap();
        let looked = status("variant=b", ComparisonState::Continue, None);
        store
            .record_adaptive_decisions(run, std::slice::from_ref(&looked))
            .unwrap();
        let mut decided = status("variant=b", ComparisonState::Decided, Some(Verdict::Regression));
        decided.projected_runs = Some(12);
        let capped = status("variant=c", ComparisonState::Cap, None);
        store
            .record_adaptive_decisions(run, &[decided.clone(), capped.clone()])
            .unwrap();
        drop(store);
        let store = backend.open();
        assert_eq!(
            store.adaptive(run).unwrap(),
            AdaptiveRecord {
                procedure: Some("group-sequential, γ = -2".to_string()),
                decisions: vec![decided, capped],
            }
        );
        assert_eq!(store.adaptive(fixed).unwrap(), AdaptiveRecord::default());
        assert!(
            store.annotations(run).unwrap().is_empty(),
            "the adaptive state is not an annotation"
        );
        assert!(matches!(
            store.record_adaptive_procedure(RunId(99), "x"),
            Err(StoreError::UnknownRun { .. })
        ));
        assert!(matches!(
            store.adaptive(RunId(99)),
            Err(StoreError::UnknownRun { .. })
        ));
    }

    fn a_copied_run_keeps_its_adaptive_state(backend) {
        let source_backend = support::Backend::sqlite();
        let source = source_backend.open();
        let run = source.create_run(&new_run("adaptive")).unwrap();
        source.record_adaptive_procedure(run, "design").unwrap();
        let decided = status("variant=b", ComparisonState::Decided, Some(Verdict::Equivalent));
        source
            .record_adaptive_decisions(run, std::slice::from_ref(&decided))
            .unwrap();
        let fixed = source.create_run(&new_run("fixed")).unwrap();
        let target = backend.open();
        let copied = verdict_store::copy_run(&source, &target, run).unwrap();
        let copied_fixed = verdict_store::copy_run(&source, &target, fixed).unwrap();
        assert_eq!(
            target.adaptive(copied.target).unwrap(),
            AdaptiveRecord {
                procedure: Some("design".to_string()),
                decisions: vec![decided],
            }
        );
        assert_eq!(
            target.adaptive(copied_fixed.target).unwrap(),
            AdaptiveRecord::default()
        );
    }

    /// A store at schema version 10 kept the adaptive state as the
    /// `procedure` and `decisions` annotations (the JSON below is what the
    /// engine wrote); migration 11, in each dialect, moves them into
    /// `adaptive_runs` and leaves the other annotations alone.
    fn migration_11_moves_the_adaptive_annotations_into_their_table(backend) {
        let (run, fixed);
        {
            let store = backend.open();
            run = store.create_run(&new_run("adaptive")).unwrap();
            fixed = store.create_run(&new_run("fixed")).unwrap();
            store
                .put_annotation(
                    run,
                    "procedure",
                    &json!("group-sequential repeated confidence intervals, Hwang–Shih–DeCani spending (γ = -2)"),
                )
                .unwrap();
            store
                .put_annotation(run, "decisions", &serde_json::from_str(VERSION_10_DECISIONS).unwrap())
                .unwrap();
            store.put_annotation(run, "process", &json!({"pid": 20466})).unwrap();
            store.put_annotation(fixed, "process", &json!({"pid": 20467})).unwrap();
        }
        // Back to version 10: without migration 11's table, 12's column
        // and 13's tables.
        backend.undo_migration_15();
        undo_migration_14(backend);
        backend.raw_rows("DROP TABLE adaptive_runs");
        backend.raw_rows("ALTER TABLE boots DROP COLUMN environment");
        undo_migration_13(backend);
        match backend.sqlite_path() {
            Some(_) => backend.raw_rows("PRAGMA user_version = 10"),
            None => backend.raw_rows("UPDATE verdict_schema SET version = 10"),
        };
        let store = backend.open();
        let adaptive = store.adaptive(run).unwrap();
        assert_eq!(
            adaptive.procedure.as_deref(),
            Some("group-sequential repeated confidence intervals, Hwang–Shih–DeCani spending (γ = -2)")
        );
        // Floats as serde_json reads the same text (its default parsing
        // may differ from the literal in the last digit).
        let expected: Vec<ComparisonStatus> = serde_json::from_str(VERSION_10_DECISIONS).unwrap();
        assert_eq!(adaptive.decisions, expected);
        let summary: Vec<_> = adaptive
            .decisions
            .iter()
            .map(|status| {
                (
                    status.candidate_label.as_str(),
                    status.candidate_cell,
                    status.state,
                    status.verdict,
                    status.runs,
                    status.projected_runs,
                    status.low.is_some(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("variant=1.5", 1, ComparisonState::Decided, Some(Verdict::Regression), 6, None, true),
                ("variant=1.03", 2, ComparisonState::Cap, None, 4, Some(10), false),
            ]
        );
        assert!((adaptive.decisions[0].estimate.unwrap() - 0.504_451_813_774_813).abs() < 1e-12);
        assert_eq!(
            store.annotations(run).unwrap().keys().collect::<Vec<_>>(),
            ["process"]
        );
        assert_eq!(store.adaptive(fixed).unwrap(), AdaptiveRecord::default());
        assert_eq!(store.annotations(fixed).unwrap().len(), 1);
    }

    fn bisection_state_round_trips_and_refuses_duplicate_events(backend) {
        let bisect;
        {
            let store = backend.open();
            assert!(store.latest_bisect().unwrap().is_none());
            bisect = store
                .create_bisect(&NewBisect {
                    repo: "/src/linux".to_string(),
                    good: "v6.1".to_string(),
                    bad: "v6.2".to_string(),
                    experiment_text: "name = \"kill\"\n".to_string(),
                    config: json!({"threshold": 0.02}),
                    started_at_ms: 1_764_500_000_000,
                })
                .unwrap();
            store
                .append_bisect_event(
                    bisect,
                    0,
                    &json!({"measured": "abc123", "samples": [1.0, 2.0]}),
                )
                .unwrap();
            store
                .append_bisect_event(bisect, 1, &json!({"skip": "def456"}))
                .unwrap();
            let error = store
                .append_bisect_event(bisect, 1, &json!({"skip": "other"}))
                .unwrap_err();
            assert!(
                matches!(error, StoreError::DuplicateBisectEvent { sequence: 1, .. }),
                "{error:?}"
            );
        }
        let store = backend.open();
        assert_eq!(
            store.bisect_events(bisect).unwrap(),
            vec![
                (0, json!({"measured": "abc123", "samples": [1.0, 2.0]})),
                (1, json!({"skip": "def456"})),
            ]
        );
        let record = store.bisect(bisect).unwrap();
        assert_eq!(record.status, RunStatus::Running);
        assert_eq!(record.events, 2);
        assert_eq!(record.config, json!({"threshold": 0.02}));
        assert_eq!(record.result, None);
        store
            .finish_bisect(
                bisect,
                RunStatus::Complete,
                1_764_500_050_000,
                &json!({"first_bad": "abc123"}),
            )
            .unwrap();
        let summary = &store.list_bisects().unwrap()[0];
        assert_eq!(
            (
                summary.id,
                summary.status,
                summary.events,
                summary.finished_at_ms
            ),
            (bisect, RunStatus::Complete, 2, Some(1_764_500_050_000))
        );
        let latest = store.latest_bisect().unwrap().unwrap();
        assert_eq!(latest.result, Some(json!({"first_bad": "abc123"})));
        assert_eq!(
            (
                latest.repo.as_str(),
                latest.good.as_str(),
                latest.bad.as_str()
            ),
            ("/src/linux", "v6.1", "v6.2")
        );
        let missing = verdict_store::BisectId(9);
        assert!(matches!(
            store.bisect(missing),
            Err(StoreError::UnknownBisect { .. })
        ));
        assert!(matches!(
            store.bisect_events(missing),
            Err(StoreError::UnknownBisect { .. })
        ));
        assert!(matches!(
            store.append_bisect_event(missing, 0, &json!(null)),
            Err(StoreError::UnknownBisect { .. })
        ));
    }

    fn built_in_metrics_equal_to_their_column_are_flags_and_read_back_losslessly(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("flags")).unwrap();
        let mode_a = cell(&[("mode", "a")]);
        // Sample 0: `wall` and `maxrss` equal their columns (flags); sample 1:
        // a `wall` and a `sys` that are not the column (parsed metrics named
        // like built-ins) must stay rows.
        let mut flagged = sample(0, 0, 0.5);
        flagged
            .metrics
            .insert("maxrss".to_string(), flagged.max_rss_kib as f64);
        let mut kept = sample(1, 0, 0.25);
        kept.metrics.insert("wall".to_string(), 7.0);
        kept.metrics.insert("sys".to_string(), 0.125);
        store.append_sample(run, &flagged, &mode_a).unwrap();
        store.append_sample(run, &kept, &mode_a).unwrap();

        assert_eq!(
            backend.raw_rows("SELECT sequence, name FROM sample_metrics ORDER BY sequence, name"),
            vec!["0|bogo-ops/s", "1|bogo-ops/s", "1|sys", "1|wall"]
        );
        assert_eq!(
            backend.raw_rows("SELECT builtin_metrics FROM samples ORDER BY sequence"),
            vec![(1 | 8).to_string(), "0".to_string()]
        );

        // A fresh connection (no cache) reads exactly what was appended.
        drop(store);
        let store = backend.open();
        let read = store.samples(run).unwrap();
        assert_eq!(read[0].metrics, flagged.metrics);
        assert_eq!(read[1].metrics, kept.metrics);
        let select = |metric: &str| -> Vec<f64> {
            store
                .select_samples(&Selection {
                    run: Some(run),
                    levels: Vec::new(),
                    metric: metric.to_string(),
                })
                .unwrap()
                .iter()
                .map(|value| value.value)
                .collect()
        };
        assert_eq!(select("wall"), vec![0.5, 7.0]);
        assert_eq!(select("maxrss"), vec![2048.0], "only sample 0 has maxrss");
        assert_eq!(select("user"), Vec::<f64>::new(), "not a metric of either");
        assert_eq!(select("bogo-ops/s"), vec![2000.0, 4000.0]);
        // The cell check still holds without the cache.
        let error = store
            .append_sample(run, &sample(2, 0, 1.0), &cell(&[("mode", "b")]))
            .unwrap_err();
        assert!(
            error.to_string().contains("cell 0 is stored with levels"),
            "{error}"
        );
    }
}

on_both_backends! {
    fn boots_are_recorded_updated_and_read_back_in_order(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("boots")).unwrap();
        let new = |slot, attempt, first_sequence| verdict_store::NewBoot {
            slot,
            attempt,
            level_key: "preempt=full".into(),
            first_sequence,
            kernel: "/vmlinuz".into(),
            command_line: "preempt=full; DROP TABLE boots; --".into(),
            started_at_ms: 5,
        };
        let here = cell(&[("preempt", "full")]);
        assert_eq!(store.create_boot(run, &new(0, 0, 0)).unwrap(), 0);
        store.append_sample(run, &sample(0, 0, 1.0), &here).unwrap();
        assert_eq!(store.create_boot(run, &new(1, 0, 1)).unwrap(), 1);
        store
            .update_boot(
                run,
                &verdict_store::BootRow {
                    id: 1,
                    status: verdict_model::BootStatus::Failed,
                    message: Some("no working init found".into()),
                    console_tail: Some("Kernel panic - not syncing".into()),
                    finished_at_ms: Some(9),
                    ..verdict_store::BootRow::default()
                },
            )
            .unwrap();
        assert_eq!(store.create_boot(run, &new(1, 1, 1)).unwrap(), 2);
        store.append_sample(run, &sample(1, 0, 1.1), &here).unwrap();

        let boots = store.boots(run).unwrap();
        assert_eq!(boots.iter().map(|boot| boot.id).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(boots[0].status, verdict_model::BootStatus::Booting);
        assert_eq!(boots[0].command_line, "preempt=full; DROP TABLE boots; --");
        assert_eq!(boots[1].status, verdict_model::BootStatus::Failed);
        assert_eq!(boots[1].console_tail.as_deref(), Some("Kernel panic - not syncing"));
        assert_eq!((boots[2].slot, boots[2].attempt), (1, 1));
        assert_eq!(verdict_store::BootRow::of_sample(&boots, 0), Some(0));
        assert_eq!(verdict_store::BootRow::of_sample(&boots, 1), Some(2));
        // An unknown boot is an error, not a silent no-op.
        assert!(store
            .update_boot(run, &verdict_store::BootRow { id: 7, ..Default::default() })
            .is_err());
        assert!(store.boots(RunId(999)).is_err());
    }

    /// A proven boot's environment is stored with its row, typed, and
    /// read back equal (quotes and SQL in its text stay text); a failed
    /// boot has none; a NaN that would not read back is refused.
    fn a_boots_environment_round_trips_typed(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("boots")).unwrap();
        let new = verdict_store::NewBoot {
            slot: 0,
            attempt: 0,
            level_key: "preempt=full".into(),
            first_sequence: 0,
            kernel: "/vmlinuz".into(),
            command_line: "preempt=full".into(),
            started_at_ms: 5,
        };
        assert_eq!(store.create_boot(run, &new).unwrap(), 0);
        assert_eq!(store.create_boot(run, &new).unwrap(), 1);
        let booted = booted_environment("preempt=full verdict.boot=0123 x='; DROP TABLE boots; --'");
        let proven = verdict_store::BootRow {
            id: 1,
            status: verdict_model::BootStatus::Proven,
            environment: Some(booted.clone()),
            ..verdict_store::BootRow::default()
        };
        store.update_boot(run, &proven).unwrap();
        let boots = store.boots(run).unwrap();
        assert_eq!(boots[0].environment, None);
        assert_eq!(boots[1].environment, Some(booted.clone()));
        let unreadable = verdict_store::BootRow {
            environment: Some(Environment {
                load_average: Some([f64::NAN, 0.0, 0.0]),
                ..booted
            }),
            ..proven
        };
        let error = store.update_boot(run, &unreadable).unwrap_err().to_string();
        assert!(error.contains("not a number"), "{error}");
    }

    /// push/pull: a copied run keeps its boots, each with its environment
    /// and console tail; copying again (after the run went on) adds the new
    /// boots and updates the old, storing nothing twice.
    fn a_copied_run_keeps_its_boots_and_their_environments(backend) {
        let source_backend = support::Backend::sqlite();
        let source = source_backend.open();
        let run = source.create_run(&new_run("boots")).unwrap();
        let new = |slot| verdict_store::NewBoot {
            slot,
            attempt: 0,
            level_key: format!("preempt={slot}"),
            first_sequence: slot * 2,
            kernel: "/vmlinuz".into(),
            command_line: "preempt=full".into(),
            started_at_ms: 5,
        };
        source.create_boot(run, &new(0)).unwrap();
        source
            .update_boot(
                run,
                &verdict_store::BootRow {
                    id: 0,
                    slot: 0,
                    level_key: "preempt=0".into(),
                    status: verdict_model::BootStatus::Failed,
                    message: Some("not proven".into()),
                    console_tail: Some("0s: power_cycle on the controller".into()),
                    kernel: "/vmlinuz".into(),
                    command_line: "preempt=full".into(),
                    started_at_ms: 5,
                    ..verdict_store::BootRow::default()
                },
            )
            .unwrap();
        source.create_boot(run, &new(0)).unwrap();
        let mut proven = source.boots(run).unwrap().remove(1);
        proven.status = verdict_model::BootStatus::Complete;
        proven.environment = Some(booted_environment("preempt=full verdict.boot=1"));
        source.update_boot(run, &proven).unwrap();
        let target = backend.open();
        let copied = verdict_store::copy_run(&source, &target, run).unwrap();
        assert_eq!(target.boots(copied.target).unwrap(), source.boots(run).unwrap());
        // The run went on: one more boot, and the first one's row changed.
        source.create_boot(run, &new(1)).unwrap();
        let mut third = source.boots(run).unwrap().remove(2);
        third.environment = Some(booted_environment("preempt=none verdict.boot=2"));
        source.update_boot(run, &third).unwrap();
        let again = verdict_store::copy_run(&source, &target, run).unwrap();
        assert_eq!(again.target, copied.target);
        assert_eq!(target.boots(copied.target).unwrap(), source.boots(run).unwrap());
        assert_eq!(target.boots(copied.target).unwrap().len(), 3);
    }

    /// A store at schema version 11 kept each boot's environment as the
    /// run's annotation `boot_environment.ID` (the JSON below is what the
    /// engine wrote); migration 12, in each dialect, moves each into its
    /// boot's row and leaves the other annotations (and one naming no
    /// boot) alone.
    fn migration_12_moves_the_boot_environments_into_their_rows(backend) {
        let run;
        let environments = [
            booted_environment("preempt=none verdict.boot=aa"),
            booted_environment("preempt=full verdict.boot=bb"),
        ];
        {
            let store = backend.open();
            run = store.create_run(&new_run("boots")).unwrap();
            for slot in 0..3 {
                store
                    .create_boot(
                        run,
                        &verdict_store::NewBoot {
                            slot,
                            attempt: 0,
                            level_key: "preempt=full".into(),
                            first_sequence: slot,
                            kernel: "/vmlinuz".into(),
                            command_line: "preempt=full".into(),
                            started_at_ms: 5,
                        },
                    )
                    .unwrap();
            }
            // Boots 0 and 2 were proven; boot 1 failed; boot 7 is not stored.
            for (id, environment) in [(0, &environments[0]), (2, &environments[1]), (7, &environments[1])] {
                store
                    .put_annotation(
                        run,
                        &format!("boot_environment.{id}"),
                        &serde_json::to_value(environment).unwrap(),
                    )
                    .unwrap();
            }
            store.put_annotation(run, "boot_schedule", &json!(["preempt=full"])).unwrap();
        }
        backend.undo_migration_15();
        undo_migration_14(backend);
        backend.raw_rows("ALTER TABLE boots DROP COLUMN environment");
        undo_migration_13(backend);
        match backend.sqlite_path() {
            Some(_) => backend.raw_rows("PRAGMA user_version = 11"),
            None => backend.raw_rows("UPDATE verdict_schema SET version = 11"),
        };
        let store = backend.open();
        let boots = store.boots(run).unwrap();
        assert_eq!(boots[0].environment.as_ref(), Some(&environments[0]));
        assert_eq!(boots[1].environment, None);
        assert_eq!(boots[2].environment.as_ref(), Some(&environments[1]));
        assert_eq!(
            store.annotations(run).unwrap().keys().collect::<Vec<_>>(),
            ["boot_environment.7", "boot_schedule"]
        );
    }
}

/// What a booted machine's environment capture holds.
fn booted_environment(cmdline: &str) -> Environment {
    Environment {
        kernel_release: Some("6.1.0-57-amd64".into()),
        kernel_version: Some("#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1".into()),
        architecture: Some("x86_64".into()),
        kernel_cmdline: Some(cmdline.into()),
        cpu_model: Some("Intel Xeon Processor (Skylake, IBRS)".into()),
        cpu_flags: Some("fpu sse2 avx512f".into()),
        cpu_count: Some(4),
        cpus_online: Some("0-3".into()),
        smt: Some("on".into()),
        preempt: Some("full".into()),
        clocksource: Some("tsc".into()),
        load_average: Some([0.5, 0.25, 0.125]),
        ..Environment::default()
    }
}
