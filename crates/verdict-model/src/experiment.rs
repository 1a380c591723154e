//! Experiment files: TOML in, a validated [`Experiment`] out. Every error
//! names `file:line:col`, the key and what was expected. Nothing downstream
//! re-checks what is validated here. No processes, no files other than the
//! experiment itself.

use crate::boot::{LevelBoot, OnBootFailure, Verify, VmSpec};
use crate::metric::{Better, Builtin, Extractor, MetricSource, MetricSpec, Stream};
use crate::profile::{Monitors, ProfileSpec};
use crate::shell_guard;
use crate::target::TargetSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

/// A command as the user wrote it: an argv vector run without a shell, or a
/// shell string the user explicitly asked for with `shell = true`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CommandSpec {
    Argv(Vec<String>),
    Shell(String),
}

impl CommandSpec {
    /// Substitute `{factor}` placeholders with the cell's levels. Each argv
    /// element stays exactly one argument; for a shell string the user chose
    /// a shell, and values are passed as the environment variables
    /// `VERDICT_<FACTOR>` rather than spliced (placeholders in shell strings
    /// are rejected at load time).
    pub fn substitute(&self, levels: &[(String, String)]) -> CommandSpec {
        match self {
            CommandSpec::Argv(argv) => CommandSpec::Argv(
                argv.iter()
                    .map(|element| substitute_placeholders(element, levels))
                    .collect(),
            ),
            CommandSpec::Shell(text) => CommandSpec::Shell(text.clone()),
        }
    }

    /// A one-line rendering for messages and reports (argv elements quoted
    /// where they contain spaces or shell metacharacters).
    pub fn display(&self) -> String {
        match self {
            CommandSpec::Shell(text) => text.clone(),
            CommandSpec::Argv(argv) => argv
                .iter()
                .map(|element| quote_for_display(element))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

fn quote_for_display(element: &str) -> String {
    let plain = !element.is_empty()
        && element
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@{}".contains(c));
    if plain {
        element.to_string()
    } else {
        format!("'{}'", element.replace('\'', "'\\''"))
    }
}

/// Replace `{factor}` with its level inside one string; one argument stays one argument.
pub fn substitute_placeholders(element: &str, levels: &[(String, String)]) -> String {
    let mut result = element.to_string();
    for (factor, level) in levels {
        result = result.replace(&format!("{{{factor}}}"), level);
    }
    result
}

/// Names of `{placeholder}`s used in a string.
fn placeholders(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                if !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    names.push(name.to_string());
                }
                rest = &after[close + 1..];
            }
            None => break,
        }
    }
    names
}

/// One level of a factor, with what it takes to switch the machine into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Level {
    pub value: String,
    /// Replaces the experiment's command in this level's cells (`verdict ab`
    /// and experiments comparing different programs).
    pub command: Option<CommandSpec>,
    /// Run when the run enters this level (the factor's level changes).
    pub setup: Option<CommandSpec>,
    /// Run when the run leaves this level.
    pub teardown: Option<CommandSpec>,
    /// Extra environment for the workload while at this level.
    pub env: BTreeMap<String, String>,
    /// Entering this level takes a boot (VM targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<LevelBoot>,
    /// A runtime proof, run after the level is entered, before measuring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Verify>,
}

/// A factor: a named dimension of the experiment with its levels, the first
/// (or the declared `baseline`) being the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Factor {
    pub name: String,
    pub levels: Vec<Level>,
    /// Index of the baseline level.
    pub baseline: usize,
    /// `compare = false`: the factor only selects a benchmark; its levels
    /// are never compared with each other, only within each of them.
    #[serde(default = "compared_by_default")]
    pub compare: bool,
}

fn compared_by_default() -> bool {
    true
}

/// Order of iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Randomized complete blocks: every cell once per block, in a random
    /// order from the recorded seed. Cancels drift.
    Interleaved,
    /// All iterations of a cell before the next (for expensive level
    /// switches such as reboots).
    Sequential,
}

/// How two cells of a run are compared (`[sampling] analysis`), chosen by
/// the design before any data are seen: two independent samples (the
/// default) or block-paired. One type, verdict-stats' own.
pub use verdict_stats::paired::Analysis;

/// Fixed number of iterations or adaptive stopping.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum SamplingMode {
    Fixed,
    /// Sequential decisions after each block, between `min` and `max`
    /// iterations per cell.
    Adaptive {
        min: u32,
        max: u32,
    },
    /// Sequential decisions after each block from `min` iterations per
    /// cell, with no cap: each comparison ends when decided or at the
    /// information its threshold needs, estimated from the data
    /// (`--until-decided` without `-n`).
    Uncapped {
        min: u32,
    },
}

impl SamplingMode {
    /// Whether the run stops adaptively (capped or not).
    pub fn is_adaptive(&self) -> bool {
        !matches!(self, SamplingMode::Fixed)
    }
}

/// How the experiment samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Sampling {
    /// Iterations per cell (the cap in adaptive mode is `mode.max`).
    pub iterations: u32,
    /// Warmup iterations per cell, recorded but never used as data.
    pub warmups: u32,
    pub order: Order,
    pub timeout: Option<Duration>,
    pub cooldown: Duration,
    /// Seed for the schedule; `None` means draw one and record it.
    pub seed: Option<u64>,
    pub mode: SamplingMode,
    /// Practical threshold as a fraction (0.02 = 2%).
    pub threshold: f64,
    pub alpha: f64,
    pub power: f64,
    /// Kill what the workload leaves running in its process group when it
    /// exits (the leftovers are recorded either way). Runs stored before
    /// this setting existed load with the default, `true`.
    #[serde(default = "kill_leftovers_default")]
    pub kill_leftovers: bool,
    /// How the report compares two cells. Runs stored before this setting
    /// existed load with the default, independent samples.
    #[serde(default)]
    pub analysis: Analysis,
    /// Boots per combination of boot levels (VM targets); 1 otherwise.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub boots: u32,
    /// How often a failed boot is tried again before `on_boot_failure`.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub boot_retries: u32,
    #[serde(default, skip_serializing_if = "is_stop")]
    pub on_boot_failure: OnBootFailure,
}

fn one() -> u32 {
    1
}

fn is_one(value: &u32) -> bool {
    *value == 1
}

fn is_stop(policy: &OnBootFailure) -> bool {
    *policy == OnBootFailure::Stop
}

fn kill_leftovers_default() -> bool {
    true
}

/// A validated experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Experiment {
    /// Where it runs (`[target]`), stored as the flat keys `hosts`, `vm`
    /// and `host_boot`.
    #[serde(flatten)]
    pub target: TargetSpec,
    pub name: String,
    pub command: CommandSpec,
    pub workdir: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
    pub factors: Vec<Factor>,
    /// The first metric is the primary one.
    pub metrics: Vec<MetricSpec>,
    pub sampling: Sampling,
    /// Exit codes that count as success.
    pub success_codes: Vec<i32>,
    /// `[monitors]`: the system's counters around each iteration.
    #[serde(default, skip_serializing_if = "Monitors::is_default")]
    pub monitors: Monitors,
    /// `[profile]`: extra iterations under `perf record`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileSpec>,
}

/// One cell: a level of every factor, in factor order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cell {
    pub levels: Vec<(String, String)>,
}

