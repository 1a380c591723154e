//! `verdict kconfig`: diff two kernel configs (diffconfig semantics),
//! explain symbol values with reason trees from a kernel's Kconfig tree
//! (`why`, `why-not`, `blame`), compute what `make olddefconfig` writes
//! (`olddefconfig`) and what an edit changes (`set`). Reads the files,
//! runs toolchain probes through verdict-exec only when `--run-probes` asks,
//! and prints; the parsing, evaluation and rendering live in verdict-kconfig.

use crate::error::CliError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use verdict_exec::{Cancel, Executor, Invocation, SystemExecutor};
use verdict_kconfig::{
    Blame, ConfigDiff, DotConfig, Evaluation, Explainer, Kconfig, KconfigError, NoProbes,
    ProbeRunner, ReasonNode, SymbolType, Tristate, blame_causes, decode_config_bytes, guess_arch,
    load_tree, load_tree_expanded, make_environment, render_blame, render_tree, similar_symbols,
    srcarch_for_arch,
};
use verdict_kconfig::{
    apply_edit, assignment_line, changed_symbols, edit_config, goal_value, render_causes,
    symbol_name,
};

#[derive(Debug, clap::Args)]
pub(crate) struct KconfigArgs {
    #[command(subcommand)]
    command: KconfigCommand,
}

#[derive(Debug, clap::Subcommand)]
enum KconfigCommand {
    /// Symbols removed, changed and added between two configs (like scripts/diffconfig).
    Diff(DiffArgs),
    /// Why a symbol has its value: the chain of prompts, selects, defaults and choices.
    Why(WhyArgs),
    /// Why a symbol is off: the unmet dependency, or what would have turned it on.
    WhyNot(WhyArgs),
    /// Two reason trees side by side for a symbol that differs between two configs.
    Blame(BlameArgs),
    /// The config `make olddefconfig` would write, computed by verdict's evaluator.
    Olddefconfig(OlddefconfigArgs),
    /// What-if: set symbols, run olddefconfig, print every change with its reason.
    Set(SetArgs),
    /// How-to: the smallest sets of user-settable changes that give SYMBOL=VALUE, each checked.
    How(HowArgs),
}

#[derive(Debug, clap::Args)]
struct HowArgs {
    /// The goal, `SYMBOL=VALUE` (y, m or n).
    #[arg(value_name = "SYMBOL=VALUE")]
    goal: String,
    #[command(flatten)]
    evaluate: EvaluateArgs,
    /// At most this many ways are listed.
    #[arg(long, default_value_t = 5)]
    limit: usize,
}

#[derive(Debug, clap::Args)]
struct EvaluateArgs {
    /// The config (plain or gzip).
    #[arg(long)]
    config: PathBuf,
    /// The kernel source tree (the directory holding the top-level Kconfig).
    #[arg(long = "tree", value_name = "KERNEL_SRC")]
    tree: PathBuf,
    /// The architecture (`x86_64`, `ppc64le`, `arm64`, ...); guessed from the config when absent.
    #[arg(long)]
    arch: Option<String>,
    /// Run the tree's toolchain probes ($(cc-option,...), $(shell,...)) with the
    /// compiler named by $CC (default gcc); without it their answers come from
    /// the config's own CONFIG_CC_*/CONFIG_AS_*/... values.
    #[arg(long)]
    run_probes: bool,
}

#[derive(Debug, clap::Args)]
struct OlddefconfigArgs {
    #[command(flatten)]
    evaluate: EvaluateArgs,
    /// Write the config here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct SetArgs {
    /// Assignments `SYMBOL=VALUE` (with or without `CONFIG_`; y, m, n, a number or a string).
    #[arg(required = true, value_name = "SYMBOL=VALUE")]
    assignments: Vec<String>,
    #[command(flatten)]
    evaluate: EvaluateArgs,
    /// Also write the resulting config here.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Debug, clap::Args)]
struct DiffArgs {
    /// The old config (plain or gzip, e.g. a copy of /proc/config.gz).
    old: PathBuf,
    /// The new config (plain or gzip).
    new: PathBuf,
    /// Only symbols matching this regular expression (name without `CONFIG_`).
    #[arg(long = "match", value_name = "REGEX")]
    pattern: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Debug, clap::Args)]
