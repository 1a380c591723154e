//! Multi-sample inputs (Go benchmark format, hyperfine JSON, CSV, plain
//! numbers) and the `Extractor` dispatch for regex, JSON path and numbers.
//! Reads fixture files; nothing else.

use std::path::PathBuf;

use verdict_parse::{
    Extractor, ParseError, Stream, csv_column, extract, extract_from, go_benchmark_series,
    go_benchmark_values, go_benchmarks, hyperfine_json, hyperfine_times, plain_numbers,
};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

#[test]
fn benchstat_old_and_new() {
    for name in ["old.txt", "new.txt"] {
        let results = go_benchmarks(&fixture(&format!("benchstat/{name}"))).unwrap();
        assert_eq!(results.len(), 20, "{name}");
        let series = go_benchmark_series(&results);
        let keys: Vec<(&str, &str)> = series
            .iter()
            .map(|series| (series.name.as_str(), series.unit.as_str()))
            .collect();
        assert_eq!(
            keys,
            [
                ("Encode/format=json-48", "ns/op"),
                ("Encode/format=gob-48", "ns/op")
            ],
            "{name}"
        );
        assert!(
            series.iter().all(|series| series.values.len() == 10),
            "{name}"
        );
        let configuration = &results[0].configuration;
        assert!(
            configuration.contains(&("goos".to_string(), "linux".to_string())),
            "{name}"
        );
        assert!(configuration.contains(&(
            "pkg".to_string(),
            "golang.org/x/perf/cmd/benchstat/testdata".to_string()
        )));
    }
    let gob = go_benchmark_values(
        &fixture("benchstat/old.txt"),
        "BenchmarkEncode/format=gob-48",
        "ns/op",
    )
    .unwrap();
    assert_eq!(
        gob,
        [
            3069.0, 3075.0, 3069.0, 3067.0, 3207.0, 3064.0, 3064.0, 3058.0, 3059.0, 3062.0
        ]
    );
    let iterations = go_benchmarks(&fixture("benchstat/old.txt")).unwrap()[0].iterations;
    assert_eq!(iterations, 690848);
}

#[test]
fn benchstat_crc_old_has_two_units_per_benchmark() {
    let results = go_benchmarks(&fixture("benchstat/crc-old.txt")).unwrap();
    assert_eq!(results.len(), 360);
    let series = go_benchmark_series(&results);
    assert_eq!(series.len(), 72);
    let names: std::collections::BTreeSet<&str> =
        series.iter().map(|series| series.name.as_str()).collect();
    assert_eq!(names.len(), 36);
    assert_eq!(series[0].name, "CRC32/poly=IEEE/size=15/align=0-8");
    assert_eq!(series[0].unit, "ns/op");
    assert_eq!(series[1].unit, "MB/s");
    assert_eq!(&series[0].values[..3], [44.6, 47.3, 44.6]);
    assert_eq!(&series[1].values[..2], [336.59, 317.29]);
    assert_eq!(
        results[0].configuration,
        [
            ("pkg".to_string(), "hash/crc32".to_string()),
            ("goarch".to_string(), "amd64".to_string()),
            ("goos".to_string(), "darwin".to_string()),
            ("note".to_string(), "hw acceleration disabled".to_string()),
        ]
    );
}

#[test]
fn go_configuration_changes_apply_to_later_results() {
    let results = go_benchmarks(&fixture("benchstat/issue19634.txt")).unwrap();
    assert_eq!(results.len(), 10);
    let note = |index: usize| {
        results[index]
            .configuration
            .iter()
            .find(|(key, _)| key == "note")
            .map(|(_, value)| value.clone())
    };
    assert_eq!(note(0).as_deref(), Some("before"));
    assert_eq!(note(9).as_deref(), Some("after"));

    let suffixarray = go_benchmarks(&fixture("benchstat/suffixarray.bench")).unwrap();
    assert_eq!(suffixarray.len(), 420);
    assert_eq!(go_benchmark_series(&suffixarray).len(), 42 * 4);
    assert_eq!(suffixarray[0].values.len(), 4);
    assert_eq!(suffixarray[0].values[3], (2.0, "allocs/op".to_string()));
}

