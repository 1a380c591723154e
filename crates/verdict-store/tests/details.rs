//! What iterations capture besides their metrics (schema 14), on both
//! backends: monitors and profiles written with their sample in one
//! transaction, read back exactly (symbols with control characters and
//! bytes that are not UTF-8 included), refused whole when a value would not
//! read back, counted for `verdict report`'s pointer, copied by
//! `verdict push`/`pull`, written by shared work's fenced write, and a
//! store of version 12 or 13 migrated with its samples. Must not depend on
//! another test's database.

mod support;

use std::collections::BTreeMap;

use verdict_model::profile::{Stack, SymbolWeight};
use verdict_model::{Cell, RunId};
use verdict_model::{ProfileRecord, SampleDetails};
use verdict_store::{
    Claim, ClaimedWrite, Database, DetailCounts, Location, PostgresStore, Store, StoreError,
    WorkBlock, WorkStore,
};
use verdict_testkit::postgres::PostgresServer;

use support::rows::{cell, new_run, sample};

fn details(sequence: u32) -> SampleDetails {
    let mut monitors = BTreeMap::new();
    monitors.insert("cpu.user".to_string(), 0.12 + f64::from(sequence));
    monitors.insert("context_switches".to_string(), 0.0);
    monitors.insert("interrupts.36:virtio1-req.0".to_string(), 17.0);
    let hostile = "evil;\u{1b}[31m\u{7}|<b>&\\xff".to_string();
    SampleDetails {
        monitors,
        profile: (sequence % 2 == 1).then(|| ProfileRecord {
            event: "cpu-clock".to_string(),
            samples: 3,
            weight: 3_003_003,
            note: None,
            symbols: vec![
                SymbolWeight {
                    symbol: hostile.clone(),
                    self_weight: 1_001_001,
                    inclusive_weight: 1_001_001,
                },
                SymbolWeight {
                    symbol: "main".to_string(),
                    self_weight: 2_002_002,
                    inclusive_weight: 3_003_003,
                },
            ],
            stacks: vec![
                Stack {
                    comm: "planted".to_string(),
                    frames: vec!["main".to_string()],
                    weight: 2_002_002,
                },
                Stack {
                    comm: "planted".to_string(),
                    frames: vec!["main".to_string(), hostile],
                    weight: 1_001_001,
                },
            ],
        }),
    }
}

