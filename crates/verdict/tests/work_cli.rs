//! Shared work with real processes on a real PostgreSQL store (a throwaway
//! cluster started by the test): `verdict run --detach` creates a run's
//! blocks, four `verdict work` controllers on two target hosts measure it.
//! The hosts are local pseudo-hosts: distinct lease keys (`--host h0`,
//! `--host h1`) whose iterations run on this machine, so two controllers
//! compete for each host's lease. One controller is SIGKILLed in the middle
//! of a block, then the server is stopped (`pg_ctl stop -m fast`) and
//! started again while the others work: they reconnect and finish without
//! being restarted, a controller takes the killed one's block over from
//! its last committed sample (a takeover stored with both workers and
//! hosts, shown by `report` and `runs`), and the run ends with exactly the
//! planned samples, none doubled, none lost, each with the host it ran on.
//! The store's password never shows in a controller's command line nor in
//! the workload's environment. Must not share a cluster between tests.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use verdict_testkit::postgres::PostgresServer;

const VERDICT: &str = env!("CARGO_BIN_EXE_verdict");

/// The password in the URL of the test's store (trust authentication
/// ignores it; it is there to be looked for where it must not be).
const PASSWORD: &str = "hunter2-in-the-url";
/// The password in `PGPASSWORD`.
const ENVIRONMENT_PASSWORD: &str = "hunter2-in-the-environment";

