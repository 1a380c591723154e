//! The shell-splice guard through `Experiment::parse`: a `{factor}` that
//! some shell would parse is refused wherever the shell sits in argv (behind
//! wrappers, over ssh, through su/sudo/watch/flock/env -S), in the command,
//! level commands and setup/teardown hooks; the safe forms (the value as its
//! own argument) still load. Must not run any command.

use proptest::prelude::*;
use verdict_model::Experiment;

/// An experiment whose `command` is `argv`, with factor `v` (a level that
/// would inject code) and factor `host`.
fn experiment_with(argv: &[&str]) -> String {
    format!(
        "name = \"x\"\ncommand = {}\n[factors]\nv = [\"b; touch /tmp/marker\", \"a\"]\nhost = [\"db1.example.org\", \"user@10.0.0.2\"]\nshell = [\"sh\", \"bash\"]\nopt = [\"-c\", \"-e\"]\nevil_host = [\"-oProxyCommand=touch /tmp/marker\"]\n",
        serde_json::to_string(argv).unwrap()
    )
}

fn refusal(argv: &[&str]) -> Option<String> {
    Experiment::parse(&experiment_with(argv), "exp.toml")
        .err()
        .map(|error| error.to_string())
}

#[test]
fn placeholders_reaching_a_shell_are_refused_wherever_the_shell_sits() {
    let refused: &[&[&str]] = &[
        // The five reported cases.
        &["taskset", "-c", "0", "sh", "-c", "echo {v}"],
        &["perf", "stat", "--", "sh", "-c", "echo {v}"],
        &["nice", "sh", "-c", "echo {v}"],
        &["timeout", "5", "sh", "-c", "echo {v}"],
        &["env", "sh", "-c", "echo {v}"],
        // Shell spellings and option clusters.
        &["bash", "-lc", "echo {v}"],
        &["sh", "-ec", "echo {v}"],
        &["/bin/sh", "-c", "echo {v}"],
        &["busybox", "sh", "-c", "echo {v}"],
        &["/usr/bin/busybox", "ash", "-c", "echo {v}"],
        &["bash", "-o", "pipefail", "-c", "echo {v}"],
        &["bash", "-c", "-e", "echo {v}"],
        &["bash", "--norc", "-c", "echo {v}"],
        &["bash", "--rcfile", "/dev/null", "-c", "echo {v}"],
        &["bash", "--unknown-long", "x", "-c", "echo {v}"],
        &["zsh", "-c", "{v}"],
        &["ksh93", "-c", "echo {v}"],
        &["sh", "-{v}", "echo hi"],
        &["sh", "{opt}", "echo hi"],
        &["sh", "-c", "exec \"$@\"", "sh", "sh", "-c", "echo {v}"],
        &["{shell}", "-c", "echo {v}"],
        &["taskset", "-c", "0", "/bin/{shell}", "-c", "echo {v}"],
        // Wrappers.
        &["env", "-i", "FOO=1", "sh", "-c", "echo {v}"],
        &["sudo", "sh", "-c", "echo {v}"],
        &["xargs", "sh", "-c", "echo {v}"],
        &["find", ".", "-exec", "sh", "-c", "echo {v}", ";"],
        &["chroot", "/srv", "sh", "-c", "echo {v}"],
        &[
            "ionice", "-c", "3", "chrt", "-f", "1", "bash", "-ec", "echo {v}",
        ],
        // Remote shells: every argument after the host.
        &["ssh", "db1", "echo", "{v}"],
        &["ssh", "-p", "22", "db1", "cat", "{v}"],
        &["ssh", "-tt", "db1", "--", "printf", "%s", "{v}"],
        &["ssh", "-o", "ProxyCommand={v}", "db1", "true"],
        &["ssh", "-oProxyCommand={v}", "db1", "true"],
        &["ssh", "{evil_host}", "true"],
        &["taskset", "-c", "0", "ssh", "db1", "echo", "{v}"],
        // Command-string programs.
        &["su", "-c", "echo {v}"],
        &["su", "root", "-c", "echo {v}"],
        &["su", "-", "nobody", "-s", "/bin/sh", "-c", "echo {v}"],
        &["su", "--command=echo {v}"],
        &["runuser", "nobody", "-c", "echo {v}"],
        &["sudo", "-s", "echo", "{v}"],
        &["sudo", "-u", "root", "-i", "echo", "{v}"],
        &["sudo", "--login", "echo", "{v}"],
        &["watch", "-n", "1", "echo", "{v}"],
        &["flock", "/tmp/lock", "-c", "echo {v}"],
        &["flock", "/tmp/lock", "--command", "echo {v}"],
        &["script", "-qc", "echo {v}", "/dev/null"],
        &["env", "-S", "echo {v}"],
        &["env", "-iS", "echo {v}"],
        &["env", "--split-string=echo {v}"],
    ];
    for argv in refused {
        let message = refusal(argv).unwrap_or_else(|| panic!("accepted {argv:?}"));
        assert!(
            message.contains("values are never spliced into shell code")
                && message.contains("exp.toml:2:"),
            "{argv:?}: {message}"
        );
    }
}

