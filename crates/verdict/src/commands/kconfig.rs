//! `verdict kconfig`: diff two kernel configs (diffconfig semantics) and
//! explain symbol values with reason trees from a kernel's Kconfig tree
//! (`why`, `why-not`, `blame`). Reads the files and prints; the parsing,
//! evaluation and rendering live in verdict-kconfig.

use crate::error::CliError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use verdict_kconfig::{
    Blame, ConfigDiff, DotConfig, Explainer, Kconfig, KconfigError, ReasonNode,
    decode_config_bytes, guess_arch, load_tree, render_blame, render_tree,
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
    #[command(flatten)]
    tree: TreeArgs,
}

pub(crate) fn run(args: &KconfigArgs) -> Result<ExitCode, CliError> {
    match &args.command {
        KconfigCommand::Diff(diff) => run_diff(diff),
        KconfigCommand::Why(why) => run_why(why, false),
        KconfigCommand::WhyNot(why) => run_why(why, true),
        KconfigCommand::Blame(blame) => run_blame(blame),
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
    DotConfig::parse(&text, &label).map_err(input_error)
}

fn symbol_name(raw: &str) -> String {
    raw.strip_prefix("CONFIG_").unwrap_or(raw).to_string()
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

fn run_why(args: &WhyArgs, why_not: bool) -> Result<ExitCode, CliError> {
    let config = read_config(&args.config)?;
    let arch = resolve_arch(args.tree.arch.as_deref(), &config);
    let tree = load(&args.tree.tree, &arch)?;
    let symbol = symbol_name(&args.symbol);
    let explainer = Explainer::new(&tree, &config);
    let node = if why_not {
        explainer.why_not(&symbol)
    } else {
        explainer.why(&symbol)
    }
    .map_err(input_error)?;
    match args.tree.format {
        Format::Text => emit(&render_tree(&node))?,
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
            emit(&(heading + &render_blame(&blame)))?;
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
