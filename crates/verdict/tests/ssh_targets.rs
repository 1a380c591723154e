//! ssh targets against real OpenSSH servers started by each test (see
//! `support/sshd.rs`): remote quoting, the agent copied and upgraded, clear
//! errors before anything is measured, lost connections, and `verdict ab`
//! over several hosts.

mod support;

use std::path::Path;
use std::time::Duration;
use support::sshd::SshFixture;
use verdict_exec::{Cancel, Invocation, SshOptions, SshTarget, Status, Target};

mod common;

use common::vm::agent_binary as agent;

const VERDICT: &str = env!("CARGO_BIN_EXE_verdict");

fn options(fixture: &SshFixture) -> SshOptions {
    SshOptions {
        config_file: Some(fixture.config_file.clone()),
        connect_timeout: Duration::from_secs(5),
        host_down_after: Duration::from_secs(5),
        ..SshOptions::default()
    }
}

/// Arguments that would run code, split or change if any reached a shell
/// unquoted; `{marker}` is replaced by a path that must never be created.
const HOSTILE: &[&str] = &[
    "; touch {marker}",
    "$(touch {marker})",
    "`touch {marker}`",
    "' ; touch {marker} ; '",
    "\" ; touch {marker} ; \"",
    "line one\ntouch {marker}",
    "ünïcødé ✓ {marker}",
    "",
    "*",
    "\\",
    "$HOME",
];

fn hostile(marker: &Path) -> Vec<String> {
    HOSTILE
        .iter()
        .map(|text| text.replace("{marker}", &marker.display().to_string()))
        .collect()
}

/// `printf '%s\0' ARG...` echoes its arguments back, each NUL-terminated:
/// byte-identical output proves each argument arrived whole and literal.
fn echo_argv(arguments: &[String]) -> Vec<String> {
    let mut argv = vec!["printf".to_string(), "%s\\0".to_string()];
    argv.extend(arguments.iter().cloned());
    argv
}

fn nul_joined(arguments: &[String]) -> Vec<u8> {
    arguments
        .iter()
        .flat_map(|argument| argument.bytes().chain([0]))
        .collect()
}

#[test]
fn an_argv_arrives_literally_through_ssh_and_through_the_agent() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let _server = fixture.server("quoting");
    let target = SshTarget::connect("quoting", options(&fixture), agent()).unwrap();
    let marker = directory.path().join("MARKER");
    let arguments = hostile(&marker);
    let argv = echo_argv(&arguments);

    // ssh alone: the words are quoted for the far side's shell.
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let direct = target.run_direct(&words).unwrap();
    assert_eq!(
        direct.status,
        Status::Exited(0),
        "{}",
        direct.output_tail(500)
    );
    assert_eq!(direct.stdout, nul_joined(&arguments));

    // Through the agent: the argv travels as JSON and is exec'd directly.
    let outcome = target
        .run(&Invocation::argv(argv.clone()), &Cancel::new())
        .unwrap();
    assert_eq!(outcome.status, Status::Exited(0));
    assert_eq!(outcome.stdout, nul_joined(&arguments));
    // An environment value is data too.
    let outcome = target
        .run(
            &Invocation::argv(["printenv", "LEVEL"]).with_env("LEVEL", arguments[0].clone()),
            &Cancel::new(),
        )
        .unwrap();
    assert_eq!(outcome.stdout, format!("{}\n", arguments[0]).into_bytes());
    assert!(!marker.exists(), "a value reached a shell on the far side");
}

#[test]
fn a_stale_agent_is_replaced_and_files_and_clock_come_from_the_target() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let server = fixture.server("upgrade");
    let agent = agent();
    let stale = server
        .cache_directory
        .join("verdict")
        .join(&agent.file_name);
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, "#!/bin/sh\necho verdict-agent 0.0.1 0000\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stale, std::fs::Permissions::from_mode(0o755)).unwrap();

    let target = SshTarget::connect("upgrade", options(&fixture), agent).unwrap();
    assert_eq!(target.remote_agent_path(), stale.display().to_string());
    assert_eq!(
        std::fs::read(&stale).unwrap(),
        std::fs::read(VERDICT).unwrap(),
        "the stale agent was not replaced by this build"
    );
    // Reads and the clock go through the agent.
    let file = directory.path().join("metric.txt");
    std::fs::write(&file, "score 12\n").unwrap();
    assert_eq!(target.read_file(&file).unwrap(), b"score 12\n");
    assert_eq!(
        target
            .read_file(&directory.path().join("absent"))
            .unwrap_err()
            .kind(),
        std::io::ErrorKind::NotFound
    );
    let local = verdict_exec::SystemExecutor.now_unix_ms();
    assert!((target.now_unix_ms() - local).abs() < 2_000);
    // A timeout is enforced on the target.
    let outcome = target
        .run(
            &Invocation::argv(["sleep", "30"]).with_timeout(Duration::from_millis(200)),
            &Cancel::new(),
        )
        .unwrap();
    assert_eq!(outcome.status, Status::TimedOut);
}

