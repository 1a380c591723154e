//! `verdict ab 'CMD A' 'CMD B' [...]`: a quick interleaved A/B, stored like
//! any run. The commands become one factor `command` (the first is the
//! baseline); the primary metric is wall time. Each command string is split
//! into arguments like a shell would split words (quotes, backslashes) but
//! runs without a shell unless `--shell` asks for one.

use crate::common::doctor_annotation;
use crate::common::{DbArgs, cancel_on_interrupt, tool_version};
use crate::error::CliError;
use crate::launch::start_run;
use crate::run_report::ReportOptionsArgs;
use std::process::ExitCode;
use verdict_engine::StartOptions;
use verdict_engine::launch::NewRun;
use verdict_model::Experiment;

#[derive(Debug, clap::Args)]
pub(crate) struct AbArgs {
    /// Commands to compare; the first is the baseline.
    #[arg(required = true, num_args = 1.., value_name = "COMMAND")]
    pub(crate) commands: Vec<String>,
    /// Iterations per command.
    #[arg(
        short = 'n',
        long = "iterations",
        default_value_t = 20,
        value_name = "N"
    )]
    pub(crate) iterations: u32,
    /// Warmup iterations per command (recorded, not used as data).
    #[arg(short = 'w', long, default_value_t = 0)]
    pub(crate) warmups: u32,
    /// Run each command with /bin/sh -c (default: split into words, no shell).
    #[arg(long)]
    pub(crate) shell: bool,
    /// Sample adaptively until decided (the -n value is the cap).
    #[arg(long)]
    pub(crate) until_decided: bool,
    /// Seed of the randomized order.
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Per-iteration timeout, e.g. 30s.
    #[arg(long)]
    pub(crate) timeout: Option<String>,
    /// Measure the machine's noise first and store it with the run.
    #[arg(long)]
    pub(crate) doctor: bool,
    #[command(flatten)]
    pub(crate) target: crate::common::TargetArgs,
    #[command(flatten)]
    pub(crate) db: DbArgs,
    #[command(flatten)]
    pub(crate) report: ReportOptionsArgs,
}

pub(crate) fn run(args: &AbArgs) -> Result<ExitCode, CliError> {
    let text = experiment_text(args)?;
    let mut experiment = Experiment::parse(&text, "(verdict ab)").map_err(CliError::input)?;
    experiment.workdir = Some(std::env::current_dir().map_err(CliError::internal)?);
    if args.until_decided {
        experiment.sampling.mode = verdict_model::SamplingMode::Adaptive {
            min: 6.min(args.iterations),
            max: args.iterations,
        };
    }
    if args.target.remote() && args.doctor {
        return Err(CliError::input(
            "--doctor measures this machine; with --host run `verdict doctor` on each host instead",
        ));
    }
    let store = args.db.open()?;
    let cancel = cancel_on_interrupt();
    let placement = experiment.target.placement(&args.target.hosts);
    let options = StartOptions {
        seed: args.seed.unwrap_or_else(crate::common::random_seed),
        experiment,
        experiment_text: text,
        kind: verdict_model::RunKind::Ab,
        command_line: std::env::args().collect(),
        tool_version: tool_version(),
        bisect: None,
        placement,
    };
    let doctor = args.doctor.then(doctor_annotation);
    let run = NewRun {
        options,
        hosts: args.target.settings(),
        doctor,
        commit: None,
    };
    start_run(&store, run, &args.db, &args.report, cancel)
}

/// The experiment `ab` runs, as TOML text (stored with the run like any
/// experiment file).
fn experiment_text(args: &AbArgs) -> Result<String, CliError> {
    use toml::Value;
    let mut levels = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for command in &args.commands {
        let mut label = command.clone();
        let mut copy = 2;
        while seen.contains(&label) {
            label = format!("{command} #{copy}");
            copy += 1;
        }
        seen.push(label.clone());
        let mut level = toml::map::Map::new();
        level.insert("value".into(), Value::String(label));
        if args.shell {
            level.insert("command".into(), Value::String(command.clone()));
            level.insert("shell".into(), Value::Boolean(true));
        } else {
            let words = split_words(command)
                .map_err(|message| CliError::input(format!("command `{command}`: {message}")))?;
            if words.is_empty() {
                return Err(CliError::input("an empty command was given"));
            }
            level.insert(
                "command".into(),
                Value::Array(words.into_iter().map(Value::String).collect()),
            );
        }
        levels.push(Value::Table(level));
    }
    let mut sampling = toml::map::Map::new();
    sampling.insert(
        "iterations".into(),
        Value::Integer(i64::from(args.iterations)),
    );
    sampling.insert("warmups".into(), Value::Integer(i64::from(args.warmups)));
    if let Some(timeout) = &args.timeout {
        sampling.insert("timeout".into(), Value::String(timeout.clone()));
    }
    let mut factor = toml::map::Map::new();
    factor.insert("levels".into(), Value::Array(levels));
    let mut factors = toml::map::Map::new();
    factors.insert("command".into(), Value::Table(factor));
    let mut root = toml::map::Map::new();
    root.insert("name".into(), Value::String("ab".into()));
    root.insert(
        "command".into(),
        Value::Array(vec![Value::String("true".into())]),
    );
    root.insert("factors".into(), Value::Table(factors));
    root.insert("sampling".into(), Value::Table(sampling));
    toml::to_string(&Value::Table(root)).map_err(CliError::internal)
}

/// Split a command line into words as a POSIX shell would (single quotes,
/// double quotes with backslash escapes, backslash outside quotes), with no
/// expansion of any kind.
pub(crate) fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut characters = line.chars();
    while let Some(character) = characters.next() {
        match character {
            '\'' => {
                in_word = true;
                loop {
                    match characters.next() {
                        Some('\'') => break,
                        Some(inner) => current.push(inner),
                        None => return Err("unterminated single quote".to_string()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match characters.next() {
                        Some('"') => break,
                        Some('\\') => match characters.next() {
                            Some(escaped @ ('"' | '\\' | '$' | '`')) => current.push(escaped),
                            Some(other) => {
                                current.push('\\');
                                current.push(other);
                            }
                            None => return Err("unterminated double quote".to_string()),
                        },
                        Some(inner) => current.push(inner),
                        None => return Err("unterminated double quote".to_string()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match characters.next() {
                    Some(escaped) => current.push(escaped),
                    None => return Err("trailing backslash".to_string()),
                }
            }
            whitespace if whitespace.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            other => {
                in_word = true;
                current.push(other);
            }
        }
    }
    if in_word {
        words.push(current);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split_words;

    #[test]
    fn words_split_like_a_shell_without_expansion() {
        assert_eq!(split_words("sleep 0.1").unwrap(), vec!["sleep", "0.1"]);
        assert_eq!(
            split_words("grep 'a b' \"c \\\"d\\\"\" e\\ f").unwrap(),
            vec!["grep", "a b", "c \"d\"", "e f"]
        );
        assert_eq!(
            split_words("echo $HOME *").unwrap(),
            vec!["echo", "$HOME", "*"]
        );
        assert_eq!(split_words("x ''").unwrap(), vec!["x", ""]);
        assert!(split_words("echo 'oops").is_err());
    }
}
