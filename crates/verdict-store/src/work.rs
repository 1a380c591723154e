//! Shared work (`verdict run --detach`, `verdict work`): a detached run's
//! blocks, leases on target hosts, and on PostgreSQL the statements that
//! share them (`WorkStore`): claiming the next block with `FOR UPDATE SKIP
//! LOCKED` (a takeover recorded in the same statement), and the fenced
//! sample write — one statement that stores a sample only while its
//! writer still holds the block's claim and the host's lease, renews the
//! lease, stores the sample's rows with the host it ran on, and marks the
//! block done with its last sample. Every claim and write touches the
//! block's row, the lease's row and the sample's own rows: never the run's
//! other samples (a partial index keeps the open blocks, schema 13). What
//! was recorded (`WorkRecord`: blocks, takeovers, hosts) is read and
//! copied in both backends. Claims come in batches (the engine chooses how
//! many: one commit claims them all), so a claim's commit is shared by the
//! samples of several blocks. Must not: decide what to measure or when
//! (verdict-engine does), or read clocks (times are passed in).

use verdict_model::{Cell, RunId, RunStatus, Sample, SampleDetails};

use crate::StoreError;
use crate::database::Database;
use crate::details::ClaimedDetails;
use crate::postgres::PostgresStore;
use crate::queries::{SampleWrite, cell_mismatch, remember_cell};
use crate::sql::{Backend, Param, params, to_json};
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

/// The blocks one claim took, and how many blocks were still pending
/// after it (counted up to `PENDING_COUNTED`: enough to size the next
/// batches, never a count of the whole run).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClaimedBatch {
    pub blocks: Vec<ClaimedBlock>,
    pub pending_after: u32,
}

/// Pending blocks a claim counts at most.
pub const PENDING_COUNTED: u32 = 256;

/// A block just claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedBlock {
    pub block: WorkBlock,
    /// The worker and host that had claimed it before, when it was taken
    /// over (their lease expired); `None` for a pending block or this
    /// worker's own claim resumed.
    pub taken_from: Option<(String, String)>,
    /// The block's samples already stored (a takeover or a resumed claim
    /// continues after them).
    pub stored: Vec<u32>,
}

/// How a fenced write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimedWrite {
    Stored,
    /// The sample was there already, stored under this claim (the commit
    /// of an earlier try whose answer the connection lost).
    AlreadyStored,
}

/// The state of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// The migrations' test reads the full set of spellings from serde's variant
// names, so a state added without a migration fails it.
#[cfg_attr(test, derive(serde::Deserialize), serde(rename_all = "snake_case"))]
pub enum BlockState {
    Pending,
    Claimed,
    Done,
}

impl BlockState {
    /// Every state, in the order the database's check lists them.
    pub const ALL: [BlockState; 3] = [BlockState::Pending, BlockState::Claimed, BlockState::Done];

    pub fn as_str(self) -> &'static str {
        match self {
            BlockState::Pending => "pending",
            BlockState::Claimed => "claimed",
            BlockState::Done => "done",
        }
    }

    pub fn parse(text: &str) -> Option<BlockState> {
        Self::ALL.into_iter().find(|state| state.as_str() == text)
    }
}

/// A block as recorded: its place, its state and who claimed it last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRecord {
    pub block: WorkBlock,
    pub state: BlockState,
    pub worker: Option<String>,
    pub host: Option<String>,
}

/// A block taken over from a worker whose lease on its host expired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Takeover {
    pub block: u32,
    pub taken_at_ms: i64,
    pub from_worker: String,
    pub from_host: String,
    pub to_worker: String,
    pub to_host: String,
    /// The block's last sample stored before the takeover (the taker
    /// continued after it); `None` when none was.
    pub resumed_after: Option<u32>,
}

/// A detached run's shared work as recorded; empty for other runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkRecord {
    pub blocks: Vec<BlockRecord>,
    pub takeovers: Vec<Takeover>,
}

impl WorkRecord {
    /// Every host a block was measured on, sorted (the hosts of the last
    /// claims and those of the takeovers).
    pub fn hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = self
            .blocks
            .iter()
            .filter_map(|block| block.host.clone())
            .chain(
                self.takeovers
                    .iter()
                    .flat_map(|takeover| [takeover.from_host.clone(), takeover.to_host.clone()]),
            )
            .collect();
        hosts.sort();
        hosts.dedup();
        hosts
    }
}

