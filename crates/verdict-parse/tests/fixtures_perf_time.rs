//! perf stat and `time` extraction on real captured and transcribed output
//! (tests/fixtures/README.md). Reads fixture files; nothing else.

use std::path::PathBuf;

use verdict_parse::{
    CounterValue, Extractor, ParseError, extract, perf_event_value, perf_stat, perf_stat_csv,
    perf_stat_csv_with_separator, perf_stat_json, perf_stat_text, time_posix, time_posix_value,
    time_verbose, time_verbose_value,
};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

#[test]
fn not_supported_counters_are_missing_never_zero() {
    let rows = perf_stat_csv(&fixture("perf-6.1-x-not-supported.csv")).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].event, "cycles");
    assert_eq!(rows[0].value, CounterValue::NotSupported);
    assert_eq!(rows[2].value, CounterValue::Counted(0.58));
    assert_eq!(rows[2].unit, "msec");
    assert_eq!(rows[2].run_time, Some(578561.0));
    assert_eq!(rows[2].running_percent, Some(100.0));
    assert_eq!(rows[2].metric_value, Some(0.157));
    assert_eq!(rows[2].metric_unit.as_deref(), Some("CPUs utilized"));
    assert_eq!(perf_event_value(&rows, "task-clock").unwrap(), 0.58);
    let error = perf_event_value(&rows, "cycles").unwrap_err();
    assert_eq!(
        error.to_string(),
        "read perf stat event `cycles`: perf printed `<not supported>`, so the value is missing"
    );
}

#[test]
fn not_counted_is_missing_too() {
    let rows = perf_stat_csv(&fixture("perf-x-topdown-not-counted.csv")).unwrap();
    assert_eq!(rows.len(), 6);
    let error = perf_event_value(&rows, "topdown-retiring").unwrap_err();
    assert_eq!(
        error,
        ParseError::CounterUnavailable {
            event: "topdown-retiring".to_string(),
            printed: "<not counted>".to_string()
        }
    );
}

#[test]
fn repeat_adds_a_variance_column() {
    let rows = perf_stat_csv(&fixture("perf-6.1-x-repeat3.csv")).unwrap();
    let task_clock = rows.iter().find(|row| row.event == "task-clock").unwrap();
    assert_eq!(task_clock.value, CounterValue::Counted(0.44));
    assert_eq!(task_clock.variance_percent, Some(4.40));
    assert_eq!(task_clock.run_time, Some(440884.0));
    assert_eq!(task_clock.running_percent, Some(100.0));
    assert_eq!(task_clock.metric_value, Some(0.248));
    // The `+-` spelling of older perf versions.
    let rows = perf_stat_csv("1234,,cycles,+-2.50%,1000,100.00,,\n").unwrap();
    assert_eq!(rows[0].variance_percent, Some(2.5));
    assert_eq!(rows[0].run_time, Some(1000.0));
}

#[test]
fn hardware_counters_with_numbers() {
    let rows = perf_stat_csv(&fixture("perf-x-spr-hardware.csv")).unwrap();
    // The metric-group lines (TopdownL1 and its `tma_*` lines) have no event.
    assert_eq!(rows.len(), 8);
    assert_eq!(perf_event_value(&rows, "cycles").unwrap(), 52288305.0);
    assert_eq!(perf_event_value(&rows, "instructions").unwrap(), 37977214.0);
    assert_eq!(perf_event_value(&rows, "cpu-clock").unwrap(), 225851.20);
    let instructions = rows.iter().find(|row| row.event == "instructions").unwrap();
    assert_eq!(instructions.metric_value, Some(0.73));
    assert_eq!(instructions.metric_unit.as_deref(), Some("insn per cycle"));

    let hybrid = perf_stat_csv(&fixture("perf-x-hybrid-hardware.csv")).unwrap();
    assert_eq!(
        perf_event_value(&hybrid, "cpu_atom/cycles/").unwrap(),
        256500230.0
    );
    assert_eq!(
        hybrid
            .iter()
            .find(|row| row.event == "cpu_atom/cycles/")
            .unwrap()
            .running_percent,
        Some(54.0)
    );
    let error = perf_event_value(&hybrid, "cycles").unwrap_err();
    assert!(matches!(error, ParseError::MissingEvent { .. }));
    assert!(error.to_string().contains("`cpu_core/cycles/`"), "{error}");
}

