//! A run's adaptive state (schema version 11): the procedure it stops with
//! and every comparison's state at its last look, one `adaptive_runs` row
//! per run, in both backends with the same SQL and one decoding. Runs
//! stored before version 11 kept them as the `procedure` and `decisions`
//! annotations; migration 11 moves those rows here. Must not decide
//! anything about stopping (the engine does).

use rusqlite::{OptionalExtension, params};
use verdict_model::{AdaptiveRecord, ComparisonStatus, RunId};

use crate::StoreError;
use crate::postgres::PostgresStore;
use crate::sqlite::SqliteStore;

/// Both dialects: `$N` is a numbered parameter in SQLite too.
pub(crate) const PUT_PROCEDURE: &str = "INSERT INTO adaptive_runs (run_id, design) VALUES ($1, $2) \
     ON CONFLICT (run_id) DO UPDATE SET design = excluded.design";
pub(crate) const PUT_DECISIONS: &str = "INSERT INTO adaptive_runs (run_id, decisions_json) VALUES ($1, $2) \
     ON CONFLICT (run_id) DO UPDATE SET decisions_json = excluded.decisions_json";
const READ: &str = "SELECT design, decisions_json FROM adaptive_runs WHERE run_id = $1";

/// The `Store` methods of the adaptive state, the same in both backends
/// (each has `put_adaptive` and `adaptive_record`).
macro_rules! store_methods {
    () => {
        fn record_adaptive_procedure(
            &self,
            run: verdict_model::RunId,
            procedure: &str,
        ) -> Result<(), $crate::StoreError> {
            self.put_adaptive(run, $crate::adaptive::PUT_PROCEDURE, procedure, "procedure")
        }

        fn record_adaptive_decisions(
            &self,
            run: verdict_model::RunId,
            decisions: &[verdict_model::ComparisonStatus],
        ) -> Result<(), $crate::StoreError> {
            self.put_adaptive(
                run,
                $crate::adaptive::PUT_DECISIONS,
                &$crate::sqlite::to_json(decisions),
                "decisions",
            )
        }

        fn adaptive(
            &self,
            run: verdict_model::RunId,
        ) -> Result<verdict_model::AdaptiveRecord, $crate::StoreError> {
            self.adaptive_record(run)
        }
    };
}
pub(crate) use store_methods;

/// A stored row as the record: no row is a run that recorded nothing.
fn decode(
    run: RunId,
    row: Option<(Option<String>, Option<String>)>,
    corrupt: impl FnOnce(&str, serde_json::Error) -> StoreError,
) -> Result<AdaptiveRecord, StoreError> {
    let Some((procedure, decisions)) = row else {
        return Ok(AdaptiveRecord::default());
    };
    let decisions = match decisions {
        Some(text) => serde_json::from_str::<Vec<ComparisonStatus>>(&text)
            .map_err(|error| corrupt(&format!("the adaptive decisions of run {run}"), error))?,
        None => Vec::new(),
    };
    Ok(AdaptiveRecord {
        procedure,
        decisions,
    })
}

impl SqliteStore {
    pub(crate) fn put_adaptive(
        &self,
        run: RunId,
        sql: &str,
        value: &str,
        what: &str,
    ) -> Result<(), StoreError> {
        self.run_exists(run)?;
        let operation = format!("store the adaptive {what} of run {run}");
        self.connection
            .prepare_cached(sql)
            .and_then(|mut statement| statement.execute(params![run.0, value]))
            .map_err(self.sql_error(&operation))?;
        Ok(())
    }

    pub(crate) fn adaptive_record(&self, run: RunId) -> Result<AdaptiveRecord, StoreError> {
        self.run_exists(run)?;
        let row = self
            .connection
            .prepare_cached(READ)
            .and_then(|mut statement| {
                statement
                    .query_row([run.0], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
            })
            .map_err(self.sql_error(&format!("read the adaptive state of run {run}")))?;
        decode(run, row, |what, error| self.corrupt(what, error))
    }
}

impl PostgresStore {
    pub(crate) fn put_adaptive(
        &self,
        run: RunId,
        sql: &str,
        value: &str,
        what: &str,
    ) -> Result<(), StoreError> {
        self.run_exists(run)?;
        let operation = format!("store the adaptive {what} of run {run}");
        self.execute(&operation, sql, &[&run.0, &value])?;
        Ok(())
    }

    pub(crate) fn adaptive_record(&self, run: RunId) -> Result<AdaptiveRecord, StoreError> {
        self.run_exists(run)?;
        let rows = self.query(
            &format!("read the adaptive state of run {run}"),
            READ,
            &[&run.0],
        )?;
        let row = rows.first().map(|row| (row.get(0), row.get(1)));
        decode(run, row, |what, error| self.corrupt(what, error))
    }
}