#[test]
fn go_errors() {
    assert!(matches!(
        go_benchmarks(""),
        Err(ParseError::EmptyOutput { .. })
    ));
    assert!(matches!(
        go_benchmarks("PASS\nok  \tpkg\t1.0s\n"),
        Err(ParseError::NotFound { .. })
    ));
    let error = go_benchmarks("goos: linux\nBenchmarkX-8 100 12 ns/op 5\n").unwrap_err();
    assert!(
        matches!(error, ParseError::MalformedLine { line: 2, .. }),
        "{error}"
    );
    let error = go_benchmarks("BenchmarkX-8 many 12 ns/op\n").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("expected an iteration count, found `many`"),
        "{error}"
    );
    // "Benchmarking..." is prose, not a result (lower-case after the prefix).
    assert_eq!(
        go_benchmarks("Benchmarking now\nBenchmarkY 1 2 ns/op\n")
            .unwrap()
            .len(),
        1
    );
    let error = go_benchmark_values(
        &fixture("benchstat/old.txt"),
        "Encode/format=xml-48",
        "ns/op",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "find Go benchmark series `Encode/format=xml-48 (ns/op)`: the input has `Encode/format=json-48 (ns/op)`, `Encode/format=gob-48 (ns/op)`"
    );
}

#[test]
fn hyperfine_export() {
    let results = hyperfine_json(&fixture("hyperfine-1.15-true.json")).unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].command, "true");
    assert_eq!(results[0].times.len(), 5);
    assert_eq!(results[0].median, Some(0.001433093));
    assert_eq!(
        hyperfine_times(&fixture("hyperfine-1.15-true.json"), None).unwrap()[0],
        0.000714897
    );

    let two = fixture("hyperfine-1.15-two-commands.json");
    assert_eq!(
        hyperfine_times(&two, Some("sleep 0.01")).unwrap(),
        [0.015443023, 0.012166257000000002, 0.016267134000000003]
    );
    assert_eq!(hyperfine_times(&two, Some("sleep 0.02")).unwrap().len(), 3);
    assert!(
        hyperfine_times(&two, None)
            .unwrap_err()
            .to_string()
            .contains("the file has 2 commands")
    );
    assert_eq!(
        hyperfine_times(&two, Some("sleep 1"))
            .unwrap_err()
            .to_string(),
        "find hyperfine series `sleep 1`: the file has `sleep 0.01`, `sleep 0.02`"
    );
    assert!(matches!(
        hyperfine_json("{\"results\": []}"),
        Err(ParseError::InvalidDocument { .. })
    ));
    assert!(matches!(
        hyperfine_json("[1, 2]"),
        Err(ParseError::InvalidDocument { .. })
    ));
}