on_both_backends! {
    fn details_round_trip_with_their_samples(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("explain")).unwrap();
        let cells = [cell(&[("level", "a")]), cell(&[("level", "b")])];
        let mut expected = BTreeMap::new();
        for sequence in 0..4 {
            let written = sample(sequence, (sequence % 2) as usize, 0.5);
            let captured = details(sequence);
            store
                .append_sample_details(run, &written, &cells[written.cell], &captured)
                .unwrap();
            expected.insert(sequence, captured);
        }
        // A sample without details, and one whose details come later (a
        // copied run).
        store.append_sample(run, &sample(4, 0, 0.5), &cells[0]).unwrap();
        store.append_sample(run, &sample(5, 1, 0.5), &cells[1]).unwrap();
        store.append_details(run, 5, &details(5)).unwrap();
        expected.insert(5, details(5));
        let store = backend.open();
        assert_eq!(store.sample_details(run).unwrap(), expected);
        assert_eq!(store.samples(run).unwrap().len(), 6);
        assert_eq!(
            store.detail_counts(run).unwrap(),
            DetailCounts {
                monitored: 5,
                profiled: 3
            }
        );
        let other = store.create_run(&new_run("plain")).unwrap();
        assert!(!store.detail_counts(other).unwrap().any());
        assert!(store.sample_details(other).unwrap().is_empty());
    }

    fn a_sample_and_its_details_are_stored_together_or_not_at_all(backend) {
        let store = backend.open();
        let run = store.create_run(&new_run("explain")).unwrap();
        let level = cell(&[("level", "a")]);
        let mut broken = details(1);
        broken.monitors.insert("cpu.system".to_string(), f64::NAN);
        let error = store
            .append_sample_details(run, &sample(0, 0, 0.5), &level, &broken)
            .unwrap_err();
        assert!(
            matches!(&error, StoreError::InvalidValue { reason, .. } if reason.contains("monitor `cpu.system` is NaN")),
            "{error}"
        );
        assert!(store.samples(run).unwrap().is_empty(), "the sample went with its details");
        store
            .append_sample_details(run, &sample(0, 0, 0.5), &level, &details(1))
            .unwrap();
        // A duplicate sample leaves the first one's details alone.
        let error = store
            .append_sample_details(run, &sample(0, 0, 0.75), &level, &details(3))
            .unwrap_err();
        assert!(matches!(error, StoreError::DuplicateSample { .. }), "{error}");
        assert_eq!(store.sample_details(run).unwrap()[&0], details(1));
        // Details of a sample that is not stored are refused.
        assert!(store.append_details(run, 9, &details(9)).is_err());
    }

    fn copying_a_run_copies_what_its_samples_captured(backend) {
        let directory = tempfile::tempdir().unwrap();
        let source = Database::open(&Location::Sqlite(directory.path().join("source.db"))).unwrap();
        let run = source.create_run(&new_run("explain")).unwrap();
        let level = cell(&[("level", "a")]);
        for sequence in 0..3 {
            source
                .append_sample_details(run, &sample(sequence, 0, 0.5), &level, &details(sequence))
                .unwrap();
        }
        let target = backend.open();
        let copied = verdict_store::copy_run(&source, &target, run).unwrap();
        assert_eq!(
            target.sample_details(copied.target).unwrap(),
            source.sample_details(run).unwrap()
        );
        // The run went on; copying again adds what is new, once.
        source
            .append_sample_details(run, &sample(3, 0, 0.5), &level, &details(3))
            .unwrap();
        let again = verdict_store::copy_run(&source, &target, run).unwrap();
        assert_eq!(again.target, copied.target);
        assert_eq!(
            target.sample_details(copied.target).unwrap(),
            source.sample_details(run).unwrap()
        );
        // And back out of it (`verdict pull` from this backend).
        let back = Database::open(&Location::Sqlite(directory.path().join("back.db"))).unwrap();
        let pulled = verdict_store::copy_run(&target, &back, copied.target).unwrap();
        assert_eq!(
            back.sample_details(pulled.target).unwrap(),
            source.sample_details(run).unwrap()
        );
    }
}

/// Takes the store back from version 14 to `version` (13: without the
/// detail tables; 12: without migration 13's takeovers, open-blocks index
/// and sample hosts as well), as a store that version wrote.
fn back_to(backend: &support::Backend, version: i64) {
    backend.undo_migration_15();
    for table in ["profile_symbols", "sample_profiles", "sample_monitors"] {
        backend.raw_rows(&format!("DROP TABLE {table}"));
    }
    if version == 12 {
        backend.raw_rows("DROP TABLE work_takeovers");
        backend.raw_rows("DROP INDEX work_blocks_open");
        backend.raw_rows("ALTER TABLE samples DROP COLUMN host");
    }
    match backend.sqlite_path() {
        Some(_) => backend.raw_rows(&format!("PRAGMA user_version = {version}")),
        None => backend.raw_rows(&format!("UPDATE verdict_schema SET version = {version}")),
    };
}

