//! Scripted bisections of the pure core: every culprit position in every
//! list size up to 64, skips, undecided commits, non-monotonic evidence,
//! aborts, and replay/serde equivalence (the basis of resume).
//! Must not: start processes or sleep.

#[expect(
    dead_code,
    reason = "the drift noise model is used by the simulation only"
)]
mod common;

use common::{Script, drive, ids, step_script};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;
use verdict_bisect::{
    AbortReason, Action, Bisection, Class, CommitId, Config, Culprit, Event, LookDesign,
};

#[test]
fn every_culprit_position_in_lists_up_to_64_is_found() {
    // The group-sequential design is a plain binary search: at most
    // ceil(log2(candidates)) classifications.
    every_culprit_position_is_found(LookDesign::GroupSequential, |bound| bound);
}

#[test]
fn every_culprit_position_in_lists_up_to_64_is_found_by_search_and_confirm() {
    // The search-confirm design probes at the posterior's median (which
    // leans towards the side a provisional call left open) and then
    // confirms the culprit and its predecessor at the strict level: at
    // most three classifications more than a binary search here.
    every_culprit_position_is_found(LookDesign::SearchConfirm, |bound| bound + 3);
}

fn every_culprit_position_is_found(design: LookDesign, steps_bound: fn(u32) -> u32) {
    let mut bisections = 0;
    let mut most_steps = 0;
    for candidates in 1..=64usize {
        // Positions: 0 = good endpoint, 1..=candidates; the last is bad.
        for first_bad in 1..=candidates {
            let scripts = step_script(candidates + 1, first_bad, 0.5);
            let seed = (candidates * 1000 + first_bad) as u64;
            // The error budget is per classification whatever the shift (a
            // like-bad commit can look like-good by chance at α/K per look),
            // so over ~10⁴ classifications the default 0.005 would allow a
            // few wrong steps; 1e-5 makes this exhaustive check exact.
            let config = Config {
                step_error: 1e-5,
                design,
                ..Config::default()
            };
            let (outcome, _, bisection) = drive(config, &scripts, 0.05, seed);
            let outcome =
                outcome.unwrap_or_else(|action| panic!("{candidates}/{first_bad}: {action:?}"));
            assert_eq!(
                outcome.culprit,
                Culprit::Single(ids(candidates + 1)[first_bad].clone()),
                "{candidates} candidates, first bad at {first_bad}"
            );
            assert!(outcome.conflicts.is_empty());
            // Binary search: at most ceil(log2(candidates)) classifications.
            let bound = steps_bound(usize::BITS - (candidates.max(1) - 1).leading_zeros());
            most_steps = most_steps.max(outcome.steps);
            assert!(
                outcome.steps as u32 <= bound,
                "{candidates}/{first_bad}: {} steps",
                outcome.steps
            );
            assert_eq!(outcome.total_runs, bisection.total_runs());
            bisections += 1;
        }
    }
    assert_eq!(bisections, 64 * 65 / 2);
    eprintln!("{design:?}: at most {most_steps} steps");
}

#[test]
fn decreasing_metric_is_bisected_too() {
    // Throughput-like: the bad endpoint is lower.
    let scripts = step_script(33, 17, -0.3);
    let (outcome, _, bisection) = drive(Config::default(), &scripts, 0.05, 7);
    assert_eq!(
        outcome.unwrap().culprit,
        Culprit::Single(ids(33)[17].clone())
    );
    let comparison = bisection.endpoint_comparison().unwrap();
    assert_eq!(comparison.direction, verdict_bisect::Direction::Lower);
    assert!(
        (comparison.shift.estimate + 0.3).abs() < 0.05,
        "{comparison:?}"
    );
}