#[test]
fn safe_forms_and_ordinary_commands_still_load() {
    let accepted: &[&[&str]] = &[
        &["sh", "-c", "echo \"$1\"", "sh", "{v}"],
        &["sh", "-c", "echo \"$0\"", "{v}"],
        &["sh", "-c", "gcc \"$1\" x.c", "sh", "{opt}"],
        &["bash", "-ec", "gcc \"$1\" x.c", "bash", "{opt}", "{v}"],
        &[
            "sh",
            "-c",
            "printf '%s\\n' \"$1\" | ssh db1 ./run.sh",
            "sh",
            "{v}",
        ],
        &["taskset", "-c", "0", "sh", "-c", "echo \"$1\"", "sh", "{v}"],
        &[
            "perf",
            "stat",
            "--",
            "bash",
            "-ec",
            "echo \"$1\"",
            "bash",
            "{v}",
        ],
        &["sh", "-c", "echo \"$VERDICT_V\""],
        &["sh", "script.sh", "{v}"],
        &["sh", "--", "{opt}"],
        &["taskset", "-c", "{v}", "stress-ng", "--cpu", "{v}"],
        &["gzip", "-{v}", "-c", "data.bin"],
        &["nice", "-n", "{v}", "prog", "{v}"],
        &["env", "FOO={v}", "prog", "-c", "{v}"],
        &["ssh", "{host}", "uptime"],
        &["ssh", "-p", "22", "user@{host}", "./run.sh"],
        &["runuser", "-u", "nobody", "--", "prog", "{v}"],
        &["watch", "-x", "prog", "{v}"],
        &["find", ".", "-name", "{v}"],
        &["flock", "/tmp/lock", "prog", "{v}"],
        &["sudo", "-u", "root", "prog", "{v}"],
        &["xargs", "-I{}", "prog", "{}", "{v}"],
    ];
    for argv in accepted {
        assert_eq!(refusal(argv), None, "{argv:?}");
    }
}

#[test]
fn hooks_and_level_commands_get_the_same_guard() {
    let cases = [
        "name = \"x\"\ncommand = [\"true\"]\n[factors.v]\nlevels = [\"a\"]\nsetup = [\"taskset\", \"-c\", \"0\", \"sh\", \"-c\", \"echo {v}\"]\n",
        "name = \"x\"\ncommand = [\"true\"]\n[factors.v]\nlevels = [\"a\"]\nteardown = [\"ssh\", \"db1\", \"rm\", \"{v}\"]\n",
        "name = \"x\"\ncommand = [\"true\"]\n[factors]\nv = [{ value = \"a\", setup = [\"nice\", \"bash\", \"-lc\", \"echo {v}\"] }]\n",
        "name = \"x\"\ncommand = [\"true\"]\n[factors]\nv = [{ value = \"a\", command = [\"timeout\", \"5\", \"sh\", \"-c\", \"echo {v}\"] }]\n",
        "name = \"x\"\ncommand = [\"true\"]\n[factors]\nv = [{ value = \"a\", teardown = [\"env\", \"-i\", \"sh\", \"-ec\", \"echo {w}\"] }]\nw = [\"b\"]\n",
    ];
    for text in cases {
        let message = Experiment::parse(text, "exp.toml")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("values are never spliced into shell code"),
            "{text}\n{message}"
        );
    }
}

#[test]
fn the_message_says_where_and_how_to_pass_the_value() {
    let message = refusal(&["taskset", "-c", "0", "sh", "-c", "echo {v}"]).unwrap();
    assert!(message.contains("argument 5 (`echo {v}`)"), "{message}");
    assert!(message.contains("sh -c 'echo \"$1\"' sh {v}"), "{message}");
    assert!(message.contains("$VERDICT_V"), "{message}");
    let remote = refusal(&["ssh", "db1", "echo", "{v}"]).unwrap();
    assert!(remote.contains("remote shell"), "{remote}");
}