impl Cell {
    /// `kernel=7.1,mode=enforcing`.
    pub fn label(&self) -> String {
        if self.levels.is_empty() {
            return "(all)".to_string();
        }
        self.levels
            .iter()
            .map(|(factor, level)| format!("{factor}={level}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn level(&self, factor: &str) -> Option<&str> {
        self.levels
            .iter()
            .find(|(name, _)| name == factor)
            .map(|(_, level)| level.as_str())
    }
}

impl Experiment {
    /// The shell-splice guard again, for an experiment that did not come
    /// through [`Experiment::parse`] (one stored by an older verdict and
    /// resumed): `Err` names the command and why, as at load time. Setups
    /// and teardowns are stored with their placeholders already
    /// substituted, so they were checked when the file was loaded.
    pub fn check_shell_splices(&self, origin: &str) -> Result<(), ModelError> {
        let levels = level_values(&self.factors);
        let invalid = |message: String| ModelError::Invalid {
            location: origin.to_string(),
            message,
        };
        check_shell_splice(&self.command, &levels, "command").map_err(invalid)?;
        for factor in &self.factors {
            for level in &factor.levels {
                if let Some(command) = &level.command {
                    check_shell_splice(command, &levels, "command").map_err(|message| {
                        invalid(format!(
                            "factor `{}` level `{}`: {message}",
                            factor.name, level.value
                        ))
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Every cell, first factor varying slowest.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = vec![Cell { levels: Vec::new() }];
        for factor in &self.factors {
            let mut next = Vec::with_capacity(cells.len() * factor.levels.len());
            for cell in &cells {
                for level in &factor.levels {
                    let mut levels = cell.levels.clone();
                    levels.push((factor.name.clone(), level.value.clone()));
                    next.push(Cell { levels });
                }
            }
            cells = next;
        }
        cells
    }

    /// The command a cell runs: a level's own command if one of its levels
    /// has one, else the experiment's; placeholders substituted.
    pub fn command_for(&self, cell: &Cell) -> CommandSpec {
        let own = cell
            .levels
            .iter()
            .zip(&self.factors)
            .find_map(|((_, value), factor)| {
                factor
                    .levels
                    .iter()
                    .find(|level| &level.value == value)
                    .and_then(|level| level.command.clone())
            });
        own.unwrap_or_else(|| self.command.clone())
            .substitute(&cell.levels)
    }

    /// The boot is the unit of the schedule: verdict boots the target (a
    /// VM, or ssh hosts with `[target] boot`).
    pub fn runs_by_boot(&self) -> bool {
        self.target.boots()
    }

    /// Joins the relative paths of every `build` (tree, patches, config and
    /// fragment files) to `base`, the directory of the experiment file.
    pub fn resolve_build_paths(&mut self, base: &Path) {
        if let Some(build) = self.target.vm_mut().and_then(|vm| vm.build.as_mut()) {
            build.resolve_paths(base);
        }
        for factor in &mut self.factors {
            for level in &mut factor.levels {
                if let Some(build) = level.boot.as_mut().and_then(|boot| boot.build.as_mut()) {
                    build.resolve_paths(base);
                }
            }
        }
    }

    /// Indices of the factors with a level that takes a boot.
    pub fn boot_factors(&self) -> Vec<usize> {
        self.factors
            .iter()
            .enumerate()
            .filter(|(_, factor)| factor.levels.iter().any(|level| level.boot.is_some()))
            .map(|(index, _)| index)
            .collect()
    }

    pub fn primary_metric(&self) -> &MetricSpec {
        &self.metrics[0]
    }

    pub fn factor(&self, name: &str) -> Option<&Factor> {
        self.factors.iter().find(|factor| factor.name == name)
    }

    /// Read and validate an experiment file.
    pub fn load(path: &Path) -> Result<Experiment, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Experiment::parse(&text, &path.display().to_string())
    }

    /// Validate experiment text; `origin` names it in errors (a path).
    pub fn parse(text: &str, origin: &str) -> Result<Experiment, ModelError> {
        let raw: RawExperiment = toml::from_str(text).map_err(|error| {
            let span = error.span().unwrap_or(0..0);
            located(text, origin, span.start, error.message().trim().to_string())
        })?;
        refuse_nul(text, origin)?;
        raw.validate(text, origin)
    }

    /// SHA-256 of the experiment text, recorded with every run.
    pub fn text_hash(text: &str) -> String {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(text.as_bytes()))
    }
}

/// Errors from loading an experiment.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("read experiment file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `file:line:col: message`.
    #[error("{location}: {message}")]
    Invalid { location: String, message: String },
}

impl ModelError {
    /// The exit class this error ends a command with: the experiment file
    /// is the user's input, whether it cannot be read or does not validate.
    pub fn exit_class(&self) -> crate::ExitClass {
        crate::ExitClass::Input
    }
}

/// The first item equal to an earlier one, found with a hash set: O(n)
/// hashes and, between distinct items, comparisons only on hash
/// collisions (a scan of the items so far made loading 10^5 levels take a
/// minute).
pub(crate) fn first_repeat<T: std::hash::Hash + Eq>(
    items: impl IntoIterator<Item = T>,
) -> Option<T> {
    let items = items.into_iter();
    let mut seen = std::collections::HashSet::with_capacity(items.size_hint().0);
    for item in items {
        if seen.contains(&item) {
            return Some(item);
        }
        seen.insert(item);
    }
    None
}

/// A NUL character cannot be a byte of a name, a level, an argument or an
/// environment value (the kernel ends C strings there), so one anywhere in
/// the file is refused here, where it is: TOML writes it only as an escape
/// (`\u0000`, `\U00000000`) in a basic string, whose place is reported.
fn refuse_nul(text: &str, origin: &str) -> Result<(), ModelError> {
    fn holds_nul(value: &toml::Value) -> bool {
        match value {
            toml::Value::String(text) => text.contains('\0'),
            toml::Value::Array(items) => items.iter().any(holds_nul),
            toml::Value::Table(table) => table
                .iter()
                .any(|(key, value)| key.contains('\0') || holds_nul(value)),
            _ => false,
        }
    }
    let holds = text
        .parse::<toml::Table>()
        .is_ok_and(|table| holds_nul(&toml::Value::Table(table)));
    if !holds {
        return Ok(());
    }
    // The first escape that is one: preceded by an odd number of
    // backslashes (`\\u0000` is a backslash, then text).
    let offset = ["\\u0000", "\\U00000000"]
        .iter()
        .flat_map(|escape| text.match_indices(escape).map(|(offset, _)| offset))
        .filter(|&offset| {
            text[..offset]
                .bytes()
                .rev()
                .take_while(|&byte| byte == b'\\')
                .count()
                % 2
                == 0
        })
        .min()
        .unwrap_or(0);
    Err(located(
        text,
        origin,
        offset,
        "a NUL character (\\u0000) in a string: a name, level, command or value cannot hold one"
            .to_string(),
    ))
}

pub(crate) fn located(text: &str, origin: &str, offset: usize, message: String) -> ModelError {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let table = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|header| format!(" (in {header})"))
        .unwrap_or_default();
    ModelError::Invalid {
        location: format!("{origin}:{line}:{column}"),
        message: format!("{message}{table}"),
    }
}

// ---- raw TOML shapes -------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExperiment {
    name: Spanned<String>,
    command: Spanned<RawCommand>,
    #[serde(default)]
    shell: bool,
    workdir: Option<PathBuf>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    factors: toml::map::Map<String, toml::Value>,
    #[serde(default)]
    metrics: Vec<Spanned<RawMetric>>,
    #[serde(default)]
    sampling: Option<Spanned<RawSampling>>,
    success_codes: Option<Spanned<Vec<i32>>>,
    target: Option<RawTarget>,
    monitors: Option<Spanned<toml::Value>>,
    profile: Option<Spanned<toml::Value>>,
}

/// `[target]`: where the experiment runs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    #[serde(default)]
    hosts: Vec<Spanned<String>>,
    vm: Option<Spanned<toml::Value>>,
    boot: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawCommand {
    Argv(Vec<String>),
    Shell(String),
}

/// A `[[metrics]]` table: the metric's own keys, and the parser's keys
/// (`parser`), which are `verdict_parse::Extractor`'s fields for the
/// extractor `source` names.
#[derive(Debug, Deserialize)]
struct RawMetric {
    name: String,
    source: Option<String>,
    from: Option<String>,
    file: Option<String>,
    direction: Option<String>,
    unit: Option<String>,
    threshold: Option<f64>,
    #[serde(flatten)]
    parser: toml::Table,
}

/// Parser keys that experiment files could always write on any metric and
/// that were ignored where the source does not read them; they stay
/// accepted (and ignored) so no experiment file breaks.
const LEGACY_PARSER_KEYS: &[&str] = &["stressor", "field", "event", "pattern", "path"];

/// The field a serde error names in `unknown field `NAME``.
fn named_in<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    rest.split('`').next()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSampling {
    iterations: Option<Spanned<i64>>,
    warmups: Option<Spanned<i64>>,
    order: Option<Spanned<String>>,
    timeout: Option<Spanned<toml::Value>>,
    cooldown: Option<Spanned<toml::Value>>,
    seed: Option<u64>,
    mode: Option<Spanned<String>>,
    min: Option<Spanned<i64>>,
    max: Option<Spanned<i64>>,
    threshold: Option<Spanned<f64>>,
    alpha: Option<Spanned<f64>>,
    power: Option<Spanned<f64>>,
    kill_leftovers: Option<bool>,
    analysis: Option<Spanned<String>>,
    boots: Option<Spanned<i64>>,
    boot_retries: Option<Spanned<i64>>,
    on_boot_failure: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLevel {
    value: String,
    command: Option<RawCommand>,
    setup: Option<RawCommand>,
    teardown: Option<RawCommand>,
    #[serde(default)]
    shell: bool,
    #[serde(default)]
    env: BTreeMap<String, String>,
    boot: Option<toml::Value>,
    verify: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFactorTable {
    levels: Vec<toml::Value>,
    baseline: Option<String>,
    /// A setup template for every level, `{factor}` substituted.
    setup: Option<RawCommand>,
    teardown: Option<RawCommand>,
    #[serde(default)]
    shell: bool,
    compare: Option<bool>,
}

struct Context<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Context<'_> {
    fn error(&self, offset: usize, message: impl Into<String>) -> ModelError {
        located(self.text, self.origin, offset, message.into())
    }

    /// Offset of `key` inside `[table]` (for errors on values we hold without
    /// spans), falling back to the table header.
    fn find_key(&self, table: &str, key: &str) -> usize {
        let header = format!("[{table}]");
        let start = self.text.find(&header).unwrap_or(0);
        let section = &self.text[start..];
        for (index, line) in section.lines().enumerate() {
            if index > 0 && line.trim_start().starts_with('[') {
                break;
            }
            let trimmed = line.trim_start();
            if trimmed.starts_with(key) && trimmed[key.len()..].trim_start().starts_with(['=', '.'])
            {
                let line_offset = section
                    .lines()
                    .take(index)
                    .map(|l| l.len() + 1)
                    .sum::<usize>();
                return start + line_offset + (line.len() - trimmed.len());
            }
        }
        start
    }
}

fn command_from(raw: RawCommand, shell: bool, what: &str) -> Result<CommandSpec, String> {
    match raw {
        RawCommand::Argv(argv) if argv.is_empty() => Err(format!(
            "`{what}` is an empty array; expected a program and its arguments"
        )),
        RawCommand::Argv(argv) => Ok(CommandSpec::Argv(argv)),
        RawCommand::Shell(text) if shell => Ok(CommandSpec::Shell(text)),
        RawCommand::Shell(_) => Err(format!(
            "`{what}` is a string; expected an argv array such as [\"prog\", \"arg\"], or set `shell = true` to run it with /bin/sh"
        )),
    }
}

fn duration_from(value: &toml::Value) -> Result<Duration, String> {
    match value {
        toml::Value::Integer(seconds) if *seconds >= 0 => Ok(Duration::from_secs(*seconds as u64)),
        toml::Value::Float(seconds) if *seconds >= 0.0 && seconds.is_finite() => {
            Ok(Duration::from_secs_f64(*seconds))
        }
        toml::Value::String(text) => parse_duration(text)
            .ok_or_else(|| format!("invalid duration `{text}`; expected seconds or a string like \"500ms\", \"30s\", \"2m\", \"1h\"")),
        other => Err(format!("invalid duration {other}; expected seconds or a string like \"30s\"")),
    }
}

/// `500ms`, `30s`, `2.5m`, `1h`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, scale) = if let Some(value) = text.strip_suffix("ms") {
        (value, 0.001)
    } else if let Some(value) = text.strip_suffix('s') {
        (value, 1.0)
    } else if let Some(value) = text.strip_suffix('m') {
        (value, 60.0)
    } else if let Some(value) = text.strip_suffix('h') {
        (value, 3600.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number.trim().parse().ok()?;
    (value >= 0.0 && value.is_finite()).then(|| Duration::from_secs_f64(value * scale))
}

impl RawExperiment {
    fn validate(self, text: &str, origin: &str) -> Result<Experiment, ModelError> {
        let context = Context { text, origin };
        let name = self.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(context.error(
                self.name.span().start,
                "`name` is empty; expected a non-empty string",
            ));
        }
        let factors = self.validate_factors(&context)?;
        let command = validate_command(self.command, self.shell, &factors, &context)?;
        let metrics = validate_metrics(self.metrics, &context)?;
        let target = validate_target(self.target, &factors, &context)?;
        let sampling = validate_sampling(self.sampling, &target, &context)?;
        let success_codes = match self.success_codes {
            Some(codes) if codes.get_ref().is_empty() => {
                return Err(context.error(
                    codes.span().start,
                    "`success_codes` is empty; expected at least one exit code, e.g. [0]",
                ));
            }
            Some(codes) => codes.into_inner(),
            None => vec![0],
        };
        let (monitors, profile) = validate_capture(self.monitors, self.profile, &context)?;
        Ok(Experiment {
            monitors,
            profile,
            name,
            command,
            workdir: self.workdir,
            env: self.env,
            factors,
            metrics,
            sampling,
            success_codes,
            target,
        })
    }

    fn validate_factors(&self, context: &Context<'_>) -> Result<Vec<Factor>, ModelError> {
        let all_levels = self.raw_level_values();
        self.factors
            .iter()
            .map(|(name, value)| validate_factor(name, value, &all_levels, context))
            .collect()
    }
}

/// One factor of `[factors]`: an array of levels or a table with
/// `levels`, setup and teardown templates, `baseline` and `compare`.
fn validate_factor(
    name: &str,
    value: &toml::Value,
    all_levels: &BTreeMap<String, Vec<String>>,
    context: &Context<'_>,
) -> Result<Factor, ModelError> {
    let offset = context.find_key("factors", name);
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(context.error(
            offset,
            format!("factor name `{name}` may use only letters, digits, `_` and `-`"),
        ));
    }
    let mut compare = true;
    let (raw_levels, baseline, template_setup, template_teardown, shell) = match value {
        toml::Value::Array(levels) => (levels.clone(), None, None, None, false),
        toml::Value::Table(table) => {
            let raw: RawFactorTable = toml::Value::Table(table.clone()).try_into().map_err(
                |error: toml::de::Error| {
                    context.error(
                        offset,
                        format!("factor `{name}`: {}", error.message().trim()),
                    )
                },
            )?;
            compare = raw.compare.unwrap_or(true);
            (raw.levels, raw.baseline, raw.setup, raw.teardown, raw.shell)
        }
        other => {
            return Err(context.error(
                offset,
                format!("factor `{name}` is {}; expected an array of levels such as [\"a\", \"b\"] or a table with `levels`", other.type_str()),
            ));
        }
    };
    if raw_levels.is_empty() {
        return Err(context.error(
            offset,
            format!("factor `{name}` has no levels; expected at least one"),
        ));
    }
    let template = |raw: &Option<RawCommand>,
                    what: &str|
     -> Result<Option<CommandSpec>, ModelError> {
        raw.as_ref()
            .map(|command| {
                command_from(clone_command(command), shell, what)
                    .map_err(|message| context.error(offset, format!("factor `{name}`: {message}")))
            })
            .transpose()
    };
    let templates = (
        template(&template_setup, "setup")?,
        template(&template_teardown, "teardown")?,
    );
    for (command, what) in [(&templates.0, "setup"), (&templates.1, "teardown")] {
        if let Some(command) = command {
            check_shell_splice(command, all_levels, what)
                .map_err(|message| context.error(offset, format!("factor `{name}`: {message}")))?;
        }
    }
    let mut levels: Vec<Level> = Vec::with_capacity(raw_levels.len());
    for raw_level in raw_levels {
        let level = validate_level(raw_level, name, offset, context)?;
        if level.value.is_empty() {
            return Err(context.error(offset, format!("factor `{name}` has an empty level")));
        }
        levels.push(level);
    }
    if let Some(twice) = first_repeat(levels.iter().map(|level| level.value.as_str())) {
        return Err(context.error(
            offset,
            format!("factor `{name}` lists level `{twice}` twice"),
        ));
    }
    for level in &mut levels {
        finish_level(level, name, &templates, all_levels)
            .map_err(|message| context.error(offset, message))?;
    }
    let baseline = match baseline {
        None => 0,
        Some(value) => levels
            .iter()
            .position(|level| level.value == value)
            .ok_or_else(|| {
                context.error(
                    offset,
                    format!("factor `{name}`: baseline `{value}` is not one of its levels"),
                )
            })?,
    };
    Ok(Factor {
        name: name.to_string(),
        levels,
        baseline,
        compare,
    })
}

/// One level as written: a string, a number or boolean (its text), or a
/// table with `value` and what entering the level takes.
fn validate_level(
    raw_level: toml::Value,
    name: &str,
    offset: usize,
    context: &Context<'_>,
) -> Result<Level, ModelError> {
    let plain = |value: String| Level {
        value,
        command: None,
        setup: None,
        teardown: None,
        env: BTreeMap::new(),
        boot: None,
        verify: None,
    };
    let table = match raw_level {
        toml::Value::String(value) => return Ok(plain(value)),
        toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
            return Ok(plain(raw_level.to_string()));
        }
        toml::Value::Table(table) => table,
        other => {
            return Err(context.error(offset, format!("factor `{name}` has a level of type {}; expected a string or a table with `value`", other.type_str())));
        }
    };
    let raw: RawLevel =
        toml::Value::Table(table)
            .try_into()
            .map_err(|error: toml::de::Error| {
                context.error(
                    offset,
                    format!("factor `{name}` level: {}", error.message().trim()),
                )
            })?;
    let located_message = |message: String| {
        context.error(
            offset,
            format!("factor `{name}` level `{}`: {message}", raw.value),
        )
    };
    let level_command = |raw_command: Option<RawCommand>, what: &str| {
        raw_command
            .map(|c| command_from(c, raw.shell, what))
            .transpose()
            .map_err(located_message)
    };
    let setup = level_command(raw.setup, "setup")?;
    let teardown = level_command(raw.teardown, "teardown")?;
    let command = level_command(raw.command, "command")?;
    let boot = raw
        .boot
        .map(crate::boot::boot_from)
        .transpose()
        .map_err(located_message)?;
    let verify = raw
        .verify
        .map(crate::boot::verify_from)
        .transpose()
        .map_err(located_message)?;
    Ok(Level {
        value: raw.value,
        command,
        setup,
        teardown,
        env: raw.env,
        boot,
        verify,
    })
}