#[test]
fn skips_around_the_culprit_give_a_range_like_git() {
    let ids = ids(21);
    let mut scripts = step_script(21, 10, 0.5);
    scripts[9] = Script::Skip;
    scripts[10] = Script::Skip;
    let (outcome, events, bisection) = drive(Config::default(), &scripts, 0.05, 3);
    let outcome = outcome.unwrap();
    assert_eq!(outcome.culprit, Culprit::Range(ids[9..=11].to_vec()));
    assert_eq!(outcome.last_good, ids[8]);
    assert_eq!(outcome.first_bad, ids[11]);
    assert_eq!(outcome.skipped, vec![ids[9].clone(), ids[10].clone()]);
    assert!(
        events
            .iter()
            .any(|event| matches!(event, Event::Skip { commit, .. } if *commit == ids[9]))
    );
    let classes: Vec<Class> = bisection
        .log_entries()
        .into_iter()
        .map(|(_, class)| class)
        .collect();
    assert!(classes.contains(&Class::Skipped));
}

#[test]
fn a_skip_away_from_the_culprit_still_gives_one_commit() {
    let ids = ids(21);
    let mut scripts = step_script(21, 15, 0.5);
    // The first midpoint (10) cannot be built: the search moves next to it.
    scripts[10] = Script::Skip;
    let (outcome, _, bisection) = drive(Config::default(), &scripts, 0.05, 4);
    assert_eq!(outcome.unwrap().culprit, Culprit::Single(ids[15].clone()));
    assert_eq!(bisection.steps()[0].commit, ids[10]);
    assert_eq!(bisection.steps()[0].decision.class, Class::Skipped);
}

#[test]
fn non_monotonic_evidence_is_found_by_probes_and_reported() {
    // Bad from 31 on, but also transiently bad at 6..=14 (a regression
    // fixed and reintroduced).
    let count = 42;
    let ids = ids(count);
    let mut scripts = step_script(count, 31, 0.5);
    for script in &mut scripts[6..=14] {
        *script = Script::Median(1.5);
    }
    // Probes are a feature of the designs that classify every measured
    // commit for good (the search-confirm design has no settled sides to
    // probe until the end).
    let config = Config {
        probes: 1,
        design: LookDesign::GroupSequential,
        ..Config::default()
    };
    let (outcome, _, bisection) = drive(config.clone(), &scripts, 0.05, 11);
    let outcome = outcome.unwrap();
    assert!(!outcome.conflicts.is_empty(), "{outcome:?}");
    // The search follows the evidence to the earliest transition, and says
    // which like-good commits contradict it.
    assert_eq!(outcome.culprit, Culprit::Single(ids[6].clone()));
    assert!(
        outcome
            .conflicts
            .iter()
            .all(|conflict| conflict.bad == ids[6])
    );
    assert!(
        outcome
            .conflicts
            .iter()
            .any(|conflict| conflict.good == ids[30])
    );
    assert!(bisection.steps().iter().any(|step| step.probe));

    // Without probes a plain bisection never looks there (as git).
    let (plain, _, _) = drive(Config::default(), &scripts, 0.05, 11);
    let plain = plain.unwrap();
    assert_eq!(plain.culprit, Culprit::Single(ids[31].clone()));
    assert!(plain.conflicts.is_empty());

    // Monotonic history with probes: no conflict, same culprit.
    let (clean, _, _) = drive(config, &step_script(count, 31, 0.5), 0.05, 11);
    let clean = clean.unwrap();
    assert_eq!(clean.culprit, Culprit::Single(ids[31].clone()));
    assert!(clean.conflicts.is_empty());
}

#[test]
fn an_undecidable_commit_is_retested_then_left_in_the_range() {
    let ids = ids(9);
    let mut scripts = step_script(9, 4, 0.30);
    // Commit 4 sits halfway (log scale): with 30 runs per round (15
    // blocks of 2) and CV 40% neither endpoint can be excluded. (A commit
    // with a much wider spread than the endpoints is not "undecided": the
    // rank test rightly says it is not distributed like either.)
    scripts[4] = Script::Median(1.3f64.sqrt());
    // The Bonferroni design (bisections stored before 2026-12) judges
    // each round on its own runs; the group-sequential design pools them.
    for design in [LookDesign::Bonferroni, LookDesign::GroupSequential] {
        let config = Config {
            max_runs_per_step: 30,
            retests: 1,
            endpoint_min_runs: 30,
            design,
            ..Config::default()
        };
        undecided_commit_is_retested(config, &scripts, &ids);
    }
}

