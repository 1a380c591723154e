//! `verdict kconfig`: diff two kernel configs (diffconfig semantics),
//! explain symbol values with reason trees from a kernel's Kconfig tree
//! (`why`, `why-not`, `blame`), compute what `make olddefconfig` writes
//! (`olddefconfig`) and what an edit changes (`set`). Reads the files and
//! prints; the parsing, evaluation and rendering live in verdict-kconfig,
//! running the tree's toolchain probes (only when `--run-probes` asks) in
//! verdict-engine's `kconfig_probes`.
//! `fragment NAME` prints a config fragment verdict ships (`vm-guest`).

use crate::common::TextOrJson as Format;
use crate::error::CliError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use verdict_engine::kconfig_probes::{self, ProbeSettings};
use verdict_kconfig::{
    BlameDocument, ConfigDiff, DotConfig, Evaluation, Kconfig, KconfigError, WhyDocument, blame,
    blame_causes, blame_heading, evaluator_preamble, explain, guess_arch, how, load_kernel_tree,
    render_blame, render_causes, render_tree, set_symbols, symbol_name,
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
    /// Print a config fragment verdict ships: `vm-guest`, what its VM guest needs.
    Fragment(FragmentArgs),
    /// Check out the source a stored run's built level booted (commit and patches) and write its config, for `why`.
    Source(SourceArgs),
}

#[derive(Debug, clap::Args)]
struct SourceArgs {
    /// The level: `RUN:factor=level` (or `RUN` when the VM's own build was booted).
    #[arg(value_name = "RUN:LEVEL")]
    level: String,
    #[command(flatten)]
    db: crate::common::DbArgs,
}

#[derive(Debug, clap::Args)]
struct FragmentArgs {
    /// The fragment (`vm-guest`).
    name: String,
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
        KconfigCommand::Fragment(args) => run_fragment(args),
        KconfigCommand::Source(args) => run_source(args),
    }
}

/// Puts the cache's checkout of a built level's tree at its commit with its
/// patches, writes its config, and prints both with the `why` command line
/// that uses them.
fn run_source(args: &SourceArgs) -> Result<ExitCode, CliError> {
    let store = args.db.open()?;
    let builder = verdict_engine::booted::kernel_builder(crate::common::cancel_on_interrupt());
    let source =
        verdict_engine::boot_builds::level_source(&builder, &store, &args.level, &mut |message| {
            eprintln!("verdict: {message}");
        })
        .map_err(CliError::input)?;
    outln!(
        "tree: {} ({})",
        source.tree.display(),
        source.build.summary()
    );
    outln!(
        "config: {} (sha256 {})",
        source.config.display(),
        &source.build.config_sha256[..16]
    );
    outln!(
        "  verdict kconfig why SYMBOL --tree {} --config {}",
        source.tree.display(),
        source.config.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints verdict's fragment `args.name` (merge it with the kernel's
/// `scripts/kconfig/merge_config.sh`, or name it in a build's `fragments`
/// as `verdict:NAME`).
fn run_fragment(args: &FragmentArgs) -> Result<ExitCode, CliError> {
    let text = verdict_kconfig::fragment(&args.name).ok_or_else(|| {
        CliError::input(format!(
            "no fragment `{}`; verdict ships: {}",
            args.name,
            verdict_kconfig::fragment_names().join(", ")
        ))
    })?;
    out!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn input_error(error: KconfigError) -> CliError {
    CliError::of_class(error.exit_class(), format!("failed to {error}"))
}

/// The config's values.
fn read_config(path: &Path) -> Result<DotConfig, CliError> {
    read_config_text(path).map(|(_, config)| config)
}

/// The config's text and its parsed values.
fn read_config_text(path: &Path) -> Result<(String, DotConfig), CliError> {
    verdict_kconfig::read_config(path).map_err(input_error)
}

/// Parses the tree for evaluation (verdict-engine's `kconfig_probes`): the
/// environment `make` would export, overridden by this process's
/// environment except ARCH/SRCARCH (which follow --arch or the config),
/// probes run on this machine only with --run-probes.
fn load_for_evaluation(
    args: &EvaluateArgs,
    config: &DotConfig,
) -> Result<(Kconfig, String), CliError> {
    let arch = resolve_arch(args.arch.as_deref(), config);
    let settings = ProbeSettings {
        tree: args.tree.clone(),
        arch: arch.clone(),
        run_probes: args.run_probes,
        overrides: std::env::vars().collect(),
        scratch: std::env::temp_dir(),
    };
    let tree = kconfig_probes::load_here(&settings).map_err(input_error)?;
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
    let outcome = set_symbols(&tree, &text, &arch, &args.assignments).map_err(input_error)?;
    emit(&outcome.report)?;
    if let Some(path) = &args.output {
        write_output(path, &outcome.config)?;
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
    load_kernel_tree(tree, arch).map_err(input_error)
}

/// The evaluator's preamble for `why`/`why-not` on the config's own tree.
fn preamble(args: &WhyArgs, text: &str, config: &DotConfig, arch: &str, symbol: &str) -> String {
    let evaluate = EvaluateArgs {
        config: args.config.clone(),
        tree: args.tree.tree.clone(),
        arch: Some(arch.to_string()),
        run_probes: args.tree.run_probes,
    };
    // The reason tree stands on its own when the evaluator cannot read this tree.
    match load_for_evaluation(&evaluate, config) {
        Ok((tree, _)) => evaluator_preamble(&tree, text, config, arch, symbol),
        Err(error) => format!("(not evaluated: {error})\n\n"),
    }
}

fn run_why(args: &WhyArgs, why_not: bool) -> Result<ExitCode, CliError> {
    let (text, config) = read_config_text(&args.config)?;
    let arch = resolve_arch(args.tree.arch.as_deref(), &config);
    let tree = load(&args.tree.tree, &arch)?;
    let symbol = symbol_name(&args.symbol);
    let (node, value) = explain(&tree, &config, &symbol, why_not).map_err(input_error)?;
    match args.tree.format {
        Format::Text => {
            let preamble = preamble(args, &text, &config, &arch, &symbol);
            emit(&(preamble + &render_tree(&node)))?;
        }
        Format::Json => emit_json(&WhyDocument::new(&symbol, value, &arch, &node))?,
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
    let (blame, old_value, new_value) =
        blame(&old_tree, &new_tree, &old_config, &new_config, &symbol).map_err(input_error)?;
    match args.tree.format {
        Format::Text => {
            let heading = blame_heading(&symbol, &old_value, &new_value);
            let causes = blame_ranking(args, &arch, &symbol)
                .unwrap_or_else(|error| format!("(causes not ranked: {error})\n\n"));
            let rest = if args.full {
                render_blame(&blame)
            } else {
                "(both reason trees: --full)\n".to_string()
            };
            emit(&(heading + &causes + &rest))?;
        }
        Format::Json => emit_json(&BlameDocument::new(&blame, &arch, old_value, new_value))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn run_how(args: &HowArgs) -> Result<ExitCode, CliError> {
    let (text, config) = read_config_text(&args.evaluate.config)?;
    let (tree, arch) = load_for_evaluation(&args.evaluate, &config)?;
    let answer = how(&tree, &text, &arch, &args.goal).map_err(input_error)?;
    emit(&answer.render(&arch, args.limit))?;
    Ok(ExitCode::SUCCESS)
}