struct TreeArgs {
    /// The kernel source tree (the directory holding the top-level Kconfig).
    #[arg(long = "tree", value_name = "KERNEL_SRC")]
    tree: PathBuf,
    /// The architecture (`x86_64`, `ppc64le`, `arm64`, ...); guessed from the config when absent.
    #[arg(long)]
    arch: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Run the tree's toolchain probes when evaluating (see `olddefconfig --run-probes`).
    #[arg(long)]
    run_probes: bool,
}

#[derive(Debug, clap::Args)]
struct WhyArgs {
    /// The symbol, with or without `CONFIG_`.
    symbol: String,
    /// The config whose values are explained (plain or gzip).
    #[arg(long)]
    config: PathBuf,
    #[command(flatten)]
    tree: TreeArgs,
}

#[derive(Debug, clap::Args)]
struct BlameArgs {
    /// The old config (plain or gzip).
    old: PathBuf,
    /// The new config (plain or gzip).
    new: PathBuf,
    /// The symbol, with or without `CONFIG_`.
    symbol: String,
    /// The new kernel's source tree when it differs from --tree (which then is the old one).
    #[arg(long = "new-tree", value_name = "KERNEL_SRC")]
    new_tree: Option<PathBuf>,
    /// Show every changed user setting and both reason trees in full.
    #[arg(long)]
    full: bool,
    #[command(flatten)]
    tree: TreeArgs,
}

pub(crate) fn run(args: &KconfigArgs) -> Result<ExitCode, CliError> {
    match &args.command {
        KconfigCommand::Diff(diff) => run_diff(diff),
        KconfigCommand::Why(why) => run_why(why, false),
        KconfigCommand::WhyNot(why) => run_why(why, true),
        KconfigCommand::Blame(blame) => run_blame(blame),
        KconfigCommand::Olddefconfig(args) => run_olddefconfig(args),
        KconfigCommand::Set(args) => run_set(args),
        KconfigCommand::How(args) => run_how(args),
    }
}

fn input_error(error: KconfigError) -> CliError {
    CliError::input(format!("failed to {error}"))
}

fn read_config(path: &Path) -> Result<DotConfig, CliError> {
    let label = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|error| CliError::input(format!("failed to read config {label}: {error}")))?;
    let text = decode_config_bytes(&bytes, &label).map_err(input_error)?;
    let config = DotConfig::parse(&text, &label).map_err(input_error)?;
    refuse_empty(&config, &label)?;
    Ok(config)
}

fn refuse_empty(config: &DotConfig, label: &str) -> Result<(), CliError> {
    if config.is_empty() {
        return Err(CliError::input(format!(
            "failed to read config {label}: it has no `CONFIG_NAME=value` or `# CONFIG_NAME is not set` line; is it a kernel .config?"
        )));
    }
    Ok(())
}

/// The config's text and its parsed values (the evaluator reads the text in
/// file order, as the kernel does).
fn read_config_text(path: &Path) -> Result<(String, DotConfig), CliError> {
    let label = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|error| CliError::input(format!("failed to read config {label}: {error}")))?;
    let text = decode_config_bytes(&bytes, &label).map_err(input_error)?;
    let config = DotConfig::parse(&text, &label).map_err(input_error)?;
    refuse_empty(&config, &label)?;
    Ok((text, config))
}

/// "unknown symbol X; did you mean Y?" for a name the tree does not define.
fn unknown_symbol(tree: &Kconfig, symbol: &str, arch: &str) -> CliError {
    let suggestions = similar_symbols(tree, symbol);
    let hint = match suggestions.as_slice() {
        [] => String::new(),
        [only] => format!("; did you mean {only}?"),
        several => format!("; did you mean one of {}?", several.join(", ")),
    };
    CliError::input(format!(
        "failed to find symbol {symbol}: no `config {symbol}` in the Kconfig tree for arch {arch}{hint}"
    ))
}