fn wait_with_deadline(mut child: Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("a worker did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls `ready` every 20 ms until it returns something, or panics with
/// `what` after `limit`.
fn wait_for<T>(limit: Duration, what: &str, mut ready: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_server_restart_and_a_killed_worker_lose_nothing_and_double_nothing() {
    let Some(mut server) = PostgresServer::start() else {
        return;
    };
    server.create_database("lab");
    let url = format!(
        "postgresql://postgres:{PASSWORD}@/lab?host={}",
        server.socket_directory().display()
    );
    let directory = tempfile::tempdir().unwrap();
    let environments = directory.path().join("environments");
    std::fs::create_dir(&environments).unwrap();
    let experiment = directory.path().join("shared.toml");
    // 3 cells x (1 warmup + 6 iterations) = 21 samples in 7 blocks of 3;
    // each iteration keeps its environment in a file of its own.
    std::fs::write(
        &experiment,
        format!(
            "name = \"shared\"\ncommand = [\"sh\", \"-c\", \"env > {}/$$.env; sleep 0.4\"]\n\n\
             [factors]\nmode = [\"a\", \"b\", \"c\"]\n\n[sampling]\niterations = 6\nwarmups = 1\n",
            environments.display()
        ),
    )
    .unwrap();
    // Detached with the store named in the environment only.
    let output = Command::new(VERDICT)
        .arg("run")
        .arg(&experiment)
        .arg("--detach")
        .env("VERDICT_DB", &url)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(run, "1");
    assert_eq!(
        server
            .psql("lab", "SELECT COUNT(*), SUM(slots) FROM work_blocks")
            .trim(),
        "7|21"
    );

    // Workers 0 and 2 name the store with its password in their arguments,
    // 1 and 3 in VERDICT_DB; all have PGPASSWORD.
    let start = |index: usize| -> Child {
        let mut command = Command::new(VERDICT);
        command.args(["work", &run, "--lease", "2", "--reconnect-timeout", "60s"]);
        command
            .args(["--host", &format!("h{}", index % 2)])
            .args(["--worker", &format!("w{index}")]);
        if index % 2 == 0 {
            command.args(["--db", &url]).env_remove("VERDICT_DB");
        } else {
            command.env("VERDICT_DB", &url);
        }
        command
            .env("PGPASSWORD", ENVIRONMENT_PASSWORD)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(directory.path().join(format!("w{index}.log"))).unwrap())
            .spawn()
            .unwrap()
    };
    let mut workers: Vec<Option<Child>> = (0..4).map(|index| Some(start(index))).collect();

    // Kill a controller in the middle of a block: its block claimed, some
    // but not all of its samples committed.
    let (killed, killed_host, block) = wait_for(
        Duration::from_secs(120),
        "no block was ever mid-way",
        || {
            let mid_block = server.psql(
                "lab",
                "SELECT w.worker, w.host, w.block FROM work_blocks w WHERE w.state = 'claimed' \
                 AND EXISTS (SELECT 1 FROM samples s WHERE s.run_id = w.run_id \
                    AND s.sequence >= w.first_sequence AND s.sequence < w.first_sequence + w.slots) \
                 LIMIT 1",
            );
            let fields: Vec<String> = mid_block.trim().split('|').map(String::from).collect();
            (fields.len() == 3).then(|| (fields[0].clone(), fields[1].clone(), fields[2].clone()))
        },
    );
    // Every worker connected long ago: its arguments were parsed, and
    // whatever held a password was overwritten.
    for (index, worker) in workers.iter().enumerate() {
        let pid = worker.as_ref().unwrap().id();
        let command_line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        let command_line = String::from_utf8_lossy(&command_line);
        assert!(
            command_line.contains("work") && !command_line.contains("hunter2"),
            "w{index}: {command_line:?}"
        );
        if index % 2 == 0 {
            assert!(
                command_line.contains("postgres:***@"),
                "w{index}: {command_line:?}"
            );
        }
    }
    let index: usize = killed.trim_start_matches('w').parse().unwrap();
    workers[index].as_mut().unwrap().kill().unwrap();
    workers[index].take().unwrap().wait().unwrap();
    let in_block = |block: &str| {
        format!(
            "SELECT COUNT(*) FROM samples s JOIN work_blocks w ON w.run_id = s.run_id \
             AND s.sequence >= w.first_sequence AND s.sequence < w.first_sequence + w.slots \
             WHERE w.block = {block}"
        )
    };
    let committed_when_killed: u32 = server
        .psql("lab", &in_block(&block))
        .trim()
        .parse()
        .unwrap();
    assert!(
        (1..3).contains(&committed_when_killed),
        "{committed_when_killed}"
    );

    // The server goes away while the others measure, and comes back.
    server.stop_fast();
    std::thread::sleep(Duration::from_millis(1500));
    server.start_again();

    for (index, worker) in workers.iter_mut().enumerate() {
        if let Some(child) = worker.take() {
            let status = wait_with_deadline(child, Duration::from_secs(180));
            let log =
                std::fs::read_to_string(directory.path().join(format!("w{index}.log"))).unwrap();
            assert!(status.success(), "w{index}: {log}");
            assert!(!log.contains("panicked"), "w{index}: {log}");
        }
    }
    let logs: String = (0..4)
        .map(|index| {
            std::fs::read_to_string(directory.path().join(format!("w{index}.log"))).unwrap()
        })
        .collect();
    assert!(logs.contains("lost the store"), "{logs}");
    assert!(logs.contains("the store is back after"), "{logs}");
    assert!(
        logs.contains(&format!(
            "block {block} of run 1: taken over from {killed} on {killed_host}"
        )),
        "{logs}"
    );

    assert_eq!(
        server
            .psql(
                "lab",
                "SELECT COUNT(*), COUNT(DISTINCT sequence), MAX(sequence) FROM samples"
            )
            .trim(),
        "21|21|20",
        "planned = stored, no sample twice"
    );
    assert_eq!(
        server
            .psql(
                "lab",
                "SELECT state, COUNT(*) FROM work_blocks GROUP BY state"
            )
            .trim(),
        "done|7"
    );
    assert_eq!(
        server.psql("lab", "SELECT status FROM runs").trim(),
        "complete"
    );
    // Every sample's monitors were written with it, once, in its fenced
    // write (none lost with the killed worker or the restart).
    assert_eq!(
        server
            .psql(
                "lab",
                "SELECT COUNT(*), COUNT(DISTINCT m.sequence) FROM samples s \
                 JOIN sample_monitors m ON m.run_id = s.run_id AND m.sequence = s.sequence \
                 WHERE m.counters ? 'context_switches'"
            )
            .trim(),
        "21|21",
        "every sample with its monitors"
    );
    // Every sample records the host it ran on, one of the two.
    assert_eq!(
        server
            .psql(
                "lab",
                "SELECT COUNT(*) FROM samples WHERE host IS NULL OR host NOT IN ('h0', 'h1')"
            )
            .trim(),
        "0"
    );
    // The takeover is stored with both workers and hosts.
    let takeover = server.psql(
        "lab",
        &format!(
            "SELECT from_worker, from_host, to_worker, to_host FROM work_takeovers \
             WHERE block = {block} AND from_worker = '{killed}'"
        ),
    );
    let takeover: Vec<&str> = takeover.trim().split('|').collect();
    assert_eq!(takeover.len(), 4, "{takeover:?}");
    assert_eq!(takeover[1], killed_host);
    assert_ne!(takeover[2], killed);
    assert!(["h0", "h1"].contains(&takeover[3]), "{takeover:?}");

    // `report` and `runs` show where the run was measured and the
    // takeover; `runs --host` finds it by either host.
    let verdict = |arguments: &[&str]| -> String {
        let output = Command::new(VERDICT)
            .args(arguments)
            .env("VERDICT_DB", &url)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{arguments:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let report = verdict(&["report", &run]);
    assert!(report.contains("  hosts: h0, h1\n"), "{report}");
    let takeover_line = format!("block {block} taken over at ");
    assert!(report.contains(&takeover_line), "{report}");
    assert!(
        report.contains(&format!(
            ": {killed} on {killed_host} -> {} on {}",
            takeover[2], takeover[3]
        )),
        "{report}"
    );
    let document: serde_json::Value =
        serde_json::from_str(&verdict(&["report", &run, "--format", "json"])).unwrap();
    assert_eq!(document["work"]["hosts"], serde_json::json!(["h0", "h1"]));
    assert_eq!(
        document["work"]["takeovers"][0]["from_worker"],
        killed.as_str()
    );
    let runs = verdict(&["runs"]);
    assert!(
        runs.contains(&format!("run 1: measured on h0, h1 by `verdict work`; block {block} taken over from {killed} on {killed_host}")),
        "{runs}"
    );
    let listed: serde_json::Value =
        serde_json::from_str(&verdict(&["runs", "--host", "h1", "--format", "json"])).unwrap();
    assert_eq!(listed["runs"][0]["id"], 1, "{listed}");
    assert_eq!(
        listed["runs"][0]["work"]["takeovers"][0]["to_worker"],
        takeover[2]
    );

    // No iteration's environment held the store or a password.
    let mut seen = 0;
    for entry in std::fs::read_dir(&environments).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(text.contains("VERDICT_MODE="), "{text}");
        for name in ["VERDICT_DB=", "PGPASSWORD=", "PGPASSFILE=", "hunter2"] {
            assert!(
                !text.contains(name),
                "{name} in a workload's environment:\n{text}"
            );
        }
        seen += 1;
    }
    assert!(seen >= 21, "{seen} environments");
}

/// `verdict work` refuses a run that was not detached (exit 2, saying how
/// to go on), and claims nothing.
#[test]
fn work_on_a_run_that_was_not_detached_is_refused() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = server.create_database("lab");
    let directory = tempfile::tempdir().unwrap();
    let experiment = directory.path().join("local.toml");
    std::fs::write(
        &experiment,
        "name = \"local\"\ncommand = [\"true\"]\n\n[factors]\nmode = [\"a\"]\n\n[sampling]\niterations = 2\n",
    )
    .unwrap();
    let output = Command::new(VERDICT)
        .arg("run")
        .arg(&experiment)
        .args(["--db", &url])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = Command::new(VERDICT)
        .args(["work", "1", "--db", &url, "--host", "h0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("run 1 was not detached") && stderr.contains("verdict run --resume 1"),
        "{stderr}"
    );
    assert_eq!(
        server
            .psql("lab", "SELECT COUNT(*) FROM host_leases")
            .trim(),
        "0"
    );
}

/// Shared work needs PostgreSQL: a SQLite store is refused with the way
/// out, and nothing is created in it.
#[test]
fn a_sqlite_store_cannot_be_shared() {
    let directory = tempfile::tempdir().unwrap();
    let experiment = directory.path().join("shared.toml");
    std::fs::write(
        &experiment,
        "name = \"shared\"\ncommand = [\"true\"]\n\n[factors]\nmode = [\"a\"]\n",
    )
    .unwrap();
    let db = directory.path().join("local.db");
    let output = Command::new(VERDICT)
        .arg("run")
        .arg(&experiment)
        .arg("--detach")
        .arg("--db")
        .arg(&db)
        .env_remove("VERDICT_DB")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("use a PostgreSQL store"), "{stderr}");
    let runs = Command::new(VERDICT)
        .args(["runs", "--format", "json", "--db"])
        .arg(&db)
        .env_remove("VERDICT_DB")
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs["runs"], serde_json::json!([]));
}

/// Settings a controller cannot work with are usage errors before
/// anything is opened: an empty host or worker name, a lease that is not a
/// positive number of seconds up to a day (`1e300` once panicked).
#[test]
fn work_refuses_empty_names_and_unusable_leases() {
    for arguments in [
        ["--host", ""],
        ["--host", " "],
        ["--worker", ""],
        ["--lease", "1e300"],
        ["--lease", "0"],
        ["--lease", "-3"],
        ["--lease", "NaN"],
    ] {
        let output = Command::new(VERDICT)
            .args(["work", "1", "--db", "unused.db"])
            .arg(format!("{}={}", arguments[0], arguments[1]))
            .env_remove("VERDICT_DB")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{arguments:?}: {stderr}");
        assert!(stderr.contains(arguments[0]), "{arguments:?}: {stderr}");
    }
    let output = Command::new(VERDICT)
        .args(["run", "x.toml", "--host", ""])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(!std::path::Path::new("unused.db").exists());
}
