//! The boots of a run in PostgreSQL (schema version 10; their environments
//! since 12), the same rows as SQLite's (`boots.rs`): one per boot
//! attempt, written before the boot's first sample and updated as the boot
//! is proven, fails or completes. Must not decide anything about boots
//! (the engine does) or hold queries of other tables.

use verdict_model::RunId;

use crate::StoreError;
use crate::postgres::PostgresStore;
use crate::rows::boot_row;
use crate::store::{BootRow, NewBoot};

impl PostgresStore {
    pub(crate) fn create_boot_row(&self, run: RunId, boot: &NewBoot) -> Result<u32, StoreError> {
        self.run_exists(run)?;
        let operation = format!("record a boot of run {run}");
        self.write(&operation, || {
            // The run's row lock orders concurrent boots of one run.
            self.query(
                &operation,
                "SELECT id FROM runs WHERE id = $1 FOR UPDATE",
                &[&run.0],
            )?;
            let rows = self.query(
                &operation,
                "SELECT COALESCE(MAX(id) + 1, 0) FROM boots WHERE run_id = $1",
                &[&run.0],
            )?;
            let id: i64 = rows[0].get(0);
            self.execute(
                &operation,
                "INSERT INTO boots (run_id, id, slot, attempt, level_key, first_sequence, status, \
                    kernel, command_line, started_at_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, 'booting', $7, $8, $9)",
                &[
                    &run.0,
                    &id,
                    &i64::from(boot.slot),
                    &i64::from(boot.attempt),
                    &boot.level_key,
                    &i64::from(boot.first_sequence),
                    &boot.kernel,
                    &boot.command_line,
                    &boot.started_at_ms,
                ],
            )?;
            u32::try_from(id).map_err(|_| self.invalid(operation.clone(), "boot id out of range"))
        })
    }

    pub(crate) fn update_boot_row(&self, run: RunId, row: &BootRow) -> Result<(), StoreError> {
        let operation = format!("update boot {} of run {run}", row.id);
        let environment = row
            .environment
            .as_ref()
            .map(|environment| self.environment_json(&operation, environment))
            .transpose()?;
        let changed = self.execute(
            &operation,
            "UPDATE boots SET status = $3, nonce = $4, boot_id = $5, kernel_release = $6, \
                accelerator = $7, message = $8, console_tail = $9, ready_at_ms = $10, \
                finished_at_ms = $11, environment = $12 \
             WHERE run_id = $1 AND id = $2",
            &[
                &run.0,
                &i64::from(row.id),
                &row.status,
                &row.nonce,
                &row.boot_id,
                &row.kernel_release,
                &row.accelerator,
                &row.message,
                &row.console_tail,
                &row.ready_at_ms,
                &row.finished_at_ms,
                &environment,
            ],
        )?;
        if changed == 0 {
            return Err(self.invalid(operation, "no such boot"));
        }
        Ok(())
    }

    pub(crate) fn boot_rows(&self, run: RunId) -> Result<Vec<BootRow>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the boots of run {run}");
        let rows = self.query(
            &operation,
            "SELECT id, slot, attempt, level_key, first_sequence, status, kernel, \
                command_line, nonce, boot_id, kernel_release, accelerator, message, \
                console_tail, started_at_ms, ready_at_ms, finished_at_ms, environment \
             FROM boots WHERE run_id = $1 ORDER BY id",
            &[&run.0],
        )?;
        rows.iter()
            .map(|row| {
                boot_row(row)
                    .map_err(self.error(&operation))?
                    .map_err(|reason| self.invalid(operation.clone(), reason))
            })
            .collect()
    }
}