/// Runs `$(shell,...)` probes as the kernel's popen() does (`/bin/sh -c`),
/// through verdict-exec, with the variables `make` exports, in a scratch
/// directory (cc-option creates and removes `.tmp_$$` there).
struct ExecProbes {
    environment: HashMap<String, String>,
    directory: PathBuf,
}

impl ProbeRunner for ExecProbes {
    fn shell(&self, command: &str) -> Option<String> {
        let mut invocation = Invocation::shell(command)
            .with_cwd(self.directory.clone())
            .with_timeout(Duration::from_secs(120));
        for (name, value) in &self.environment {
            invocation = invocation.with_env(name.clone(), value.clone());
        }
        let outcome = SystemExecutor.run(&invocation, &Cancel::new()).ok()?;
        Some(String::from_utf8_lossy(&outcome.stdout).into_owned())
    }
}

/// Parses the tree for evaluation: the environment `make` would export
/// (overridden by this process's environment, except ARCH/SRCARCH which
/// follow --arch or the config), probes run only with --run-probes.
fn load_for_evaluation(
    args: &EvaluateArgs,
    config: &DotConfig,
) -> Result<(Kconfig, String), CliError> {
    let arch = resolve_arch(args.arch.as_deref(), config);
    if !args.tree.join("Kconfig").is_file() {
        return Err(CliError::input(format!(
            "failed to find {}: --tree must be a kernel source directory with a top-level Kconfig",
            args.tree.join("Kconfig").display()
        )));
    }
    let tree_path = std::fs::canonicalize(&args.tree).unwrap_or_else(|_| args.tree.clone());
    let overrides: HashMap<String, String> = std::env::vars()
        .filter(|(name, _)| name != "ARCH" && name != "SRCARCH")
        .collect();
    let environment = make_environment(&tree_path, &arch, &overrides);
    let tree = if args.run_probes {
        let scratch = std::env::temp_dir();
        let runner = ExecProbes {
            environment: environment.clone(),
            directory: scratch,
        };
        load_tree_expanded(&tree_path, &arch, &environment, &runner)
    } else {
        load_tree_expanded(&tree_path, &arch, &environment, &NoProbes)
    }
    .map_err(input_error)?;
    Ok((tree, arch))
}

fn write_output(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|error| CliError::input(format!("failed to write {}: {error}", path.display())))
}