fn narrow(backend: &impl Backend, what: &str, value: i64) -> Result<u32, StoreError> {
    u32::try_from(value).map_err(|_| backend.corrupt(what, format!("{value} out of range")))
}

/// The shared work recorded for `run` (both backends: SQLite has the
/// tables too, empty).
pub(crate) fn record(backend: &impl Backend, run: RunId) -> Result<WorkRecord, StoreError> {
    let operation = format!("read the shared work of run {run}");
    let what = format!("a block of run {run}");
    let blocks = backend
        .rows(
            &operation,
            "SELECT block, first_sequence, slots, state, worker, host FROM work_blocks \
             WHERE run_id = $1 ORDER BY block",
            params![run.0],
            |row| {
                Ok((
                    row.integer(0)?,
                    row.integer(1)?,
                    row.integer(2)?,
                    row.text(3)?,
                    row.optional_text(4)?,
                    row.optional_text(5)?,
                ))
            },
        )?
        .into_iter()
        .map(|(block, first_sequence, slots, state, worker, host)| {
            Ok(BlockRecord {
                block: WorkBlock {
                    block: narrow(backend, &what, block)?,
                    first_sequence: narrow(backend, &what, first_sequence)?,
                    slots: narrow(backend, &what, slots)?,
                },
                state: BlockState::parse(&state)
                    .ok_or_else(|| backend.corrupt(&what, format!("unknown state `{state}`")))?,
                worker,
                host,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let takeovers = backend
        .rows(
            &operation,
            "SELECT block, taken_at_ms, from_worker, from_host, to_worker, to_host, \
                resumed_after \
             FROM work_takeovers WHERE run_id = $1 ORDER BY taken_at_ms, block",
            params![run.0],
            |row| {
                Ok((
                    row.integer(0)?,
                    row.integer(1)?,
                    row.text(2)?,
                    row.text(3)?,
                    row.text(4)?,
                    row.text(5)?,
                    row.optional_integer(6)?,
                ))
            },
        )?
        .into_iter()
        .map(
            |(block, taken_at_ms, from_worker, from_host, to_worker, to_host, resumed_after)| {
                Ok(Takeover {
                    block: narrow(backend, &what, block)?,
                    taken_at_ms,
                    from_worker,
                    from_host,
                    to_worker,
                    to_host,
                    resumed_after: resumed_after
                        .map(|sequence| narrow(backend, &what, sequence))
                        .transpose()?,
                })
            },
        )
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(WorkRecord { blocks, takeovers })
}

/// Stores `work` (another store's record) as run `run`'s, in one
/// transaction (`verdict push` of a detached run).
pub(crate) fn import(
    backend: &impl Backend,
    run: RunId,
    work: &WorkRecord,
) -> Result<(), StoreError> {
    let operation = format!("copy the shared work of run {run}");
    backend.transaction(&operation, || {
        for block in &work.blocks {
            backend.execute(
                &operation,
                "INSERT INTO work_blocks (run_id, block, first_sequence, slots, state, worker, \
                    host) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                params![
                    run.0,
                    block.block.block,
                    block.block.first_sequence,
                    block.block.slots,
                    block.state.as_str(),
                    &block.worker,
                    &block.host,
                ],
            )?;
        }
        for takeover in &work.takeovers {
            backend.execute(
                &operation,
                "INSERT INTO work_takeovers (run_id, block, taken_at_ms, from_worker, \
                    from_host, to_worker, to_host, resumed_after) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                params![
                    run.0,
                    takeover.block,
                    takeover.taken_at_ms,
                    &takeover.from_worker,
                    &takeover.from_host,
                    &takeover.to_worker,
                    &takeover.to_host,
                    takeover.resumed_after.map(i64::from),
                ],
            )?;
        }
        Ok(())
    })
}

/// The store side of shared work (PostgreSQL).
pub trait WorkStore: Store {
    /// Records a detached run's blocks, all pending.
    fn create_work(&self, run: RunId, blocks: &[WorkBlock]) -> Result<(), StoreError>;
    /// Whether `run` was detached (has blocks to share).
    fn is_detached(&self, run: RunId) -> Result<bool, StoreError>;
    /// Takes (or renews) the lease on `host` for `worker` until
    /// `now_ms + lease_ms`, unless another worker holds an unexpired one.
    fn acquire_lease(
        &self,
        host: &str,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<bool, StoreError>;
    /// Extends every lease `worker` holds (the heartbeat); how many.
    fn renew_leases(&self, worker: &str, now_ms: i64, lease_ms: i64) -> Result<u64, StoreError>;
    fn release_lease(&self, host: &str, worker: &str) -> Result<(), StoreError>;
    /// Claims up to `limit` of the run's next blocks (in block order) that
    /// are pending, claimed by a worker whose lease on its host has expired
    /// (taken over: recorded with both workers and hosts), or claimed by
    /// this worker on this host before (resumed), skipping blocks another
    /// transaction is claiming; none when there is none. One statement and
    /// one commit for the batch: the blocks' rows and the leases of the
    /// claimed blocks before them are all it reads.
    fn claim_blocks(
        &self,
        run: RunId,
        worker: &str,
        host: &str,
        now_ms: i64,
        limit: u32,
    ) -> Result<ClaimedBatch, StoreError>;
    /// Gives this worker's claimed blocks of the run that have no sample
    /// yet back (pending), when it stops before measuring them; how many.
    fn unclaim_blocks(&self, run: RunId, worker: &str, host: &str) -> Result<u64, StoreError>;
    /// Stores a sample of a claimed block with the host it ran on and
    /// what it captured besides its metrics (monitors, a profile),
    /// renewing the lease, in one statement; with the block's last
    /// sequence the block is marked done in it too. Refused (`LostClaim`)
    /// when the claim or the lease is no longer the writer's.
    fn append_claimed_sample(
        &self,
        claim: &Claim,
        sample: &Sample,
        cell: &Cell,
        details: &SampleDetails,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<ClaimedWrite, StoreError>;
    fn work_progress(&self, run: RunId) -> Result<WorkProgress, StoreError>;
    /// Marks a run complete once (false when it already was).
    fn complete_run(&self, run: RunId, finished_at_ms: i64) -> Result<bool, StoreError>;
    /// A new connection after the server went away (see
    /// `StoreError::is_connection_lost`); an error while it is still away.
    fn reconnect(&self) -> Result<(), StoreError>;
}

const CLAIM: &str = "WITH next AS ( \
        SELECT w.run_id, w.block, w.first_sequence, w.slots, w.state, w.worker, w.host \
        FROM work_blocks w \
        WHERE w.run_id = $1 AND w.state <> 'done' \
          AND (w.state = 'pending' OR (w.worker = $3 AND w.host = $4) OR NOT EXISTS ( \
                SELECT 1 FROM host_leases l WHERE l.host = w.host AND l.worker = w.worker \
                  AND l.expires_at_ms >= $2)) \
        ORDER BY w.block LIMIT $5 \
        FOR UPDATE OF w SKIP LOCKED \
    ), claimed AS ( \
        UPDATE work_blocks w SET state = 'claimed', worker = $3, host = $4 FROM next \
        WHERE w.run_id = next.run_id AND w.block = next.block \
        RETURNING w.block \
    ), takeover AS ( \
        INSERT INTO work_takeovers (run_id, block, taken_at_ms, from_worker, from_host, \
            to_worker, to_host, resumed_after) \
        SELECT next.run_id, next.block, $2, next.worker, next.host, $3, $4, \
            (SELECT MAX(s.sequence) FROM samples s WHERE s.run_id = next.run_id \
                AND s.sequence >= next.first_sequence \
                AND s.sequence < next.first_sequence + next.slots) \
        FROM next WHERE next.state = 'claimed' AND (next.worker <> $3 OR next.host <> $4) \
    ) \
    SELECT n.block, n.first_sequence, n.slots, n.state, n.worker, n.host, \
        (SELECT COUNT(*) FROM (SELECT 1 FROM work_blocks p \
            WHERE p.run_id = $1 AND p.state = 'pending' LIMIT $6) counted) \
    FROM next n JOIN claimed c ON c.block = n.block ORDER BY n.block";

const UNCLAIM: &str = "UPDATE work_blocks SET state = 'pending', worker = NULL, host = NULL \
    WHERE run_id = $1 AND worker = $2 AND host = $3 AND state = 'claimed' \
      AND NOT EXISTS (SELECT 1 FROM samples s WHERE s.run_id = work_blocks.run_id \
        AND s.sequence >= work_blocks.first_sequence \
        AND s.sequence < work_blocks.first_sequence + work_blocks.slots)";

/// The fenced write, with its fence (see `FENCED_WRITE`, `LAST_FENCED_WRITE`):
/// `$1` run, `$2` block, `$3` worker, `$4` host, `$5` now, `$6` lease
/// length, `$7`..`$22` the sample's row (`SampleWrite::row_parameters`),
/// `$23`/`$24` its failure (NULL without), `$25`/`$26` its notes (NULL
/// without), `$27`/`$28` its metric rows' names and values, `$29` its
/// monitors (JSON, NULL without), `$30`..`$34` its profile (event,
/// samples, weight, note, stacks; NULL without) and `$35`..`$37` the
/// profile's symbols (names, self and inclusive weights). The lease row
/// is renewed only while this worker holds it (its update conflicts with a
/// taker's); the block's row is the fence. A sequence already stored under
/// this claim (an earlier try whose commit's answer was lost) stores
/// nothing and is reported as such. Counts of fence, lease and stored
/// sample.
macro_rules! fenced_write {
    ($fence:literal) => {
        concat!(
            "WITH lease AS ( \
                UPDATE host_leases SET expires_at_ms = CAST($5 AS BIGINT) + CAST($6 AS BIGINT) \
                WHERE host = $4 AND worker = $3 \
                RETURNING 1 \
            ), fence AS (",
            $fence,
            "), sample AS ( \
                INSERT INTO samples (run_id, sequence, cell, block, warmup, failed, \
                    started_at_ms, wall_seconds, user_seconds, sys_seconds, max_rss_kib, \
                    exit_code, signal, timed_out, builtin_metrics, host) \
                SELECT CAST($7 AS BIGINT), CAST($8 AS BIGINT), CAST($9 AS BIGINT), \
                    CAST($10 AS BIGINT), CAST($11 AS BOOLEAN), CAST($12 AS BOOLEAN), \
                    CAST($13 AS BIGINT), CAST($14 AS DOUBLE PRECISION), \
                    CAST($15 AS DOUBLE PRECISION), CAST($16 AS DOUBLE PRECISION), \
                    CAST($17 AS BIGINT), CAST($18 AS BIGINT), CAST($19 AS BIGINT), \
                    CAST($20 AS BOOLEAN), CAST($21 AS BIGINT), CAST($22 AS TEXT) \
                FROM fence \
                ON CONFLICT (run_id, sequence) DO NOTHING \
                RETURNING sequence \
            ), failure AS ( \
                INSERT INTO sample_failures (run_id, sequence, reason, output_tail) \
                SELECT $1, sequence, CAST($23 AS TEXT), CAST($24 AS TEXT) FROM sample \
                WHERE CAST($23 AS TEXT) IS NOT NULL \
            ), notes AS ( \
                INSERT INTO sample_notes (run_id, sequence, leftovers_json, missing_json) \
                SELECT $1, sequence, CAST($25 AS TEXT), CAST($26 AS TEXT) FROM sample \
                WHERE CAST($25 AS TEXT) IS NOT NULL \
            ), metrics AS ( \
                INSERT INTO sample_metrics (run_id, sequence, name, value) \
                SELECT $1, sample.sequence, metric.name, metric.value \
                FROM sample, unnest(CAST($27 AS TEXT[]), CAST($28 AS DOUBLE PRECISION[])) \
                    AS metric(name, value) \
            ), monitors AS ( \
                INSERT INTO sample_monitors (run_id, sequence, counters) \
                SELECT $1, sequence, CAST(CAST($29 AS TEXT) AS JSONB) FROM sample \
                WHERE CAST($29 AS TEXT) IS NOT NULL \
            ), profile AS ( \
                INSERT INTO sample_profiles (run_id, sequence, event, samples, weight, note, \
                    stacks) \
                SELECT $1, sequence, CAST($30 AS TEXT), CAST($31 AS BIGINT), \
                    CAST($32 AS BIGINT), CAST($33 AS TEXT), CAST($34 AS BYTEA) FROM sample \
                WHERE CAST($30 AS TEXT) IS NOT NULL \
                RETURNING sequence \
            ), symbols AS ( \
                INSERT INTO profile_symbols (run_id, sequence, symbol, self_weight, \
                    inclusive_weight) \
                SELECT $1, profile.sequence, symbol.name, symbol.self_weight, \
                    symbol.inclusive_weight \
                FROM profile, unnest(CAST($35 AS TEXT[]), CAST($36 AS BIGINT[]), \
                    CAST($37 AS BIGINT[])) AS symbol(name, self_weight, inclusive_weight) \
            ) \
            SELECT (SELECT COUNT(*) FROM fence), (SELECT COUNT(*) FROM lease), \
                (SELECT COUNT(*) FROM sample)"
        )
    };
}

/// A sample that is not its block's last: the block's row, still claimed
/// by this worker on this host, is locked (a claim of the block waits for,
/// then skips it).
const FENCED_WRITE: &str = fenced_write!(
    "SELECT 1 FROM work_blocks \
     WHERE run_id = $1 AND block = $2 AND state <> 'pending' AND worker = $3 AND host = $4 \
       AND EXISTS (SELECT 1 FROM lease) \
     FOR UPDATE"
);

/// A block's last sample: the block's row, still claimed by this worker on
/// this host, is marked done by the same update that fences the write
/// (one row version, not a lock and then an update).
const LAST_FENCED_WRITE: &str = fenced_write!(
    "UPDATE work_blocks SET state = 'done' \
     WHERE run_id = $1 AND block = $2 AND state <> 'pending' AND worker = $3 AND host = $4 \
       AND EXISTS (SELECT 1 FROM lease) \
     RETURNING 1"
);

impl PostgresStore {
    fn read_only_work(&self) -> StoreError {
        StoreError::PostgresOpen {
            location: self.location().to_string(),
            reason: "internal: work on a read-only store".to_string(),
        }
    }

    /// The cell rows of a claimed sample, the first time this connection
    /// writes one of the cell (several workers may store a run's first
    /// sample of a cell at once: `ON CONFLICT DO NOTHING`, then the stored
    /// levels are checked).
    fn claimed_cell(
        &self,
        run: RunId,
        cell_index: i64,
        cell: &Cell,
        operation: &str,
    ) -> Result<(), StoreError> {
        if let Some(known) = self.known_cells().borrow().get(&(run.0, cell_index)) {
            return if known == cell {
                Ok(())
            } else {
                Err(cell_mismatch(
                    self,
                    operation,
                    cell_index,
                    &to_json(&known.levels),
                    cell,
                ))
            };
        }
        let levels_json = to_json(&cell.levels);
        self.execute(
            operation,
            "INSERT INTO run_cells (run_id, cell, levels_json) VALUES ($1, $2, $3) \
             ON CONFLICT (run_id, cell) DO NOTHING",
            params![run.0, cell_index, &levels_json],
        )?;
        for (factor, level) in &cell.levels {
            self.execute(
                operation,
                "INSERT INTO cell_levels (run_id, cell, factor, level) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (run_id, cell, factor) DO NOTHING",
                params![run.0, cell_index, factor, level],
            )?;
        }
        let stored = self
            .first_row(
                operation,
                "SELECT levels_json FROM run_cells WHERE run_id = $1 AND cell = $2",
                params![run.0, cell_index],
                |row| row.text(0),
            )?
            .unwrap_or_default();
        if stored != levels_json {
            return Err(cell_mismatch(self, operation, cell_index, &stored, cell));
        }
        remember_cell(self, run, cell_index, cell);
        Ok(())
    }
}

impl WorkStore for PostgresStore {
    fn create_work(&self, run: RunId, blocks: &[WorkBlock]) -> Result<(), StoreError> {
        if self.is_read_only() {
            return Err(self.read_only_work());
        }
        let operation = format!("record the blocks of run {run}");
        self.transaction(&operation, || {
            for block in blocks {
                self.execute(
                    &operation,
                    "INSERT INTO work_blocks (run_id, block, first_sequence, slots, state) \
                     VALUES ($1, $2, $3, $4, 'pending')",
                    params![run.0, block.block, block.first_sequence, block.slots],
                )?;
            }
            Ok(())
        })
    }

    fn is_detached(&self, run: RunId) -> Result<bool, StoreError> {
        Ok(self
            .first_row(
                &format!("read the blocks of run {run}"),
                "SELECT 1 FROM work_blocks WHERE run_id = $1 LIMIT 1",
                params![run.0],
                |_| Ok(()),
            )?
            .is_some())
    }

    fn acquire_lease(
        &self,
        host: &str,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<bool, StoreError> {
        Ok(self
            .first_row(
                &format!("take the lease on host `{host}`"),
                "INSERT INTO host_leases (host, worker, expires_at_ms) \
                 VALUES ($1, $2, CAST($3 AS BIGINT) + CAST($4 AS BIGINT)) \
                 ON CONFLICT (host) DO UPDATE SET worker = excluded.worker, \
                    expires_at_ms = excluded.expires_at_ms \
                 WHERE host_leases.worker = excluded.worker \
                    OR host_leases.expires_at_ms < CAST($3 AS BIGINT) \
                 RETURNING host",
                params![host, worker, now_ms, lease_ms],
                |_| Ok(()),
            )?
            .is_some())
    }

    fn renew_leases(&self, worker: &str, now_ms: i64, lease_ms: i64) -> Result<u64, StoreError> {
        self.execute(
            &format!("renew the leases of worker `{worker}`"),
            "UPDATE host_leases SET expires_at_ms = CAST($2 AS BIGINT) + CAST($3 AS BIGINT) \
             WHERE worker = $1",
            params![worker, now_ms, lease_ms],
        )
    }

    fn release_lease(&self, host: &str, worker: &str) -> Result<(), StoreError> {
        self.execute(
            &format!("release the lease on host `{host}`"),
            "DELETE FROM host_leases WHERE host = $1 AND worker = $2",
            params![host, worker],
        )?;
        Ok(())
    }

    fn claim_blocks(
        &self,
        run: RunId,
        worker: &str,
        host: &str,
        now_ms: i64,
        limit: u32,
    ) -> Result<ClaimedBatch, StoreError> {
        let operation = format!("claim blocks of run {run}");
        let what = format!("a block of run {run}");
        let rows = self.rows(
            &operation,
            CLAIM,
            params![run.0, now_ms, worker, host, limit, PENDING_COUNTED],
            |row| {
                Ok((
                    (
                        row.integer(0)?,
                        row.integer(1)?,
                        row.integer(2)?,
                        row.text(3)?,
                        row.optional_text(4)?,
                        row.optional_text(5)?,
                    ),
                    row.integer(6)?,
                ))
            },
        )?;
        // Counted in the claim's snapshot: the blocks it claimed were
        // pending then.
        let pending_then = rows.first().map_or(0, |(_, pending)| *pending);
        let newly_claimed = rows
            .iter()
            .filter(|((_, _, _, state, _, _), _)| state == BlockState::Pending.as_str())
            .count() as i64;
        let pending_after = u32::try_from((pending_then - newly_claimed).max(0)).unwrap_or(0);
        let mut claimed = Vec::with_capacity(rows.len());
        for ((block, first_sequence, slots, state, previous_worker, previous_host), _) in rows {
            let block = WorkBlock {
                block: narrow(self, &what, block)?,
                first_sequence: narrow(self, &what, first_sequence)?,
                slots: narrow(self, &what, slots)?,
            };
            if state == BlockState::Pending.as_str() {
                claimed.push(ClaimedBlock {
                    block,
                    taken_from: None,
                    stored: Vec::new(),
                });
                continue;
            }
            let taken_from = match (previous_worker, previous_host) {
                (Some(previous_worker), Some(previous_host))
                    if previous_worker != worker || previous_host != host =>
                {
                    Some((previous_worker, previous_host))
                }
                _ => None,
            };
            let stored = self
                .rows(
                    &operation,
                    "SELECT sequence FROM samples WHERE run_id = $1 AND sequence >= $2 \
                        AND sequence < $3 ORDER BY sequence",
                    params![
                        run.0,
                        block.first_sequence,
                        i64::from(block.first_sequence) + i64::from(block.slots)
                    ],
                    |row| row.integer(0),
                )?
                .into_iter()
                .map(|sequence| narrow(self, &what, sequence))
                .collect::<Result<Vec<_>, _>>()?;
            claimed.push(ClaimedBlock {
                block,
                taken_from,
                stored,
            });
        }
        Ok(ClaimedBatch {
            blocks: claimed,
            pending_after,
        })
    }

    fn unclaim_blocks(&self, run: RunId, worker: &str, host: &str) -> Result<u64, StoreError> {
        self.execute(
            &format!("give back the blocks of run {run} claimed by `{worker}`"),
            UNCLAIM,
            params![run.0, worker, host],
        )
    }

    fn append_claimed_sample(
        &self,
        claim: &Claim,
        sample: &Sample,
        cell: &Cell,
        details: &SampleDetails,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<ClaimedWrite, StoreError> {
        let run = claim.run;
        let write = SampleWrite::new(self, run, sample)?;
        let captured =
            ClaimedDetails::new(details).map_err(|reason| self.invalid(write.what(), reason))?;
        let operation = format!("store {}", write.what());
        self.claimed_cell(run, write.cell_index, cell, &operation)?;
        let leftovers = (!sample.leftovers.is_empty() || !sample.missing.is_empty())
            .then(|| (to_json(&sample.leftovers), to_json(&sample.missing)));
        let mut parameters: Vec<Param<'_>> = params![
            run.0,
            claim.block,
            &claim.worker,
            &claim.host,
            now_ms,
            lease_ms
        ]
        .to_vec();
        parameters.extend(write.row_parameters(Some(&claim.host)));
        parameters.extend(params![
            sample
                .failure
                .as_ref()
                .map(|failure| failure.reason.as_str()),
            sample
                .failure
                .as_ref()
                .map(|failure| failure.output_tail.as_str()),
            leftovers.as_ref().map(|(leftovers, _)| leftovers.as_str()),
            leftovers.as_ref().map(|(_, missing)| missing.as_str()),
            write.metric_names.as_slice(),
            write.metric_values.as_slice(),
        ]);
        parameters.extend(captured.parameters());
        let statement = if sample.sequence == claim.last_sequence {
            LAST_FENCED_WRITE
        } else {
            FENCED_WRITE
        };
        let (fence, lease, stored) = self
            .first_row(&operation, statement, &parameters, |row| {
                Ok((row.integer(0)?, row.integer(1)?, row.integer(2)?))
            })?
            .unwrap_or((0, 0, 0));
        let lost = |reason: &str| StoreError::LostClaim {
            location: self.location().to_string(),
            run,
            block: claim.block,
            reason: reason.to_string(),
        };
        match (fence, lease, stored) {
            (_, 0, _) => Err(lost("the lease on the host expired and was taken")),
            (0, _, _) => Err(lost("another worker took the block over")),
            (_, _, 0) => Ok(ClaimedWrite::AlreadyStored),
            _ => Ok(ClaimedWrite::Stored),
        }
    }

    fn work_progress(&self, run: RunId) -> Result<WorkProgress, StoreError> {
        let mut progress = WorkProgress::default();
        for (state, count) in self.rows(
            &format!("read the work of run {run}"),
            "SELECT state, COUNT(*) FROM work_blocks WHERE run_id = $1 GROUP BY state",
            params![run.0],
            |row| Ok((row.text(0)?, row.integer(1)?)),
        )? {
            let count = u64::try_from(count).unwrap_or(0);
            match BlockState::parse(&state) {
                Some(BlockState::Pending) => progress.pending = count,
                Some(BlockState::Claimed) => progress.claimed = count,
                Some(BlockState::Done) | None => progress.done = count,
            }
        }
        Ok(progress)
    }

    fn complete_run(&self, run: RunId, finished_at_ms: i64) -> Result<bool, StoreError> {
        Ok(self.execute(
            &format!("complete run {run}"),
            "UPDATE runs SET status = $2, finished_at_ms = $3 WHERE id = $1 AND status <> $2",
            params![run.0, RunStatus::Complete.as_str(), finished_at_ms],
        )? == 1)
    }

    fn reconnect(&self) -> Result<(), StoreError> {
        PostgresStore::reconnect(self)
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

    /// Replaces the connection of a PostgreSQL store (see
    /// `PostgresStore::reconnect`); nothing to do for SQLite.
    pub fn reconnect(&self) -> Result<(), StoreError> {
        match self {
            Database::Postgres { store, .. } => store.reconnect(),
            Database::Sqlite(_) => Ok(()),
        }
    }
}