/// A store of an older version with a run of three samples, migrated by
/// opening it: the samples read back, the run has no details, and its
/// samples can be given some (a copied run) and new samples store theirs.
fn migrates_from(backend: &support::Backend, version: i64) {
    let run;
    let written: Vec<_> = (0..3).map(|sequence| sample(sequence, 0, 0.5)).collect();
    let level = cell(&[("level", "a")]);
    {
        let store = backend.open();
        run = store.create_run(&new_run("old")).unwrap();
        for each in &written {
            store.append_sample(run, each, &level).unwrap();
        }
    }
    // A run of a host group: migration 15 places it from its annotation.
    backend
        .open()
        .put_annotation(run, "target", &serde_json::json!({"host": "h0"}))
        .unwrap();
    back_to(backend, version);
    let version_now = || match backend.sqlite_path() {
        Some(_) => backend.raw_rows("PRAGMA user_version"),
        None => backend.raw_rows("SELECT version FROM verdict_schema"),
    };
    assert_eq!(version_now(), [version.to_string()]);
    let store = backend.open();
    assert_eq!(version_now(), [Database::schema_version().to_string()]);
    assert_eq!(Database::schema_version(), 15);
    assert_eq!(store.samples(run).unwrap(), written);
    assert_eq!(
        store.run(run).unwrap().placement,
        verdict_model::Placement::Hosts
    );
    assert!(store.sample_details(run).unwrap().is_empty());
    assert!(!store.detail_counts(run).unwrap().any());
    store.append_details(run, 1, &details(1)).unwrap();
    store
        .append_sample_details(run, &sample(3, 0, 0.5), &level, &details(3))
        .unwrap();
    assert_eq!(
        store.sample_details(run).unwrap(),
        BTreeMap::from([(1, details(1)), (3, details(3))])
    );
}

on_both_backends! {
    fn a_store_of_version_13_migrates_with_its_samples(backend) {
        migrates_from(backend, 13);
    }

    fn a_store_of_version_12_migrates_with_its_samples(backend) {
        migrates_from(backend, 12);
    }
}

/// Shared work's fenced write stores a sample's monitors and profile in
/// its one statement; a repeated write (an answer lost) stores them once;
/// a write refused by the fence stores neither the sample nor its details.
#[test]
fn a_claimed_sample_is_stored_with_its_details() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = server.create_database("lab");
    let store = PostgresStore::open(&url).unwrap();
    let run: RunId = store.create_run(&new_run("shared")).unwrap();
    let blocks = [WorkBlock {
        block: 0,
        first_sequence: 0,
        slots: 2,
    }];
    store.create_work(run, &blocks).unwrap();
    let level: Cell = cell(&[("level", "a")]);
    let (now, lease_ms) = (1_764_500_000_000, 10_000);
    assert!(
        store
            .acquire_lease("host-a", "worker-a", now, lease_ms)
            .unwrap()
    );
    let claimed = store
        .claim_blocks(run, "worker-a", "host-a", now, 1)
        .unwrap();
    assert_eq!(claimed.blocks.len(), 1);
    let claim = Claim {
        run,
        block: 0,
        worker: "worker-a".to_string(),
        host: "host-a".to_string(),
        last_sequence: 1,
    };
    for sequence in 0..2 {
        for expected in [ClaimedWrite::Stored, ClaimedWrite::AlreadyStored] {
            let written = store
                .append_claimed_sample(
                    &claim,
                    &sample(sequence, 0, 0.5),
                    &level,
                    &details(sequence),
                    now,
                    lease_ms,
                )
                .unwrap();
            assert_eq!(written, expected);
        }
    }
    assert_eq!(
        store.sample_details(run).unwrap(),
        BTreeMap::from([(0, details(0)), (1, details(1))])
    );
    // Another worker's claim: refused, nothing stored.
    let stolen = Claim {
        worker: "worker-b".to_string(),
        ..claim
    };
    let error = store
        .append_claimed_sample(
            &stolen,
            &sample(5, 0, 0.5),
            &level,
            &details(5),
            now,
            lease_ms,
        )
        .unwrap_err();
    assert!(matches!(error, StoreError::LostClaim { .. }), "{error}");
    assert_eq!(
        store.detail_counts(run).unwrap(),
        DetailCounts {
            monitored: 2,
            profiled: 1
        }
    );
}