/// A level's commands pass the shell-splice guard; its setup and teardown
/// (its own, else the factor's templates) and its verify command get the
/// level's value for `{factor}`. `Err` is the message.
fn finish_level(
    level: &mut Level,
    name: &str,
    (setup_template, teardown_template): &(Option<CommandSpec>, Option<CommandSpec>),
    all_levels: &BTreeMap<String, Vec<String>>,
) -> Result<(), String> {
    for (command, what) in [
        (&level.command, "command"),
        (&level.setup, "setup"),
        (&level.teardown, "teardown"),
        (
            &level.verify.as_ref().map(|verify| verify.command.clone()),
            "verify.command",
        ),
    ] {
        if let Some(command) = command {
            check_shell_splice(command, all_levels, what)
                .map_err(|message| format!("factor `{name}` level `{}`: {message}", level.value))?;
        }
    }
    let cell = [(name.to_string(), level.value.clone())];
    level.setup = level
        .setup
        .take()
        .or_else(|| setup_template.clone())
        .map(|command| command.substitute(&cell));
    level.teardown = level
        .teardown
        .take()
        .or_else(|| teardown_template.clone())
        .map(|command| command.substitute(&cell));
    if let Some(verify) = &mut level.verify {
        verify.command = verify.command.substitute(&cell);
    }
    Ok(())
}