fn undecided_commit_is_retested(config: Config, scripts: &[Script], ids: &[CommitId]) {
    let design = config.design;
    let (outcome, _, bisection) = drive(config, scripts, 0.40, 5);
    let outcome = outcome.unwrap();
    let evidence = bisection.evidence();
    let halfway = evidence
        .iter()
        .find(|commit| commit.commit == ids[4])
        .unwrap();
    assert_eq!(
        halfway.class,
        Some(Class::Undecided),
        "{outcome:?} {:?}",
        halfway.decision
    );
    // Retested: its samples were kept and extended to the second cap.
    assert_eq!(halfway.samples.len(), 60);
    let rounds: Vec<(usize, (usize, usize))> = bisection
        .steps()
        .iter()
        .filter(|step| step.commit == ids[4])
        .map(|step| (step.decision.runs, step.decision.endpoint_runs))
        .collect();
    if design == LookDesign::Bonferroni {
        // Each round is judged on its own 30 runs against the 30 runs of
        // each endpoint measured in turns with it, not on the endpoints'
        // history.
        assert_eq!(rounds, vec![(30, (30, 30)), (30, (30, 30))]);
    } else {
        // The second round's call uses both rounds' runs (pooled), and
        // the endpoint runs measured in turns with them.
        assert_eq!(rounds.len(), 2, "{rounds:?}");
        assert_eq!(rounds[0].0, 30);
        assert_eq!(rounds[1].0, 60);
        assert!(rounds[1].1.0 > rounds[0].1.0 || rounds[1].1.1 > rounds[0].1.1);
    }
    assert!(outcome.undecided.contains(&ids[4]), "{outcome:?}");
    assert!(
        matches!(&outcome.culprit, Culprit::Range(range) if range.contains(&ids[4])),
        "{outcome:?}"
    );
}

#[test]
fn a_change_split_over_two_commits_is_flagged_partial() {
    // Commit 10 carries 40% of the log shift, commit 11 the rest.
    let ids = ids(21);
    let mut scripts = step_script(21, 11, 0.30);
    scripts[10] = Script::Median(1.3f64.powf(0.4));
    let (outcome, _, bisection) = drive(Config::default(), &scripts, 0.02, 8);
    let outcome = outcome.unwrap();
    assert_eq!(
        outcome.culprit,
        Culprit::Single(ids[11].clone()),
        "{outcome:?}"
    );
    assert_eq!(outcome.partial, vec![ids[10].clone()]);
    let step = bisection
        .steps()
        .iter()
        .find(|step| step.commit == ids[10])
        .unwrap();
    assert_eq!(step.decision.class, Class::Good);
    let fraction = step.decision.fraction.unwrap();
    assert!((0.3..0.5).contains(&fraction), "{fraction}");
}

#[test]
fn equal_endpoints_abort_with_the_comparison() {
    let scripts = vec![Script::Median(1.0); 10];
    let (outcome, events, _) = drive(Config::default(), &scripts, 0.10, 1);
    let Err(Action::Abort {
        reason:
            AbortReason::EndpointsIndistinguishable {
                shift,
                good_runs,
                bad_runs,
            },
    }) = outcome
    else {
        panic!("expected an abort, got {outcome:?}");
    };
    assert_eq!((good_runs, bad_runs), (200, 200));
    let interval = shift.unwrap().interval.unwrap();
    assert!(interval.low < 0.0 && interval.high > 0.0);
    // Only endpoints were measured.
    let ids = ids(10);
    assert!(events.iter().all(|event| matches!(event, Event::Samples { commit, .. } if *commit == ids[0] || *commit == ids[9])));
}

