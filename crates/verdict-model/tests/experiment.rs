//! Experiment files: the documented forms load, and every mistake is named
//! with file:line:col, the key and what was expected.

use verdict_model::{
    Analysis, Better, Builtin, CommandSpec, Experiment, MetricSource, Order, SamplingMode,
};

fn error_of(text: &str) -> String {
    Experiment::parse(text, "exp.toml").unwrap_err().to_string()
}

#[test]
fn simplest_file_from_the_issue_works_as_written() {
    let text = r#"name = "gzip-levels"
command = ["gzip", "-{level}", "-c", "data.bin"]

[factors]
level = ["1", "9"]

[sampling]
iterations = 15
"#;
    let experiment = Experiment::parse(text, "gzip.toml").unwrap();
    assert_eq!(experiment.name, "gzip-levels");
    assert_eq!(experiment.sampling.iterations, 15);
    assert_eq!(experiment.sampling.order, Order::Interleaved);
    assert_eq!(
        experiment.primary_metric().source,
        MetricSource::Builtin(Builtin::Wall)
    );
    assert_eq!(experiment.primary_metric().direction, Better::Lower);
    let cells = experiment.cells();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[1].label(), "level=9");
    assert_eq!(
        experiment.command.substitute(&cells[1].levels),
        CommandSpec::Argv(vec![
            "gzip".into(),
            "-9".into(),
            "-c".into(),
            "data.bin".into()
        ])
    );
}

#[test]
fn substituted_values_stay_one_argument() {
    let text = r#"name = "x"
command = ["printf", "%s\n", "{value}"]
[factors]
value = ["a b; rm -rf /", "$(id)"]
"#;
    let experiment = Experiment::parse(text, "x.toml").unwrap();
    let cells = experiment.cells();
    let CommandSpec::Argv(argv) = experiment.command.substitute(&cells[0].levels) else {
        panic!("argv expected");
    };
    assert_eq!(argv, vec!["printf", "%s\n", "a b; rm -rf /"]);
}

#[test]
fn unknown_key_names_file_line_column_and_table() {
    let message =
        error_of("name = \"x\"\ncommand = [\"true\"]\n[sampling]\niterations = 3\nbogus = 1\n");
    assert!(
        message.starts_with("exp.toml:5:1: unknown field `bogus`"),
        "{message}"
    );
    assert!(message.contains("[sampling]"), "{message}");
}

#[test]
fn invalid_values_say_what_was_expected() {
    let message = error_of("name = \"x\"\ncommand = [\"true\"]\n[sampling]\niterations = 0\n");
    assert_eq!(
        message,
        "exp.toml:4:14: `iterations` = 0; expected an integer from 1 to 1000000 (in [sampling])"
    );
    let message = error_of("name = \"x\"\ncommand = [\"true\"]\n[sampling]\norder = \"random\"\n");
    assert!(
        message.starts_with(
            "exp.toml:4:9: `order` = \"random\"; expected \"interleaved\" or \"sequential\""
        ),
        "{message}"
    );
    let message = error_of("name = \"x\"\ncommand = \"sleep 1 | cat\"\n");
    assert!(
        message.starts_with("exp.toml:2:11: `command` is a string; expected an argv array"),
        "{message}"
    );
    let message = error_of("name = \"x\"\ncommand = [\"echo\", \"{nope}\"]\n");
    assert!(message.contains("no factor `nope`"), "{message}");
    let message = error_of("name = 3\ncommand = [\"true\"]\n");
    assert!(
        message.starts_with("exp.toml:1:8: invalid type: integer `3`, expected a string"),
        "{message}"
    );
}

#[test]
fn shell_strings_never_get_placeholders_spliced() {
    let message = error_of(
        "name = \"x\"\nshell = true\ncommand = \"echo {mode}\"\n[factors]\nmode = [\"a\"]\n",
    );
    assert!(message.contains("$VERDICT_MODE"), "{message}");
    let experiment = Experiment::parse("name = \"x\"\nshell = true\ncommand = \"echo \\\"$VERDICT_MODE\\\" | cat\"\n[factors]\nmode = [\"a\"]\n", "x").unwrap();
    assert!(matches!(experiment.command, CommandSpec::Shell(_)));
}