/// `command`: an argv array (or a shell string with `shell = true`) whose
/// placeholders name factors and are never spliced into shell code.
fn validate_command(
    raw: Spanned<RawCommand>,
    shell: bool,
    factors: &[Factor],
    context: &Context<'_>,
) -> Result<CommandSpec, ModelError> {
    let command_span = raw.span();
    let command = command_from(raw.into_inner(), shell, "command")
        .map_err(|message| context.error(command_span.start, message))?;
    let factor_names: Vec<&str> = factors.iter().map(|f| f.name.as_str()).collect();
    if let CommandSpec::Argv(argv) = &command {
        for element in argv {
            for name in placeholders(element) {
                if !factor_names.contains(&name.as_str()) {
                    return Err(context.error(
                        command_span.start,
                        format!(
                            "`command` uses placeholder `{{{name}}}` but there is no factor `{name}`; factors: {}",
                            if factor_names.is_empty() { "none".to_string() } else { factor_names.join(", ") }
                        ),
                    ));
                }
            }
        }
    }
    check_shell_splice(&command, &level_values(factors), "command")
        .map_err(|message| context.error(command_span.start, message))?;
    Ok(command)
}

/// `[[metrics]]`, each name once; wall time when none is given.
fn validate_metrics(
    raw_metrics: Vec<Spanned<RawMetric>>,
    context: &Context<'_>,
) -> Result<Vec<MetricSpec>, ModelError> {
    let mut metrics = Vec::new();
    for raw in raw_metrics {
        let span = raw.span();
        let metric = raw
            .into_inner()
            .validate()
            .map_err(|message| context.error(span.start, message))?;
        if metrics.iter().any(|m: &MetricSpec| m.name == metric.name) {
            return Err(context.error(
                span.start,
                format!("metric `{}` is defined twice", metric.name),
            ));
        }
        metrics.push(metric);
    }
    if metrics.is_empty() {
        metrics.push(MetricSpec::wall());
    }
    Ok(metrics)
}

/// `[target]`: ssh hosts, a VM or booted ssh hosts (never a VM with
/// either), and boot levels only where verdict can boot.
fn validate_target(
    raw: Option<RawTarget>,
    factors: &[Factor],
    context: &Context<'_>,
) -> Result<TargetSpec, ModelError> {
    let (raw_hosts, raw_vm, raw_boot) = match raw {
        Some(target) => (target.hosts, target.vm, target.boot),
        None => (Vec::new(), None, None),
    };
    let hosts_offset = raw_hosts.first().map(|host| host.span().start);
    let vm_offset = raw_vm.as_ref().map(|spanned| spanned.span().start);
    let vm = match raw_vm {
        None => None,
        Some(spanned) => {
            let offset = spanned.span().start;
            if let Some(hosts_offset) = hosts_offset {
                return Err(context.error(
                    hosts_offset,
                    "`[target]` has both `hosts` and `vm`; an experiment runs on ssh hosts or on a VM verdict boots, not both",
                ));
            }
            Some(
                crate::boot::vm_from(spanned.into_inner())
                    .map_err(|message| context.error(offset, message))?,
            )
        }
    };
    let host_boot = match raw_boot {
        None => None,
        Some(spanned) => {
            let offset = spanned.span().start;
            if vm.is_some() {
                return Err(context.error(
                    offset,
                    "`[target]` has both `vm` and `boot`; `boot` says how verdict boots ssh hosts, a VM's boots are set in `vm`",
                ));
            }
            Some(
                crate::boot::host_boot_from(spanned.into_inner())
                    .map_err(|message| context.error(offset, message))?,
            )
        }
    };
    check_boot_levels(factors, vm.as_ref(), host_boot.is_some(), context)?;
    if let Some(vm) = &vm {
        check_vm_kernel(vm, factors, vm_offset.unwrap_or(0), context)?;
    }
    let hosts = validate_hosts(raw_hosts, context)?;
    // The two refusals above leave only combinations that run.
    TargetSpec::from_parts(hosts, vm, host_boot)
        .map_err(|both| context.error(0, format!("`[target]` has {both}")))
}

/// Boot levels need a target verdict boots; a level's `build` needs a VM
/// and its `hook` ssh hosts.
fn check_boot_levels(
    factors: &[Factor],
    vm: Option<&VmSpec>,
    host_boot: bool,
    context: &Context<'_>,
) -> Result<(), ModelError> {
    let bootable = vm.is_some() || host_boot;
    let any_level = |factor: &Factor, test: &dyn Fn(&LevelBoot) -> bool| {
        factor
            .levels
            .iter()
            .any(|level| level.boot.as_ref().is_some_and(test))
    };
    for factor in factors {
        let offset = context.find_key("factors", &factor.name);
        if !bootable && any_level(factor, &|_| true) {
            return Err(context.error(
                offset,
                format!(
                    "factor `{}` has levels with `boot`, which need a target that verdict can boot: add `[target] vm = {{ kernel = \"/vmlinuz\" }}`, or `[target] boot = {{ kernel = \"/boot/vmlinuz\" }}` for ssh hosts (kexec, or a level's `hook`)",
                    factor.name
                ),
            ));
        }
        if vm.is_none() && any_level(factor, &|boot| boot.build.is_some()) {
            return Err(context.error(
                offset,
                format!(
                    "factor `{}`: `boot.build` builds a kernel for a VM verdict boots (`[target] vm`); an ssh host boots kernels installed on it",
                    factor.name
                ),
            ));
        }
        if vm.is_some() && any_level(factor, &|boot| boot.hook.is_some()) {
            return Err(context.error(
                offset,
                format!(
                    "factor `{}`: `boot.hook` arranges the next boot of an ssh host; a VM target boots each level's kernel and command line itself",
                    factor.name
                ),
            ));
        }
    }
    Ok(())
}