#[test]
fn modifiers_are_part_of_the_event_name() {
    let rows = perf_stat_csv(&fixture("perf-6.1-x-modifiers.csv")).unwrap();
    assert_eq!(perf_event_value(&rows, "page-faults:u").unwrap(), 46.0);
    assert!(matches!(
        perf_event_value(&rows, "cycles:u"),
        Err(ParseError::CounterUnavailable { .. })
    ));
    assert!(matches!(
        perf_event_value(&rows, "page-faults"),
        Err(ParseError::MissingEvent { .. })
    ));
}

#[test]
fn aggregated_output_is_summed() {
    let per_cpu = perf_stat_csv(&fixture("perf-6.1-x-per-cpu.csv")).unwrap();
    assert_eq!(per_cpu.len(), 2);
    assert_eq!(per_cpu[0].aggregation.as_deref(), Some("CPU0"));
    assert!((perf_event_value(&per_cpu, "task-clock").unwrap() - 203.60).abs() < 1e-9);

    let per_socket = perf_stat_csv(&fixture("perf-x-per-socket.csv")).unwrap();
    assert_eq!(per_socket.len(), 8);
    assert_eq!(per_socket[0].aggregation.as_deref(), Some("S0"));
    assert_eq!(perf_event_value(&per_socket, "cycles").unwrap(), 189544.0);
    assert_eq!(per_socket[4].running_percent, Some(67.0));
}

#[test]
fn default_events_and_other_separators() {
    let rows = perf_stat_csv(&fixture("perf-6.1-x-default-events.csv")).unwrap();
    assert_eq!(perf_event_value(&rows, "page-faults").unwrap(), 49.0);
    assert_eq!(perf_event_value(&rows, "context-switches").unwrap(), 0.0);
    assert!(perf_event_value(&rows, "branch-misses").is_err());
    let semicolons = perf_stat_csv_with_separator(
        "0.41;msec;task-clock;414334;100.00;0.595;CPUs utilized\n",
        ';',
    )
    .unwrap();
    assert_eq!(perf_event_value(&semicolons, "task-clock").unwrap(), 0.41);
}

#[test]
fn json_lines() {
    let rows = perf_stat_json(&fixture("perf-6.1-json.jsonl")).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(perf_event_value(&rows, "task-clock").unwrap(), 0.634154);
    assert!(matches!(
        perf_event_value(&rows, "instructions"),
        Err(ParseError::CounterUnavailable { .. })
    ));

    let repeated = perf_stat_json(&fixture("perf-6.1-json-repeat3.jsonl")).unwrap();
    assert_eq!(repeated[1].variance_percent, Some(6.77));
    assert_eq!(
        perf_event_value(&repeated, "context-switches").unwrap(),
        0.0
    );

    let hardware = perf_stat(&fixture("perf-json-spr-hardware.jsonl")).unwrap();
    assert_eq!(hardware.len(), 8);
    assert_eq!(perf_event_value(&hardware, "cycles").unwrap(), 48433482.0);
    assert_eq!(hardware[5].metric_value, Some(0.797391));

    let error =
        perf_stat_json("{\"event\" : \"cycles\", \"counter-value\" : \"lots\"}\n").unwrap_err();
    assert!(
        matches!(error, ParseError::MalformedLine { line: 1, .. }),
        "{error}"
    );
    assert!(matches!(
        perf_stat_json("{not json\n"),
        Err(ParseError::MalformedLine { .. })
    ));
}

