//! Settings and helpers shared by subcommands (so no command module needs
//! another's), resolved once: the database path, the output format, where
//! to run (`--host`, as the engine's launch takes it), loading an
//! experiment file, Ctrl-C handling, the quick doctor measurement stored
//! with a run, and time formatting for reports.

use crate::error::CliError;
use std::path::PathBuf;
use verdict_exec::Cancel;
use verdict_report::Format;
use verdict_store::{Database, Location, ReadOnly};

/// `--db PATH|URL` (or `VERDICT_DB`; default `./verdict.db`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DbArgs {
    /// The store holding runs and samples: a SQLite file, or a PostgreSQL
    /// URL (`postgres://user@host/database`; a password is better kept in
    /// PGPASSFILE / ~/.pgpass or PGPASSWORD than in the URL).
    #[arg(
        long,
        env = "VERDICT_DB",
        default_value = "verdict.db",
        value_name = "PATH|URL",
        hide_env_values = true
    )]
    pub(crate) db: PathBuf,
}

impl DbArgs {
    /// Where `--db` points.
    pub(crate) fn location(&self) -> Location {
        Location::from(self.db.as_path())
    }

    /// The store as it may be shown (a URL's password redacted).
    pub(crate) fn display(&self) -> String {
        self.location().redacted()
    }

    pub(crate) fn open(&self) -> Result<Database, CliError> {
        Database::open(&self.location()).map_err(CliError::input)
    }

    /// The run `run`, or the latest one in `store` (which this names in the
    /// error when it holds none).
    pub(crate) fn run_or_latest(
        &self,
        store: &dyn verdict_store::Store,
        run: Option<i64>,
    ) -> Result<verdict_model::RunId, CliError> {
        match run {
            Some(run) => Ok(verdict_model::RunId(run)),
            None => Ok(store
                .latest_run()
                .map_err(CliError::internal)?
                .ok_or_else(|| CliError::input(format!("no runs in {}", self.display())))?
                .id),
        }
    }

    /// Open an existing database for a command that reads and may keep a
    /// cache in it (`history`): writable when this user may write the file
    /// and its directory, otherwise read-only (the cache is then not kept).
    pub(crate) fn open_existing(&self) -> Result<Database, CliError> {
        if let Location::Postgres(_) = self.location() {
            return self.open();
        }
        // Opening for writing (without truncating) changes nothing and
        // answers for this user; a directory without any write bit cannot
        // take SQLite's -wal and -shm files.
        let writable =
            |path: &std::path::Path| std::fs::OpenOptions::new().append(true).open(path).is_ok();
        let directory_writable = |path: &std::path::Path| {
            path.metadata()
                .is_ok_and(|meta| !meta.permissions().readonly())
        };
        let directory = match self.db.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if self.db.exists() && writable(&self.db) && directory_writable(&directory) {
            self.open()
        } else {
            self.open_read_only()
        }
    }

    /// Open an existing database for a command that only reads: a missing
    /// file is an input error, not a new empty database; nothing is written
    /// to the file or beside it, so a user who may not write either can
    /// read. An older schema is read through a copy migrated in memory (a
    /// note on stderr says so).
    pub(crate) fn open_read_only(&self) -> Result<Database, CliError> {
        let location = self.location();
        if let Location::Postgres(_) = location {
            return Database::open_read_only(&location).map_err(CliError::input);
        }
        if !self.db.exists() {
            return Err(CliError::input(format!(
                "no database at {} (run an experiment first, or pass --db PATH / VERDICT_DB)",
                self.db.display()
            )));
        }
        let store = Database::open_read_only(&location).map_err(CliError::input)?;
        if let Some(ReadOnly::MigratedCopy { from_version }) = store.read_only() {
            eprintln!(
                "verdict: note: {} has schema version {from_version} (this verdict writes {}); \
                 read through a copy migrated in memory, the file is left as it is (the next \
                 command that writes to it, such as `verdict run`, migrates it)",
                self.db.display(),
                Database::schema_version()
            );
        }
        Ok(store)
    }
}

/// The one parser for fractions on the command line (`--threshold`,
/// `--alpha`, `--power`, `--cv`): `0.05` or `5%`, strictly between 0 and 1.
pub(crate) fn parse_fraction(text: &str) -> Result<f64, String> {
    let value = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|value| value / 100.0),
        None => text.trim().parse::<f64>(),
    }
    .map_err(|_| format!("`{text}` is not a number; expected e.g. 0.05 or 5%"))?;
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(format!(
            "`{text}` is out of range; expected a fraction between 0 and 1 (or 0% to 100%)"
        ))
    }
}

/// Parse `--format`.
pub(crate) fn parse_format(text: &str) -> Result<Format, CliError> {
    Format::parse(text).ok_or_else(|| {
        CliError::input(format!(
            "unknown --format `{text}`; expected text, markdown, csv, json, html or email"
        ))
    })
}

/// `--format` of `runs`: a table format (`md` is accepted for markdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TableFormat {
    Text,
    #[value(alias = "md")]
    Markdown,
    Csv,
    Json,
}

