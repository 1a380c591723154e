//! Calibration on the user's workload (`verdict doctor --experiment`): the
//! experiment's first cell run a number of times through the same
//! invocation the engine's loop runs (command, environment, working
//! directory, timeout, leftovers), each iteration timed, with the steal
//! ticks the target's /proc/stat shows during it. Nothing is stored.
//!
//! Must not: store samples, run setup or teardown hooks, or print (notes go
//! to the `Observer`).

use verdict_doctor::noise::Iteration;
use verdict_exec::{Cancel, Status, Target};
use verdict_model::Experiment;

use crate::runner::{EngineError, Observer, workload_invocation};

/// What a calibration measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The experiment's name and the cell's label.
    pub name: String,
    /// One per successful iteration; failed ones are not counted.
    pub iterations: Vec<Iteration>,
}

/// Runs `experiment`'s first cell `count` times on `target`.
pub fn calibrate(
    target: &dyn Target,
    experiment: &Experiment,
    count: usize,
    cancel: &Cancel,
    observer: &mut dyn Observer,
) -> Result<Calibration, EngineError> {
    let cell = experiment
        .cells()
        .into_iter()
        .next()
        .ok_or_else(|| EngineError::NoCells {
            experiment: experiment.name.clone(),
        })?;
    let invocation = workload_invocation(experiment, experiment.workdir.clone(), &cell);
    let steal = || {
        target
            .read_file(std::path::Path::new("/proc/stat"))
            .ok()
            .and_then(|bytes| verdict_doctor::parse::stat::parse(&String::from_utf8_lossy(&bytes)))
            .map_or(0, |stat| stat.total.steal)
    };
    observer.note(&format!(
        "running `{}` {count} times ({})",
        invocation.program,
        cell.label()
    ));
    let mut iterations = Vec::with_capacity(count);
    for _ in 0..count {
        let before = steal();
        let outcome = target
            .run(&invocation, cancel)
            .map_err(|source| EngineError::Spawn {
                command: invocation.program.to_string(),
                source,
            })?;
        if !matches!(outcome.status, Status::Exited(code) if experiment.success_codes.contains(&code))
        {
            observer.note(&format!(
                "workload iteration failed ({}); not counted",
                outcome.status
            ));
            continue;
        }
        iterations.push(Iteration {
            seconds: outcome.wall.as_secs_f64(),
            steal_ticks: steal().saturating_sub(before),
            involuntary_switches: 0,
        });
    }
    Ok(Calibration {
        name: format!("{} ({})", experiment.name, cell.label()),
        iterations,
    })
}
