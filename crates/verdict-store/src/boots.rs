//! The boots of a run (schema version 10; their environments since 12),
//! in both backends: one row per boot attempt, written before the boot's
//! first sample and updated as the boot is proven, fails or completes.
//! Must not decide anything about boots (the engine does) or hold queries
//! of other tables.

use verdict_model::{BootStatus, RunId};

use crate::StoreError;
use crate::rows::{BOOT_COLUMNS, boot_row};
use crate::sql::{Backend, params};
use crate::store::{BootRow, NewBoot};

/// Records a boot with status `booting`; its id (the run's next).
pub(crate) fn create(
    backend: &impl Backend,
    run: RunId,
    boot: &NewBoot,
) -> Result<u32, StoreError> {
    backend.run_exists(run)?;
    let operation = format!("record a boot of run {run}");
    backend.transaction(&operation, || {
        // The run's row lock orders concurrent boots of one run
        // (PostgreSQL; SQLite's writer holds the whole file).
        backend.first_row(
            &operation,
            &format!(
                "SELECT id FROM runs WHERE id = $1{}",
                backend.dialect().lock_rows()
            ),
            params![run.0],
            |_| Ok(()),
        )?;
        let id = backend
            .first_row(
                &operation,
                "SELECT COALESCE(MAX(id) + 1, 0) FROM boots WHERE run_id = $1",
                params![run.0],
                |row| row.integer(0),
            )?
            .unwrap_or(0);
        backend.execute(
            &operation,
            "INSERT INTO boots (run_id, id, slot, attempt, level_key, first_sequence, status, \
                kernel, command_line, started_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            params![
                run.0,
                id,
                boot.slot,
                boot.attempt,
                &boot.level_key,
                boot.first_sequence,
                BootStatus::Booting,
                &boot.kernel,
                &boot.command_line,
                boot.started_at_ms,
            ],
        )?;
        u32::try_from(id).map_err(|_| backend.invalid(operation.clone(), "boot id out of range"))
    })
}

/// Replaces what is known about boot `row.id` of `run`.
pub(crate) fn update(backend: &impl Backend, run: RunId, row: &BootRow) -> Result<(), StoreError> {
    let operation = format!("update boot {} of run {run}", row.id);
    let environment = row
        .environment
        .as_ref()
        .map(|environment| backend.environment_json(&operation, environment))
        .transpose()?;
    let changed = backend.execute(
        &operation,
        "UPDATE boots SET status = $3, nonce = $4, boot_id = $5, kernel_release = $6, \
            accelerator = $7, message = $8, console_tail = $9, ready_at_ms = $10, \
            finished_at_ms = $11, environment = $12 \
         WHERE run_id = $1 AND id = $2",
        params![
            run.0,
            row.id,
            row.status,
            &row.nonce,
            &row.boot_id,
            &row.kernel_release,
            &row.accelerator,
            &row.message,
            &row.console_tail,
            row.ready_at_ms,
            row.finished_at_ms,
            environment.as_deref(),
        ],
    )?;
    if changed == 0 {
        return Err(backend.invalid(operation, "no such boot"));
    }
    Ok(())
}

/// Every boot of the run, by id.
pub(crate) fn rows(backend: &impl Backend, run: RunId) -> Result<Vec<BootRow>, StoreError> {
    backend.run_exists(run)?;
    let operation = format!("read the boots of run {run}");
    backend
        .rows(
            &operation,
            &format!("SELECT {BOOT_COLUMNS} FROM boots WHERE run_id = $1 ORDER BY id"),
            params![run.0],
            boot_row,
        )?
        .into_iter()
        .map(|row| row.map_err(|reason| backend.invalid(operation.clone(), reason)))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::store::{BootRow, NewBoot, Store};
    use crate::{NewRun, SqliteStore};
    use verdict_model::{Cell, Environment, RunId, Sample};

    fn sample(sequence: u32) -> Sample {
        Sample {
            cell: 0,
            block: 0,
            sequence,
            warmup: false,
            started_at_ms: 1,
            wall_seconds: 1.0,
            user_seconds: 0.0,
            sys_seconds: 0.0,
            max_rss_kib: 0,
            exit_code: Some(0),
            signal: None,
            timed_out: false,
            metrics: Default::default(),
            failure: None,
            missing: Default::default(),
            leftovers: Vec::new(),
        }
    }

    #[test]
    fn boots_are_stored_updated_and_own_the_samples_after_them() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("v.db");
        let store = SqliteStore::open(&path).unwrap();
        let run = store
            .create_run(&NewRun {
                name: "b".into(),
                kind: verdict_model::RunKind::Run,
                placement: verdict_model::Placement::Vm,
                experiment_text: String::new(),
                experiment_sha256: String::new(),
                experiment_json: "{}".into(),
                tool_version: "t".into(),
                seed: 1,
                host: "h".into(),
                planned: 4,
                started_at_ms: 0,
                environment_start: Environment::default(),
                command_line: Vec::new(),
                bisect: None,
            })
            .unwrap();
        let new = |slot, attempt, first_sequence| NewBoot {
            slot,
            attempt,
            level_key: "preempt=full".into(),
            first_sequence,
            kernel: "/vmlinuz".into(),
            command_line: "preempt=full".into(),
            started_at_ms: 5,
        };
        let cell = Cell { levels: Vec::new() };
        // Boot 0 proven with two samples; boot 1 failed; boot 2 (the retry
        // of the same slot) proven with one sample.
        assert_eq!(store.create_boot(run, &new(0, 0, 0)).unwrap(), 0);
        store.append_sample(run, &sample(0), &cell).unwrap();
        store.append_sample(run, &sample(1), &cell).unwrap();
        assert_eq!(store.create_boot(run, &new(1, 0, 2)).unwrap(), 1);
        let failed = BootRow {
            id: 1,
            status: verdict_model::BootStatus::Failed,
            message: Some("no init".into()),
            console_tail: Some("Kernel panic".into()),
            finished_at_ms: Some(9),
            ..BootRow::default()
        };
        store.update_boot(run, &failed).unwrap();
        assert_eq!(store.create_boot(run, &new(1, 1, 2)).unwrap(), 2);
        store.append_sample(run, &sample(2), &cell).unwrap();
        let boots = store.boots(run).unwrap();
        assert_eq!(boots.len(), 3);
        assert_eq!(boots[1].status, verdict_model::BootStatus::Failed);
        assert_eq!(boots[1].console_tail.as_deref(), Some("Kernel panic"));
        assert_eq!(boots[2].attempt, 1);
        let owners: Vec<_> = (0..3)
            .map(|sequence| BootRow::of_sample(&boots, sequence))
            .collect();
        assert_eq!(owners, [Some(0), Some(0), Some(2)]);
        // The view says the same.
        let connection = rusqlite::Connection::open(&path).unwrap();
        let from_view: Vec<i64> = connection
            .prepare("SELECT boot FROM sample_boots WHERE run_id = ?1 ORDER BY sequence")
            .unwrap()
            .query_map([run.0], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(from_view, [0, 0, 2]);
        assert!(
            store
                .update_boot(
                    RunId(run.0),
                    &BootRow {
                        id: 7,
                        ..BootRow::default()
                    }
                )
                .is_err()
        );
    }
}