#[test]
fn perf_errors() {
    assert_eq!(
        perf_stat_csv("").unwrap_err(),
        ParseError::EmptyOutput {
            format: "perf stat CSV"
        }
    );
    let rows = perf_stat_csv("Usage: perf stat [<options>] [<command>]\n").unwrap();
    assert_eq!(
        perf_event_value(&rows, "cycles").unwrap_err().to_string(),
        "find perf stat event `cycles`: the output has no perf stat counter lines"
    );
    let extractor = Extractor::PerfStat {
        event: "task-clock".to_string(),
    };
    let stderr = format!(
        "workload: starting, please wait\n{}",
        fixture("perf-6.1-x-not-supported.csv")
    );
    assert_eq!(
        extract(&extractor, b"ignored,,task-clock,1,1\n", stderr.as_bytes()).unwrap(),
        0.58
    );
    let json = fixture("perf-6.1-json.jsonl");
    assert_eq!(extract(&extractor, b"", json.as_bytes()).unwrap(), 0.634154);
}

#[test]
fn gnu_time_verbose() {
    let output = fixture("gnu-time-v-stress-ng.txt");
    let values = time_verbose(&output).unwrap();
    assert_eq!(values.len(), 22);
    assert_eq!(time_verbose_value(&output, "user-time").unwrap(), 0.15);
    assert_eq!(time_verbose_value(&output, "system-time").unwrap(), 0.80);
    assert_eq!(time_verbose_value(&output, "percent-cpu").unwrap(), 94.0);
    assert_eq!(time_verbose_value(&output, "elapsed").unwrap(), 1.01);
    assert_eq!(time_verbose_value(&output, "real").unwrap(), 1.01);
    assert_eq!(time_verbose_value(&output, "max-rss").unwrap(), 10084.0);
    assert_eq!(
        time_verbose_value(&output, "Maximum resident set size (kbytes)").unwrap(),
        10084.0
    );
    assert_eq!(
        time_verbose_value(&output, "voluntary-context-switches").unwrap(),
        119112.0
    );
    assert_eq!(
        time_verbose_value(&output, "involuntary-context-switches").unwrap(),
        116015.0
    );
    assert_eq!(
        time_verbose_value(&output, "minor-page-faults").unwrap(),
        1191.0
    );
    assert_eq!(time_verbose_value(&output, "exit-status").unwrap(), 0.0);

    let failed = fixture("gnu-time-v-false.txt");
    assert_eq!(time_verbose_value(&failed, "exit-status").unwrap(), 1.0);
    assert_eq!(
        time_verbose_value(&failed, "file-system-inputs").unwrap(),
        72.0
    );

    let long = "\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:14:05\n";
    assert_eq!(time_verbose_value(long, "elapsed").unwrap(), 4445.0);

    let error = time_verbose_value(&output, "max-rss-bytes").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("read time -v field `max-rss-bytes`: known fields are"),
        "{error}"
    );
    assert!(matches!(
        time_verbose_value("", "max-rss"),
        Err(ParseError::EmptyOutput { .. })
    ));
    assert!(matches!(
        time_verbose_value("hello\n", "max-rss"),
        Err(ParseError::NotFound { .. })
    ));
    let junk = "\tMaximum resident set size (kbytes): lots\n";
    assert!(matches!(
        time_verbose_value(junk, "max-rss"),
        Err(ParseError::MalformedLine { line: 1, .. })
    ));
}

