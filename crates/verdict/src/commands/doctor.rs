//! `verdict doctor`: measure this machine's noise, name its sources, and say
//! how many runs a given threshold needs here. Resolves the flags into
//! `DoctorOptions`, runs verdict-doctor, prints text or JSON.
//!
//! Must not: compute anything itself (verdict-doctor does) or change the
//! machine.

use crate::error::CliError;
use std::process::ExitCode;
use verdict_doctor::{DoctorOptions, ProbeLength};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DoctorFormat {
    Text,
    Json,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {
    /// Calibrate for about 3 seconds instead of 10.
    #[arg(long, conflicts_with = "long")]
    quick: bool,
    /// Calibrate for about a minute (drift, rare interference).
    #[arg(long)]
    long: bool,
    /// Smallest relative change to detect, as a fraction (0.05 = 5%).
    #[arg(long, default_value_t = 0.05)]
    threshold: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DoctorFormat::Text)]
    format: DoctorFormat,
}

fn resolve(args: &DoctorArgs) -> Result<DoctorOptions, CliError> {
    if !(args.threshold.is_finite() && args.threshold > 0.0 && args.threshold < 1.0) {
        return Err(CliError::input(format!(
            "--threshold must be a fraction between 0 and 1 (0.05 = 5%), got {}",
            args.threshold
        )));
    }
    let length = if args.quick {
        ProbeLength::Quick
    } else if args.long {
        ProbeLength::Long
    } else {
        ProbeLength::Default
    };
    Ok(DoctorOptions {
        length,
        threshold: args.threshold,
        ..DoctorOptions::default()
    })
}

pub(crate) fn run(args: &DoctorArgs) -> Result<ExitCode, CliError> {
    let options = resolve(args)?;
    let report = verdict_doctor::run_doctor(&options);
    match args.format {
        DoctorFormat::Text => print!("{}", report.render_text()),
        DoctorFormat::Json => {
            let json = serde_json::to_string_pretty(&report).map_err(|error| {
                CliError::internal(format!("failed to encode the report: {error}"))
            })?;
            println!("{json}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