/// A VM needs a kernel: its own, built, or one per level of a boot factor.
fn check_vm_kernel(
    vm: &VmSpec,
    factors: &[Factor],
    offset: usize,
    context: &Context<'_>,
) -> Result<(), ModelError> {
    let every_level_has_one = factors.iter().any(|factor| {
        factor.levels.iter().all(|level| {
            level
                .boot
                .as_ref()
                .is_some_and(|boot| boot.kernel.is_some() || boot.build.is_some())
        })
    });
    if vm.kernel.is_none() && vm.build.is_none() && !every_level_has_one {
        return Err(context.error(
            offset,
            "`[target] vm` needs `kernel` (an image such as \"/vmlinuz\") or `build` (a kernel verdict builds from source), unless every level of a boot factor names its own",
        ));
    }
    Ok(())
}

/// `[target] hosts`: names ssh takes as a destination, each once.
fn validate_hosts(
    raw_hosts: Vec<Spanned<String>>,
    context: &Context<'_>,
) -> Result<Vec<String>, ModelError> {
    let mut hosts = Vec::new();
    for host in raw_hosts {
        let span = host.span();
        let name = host.into_inner();
        // Given to ssh as its destination: an option or a space there
        // would change what ssh does.
        if name.is_empty()
            || name.starts_with('-')
            || name.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(context.error(
                span.start,
                format!(
                    "`[target] hosts`: `{}` is not a host name (it must not be empty, start with `-` or contain spaces)",
                    name.escape_debug()
                ),
            ));
        }
        if hosts.contains(&name) {
            return Err(context.error(
                span.start,
                format!("`[target] hosts`: `{name}` is listed twice"),
            ));
        }
        hosts.push(name);
    }
    Ok(hosts)
}

/// `[sampling]`, and what a target verdict boots rules out: boots without
/// one, adaptive stopping and paired analysis with one.
fn validate_sampling(
    raw: Option<Spanned<RawSampling>>,
    target: &TargetSpec,
    context: &Context<'_>,
) -> Result<Sampling, ModelError> {
    let bootable = target.boots();
    let sampling_offset = raw.as_ref().map_or(0, |raw| raw.span().start);
    let boots_offset = raw
        .as_ref()
        .and_then(|raw| raw.get_ref().boots.as_ref())
        .map_or(sampling_offset, |boots| boots.span().start);
    let sampling = match raw {
        Some(raw) => raw.into_inner().validate(context)?,
        None => RawSampling::default_sampling(),
    };
    if !bootable && (sampling.boots != 1) {
        return Err(context.error(
            boots_offset,
            "`boots` needs a target verdict can boot: add `[target] vm = { kernel = \"/vmlinuz\" }` (or `[target] boot` for ssh hosts)",
        ));
    }
    if bootable && matches!(sampling.mode, SamplingMode::Adaptive { .. }) {
        return Err(context.error(
            sampling_offset,
            "`mode = \"adaptive\"` cannot run on a VM target: the boot is the unit of the schedule, and a fixed number of boots and iterations per boot is planned",
        ));
    }
    if bootable && sampling.analysis == Analysis::Paired {
        return Err(context.error(
            sampling_offset,
            "`analysis = \"paired\"` cannot run on a VM target: iterations of different boots share no block; levels are compared by their per-boot medians",
        ));
    }
    Ok(sampling)
}

/// `[monitors]` and `[profile]`, errors at the key they name.
fn validate_capture(
    monitors: Option<Spanned<toml::Value>>,
    profile: Option<Spanned<toml::Value>>,
    context: &Context<'_>,
) -> Result<(Monitors, Option<ProfileSpec>), ModelError> {
    let monitors = match monitors {
        None => Monitors::default(),
        Some(spanned) => crate::profile::monitors_from(spanned.into_inner())
            .map_err(|message| context.error(context.find_key("monitors", "enabled"), message))?,
    };
    let profile = match profile {
        None => None,
        Some(spanned) => Some(crate::profile::profile_from(spanned.into_inner()).map_err(
            |message| {
                // "`profile.KEY` = ...": at that key's line.
                let key = message
                    .strip_prefix("`profile.")
                    .and_then(|rest| rest.split('`').next())
                    .unwrap_or("");
                context.error(context.find_key("profile", key), message)
            },
        )?),
    };
    Ok((monitors, profile))
}

/// Factor name → its level values, for the shell-splice guard.
fn level_values(factors: &[Factor]) -> BTreeMap<String, Vec<String>> {
    factors
        .iter()
        .map(|factor| {
            let values = factor
                .levels
                .iter()
                .map(|level| level.value.clone())
                .collect();
            (factor.name.clone(), values)
        })
        .collect()
}

impl RawExperiment {
    /// Factor name → its level values as written (before validation), for
    /// the shell-splice guard while factors are still being validated.
    fn raw_level_values(&self) -> BTreeMap<String, Vec<String>> {
        let value_of = |level: &toml::Value| match level {
            toml::Value::String(value) => Some(value.clone()),
            toml::Value::Table(table) => table
                .get("value")
                .and_then(toml::Value::as_str)
                .map(str::to_string),
            toml::Value::Array(_) | toml::Value::Datetime(_) => None,
            other => Some(other.to_string()),
        };
        self.factors
            .iter()
            .map(|(name, value)| {
                let levels = match value {
                    toml::Value::Array(levels) => levels.iter().filter_map(value_of).collect(),
                    toml::Value::Table(table) => table
                        .get("levels")
                        .and_then(toml::Value::as_array)
                        .map(|levels| levels.iter().filter_map(value_of).collect())
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                (name.clone(), levels)
            })
            .collect()
    }
}

fn clone_command(command: &RawCommand) -> RawCommand {
    match command {
        RawCommand::Argv(argv) => RawCommand::Argv(argv.clone()),
        RawCommand::Shell(text) => RawCommand::Shell(text.clone()),
    }
}

/// Refuse `{factor}` wherever a shell would parse it: a level value spliced
/// into shell text could run as code (see [`crate::shell_guard`]). Values
/// reach scripts as separate arguments (`sh -c 'echo "$1"' sh {factor}`) or
/// as `$VERDICT_<FACTOR>`.
fn check_shell_splice(
    command: &CommandSpec,
    levels: &BTreeMap<String, Vec<String>>,
    what: &str,
) -> Result<(), String> {
    match command {
        CommandSpec::Shell(text) => match shell_guard::find_in_shell_string(text, levels) {
            None => Ok(()),
            Some(name) => Err(format!(
                "`{what}` puts placeholder `{{{name}}}` inside a shell string (`shell = true`), which the shell parses whole; values are never spliced into shell code: use an argv array and pass the value as its own argument (`sh -c 'echo \"$1\"' sh {{{name}}}`) or read \"$VERDICT_{}\" (set for every iteration and hook)",
                env_name(&name)
            )),
        },
        CommandSpec::Argv(argv) => match shell_guard::find_splice(argv, levels) {
            None => Ok(()),
            Some(splice) => Err(format!(
                "`{what}` puts placeholder `{{{}}}` in argument {} (`{}`), which {}; values are never spliced into shell code: {}",
                splice.factor, splice.index, argv[splice.index], splice.reason, splice.hint
            )),
        },
    }
}

/// `VERDICT_<FACTOR>`: the environment variable carrying a factor's level.
pub fn env_name(factor: &str) -> String {
    factor.to_ascii_uppercase().replace('-', "_")
}

impl RawSampling {
    fn default_sampling() -> Sampling {
        Sampling {
            iterations: 10,
            warmups: 0,
            order: Order::Interleaved,
            timeout: None,
            cooldown: Duration::ZERO,
            seed: None,
            mode: SamplingMode::Fixed,
            threshold: 0.02,
            alpha: 0.05,
            power: 0.9,
            kill_leftovers: true,
            analysis: Analysis::Independent,
            boots: 1,
            boot_retries: 1,
            on_boot_failure: OnBootFailure::Stop,
        }
    }