#[test]
fn factor_tables_levels_setup_and_adaptive_sampling() {
    let text = r#"name = "kill"
command = ["stress-ng", "--kill", "1", "-t", "5", "--metrics-brief"]

[factors.selinux]
levels = ["enforcing", "permissive"]
baseline = "permissive"
setup = ["setenforce", "{selinux}"]

[factors.preempt]
levels = [{ value = "full", setup = ["sh", "-c", "echo full > /sys/kernel/debug/sched/preempt"] }, "lazy"]

[[metrics]]
name = "bogo-ops/s"
source = "stress-ng"
stressor = "kill"
from = "stderr"

[sampling]
mode = "adaptive"
min = 5
max = 40
timeout = "60s"
cooldown = 0.5
"#;
    let experiment = Experiment::parse(text, "kill.toml").unwrap();
    let selinux = experiment.factor("selinux").unwrap();
    assert_eq!(selinux.baseline, 1);
    assert_eq!(
        selinux.levels[1].setup,
        Some(CommandSpec::Argv(vec![
            "setenforce".into(),
            "permissive".into()
        ]))
    );
    let preempt = experiment.factor("preempt").unwrap();
    assert!(preempt.levels[0].setup.is_some() && preempt.levels[1].setup.is_none());
    assert_eq!(experiment.primary_metric().direction, Better::Higher);
    assert_eq!(
        experiment.sampling.mode,
        SamplingMode::Adaptive { min: 5, max: 40 }
    );
    assert_eq!(
        experiment.sampling.timeout,
        Some(std::time::Duration::from_secs(60))
    );
    assert_eq!(experiment.cells().len(), 4);
}

#[test]
fn regex_metric_is_validated_at_load() {
    let message = error_of(
        "name = \"x\"\ncommand = [\"true\"]\n[[metrics]]\nname = \"v\"\nsource = \"regex\"\npattern = \"(\"\ndirection = \"lower\"\n",
    );
    assert!(
        message.starts_with("exp.toml:3:1: metric `v`: compile regex `(`"),
        "{message}"
    );
    let message = error_of(
        "name = \"x\"\ncommand = [\"true\"]\n[[metrics]]\nname = \"v\"\nsource = \"regex\"\npattern = \"(?P<value>\\\\d+)\"\n",
    );
    assert!(message.contains("needs `direction`"), "{message}");
}

#[test]
fn comparisons_are_each_level_against_its_baseline_per_other_combination() {
    let text = "name = \"x\"\ncommand = [\"true\"]\n[factors]\nkernel = [\"7.1\", \"7.2\"]\nmode = [\"enforcing\", \"permissive\", \"disabled\"]\n";
    let experiment = Experiment::parse(text, "x").unwrap();
    let cells = experiment.cells();
    let labels: Vec<(String, String, String)> = experiment
        .comparisons()
        .iter()
        .map(|c| {
            (
                c.factor.clone(),
                cells[c.baseline_cell].label(),
                cells[c.candidate_cell].label(),
            )
        })
        .collect();
    // kernel: 3 comparisons (one per mode); mode: 2 non-baseline levels x 2 kernels.
    assert_eq!(labels.len(), 3 + 4, "{labels:?}");
    assert!(labels.contains(&(
        "kernel".into(),
        "kernel=7.1,mode=disabled".into(),
        "kernel=7.2,mode=disabled".into()
    )));
    assert!(labels.contains(&(
        "mode".into(),
        "kernel=7.2,mode=enforcing".into(),
        "kernel=7.2,mode=permissive".into()
    )));
    assert!(!labels.iter().any(|(_, b, c)| b == c));
}

