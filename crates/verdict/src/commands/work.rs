//! `verdict work RUN --db URL [--host H…]` (one controller measuring a
//! detached run's blocks alongside others; the loop is verdict-engine's
//! `Worker`). Must not hold SQL or orchestration.

use std::process::ExitCode;
use std::time::Duration;

use crate::common::{
    DbArgs, cancel_on_interrupt, capture_environment, hostname, parse_host, parse_timeout,
};
use crate::error::CliError;
use crate::progress::Progress;
use verdict_engine::{WorkOptions, Worker};
use verdict_model::RunId;
use verdict_store::{Database, Store, WorkStore};

/// The longest `--lease`: a day (a controller that dies holds its block
/// that long).
const LONGEST_LEASE: Duration = Duration::from_secs(24 * 3600);

#[derive(Debug, clap::Args)]
pub(crate) struct WorkArgs {
    /// The detached run (`verdict run FILE --detach` printed its id).
    pub(crate) run: i64,
    /// A target host this controller drives (repeatable; default: this
    /// machine's host name). One controller at a time holds a host's lease.
    #[arg(long = "host", value_name = "HOST", value_parser = parse_host)]
    pub(crate) hosts: Vec<String>,
    /// Seconds a controller's lease on a host lasts without renewal (up to
    /// a day); a controller that dies loses its block to another after
    /// this long.
    #[arg(long, default_value = "30", value_name = "SECONDS", value_parser = parse_lease)]
    pub(crate) lease: Duration,
    /// How long the store may stay unreachable (a server restart) before
    /// this controller gives up, e.g. 60s or 5m; meanwhile it reconnects
    /// with backoff and then goes on where it was.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_timeout)]
    pub(crate) reconnect_timeout: Duration,
    /// This controller's name (default: host name and process id).
    #[arg(long, value_name = "NAME", value_parser = parse_host)]
    pub(crate) worker: Option<String>,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

/// `--lease`: positive seconds, at most `LONGEST_LEASE`.
fn parse_lease(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    match Duration::try_from_secs_f64(seconds) {
        Ok(lease) if !lease.is_zero() && lease <= LONGEST_LEASE => Ok(lease),
        _ => Err(format!(
            "`{text}`: expected a positive number of seconds, at most {} (a day)",
            LONGEST_LEASE.as_secs()
        )),
    }
}

pub(crate) fn run(args: &WorkArgs) -> Result<ExitCode, CliError> {
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
        lease: args.lease,
        reconnect_timeout: args.reconnect_timeout,
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
    let mut progress = Progress::shared_work(&experiment.primary_metric().name);
    let summary = worker
        .work(RunId(args.run), &options, &mut progress)
        .map_err(CliError::input)?;
    drop(progress);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_positive_and_at_most_a_day() {
        assert_eq!(parse_lease("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_lease("86400"), Ok(LONGEST_LEASE));
        for bad in ["0", "-1", "1e300", "inf", "NaN", "86401", "x"] {
            assert!(parse_lease(bad).is_err(), "{bad}");
        }
    }
}
