//! Every parser returns a value or an error for any input, never panics:
//! random text, and random lines assembled from pieces of real tool output
//! (so the inputs get past the first checks of each parser).

use proptest::prelude::*;
use verdict_parse::{
    Extractor, csv_column, extract, go_benchmarks, hyperfine_json, parse_json_path, plain_numbers,
    stress_ng_text, stress_ng_yaml,
};

fn extractors() -> Vec<Extractor> {
    vec![
        Extractor::StressNg {
            stressor: None,
            field: "bogo-ops".to_string(),
        },
        Extractor::StressNg {
            stressor: Some("kill".to_string()),
            field: "kill-calls-per-sec".to_string(),
        },
        Extractor::StressNgYaml {
            stressor: None,
            field: "bogo-ops".to_string(),
        },
        Extractor::PerfStat {
            event: "cycles".to_string(),
        },
        Extractor::TimeVerbose {
            field: "max-rss".to_string(),
        },
        Extractor::TimePosix {
            field: "real".to_string(),
        },
        Extractor::Regex {
            pattern: r"(?P<value>[\d,.]+)".to_string(),
        },
        Extractor::JsonPath {
            path: "results[0].times[-1]".to_string(),
        },
        Extractor::Number,
        Extractor::GoBenchmark {
            benchmark: "X".to_string(),
            unit: "ns/op".to_string(),
        },
    ]
}

fn pieces() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "stress-ng: metrc: [1] ",
        "stress-ng: info:  [1] ",
        "stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s CPU used per       RSS Max",
        "kill",
        " 123",
        " 1.5",
        " -",
        " calls per sec (",
        "<not supported>",
        "<not counted>",
        ",",
        ",,",
        "msec",
        "cycles",
        "cpu/event=0x3c",
        "/",
        "%",
        "+-",
        "(",
        ")",
        "#",
        "\t",
        "Performance counter stats for 'x':",
        "\tMaximum resident set size (kbytes): ",
        "\tElapsed (wall clock) time (h:mm:ss or m:ss): ",
        "1:2:3:4",
        ":",
        "real ",
        "user ",
        "sys ",
        "1m",
        "s",
        "h",
        "BenchmarkX",
        " 10",
        " ns/op",
        "goos: linux",
        "metrics:",
        "  - stressor: kill",
        "    bogo-ops: 5",
        "{\"results\": [{\"command\": \"x\", \"times\": [1]}]}",
        "{\"event\" : \"cycles\", \"counter-value\" : ",
        "\"",
        "\u{feff}",
        "é",
        "\n",
        "\r\n",
    ]);
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

fn run_everything(text: &str) {
    for extractor in extractors() {
        let _ = extractor.validate();
        let _ = extract(&extractor, text.as_bytes(), text.as_bytes());
    }
    let _ = stress_ng_text(text);
    let _ = stress_ng_yaml(text);
    let _ = plain_numbers(text);
    let _ = csv_column(text, "a");
    let _ = hyperfine_json(text);
    let _ = go_benchmarks(text);
    let _ = parse_json_path(text);
    let _ = Extractor::Regex {
        pattern: text.to_string(),
    }
    .validate();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        run_everything(&text);
    }

    #[test]
    fn pieces_of_real_output_never_panic(text in pieces()) {
        run_everything(&text);
    }
}
