//! What an iteration captured besides its metrics, in SQLite (schema
//! version 13): its monitors' deltas (`sample_monitors`, one row per
//! sample, the counters a JSON object) and, for a profiled iteration, its profile (`sample_profiles`:
//! event, samples, weight, a note, and the stacks compressed;
//! `profile_symbols`: each symbol's self and inclusive weight). Written in
//! the sample's own transaction; also the counters' and the stacks' stored
//! forms, shared with PostgreSQL (`postgres_details.rs`). Must not decide what is captured or
//! hold queries of other tables.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use verdict_model::profile::{Stack, SymbolWeight};
use verdict_model::{ProfileRecord, RunId, SampleDetails};

use crate::StoreError;
use crate::sqlite::SqliteStore;
use crate::store::DetailCounts;

/// A stack as stored: JSON (exact for any symbol bytes perf printed,
/// unlike the `a;b;c` text form, where `;` in a name would split it),
/// deflated with flate2.
#[derive(Serialize, Deserialize)]
struct StoredStack {
    comm: String,
    frames: Vec<String>,
    weight: u64,
}

/// The stored form of `stacks`.
pub(crate) fn encode_stacks(stacks: &[Stack]) -> Vec<u8> {
    let stored: Vec<StoredStack> = stacks
        .iter()
        .map(|stack| StoredStack {
            comm: stack.comm.clone(),
            frames: stack.frames.clone(),
            weight: stack.weight,
        })
        .collect();
    let json = serde_json::to_vec(&stored).unwrap_or_default();
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(&json);
    encoder.finish().unwrap_or_default()
}

/// The stacks of a stored blob; the reason when it does not decode.
pub(crate) fn decode_stacks(blob: &[u8]) -> Result<Vec<Stack>, String> {
    let mut json = Vec::new();
    flate2::read::DeflateDecoder::new(blob)
        .read_to_end(&mut json)
        .map_err(|error| format!("its stacks do not inflate: {error}"))?;
    let stored: Vec<StoredStack> = serde_json::from_slice(&json)
        .map_err(|error| format!("its stacks are not the stored JSON: {error}"))?;
    Ok(stored
        .into_iter()
        .map(|stack| Stack {
            comm: stack.comm,
            frames: stack.frames,
            weight: stack.weight,
        })
        .collect())
}

/// The stored form of a sample's monitors: a JSON object, name to value
/// (exact: serde_json writes the shortest text that reads back as the same
/// `f64`; every value is finite, [`check_details`]).
pub(crate) fn encode_counters(counters: &BTreeMap<String, f64>) -> String {
    serde_json::to_string(counters).unwrap_or_default()
}

/// The monitors of a stored JSON object; the reason when it is not one.
pub(crate) fn decode_counters(text: &str) -> Result<BTreeMap<String, f64>, String> {
    serde_json::from_str(text)
        .map_err(|error| format!("its monitors are not the stored JSON object: {error}"))
}

/// A weight as a stored integer.
pub(crate) fn stored_weight(weight: u64) -> i64 {
    i64::try_from(weight).unwrap_or(i64::MAX)
}

/// Refuses what would not read back: a monitor that is not a number.
pub(crate) fn check_details(details: &SampleDetails) -> Result<(), String> {
    for (name, value) in &details.monitors {
        if !value.is_finite() {
            return Err(format!("monitor `{name}` is {value}, not a number"));
        }
    }
    Ok(())
}

/// Rows read back: (sequence, counters as stored) monitors; (sequence,
/// event, samples, weight, note, stacks) profiles; (sequence, symbol,
/// self, inclusive) symbols.
pub(crate) type ProfileRow = (u32, String, i64, i64, Option<String>, Vec<u8>);
pub(crate) type SymbolRow = (u32, String, i64, i64);

/// Assembles the rows of a run into details by sequence.
pub(crate) fn assemble(
    monitors: Vec<(u32, String)>,
    profiles: Vec<ProfileRow>,
    symbols: Vec<SymbolRow>,
    corrupt: &dyn Fn(u32, String) -> StoreError,
) -> Result<BTreeMap<u32, SampleDetails>, StoreError> {
    let mut details: BTreeMap<u32, SampleDetails> = BTreeMap::new();
    for (sequence, counters) in monitors {
        details.entry(sequence).or_default().monitors =
            decode_counters(&counters).map_err(|reason| corrupt(sequence, reason))?;
    }
    for (sequence, event, samples, weight, note, stacks) in profiles {
        let stacks = decode_stacks(&stacks).map_err(|reason| corrupt(sequence, reason))?;
        details.entry(sequence).or_default().profile = Some(ProfileRecord {
            event,
            samples: u64::try_from(samples).unwrap_or(0),
            weight: u64::try_from(weight).unwrap_or(0),
            note,
            symbols: Vec::new(),
            stacks,
        });
    }
    for (sequence, symbol, self_weight, inclusive_weight) in symbols {
        if let Some(profile) = details
            .get_mut(&sequence)
            .and_then(|details| details.profile.as_mut())
        {
            profile.symbols.push(SymbolWeight {
                symbol,
                self_weight: u64::try_from(self_weight).unwrap_or(0),
                inclusive_weight: u64::try_from(inclusive_weight).unwrap_or(0),
            });
        }
    }
    for profile in details
        .values_mut()
        .filter_map(|details| details.profile.as_mut())
    {
        profile.symbols.sort();
    }
    Ok(details)
}

