//! stress-ng extraction on real captured output (tests/fixtures/README.md
//! says which file came from where). Reads fixture files; nothing else.

use std::path::PathBuf;

use verdict_parse::{
    Extractor, ParseError, extract, stress_ng_text, stress_ng_value, stress_ng_yaml,
};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

#[test]
fn metrc_prefix_metrics_brief_single_stressor() {
    let rows = stress_ng_text(&fixture("stress-ng-0.15.06-kill-metrics-brief.txt")).unwrap();
    assert_eq!(rows.len(), 1);
    let kill = &rows[0];
    assert_eq!(kill.stressor, "kill");
    assert_eq!(kill.bogo_ops, 147353.0);
    assert_eq!(kill.real_time, 2.00);
    assert_eq!(kill.usr_time, 0.30);
    assert_eq!(kill.sys_time, 1.78);
    assert_eq!(kill.bogo_ops_per_second_real_time, 73668.60);
    assert_eq!(kill.bogo_ops_per_second_usr_sys_time, 70864.70);
    // The miscellaneous metric, under the name the YAML uses.
    assert_eq!(kill.field("kill-calls-per-sec"), Some(583155.97));
    assert_eq!(
        stress_ng_value(&rows, None, "bogo-ops-per-second-real-time").unwrap(),
        73668.60
    );
    assert_eq!(
        stress_ng_value(&rows, Some("kill"), "wall-clock-time").unwrap(),
        2.00
    );
}

#[test]
fn metrc_prefix_full_metrics_has_cpu_and_rss_columns() {
    let rows = stress_ng_text(&fixture("stress-ng-0.15.06-kill-metrics.txt")).unwrap();
    let kill = &rows[0];
    assert_eq!(kill.bogo_ops, 89696.0);
    assert_eq!(kill.bogo_ops_per_second_usr_sys_time, 61469.21);
    assert_eq!(kill.field("cpu-usage-per-instance"), Some(72.94));
    assert_eq!(kill.field("max-rss"), Some(2436.0));
    assert_eq!(kill.field("kill-calls-per-sec"), Some(357890.45));
}

#[test]
fn two_stressors_need_a_name() {
    let rows = stress_ng_text(&fixture("stress-ng-0.15.06-kill-cpu-metrics-brief.txt")).unwrap();
    let names: Vec<&str> = rows.iter().map(|row| row.stressor.as_str()).collect();
    assert_eq!(names, ["kill", "cpu"]);
    assert_eq!(
        stress_ng_value(&rows, Some("cpu"), "bogo-ops").unwrap(),
        1024.0
    );
    assert_eq!(
        stress_ng_value(&rows, Some("cpu"), "usr-time").unwrap(),
        0.87
    );
    let error = stress_ng_value(&rows, None, "bogo-ops").unwrap_err();
    assert_eq!(
        error.to_string(),
        "choose a stress-ng metrics row: the output has 2 rows (`kill`, `cpu`); name the stressor"
    );
    let error = stress_ng_value(&rows, Some("fork"), "bogo-ops").unwrap_err();
    assert_eq!(
        error.to_string(),
        "find a stress-ng metrics row for stressor `fork`: the output has rows for `kill`, `cpu`"
    );
    let error = stress_ng_value(&rows, Some("cpu"), "bogo-ops-per-minute").unwrap_err();
    assert!(matches!(error, ParseError::MissingField { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("`bogo-ops-per-second-real-time`"),
        "{error}"
    );

    let full = stress_ng_text(&fixture("stress-ng-0.15.06-kill-cpu-metrics.txt")).unwrap();
    assert_eq!(full[1].field("max-rss"), Some(6504.0));
    assert_eq!(full[1].sys_time, 0.00);
}

#[test]
fn info_prefix_of_older_versions() {
    let rows = stress_ng_text(&fixture("stress-ng-readme-info-metrics.txt")).unwrap();
    let names: Vec<&str> = rows.iter().map(|row| row.stressor.as_str()).collect();
    assert_eq!(names, ["cpu", "vm", "hdd", "fork"]);
    assert_eq!(
        stress_ng_value(&rows, Some("vm"), "bogo-ops").unwrap(),
        2261023.0
    );
    assert_eq!(
        stress_ng_value(&rows, Some("hdd"), "real-time").unwrap(),
        123.78
    );
    assert_eq!(
        stress_ng_value(&rows, Some("fork"), "bogo-ops-per-second-usr-sys-time").unwrap(),
        4459.13
    );
    assert_eq!(
        stress_ng_value(&rows, Some("cpu"), "cpu-usage-per-instance").unwrap(),
        94.42
    );
    assert_eq!(rows[0].field("max-rss"), None);

    // A miscellaneous line right after the row, with no "miscellaneous
    // metrics:" heading, and info lines that mention numbers before the table.
    let vdso = stress_ng_text(&fixture("stress-ng-readme-info-vdso.txt")).unwrap();
    assert_eq!(vdso.len(), 1);
    assert_eq!(vdso[0].bogo_ops_per_second_real_time, 84375055.96);
    assert_eq!(vdso[0].field("nanoseconds-per-call"), Some(9.88));
}

#[test]
fn timestamped_lines() {
    // `--timestamp` output: a time between the program name and the level.
    // This excerpt starts at the rows, without the header, so it is not a table.
    let text = fixture("stress-ng-timestamped-metrc.txt");
    assert!(stress_ng_text(&text).is_err());
    let with_header = format!(
        "stress-ng: 10:48:33.34 metrc: [1858952] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s CPU used per       RSS Max\n{text}"
    );
    let rows = stress_ng_text(&with_header).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].bogo_ops, 293388215356.0);
    assert_eq!(rows[2].field("max-rss"), Some(5932.0));
}