#[test]
fn an_endpoint_that_cannot_be_built_aborts() {
    let mut scripts = step_script(5, 2, 0.5);
    scripts[0] = Script::Skip;
    let (outcome, _, _) = drive(Config::default(), &scripts, 0.05, 1);
    assert!(matches!(
        outcome,
        Err(Action::Abort {
            reason: AbortReason::EndpointSkipped { .. }
        })
    ));
}

#[test]
fn replay_of_every_prefix_equals_the_live_state_and_survives_serde() {
    let scripts = step_script(40, 23, 0.10);
    let config = Config::default();
    let (outcome, events, final_state) = drive(config.clone(), &scripts, 0.13, 99);
    assert!(outcome.is_ok());
    let order = ids(40);
    let mut live = Bisection::new(config.clone(), order[0].clone(), order[1..].to_vec()).unwrap();
    for (index, event) in events.iter().enumerate() {
        live.apply(event).unwrap();
        if index % 7 == 0 || index + 1 == events.len() {
            let replayed = Bisection::replay(
                config.clone(),
                order[0].clone(),
                order[1..].to_vec(),
                &events[..=index],
            )
            .unwrap();
            assert_eq!(replayed, live, "after event {index}");
            assert_eq!(replayed.next_action(), live.next_action());
        }
    }
    assert_eq!(live, final_state);
    let json = serde_json::to_string(&final_state).unwrap();
    let restored: Bisection = serde_json::from_str(&json).unwrap();
    assert_eq!(restored.next_action(), final_state.next_action());
    let events_json = serde_json::to_string(&events).unwrap();
    let events_back: Vec<Event> = serde_json::from_str(&events_json).unwrap();
    let rebuilt =
        Bisection::replay(config, order[0].clone(), order[1..].to_vec(), &events_back).unwrap();
    assert_eq!(rebuilt.next_action(), final_state.next_action());
}

/// Drives with one run per event (as the engine commits every sample);
/// the value of the k-th run of a commit depends only on (commit, k), as
/// on a machine that behaves the same before and after a restart.
fn drive_one_run_at_a_time(
    bisection: &mut Bisection,
    scripts: &[Script],
    events: &mut Vec<Event>,
    limit: usize,
) {
    let order = ids(scripts.len());
    while events.len() < limit {
        let Action::Measure { commit, .. } = bisection.next_action() else {
            return;
        };
        let position = order.iter().position(|id| *id == commit).unwrap();
        let Script::Median(median) = scripts[position] else {
            unreachable!("no skips here")
        };
        let index = bisection.samples(&commit).unwrap().len() as u64;
        let mut random = ChaCha8Rng::seed_from_u64(position as u64 * 1_000_003 + index);
        let event = Event::Samples {
            commit,
            values: vec![common::lognormal(median, 0.13).sample(&mut random)],
        };
        bisection.apply(&event).unwrap();
        events.push(event);
    }
}

#[test]
fn a_kill_between_runs_resumes_without_loss_or_duplication() {
    let scripts = step_script(30, 12, 0.10);
    let config = Config::default();
    let order = ids(30);
    let new = || Bisection::new(config.clone(), order[0].clone(), order[1..].to_vec()).unwrap();
    let mut uninterrupted = new();
    let mut all_events = Vec::new();
    drive_one_run_at_a_time(&mut uninterrupted, &scripts, &mut all_events, usize::MAX);
    assert!(matches!(uninterrupted.next_action(), Action::Done(_)));
    for kill_at in [1, 37, all_events.len() / 2, all_events.len() - 1] {
        // Killed after `kill_at` stored runs: replay them and carry on.
        let mut stored = all_events[..kill_at].to_vec();
        let mut resumed = Bisection::replay(
            config.clone(),
            order[0].clone(),
            order[1..].to_vec(),
            &stored,
        )
        .unwrap();
        drive_one_run_at_a_time(&mut resumed, &scripts, &mut stored, usize::MAX);
        assert_eq!(stored, all_events, "kill after {kill_at} runs");
        assert_eq!(resumed, uninterrupted);
        assert_eq!(resumed.total_runs(), all_events.len());
    }
}