#[test]
fn posix_and_bash_time() {
    let posix = time_posix(&fixture("gnu-time-p-sleep.txt")).unwrap();
    assert_eq!((posix.real, posix.user, posix.sys), (0.20, 0.00, 0.00));
    let bash = time_posix(&fixture("bash-time-sleep.txt")).unwrap();
    assert_eq!((bash.real, bash.user, bash.sys), (0.207, 0.001, 0.0));

    // The bulk SMT switch case: ppc64_cpu --smt=1 on 400 CPUs, before and after.
    let before = "\nreal\t1m14.792s\nuser\t0m0.001s\nsys\t0m52.118s\n";
    let after = "\nreal\t0m03.205s\nuser\t0m0.001s\nsys\t0m1.034s\n";
    assert!((time_posix_value(before, "real").unwrap() - 74.792).abs() < 1e-9);
    assert!((time_posix_value(after, "real").unwrap() - 3.205).abs() < 1e-9);
    assert!((time_posix_value(before, "sys").unwrap() - 52.118).abs() < 1e-9);

    // The workload's own output before the report, and a nested report:
    // the last complete one wins.
    let nested = "real 9.00\nuser 1.00\nsys 1.00\nsome output\nreal 2.50\nuser 0.50\nsys 0.25\n";
    assert_eq!(time_posix_value(nested, "real").unwrap(), 2.5);
    assert_eq!(time_posix_value(nested, "system-time").unwrap(), 0.25);

    assert!(matches!(
        time_posix_value("real 1.0\n", "real"),
        Err(ParseError::NotFound { .. })
    ));
    assert!(matches!(
        time_posix_value("real abc\nuser 1\nsys 1\n", "real"),
        Err(ParseError::MalformedLine { line: 1, .. })
    ));
    assert!(matches!(
        time_posix_value("real 1\nuser 1\nsys 1\n", "wall"),
        Err(ParseError::MissingField { .. })
    ));
    let extractor = Extractor::TimePosix {
        field: "real".to_string(),
    };
    assert_eq!(
        extract(
            &extractor,
            b"real 99\nuser 0\nsys 0\n",
            fixture("gnu-time-p-sleep.txt").as_bytes()
        )
        .unwrap(),
        0.20
    );
}

#[test]
fn human_readable_report() {
    let rows = perf_stat_text(&fixture("perf-6.1-human.txt")).unwrap();
    let events: Vec<&str> = rows.iter().map(|row| row.event.as_str()).collect();
    assert_eq!(
        events,
        [
            "cycles",
            "instructions",
            "task-clock",
            "page-faults:u",
            "time-elapsed",
            "user",
            "sys"
        ]
    );
    assert_eq!(perf_event_value(&rows, "task-clock").unwrap(), 0.61);
    assert_eq!(rows[2].unit, "msec");
    assert_eq!(rows[2].metric_value, Some(0.433));
    assert_eq!(rows[2].metric_unit.as_deref(), Some("CPUs utilized"));
    assert_eq!(perf_event_value(&rows, "page-faults:u").unwrap(), 47.0);
    assert_eq!(
        perf_event_value(&rows, "time-elapsed").unwrap(),
        0.001398802
    );
    assert_eq!(perf_event_value(&rows, "user").unwrap(), 0.001613);
    assert!(matches!(
        perf_event_value(&rows, "cycles"),
        Err(ParseError::CounterUnavailable { .. })
    ));

    let repeated = perf_stat_text(&fixture("perf-6.1-human-repeat3.txt")).unwrap();
    let task_clock = repeated
        .iter()
        .find(|row| row.event == "task-clock")
        .unwrap();
    assert_eq!(task_clock.value, CounterValue::Counted(0.71));
    assert_eq!(task_clock.variance_percent, Some(5.59));
    assert_eq!(perf_event_value(&repeated, "page-faults").unwrap(), 50.0);
    let elapsed = repeated
        .iter()
        .find(|row| row.event == "time-elapsed")
        .unwrap();
    assert_eq!(elapsed.value, CounterValue::Counted(0.00471));
    assert_eq!(elapsed.variance_percent, Some(73.31));
    assert_eq!(repeated.len(), 9);

    let hardware = perf_stat(&fixture("perf-human-hackbench.txt")).unwrap();
    assert_eq!(perf_event_value(&hardware, "cycles").unwrap(), 5205202243.0);
    assert_eq!(
        perf_event_value(&hardware, "context-switches").unwrap(),
        41190.0
    );
    assert_eq!(
        perf_event_value(&hardware, "task-clock").unwrap(),
        1708.761321
    );
    let frontend = hardware
        .iter()
        .find(|row| row.event == "stalled-cycles-frontend")
        .unwrap();
    assert_eq!(frontend.metric_value, Some(74.09));
    assert_eq!(
        frontend.metric_unit.as_deref(),
        Some("frontend cycles idle")
    );
    // The continuation line `# 1.48 stalled cycles per insn` is not a counter.
    assert_eq!(hardware.len(), 10 + 1);

    // Older perf put the unit after the event; multiplexed counters end in
    // the fraction of time they ran.
    let older = "Performance counter stats for 'dd' (5 runs):\n\n          1.879704      task-clock (msec)         #    0.639 CPUs utilized            ( +-  6.16% )\n     1,234,567      cycles                    #    0.657 GHz                      (66.67%)\n";
    let rows = perf_stat_text(older).unwrap();
    assert_eq!(rows[0].unit, "msec");
    assert_eq!(rows[0].event, "task-clock");
    assert_eq!(rows[0].variance_percent, Some(6.16));
    assert_eq!(rows[1].running_percent, Some(66.67));
    assert_eq!(perf_event_value(&rows, "cycles").unwrap(), 1234567.0);

    // Workload output before the heading is not read as counters.
    let noisy = "12 apples\n\n Performance counter stats for 'x':\n\n 5 page-faults\n";
    let rows = perf_stat_text(noisy).unwrap();
    assert_eq!(rows.len(), 1);
    let extractor = Extractor::PerfStat {
        event: "page-faults".to_string(),
    };
    assert_eq!(extract(&extractor, b"", noisy.as_bytes()).unwrap(), 5.0);
}

