//! The boots of a run in SQLite (schema version 10; their environments
//! since 12): one row per boot attempt, written before the boot's first
//! sample and updated as the boot is proven, fails or completes. Must not
//! decide anything about boots (the engine does) or hold queries of other
//! tables.

use rusqlite::{OptionalExtension, params};
use verdict_model::RunId;

use crate::StoreError;
use crate::rows::boot_row;
use crate::sqlite::SqliteStore;
use crate::store::{BootRow, NewBoot};

impl SqliteStore {
    pub(crate) fn create_boot_row(&self, run: RunId, boot: &NewBoot) -> Result<u32, StoreError> {
        self.run_exists(run)?;
        let operation = format!("record a boot of run {run}");
        let next: Option<i64> = self
            .connection
            .prepare_cached("SELECT MAX(id) FROM boots WHERE run_id = ?1")
            .and_then(|mut statement| statement.query_row([run.0], |row| row.get(0)))
            .optional()
            .map_err(self.sql_error(&operation))?
            .flatten();
        let id = next.map_or(0, |last| last + 1);
        self.connection
            .prepare_cached(
                "INSERT INTO boots (run_id, id, slot, attempt, level_key, first_sequence, status, \
                    kernel, command_line, started_at_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'booting', ?7, ?8, ?9)",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    run.0,
                    id,
                    boot.slot,
                    boot.attempt,
                    boot.level_key,
                    boot.first_sequence,
                    boot.kernel,
                    boot.command_line,
                    boot.started_at_ms
                ])
            })
            .map_err(self.sql_error(&operation))?;
        Ok(id as u32)
    }

    pub(crate) fn update_boot_row(&self, run: RunId, row: &BootRow) -> Result<(), StoreError> {
        let operation = format!("update boot {} of run {run}", row.id);
        let environment = row
            .environment
            .as_ref()
            .map(|environment| self.environment_json(&operation, environment))
            .transpose()?;
        let changed = self
            .connection
            .prepare_cached(
                "UPDATE boots SET status = ?3, nonce = ?4, boot_id = ?5, kernel_release = ?6, \
                    accelerator = ?7, message = ?8, console_tail = ?9, ready_at_ms = ?10, \
                    finished_at_ms = ?11, environment = ?12 \
                 WHERE run_id = ?1 AND id = ?2",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    run.0,
                    row.id,
                    row.status,
                    row.nonce,
                    row.boot_id,
                    row.kernel_release,
                    row.accelerator,
                    row.message,
                    row.console_tail,
                    row.ready_at_ms,
                    row.finished_at_ms,
                    environment
                ])
            })
            .map_err(self.sql_error(&operation))?;
        if changed == 0 {
            return Err(self.corrupt(&operation, "no such boot"));
        }
        Ok(())
    }

    pub(crate) fn boot_rows(&self, run: RunId) -> Result<Vec<BootRow>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the boots of run {run}");
        self.connection
            .prepare_cached(
                "SELECT id, slot, attempt, level_key, first_sequence, status, kernel, \
                    command_line, nonce, boot_id, kernel_release, accelerator, message, \
                    console_tail, started_at_ms, ready_at_ms, finished_at_ms, environment \
                 FROM boots WHERE run_id = ?1 ORDER BY id",
            )
            .and_then(|mut statement| {
                statement
                    .query_map([run.0], |row| boot_row(row))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.sql_error(&operation))?
            .into_iter()
            .map(|row| row.map_err(|reason| self.invalid(operation.clone(), reason)))
            .collect()
    }
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
                kind: "run".into(),
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
            status: "failed".into(),
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
        assert_eq!(boots[1].status, "failed");
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