#[test]
fn placeholders_inside_shell_scripts_are_refused_everywhere() {
    let refused = [
        "name = \"x\"\ncommand = [\"sh\", \"-c\", \"echo {v}\"]\n[factors]\nv = [\"a; echo INJECTED\"]\n",
        "name = \"x\"\ncommand = [\"/bin/bash\", \"-ec\", \"run {v}\"]\n[factors]\nv = [\"a\"]\n",
        "name = \"x\"\ncommand = [\"true\"]\n[factors.v]\nlevels = [\"a\"]\nsetup = \"echo {v} > /sys/x\"\nshell = true\n",
        "name = \"x\"\ncommand = [\"true\"]\n[factors.v]\nlevels = [\"a\"]\nteardown = [\"sh\", \"-c\", \"echo {v}\"]\n",
        "name = \"x\"\ncommand = [\"true\"]\n[factors]\nv = [{ value = \"a\", setup = [\"dash\", \"-c\", \"echo {v}\"] }]\n",
        "name = \"x\"\ncommand = [\"true\"]\n[factors]\nv = [{ value = \"a\", command = \"echo {v}\", shell = true }]\n",
    ];
    for text in refused {
        let message = error_of(text);
        assert!(
            message.contains("values are never spliced into shell code")
                && message.contains("$VERDICT_V"),
            "{text}\n{message}"
        );
    }
    let accepted = Experiment::parse(
        "name = \"x\"\ncommand = [\"sh\", \"-c\", \"echo \\\"$0\\\"\", \"{v}\"]\n[factors.v]\nlevels = [\"a; echo INJECTED\"]\nsetup = [\"sh\", \"-c\", \"echo \\\"$1\\\" > /tmp/x\", \"sh\", \"{v}\"]\n",
        "x",
    )
    .unwrap();
    let cells = accepted.cells();
    assert_eq!(
        accepted.command_for(&cells[0]),
        CommandSpec::Argv(vec![
            "sh".into(),
            "-c".into(),
            "echo \"$0\"".into(),
            "a; echo INJECTED".into()
        ])
    );
    assert_eq!(
        accepted.factors[0].levels[0].setup,
        Some(CommandSpec::Argv(vec![
            "sh".into(),
            "-c".into(),
            "echo \"$1\" > /tmp/x".into(),
            "sh".into(),
            "a; echo INJECTED".into()
        ]))
    );
}

#[test]
fn a_factor_with_compare_false_is_held_fixed_never_compared() {
    let text = "name = \"x\"\ncommand = [\"true\"]\n[factors]\nbenchmark = { levels = [\"kill\", \"pipe\", \"exec\"], compare = false }\nvariant = [\"a\", \"b\"]\n";
    let experiment = Experiment::parse(text, "x").unwrap();
    assert!(!experiment.factor("benchmark").unwrap().compare);
    assert!(experiment.factor("variant").unwrap().compare);
    let cells = experiment.cells();
    let comparisons = experiment.comparisons();
    // variant b vs a within each of the 3 benchmarks; none across benchmarks.
    assert_eq!(comparisons.len(), 3);
    for comparison in &comparisons {
        assert_eq!(comparison.factor, "variant");
        assert_eq!(
            cells[comparison.baseline_cell].level("benchmark"),
            cells[comparison.candidate_cell].level("benchmark")
        );
    }
    // A run stored before `compare` existed loads with every factor compared.
    let mut stored = serde_json::to_value(&experiment).unwrap();
    for factor in stored["factors"].as_array_mut().unwrap() {
        factor.as_object_mut().unwrap().remove("compare");
    }
    let old: Experiment = serde_json::from_value(stored).unwrap();
    assert_eq!(old.comparisons().len(), 3 + 2 * 2);
    let message = error_of(
        "name = \"x\"\ncommand = [\"true\"]\n[factors]\nbenchmark = { levels = [\"a\"], compare = \"no\" }\n",
    );
    assert!(message.contains("factor `benchmark`"), "{message}");
}

#[test]
fn analysis_is_independent_by_default_and_paired_needs_interleaving() {
    let default = Experiment::parse("name = \"x\"\ncommand = [\"true\"]\n", "exp.toml").unwrap();
    assert_eq!(default.sampling.analysis, Analysis::Independent);
    let paired = Experiment::parse(
        "name = \"x\"\ncommand = [\"true\"]\n[sampling]\nanalysis = \"paired\"\n",
        "exp.toml",
    )
    .unwrap();
    assert_eq!(paired.sampling.analysis, Analysis::Paired);
    let message =
        error_of("name = \"x\"\ncommand = [\"true\"]\n[sampling]\nanalysis = \"matched\"\n");
    assert!(
        message.starts_with(
            "exp.toml:4:12: `analysis` = \"matched\"; expected \"independent\" or \"paired\""
        ),
        "{message}"
    );
    let message = error_of(
        "name = \"x\"\ncommand = [\"true\"]\n[sampling]\norder = \"sequential\"\nanalysis = \"paired\"\n",
    );
    assert!(
        message
            .starts_with("exp.toml:5:12: `analysis = \"paired\"` needs `order = \"interleaved\"`"),
        "{message}"
    );
}