#[test]
fn an_unreachable_host_or_a_wrong_host_key_is_a_clear_error() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    fixture.unreachable_host("nowhere");
    let error = SshTarget::connect("nowhere", options(&fixture), agent()).unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("target nowhere: cannot connect"),
        "{message}"
    );
    assert!(message.contains("Connection refused"), "{message}");

    // A host whose key is not the one known_hosts holds for its alias.
    let _server = fixture.server("genuine");
    let impostor = fixture.server("impostor");
    let config = std::fs::read_to_string(&fixture.config_file).unwrap();
    std::fs::write(
        &fixture.config_file,
        config.replace("HostKeyAlias impostor", "HostKeyAlias genuine"),
    )
    .unwrap();
    let error = SshTarget::connect("impostor", options(&fixture), agent()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("target impostor: host key verification failed"),
        "{error}"
    );
    drop(impostor);
    // Nothing was copied to a host whose key did not match.
    assert!(!directory.path().join("impostor/cache/verdict").exists());
}

fn verdict(arguments: &[&str], directory: &Path) -> std::process::Output {
    std::process::Command::new(VERDICT)
        .args(arguments)
        .current_dir(directory)
        .env_remove("VERDICT_DB")
        .output()
        .unwrap()
}

#[test]
fn ab_on_two_hosts_reports_each_host_and_the_combined_line() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let _a = fixture.server("a");
    let _b = fixture.server("b");
    let config = fixture.config_file.display().to_string();
    let output = verdict(
        &[
            "ab",
            "--host",
            "a",
            "--host",
            "b",
            "--ssh-config",
            &config,
            "-n",
            "20",
            "--seed",
            "7",
            "sleep 0.05",
            "sleep 0.06",
        ],
        directory.path(),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // Runs are created concurrently, so either host may be run 1.
    let a = stdout.find("== host a (run ").expect("host a's report");
    let b = stdout.find("== host b (run ").expect("host b's report");
    assert!(a < b, "{stdout}");
    for report in [&stdout[a..b], &stdout[b..]] {
        assert!(
            report.contains("sleep 0.06 vs sleep 0.05") && report.contains("regression"),
            "{report}"
        );
    }
    assert!(
        stdout.contains(
            "sleep 0.06 vs sleep 0.05: regression on 2 of 2 hosts; combined: worse across hosts"
        ),
        "{stdout}"
    );
    // Each host's run is stored under its name, with its samples.
    let store = verdict_store::SqliteStore::open(directory.path().join("verdict.db")).unwrap();
    use verdict_store::Store;
    let runs = store.list_runs().unwrap();
    let hosts: Vec<&str> = runs.iter().map(|run| run.host.as_str()).collect();
    assert_eq!(hosts.len(), 2);
    assert!(hosts.contains(&"a") && hosts.contains(&"b"), "{hosts:?}");
    for run in &runs {
        assert_eq!(run.done, 40);
        assert_eq!(run.failed, 0);
        let samples = store.samples(run.id).unwrap();
        // Timed on the target: sleep 0.05 takes at least 50 ms there, and
        // the wall time is not inflated by ssh round trips (tens of ms).
        for sample in samples.iter().filter(|sample| sample.cell == 0) {
            assert!(sample.wall_seconds >= 0.05, "{}", sample.wall_seconds);
        }
    }

    // The group again from the database, one row per host.
    let output = verdict(&["report", "2", "--rows", "host"], directory.path());
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{table}");
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("host "), "{table}");
    for host in ["a", "b"] {
        let row = lines
            .iter()
            .find(|line| line.starts_with(&format!("{host} ")))
            .unwrap_or_else(|| panic!("no row for {host}: {table}"));
        assert!(row.ends_with("regression"), "{row}");
    }
    assert!(table.contains("regression on 2 of 2 hosts"), "{table}");
    let output = verdict(
        &["report", "1", "--rows", "host", "--format", "json"],
        directory.path(),
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["schema"], "verdict.hosts/v1");
    assert_eq!(json["hosts"].as_array().unwrap().len(), 2);

    // Two loopback sshd are one machine: warned before measuring, naming
    // why (the same machine id, boot id and address).
    let warning = stderr
        .lines()
        .find(|line| line.contains("hosts a and b are one machine"))
        .unwrap_or_else(|| panic!("no one-machine warning:\n{stderr}"));
    for reason in ["same machine id", "same boot id", "same address 127.0.0.1"] {
        assert!(warning.contains(reason), "{warning}");
    }
    let measuring = stderr.find("[a] run").unwrap_or(stderr.len());
    assert!(stderr.find("one machine").unwrap() < measuring, "{stderr}");

    // `verdict report` after the group: the whole group in every format.
    let output = verdict(&["report"], directory.path());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    // In the order the hosts were given, whichever run was created first.
    let a = text.find("== host a (run ").expect("host a's report");
    let b = text.find("== host b (run ").expect("host b's report");
    assert!(a < b, "{text}");
    assert!(
        text.contains("; change +"),
        "the combined line has a size:\n{text}"
    );
    let output = verdict(&["report", "--format", "email"], directory.path());
    let email = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{email}");
    assert_eq!(common::line_over(&email, 80), None, "{email}");
    for part in [
        "Across 2 hosts",
        "change across hosts +",
        "Host a (run ",
        "Host b (run ",
        "sleep 0.06 vs sleep 0.05",
        "Reproduce",
    ] {
        assert!(email.contains(part), "{part}:\n{email}");
    }
    // What ran on each host: its CPU identity and kernel; and the warning
    // that the two are one machine.
    let (_, what_ran) = email.split_once("\nWhat ran\n").expect("What ran");
    assert!(what_ran.contains("  host a (run "), "{email}");
    assert!(what_ran.contains("  host b (run "), "{email}");
    assert_eq!(what_ran.matches("    kernel:").count(), 2, "{email}");
    assert!(
        email.contains("warning: hosts a and b are one machine"),
        "{email}"
    );
    assert!(
        email.find("\nHost a (run ") < email.find("\nHost b (run "),
        "{email}"
    );
    let output = verdict(&["report", "--format", "json"], directory.path());
    let group: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(group["schema"], "verdict.group/v1");
    assert_eq!(group["hosts"].as_array().unwrap().len(), 2);
    let combined = &group["combined"][0];
    assert_eq!(combined["combined"], "worse");
    let shift = combined["shift"]["estimate"].as_f64().unwrap();
    assert!(shift > 0.0, "{combined}");
    assert_eq!(
        group["hosts"][0]["report"]["provenance"]["machines"][0]["role"],
        "host"
    );
    let output = verdict(&["report", "--format", "html"], directory.path());
    let page = String::from_utf8_lossy(&output.stdout);
    for part in [
        "Across 2 hosts",
        "Host a (run ",
        "Host b (run ",
        "change across hosts",
    ] {
        assert!(page.contains(part), "{part}");
    }
    let output = verdict(&["report", "--format", "csv"], directory.path());
    let csv = String::from_utf8_lossy(&output.stdout);
    assert!(csv.starts_with("host,run,"), "{csv}");
    assert!(csv.lines().any(|line| line.starts_with("a,")), "{csv}");
    assert!(csv.lines().any(|line| line.starts_with("b,")), "{csv}");
    // `verdict runs` names each run's host.
    let output = verdict(&["runs"], directory.path());
    let runs = String::from_utf8_lossy(&output.stdout);
    assert!(runs.lines().next().unwrap().contains("host"), "{runs}");
    for host in ["a", "b"] {
        assert!(
            runs.lines()
                .any(|line| line.split_whitespace().nth(4) == Some(host)),
            "{runs}"
        );
    }
}