#[test]
fn gnu_time_default_format() {
    let output = fixture("gnu-time-default-stress-ng.txt");
    let values = time_verbose(&output).unwrap();
    assert_eq!(values.len(), 12);
    assert_eq!(time_verbose_value(&output, "user-time").unwrap(), 0.09);
    assert_eq!(time_verbose_value(&output, "system-time").unwrap(), 0.57);
    assert_eq!(time_verbose_value(&output, "elapsed").unwrap(), 1.05);
    assert_eq!(time_verbose_value(&output, "percent-cpu").unwrap(), 62.0);
    assert_eq!(time_verbose_value(&output, "max-rss").unwrap(), 10116.0);
    assert_eq!(
        time_verbose_value(&output, "minor-page-faults").unwrap(),
        1192.0
    );
    // The default format has no context switches.
    let error = time_verbose_value(&output, "voluntary-context-switches").unwrap_err();
    assert!(matches!(error, ParseError::MissingField { .. }), "{error}");

    let failed = fixture("gnu-time-default-false.txt");
    assert_eq!(time_verbose_value(&failed, "max-rss").unwrap(), 1084.0);
    let zero = "0.00user 0.00system 0:00.00elapsed ?%CPU (0avgtext+0avgdata 1000maxresident)k\n";
    assert!(time_verbose_value(zero, "percent-cpu").is_err());
    assert_eq!(time_verbose_value(zero, "max-rss").unwrap(), 1000.0);
}

/// A VM without a PMU: the workload's own lines, then perf's. The
/// unsupported counters are missing values; the others read as usual.
#[test]
fn unsupported_counters_on_a_vm_are_missing_values_and_the_rest_reads() {
    let text = fixture("perf-6.1-x-vm-workload.csv");
    let rows = perf_stat_csv(&text).unwrap();
    let events: Vec<&str> = rows.iter().map(|row| row.event.as_str()).collect();
    assert_eq!(
        events,
        ["task-clock", "cycles", "instructions", "page-faults"],
        "the workload's lines are not counters"
    );
    let read = |event: &str| {
        extract(
            &Extractor::PerfStat {
                event: event.to_string(),
            },
            b"",
            text.as_bytes(),
        )
    };
    assert_eq!(read("task-clock").unwrap(), 0.71);
    assert_eq!(read("page-faults").unwrap(), 113.0);
    for event in ["cycles", "instructions"] {
        let error = read(event).unwrap_err();
        assert!(error.is_missing_value(), "{error}");
        assert!(error.to_string().contains("<not supported>"), "{error}");
    }
    // An event perf did not print at all is not a missing value: the
    // experiment asks for something this output never has.
    let typo = read("cycels").unwrap_err();
    assert!(!typo.is_missing_value(), "{typo}");
    assert!(matches!(typo, ParseError::MissingEvent { .. }), "{typo}");
}

