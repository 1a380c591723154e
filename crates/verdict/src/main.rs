//! The `verdict` binary: parse the command line, dispatch to
//! `commands/<name>.rs`, map errors to exit codes. Nothing else lives here.

#[macro_use]
mod output;
mod bisect_render;
mod commands;
mod common;
mod credentials;
mod error;
mod fail_on;
mod hosts;
mod launch;
mod progress;
mod remote_build;
mod run_report;
mod stored_run;
mod target;
mod warnings;

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "verdict",
    version = common::VERSION,
    about = "Runs performance experiments and tells the truth about them"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run an experiment file (or resume an interrupted run).
    Run(commands::run::RunArgs),
    /// Quick A/B: interleaved runs of two or more commands, the first the baseline.
    Ab(commands::ab::AbArgs),
    /// List stored runs.
    Runs(commands::runs::RunsArgs),
    /// Report a stored run (default: the latest).
    Report(commands::report::ReportArgs),
    /// Compare two stored selections or files.
    Compare(commands::compare::CompareArgs),
    /// Where the time went: the system counters and profile symbols that changed, per comparison.
    Explain(commands::explain::ExplainArgs),
    /// Every raw sample of a stored run, with its cell, times, metrics and environment (CSV or JSON).
    Export(commands::export::ExportArgs),
    /// Runs per cell needed to detect a change.
    Plan(commands::plan::PlanArgs),
    /// Monte-Carlo validation of decision procedures.
    Simulate(commands::simulate::SimulateArgs),
    /// Measure this machine's noise and name its sources.
    Doctor(commands::doctor::DoctorArgs),
    /// Find the commit that changed performance.
    Bisect(Box<commands::bisect::BisectArgs>),
    /// Run an experiment on the current tree and compare with a baseline (for `git bisect run`).
    Check(commands::check::CheckArgs),
    /// Kernel config diffs and reason chains.
    Kconfig(commands::kconfig::KconfigArgs),
    /// Copy runs from the --db store to another store (a SQLite path or a PostgreSQL URL).
    Push(commands::copy::PushArgs),
    /// Copy runs from another store into the --db store.
    Pull(commands::copy::PullArgs),
    /// Measure a detached run's blocks (`verdict run --detach`) with other controllers, one per target host at a time.
    Work(commands::work::WorkArgs),
    /// Change points in the series of stored runs (or a CSV column): when, and by how much.
    History(commands::history::HistoryArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(commands::completions::CompletionsArgs),
    /// Print the man page verdict(1), or write a page per subcommand with --dir.
    Man(commands::man::ManArgs),
    /// The far side of an ssh target (started by verdict over ssh).
    #[command(hide = true)]
    Agent(commands::agent::AgentArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    credentials::protect();
    let result = match &cli.command {
        Command::Run(args) => commands::run::run(args),
        Command::Ab(args) => commands::ab::run(args),
        Command::Runs(args) => commands::runs::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::Explain(args) => commands::explain::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::Plan(args) => commands::plan::run(args),
        Command::Simulate(args) => commands::simulate::run(args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Bisect(args) => commands::bisect::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Kconfig(args) => commands::kconfig::run(args),
        Command::History(args) => commands::history::run(args),
        Command::Push(args) => commands::copy::push(args),
        Command::Work(args) => commands::work::run(args),
        Command::Pull(args) => commands::copy::pull(args),
        Command::Completions(args) => commands::completions::run(args, Cli::command()),
        Command::Man(args) => commands::man::run(args, Cli::command()),
        Command::Agent(args) => commands::agent::run(args),
    };
    let result = result.and_then(|code| match output::failure() {
        Some(failure) => Err(error::CliError::internal(failure)),
        None => Ok(code),
    });
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("verdict: error: {error}");
            ExitCode::from(error.exit_class())
        }
    }
}