#[test]
fn csv_columns() {
    let text = "run,kernel,\"ops/s\"\n1,7.1,\"69,107\"\n2,7.1,70248\n\n3,7.2-rc4,56247\n";
    assert_eq!(
        csv_column(text, "ops/s").unwrap(),
        [69107.0, 70248.0, 56247.0]
    );
    assert_eq!(csv_column(text, "run").unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(
        csv_column(text, "throughput").unwrap_err().to_string(),
        "find CSV column `throughput`: the header has `run`, `kernel`, `ops/s`"
    );
    let error = csv_column(text, "kernel").unwrap_err();
    assert!(
        matches!(error, ParseError::MalformedLine { line: 5, .. }),
        "{error}"
    );
    assert_eq!(csv_column("\u{feff}a,b\n1,2\n", "a").unwrap(), [1.0]);
    let short = "a,b\n1,2\n3\n";
    assert!(matches!(
        csv_column(short, "b"),
        Err(ParseError::MalformedLine { line: 3, .. })
    ));
    assert!(matches!(
        csv_column("a,b\n", "a"),
        Err(ParseError::EmptyOutput { .. })
    ));
    assert!(matches!(
        csv_column("", "a"),
        Err(ParseError::EmptyOutput { .. })
    ));
}

#[test]
fn plain_numbers_from_story_one() {
    // The N=15 medians of the mailing-list case (a "19% regression"), as a user might paste them.
    let text = "# enforcing, 7.1 vs 7.2-rc4\n68,275\n70,154\n\n# permissive\n68,082\n67,166\n";
    assert_eq!(
        plain_numbers(text).unwrap(),
        [68275.0, 70154.0, 68082.0, 67166.0]
    );
    let error = plain_numbers("68,275\n70,154 ops\n-\n").unwrap_err();
    assert!(
        matches!(error, ParseError::MalformedLine { line: 3, .. }),
        "{error}"
    );
}

#[test]
fn extractor_dispatch_for_generic_formats() {
    let regex = Extractor::Regex {
        pattern: r"bogo-ops/s: (?P<value>[\d,.]+)".to_string(),
    };
    assert_eq!(
        extract(&regex, b"start\nbogo-ops/s: 69,107\n", b"").unwrap(),
        69107.0
    );
    assert!(matches!(
        extract(&regex, b"", b"bogo-ops/s: 1\n"),
        Err(ParseError::EmptyOutput { .. })
    ));
    assert_eq!(
        extract_from(&regex, Stream::Stderr, b"", b"bogo-ops/s: 1\n").unwrap(),
        1.0
    );
    assert_eq!(
        extract_from(&regex, Stream::Both, b"x", b"bogo-ops/s: 2\n").unwrap(),
        2.0
    );
    // `output`: the usual stream (stdout for a regex), then both.
    assert_eq!(
        extract_from(&regex, Stream::Output, b"bogo-ops/s: 3\n", b"").unwrap(),
        3.0
    );
    assert_eq!(
        extract_from(&regex, Stream::Output, b"x", b"bogo-ops/s: 4\n").unwrap(),
        4.0
    );
    assert!(matches!(
        extract_from(&regex, Stream::Output, b"", b"nothing\n"),
        Err(ParseError::EmptyOutput { .. })
    ));
    assert!(matches!(
        extract_from(&regex, Stream::File("m.txt".to_string()), b"bogo-ops/s: 5\n", b""),
        Err(ParseError::FileNotRead { path }) if path == "m.txt"
    ));

    let json = Extractor::JsonPath {
        path: "results[0].mean".to_string(),
    };
    assert_eq!(
        extract(&json, fixture("hyperfine-1.15-true.json").as_bytes(), b"").unwrap(),
        0.0019347146000000003
    );

    let number = Extractor::Number;
    assert_eq!(extract(&number, b"# ops\n12345\n", b"").unwrap(), 12345.0);
    assert_eq!(
        extract(&number, b"1\n2\n", b"").unwrap_err().to_string(),
        "extract one plain number value: found 2 values"
    );

    let go = Extractor::GoBenchmark {
        benchmark: "BenchmarkY-8".to_string(),
        unit: "B/op".to_string(),
    };
    assert_eq!(
        extract(&go, b"BenchmarkY-8 10 5.5 ns/op 64 B/op\nPASS\n", b"").unwrap(),
        64.0
    );

    // Invalid UTF-8 elsewhere in the stream does not lose the metric.
    let error = extract(&number, b"\xff\xfe # junk\n7\n", b"").unwrap_err();
    assert!(error.to_string().contains("line 1"), "{error}");
    let regex = Extractor::Regex {
        pattern: r"ops: (\d+)".to_string(),
    };
    assert_eq!(extract(&regex, b"\xff\xfe\nops: 7\n", b"").unwrap(), 7.0);
}

#[test]
fn validation_catches_bad_descriptions_before_any_run() {
    let bad_regex = Extractor::Regex {
        pattern: "ops: (\\d+".to_string(),
    };
    let error = bad_regex.validate().unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("compile regex `ops: (\\d+`: "),
        "{error}"
    );
    assert!(
        Extractor::JsonPath {
            path: "results[".to_string()
        }
        .validate()
        .is_err()
    );
    assert!(
        Extractor::TimeVerbose {
            field: "rss".to_string()
        }
        .validate()
        .is_err()
    );
    assert!(
        Extractor::TimeVerbose {
            field: "max-rss".to_string()
        }
        .validate()
        .is_ok()
    );
    assert!(
        Extractor::TimePosix {
            field: "wall".to_string()
        }
        .validate()
        .is_err()
    );
    assert!(
        Extractor::PerfStat {
            event: " ".to_string()
        }
        .validate()
        .is_err()
    );
    assert!(
        Extractor::StressNg {
            stressor: Some(String::new()),
            field: "bogo-ops".to_string()
        }
        .validate()
        .is_err()
    );
    assert!(
        Extractor::StressNg {
            stressor: None,
            field: "bogo-ops".to_string()
        }
        .validate()
        .is_ok()
    );
    assert!(Extractor::Number.validate().is_ok());
}

#[test]
fn extractor_deserializes_from_a_tagged_map() {
    let extractor: Extractor = serde_json::from_str(
        r#"{"kind": "stress-ng", "stressor": "kill", "field": "bogo-ops-per-second-real-time"}"#,
    )
    .unwrap();
    assert_eq!(
        extractor,
        Extractor::StressNg {
            stressor: Some("kill".to_string()),
            field: "bogo-ops-per-second-real-time".to_string()
        }
    );
    let number: Extractor = serde_json::from_str(r#"{"kind": "number"}"#).unwrap();
    assert_eq!(number, Extractor::Number);
    let perf: Extractor =
        serde_json::from_str(r#"{"kind": "perf-stat", "event": "cycles:u"}"#).unwrap();
    assert_eq!(perf.default_stream(), Stream::Stderr);
    assert!(
        serde_json::from_str::<Extractor>(r#"{"kind": "perf-stat", "evnt": "cycles"}"#).is_err()
    );
    assert!(serde_json::from_str::<Extractor>(r#"{"kind": "vmstat"}"#).is_err());
}