#[test]
fn an_unreachable_host_at_start_is_exit_2_and_nothing_is_measured() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let _a = fixture.server("a");
    fixture.unreachable_host("gone");
    let config = fixture.config_file.display().to_string();
    let output = verdict(
        &[
            "ab",
            "--host",
            "a",
            "--host",
            "gone",
            "--ssh-config",
            &config,
            "-n",
            "3",
            "true",
            "false",
        ],
        directory.path(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("verdict: error: target gone: cannot connect"),
        "{stderr}"
    );
    let store = verdict_store::SqliteStore::open(directory.path().join("verdict.db")).unwrap();
    use verdict_store::Store;
    assert!(store.list_runs().unwrap().is_empty());
}

/// Samples stored so far in the database at `path` (all runs).
fn stored_samples(path: &Path) -> u64 {
    use verdict_store::Store;
    verdict_store::SqliteStore::open(path)
        .and_then(|store| store.list_runs())
        .map(|runs| runs.iter().map(|run| run.done).sum())
        .unwrap_or(0)
}

fn wait_for_samples(path: &Path, count: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while stored_samples(path) < count {
        assert!(
            std::time::Instant::now() < deadline,
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_lost_connection_fails_the_iteration_and_a_host_that_stays_down_stops_alone() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let mut a = fixture.server("a");
    let mut b = fixture.server("b");
    let config = fixture.config_file.display().to_string();
    let database = directory.path().join("verdict.db");
    let child = std::process::Command::new(VERDICT)
        .args([
            "ab",
            "--host",
            "a",
            "--host",
            "b",
            "--ssh-config",
            &config,
            "--reconnect-timeout",
            "4s",
            "-n",
            "15",
            "--seed",
            "3",
            "sleep 0.1",
            "sleep 0.1",
        ])
        .current_dir(directory.path())
        .env_remove("VERDICT_DB")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_samples(&database, 6);
    // Both hosts crash mid-run; a comes back a second later, b never does.
    a.kill();
    b.kill();
    std::thread::sleep(Duration::from_secs(1));
    a.start();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("[b] stopped:"), "{stderr}");
    assert!(stderr.contains("host b is down"), "{stderr}");
    assert!(stderr.contains("the run stopped on b"), "{stderr}");

    use verdict_store::Store;
    let store = verdict_store::SqliteStore::open(&database).unwrap();
    let runs = store.list_runs().unwrap();
    let run_a = runs.iter().find(|run| run.host == "a").unwrap();
    let run_b = runs.iter().find(|run| run.host == "b").unwrap();
    assert_eq!(run_a.status, verdict_model::RunStatus::Complete);
    assert_eq!(run_a.done, 30, "every slot of a's schedule is recorded");
    let samples = store.samples(run_a.id).unwrap();
    let lost: Vec<_> = samples
        .iter()
        .filter(|sample| {
            sample
                .failure
                .as_ref()
                .is_some_and(|failure| failure.reason == "connection lost")
        })
        .collect();
    assert!(!lost.is_empty(), "no iteration was recorded as lost");
    assert!(lost.iter().all(|sample| sample.metrics.is_empty()));
    assert!(samples.iter().filter(|sample| sample.is_data()).count() >= 25);
    assert_eq!(run_b.status, verdict_model::RunStatus::Failed);
    assert!(run_b.done < 30);
}

#[test]
fn a_controller_killed_mid_run_resumes_on_the_same_host_with_no_sample_lost_or_doubled() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let _a = fixture.server("a");
    let config = fixture.config_file.display().to_string();
    let database = directory.path().join("verdict.db");
    let mut child = std::process::Command::new(VERDICT)
        .args([
            "ab",
            "--host",
            "a",
            "--ssh-config",
            &config,
            "-n",
            "15",
            "--seed",
            "5",
            "sleep 0.05",
            "sleep 0.05",
        ])
        .current_dir(directory.path())
        .env_remove("VERDICT_DB")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_samples(&database, 8);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let killed_at = stored_samples(&database);
    assert!(killed_at < 30, "the run finished before it was killed");

    let output = verdict(&["run", "--resume", "1"], directory.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("resuming run 1 on a"), "{stderr}");

    use verdict_store::Store;
    let store = verdict_store::SqliteStore::open(&database).unwrap();
    let run = store.run(verdict_model::RunId(1)).unwrap();
    assert_eq!(run.status, verdict_model::RunStatus::Complete);
    assert_eq!(run.host, "a");
    let samples = store.samples(run.id).unwrap();
    let sequences: Vec<u32> = samples.iter().map(|sample| sample.sequence).collect();
    assert_eq!(sequences, (0..30).collect::<Vec<u32>>());
    // Each cell got exactly its 15 iterations: nothing lost, nothing doubled.
    for cell in 0..2 {
        assert_eq!(
            samples.iter().filter(|sample| sample.cell == cell).count(),
            15
        );
    }
}