#[test]
fn a_group_never_scheduled_is_not_counted_and_missing() {
    let text = fixture("perf-6.1-x-not-counted-group.csv");
    let rows = perf_stat_csv(&text).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1].value, CounterValue::NotCounted);
    assert_eq!(rows[1].running_percent, Some(0.0));
    assert_eq!(perf_event_value(&rows, "task-clock").unwrap(), 1.02);
    for event in ["cycles", "instructions"] {
        let error = perf_event_value(&rows, event).unwrap_err();
        assert!(error.is_missing_value(), "{error}");
        assert!(error.to_string().contains("<not counted>"), "{error}");
    }
}

#[test]
fn json_lines_with_unsupported_and_not_counted_counters() {
    let text = fixture("perf-6.1-json-vm-workload.jsonl");
    let rows = perf_stat_json(&text).unwrap();
    assert_eq!(rows.len(), 4, "the workload's lines are skipped");
    assert_eq!(rows[1].value, CounterValue::NotSupported);
    assert_eq!(rows[2].value, CounterValue::NotCounted);
    assert_eq!(rows[2].running_percent, Some(0.0));
    // `perf_stat` recognises the JSON form despite the leading lines.
    let rows = perf_stat(&text).unwrap();
    assert_eq!(perf_event_value(&rows, "task-clock").unwrap(), 0.710224);
    assert_eq!(perf_event_value(&rows, "page-faults").unwrap(), 113.0);
    let unsupported = perf_event_value(&rows, "cycles").unwrap_err();
    let not_counted = perf_event_value(&rows, "instructions").unwrap_err();
    assert!(unsupported.is_missing_value() && not_counted.is_missing_value());
    assert_eq!(
        not_counted,
        ParseError::CounterUnavailable {
            event: "instructions".to_string(),
            printed: "<not counted>".to_string()
        }
    );
}

#[test]
fn perf_script_with_call_graphs_folds_user_and_kernel_stacks() {
    let output = fixture("perf-6.1-script-call-graph.txt");
    let profile = verdict_parse::fold_perf_script(output.as_bytes());
    assert_eq!(profile.unparsed_lines, 0);
    assert_eq!(profile.samples, 71, "one blank line ends each sample");
    let weights = verdict_parse::symbol_weights(&profile.stacks);
    let symbol = |name: &str| {
        weights
            .iter()
            .find(|weight| weight.symbol == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    assert!(symbol("work_a").self_weight > 0);
    assert!(symbol("work_b").self_weight > 0);
    // Kernel frames came through the same stacks (ls reads directories).
    assert!(symbol("do_syscall_64").inclusive_weight > 0);
    let total_self: u64 = weights.iter().map(|weight| weight.self_weight).sum();
    let leafless: u64 = profile
        .stacks
        .iter()
        .filter(|stack| stack.frames.is_empty())
        .map(|stack| stack.weight)
        .sum();
    assert_eq!(total_self + leafless, profile.weight);
    let flat = verdict_parse::fold_perf_script(fixture("perf-6.1-script-flat.txt").as_bytes());
    assert_eq!(flat.unparsed_lines, 0);
    assert!(flat.samples > 10);
    assert!(flat.stacks.iter().all(|stack| stack.frames.len() == 1));
}
