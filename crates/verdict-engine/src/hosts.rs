//! Several machines under test at once, the host as a blocking factor: each
//! host runs its own complete experiment (its own randomized blocks, its own
//! run in the store, its environment recorded with it), all hosts
//! concurrently, one thread per host. Comparisons stay within a host; a
//! combined decision across hosts is the caller's (never pooled samples).
//! A host whose part fails (it stayed down) ends alone; the others go on.
//!
//! Must not: share a store connection between threads (each opens its own),
//! or pool samples of different hosts.

use crate::runner::{Engine, EngineError, Observer, RunOutcome, StartOptions};
use verdict_exec::{Cancel, Target};
use verdict_model::{Environment, RunId};
use verdict_store::{Store, StoreError};

/// One host's machine and how its environment is captured.
pub struct HostPart<'a> {
    pub target: &'a dyn Target,
    pub environment: &'a (dyn Fn() -> Environment + Sync),
}

impl std::fmt::Debug for HostPart<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("HostPart")
            .field("target", &self.target.target_name())
            .finish_non_exhaustive()
    }
}

/// What a host does: start a new run, or continue one.
#[derive(Debug, Clone)]
pub enum HostWork {
    Start {
        options: Box<StartOptions>,
        annotations: Vec<(String, serde_json::Value)>,
    },
    Resume(RunId),
}

/// Opens a store connection for one host's thread.
pub type StoreOpener<'a> = dyn Fn() -> Result<Box<dyn Store>, StoreError> + Sync + 'a;

/// Makes the observer of one host's run, given the host's name.
pub type ObserverFactory<'a> = dyn Fn(&str) -> Box<dyn Observer + Send> + Sync + 'a;

/// Runs every host's work concurrently; one result per host, in order.
pub fn run_on_hosts(
    work: Vec<(HostPart<'_>, HostWork)>,
    open_store: &StoreOpener<'_>,
    cancel: &Cancel,
    observer: &ObserverFactory<'_>,
) -> Vec<Result<RunOutcome, EngineError>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = work
            .into_iter()
            .map(|(part, host_work)| {
                let cancel = cancel.clone();
                scope.spawn(move || {
                    let store = open_store()?;
                    let engine = Engine {
                        executor: part.target,
                        store: &*store,
                        cancel,
                        environment: part.environment,
                    };
                    let mut observer = observer(part.target.target_name());
                    match host_work {
                        HostWork::Start {
                            options,
                            annotations,
                        } => {
                            let annotations: Vec<(&str, serde_json::Value)> = annotations
                                .iter()
                                .map(|(key, value)| (key.as_str(), value.clone()))
                                .collect();
                            engine.start_annotated(&options, &annotations, &mut *observer)
                        }
                        HostWork::Resume(run) => engine.resume(run, &mut *observer),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a host's thread panicked"))
            .collect()
    })
}