impl SqliteStore {
    /// The details' rows, inside the caller's transaction.
    pub(crate) fn insert_details(
        &self,
        transaction: &Connection,
        run: RunId,
        sequence: u32,
        details: &SampleDetails,
        operation: &str,
    ) -> Result<(), StoreError> {
        check_details(details)
            .map_err(|reason| self.invalid(format!("sample {sequence} of run {run}"), reason))?;
        if !details.monitors.is_empty() {
            transaction
                .prepare_cached(
                    "INSERT INTO sample_monitors (run_id, sequence, counters) VALUES (?1, ?2, ?3)",
                )
                .and_then(|mut statement| {
                    statement.execute(params![run.0, sequence, encode_counters(&details.monitors)])
                })
                .map_err(self.sql_error(operation))?;
        }
        let Some(profile) = &details.profile else {
            return Ok(());
        };
        transaction
            .prepare_cached(
                "INSERT INTO sample_profiles (run_id, sequence, event, samples, weight, note, \
                    stacks) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    run.0,
                    sequence,
                    profile.event,
                    stored_weight(profile.samples),
                    stored_weight(profile.weight),
                    profile.note,
                    encode_stacks(&profile.stacks),
                ])
            })
            .map_err(self.sql_error(operation))?;
        let mut insert_symbol = transaction
            .prepare_cached(
                "INSERT INTO profile_symbols (run_id, sequence, symbol, self_weight, \
                    inclusive_weight) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(self.sql_error(operation))?;
        for symbol in &profile.symbols {
            insert_symbol
                .execute(params![
                    run.0,
                    sequence,
                    symbol.symbol,
                    stored_weight(symbol.self_weight),
                    stored_weight(symbol.inclusive_weight),
                ])
                .map_err(self.sql_error(operation))?;
        }
        Ok(())
    }

    pub(crate) fn read_details(
        &self,
        run: RunId,
    ) -> Result<BTreeMap<u32, SampleDetails>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read what the samples of run {run} captured");
        let monitors = self.detail_rows(
            &operation,
            "SELECT sequence, counters FROM sample_monitors WHERE run_id = ?1",
            run,
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        let profiles = self.detail_rows(
            &operation,
            "SELECT sequence, event, samples, weight, note, stacks FROM sample_profiles \
             WHERE run_id = ?1",
            run,
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                ))
            },
        )?;
        let symbols = self.detail_rows(
            &operation,
            "SELECT sequence, symbol, self_weight, inclusive_weight FROM profile_symbols \
             WHERE run_id = ?1",
            run,
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )?;
        assemble(monitors, profiles, symbols, &|sequence, reason| {
            self.corrupt(&format!("sample {sequence} of run {run}"), reason)
        })
    }

    fn detail_rows<T>(
        &self,
        operation: &str,
        sql: &str,
        run: RunId,
        read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        self.connection
            .prepare_cached(sql)
            .and_then(|mut statement| {
                statement
                    .query_map([run.0], read)
                    .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            })
            .map_err(self.sql_error(operation))
    }

    pub(crate) fn count_details(&self, run: RunId) -> Result<DetailCounts, StoreError> {
        self.run_exists(run)?;
        let operation = format!("count what the samples of run {run} captured");
        self.connection
            .prepare_cached(
                "SELECT (SELECT COUNT(*) FROM sample_monitors WHERE run_id = ?1), \
                        (SELECT COUNT(*) FROM sample_profiles WHERE run_id = ?1)",
            )
            .and_then(|mut statement| {
                statement.query_row([run.0], |row| {
                    Ok(DetailCounts {
                        monitored: row.get::<_, i64>(0)? as u64,
                        profiled: row.get::<_, i64>(1)? as u64,
                    })
                })
            })
            .map_err(self.sql_error(&operation))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_round_trip_with_any_symbol_bytes() {
        let stacks = vec![Stack {
            comm: "a;b".into(),
            frames: vec!["main".into(), "evil;\u{1b}[31m\nname\\xff".into()],
            weight: 42,
        }];
        let blob = encode_stacks(&stacks);
        assert_eq!(decode_stacks(&blob).unwrap(), stacks);
        assert!(decode_stacks(b"not deflate").is_err());
    }

    #[test]
    fn counters_round_trip_exactly() {
        let counters = BTreeMap::from([
            ("cpu.user".to_string(), 0.1 + 0.2),
            (
                "interrupts.36:virtio1-req.0 \"x\"\u{7}".to_string(),
                130_211.0,
            ),
            ("vmstat.pgfault".to_string(), 1e300),
            ("workload.voluntary_switches".to_string(), 0.0),
        ]);
        assert_eq!(
            decode_counters(&encode_counters(&counters)).unwrap(),
            counters
        );
        assert!(decode_counters("[1, 2]").is_err());
    }
}
