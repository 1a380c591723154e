//! Real processes against one database file: a writer killed with SIGKILL
//! mid-loop (and resumed, and killed again) leaves an intact database whose
//! samples are a contiguous prefix, every one complete; another process reads
//! while it writes; two processes create a fresh database at the same time.
//! The writer is `examples/append_loop.rs`, which `cargo test` builds.
//! Must not leave a child running (a guard kills it on panic).

use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use verdict_model::RunId;
use verdict_store::{SqliteStore, Store};

fn append_loop() -> PathBuf {
    // target/<profile>/deps/processes-HASH -> target/<profile>/examples/append_loop
    let test = std::env::current_exe().unwrap();
    let examples = test.parent().unwrap().parent().unwrap().join("examples");
    let binary = examples.join(format!("append_loop{}", std::env::consts::EXE_SUFFIX));
    assert!(
        binary.exists(),
        "{} is missing: run `cargo test -p verdict-store` (it builds the examples) or \
         `cargo build -p verdict-store --example append_loop`",
        binary.display()
    );
    binary
}

/// A child that is SIGKILLed when dropped, so a failing assertion never
/// leaves it writing.
struct Writer {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Writer {
    fn start(database: &Path, arguments: &[&str]) -> Writer {
        let mut child = Command::new(append_loop())
            .arg(database)
            .args(arguments)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start append_loop");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Writer { child, lines }
    }

    fn next_line(&mut self) -> String {
        self.lines
            .next()
            .expect("append_loop ended early")
            .expect("read append_loop output")
    }

    /// SIGKILL, and check it was the signal that ended it.
    fn kill(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn integrity(path: &Path) -> String {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap()
}

/// Sequences are exactly 0..n and every sample is whole: the five metrics
/// append_loop writes, and a failure record exactly where it made one.
fn assert_contiguous_and_whole(store: &SqliteStore, run: RunId) -> usize {
    let samples = store.samples(run).unwrap();
    for (index, sample) in samples.iter().enumerate() {
        assert_eq!(sample.sequence as usize, index, "gap or reordering");
        assert_eq!(sample.metrics.len(), 5, "sample {index} is partial");
        assert_eq!(
            sample.failure.is_some(),
            sample.sequence % 17 == 16,
            "sample {index}"
        );
    }
    samples.len()
}

#[test]
fn a_killed_writer_leaves_a_contiguous_prefix_and_resumes() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("verdict.db");

    let mut writer = Writer::start(&path, &[]);
    let first_line = writer.next_line();
    let run = RunId(
        first_line
            .strip_prefix("run ")
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("expected `run ID`, got {first_line:?}")),
    );
    // Read from this process while the child writes.
    let reader = SqliteStore::open(&path).unwrap();
    for reported in 0..150usize {
        assert_eq!(writer.next_line(), reported.to_string());
        if reported % 50 == 0 {
            let stored = assert_contiguous_and_whole(&reader, run);
            assert!(
                stored > reported,
                "sequence {reported} reported but not stored"
            );
        }
    }
    writer.kill();
    assert_eq!(integrity(&path), "ok");
    let store = SqliteStore::open(&path).unwrap();
    let after_first_kill = assert_contiguous_and_whole(&store, run);
    assert!(
        after_first_kill >= 150,
        "reported samples lost: {after_first_kill}"
    );

    // Resume, and kill it again part-way.
    let mut writer = Writer::start(&path, &["--run", &run.to_string()]);
    for reported in after_first_kill..after_first_kill + 100 {
        assert_eq!(writer.next_line(), reported.to_string());
    }
    writer.kill();
    assert_eq!(integrity(&path), "ok");
    let after_second_kill = assert_contiguous_and_whole(&store, run);
    assert!(after_second_kill >= after_first_kill + 100);

    // Resume to a fixed count: exactly that many more, none stored twice.
    let status = Command::new(append_loop())
        .arg(&path)
        .args(["--run", &run.to_string(), "--count", "40"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(
        assert_contiguous_and_whole(&store, run),
        after_second_kill + 40
    );
    let summary = &store.list_runs().unwrap()[0];
    assert_eq!(summary.done as usize, after_second_kill + 40);
    assert_eq!(integrity(&path), "ok");
}

/// Racing creators: one migrates, the others wait for it and see the
/// finished schema (neither "database is locked" nor a half-made file taken
/// for someone else's). Several rounds, since the race is timing-dependent.
#[test]
fn processes_can_create_a_fresh_database_at_once() {
    let directory = tempfile::tempdir().unwrap();
    for round in 0..5 {
        let path = directory.path().join(format!("verdict-{round}.db"));
        let children: Vec<Child> = (0..3)
            .map(|_| {
                Command::new(append_loop())
                    .arg(&path)
                    .args(["--count", "20"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let store = SqliteStore::open(&path).unwrap();
        let runs = store.list_runs().unwrap();
        assert_eq!(runs.len(), 3);
        for run in runs {
            assert_eq!(assert_contiguous_and_whole(&store, run.id), 20);
        }
        assert_eq!(integrity(&path), "ok");
    }
}
