//! `verdict man`: prints the roff man page verdict(1) that clap generates
//! (clap_mangen); `verdict man --dir DIR` writes one page per command and
//! subcommand (verdict.1, verdict-run.1, verdict-bisect-start.1, ...) into
//! DIR and prints their paths. Must not: write anywhere but DIR.

use crate::error::CliError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// Write a page per command and subcommand into DIR (created if
    /// missing) instead of printing verdict(1).
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

/// Renders the pages of `command` (the whole verdict command line).
pub(crate) fn run(args: &ManArgs, command: clap::Command) -> Result<ExitCode, CliError> {
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let Some(directory) = &args.dir else {
        out!("{}", render(command)?);
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(directory)
        .map_err(|error| CliError::input(format!("create {}: {error}", directory.display())))?;
    for path in write_pages(command, directory)? {
        outln!("{}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the page of `command` and of each of its visible subcommands,
/// depth first, parents before children; returns the paths written.
fn write_pages(command: clap::Command, directory: &Path) -> Result<Vec<PathBuf>, CliError> {
    let path = directory.join(clap_mangen::Man::new(command.clone()).get_filename());
    std::fs::write(&path, render(command.clone())?)
        .map_err(|error| CliError::input(format!("write {}: {error}", path.display())))?;
    let mut written = vec![path];
    for subcommand in command
        .get_subcommands()
        .filter(|subcommand| !subcommand.is_hide_set())
    {
        written.extend(write_pages(subcommand.clone(), directory)?);
    }
    Ok(written)
}

/// The roff page of `command`, in ASCII: a character beyond it (the help's
/// dashes and quotes) becomes groff's `\[uXXXX]`, so that `groff -man`
/// renders it without `preconv` (as `man` runs it) and without warnings.
fn render(command: clap::Command) -> Result<String, CliError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .map_err(|error| CliError::internal(format!("render the man page: {error}")))?;
    let page = String::from_utf8(page)
        .map_err(|error| CliError::internal(format!("render the man page: {error}")))?;
    let mut ascii = String::with_capacity(page.len());
    for character in page.chars() {
        if character.is_ascii() {
            ascii.push(character);
        } else {
            ascii.push_str(&format!("\\[u{:04X}]", u32::from(character)));
        }
    }
    Ok(ascii)
}