#[test]
fn invalid_inputs_are_rejected() {
    let order = ids(4);
    let mut bisection =
        Bisection::new(Config::default(), order[0].clone(), order[1..].to_vec()).unwrap();
    let bad_value = Event::Samples {
        commit: order[1].clone(),
        values: vec![1.0, f64::NAN],
    };
    assert!(bisection.apply(&bad_value).is_err());
    let unknown = Event::Samples {
        commit: verdict_bisect::CommitId::new("nope"),
        values: vec![1.0],
    };
    assert!(
        bisection
            .apply(&unknown)
            .unwrap_err()
            .to_string()
            .contains("nope")
    );
    assert!(Bisection::new(Config::default(), order[0].clone(), vec![]).is_err());
    assert!(
        Bisection::new(
            Config::default(),
            order[0].clone(),
            vec![order[1].clone(), order[1].clone()]
        )
        .is_err()
    );
    let config = Config {
        step_error: 0.0,
        ..Config::default()
    };
    assert!(Bisection::new(config, order[0].clone(), order[1..].to_vec()).is_err());
}

#[test]
fn the_fake_vcs_drives_a_bisection_like_the_command_will() {
    use verdict_bisect::{FakeVcs, Vcs};
    let vcs = FakeVcs::linear(17);
    let good = vcs.resolve("c00").unwrap();
    let bad = vcs.resolve("c16").unwrap();
    let candidates: Vec<_> = vcs
        .candidates(&good, &bad, true)
        .unwrap()
        .into_iter()
        .map(|commit| commit.id)
        .collect();
    assert_eq!(candidates.len(), 16);
    let head = vcs.head().unwrap();
    let mut bisection = Bisection::new(Config::default(), good, candidates).unwrap();
    let outcome = loop {
        match bisection.next_action() {
            Action::Measure { commit, runs } => {
                vcs.checkout(&commit).unwrap();
                let index: usize = commit.as_str()[1..].parse().unwrap();
                let base = if index >= 6 { 2.0 } else { 1.0 };
                let values = (0..runs)
                    .map(|run| base * (1.0 + (run % 5) as f64 / 100.0))
                    .collect();
                bisection.apply(&Event::Samples { commit, values }).unwrap();
            }
            Action::Done(outcome) => break outcome,
            Action::Abort { reason } => panic!("{reason:?}"),
        }
    };
    vcs.restore(&head).unwrap();
    assert_eq!(
        outcome.culprit,
        Culprit::Single(verdict_bisect::CommitId::new("c06"))
    );
    let checkouts = vcs.checkouts();
    // Endpoints and candidates are measured in turns, so commits are
    // checked out repeatedly; the last checkout restores HEAD.
    assert_eq!(checkouts.last(), Some(&head.commit));
    assert!(checkouts.contains(&verdict_bisect::CommitId::new("c08")));
    let log = bisection.bisect_log(true, |id| vcs.subject(id).unwrap());
    assert!(log.starts_with("# bad: [c16] commit 16\n# good: [c00] commit 0\ngit bisect start '--first-parent' 'c16' 'c00'\n"), "{log}");
    assert!(
        log.ends_with("# first bad commit: [c06] commit 6\n"),
        "{log}"
    );
}