fn metric_of(keys: &str) -> verdict_model::MetricSpec {
    let text = format!("name = \"x\"\ncommand = [\"true\"]\n[[metrics]]\nname = \"v\"\n{keys}");
    Experiment::parse(&text, "exp.toml")
        .unwrap_or_else(|error| panic!("{keys}: {error}"))
        .primary_metric()
        .clone()
}

/// The `[[metrics]]` schema is the extractor's serde form: its names and
/// today's spellings load alike, and the defaults come with the extractor.
#[test]
fn metric_sources_are_the_extractor_kinds_and_the_older_spellings() {
    for (older, newer) in [
        ("time-v", "time-verbose"),
        ("time-p", "time-posix"),
        ("json", "json-path"),
    ] {
        let field = if older == "json" {
            "path = \"a.b\""
        } else if older == "time-v" {
            "field = \"Maximum resident set size (kbytes)\""
        } else {
            "field = \"real\""
        };
        let first = metric_of(&format!(
            "source = \"{older}\"\n{field}\ndirection = \"lower\"\n"
        ));
        let second = metric_of(&format!(
            "source = \"{newer}\"\n{field}\ndirection = \"lower\"\n"
        ));
        assert_eq!(first, second, "{older} = {newer}");
    }
    // stress-ng's default field and its defaults, from the extractor.
    let stress = metric_of("source = \"stress-ng\"\nstressor = \"kill\"\n");
    assert_eq!(stress.direction, Better::Higher);
    assert_eq!(stress.unit, "bogo-ops/s");
    // Keys every file could write stay ignored where the source does not
    // read them (a regex metric with a `field`, a wall metric with `event`).
    let regex = metric_of(
        "source = \"regex\"\npattern = \"(\\\\d+)\"\nfield = \"x\"\ndirection = \"higher\"\nunit = \"ops\"\n",
    );
    assert_eq!(regex.unit, "ops");
    metric_of("source = \"wall\"\nevent = \"cycles\"\n");
}

/// A parser that is only an `Extractor` variant (the Go benchmark format,
/// added to verdict-parse alone) is a metric source with its own keys and
/// defaults: `unit` is both what it reads and what reports show.
#[test]
fn an_extractor_variant_is_a_metric_source_without_model_changes() {
    let metric =
        metric_of("source = \"go-benchmark\"\nbenchmark = \"BenchmarkSort\"\nunit = \"ns/op\"\n");
    assert_eq!(
        metric.source,
        MetricSource::Parsed(verdict_model::Extractor::GoBenchmark {
            benchmark: "BenchmarkSort".to_string(),
            unit: "ns/op".to_string(),
        })
    );
    assert_eq!(metric.direction, Better::Lower);
    assert_eq!(metric.unit, "ns/op");
    let rate =
        metric_of("source = \"go-benchmark\"\nbenchmark = \"BenchmarkCopy\"\nunit = \"MB/s\"\n");
    assert_eq!(rate.direction, Better::Higher);
}

#[test]
fn metric_mistakes_name_the_file_the_metric_and_the_key() {
    let base = "name = \"x\"\ncommand = [\"true\"]\n[[metrics]]\nname = \"v\"\n";
    let missing = error_of(&format!("{base}source = \"perf-stat\"\n"));
    assert!(
        missing.starts_with("exp.toml:3:1: metric `v` with source `perf-stat` needs `event`"),
        "{missing}"
    );
    let unknown = error_of(&format!("{base}source = \"perf\"\n"));
    assert!(
        unknown.starts_with("exp.toml:3:1: metric `v` has unknown source `perf`; expected one of wall, user, sys, maxrss, stress-ng,"),
        "{unknown}"
    );
    assert!(unknown.contains("go-benchmark"), "{unknown}");
    let stray = error_of(&format!(
        "{base}source = \"regex\"\npattern = \"x\"\ncolour = \"red\"\ndirection = \"lower\"\n"
    ));
    assert!(
        stray.starts_with("exp.toml:3:1: metric `v`: unknown field `colour`"),
        "{stray}"
    );
    let builtin = error_of(&format!("{base}source = \"wall\"\ncolour = \"red\"\n"));
    assert!(
        builtin.starts_with("exp.toml:3:1: metric `v`: unknown field `colour` for source `wall`"),
        "{builtin}"
    );
}