/// `verdict run` with `[target] hosts` from the file: the workload's argv,
/// hostile bytes included, reaches the remote program exactly (it compares
/// its argument with a file holding the expected bytes and fails otherwise),
/// and no value is ever run by a shell there.
#[test]
fn run_with_target_hosts_from_the_file_passes_argv_literally() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let _a = fixture.server("a");
    let marker = directory.path().join("MARKER");
    let nasty = hostile(&marker).join("|");
    let expected = directory.path().join("expected");
    std::fs::write(&expected, &nasty).unwrap();
    let experiment = format!(
        r#"name = "quoting"
command = ["sh", "-c", 'printf "%s" "$1" | cmp -s - "$2"', "sh", {nasty}, {expected}]

[target]
hosts = ["a"]

[factors.v]
levels = ["1", "2"]

[sampling]
iterations = 2
"#,
        nasty = toml::Value::String(nasty.clone()),
        expected = toml::Value::String(expected.display().to_string()),
    );
    std::fs::write(directory.path().join("quoting.toml"), experiment).unwrap();
    let config = fixture.config_file.display().to_string();
    let output = verdict(
        &["run", "quoting.toml", "--ssh-config", &config],
        directory.path(),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("== host a (run 1) =="), "{stdout}");
    use verdict_store::Store;
    let store = verdict_store::SqliteStore::open(directory.path().join("verdict.db")).unwrap();
    let run = store.list_runs().unwrap().remove(0);
    assert_eq!(run.host, "a");
    assert_eq!((run.done, run.failed), (4, 0), "{stdout}");
    assert!(!marker.exists());
}