    fn validate(self, context: &Context<'_>) -> Result<Sampling, ModelError> {
        let mut sampling = RawSampling::default_sampling();
        self.apply_counts_and_choices(&mut sampling, context)?;
        self.apply_durations(&mut sampling, context)?;
        sampling.seed = self.seed;
        if let Some(kill_leftovers) = self.kill_leftovers {
            sampling.kill_leftovers = kill_leftovers;
        }
        self.apply_boots(&mut sampling, context)?;
        if let Some(threshold) = fraction(&self.threshold, "threshold", 0.0, 1.0, context)? {
            sampling.threshold = threshold;
        }
        if let Some(alpha) = fraction(&self.alpha, "alpha", 0.0, 0.5, context)? {
            sampling.alpha = alpha;
        }
        if let Some(power) = fraction(&self.power, "power", 0.0, 1.0, context)? {
            sampling.power = power;
        }
        sampling.mode = self.mode(&sampling, context)?;
        Ok(sampling)
    }

    /// `iterations`, `warmups`, `order` and `analysis` (paired needs the
    /// interleaved order).
    fn apply_counts_and_choices(
        &self,
        sampling: &mut Sampling,
        context: &Context<'_>,
    ) -> Result<(), ModelError> {
        if let Some(iterations) = count(&self.iterations, "iterations", 1, context)? {
            sampling.iterations = iterations;
        }
        if let Some(warmups) = count(&self.warmups, "warmups", 0, context)? {
            sampling.warmups = warmups;
        }
        if let Some(order) = &self.order {
            sampling.order = match order.get_ref().as_str() {
                "interleaved" => Order::Interleaved,
                "sequential" => Order::Sequential,
                other => {
                    return Err(context.error(
                        order.span().start,
                        format!(
                            "`order` = \"{other}\"; expected \"interleaved\" or \"sequential\""
                        ),
                    ));
                }
            };
        }
        if let Some(analysis) = &self.analysis {
            sampling.analysis = match analysis.get_ref().as_str() {
                "independent" => Analysis::Independent,
                "paired" => Analysis::Paired,
                other => {
                    return Err(context.error(
                        analysis.span().start,
                        format!("`analysis` = \"{other}\"; expected \"independent\" or \"paired\""),
                    ));
                }
            };
            if sampling.analysis == Analysis::Paired && sampling.order == Order::Sequential {
                return Err(context.error(
                    analysis.span().start,
                    "`analysis = \"paired\"` needs `order = \"interleaved\"`: only runs of the same interleaved block share the machine's state",
                ));
            }
        }
        Ok(())
    }

    /// `timeout` (positive) and `cooldown`.
    fn apply_durations(
        &self,
        sampling: &mut Sampling,
        context: &Context<'_>,
    ) -> Result<(), ModelError> {
        if let Some(timeout) = &self.timeout {
            let duration = duration_from(timeout.get_ref()).map_err(|message| {
                context.error(timeout.span().start, format!("`timeout`: {message}"))
            })?;
            if duration.is_zero() {
                return Err(context.error(
                    timeout.span().start,
                    "`timeout` is zero; expected a positive duration",
                ));
            }
            sampling.timeout = Some(duration);
        }
        if let Some(cooldown) = &self.cooldown {
            sampling.cooldown = duration_from(cooldown.get_ref()).map_err(|message| {
                context.error(cooldown.span().start, format!("`cooldown`: {message}"))
            })?;
        }
        Ok(())
    }

    /// `boots`, `boot_retries` and `on_boot_failure`.
    fn apply_boots(
        &self,
        sampling: &mut Sampling,
        context: &Context<'_>,
    ) -> Result<(), ModelError> {
        if let Some(boots) = count(&self.boots, "boots", 1, context)? {
            sampling.boots = boots;
        }
        if let Some(retries) = count(&self.boot_retries, "boot_retries", 0, context)? {
            sampling.boot_retries = retries;
        }
        if let Some(policy) = &self.on_boot_failure {
            sampling.on_boot_failure = match policy.get_ref().as_str() {
                "stop" => OnBootFailure::Stop,
                "skip" => OnBootFailure::Skip,
                other => {
                    return Err(context.error(
                        policy.span().start,
                        format!("`on_boot_failure` = \"{other}\"; expected \"stop\" or \"skip\""),
                    ));
                }
            };
        }
        Ok(())
    }

    /// `mode` with its `min` and `max` (which apply only when adaptive).
    fn mode(&self, sampling: &Sampling, context: &Context<'_>) -> Result<SamplingMode, ModelError> {
        let min = count(&self.min, "min", 2, context)?;
        let max = count(&self.max, "max", 2, context)?;
        let adaptive = match &self.mode {
            None => false,
            Some(mode) => match mode.get_ref().as_str() {
                "fixed" => false,
                "adaptive" => true,
                other => {
                    return Err(context.error(
                        mode.span().start,
                        format!("`mode` = \"{other}\"; expected \"fixed\" or \"adaptive\""),
                    ));
                }
            },
        };
        if adaptive {
            let min = min.unwrap_or(5);
            let max = max.unwrap_or(sampling.iterations.max(min));
            if max < min {
                let offset = self.max.as_ref().map_or(0, |m| m.span().start);
                return Err(context.error(offset, format!("`max` = {max} is below `min` = {min}")));
            }
            if sampling.order == Order::Sequential {
                let offset = self.order.as_ref().map_or(0, |order| order.span().start);
                return Err(context.error(
                    offset,
                    "`order = \"sequential\"` cannot be adaptive: adaptive sampling decides after each block of all cells; use the default interleaved order",
                ));
            }
            Ok(SamplingMode::Adaptive { min, max })
        } else if let Some(spanned) = self.min.as_ref().or(self.max.as_ref()) {
            Err(context.error(
                spanned.span().start,
                "`min` and `max` apply only with `mode = \"adaptive\"`",
            ))
        } else {
            Ok(sampling.mode)
        }
    }
}

/// A `[sampling]` count from `minimum` to 1000000.
fn count(
    value: &Option<Spanned<i64>>,
    key: &str,
    minimum: i64,
    context: &Context<'_>,
) -> Result<Option<u32>, ModelError> {
    match value {
        None => Ok(None),
        Some(spanned) => {
            let number = *spanned.get_ref();
            if number < minimum || number > 1_000_000 {
                Err(context.error(
                    spanned.span().start,
                    format!("`{key}` = {number}; expected an integer from {minimum} to 1000000"),
                ))
            } else {
                Ok(Some(number as u32))
            }
        }
    }
}

/// A `[sampling]` number strictly between `low` and `high`.
fn fraction(
    value: &Option<Spanned<f64>>,
    key: &str,
    low: f64,
    high: f64,
    context: &Context<'_>,
) -> Result<Option<f64>, ModelError> {
    match value {
        None => Ok(None),
        Some(spanned) => {
            let number = *spanned.get_ref();
            if number > low && number < high {
                Ok(Some(number))
            } else {
                Err(context.error(
                    spanned.span().start,
                    format!(
                        "`{key}` = {number}; expected a number strictly between {low} and {high}"
                    ),
                ))
            }
        }
    }
}

impl RawMetric {
    /// The extractor `source` names, read from the metric's parser keys by
    /// the extractor's own serde form (the one schema). `unit` is offered
    /// to extractors that read one (a Go benchmark's unit is also the
    /// metric's); legacy keys the extractor does not read are ignored.
    fn extractor(&self, name: &str, source: &str) -> Result<Extractor, String> {
        let mut table = self.parser.clone();
        table.insert("kind".to_string(), toml::Value::String(source.to_string()));
        if let Some(unit) = &self.unit {
            table.insert("unit".to_string(), toml::Value::String(unit.clone()));
        }
        loop {
            let message = match toml::Value::Table(table.clone()).try_into::<Extractor>() {
                Ok(extractor) => return Ok(extractor),
                Err(error) => error.to_string(),
            };
            if let Some(field) = named_in(&message, "unknown field `")
                && (LEGACY_PARSER_KEYS.contains(&field) || field == "unit")
                && table.remove(field).is_some()
            {
                continue;
            }
            if let Some(field) = named_in(&message, "missing field `") {
                return Err(format!(
                    "metric `{name}` with source `{source}` needs `{field}`"
                ));
            }
            if message.contains("unknown variant") {
                let expected = message
                    .split("expected one of ")
                    .nth(1)
                    .unwrap_or_default()
                    .trim()
                    .replace('`', "");
                return Err(format!(
                    "metric `{name}` has unknown source `{source}`; expected one of wall, user, sys, maxrss, {expected} (or the older spellings time-v, time-p, json)"
                ));
            }
            return Err(format!("metric `{name}`: {}", message.trim()));
        }
    }