#[test]
fn yaml_metrics_section() {
    let rows = stress_ng_yaml(&fixture("stress-ng-0.15.06-kill-cpu.yaml")).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        stress_ng_value(&rows, Some("kill"), "bogo-ops").unwrap(),
        81713.0
    );
    assert_eq!(
        stress_ng_value(&rows, Some("kill"), "bogo-ops-per-second-real-time").unwrap(),
        40796.506054
    );
    assert_eq!(
        stress_ng_value(&rows, Some("kill"), "wall-clock-time").unwrap(),
        2.002941
    );
    assert_eq!(
        stress_ng_value(&rows, Some("kill"), "real-time").unwrap(),
        2.002941
    );
    assert_eq!(
        stress_ng_value(&rows, Some("kill"), "system-time").unwrap(),
        1.252295
    );
    assert_eq!(
        stress_ng_value(&rows, Some("kill"), "kill-calls-per-sec").unwrap(),
        442568.481551
    );
    assert_eq!(
        stress_ng_value(&rows, Some("cpu"), "max-rss").unwrap(),
        6500.0
    );
    assert!(stress_ng_value(&rows, Some("cpu"), "kill-calls-per-sec").is_err());

    // The same run's text and YAML agree to the text's two decimals.
    let text = stress_ng_text(&fixture("stress-ng-0.15.06-kill-cpu-metrics-brief.txt")).unwrap();
    for field in verdict_parse::STRESS_NG_FIELDS {
        let from_text = stress_ng_value(&text, Some("kill"), field).unwrap();
        let from_yaml = stress_ng_value(&rows, Some("kill"), field).unwrap();
        assert!(
            (from_text - from_yaml).abs() <= 0.005 + 1e-9,
            "{field}: {from_text} vs {from_yaml}"
        );
    }
}

#[test]
fn yaml_errors() {
    assert!(matches!(
        stress_ng_yaml(""),
        Err(ParseError::EmptyOutput { .. })
    ));
    let no_metrics = "---\nsystem-info:\n  cpus: 2\n";
    assert_eq!(
        stress_ng_yaml(no_metrics).unwrap_err().to_string(),
        "parse stress-ng YAML document: expected a `metrics:` section (was --metrics or --metrics-brief given?)"
    );
    let missing_key = "metrics:\n  - stressor: kill\n    bogo-ops: 5\n";
    assert!(
        stress_ng_yaml(missing_key)
            .unwrap_err()
            .to_string()
            .contains("numeric `real-time`")
    );
    assert!(matches!(
        stress_ng_yaml("metrics: [\n"),
        Err(ParseError::InvalidDocument { .. })
    ));
}

#[test]
fn text_errors() {
    assert_eq!(
        stress_ng_text("").unwrap_err(),
        ParseError::EmptyOutput {
            format: "stress-ng"
        }
    );
    // A run without --metrics-brief prints no table.
    let no_table = "stress-ng: info:  [5497] dispatching hogs: 1 kill\nstress-ng: info:  [5497] successful run completed in 2.00s\n";
    let error = stress_ng_text(no_table).unwrap_err();
    assert_eq!(
        error.to_string(),
        "find a stress-ng metrics table in the output: no `stressor bogo ops ...` header followed by rows (was --metrics-brief or --metrics given?)"
    );
}

#[test]
fn extract_reads_stderr_and_stdout() {
    let extractor = Extractor::StressNg {
        stressor: Some("kill".to_string()),
        field: "bogo-ops-per-second-real-time".to_string(),
    };
    let output = fixture("stress-ng-0.15.06-kill-metrics-brief.txt");
    // stress-ng logs to stderr by default...
    assert_eq!(
        extract(&extractor, b"workload chatter\n", output.as_bytes()).unwrap(),
        73668.60
    );
    // ...and to stdout with --stdout.
    assert_eq!(
        extract(&extractor, output.as_bytes(), b"").unwrap(),
        73668.60
    );
    let yaml = Extractor::StressNgYaml {
        stressor: None,
        field: "bogo-ops".to_string(),
    };
    let error = extract(
        &yaml,
        fixture("stress-ng-0.15.06-kill-cpu.yaml").as_bytes(),
        b"",
    )
    .unwrap_err();
    assert!(
        matches!(error, ParseError::AmbiguousStressor { .. }),
        "{error}"
    );
}

#[test]
fn concatenated_yaml_documents() {
    let two_runs = format!(
        "{}{}",
        fixture("stress-ng-0.15.06-kill-cpu.yaml"),
        fixture("stress-ng-0.15.06-kill-cpu-metrics.yaml")
    );
    let rows = stress_ng_yaml(&two_runs).unwrap();
    let kill: Vec<f64> = rows
        .iter()
        .filter(|row| row.stressor == "kill")
        .map(|row| row.bogo_ops)
        .collect();
    assert_eq!(kill, [81713.0, 102845.0]);
    // Two rows for one stressor: a single value cannot be chosen.
    assert!(matches!(
        stress_ng_value(&rows, Some("kill"), "bogo-ops"),
        Err(ParseError::AmbiguousStressor { .. })
    ));
}
