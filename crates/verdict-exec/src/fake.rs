//! `FakeExecutor`: scripted outcomes for engine and bisection tests.
//!
//! Deterministic and instant: it answers from a queue or a closure and
//! records every invocation it was given; its files are an in-memory map and
//! its clock starts at a fixed instant and advances by each outcome's wall
//! time. It must not start processes, sleep, touch the file system or read
//! the real clock.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::{Cancel, ExecError, Invocation, Outcome, Target};

type Responder = dyn Fn(&Invocation) -> Result<Outcome, ExecError> + Send + Sync;

enum Script {
    Queue(VecDeque<Result<Outcome, ExecError>>),
    Function(Box<Responder>),
}

/// An [`Target`] that returns scripted results.
///
/// Like the real one, it returns [`ExecError::Cancelled`] without consuming
/// a scripted result when the token is already cancelled; the invocation is
/// still recorded.
pub struct FakeExecutor {
    script: Mutex<Script>,
    seen: Mutex<Vec<Invocation>>,
    files: Mutex<BTreeMap<PathBuf, Vec<u8>>>,
    clock_ms: Mutex<i64>,
    name: String,
}

/// Where the fake's clock starts: 2026-01-01 00:00 UTC.
pub const FAKE_CLOCK_START_MS: i64 = 1_767_225_600_000;

impl FakeExecutor {
    /// Answers each run with the next result of `results`, in order, and with
    /// [`ExecError::Unscripted`] once they run out.
    pub fn with_queue(results: impl IntoIterator<Item = Result<Outcome, ExecError>>) -> Self {
        Self::from_script(Script::Queue(results.into_iter().collect()))
    }

    /// Answers each run by calling `responder` with the invocation.
    pub fn with_function(
        responder: impl Fn(&Invocation) -> Result<Outcome, ExecError> + Send + Sync + 'static,
    ) -> Self {
        Self::from_script(Script::Function(Box::new(responder)))
    }

    fn from_script(script: Script) -> Self {
        Self {
            script: Mutex::new(script),
            seen: Mutex::new(Vec::new()),
            files: Mutex::new(BTreeMap::new()),
            clock_ms: Mutex::new(FAKE_CLOCK_START_MS),
            name: "local".to_string(),
        }
    }

    /// Names the fake machine (its `target_name`), as a remote host would be.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Adds (or replaces) a file on the fake machine.
    pub fn insert_file(&self, path: impl Into<PathBuf>, contents: impl Into<Vec<u8>>) {
        lock(&self.files).insert(path.into(), contents.into());
    }

    /// Removes a file from the fake machine.
    pub fn remove_file(&self, path: &Path) {
        lock(&self.files).remove(path);
    }

    /// Appends a result to the queue. Panics on a function-driven fake, which
    /// is a mistake in the test that uses it.
    pub fn push(&self, result: Result<Outcome, ExecError>) {
        match &mut *lock(&self.script) {
            Script::Queue(queue) => queue.push_back(result),
            Script::Function(_) => panic!("FakeExecutor::push on a fake built with_function"),
        }
    }

    /// Every invocation run so far, in order.
    pub fn invocations(&self) -> Vec<Invocation> {
        lock(&self.seen).clone()
    }

    /// How many scripted results remain (always 0 for a function).
    pub fn remaining(&self) -> usize {
        match &*lock(&self.script) {
            Script::Queue(queue) => queue.len(),
            Script::Function(_) => 0,
        }
    }
}