impl From<TableFormat> for Format {
    fn from(format: TableFormat) -> Format {
        match format {
            TableFormat::Text => Format::Text,
            TableFormat::Markdown => Format::Markdown,
            TableFormat::Csv => Format::Csv,
            TableFormat::Json => Format::Json,
        }
    }
}

/// `--format` of `report`, `compare`, `run` and `ab`: a table format,
/// the email form (every line at most 80 columns) or the self-contained
/// HTML page (`md` is accepted for markdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReportFormat {
    Text,
    #[value(alias = "md")]
    Markdown,
    Csv,
    Json,
    Html,
    Email,
}

impl ReportFormat {
    /// The table format, `None` for the HTML page.
    pub(crate) const fn table(self) -> Option<Format> {
        match self {
            ReportFormat::Text => Some(Format::Text),
            ReportFormat::Markdown => Some(Format::Markdown),
            ReportFormat::Csv => Some(Format::Csv),
            ReportFormat::Json => Some(Format::Json),
            ReportFormat::Email => Some(Format::Email),
            ReportFormat::Html => None,
        }
    }
}

/// `--format` of `plan`: text or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TextOrJson {
    Text,
    Json,
}

/// `--format` of `history`: text, JSON or the email form (every line at
/// most 80 columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TextJsonOrEmail {
    Text,
    Json,
    Email,
}

/// `--format` of the summary `bisect` prints when it ends: text, or the
/// email form (with what ran and how to reproduce it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TextOrEmail {
    Text,
    Email,
}

/// `--width N`: lay text tables out within N columns, stacking a table
/// too wide (one block per row) instead of overflowing; the default keeps
/// every table on its natural width.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct WidthArgs {
    /// Lay text tables out within N columns (a table too wide becomes one
    /// block of lines per row); default: as wide as the table is.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(40..))]
    pub(crate) width: Option<u16>,
}

impl WidthArgs {
    pub(crate) fn columns(self) -> Option<usize> {
        self.width.map(usize::from)
    }
}

/// Whether `--format` asks for the self-contained HTML page.
pub(crate) fn is_html(format: &str) -> bool {
    format == "html"
}

/// Write a rendered report to `-o FILE`, or to standard output without it.
pub(crate) fn emit(rendered: &str, output: Option<&std::path::Path>) -> Result<(), CliError> {
    match output {
        None => {
            crate::output::write_str(rendered);
            Ok(())
        }
        Some(path) => std::fs::write(path, rendered)
            .map_err(|error| CliError::input(format!("cannot write {}: {error}", path.display()))),
    }
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
            std::process::exit(verdict_model::ExitClass::Interrupted.code().into());
        }
        eprintln!(
            "verdict: interrupt: stopping after recording what finished (Ctrl-C again to exit at once)"
        );
        handler_cancel.cancel();
    });
    cancel
}

/// The machine's environment, as every run records it (at its start and
/// its end).
pub(crate) fn capture_environment() -> verdict_model::Environment {
    verdict_engine::machine::capture_local()
}

/// This machine's host name, as runs record it (`localhost` when unknown).
pub(crate) fn hostname() -> String {
    capture_environment()
        .hostname
        .unwrap_or_else(|| "localhost".to_string())
}

/// The engine on this machine: real processes, the given store, environment
/// captured from /proc and /sys.
pub(crate) fn system_engine(
    store: &dyn verdict_store::Store,
    cancel: Cancel,
) -> verdict_engine::Engine<'_> {
    verdict_engine::launch::local_engine(store, cancel)
}

/// An experiment file as loaded: the validated experiment, its text (stored
/// with the run) and its `workdir` as the file wrote it.
pub(crate) struct LoadedExperiment {
    pub(crate) experiment: verdict_model::Experiment,
    pub(crate) text: String,
    written_workdir: Option<PathBuf>,
}

impl LoadedExperiment {
    /// For a run on another machine (ssh hosts, a VM): the controller's
    /// directories mean nothing there, so only an absolute workdir from
    /// the file is kept (else the remote login directory).
    pub(crate) fn keep_only_absolute_workdir(&mut self) {
        self.experiment.workdir = self
            .written_workdir
            .clone()
            .filter(|directory| directory.is_absolute());
    }
}