#[test]
fn monitors_and_profile_sections_load_and_their_mistakes_are_located() {
    let experiment = Experiment::parse(
        "name = \"p\"\ncommand = [\"true\"]\n[monitors]\nenabled = false\n[profile]\nevent = \"cpu-clock\"\nevery = 3\n",
        "exp.toml",
    )
    .unwrap();
    assert!(!experiment.monitors.enabled);
    let profile = experiment.profile.clone().unwrap();
    assert_eq!(
        (profile.event.as_str(), profile.every, profile.frequency),
        ("cpu-clock", 3, 999)
    );
    // Stored and read back (a resumed run rebuilds its plan from the JSON).
    let stored = serde_json::to_string(&experiment).unwrap();
    assert_eq!(
        serde_json::from_str::<Experiment>(&stored).unwrap(),
        experiment
    );
    // The defaults are left out of the stored form, so runs stored before
    // these sections existed read back the same.
    let plain = Experiment::parse("name = \"p\"\ncommand = [\"true\"]\n", "exp.toml").unwrap();
    assert!(plain.monitors.enabled && plain.profile.is_none());
    let stored = serde_json::to_string(&plain).unwrap();
    assert!(
        !stored.contains("monitors") && !stored.contains("profile"),
        "{stored}"
    );
    let error = Experiment::parse(
        "name = \"p\"\ncommand = [\"true\"]\n\n[profile]\nevent = \"--output=/etc/x\"\n",
        "exp.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with("exp.toml:5:1: `profile.event`"),
        "{error}"
    );
}

/// 10^5 levels load (linearly: the repeat check is a hash set, see
/// `first_repeat`'s test for its comparisons), and a repeat at the end is
/// still found.
#[test]
fn a_hundred_thousand_levels_load_and_a_late_repeat_is_found() {
    let levels: Vec<String> = (0..100_000).map(|level| format!("\"l{level}\"")).collect();
    let text = format!(
        "name = \"many\"\ncommand = [\"true\"]\n\n[factors]\nlevel = [{}]\n",
        levels.join(", ")
    );
    let experiment = Experiment::parse(&text, "exp.toml").unwrap();
    assert_eq!(experiment.factors[0].levels.len(), 100_000);
    assert_eq!(experiment.factors[0].levels[99_999].value, "l99999");
    let repeated = format!(
        "name = \"many\"\ncommand = [\"true\"]\n\n[factors]\nlevel = [{}, \"l5\"]\n",
        levels.join(", ")
    );
    let error = error_of(&repeated);
    assert!(
        error.starts_with("exp.toml:5:1: factor `level` lists level `l5` twice"),
        "{}",
        &error[..error.len().min(200)]
    );
}

/// A NUL character (a TOML `\u0000` escape) is refused where it is, in a
/// level, in a name and in a command, never accepted to fail at run time;
/// the text `\\u0000` (a backslash, then `u0000`) is no NUL.
#[test]
fn a_nul_character_is_refused_at_its_place() {
    let level = error_of(
        "name = \"x\"\ncommand = [\"true\"]\n\n[factors]\nmode = [\"a\", \"b\\u0000c\"]\n",
    );
    assert!(
        level.starts_with("exp.toml:5:16: a NUL character (\\u0000) in a string"),
        "{level}"
    );
    let name = error_of("name = \"x\\U00000000\"\ncommand = [\"true\"]\n");
    assert!(name.starts_with("exp.toml:1:10: a NUL character"), "{name}");
    let argument = error_of("name = \"x\"\ncommand = [\"echo\", \"\\u0000\"]\n");
    assert!(
        argument.starts_with("exp.toml:2:21: a NUL character"),
        "{argument}"
    );
    let text = "name = \"x\"\ncommand = [\"echo\", \"\\\\u0000\"]\n";
    let experiment = Experiment::parse(text, "exp.toml").unwrap();
    assert_eq!(
        experiment.command,
        verdict_model::CommandSpec::Argv(vec!["echo".into(), "\\u0000".into()])
    );
}