/// `verdict doctor --host`: the agent runs doctor on the host (its
/// calibration loop and its /proc), and the JSON report comes back whole.
#[test]
fn doctor_runs_on_the_host() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let _a = fixture.server("a");
    let config = fixture.config_file.display().to_string();
    let output = verdict(
        &[
            "doctor",
            "--quick",
            "--format",
            "json",
            "--host",
            "a",
            "--ssh-config",
            &config,
        ],
        directory.path(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report.is_object(), "{report}");
    // The agent that ran it was copied into the host's cache directory.
    assert!(
        directory
            .path()
            .join("a/cache/verdict")
            .read_dir()
            .unwrap()
            .count()
            >= 1
    );
    let output = verdict(
        &[
            "doctor",
            "--host",
            "a",
            "--ssh-config",
            &config,
            "--experiment",
            "x.toml",
        ],
        directory.path(),
    );
    assert_eq!(output.status.code(), Some(2));
}

/// Another architecture, or an agent that does not run on the target, is a
/// clear error before anything is measured.
#[test]
fn another_architecture_or_an_unusable_agent_is_refused() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let server = fixture.server("a");
    let mut foreign = agent();
    foreign.architecture = "s390x".to_string();
    let error = SshTarget::connect("a", options(&fixture), foreign)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("target a: the target's architecture is "),
        "{error}"
    );
    assert!(error.contains("this verdict is built for s390x"), "{error}");
    assert!(
        !server.cache_directory.join("verdict").exists(),
        "copied anyway"
    );

    // A "binary" that cannot run there: copied, probed, refused.
    let broken = directory.path().join("not-a-program");
    std::fs::write(&broken, "this is not an executable\n").unwrap();
    let mut unusable = agent();
    unusable.local_path = broken;
    unusable.file_name = "agent-broken".to_string();
    let error = SshTarget::connect("a", options(&fixture), unusable)
        .unwrap_err()
        .to_string();
    assert!(error.contains("does not run"), "{error}");
}

/// `SshTarget::upload` (how `bisect --host` copies a build): a destination
/// full of shell syntax is created literally, byte for byte, and nothing
/// in it runs.
#[test]
fn an_upload_lands_at_a_hostile_path_literally() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let server = fixture.server("upload");
    let target = SshTarget::connect("upload", options(&fixture), agent()).unwrap();
    let cache = target.cache_directory();
    assert!(
        Path::new(&cache).starts_with(&server.cache_directory),
        "{cache}"
    );
    let marker = directory.path().join("MARKER");
    let source = directory.path().join("source");
    let payload = b"payload\n\0'$(touch x)'\xff".to_vec();
    std::fs::write(&source, &payload).unwrap();
    for (index, name) in hostile(&marker).iter().enumerate() {
        // Suffixed: a name must not end in `/` or be empty.
        let remote = format!("{cache}/upload-{index}/{name}x");
        target.upload(&source, &remote).unwrap();
        assert_eq!(std::fs::read(&remote).unwrap(), payload, "{remote}");
    }
    assert!(!marker.exists());
    let missing = target.upload(&directory.path().join("absent"), &format!("{cache}/absent"));
    assert!(missing.unwrap_err().to_string().contains("absent"));
}
