//! Stored bisection states: a `Bisection` serialized by an earlier version
//! (the JSON under tests/stored/, written by the code of 2026-12-04, before
//! the designs were split into modules) must still load, and resuming it
//! with the rest of its events must give the same state, the same steps
//! and the same next action, byte for byte once serialized again. One file
//! per design (and the fixed-runs mode), each cut at two points of its
//! event stream, one of them inside an open block where the design has
//! one.
//!
//! `VERDICT_WRITE_STORED=1 cargo test -p verdict-bisect --test
//! stored_state` rewrites the files from the current code: do that only
//! when the stored format changes on purpose (and then keep the old files
//! loading).
//! Must not: start processes or depend on the clock.

#[expect(dead_code, reason = "only the measuring loop is used here")]
mod common;

use std::path::PathBuf;

use common::{Noise, Script, drive_with, ids};
use serde_json::{Value, json};
use verdict_bisect::{Bisection, Config, Event, LookDesign};

/// 24 candidates: like-good up to c011, a skip at c012 (the first
/// commit the older designs visit), a commit halfway at c013 (a partial
/// change, or undecided), like-bad from c014 on.
fn scripts() -> Vec<Script> {
    (0..26)
        .map(|position| match position {
            12 => Script::Skip,
            13 => Script::Median(1.05),
            position if position >= 14 => Script::Median(1.1),
            _ => Script::Median(1.0),
        })
        .collect()
}

fn scenarios() -> Vec<(&'static str, Config)> {
    let design = |design| Config {
        design,
        probes: 1,
        ..Config::default()
    };
    vec![
        ("bonferroni", design(LookDesign::Bonferroni)),
        ("group-sequential", design(LookDesign::GroupSequential)),
        ("search-confirm", design(LookDesign::SearchConfirm)),
        (
            "group-sequential-short-rounds",
            Config {
                max_runs_per_step: 40,
                ..design(LookDesign::GroupSequential)
            },
        ),
        (
            "bonferroni-short-rounds",
            Config {
                max_runs_per_step: 40,
                ..design(LookDesign::Bonferroni)
            },
        ),
        (
            "fixed-runs",
            Config {
                fixed_runs: Some(7),
                probes: 1,
                ..Config::default()
            },
        ),
    ]
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/stored")
        .join(format!("{name}.json"))
}

fn noise() -> Noise {
    Noise::Drift {
        cv: 0.1,
        swing: 0.2,
        min_stretch: 20,
        max_stretch: 60,
    }
}

/// The state after `events[..split]` (stored as JSON), resumed with
/// `events[split..]`: the resumed state and its next action.
fn resume(stored: &Value, events: &[Event], split: usize) -> (Value, Value) {
    let mut bisection: Bisection =
        serde_json::from_value(stored.clone()).expect("a stored state loads");
    for event in &events[split..] {
        bisection.apply(event).expect("a stored event applies");
    }
    let action = serde_json::to_value(bisection.next_action()).expect("serializable");
    (
        serde_json::to_value(&bisection).expect("serializable"),
        action,
    )
}

/// Writes the stored file of one scenario from the current code. The
/// events and the cut states go through JSON first, so that the file's
/// expectations are computed from exactly what the test reads back.
fn write(name: &str, config: Config) {
    let scripts = scripts();
    let (_, events, _) = drive_with(config.clone(), &scripts, noise(), 7);
    let events: Vec<Event> =
        serde_json::from_str(&serde_json::to_string(&events).expect("serializable"))
            .expect("events load");
    let order = ids(scripts.len());
    let state_at = |split: usize| {
        Bisection::replay(
            config.clone(),
            order[0].clone(),
            order[1..].to_vec(),
            &events[..split],
        )
        .expect("replays")
    };
    // The first cut is the first point from a third of the way on where a
    // block is open (if the design has blocks), so that its state is kept.
    let open = (events.len() / 3..events.len())
        .find(|&split| {
            let value = serde_json::to_value(state_at(split)).expect("serializable");
            !value["open_block"].is_null()
        })
        .unwrap_or(events.len() / 3);
    let mut cuts = Vec::new();
    for split in [open, events.len() * 2 / 3 + 1] {
        let state = state_at(split);
        let state: Value =
            serde_json::from_str(&serde_json::to_string(&state).expect("serializable"))
                .expect("loads");
        let (resumed, action) = resume(&state, &events, split);
        cuts.push(json!({
            "split": split,
            "state": state,
            "resumed": resumed,
            "action": action,
        }));
    }
    let document = json!({
        "config": config,
        "order": order,
        "events": events,
        "cuts": cuts,
    });
    let text = serde_json::to_string(&document).expect("serializable");
    std::fs::create_dir_all(path(name).parent().expect("a directory")).expect("writable");
    std::fs::write(path(name), text + "\n").expect("writable");
}

#[test]
fn stored_states_resume_to_the_same_state_and_action() {
    let rewrite = std::env::var_os("VERDICT_WRITE_STORED").is_some();
    for (name, config) in scenarios() {
        if rewrite {
            write(name, config.clone());
        }
        let text = std::fs::read_to_string(path(name)).expect("the stored file exists");
        let document: Value = serde_json::from_str(&text).expect("valid JSON");
        let stored_config: Config =
            serde_json::from_value(document["config"].clone()).expect("config loads");
        assert_eq!(stored_config, config, "{name}");
        let events: Vec<Event> =
            serde_json::from_value(document["events"].clone()).expect("events load");
        let cuts = document["cuts"].as_array().expect("cuts");
        assert_eq!(cuts.len(), 2, "{name}");
        for cut in cuts {
            let split = cut["split"].as_u64().expect("split") as usize;
            let (resumed, action) = resume(&cut["state"], &events, split);
            assert_eq!(action, cut["action"], "{name} cut at {split}: next action");
            assert_eq!(resumed, cut["resumed"], "{name} cut at {split}: state");
            // Loading and saving a stored state changes nothing.
            let loaded: Bisection = serde_json::from_value(cut["state"].clone()).expect("loads");
            assert_eq!(
                serde_json::to_value(&loaded).expect("serializable"),
                cut["state"],
                "{name} cut at {split}: round trip"
            );
        }
        // The whole stream replayed from the start ends where the resumed
        // states end.
        let order: Vec<verdict_bisect::CommitId> =
            serde_json::from_value(document["order"].clone()).expect("order loads");
        let replayed = Bisection::replay(config, order[0].clone(), order[1..].to_vec(), &events)
            .expect("replays");
        let last = cuts.last().expect("a cut");
        assert_eq!(
            serde_json::to_value(replayed.next_action()).expect("serializable"),
            last["action"],
            "{name}: replay from the start"
        );
    }
}
