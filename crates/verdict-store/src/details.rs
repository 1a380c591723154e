//! What an iteration captured besides its metrics (schema version 14),
//! written once for both backends: its monitors' deltas
//! (`sample_monitors`, one row per sample, the counters a JSON object;
//! JSONB in PostgreSQL) and, for a profiled iteration, its profile
//! (`sample_profiles`: event, samples, weight, a note, and the stacks
//! compressed; `profile_symbols`: each symbol's self and inclusive weight,
//! one statement in PostgreSQL, the arrays unnested on the server).
//! Written in the sample's own transaction (`queries.rs`), or in shared
//! work's fenced write (`work.rs`, with `ClaimedDetails`). Must not decide
//! what is captured or hold queries of other tables.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use verdict_model::profile::{Stack, SymbolWeight};
use verdict_model::{ProfileRecord, RunId, SampleDetails};

use crate::StoreError;
use crate::sql::{Backend, Dialect, Param, RawError, Row, params};
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
fn encode_stacks(stacks: &[Stack]) -> Vec<u8> {
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
fn decode_stacks(blob: &[u8]) -> Result<Vec<Stack>, String> {
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
fn encode_counters(counters: &BTreeMap<String, f64>) -> String {
    serde_json::to_string(counters).unwrap_or_default()
}

/// The monitors of a stored JSON object; the reason when it is not one.
fn decode_counters(text: &str) -> Result<BTreeMap<String, f64>, String> {
    serde_json::from_str(text)
        .map_err(|error| format!("its monitors are not the stored JSON object: {error}"))
}

/// A weight as a stored integer.
fn stored_weight(weight: u64) -> i64 {
    i64::try_from(weight).unwrap_or(i64::MAX)
}

/// Refuses what would not read back: a monitor that is not a number.
fn check_details(details: &SampleDetails) -> Result<(), String> {
    for (name, value) in &details.monitors {
        if !value.is_finite() {
            return Err(format!("monitor `{name}` is {value}, not a number"));
        }
    }
    Ok(())
}

/// A sample's details as the parameters of its rows: the counters' JSON,
/// the profile's columns, its symbols' columns (checked: every monitor a
/// number).
pub(crate) struct ClaimedDetails {
    pub(crate) counters: Option<String>,
    pub(crate) event: Option<String>,
    pub(crate) samples: Option<i64>,
    pub(crate) weight: Option<i64>,
    pub(crate) note: Option<String>,
    pub(crate) stacks: Option<Vec<u8>>,
    pub(crate) symbols: Vec<String>,
    pub(crate) self_weights: Vec<i64>,
    pub(crate) inclusive_weights: Vec<i64>,
}

impl ClaimedDetails {
    /// The rows of `details`; the reason when a monitor is not a number.
    pub(crate) fn new(details: &SampleDetails) -> Result<ClaimedDetails, String> {
        check_details(details)?;
        let profile = details.profile.as_ref();
        let symbols = profile
            .map(|profile| profile.symbols.as_slice())
            .unwrap_or_default();
        Ok(ClaimedDetails {
            counters: (!details.monitors.is_empty()).then(|| encode_counters(&details.monitors)),
            event: profile.map(|profile| profile.event.clone()),
            samples: profile.map(|profile| stored_weight(profile.samples)),
            weight: profile.map(|profile| stored_weight(profile.weight)),
            note: profile.and_then(|profile| profile.note.clone()),
            stacks: profile.map(|profile| encode_stacks(&profile.stacks)),
            symbols: symbols.iter().map(|symbol| symbol.symbol.clone()).collect(),
            self_weights: symbols
                .iter()
                .map(|symbol| stored_weight(symbol.self_weight))
                .collect(),
            inclusive_weights: symbols
                .iter()
                .map(|symbol| stored_weight(symbol.inclusive_weight))
                .collect(),
        })
    }

    /// Parameters of the fenced write's details (`work.rs`): counters,
    /// event, samples, weight, note, stacks, symbols, self and inclusive
    /// weights.
    pub(crate) fn parameters(&self) -> [Param<'_>; 9] {
        [
            Param::from(self.counters.as_deref()),
            Param::from(self.event.as_deref()),
            Param::from(self.samples),
            Param::from(self.weight),
            Param::from(self.note.as_deref()),
            Param::from(self.stacks.as_deref()),
            Param::from(self.symbols.as_slice()),
            Param::from(self.self_weights.as_slice()),
            Param::from(self.inclusive_weights.as_slice()),
        ]
    }
}

/// The details' rows, inside the caller's transaction.
pub(crate) fn insert(
    backend: &impl Backend,
    run: RunId,
    sequence: u32,
    details: &SampleDetails,
    operation: &str,
) -> Result<(), StoreError> {
    let rows = ClaimedDetails::new(details)
        .map_err(|reason| backend.invalid(format!("sample {sequence} of run {run}"), reason))?;
    let postgres = backend.dialect() == Dialect::Postgres;
    if let Some(counters) = &rows.counters {
        let sql = if postgres {
            "INSERT INTO sample_monitors (run_id, sequence, counters) \
             VALUES ($1, $2, CAST(CAST($3 AS TEXT) AS JSONB))"
        } else {
            "INSERT INTO sample_monitors (run_id, sequence, counters) VALUES ($1, $2, $3)"
        };
        backend.execute(operation, sql, params![run.0, sequence, counters])?;
    }
    let (Some(event), Some(stacks)) = (&rows.event, &rows.stacks) else {
        return Ok(());
    };
    backend.execute(
        operation,
        "INSERT INTO sample_profiles (run_id, sequence, event, samples, weight, note, stacks) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        params![
            run.0,
            sequence,
            event,
            rows.samples,
            rows.weight,
            &rows.note,
            stacks.as_slice()
        ],
    )?;
    if rows.symbols.is_empty() {
        return Ok(());
    }
    if postgres {
        backend.execute(
            operation,
            "INSERT INTO profile_symbols (run_id, sequence, symbol, self_weight, \
                inclusive_weight) \
             SELECT $1, $2, symbol, self_weight, inclusive_weight \
             FROM unnest(CAST($3 AS TEXT[]), CAST($4 AS BIGINT[]), CAST($5 AS BIGINT[])) \
                AS s(symbol, self_weight, inclusive_weight)",
            params![
                run.0,
                sequence,
                rows.symbols.as_slice(),
                rows.self_weights.as_slice(),
                rows.inclusive_weights.as_slice()
            ],
        )?;
    } else {
        for ((symbol, self_weight), inclusive_weight) in rows
            .symbols
            .iter()
            .zip(&rows.self_weights)
            .zip(&rows.inclusive_weights)
        {
            backend.execute(
                operation,
                "INSERT INTO profile_symbols (run_id, sequence, symbol, self_weight, \
                    inclusive_weight) VALUES ($1, $2, $3, $4, $5)",
                params![run.0, sequence, symbol, *self_weight, *inclusive_weight],
            )?;
        }
    }
    Ok(())
}

/// Rows read back: (sequence, event, samples, weight, note, stacks)
/// profiles; (sequence, symbol, self, inclusive) symbols.
type ProfileRow = (u32, String, i64, i64, Option<String>, Vec<u8>);
type SymbolRow = (u32, String, i64, i64);

fn sequence_of(row: Row<'_>) -> Result<u32, RawError> {
    Ok(u32::try_from(row.integer(0)?).unwrap_or(u32::MAX))
}

/// What each sample of `run` captured, by sequence.
pub(crate) fn read(
    backend: &impl Backend,
    run: RunId,
) -> Result<BTreeMap<u32, SampleDetails>, StoreError> {
    backend.run_exists(run)?;
    let operation = format!("read what the samples of run {run} captured");
    let monitors_sql = match backend.dialect() {
        Dialect::Postgres => {
            "SELECT sequence, CAST(counters AS TEXT) FROM sample_monitors WHERE run_id = $1"
        }
        Dialect::Sqlite => "SELECT sequence, counters FROM sample_monitors WHERE run_id = $1",
    };
    let monitors = backend.rows(&operation, monitors_sql, params![run.0], |row| {
        Ok((sequence_of(row)?, row.text(1)?))
    })?;
    let profiles: Vec<ProfileRow> = backend.rows(
        &operation,
        "SELECT sequence, event, samples, weight, note, stacks FROM sample_profiles \
         WHERE run_id = $1",
        params![run.0],
        |row| {
            Ok((
                sequence_of(row)?,
                row.text(1)?,
                row.integer(2)?,
                row.integer(3)?,
                row.optional_text(4)?,
                row.bytes(5)?,
            ))
        },
    )?;
    let symbols: Vec<SymbolRow> = backend.rows(
        &operation,
        "SELECT sequence, symbol, self_weight, inclusive_weight FROM profile_symbols \
         WHERE run_id = $1",
        params![run.0],
        |row| {
            Ok((
                sequence_of(row)?,
                row.text(1)?,
                row.integer(2)?,
                row.integer(3)?,
            ))
        },
    )?;
    assemble(monitors, profiles, symbols, &|sequence, reason| {
        backend.corrupt(&format!("sample {sequence} of run {run}"), reason)
    })
}

/// How many samples of `run` have monitors, and how many a profile.
pub(crate) fn count(backend: &impl Backend, run: RunId) -> Result<DetailCounts, StoreError> {
    backend.run_exists(run)?;
    let counts = backend.first_row(
        &format!("count what the samples of run {run} captured"),
        "SELECT (SELECT COUNT(*) FROM sample_monitors WHERE run_id = $1), \
                (SELECT COUNT(*) FROM sample_profiles WHERE run_id = $1)",
        params![run.0],
        |row| Ok((row.integer(0)?, row.integer(1)?)),
    )?;
    let (monitored, profiled) = counts.unwrap_or((0, 0));
    Ok(DetailCounts {
        monitored: u64::try_from(monitored).unwrap_or(0),
        profiled: u64::try_from(profiled).unwrap_or(0),
    })
}

/// Assembles the rows of a run into details by sequence.
fn assemble(
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