#[test]
fn a_config_stored_before_the_design_field_replays_with_the_bonferroni_design() {
    // What `verdict bisect` stored before 2026-12: the config without
    // `design`. It must replay as it ran (Bonferroni), while new
    // bisections get the search-confirm design.
    let mut stored = serde_json::to_value(Config::default()).unwrap();
    stored.as_object_mut().unwrap().remove("design");
    let config: Config = serde_json::from_value(stored).unwrap();
    assert_eq!(config.design, LookDesign::Bonferroni);
    assert_eq!(Config::default().design, LookDesign::SearchConfirm);
    let scripts = step_script(17, 9, 0.30);
    let (outcome, events, live) = drive(config.clone(), &scripts, 0.05, 3);
    let outcome = outcome.unwrap();
    let ids = ids(17);
    let replayed =
        Bisection::replay(config.clone(), ids[0].clone(), ids[1..].to_vec(), &events).unwrap();
    assert_eq!(replayed, live);
    assert_eq!(replayed.next_action(), Action::Done(outcome.clone()));
    // The same events under the new design are judged differently (it
    // would have asked for other runs): the design really is part of the
    // replay.
    let other = Config {
        design: LookDesign::GroupSequential,
        ..config
    };
    let regrouped = Bisection::replay(other, ids[0].clone(), ids[1..].to_vec(), &events).unwrap();
    assert_ne!(regrouped.steps(), live.steps());
}

#[test]
fn a_group_sequential_bisection_stored_before_the_search_fields_replays_as_it_ran() {
    // What `verdict bisect` stored on 2026-12-01: the config with
    // `design: group-sequential` and without `search_error` or
    // `search_max_runs`. It must replay as it ran.
    let original = Config {
        design: LookDesign::GroupSequential,
        ..Config::default()
    };
    let mut stored = serde_json::to_value(&original).unwrap();
    let object = stored.as_object_mut().unwrap();
    object.remove("search_error");
    object.remove("search_max_runs");
    assert_eq!(object["design"], "group-sequential");
    let config: Config = serde_json::from_value(stored).unwrap();
    assert_eq!(config, original);
    let scripts = step_script(33, 20, 0.30);
    let (outcome, events, live) = drive(original, &scripts, 0.05, 5);
    let outcome = outcome.unwrap();
    let ids = ids(33);
    let replayed =
        Bisection::replay(config.clone(), ids[0].clone(), ids[1..].to_vec(), &events).unwrap();
    assert_eq!(replayed, live);
    assert_eq!(replayed.next_action(), Action::Done(outcome));
    assert!(live.steps().iter().all(|step| !step.provisional));
    // The search-confirm design judges the same events differently.
    let other = Config {
        design: LookDesign::SearchConfirm,
        ..config
    };
    let searched = Bisection::replay(other, ids[0].clone(), ids[1..].to_vec(), &events).unwrap();
    assert_ne!(searched.steps(), live.steps());
}

#[test]
fn a_search_confirm_bisection_replays_exactly_and_rests_on_strict_calls() {
    let scripts = step_script(65, 23, 0.30);
    let (outcome, events, live) = drive(Config::default(), &scripts, 0.05, 9);
    let outcome = outcome.unwrap();
    let ids = ids(65);
    assert_eq!(outcome.culprit, Culprit::Single(ids[23].clone()));
    let replayed = Bisection::replay(
        Config::default(),
        ids[0].clone(),
        ids[1..].to_vec(),
        &events,
    )
    .unwrap();
    assert_eq!(replayed, live);
    assert_eq!(replayed.next_action(), Action::Done(outcome));
    // The search's calls are provisional; the predecessor and the culprit
    // were classified at the strict level, and only strict calls reach the
    // git bisect log replay.
    let steps = live.steps();
    assert!(steps.iter().any(|step| step.provisional));
    let strict = |position: usize, class: Class| {
        steps.iter().any(|step| {
            !step.provisional && step.position == position && step.decision.class == class
        })
    };
    assert!(strict(22, Class::Good), "{steps:?}");
    assert!(strict(23, Class::Bad), "{steps:?}");
    let logged = live.log_entries();
    assert!(
        logged.iter().all(|(commit, _)| steps
            .iter()
            .any(|step| !step.provisional && step.commit == *commit)),
        "{logged:?}"
    );
}