/// A panic in one test thread must not hide the recorded invocations from
/// the assertion that explains it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Target for FakeExecutor {
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError> {
        lock(&self.seen).push(invocation.clone());
        if cancel.is_cancelled() {
            return Err(ExecError::Cancelled);
        }
        let result = match &mut *lock(&self.script) {
            Script::Queue(queue) => queue.pop_front().unwrap_or_else(|| {
                Err(ExecError::Unscripted {
                    program: invocation.program.to_string(),
                })
            }),
            Script::Function(responder) => responder(invocation),
        };
        if let Ok(outcome) = &result {
            *lock(&self.clock_ms) += outcome.wall.as_millis() as i64;
        }
        result
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        lock(&self.files).get(path).cloned().ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, "No such file or directory (fake)")
        })
    }

    fn list_directory(&self, path: &Path) -> io::Result<Vec<String>> {
        let files = lock(&self.files);
        let mut names: Vec<String> = files
            .keys()
            .filter_map(|file| file.strip_prefix(path).ok())
            .filter_map(|rest| rest.components().next())
            .map(|first| first.as_os_str().to_string_lossy().into_owned())
            .collect();
        names.dedup();
        if names.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "No such directory (fake)",
            ));
        }
        Ok(names)
    }

    fn now_unix_ms(&self) -> i64 {
        *lock(&self.clock_ms)
    }

    fn target_name(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for FakeExecutor {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let script = match &*lock(&self.script) {
            Script::Queue(queue) => format!("queue of {}", queue.len()),
            Script::Function(_) => "function".to_string(),
        };
        formatter
            .debug_struct("FakeExecutor")
            .field("script", &script)
            .field("invocations", &lock(&self.seen).len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Program, Status};
    use std::time::Duration;

    #[test]
    fn queue_answers_in_order_then_reports_unscripted() {
        let fake = FakeExecutor::with_queue([
            Ok(Outcome::exited(0, Duration::from_millis(10))),
            Err(ExecError::Cancelled),
        ]);
        fake.push(Ok(Outcome::exited(2, Duration::from_millis(20))));
        let cancel = Cancel::new();
        let invocation = Invocation::argv(["gzip", "-1"]);

        assert_eq!(
            fake.run(&invocation, &cancel).unwrap().status,
            Status::Exited(0)
        );
        assert!(matches!(
            fake.run(&invocation, &cancel),
            Err(ExecError::Cancelled)
        ));
        assert_eq!(
            fake.run(&invocation, &cancel).unwrap().wall,
            Duration::from_millis(20)
        );
        let error = fake.run(&invocation, &cancel).unwrap_err();
        assert_eq!(
            error.to_string(),
            "run `gzip -1` in the fake executor: no outcome is scripted for it"
        );
        assert_eq!(fake.invocations().len(), 4);
        assert_eq!(fake.remaining(), 0);
    }

    #[test]
    fn function_sees_each_invocation_and_they_are_recorded() {
        let fake = FakeExecutor::with_function(|invocation| {
            let level = invocation
                .env
                .iter()
                .find(|(name, _)| name == "LEVEL")
                .map(|(_, value)| value.parse::<u64>().unwrap())
                .unwrap();
            Ok(Outcome::exited(0, Duration::from_millis(level)))
        });
        let cancel = Cancel::new();
        for level in ["1", "9"] {
            let outcome = fake
                .run(
                    &Invocation::argv(["work"]).with_env("LEVEL", level),
                    &cancel,
                )
                .unwrap();
            assert_eq!(outcome.wall, Duration::from_millis(level.parse().unwrap()));
        }
        let seen = fake.invocations();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].env, vec![("LEVEL".to_string(), "9".to_string())]);
        assert_eq!(seen[0].program, Program::Argv(vec!["work".into()]));
    }

    #[test]
    fn files_and_clock_are_scripted() {
        let fake = FakeExecutor::with_queue([Ok(Outcome::exited(0, Duration::from_millis(250)))]);
        fake.insert_file("/work/out/b.yaml", "b");
        fake.insert_file("/work/out/a.yaml", "a");
        fake.insert_file("/work/top", "t");
        assert_eq!(fake.read_file(Path::new("/work/out/a.yaml")).unwrap(), b"a");
        assert_eq!(
            fake.read_file(Path::new("/work/none")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(
            fake.list_directory(Path::new("/work")).unwrap(),
            vec!["out", "top"]
        );
        assert_eq!(
            fake.list_directory(Path::new("/work/out")).unwrap(),
            vec!["a.yaml", "b.yaml"]
        );
        assert_eq!(fake.now_unix_ms(), FAKE_CLOCK_START_MS);
        fake.run(&Invocation::argv(["x"]), &Cancel::new()).unwrap();
        assert_eq!(fake.now_unix_ms(), FAKE_CLOCK_START_MS + 250);
        fake.remove_file(Path::new("/work/top"));
        assert!(fake.read_file(Path::new("/work/top")).is_err());
        assert_eq!(fake.target_name(), "local");
        assert_eq!(
            FakeExecutor::with_queue([]).named("lpar1").target_name(),
            "lpar1"
        );
    }

    #[test]
    fn cancelled_token_does_not_consume_the_queue() {
        let fake = FakeExecutor::with_queue([Ok(Outcome::exited(0, Duration::ZERO))]);
        let cancel = Cancel::new();
        cancel.cancel();
        assert!(matches!(
            fake.run(&Invocation::argv(["x"]), &cancel),
            Err(ExecError::Cancelled)
        ));
        assert_eq!(fake.remaining(), 1);
        assert_eq!(fake.invocations().len(), 1);
    }
}