/// Load an experiment file and apply command-line overrides. Relative
/// `workdir` resolves against the file's directory, and an absent one is the
/// current directory, recorded as an absolute path so a resumed run works in
/// the same place.
pub(crate) fn load_experiment(
    path: &std::path::Path,
    iterations: Option<u32>,
    until_decided: bool,
) -> Result<LoadedExperiment, CliError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        CliError::input(format!("read experiment file {}: {error}", path.display()))
    })?;
    let mut experiment = verdict_model::Experiment::parse(&text, &path.display().to_string())
        .map_err(CliError::input)?;
    let written_workdir = experiment.workdir.clone();
    let current = std::env::current_dir().map_err(CliError::internal)?;
    // A kernel build's tree, patches and fragments are named relative to
    // the experiment file.
    experiment
        .resolve_build_paths(&current.join(path.parent().unwrap_or(std::path::Path::new("."))));
    experiment.workdir = Some(match &experiment.workdir {
        Some(directory) if directory.is_absolute() => directory.clone(),
        Some(directory) => current
            .join(path.parent().unwrap_or(std::path::Path::new(".")))
            .join(directory),
        None => current,
    });
    if let Some(iterations) = iterations {
        if iterations == 0 {
            return Err(CliError::input("-n must be at least 1"));
        }
        match &mut experiment.sampling.mode {
            verdict_model::SamplingMode::Fixed => experiment.sampling.iterations = iterations,
            verdict_model::SamplingMode::Adaptive { min, max } => {
                *max = iterations;
                *min = (*min).min(iterations);
            }
            verdict_model::SamplingMode::Uncapped { .. } => {}
        }
    }
    if until_decided && experiment.sampling.mode == verdict_model::SamplingMode::Fixed {
        // With -n, the planned-cap design; without, no cap: each comparison
        // ends when decided or at the information its threshold needs.
        experiment.sampling.mode = match iterations {
            Some(max) => verdict_model::SamplingMode::Adaptive {
                min: 6.min(max),
                max,
            },
            None => verdict_model::SamplingMode::Uncapped { min: 6 },
        };
    }
    // Refused here, before any setup runs, with the file named.
    verdict_engine::check_design(&experiment)
        .map_err(|error| CliError::input(format!("{}: {error}", path.display())))?;
    Ok(LoadedExperiment {
        experiment,
        text,
        written_workdir,
    })
}

pub(crate) fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    hasher.finish() >> 12
}

/// Where the experiment runs.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TargetArgs {
    /// Run on this host over ssh (repeatable: each host runs the whole
    /// experiment; comparisons stay within a host). The name is given to
    /// `ssh` as is, so aliases from ~/.ssh/config work.
    #[arg(long = "host", value_name = "HOST", value_parser = parse_host)]
    pub(crate) hosts: Vec<String>,
    /// ssh client configuration file (passed to ssh as -F).
    #[arg(long, value_name = "FILE")]
    pub(crate) ssh_config: Option<PathBuf>,
    /// How long a host may stay unreachable after a lost connection before
    /// its part of the run stops (the other hosts go on), e.g. 60s or 5m.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_timeout)]
    pub(crate) reconnect_timeout: std::time::Duration,
}

/// `--host` and `--worker`: a name, not empty or blank, without control
/// characters.
pub(crate) fn parse_host(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("expected a host name; it is empty".to_string());
    }
    if text.chars().any(char::is_control) {
        return Err(format!(
            "`{}` has a control character; expected a host name",
            text.escape_debug()
        ));
    }
    Ok(text.to_string())
}

pub(crate) fn parse_timeout(text: &str) -> Result<std::time::Duration, String> {
    verdict_model::experiment::parse_duration(text)
        .filter(|duration| !duration.is_zero())
        .ok_or_else(|| format!("`{text}` is not a duration; expected e.g. 30s or 5m"))
}

impl TargetArgs {
    pub(crate) fn remote(&self) -> bool {
        !self.hosts.is_empty()
    }

    /// The hosts and how to reach them, as the engine's launch takes them.
    pub(crate) fn settings(&self) -> verdict_engine::launch::HostSettings {
        verdict_engine::launch::HostSettings {
            hosts: self.hosts.clone(),
            ssh_config: self.ssh_config.clone(),
            reconnect_timeout: self.reconnect_timeout,
        }
    }
}

/// A quick doctor measurement as stored with a run: the full report plus
/// its one-line summary for report headers.
pub(crate) fn doctor_annotation() -> serde_json::Value {
    let options = verdict_doctor::DoctorOptions {
        length: verdict_doctor::ProbeLength::Quick,
        ..verdict_doctor::DoctorOptions::default()
    };
    let report = verdict_doctor::run_doctor(&options);
    let summary = report.summary_line();
    eprintln!("verdict: noise: {summary}");
    serde_json::json!({ "summary": summary, "report": serde_json::to_value(&report).unwrap_or_default() })
}

/// The commit a new run of the experiment at `path` measures (`--commit`,
/// else the file's repository's HEAD, found by git on this machine).
pub(crate) fn experiment_commit(
    path: &std::path::Path,
    commit: Option<&str>,
) -> Result<Option<verdict_engine::commit::RunCommit>, CliError> {
    verdict_engine::commit::experiment_commit(&verdict_exec::SystemExecutor, path, commit)
        .map_err(CliError::input)
}

/// Stores the commit found by `experiment_commit` with run `run`.
pub(crate) fn record_commit(
    store: &Database,
    run: verdict_model::RunId,
    commit: Option<verdict_engine::commit::RunCommit>,
) -> Result<(), CliError> {
    verdict_engine::commit::record_commit(store, run, commit).map_err(CliError::internal)
}

/// This build's version and commit, `0.2.0 (abc1234 2026-12-03)` (set by
/// build.rs): what `--version` prints, runs record and agents compare.
pub(crate) const VERSION: &str = env!("VERDICT_BUILD_VERSION");

pub(crate) fn tool_version() -> String {
    format!("verdict {VERSION}")
}
