//! The SQL of shared work (`verdict run --detach`, `verdict work`) on
//! PostgreSQL: a detached run's blocks, leases on target hosts, claiming
//! the next block with `FOR UPDATE SKIP LOCKED`, and fenced sample writes
//! (a sample is stored only while its writer still holds the block's claim
//! and the host's lease, in the transaction that renews the lease; the
//! block's last sample and its completion commit together). Must not:
//! decide what to measure or when (verdict-engine does), or read clocks
//! (times are passed in).

use verdict_model::{Cell, RunId, RunStatus, Sample};

use crate::StoreError;
use crate::builtin;
use crate::database::Database;
use crate::postgres::PostgresStore;
use crate::store::Store;

/// One block of a detached run's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkBlock {
    pub block: u32,
    pub first_sequence: u32,
    pub slots: u32,
}

/// How many blocks of a run are in each state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkProgress {
    pub pending: u64,
    pub claimed: u64,
    pub done: u64,
}

/// Who is writing: a worker measuring a claimed block on a leased host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub run: RunId,
    pub block: u32,
    pub worker: String,
    pub host: String,
    /// The block's last sequence: storing it completes the block.
    pub last_sequence: u32,
}

/// The store side of shared work.
pub trait WorkStore: Store {
    /// Records a detached run's blocks, all pending.
    fn create_work(&self, run: RunId, blocks: &[WorkBlock]) -> Result<(), StoreError>;
    /// Takes (or renews) the lease on `host` for `worker` until
    /// `now_ms + lease_ms`, unless another worker holds an unexpired one.
    fn acquire_lease(
        &self,
        host: &str,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<bool, StoreError>;
    /// Extends `worker`'s lease on `host`; false when it is no longer its.
    fn renew_lease(
        &self,
        host: &str,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<bool, StoreError>;
    fn release_lease(&self, host: &str, worker: &str) -> Result<(), StoreError>;
    /// Claims the run's next block that is pending, or claimed by a worker
    /// whose lease on its host has expired (taken over), skipping blocks
    /// another transaction is claiming; `None` when there is none.
    fn claim_block(
        &self,
        run: RunId,
        worker: &str,
        host: &str,
        now_ms: i64,
    ) -> Result<Option<WorkBlock>, StoreError>;
    /// Stores a sample of a claimed block, renewing the lease, in one
    /// transaction; with the block's last sequence, the block is marked
    /// done in the same transaction. Refused (`LostClaim`) when the claim
    /// or the lease is no longer the writer's.
    fn append_claimed_sample(
        &self,
        claim: &Claim,
        sample: &Sample,
        cell: &Cell,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<(), StoreError>;
    fn work_progress(&self, run: RunId) -> Result<WorkProgress, StoreError>;
    /// Marks a run complete once (false when it already was).
    fn complete_run(&self, run: RunId, finished_at_ms: i64) -> Result<bool, StoreError>;
}

impl PostgresStore {
    fn not_shared(&self) -> StoreError {
        StoreError::PostgresOpen {
            location: self.location().to_string(),
            reason: "internal: work on a read-only store".to_string(),
        }
    }
}

impl WorkStore for PostgresStore {
    fn create_work(&self, run: RunId, blocks: &[WorkBlock]) -> Result<(), StoreError> {
        if self.is_read_only() {
            return Err(self.not_shared());
        }
        let operation = format!("record the blocks of run {run}");
        self.write(&operation, || {
            for block in blocks {
                self.execute(
                    &operation,
                    "INSERT INTO work_blocks (run_id, block, first_sequence, slots, state) \
                     VALUES ($1, $2, $3, $4, 'pending')",
                    &[
                        &run.0,
                        &i64::from(block.block),
                        &i64::from(block.first_sequence),
                        &i64::from(block.slots),
                    ],
                )?;
            }
            Ok(())
        })
    }

    fn acquire_lease(
        &self,
        host: &str,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<bool, StoreError> {
        let rows = self.query(
            &format!("take the lease on host `{host}`"),
            "INSERT INTO host_leases (host, worker, expires_at_ms) VALUES ($1, $2, $3::BIGINT + $4::BIGINT) \
             ON CONFLICT (host) DO UPDATE SET worker = excluded.worker, \
                expires_at_ms = excluded.expires_at_ms \
             WHERE host_leases.worker = excluded.worker OR host_leases.expires_at_ms < $3::BIGINT \
             RETURNING host",
            &[&host, &worker, &now_ms, &lease_ms],
        )?;
        Ok(!rows.is_empty())
    }

    fn renew_lease(
        &self,
        host: &str,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<bool, StoreError> {
        Ok(self.execute(
            &format!("renew the lease on host `{host}`"),
            "UPDATE host_leases SET expires_at_ms = $3::BIGINT + $4::BIGINT WHERE host = $1 AND worker = $2",
            &[&host, &worker, &now_ms, &lease_ms],
        )? == 1)
    }

    fn release_lease(&self, host: &str, worker: &str) -> Result<(), StoreError> {
        self.execute(
            &format!("release the lease on host `{host}`"),
            "DELETE FROM host_leases WHERE host = $1 AND worker = $2",
            &[&host, &worker],
        )?;
        Ok(())
    }

    fn claim_block(
        &self,
        run: RunId,
        worker: &str,
        host: &str,
        now_ms: i64,
    ) -> Result<Option<WorkBlock>, StoreError> {
        let operation = format!("claim a block of run {run}");
        self.write(&operation, || {
            let rows = self.query(
                &operation,
                "SELECT w.block, w.first_sequence, w.slots FROM work_blocks w \
                 WHERE w.run_id = $1 AND (w.state = 'pending' OR (w.state = 'claimed' \
                    AND NOT EXISTS (SELECT 1 FROM host_leases l WHERE l.host = w.host \
                        AND l.worker = w.worker AND l.expires_at_ms >= $2))) \
                 ORDER BY w.block LIMIT 1 FOR UPDATE OF w SKIP LOCKED",
                &[&run.0, &now_ms],
            )?;
            let Some(row) = rows.first() else {
                return Ok(None);
            };
            let block: i64 = row.get(0);
            let first_sequence: i64 = row.get(1);
            let slots: i64 = row.get(2);
            self.execute(
                &operation,
                "UPDATE work_blocks SET state = 'claimed', worker = $3, host = $4 \
                 WHERE run_id = $1 AND block = $2",
                &[&run.0, &block, &worker, &host],
            )?;
            let narrow = |value: i64| {
                u32::try_from(value)
                    .map_err(|_| self.corrupt(&format!("block {block} of run {run}"), value))
            };
            Ok(Some(WorkBlock {
                block: narrow(block)?,
                first_sequence: narrow(first_sequence)?,
                slots: narrow(slots)?,
            }))
        })
    }

    fn append_claimed_sample(
        &self,
        claim: &Claim,
        sample: &Sample,
        cell: &Cell,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<(), StoreError> {
        let run = claim.run;
        let operation = format!("store sample {} of run {run}", sample.sequence);
        let lost = |reason: &str| StoreError::LostClaim {
            location: self.location().to_string(),
            run,
            block: claim.block,
            reason: reason.to_string(),
        };
        let max_rss_kib = i64::try_from(sample.max_rss_kib).unwrap_or(i64::MAX);
        let cell_index = i64::try_from(sample.cell).unwrap_or(i64::MAX);
        let builtin_metrics = builtin::flags(sample);
        self.write(&operation, || {
            let held = self.query(
                &operation,
                "SELECT 1 FROM work_blocks WHERE run_id = $1 AND block = $2 \
                    AND state = 'claimed' AND worker = $3 AND host = $4 FOR UPDATE",
                &[&run.0, &i64::from(claim.block), &claim.worker, &claim.host],
            )?;
            if held.is_empty() {
                return Err(lost("another worker took the block over"));
            }
            if self.execute(
                &operation,
                "UPDATE host_leases SET expires_at_ms = $3::BIGINT + $4::BIGINT WHERE host = $1 AND worker = $2",
                &[&claim.host, &claim.worker, &now_ms, &lease_ms],
            )? != 1
            {
                return Err(lost("the lease on the host expired and was taken"));
            }
            self.store_claimed_cell(run, cell_index, cell, &operation)?;
            self.insert_sample_rows(
                run,
                sample,
                cell_index,
                max_rss_kib,
                builtin_metrics,
                &operation,
            )?;
            if sample.sequence == claim.last_sequence {
                self.execute(
                    &operation,
                    "UPDATE work_blocks SET state = 'done' WHERE run_id = $1 AND block = $2",
                    &[&run.0, &i64::from(claim.block)],
                )?;
            }
            Ok(())
        })
    }

    fn work_progress(&self, run: RunId) -> Result<WorkProgress, StoreError> {
        let mut progress = WorkProgress::default();
        for row in self.query(
            &format!("read the work of run {run}"),
            "SELECT state, COUNT(*) FROM work_blocks WHERE run_id = $1 GROUP BY state",
            &[&run.0],
        )? {
            let state: String = row.get(0);
            let count: i64 = row.get(1);
            let count = u64::try_from(count).unwrap_or(0);
            match state.as_str() {
                "pending" => progress.pending = count,
                "claimed" => progress.claimed = count,
                _ => progress.done = count,
            }
        }
        Ok(progress)
    }

    fn complete_run(&self, run: RunId, finished_at_ms: i64) -> Result<bool, StoreError> {
        Ok(self.execute(
            &format!("complete run {run}"),
            "UPDATE runs SET status = $2, finished_at_ms = $3 WHERE id = $1 AND status <> $2",
            &[&run.0, &RunStatus::Complete.as_str(), &finished_at_ms],
        )? == 1)
    }
}

impl PostgresStore {
    /// The cell rows of a claimed sample, inside the caller's transaction
    /// (several workers may store a run's first sample of a cell at once:
    /// `ON CONFLICT DO NOTHING`, then the stored levels are checked).
    fn store_claimed_cell(
        &self,
        run: RunId,
        cell_index: i64,
        cell: &Cell,
        operation: &str,
    ) -> Result<(), StoreError> {
        let levels_json = crate::sqlite::to_json(&cell.levels);
        self.execute(
            operation,
            "INSERT INTO run_cells (run_id, cell, levels_json) VALUES ($1, $2, $3) \
             ON CONFLICT (run_id, cell) DO NOTHING",
            &[&run.0, &cell_index, &levels_json],
        )?;
        for (factor, level) in &cell.levels {
            self.execute(
                operation,
                "INSERT INTO cell_levels (run_id, cell, factor, level) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (run_id, cell, factor) DO NOTHING",
                &[&run.0, &cell_index, factor, level],
            )?;
        }
        let stored = self.query(
            operation,
            "SELECT levels_json FROM run_cells WHERE run_id = $1 AND cell = $2",
            &[&run.0, &cell_index],
        )?;
        let stored: String = stored[0].get(0);
        if stored != levels_json {
            return Err(StoreError::InvalidValue {
                path: self.location().into(),
                what: operation.to_string(),
                reason: format!(
                    "cell {cell_index} is stored with levels {stored}, not {levels_json}"
                ),
            });
        }
        Ok(())
    }
}

impl Database {
    /// The store as a `WorkStore`: shared work needs PostgreSQL.
    pub fn work_store(&self) -> Result<&dyn WorkStore, StoreError> {
        match self {
            Database::Postgres { store, .. } => Ok(store.as_ref()),
            Database::Sqlite(store) => Err(StoreError::NeedsPostgres {
                path: store.path().to_path_buf(),
            }),
        }
    }
}
