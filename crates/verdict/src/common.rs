//! Settings shared by subcommands, resolved once: the database path, the
//! output format, Ctrl-C handling, and time formatting for reports.

use crate::error::CliError;
use std::path::PathBuf;
use verdict_exec::Cancel;
use verdict_report::Format;
use verdict_store::SqliteStore;

/// `--db PATH` (or `VERDICT_DB`; default `./verdict.db`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DbArgs {
    /// SQLite database holding runs and samples.
    #[arg(
        long,
        env = "VERDICT_DB",
        default_value = "verdict.db",
        value_name = "PATH"
    )]
    pub(crate) db: PathBuf,
}

impl DbArgs {
    pub(crate) fn open(&self) -> Result<SqliteStore, CliError> {
        SqliteStore::open(&self.db).map_err(CliError::input)
    }

    /// Open an existing database; a missing file is an input error, not a
    /// new empty database.
    pub(crate) fn open_existing(&self) -> Result<SqliteStore, CliError> {
        if !self.db.exists() {
            return Err(CliError::input(format!(
                "no database at {} (run an experiment first, or pass --db PATH / VERDICT_DB)",
                self.db.display()
            )));
        }
        self.open()
    }
}

/// Parse `--format`.
pub(crate) fn parse_format(text: &str) -> Result<Format, CliError> {
    Format::parse(text).ok_or_else(|| {
        CliError::input(format!(
            "unknown --format `{text}`; expected text, markdown, csv or json"
        ))
    })
}

/// A cancel token wired to Ctrl-C (and SIGTERM): the first signal asks the
/// run to stop after recording what finished; a second one exits at once
/// (everything finished is already committed).
pub(crate) fn cancel_on_interrupt() -> Cancel {
    let cancel = Cancel::new();
    let handler_cancel = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if handler_cancel.is_cancelled() {
            eprintln!("verdict: interrupted again; exiting now");
            std::process::exit(3);
        }
        eprintln!(
            "verdict: interrupt: stopping after recording what finished (Ctrl-C again to exit at once)"
        );
        handler_cancel.cancel();
    });
    cancel
}

/// UTC `YYYY-MM-DD HH:MM` from milliseconds since the epoch (civil-from-days,
/// Howard Hinnant's algorithm), so reports need no time-zone database.
pub(crate) fn format_time(milliseconds: i64) -> String {
    let seconds = milliseconds.div_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        of_day / 3600,
        of_day % 3600 / 60
    )
}

/// The local machine as a target, with its environment capture (the
/// kernel config read once per process).
pub(crate) fn local_environment() -> &'static crate::target::EnvironmentSource<'static> {
    static LOCAL: std::sync::OnceLock<crate::target::EnvironmentSource<'static>> =
        std::sync::OnceLock::new();
    LOCAL.get_or_init(|| crate::target::EnvironmentSource::new(&verdict_exec::SystemExecutor))
}

/// The machine's environment, as every run records it (at its start and
/// its end).
pub(crate) fn capture_environment() -> verdict_model::Environment {
    local_environment().capture()
}

/// The engine on this machine: real processes, the given store, environment
/// captured from /proc and /sys.
pub(crate) fn system_engine(
    store: &dyn verdict_store::Store,
    cancel: Cancel,
) -> verdict_engine::Engine<'_> {
    verdict_engine::Engine {
        executor: &verdict_exec::SystemExecutor,
        store,
        cancel,
        environment: &capture_environment,
    }
}

pub(crate) fn tool_version() -> String {
    format!("verdict {}", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_utc_times() {
        assert_eq!(super::format_time(0), "1970-01-01 00:00 UTC");
        assert_eq!(
            super::format_time(1_796_040_000_000),
            "2026-11-30 12:00 UTC"
        );
        assert_eq!(super::format_time(951_782_400_000), "2000-02-29 00:00 UTC");
    }
}