    fn validate(self) -> Result<MetricSpec, String> {
        let name = self.name.trim().to_string();
        if name.is_empty() {
            return Err("metric `name` is empty".to_string());
        }
        let source_name = self.source.clone().unwrap_or_else(|| name.clone());
        let source = match Builtin::from_name(&source_name) {
            Some(builtin) => MetricSource::Builtin(builtin),
            None => MetricSource::Parsed(self.extractor(&name, &source_name)?),
        };
        if let MetricSource::Builtin(_) = source
            && let Some(key) = self
                .parser
                .keys()
                .find(|key| !LEGACY_PARSER_KEYS.contains(&key.as_str()))
        {
            return Err(format!(
                "metric `{name}`: unknown field `{key}` for source `{source_name}`"
            ));
        }
        if let MetricSource::Parsed(extractor) = &source {
            extractor
                .validate()
                .map_err(|error| format!("metric `{name}`: {error}"))?;
        }
        let stream = match (self.from.as_deref(), &self.file) {
            (_, Some(file)) => Stream::File(file.clone()),
            (None | Some("output"), None) => Stream::Output,
            (Some("stdout"), None) => Stream::Stdout,
            (Some("stderr"), None) => Stream::Stderr,
            (Some(other), None) => {
                return Err(format!(
                    "metric `{name}`: `from` = \"{other}\"; expected \"stdout\", \"stderr\" or \"output\" (both)"
                ));
            }
        };
        if matches!(source, MetricSource::Parsed(Extractor::StressNgYaml { .. }))
            && !matches!(stream, Stream::File(_))
        {
            return Err(format!(
                "metric `{name}`: source `stress-ng-yaml` needs `file`, the path given to stress-ng --yaml"
            ));
        }
        let direction = match self.direction.as_deref() {
            None => source.default_direction().ok_or_else(|| {
                format!(
                    "metric `{name}` needs `direction` = \"higher\" or \"lower\" (which is better?)"
                )
            })?,
            Some("higher") => Better::Higher,
            Some("lower") => Better::Lower,
            Some(other) => {
                return Err(format!(
                    "metric `{name}`: `direction` = \"{other}\"; expected \"higher\" or \"lower\""
                ));
            }
        };
        if let Some(threshold) = self.threshold
            && !(threshold > 0.0 && threshold < 1.0)
        {
            return Err(format!(
                "metric `{name}`: `threshold` = {threshold}; expected a fraction between 0 and 1, e.g. 0.02"
            ));
        }
        let unit = self
            .unit
            .unwrap_or_else(|| source.default_unit().to_string());
        Ok(MetricSpec {
            name,
            source,
            stream,
            direction,
            unit,
            threshold: self.threshold,
        })
    }
}

/// A comparison the experiment defines: a non-baseline level of one factor
/// against that factor's baseline level, the other factors held fixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ComparisonSpec {
    pub factor: String,
    /// Index into `Experiment::cells()`.
    pub baseline_cell: usize,
    pub candidate_cell: usize,
}

impl Experiment {
    /// Every comparison: for each factor, each non-baseline level against the
    /// baseline level, for every combination of the other factors' levels.
    /// A factor with `compare = false` contributes none: its levels are only
    /// held fixed while the other factors are compared within each of them.
    pub fn comparisons(&self) -> Vec<ComparisonSpec> {
        let cells = self.cells();
        let mut comparisons = Vec::new();
        for (factor_index, factor) in self.factors.iter().enumerate() {
            if !factor.compare {
                continue;
            }
            let baseline_value = &factor.levels[factor.baseline].value;
            for (baseline_index, baseline_cell) in cells.iter().enumerate() {
                if &baseline_cell.levels[factor_index].1 != baseline_value {
                    continue;
                }
                for (candidate_index, candidate_cell) in cells.iter().enumerate() {
                    let differs_only_here = candidate_cell
                        .levels
                        .iter()
                        .zip(&baseline_cell.levels)
                        .enumerate()
                        .all(|(index, (candidate, baseline))| {
                            (index == factor_index) != (candidate == baseline)
                        });
                    if differs_only_here {
                        comparisons.push(ComparisonSpec {
                            factor: factor.name.clone(),
                            baseline_cell: baseline_index,
                            candidate_cell: candidate_index,
                        });
                    }
                }
            }
        }
        comparisons
    }
}

#[cfg(test)]
mod target_tests {
    use super::*;

    /// An experiment as verdict 0.2.0 stored it (the target as the flat
    /// keys `hosts`, `vm`, `host_boot`) loads for resume and report, and
    /// is stored again in the same shape.
    #[test]
    fn an_experiment_stored_in_the_flat_shape_loads() {
        let stored = r#"{"hosts":["lpar1"],"host_boot":{"kernel":"/boot/vmlinuz","initrd":null,"cmdline":"ro","timeout":{"secs":90,"nanos":0},"power_cycle":null},"name":"t","command":{"argv":["true"]},"workdir":"/w","env":{},"factors":[],"metrics":[],"sampling":{"iterations":3,"warmups":0,"order":"interleaved","timeout":null,"cooldown":{"secs":0,"nanos":0},"seed":7,"mode":{"mode":"fixed"},"threshold":0.02,"alpha":0.05,"power":0.9},"success_codes":[0]}"#;
        let experiment: Experiment = match serde_json::from_str(stored) {
            Ok(experiment) => experiment,
            Err(error) => panic!("{error}"),
        };
        assert_eq!(
            experiment.target.placement(experiment.target.hosts()),
            crate::Placement::BootedHost
        );
        assert_eq!(experiment.target.hosts(), ["lpar1"]);
        let again = serde_json::to_value(&experiment).unwrap();
        assert_eq!(again["hosts"], serde_json::json!(["lpar1"]));
        assert_eq!(again["host_boot"]["cmdline"], "ro");
        assert!(again.get("vm").is_none() && again.get("target").is_none());
        let local = stored.replace(r#""hosts":["lpar1"],"#, "").replace(
            r#""host_boot":{"kernel":"/boot/vmlinuz","initrd":null,"cmdline":"ro","timeout":{"secs":90,"nanos":0},"power_cycle":null},"#,
            "",
        );
        let experiment: Experiment = serde_json::from_str(&local).unwrap();
        assert_eq!(experiment.target, TargetSpec::Local);
        // A stored VM with hosts cannot run: refused, not guessed.
        let both = stored.replace(
            r#""host_boot":"#,
            r#""vm":{"kernel":"/k","initrd":null,"cmdline":"","smp":"1","memory":"1G","cpu":null,"accel":"tcg","programs":[],"boot_timeout":{"secs":60,"nanos":0}},"host_boot":"#,
        );
        let error = serde_json::from_str::<Experiment>(&both)
            .unwrap_err()
            .to_string();
        assert!(error.contains("cannot run together"), "{error}");
    }

