//! `verdict work RUN --db URL [--host H…]` (one controller measuring a detached run's blocks alongside others; the
//! loop is verdict-engine's `Worker`). Must not hold SQL or orchestration.

use std::process::ExitCode;
use std::time::Duration;

use crate::common::{DbArgs, cancel_on_interrupt, capture_environment, hostname};
use crate::error::CliError;
use crate::progress::Progress;
use verdict_engine::{WorkOptions, Worker};
use verdict_model::RunId;
use verdict_store::{Database, Store, WorkStore};

#[derive(Debug, clap::Args)]
pub(crate) struct WorkArgs {
    /// The detached run (`verdict run FILE --detach` printed its id).
    pub(crate) run: i64,
    /// A target host this controller drives (repeatable; default: this
    /// machine's host name). One controller at a time holds a host's lease.
    #[arg(long = "host", value_name = "HOST")]
    pub(crate) hosts: Vec<String>,
    /// Seconds a controller's lease on a host lasts without renewal; a
    /// controller that dies loses its block to another after this long.
    #[arg(long, default_value = "30", value_name = "SECONDS")]
    pub(crate) lease: f64,
    /// This controller's name (default: host name and process id).
    #[arg(long, value_name = "NAME")]
    pub(crate) worker: Option<String>,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &WorkArgs) -> Result<ExitCode, CliError> {
    if !(args.lease.is_finite() && args.lease > 0.0) {
        return Err(CliError::input(format!(
            "--lease {}: expected a positive number of seconds",
            args.lease
        )));
    }
    let store = args.db.open()?;
    let work = store.work_store().map_err(CliError::input)?;
    let record = store.run(RunId(args.run)).map_err(CliError::input)?;
    let location = args.db.location();
    let open = move || -> Result<Box<dyn WorkStore>, verdict_store::StoreError> {
        match Database::open(&location)? {
            Database::Postgres { store, .. } => Ok(store),
            Database::Sqlite(store) => Err(verdict_store::StoreError::NeedsPostgres {
                path: store.path().to_path_buf(),
            }),
        }
    };
    let hosts = if args.hosts.is_empty() {
        vec![hostname()]
    } else {
        args.hosts.clone()
    };
    let options = WorkOptions {
        worker: args
            .worker
            .clone()
            .unwrap_or_else(|| format!("{}:{}", hostname(), std::process::id())),
        hosts,
        lease: Duration::from_secs_f64(args.lease),
    };
    let worker = Worker {
        executor: &verdict_exec::SystemExecutor,
        store: work,
        open_store: &open,
        cancel: cancel_on_interrupt(),
        environment: &capture_environment,
    };
    let experiment: verdict_model::Experiment =
        serde_json::from_str(&record.experiment_json).map_err(CliError::internal)?;
    let mut progress = Progress::new(&experiment.primary_metric().name);
    let summary = worker
        .work(RunId(args.run), &options, &mut progress)
        .map_err(CliError::input)?;
    eprintln!(
        "verdict: {}: {} block(s), {} sample(s){}{}",
        options.worker,
        summary.blocks,
        summary.samples,
        if summary.taken_over > 0 {
            format!(", {} taken over", summary.taken_over)
        } else {
            String::new()
        },
        if summary.completed_run {
            format!("; run {} complete", args.run)
        } else {
            String::new()
        }
    );
    if summary.cancelled {
        return Err(CliError::Interrupted(format!(
            "worker {} interrupted; its block is taken over by another worker after its lease expires",
            options.worker
        )));
    }
    Ok(ExitCode::SUCCESS)
}