/// Wrappers that exec their command directly (argv after them is a command).
fn wrapper() -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::select(vec![
        vec!["taskset", "-c", "0"],
        vec!["taskset", "0x1"],
        vec!["nice"],
        vec!["nice", "-n", "5"],
        vec!["timeout", "5"],
        vec!["timeout", "-s", "KILL", "5"],
        vec!["env"],
        vec!["env", "-i", "FOO=1"],
        vec!["/usr/bin/env", "FOO=1"],
        vec!["perf", "stat", "--"],
        vec!["perf", "stat", "-e", "cycles", "--"],
        vec!["ionice", "-c", "3"],
        vec!["chrt", "-f", "1"],
        vec!["sudo"],
        vec!["sudo", "-u", "root"],
        vec!["busybox"],
        vec!["xargs"],
        vec!["nohup"],
        vec!["setsid"],
        vec!["stdbuf", "-oL"],
    ])
}

fn shell() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "sh",
        "bash",
        "dash",
        "zsh",
        "ksh",
        "mksh",
        "/bin/sh",
        "/usr/bin/bash",
    ])
}

/// How the script option is spelled, with other options around it.
fn script_options() -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::select(vec![
        vec!["-c"],
        vec!["-ec"],
        vec!["-lc"],
        vec!["-xc"],
        vec!["-ce"],
        vec!["-e", "-c"],
        vec!["-c", "-e"],
        vec!["-o", "pipefail", "-c"],
        vec!["-eo", "pipefail", "-c"],
        vec!["--norc", "-c"],
        vec!["+e", "-c"],
    ])
}

fn script_with_placeholder() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "echo {v}",
        "{v}",
        "x={v}; echo \"$x\"",
        "printf '%s' '{v}'",
        "cat /tmp/{v}",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_placeholder_in_the_script_is_refused_behind_any_wrapper_chain(
        wrappers in prop::collection::vec(wrapper(), 0..5),
        shell in shell(),
        options in script_options(),
        script in script_with_placeholder(),
    ) {
        let mut argv: Vec<&str> = wrappers.concat();
        argv.push(shell);
        argv.extend(options.iter().copied());
        argv.push(script);
        let message = refusal(&argv);
        prop_assert!(message.is_some(), "accepted {:?}", argv);
        prop_assert!(message.unwrap().contains("never spliced"));
    }

    #[test]
    fn the_value_as_its_own_argument_is_accepted_behind_any_wrapper_chain(
        wrappers in prop::collection::vec(wrapper(), 0..5),
        shell in shell(),
        options in script_options(),
        dollar_zero in any::<bool>(),
    ) {
        let mut argv: Vec<&str> = wrappers.concat();
        argv.push(shell);
        argv.extend(options.iter().copied());
        if dollar_zero {
            argv.extend(["echo \"$0\"", "{v}"]);
        } else {
            argv.extend(["echo \"$1\"", "sh", "{v}"]);
        }
        prop_assert_eq!(refusal(&argv), None, "{:?}", argv);
    }
}

#[test]
fn an_experiment_that_skipped_parse_is_checked_again() {
    // As `verdict run --resume` gets it: deserialized from the store, not
    // parsed (a run stored by a verdict without this guard).
    let mut experiment = Experiment::parse(
        "name = \"x\"\ncommand = [\"sh\", \"-c\", \"echo \\\"$1\\\"\", \"sh\", \"{v}\"]\n[factors]\nv = [\"a\", \"b; touch /tmp/marker\"]\n",
        "exp.toml",
    )
    .unwrap();
    assert!(experiment.check_shell_splices("run 7").is_ok());
    experiment.command = verdict_model::CommandSpec::Argv(
        ["nice", "sh", "-c", "echo {v}"].map(String::from).to_vec(),
    );
    let message = experiment
        .check_shell_splices("run 7")
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("run 7: `command` puts placeholder `{v}`"),
        "{message}"
    );
    let mut experiment: Experiment =
        serde_json::from_str(&serde_json::to_string(&experiment).unwrap()).unwrap();
    experiment.command = verdict_model::CommandSpec::Argv(vec!["true".into()]);
    experiment.factors[0].levels[1].command = Some(verdict_model::CommandSpec::Argv(
        ["timeout", "5", "bash", "-lc", "echo {v}"]
            .map(String::from)
            .to_vec(),
    ));
    let message = experiment
        .check_shell_splices("run 7")
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("level `b; touch /tmp/marker`"),
        "{message}"
    );
}
