//! What an iteration captured besides its metrics, in PostgreSQL (schema
//! version 13), the same rows as SQLite's (`details.rs`): monitors (one
//! JSONB row per sample), a profile and its symbols (in one statement,
//! arrays unnested on the server), so a profiled sample with a hundred
//! counters and hundreds of symbols costs three statements. Must not decide what is captured or hold
//! queries of other tables.

use std::collections::BTreeMap;

use verdict_model::{RunId, SampleDetails};

use crate::StoreError;
use crate::details::{
    ProfileRow, SymbolRow, assemble, check_details, encode_counters, encode_stacks, stored_weight,
};
use crate::postgres::PostgresStore;
use crate::store::DetailCounts;

impl PostgresStore {
    /// The details' rows, inside the caller's transaction.
    pub(crate) fn insert_details(
        &self,
        run: RunId,
        sequence: u32,
        details: &SampleDetails,
        operation: &str,
    ) -> Result<(), StoreError> {
        check_details(details)
            .map_err(|reason| self.invalid(format!("sample {sequence} of run {run}"), reason))?;
        let sequence = i64::from(sequence);
        if !details.monitors.is_empty() {
            self.execute(
                operation,
                "INSERT INTO sample_monitors (run_id, sequence, counters) \
                 VALUES ($1, $2, $3::text::jsonb)",
                &[&run.0, &sequence, &encode_counters(&details.monitors)],
            )?;
        }
        let Some(profile) = &details.profile else {
            return Ok(());
        };
        self.execute(
            operation,
            "INSERT INTO sample_profiles (run_id, sequence, event, samples, weight, note, stacks) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &run.0,
                &sequence,
                &profile.event,
                &stored_weight(profile.samples),
                &stored_weight(profile.weight),
                &profile.note,
                &encode_stacks(&profile.stacks),
            ],
        )?;
        if !profile.symbols.is_empty() {
            let symbols: Vec<&str> = profile
                .symbols
                .iter()
                .map(|symbol| symbol.symbol.as_str())
                .collect();
            let self_weights: Vec<i64> = profile
                .symbols
                .iter()
                .map(|symbol| stored_weight(symbol.self_weight))
                .collect();
            let inclusive_weights: Vec<i64> = profile
                .symbols
                .iter()
                .map(|symbol| stored_weight(symbol.inclusive_weight))
                .collect();
            self.execute(
                operation,
                "INSERT INTO profile_symbols (run_id, sequence, symbol, self_weight, \
                    inclusive_weight) \
                 SELECT $1, $2, symbol, self_weight, inclusive_weight \
                 FROM UNNEST($3::text[], $4::int8[], $5::int8[]) \
                    AS s(symbol, self_weight, inclusive_weight)",
                &[
                    &run.0,
                    &sequence,
                    &symbols,
                    &self_weights,
                    &inclusive_weights,
                ],
            )?;
        }
        Ok(())
    }

    pub(crate) fn read_details(
        &self,
        run: RunId,
    ) -> Result<BTreeMap<u32, SampleDetails>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read what the samples of run {run} captured");
        let sequence =
            |row: &postgres::Row| u32::try_from(row.get::<_, i64>(0)).unwrap_or(u32::MAX);
        let monitors = self
            .query(
                &operation,
                "SELECT sequence, counters::text FROM sample_monitors WHERE run_id = $1",
                &[&run.0],
            )?
            .iter()
            .map(|row| (sequence(row), row.get(1)))
            .collect();
        let profiles: Vec<ProfileRow> = self
            .query(
                &operation,
                "SELECT sequence, event, samples, weight, note, stacks FROM sample_profiles \
                 WHERE run_id = $1",
                &[&run.0],
            )?
            .iter()
            .map(|row| {
                (
                    sequence(row),
                    row.get(1),
                    row.get(2),
                    row.get(3),
                    row.get(4),
                    row.get(5),
                )
            })
            .collect();
        let symbols: Vec<SymbolRow> = self
            .query(
                &operation,
                "SELECT sequence, symbol, self_weight, inclusive_weight FROM profile_symbols \
                 WHERE run_id = $1",
                &[&run.0],
            )?
            .iter()
            .map(|row| (sequence(row), row.get(1), row.get(2), row.get(3)))
            .collect();
        assemble(monitors, profiles, symbols, &|sequence, reason| {
            self.corrupt(&format!("sample {sequence} of run {run}"), reason)
        })
    }

    pub(crate) fn count_details(&self, run: RunId) -> Result<DetailCounts, StoreError> {
        self.run_exists(run)?;
        let rows = self.query(
            &format!("count what the samples of run {run} captured"),
            "SELECT (SELECT COUNT(*) FROM sample_monitors WHERE run_id = $1), \
                    (SELECT COUNT(*) FROM sample_profiles WHERE run_id = $1)",
            &[&run.0],
        )?;
        Ok(DetailCounts {
            monitored: u64::try_from(rows[0].get::<_, i64>(0)).unwrap_or(0),
            profiled: u64::try_from(rows[0].get::<_, i64>(1)).unwrap_or(0),
        })
    }
}
