//! What exactly ran (the verdict-analysis `Provenance` model, re-exported
//! here) as the facts every form shows: a machine's CPU with its identity
//! and checked features, CPUs and SMT, kernel with the compiler that built
//! it, config, command line, and the build of the measured program.
//! Renders only; must not compute.

pub use verdict_analysis::provenance::*;

/// One machine's facts as `(name, value)` lines, only those recorded.
pub fn facts(machine: &MachineProvenance) -> Vec<(String, String)> {
    let cpus = [
        machine.cpus.clone(),
        machine.smt.as_ref().map(|smt| format!("smt {smt}")),
        machine
            .virtualization
            .as_ref()
            .map(|name| format!("virtualization {name}")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    let mut facts: Vec<(&str, Option<String>)> = vec![
        ("cpu", machine.cpu_line()),
        (
            "features",
            (!machine.cpu_features.is_empty())
                .then(|| verdict_model::provenance::features_line(&machine.cpu_features)),
        ),
        ("cpus", (!cpus.is_empty()).then(|| cpus.join(", "))),
        ("kernel", machine.kernel_line()),
        ("config", machine.config_line()),
        ("cmdline", machine.kernel_cmdline.clone()),
    ];
    if let Some(build) = &machine.build {
        facts.push(("built", build.commit.clone()));
        facts.push(("build", build.command.clone()));
        facts.push(("compiler", build.compiler.clone()));
        if !build.patches.is_empty() {
            facts.push(("patches", Some(build.patches.join(", "))));
        }
        facts.push((
            "build config",
            build
                .config_sha256
                .as_ref()
                .map(|hash| format!("sha256 {}", &hash[..hash.len().min(16)])),
        ));
    }
    facts
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_string(), value?)))
        .collect()
}