    #[test]
    fn target_hosts_are_read_and_checked() {
        let base = "name = \"t\"\ncommand = [\"true\"]\n";
        let experiment = Experiment::parse(
            &format!("{base}[target]\nhosts = [\"lpar1\", \"lpar2\"]\n"),
            "t.toml",
        )
        .unwrap();
        assert_eq!(experiment.target.hosts(), ["lpar1", "lpar2"]);
        assert!(
            Experiment::parse(base, "t.toml")
                .unwrap()
                .target
                .hosts()
                .is_empty()
        );
        let error = Experiment::parse(
            &format!("{base}[target]\nhosts = [\"ok\", \"-oProxyCommand=x\"]\n"),
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("t.toml:4:"), "{error}");
        assert!(error.contains("is not a host name"), "{error}");
        let error = Experiment::parse(&format!("{base}[target]\nhost = [\"a\"]\n"), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(error.contains("host"), "{error}");
    }

    const PREEMPT: &str = "name = \"t\"\ncommand = [\"true\"]\n\
[factors]\npreempt = [\n  { value = \"full\", boot = { cmdline = \"preempt=full\" }, verify = { command = [\"cat\", \"/sys/kernel/debug/sched/preempt\"], matches = '\\(full\\)' } },\n]\n";

    #[test]
    fn levels_that_build_their_kernels_need_no_vm_kernel() {
        let text = "name = \"t\"\ncommand = [\"true\"]\n[factors]\npatch = [\n  \
            { value = \"without\", boot = { build = { tree = \"linux.tar.xz\", config = \"tinyconfig\" } } },\n  \
            { value = \"with\", boot = { build = { tree = \"linux.tar.xz\", patches = [\"a.patch\"], config = \"tinyconfig\", fragments = [\"verdict:vm-guest\"] } } },\n]\n\
            [target]\nvm = { smp = \"2\" }\n";
        let mut experiment = Experiment::parse(text, "e/t.toml").unwrap();
        assert_eq!(experiment.boot_factors(), vec![0]);
        experiment.resolve_build_paths(Path::new("/e"));
        let build = |level: usize| {
            experiment.factors[0].levels[level]
                .boot
                .as_ref()
                .and_then(|boot| boot.build.clone())
                .unwrap()
        };
        assert_eq!(build(0).tree, Some(PathBuf::from("/e/linux.tar.xz")));
        assert_eq!(build(1).patches, [PathBuf::from("/e/a.patch")]);
        // A level without a kernel of its own needs the VM's.
        let error = Experiment::parse(
            &text.replace(
                "{ value = \"without\", boot = { build = { tree = \"linux.tar.xz\", config = \"tinyconfig\" } } }",
                "{ value = \"without\", boot = { cmdline = \"quiet\" } }",
            ),
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("`[target] vm` needs `kernel`") && error.starts_with("t.toml:9:"),
            "{error}"
        );
        // On ssh hosts a level cannot build.
        let error = Experiment::parse(
            &text.replace(
                "vm = { smp = \"2\" }",
                "boot = { kernel = \"/boot/vmlinuz\" }",
            ),
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("boot.build"), "{error}");
    }

    #[test]
    fn a_vm_target_with_boot_levels_loads() {
        let text = format!(
            "{PREEMPT}[sampling]\nboots = 3\non_boot_failure = \"skip\"\n[target]\nvm = {{ kernel = \"/vmlinuz\", smp = \"sockets=1,cores=2,threads=2\", programs = [\"stress-ng\"] }}\n"
        );
        let experiment = Experiment::parse(&text, "t.toml").unwrap();
        let vm = experiment.target.vm().unwrap();
        assert_eq!(vm.smp, "sockets=1,cores=2,threads=2");
        assert_eq!(experiment.sampling.boots, 3);
        assert_eq!(experiment.sampling.on_boot_failure, OnBootFailure::Skip);
        assert_eq!(experiment.boot_factors(), vec![0]);
        let level = &experiment.factors[0].levels[0];
        assert_eq!(level.boot.as_ref().unwrap().cmdline, "preempt=full");
        assert_eq!(level.verify.as_ref().unwrap().matches, "\\(full\\)");
        // Stored and loaded again (resume) it is the same experiment.
        let json = serde_json::to_string(&experiment).unwrap();
        assert_eq!(
            serde_json::from_str::<Experiment>(&json).unwrap(),
            experiment
        );
    }

    #[test]
    fn ssh_hosts_with_a_boot_section_take_boot_levels() {
        let text = "name = \"t\"\ncommand = [\"true\"]\n[factors]\n\
            mode = [{ value = \"a\", boot = { cmdline = \"quiet\" } }, { value = \"b\", boot = { hook = [\"grub-reboot\", \"{nonce}\"] } }]\n\
            [sampling]\nboots = 2\n[target]\nboot = { kernel = \"/boot/vmlinuz\", cmdline = \"ro\", timeout = \"90s\", power_cycle = [\"cycle\", \"{host}\"] }\n";
        let experiment = Experiment::parse(text, "t.toml").unwrap();
        let host = experiment.target.host_boot().unwrap();
        assert_eq!(host.timeout, std::time::Duration::from_secs(90));
        assert_eq!(host.power_cycle.as_deref().unwrap(), ["cycle", "{host}"]);
        let levels = &experiment.factors[0].levels;
        let kexec = crate::BootPlan::combine_host(host, [levels[0].boot.as_ref().unwrap()]);
        assert_eq!(
            kexec.kernel.as_deref(),
            Some(std::path::Path::new("/boot/vmlinuz"))
        );
        assert_eq!(kexec.cmdline, "ro quiet");
        let hook = crate::BootPlan::combine_host(host, [levels[1].boot.as_ref().unwrap()]);
        assert_eq!(hook.kernel, None);
        assert_eq!(hook.hook.as_deref().unwrap(), ["grub-reboot", "{nonce}"]);
        // Round trip through the stored JSON.
        let json = serde_json::to_string(&experiment).unwrap();
        assert_eq!(
            serde_json::from_str::<Experiment>(&json).unwrap(),
            experiment
        );
        // A hook on a VM, and `boot` beside `vm`, are refused.
        let error = Experiment::parse(
            &text.replace("boot = { kernel", "vm = { kernel").replace(
                ", timeout = \"90s\", power_cycle = [\"cycle\", \"{host}\"]",
                "",
            ),
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("boot.hook") && error.starts_with("t.toml:4:"),
            "{error}"
        );
        let error = Experiment::parse(&format!("{text}vm = {{ kernel = \"/k\" }}\n"), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(error.contains("both `vm` and `boot`"), "{error}");
    }

    #[test]
    fn boot_mistakes_are_refused_at_their_place() {
        // `boot` without a VM target: the factor's line.
        let error = Experiment::parse(PREEMPT, "t.toml")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("t.toml:4:1:"), "{error}");
        assert!(error.contains("[target] vm"), "{error}");
        // An invalid regex in `verify`.
        let text = PREEMPT.replace("'\\(full\\)'", "'(full'")
            + "[target]\nvm = { kernel = \"/vmlinuz\" }\n";
        let error = Experiment::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(error.starts_with("t.toml:4:"), "{error}");
        assert!(error.contains("regular expression"), "{error}");
        // A placeholder spliced into a shell by `verify.command`.
        let text = "name = \"t\"\ncommand = [\"true\"]\n[factors]\nmode = [\n  { value = \"a\", verify = { command = [\"sh\", \"-c\", \"cat {mode}\"], matches = \"x\" } },\n]\n";
        let error = Experiment::parse(text, "t.toml").unwrap_err().to_string();
        assert!(
            error.contains("verify.command") && error.contains("{mode}"),
            "{error}"
        );
        // `boots` without a VM; a VM with hosts; a bad accelerator.
        let error = Experiment::parse(
            "name = \"t\"\ncommand = [\"true\"]\n[sampling]\nboots = 2\n",
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("t.toml:4:") && error.contains("`boots`"),
            "{error}"
        );
        let error = Experiment::parse(
            "name = \"t\"\ncommand = [\"true\"]\n[target]\nhosts = [\"a\"]\nvm = { kernel = \"/k\" }\n",
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("both"), "{error}");
        let error = Experiment::parse(
            "name = \"t\"\ncommand = [\"true\"]\n[target]\nvm = { kernel = \"/k\", accel = \"hvf\" }\n",
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("t.toml:4:") && error.contains("vm.accel"),
            "{error}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::first_repeat;
    use std::cell::Cell;
    use std::hash::{Hash, Hasher};

    thread_local! {
        static COMPARISONS: Cell<usize> = const { Cell::new(0) };
    }

    /// A value that counts how often it is compared for equality.
    struct Counted(u32);

    impl PartialEq for Counted {
        fn eq(&self, other: &Counted) -> bool {
            COMPARISONS.with(|count| count.set(count.get() + 1));
            self.0 == other.0
        }
    }

    impl Eq for Counted {}

    impl Hash for Counted {
        fn hash<H: Hasher>(&self, state: &mut H) {
            self.0.hash(state);
        }
    }

    /// The algorithm, not a timing: 10^5 distinct levels cost at most a
    /// comparison each (hash collisions); a scan of the levels seen so far
    /// would make 5 x 10^9.
    #[test]
    fn a_repeat_is_found_with_a_linear_number_of_comparisons() {
        COMPARISONS.with(|count| count.set(0));
        assert!(first_repeat((0..100_000).map(Counted)).is_none());
        let comparisons = COMPARISONS.with(Cell::get);
        assert!(comparisons <= 100_000, "{comparisons} comparisons");
        let repeat = first_repeat((0..100_000).chain([7]).map(Counted));
        assert_eq!(repeat.map(|counted| counted.0), Some(7));
    }
}