fn run_olddefconfig(args: &OlddefconfigArgs) -> Result<ExitCode, CliError> {
    let (text, config) = read_config_text(&args.evaluate.config)?;
    let (tree, _) = load_for_evaluation(&args.evaluate, &config)?;
    let output = Evaluation::new(&tree, &text).write_config();
    match &args.output {
        Some(path) => write_output(path, &output)?,
        None => emit(&output)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn run_set(args: &SetArgs) -> Result<ExitCode, CliError> {
    let (text, config) = read_config_text(&args.evaluate.config)?;
    let (tree, arch) = load_for_evaluation(&args.evaluate, &config)?;
    let mut before = Evaluation::new(&tree, &text);
    let before_text = before.write_config();
    let mut edited = text.clone();
    let mut requested = Vec::new();
    for assignment in &args.assignments {
        let Some((raw_name, value)) = assignment.split_once('=') else {
            return Err(CliError::input(format!(
                "failed to read assignment `{assignment}`: expected SYMBOL=VALUE"
            )));
        };
        let name = symbol_name(raw_name.trim());
        if !before.is_defined(&name) {
            return Err(unknown_symbol(&tree, &name, &arch));
        }
        let line = assignment_line(&before, &name, value.trim())
            .map_err(|message| CliError::input(format!("failed to set {message}")))?;
        edited = edit_config(&edited, &name, &line);
        if value.trim() == "y" {
            // Choosing a choice member: the others are no longer chosen.
            for sibling in before.choice_siblings(&name) {
                if config.get(&sibling) == Some("y") {
                    edited =
                        edit_config(&edited, &sibling, &format!("# CONFIG_{sibling} is not set"));
                }
            }
        }
        requested.push((name, value.trim().to_string()));
    }
    let mut after = Evaluation::new(&tree, &edited);
    let after_text = after.write_config();
    let old = DotConfig::parse(&before_text, "before").map_err(input_error)?;
    let new = DotConfig::parse(&after_text, "after").map_err(input_error)?;
    let diff = ConfigDiff::between(&old, &new);
    let mut report = String::new();
    for (name, value) in &requested {
        let result = after.value(name).unwrap_or_default();
        let wanted = value.trim_matches('"');
        if result != wanted {
            let reason = after.reason(name).unwrap_or_default();
            report.push_str(&format!(
                "note: {name}={value} did not take effect: {name} is {reason}\n"
            ));
        }
    }
    let (removed, changed, added) = diff.counts();
    report.push_str(&format!(
        "{} symbol(s) change ({changed} changed, {added} added, {removed} removed), as make olddefconfig computes it after the edit:\n",
        removed + changed + added
    ));
    for line in diff.render_text().lines() {
        let name = line[1..].split_whitespace().next().unwrap_or_default();
        let reason = if requested
            .iter()
            .any(|(requested_name, _)| requested_name == name)
        {
            format!(
                "set by this edit ({})",
                after.reason(name).unwrap_or_default()
            )
        } else {
            after
                .reason(name)
                .unwrap_or_else(|| "no longer defined".to_string())
        };
        report.push_str(&format!("{line}\n    because {reason}\n"));
    }
    emit(&report)?;
    if let Some(path) = &args.output {
        write_output(path, &after_text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes to stdout; a closed pipe (`| head`) ends output quietly.
fn emit(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::internal(
            format!("failed to write to stdout: {error}"),
        )),
        _ => Ok(()),
    }
}

fn emit_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(CliError::internal)?;
    emit(&(text + "\n"))
}

/// `verdict.kconfig-why/v1`.
#[derive(serde::Serialize)]
struct WhyDocument<'a> {
    schema: &'static str,
    symbol: &'a str,
    value: String,
    arch: &'a str,
    reason: &'a ReasonNode,
}

/// One side of `verdict.kconfig-blame/v1`.
#[derive(serde::Serialize)]
struct BlameSide<'a> {
    value: String,
    reason: &'a ReasonNode,
}

/// `verdict.kconfig-blame/v1`.
#[derive(serde::Serialize)]
struct BlameDocument<'a> {
    schema: &'static str,
    symbol: &'a str,
    arch: &'a str,
    old: BlameSide<'a>,
    new: BlameSide<'a>,
    only_old: &'a [String],
    only_new: &'a [String],
}

fn run_diff(args: &DiffArgs) -> Result<ExitCode, CliError> {
    let old = read_config(&args.old)?;
    let new = read_config(&args.new)?;
    let mut diff = ConfigDiff::between(&old, &new);
    if let Some(pattern) = &args.pattern {
        diff.retain_matching(pattern).map_err(input_error)?;
    }
    match args.format {
        Format::Text => emit(&diff.render_text())?,
        Format::Json => {
            let old_file = args.old.display().to_string();
            let new_file = args.new.display().to_string();
            emit_json(&diff.to_document(&old_file, &new_file))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn resolve_arch(arch: Option<&str>, config: &DotConfig) -> String {
    arch.map(str::to_string)
        .or_else(|| guess_arch(config).map(str::to_string))
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

fn load(tree: &Path, arch: &str) -> Result<Kconfig, CliError> {
    if !tree.join("Kconfig").is_file() {
        return Err(CliError::input(format!(
            "failed to find {}: --tree must be a kernel source directory with a top-level Kconfig",
            tree.join("Kconfig").display()
        )));
    }
    load_tree(tree, arch).map_err(input_error)
}

/// What the evaluator says before the reason tree: warnings when the
/// config's header or arch does not match the tree, "this config does not
/// match the tree" when the file's value is not what the tree computes, and
/// the computed value with its reason.
fn evaluator_preamble(
    args: &WhyArgs,
    text: &str,
    config: &DotConfig,
    arch: &str,
    symbol: &str,
) -> Result<String, CliError> {
    let evaluate = EvaluateArgs {
        config: args.config.clone(),
        tree: args.tree.tree.clone(),
        arch: Some(arch.to_string()),
        run_probes: args.tree.run_probes,
    };
    let (tree, _) = load_for_evaluation(&evaluate, config)?;
    let mut evaluation = Evaluation::new(&tree, text);
    let mut lines = String::new();
    let header = text
        .lines()
        .take(4)
        .find_map(|line| line.strip_prefix("# Linux/"))
        .map(|rest| format!("Linux/{rest}"));
    if let (Some(header), Some(mainmenu)) = (&header, &tree.mainmenu) {
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        if words(header) != words(mainmenu) {
            lines.push_str(&format!(
                "warning: the config was written for `{header}`, the tree is `{mainmenu}`\n"
            ));
        }
    }
    if let Some(guessed) = guess_arch(config) {
        if srcarch_for_arch(guessed) != srcarch_for_arch(arch) {
            lines.push_str(&format!(
                "warning: the config looks like {guessed} (from its arch symbols) but is explained for arch {arch}\n"
            ));
        }
    }
    let Some(computed) = evaluation.value(symbol) else {
        return Ok(lines);
    };
    let reason = evaluation.reason(symbol).unwrap_or_default();
    let in_file = match config.get(symbol) {
        Some(value) => value.trim_matches('"').to_string(),
        None if matches!(
            evaluation.symbol_type(symbol),
            Some(SymbolType::Bool | SymbolType::Tristate)
        ) =>
        {
            "n".to_string()
        }
        None => String::new(),
    };
    if in_file != computed {
        lines.push_str(&format!(
            "this config does not match the tree: {symbol}={in_file} in the file, but the tree computes {symbol}={reason}\n"
        ));
        let output = evaluation.write_config();
        let differing = changed_symbols(text, &output).unwrap_or_default();
        if !differing.is_empty() {
            lines.push_str(&format!(
                "  ({} symbol(s) of this config differ from what `make olddefconfig` would write for this tree)\n",
                differing.len()
            ));
        }
    } else {
        lines.push_str(&format!("computed by the tree: {symbol}={reason}\n"));
    }
    lines.push('\n');
    Ok(lines)
}

fn run_why(args: &WhyArgs, why_not: bool) -> Result<ExitCode, CliError> {
    let (text, config) = read_config_text(&args.config)?;
    let arch = resolve_arch(args.tree.arch.as_deref(), &config);
    let tree = load(&args.tree.tree, &arch)?;
    let symbol = symbol_name(&args.symbol);
    let explainer = Explainer::new(&tree, &config);
    let node = if why_not {
        explainer.why_not(&symbol)
    } else {
        explainer.why(&symbol)
    }
    .map_err(|error| match error {
        KconfigError::UnknownSymbol { .. } => {
            let suggestions = similar_symbols(&tree, &symbol);
            match suggestions.as_slice() {
                [] => input_error(error),
                several => CliError::input(format!(
                    "failed to {error}; did you mean {}?",
                    several.join(" or ")
                )),
            }
        }
        other => input_error(other),
    })?;
    match args.tree.format {
        Format::Text => {
            // The reason tree stands on its own when the evaluator cannot
            // read this tree.
            let preamble = evaluator_preamble(args, &text, &config, &arch, &symbol)
                .unwrap_or_else(|error| format!("(not evaluated: {error})\n\n"));
            emit(&(preamble + &render_tree(&node)))?;
        }
        Format::Json => emit_json(&WhyDocument {
            schema: "verdict.kconfig-why/v1",
            symbol: &symbol,
            value: explainer.display_value(&symbol),
            arch: &arch,
            reason: &node,
        })?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The changed user settings ranked as causes (evaluated on the new tree):
/// those that alone give the symbol its new value first, each with its
/// shortest chain; the rest folded behind a count unless --full.
fn blame_ranking(args: &BlameArgs, arch: &str, symbol: &str) -> Result<String, CliError> {
    let (old_text, _) = read_config_text(&args.old)?;
    let (new_text, new_config) = read_config_text(&args.new)?;
    let evaluate = EvaluateArgs {
        config: args.new.clone(),
        tree: args
            .new_tree
            .clone()
            .unwrap_or_else(|| args.tree.tree.clone()),
        arch: Some(arch.to_string()),
        run_probes: args.tree.run_probes,
    };
    let (tree, _) = load_for_evaluation(&evaluate, &new_config)?;
    let causes = blame_causes(&tree, &old_text, &new_text, symbol);
    Ok(render_causes(&causes, symbol, args.full))
}

fn run_blame(args: &BlameArgs) -> Result<ExitCode, CliError> {
    let old_config = read_config(&args.old)?;
    let new_config = read_config(&args.new)?;
    let arch = resolve_arch(args.tree.arch.as_deref(), &new_config);
    let old_tree = load(&args.tree.tree, &arch)?;
    let new_tree = match &args.new_tree {
        Some(path) => load(path, &arch)?,
        None => old_tree.clone(),
    };
    let symbol = symbol_name(&args.symbol);
    let old_explainer = Explainer::new(&old_tree, &old_config);
    let new_explainer = Explainer::new(&new_tree, &new_config);
    let old = old_explainer.why(&symbol).map_err(input_error)?;
    let new = new_explainer.why(&symbol).map_err(input_error)?;
    let blame = Blame::between(&symbol, old, new);
    match args.tree.format {
        Format::Text => {
            let old_value = old_explainer.display_value(&symbol);
            let new_value = new_explainer.display_value(&symbol);
            let heading = if old_value == new_value {
                format!(
                    "{symbol} is {old_value} in both configs; the reasons may still differ.\n\n"
                )
            } else {
                format!("{symbol}: {old_value} -> {new_value}\n\n")
            };
            let causes = blame_ranking(args, &arch, &symbol)
                .unwrap_or_else(|error| format!("(causes not ranked: {error})\n\n"));
            let rest = if args.full {
                render_blame(&blame)
            } else {
                "(both reason trees: --full)\n".to_string()
            };
            emit(&(heading + &causes + &rest))?;
        }
        Format::Json => emit_json(&BlameDocument {
            schema: "verdict.kconfig-blame/v1",
            symbol: &symbol,
            arch: &arch,
            old: BlameSide {
                value: old_explainer.display_value(&symbol),
                reason: &blame.old,
            },
            new: BlameSide {
                value: new_explainer.display_value(&symbol),
                reason: &blame.new,
            },
            only_old: &blame.only_old,
            only_new: &blame.only_new,
        })?,
    }
    Ok(ExitCode::SUCCESS)
}

/// A way to a goal: the edits, and the other symbols it changes.
type Way = (Vec<(String, Tristate)>, Vec<String>);

fn run_how(args: &HowArgs) -> Result<ExitCode, CliError> {
    let (text, config) = read_config_text(&args.evaluate.config)?;
    let (tree, arch) = load_for_evaluation(&args.evaluate, &config)?;
    let Some((raw_name, raw_value)) = args.goal.split_once('=') else {
        return Err(CliError::input(format!(
            "failed to read goal `{}`: expected SYMBOL=VALUE",
            args.goal
        )));
    };
    let name = symbol_name(raw_name.trim());
    let mut evaluation = Evaluation::new(&tree, &text);
    if !evaluation.is_defined(&name) {
        return Err(unknown_symbol(&tree, &name, &arch));
    }
    let wanted = goal_value(&evaluation, &name, raw_value.trim()).map_err(CliError::input)?;
    let base = evaluation.write_config();
    let current = evaluation.value(&name).unwrap_or_default();
    if current == wanted.letter() {
        emit(&format!(
            "{name} is already {current}: {}\n",
            evaluation.reason(&name).unwrap_or_default()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let base_reason = evaluation.reason(&name).unwrap_or_default();
    // Candidates: the goal itself and every user-settable bool/tristate
    // that can influence it, nearest first.
    let mut candidates = vec![name.clone()];
    candidates.extend(evaluation.influences(&name, 6));
    candidates.retain(|candidate| {
        evaluation.has_prompt(candidate)
            && matches!(
                evaluation.symbol_type(candidate),
                Some(SymbolType::Bool | SymbolType::Tristate)
            )
    });
    let mut current_values = HashMap::new();
    for candidate in &candidates {
        current_values.insert(
            candidate.clone(),
            evaluation.value(candidate).unwrap_or_default(),
        );
    }
    let options = |candidate: &str| -> Vec<Tristate> {
        let mut values = vec![Tristate::Yes, Tristate::No];
        if evaluation.symbol_type(candidate) == Some(SymbolType::Tristate) {
            values.insert(1, Tristate::Module);
        }
        values
            .into_iter()
            .filter(|value| {
                current_values.get(candidate).map(String::as_str) != Some(value.letter())
            })
            .collect()
    };
    let mut single_options = Vec::new();
    for candidate in &candidates {
        for value in options(candidate) {
            single_options.push((candidate.clone(), value));
        }
    }
    // A way: the edits, and the other symbols it changes.
    let mut ways: Vec<Way> = Vec::new();
    let mut try_edits = |edits: &[(String, Tristate)],
                         evaluation: &mut Evaluation|
     -> Result<bool, CliError> {
        let mut edited = text.clone();
        for (candidate, value) in edits {
            edited = apply_edit(evaluation, &edited, candidate, *value);
        }
        evaluation.reevaluate(&edited);
        if evaluation.value(&name).as_deref() != Some(wanted.letter()) {
            return Ok(false);
        }
        // Only ways whose every edit sticks are achievable.
        for (candidate, value) in edits {
            if evaluation.value(candidate).as_deref() != Some(value.letter()) {
                return Ok(false);
            }
        }
        let output = evaluation.write_config();
        let others: Vec<String> = changed_symbols(&base, &output)
            .map_err(input_error)?
            .into_iter()
            .filter(|changed| changed != &name && !edits.iter().any(|(edit, _)| edit == changed))
            .collect();
        ways.push((edits.to_vec(), others));
        Ok(true)
    };
    let mut single_successes = Vec::new();
    for (candidate, value) in &single_options {
        if try_edits(&[(candidate.clone(), *value)], &mut evaluation)? {
            single_successes.push(candidate.clone());
        }
    }
    if single_successes.is_empty() {
        // Pairs of the nearest candidates (a bounded search).
        let near: Vec<&(String, Tristate)> = single_options.iter().take(60).collect();
        for (position, first) in near.iter().enumerate() {
            for second in &near[position + 1..] {
                if first.0 == second.0 {
                    continue;
                }
                try_edits(&[(*first).clone(), (*second).clone()], &mut evaluation)?;
            }
        }
    }
    ways.sort_by_key(|(edits, others)| (edits.len(), others.len()));
    let mut report = String::new();
    if ways.is_empty() {
        report.push_str(&format!(
            "impossible on this arch ({arch}) with one or two changes of user-settable symbols: {name} stays {current} because {base_reason}\n"
        ));
    } else {
        report.push_str(&format!(
            "{name}={} (now {current}): {} way(s), each checked by the evaluator, fewest other changes first:\n",
            wanted.letter(),
            ways.len()
        ));
        for (number, (edits, others)) in ways.iter().take(args.limit).enumerate() {
            let edits_text: Vec<String> = edits
                .iter()
                .map(|(candidate, value)| format!("{candidate}={}", value.letter()))
                .collect();
            let preview: Vec<&str> = others.iter().take(8).map(String::as_str).collect();
            let more = if others.len() > preview.len() {
                format!(", ... {} more", others.len() - preview.len())
            } else {
                String::new()
            };
            report.push_str(&format!(
                "  {}. {}  (changes {} other symbol(s){}{}{})\n",
                number + 1,
                edits_text.join(" "),
                others.len(),
                if preview.is_empty() { "" } else { ": " },
                preview.join(", "),
                more
            ));
        }
    }
    emit(&report)?;
    Ok(ExitCode::SUCCESS)
}
