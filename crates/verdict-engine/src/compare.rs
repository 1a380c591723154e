//! The sides of `verdict compare` (and `verdict check`'s baseline): a side
//! is a file (read and parsed by `verdict_parse::import`) or a stored
//! selection (`RUN`, `RUN:factor=level,...`, `factor=level,...`) loaded
//! from the store; the two sides' series are paired by name, with the
//! direction and threshold each comparison uses. Also the kernel config
//! stored with the run a side came from (`compare --config-diff`). A pair
//! becomes the analysis's `ComparisonInput` and a side its `Source` here.
//!
//! Must not: print (notes for the user are returned), compute statistics
//! or render anything.

use std::collections::BTreeSet;
use std::path::Path;

use verdict_analysis::compare::ComparisonInput;
use verdict_analysis::sources::{Source, SourceKind};
use verdict_model::{Better, Experiment, MetricSpec, RunId};
use verdict_store::{RunRecord, Selection, Store};

use crate::error::CommandError;

/// Where a stored side's values came from.
#[derive(Debug, Clone, PartialEq)]
pub struct SideSpan {
    pub runs: Vec<RunId>,
    /// Start of the first and of the last selected iteration.
    pub first_ms: i64,
    pub last_ms: i64,
}

/// The runs and cells a stored selection's values came from.
#[derive(Debug, Clone)]
pub struct StoredSource {
    pub span: SideSpan,
    pub cells: usize,
}

/// Values of one named series (a benchmark and unit, a stressor, a cell).
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub unit: String,
    /// Which way is better, when the source says.
    pub direction: Option<Better>,
    /// The stored metric's threshold (stored selections only).
    pub threshold: Option<f64>,
    pub values: Vec<f64>,
    /// Where a stored selection's values came from (`None` for files).
    pub source: Option<StoredSource>,
}

/// A stored selection: an optional run and (factor, level) filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSelection {
    pub run: Option<RunId>,
    pub levels: Vec<(String, String)>,
}

/// `RUN`, `RUN:f=l,...` or `f=l,...`; `None` when `spec` has neither form.
pub fn parse_selection(spec: &str) -> Option<StoredSelection> {
    let (run, filters) = match spec.split_once(':') {
        Some((run, filters)) => (Some(run), filters),
        None if spec.chars().all(|c| c.is_ascii_digit()) && !spec.is_empty() => (Some(spec), ""),
        None => (None, spec),
    };
    let run = match run {
        Some(text) => Some(RunId(text.parse::<i64>().ok()?)),
        None => None,
    };
    let mut levels = Vec::new();
    for filter in filters.split(',').filter(|filter| !filter.is_empty()) {
        match filter.split_once('=') {
            Some((factor, level)) if !factor.is_empty() => {
                levels.push((factor.trim().to_string(), level.trim().to_string()))
            }
            _ => return None,
        }
    }
    if run.is_none() && levels.is_empty() {
        return None;
    }
    Some(StoredSelection { run, levels })
}

/// Whether `spec` names a stored selection rather than a file.
pub fn is_stored(spec: &str) -> bool {
    !Path::new(spec).is_file() && parse_selection(spec).is_some()
}

/// The run a stored selection names (`RUN` or `RUN:factor=level,...`).
pub fn named_run(spec: &str) -> Option<RunId> {
    if Path::new(spec).is_file() {
        return None;
    }
    parse_selection(spec)?.run
}

/// One side: the series of file `spec`, or the stored selection `spec`
/// (of `metric`, default the run's primary metric) when `store` is given.
pub fn load_side(
    spec: &str,
    column: Option<&str>,
    metric: Option<&str>,
    store: Option<&dyn Store>,
) -> Result<Vec<Series>, CommandError> {
    let path = Path::new(spec);
    if path.is_file() {
        return load_file(path, column);
    }
    if let Some(selection) = parse_selection(spec)
        && let Some(store) = store
    {
        return Ok(vec![load_selection(store, spec, selection, metric)?]);
    }
    Err(CommandError::input(format!(
        "`{spec}` is neither a file nor a stored selection (RUN, RUN:factor=level,..., or factor=level,...)"
    )))
}

/// The series of a file, in whatever format `verdict_parse::import`
/// recognises (`column`: the CSV column holding the values).
pub fn load_file(path: &Path, column: Option<&str>) -> Result<Vec<Series>, CommandError> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| CommandError::input(format!("read {}: {error}", path.display())))?;
    let shown = path.display().to_string();
    // Malformed lines as FILE:LINE (1-based), with the line quoted.
    let context = |error: verdict_parse::ParseError| match error {
        verdict_parse::ParseError::MalformedLine {
            format,
            line,
            message,
            text,
        } => CommandError::input(format!(
            "{shown}:{line}: {message} ({format} line `{text}`)"
        )),
        other => CommandError::input(format!("{shown}: {other}")),
    };
    let series = verdict_parse::import(&shown, &text, column).map_err(context)?;
    Ok(series
        .into_iter()
        .map(|series| Series {
            name: series.name,
            unit: series.unit,
            direction: series.direction,
            threshold: None,
            values: series.values,
            source: None,
        })
        .collect())
}

fn experiment_of(record: &RunRecord) -> Result<Experiment, CommandError> {
    serde_json::from_str(&record.experiment_json).map_err(|error| {
        CommandError::internal(format!(
            "run {}: stored experiment does not load: {error}",
            record.id
        ))
    })
}

fn levels_label(levels: &[(String, String)]) -> String {
    levels
        .iter()
        .map(|(factor, level)| format!("{factor}={level}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The stored values a selection names (one cell, or cells pooled across
/// runs when no run is given), of `metric` or the run's primary metric.
///
/// Without a run, only runs that have a cell with every listed level and
/// stored values of the metric are considered: the metric (without
/// `metric`, the primary metric of the newest run with such a cell), its
/// unit, direction and threshold come from the newest pooled run, and the
/// pooled runs must agree on its unit and direction.
pub fn load_selection(
    store: &dyn Store,
    spec: &str,
    StoredSelection { run, levels }: StoredSelection,
    metric: Option<&str>,
) -> Result<Series, CommandError> {
    let metric_name = match (run, metric) {
        (_, Some(name)) => name.to_string(),
        (Some(run), None) => {
            let record = store.run(run).map_err(CommandError::input)?;
            experiment_of(&record)?.primary_metric().name.clone()
        }
        (None, None) => {
            let record = newest_run_with_cell(store, &levels)?.ok_or_else(|| {
                CommandError::input(format!(
                    "`{spec}`: no stored run has a cell with these levels"
                ))
            })?;
            experiment_of(&record)?.primary_metric().name.clone()
        }
    };
    if let Some(run) = run {
        // A named run must declare the metric.
        let record = store.run(run).map_err(CommandError::input)?;
        if !experiment_of(&record)?
            .metrics
            .iter()
            .any(|declared| declared.name == metric_name)
        {
            return Err(CommandError::input(format!(
                "run {run} has no metric `{metric_name}`"
            )));
        }
    }
    let selected = store
        .select_samples(&Selection {
            run,
            levels: levels.clone(),
            metric: metric_name.clone(),
        })
        .map_err(CommandError::internal)?;
    if selected.is_empty() {
        return Err(CommandError::input(format!(
            "`{spec}` selects no stored samples of metric `{metric_name}`{}",
            if run.is_none() {
                " (no run has both a cell with these levels and values of that metric)"
            } else {
                ""
            }
        )));
    }
    // One series per distinct cell; a selection spanning cells is ambiguous.
    let mut cells: Vec<Vec<(String, String)>> =
        selected.iter().map(|value| value.levels.clone()).collect();
    cells.sort();
    cells.dedup();
    if cells.len() > 1 && run.is_some() {
        return Err(CommandError::input(format!(
            "`{spec}` matches {} cells; name one, e.g. {}:{}",
            cells.len(),
            run.map_or(String::new(), |run| run.to_string()),
            levels_label(&cells[0])
        )));
    }
    let pooled: BTreeSet<RunId> = selected.iter().map(|value| value.run).collect();
    let (metric, threshold) = pooled_definition(store, spec, &metric_name, &pooled, &levels)?;
    let first_ms = selected.iter().map(|value| value.started_at_ms).min();
    let last_ms = selected.iter().map(|value| value.started_at_ms).max();
    Ok(Series {
        name: if levels.is_empty() {
            metric.name.clone()
        } else {
            levels_label(&levels)
        },
        unit: metric.unit.clone(),
        direction: Some(metric.direction),
        threshold: Some(threshold),
        values: selected.iter().map(|value| value.value).collect(),
        source: Some(StoredSource {
            span: SideSpan {
                runs: pooled.into_iter().collect(),
                first_ms: first_ms.unwrap_or_default(),
                last_ms: last_ms.unwrap_or_default(),
            },
            cells: cells.len(),
        }),
    })
}

/// The metric's definition and threshold, from the newest pooled run that
/// declares it; every pooled run that declares it must agree on unit and
/// direction.
fn pooled_definition(
    store: &dyn Store,
    spec: &str,
    metric_name: &str,
    pooled: &BTreeSet<RunId>,
    levels: &[(String, String)],
) -> Result<(MetricSpec, f64), CommandError> {
    let mut definition: Option<(RunId, MetricSpec, f64)> = None;
    for &pooled_run in pooled.iter().rev() {
        let record = store.run(pooled_run).map_err(CommandError::internal)?;
        let experiment = experiment_of(&record)?;
        let Some(declared) = experiment
            .metrics
            .iter()
            .find(|declared| declared.name == metric_name)
        else {
            continue;
        };
        match &definition {
            None => {
                definition = Some((
                    pooled_run,
                    declared.clone(),
                    declared.threshold.unwrap_or(experiment.sampling.threshold),
                ));
            }
            Some((newest, spec_of_newest, _))
                if spec_of_newest.unit != declared.unit
                    || spec_of_newest.direction != declared.direction =>
            {
                return Err(CommandError::input(format!(
                    "`{spec}` pools runs that define metric `{metric_name}` differently \
                     (run {newest}: unit `{}`, {}; run {pooled_run}: unit `{}`, {}); \
                     name one run, e.g. {newest}:{}",
                    spec_of_newest.unit,
                    direction_words(spec_of_newest.direction),
                    declared.unit,
                    direction_words(declared.direction),
                    levels_label(levels)
                )));
            }
            Some(_) => {}
        }
    }
    let (_, metric, threshold) = definition.ok_or_else(|| {
        CommandError::input(format!(
            "`{spec}`: no run it selects declares metric `{metric_name}`"
        ))
    })?;
    Ok((metric, threshold))
}

fn direction_words(direction: Better) -> &'static str {
    match direction {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

/// The newest run with a cell that has every one of `levels`.
fn newest_run_with_cell(
    store: &dyn Store,
    levels: &[(String, String)],
) -> Result<Option<RunRecord>, CommandError> {
    let runs = store.list_runs().map_err(CommandError::internal)?;
    for summary in runs.iter().rev() {
        let cells = store.cells(summary.id).map_err(CommandError::internal)?;
        if cells
            .iter()
            .any(|(_, cell)| levels.iter().all(|level| cell.levels.contains(level)))
        {
            return store
                .run(summary.id)
                .map(Some)
                .map_err(CommandError::internal);
        }
    }
    Ok(None)
}

/// A baseline and a candidate series to compare, with the direction and
/// threshold the comparison uses.
#[derive(Debug, Clone)]
pub struct Pair {
    pub name: String,
    pub unit: String,
    pub direction: Better,
    pub threshold: f64,
    pub baseline: Series,
    pub candidate: Series,
}

impl Pair {
    /// The pair as the analysis's comparison takes it.
    pub fn input(&self) -> ComparisonInput {
        ComparisonInput {
            name: self.name.clone(),
            unit: self.unit.clone(),
            better: self.direction,
            threshold: self.threshold,
            power: verdict_stats::plan::DEFAULT_POWER,
            baseline: self.baseline.values.clone(),
            candidate: self.candidate.values.clone(),
        }
    }
}

/// Where one side's values came from (`side` is `baseline` or
/// `candidate`, `spec` the side as the user wrote it): a file, or the runs
/// and cells a stored selection pooled.
pub fn source(side: &str, spec: &str, series: &[Series]) -> Source {
    Source {
        side: side.to_string(),
        spec: spec.to_string(),
        kind: match stored_source(series) {
            Some(stored) => SourceKind::Selection {
                runs: stored.span.runs.iter().map(|run| run.0).collect(),
                cells: stored.cells,
                values: series[0].values.len(),
                first_at_ms: stored.span.first_ms,
                last_at_ms: stored.span.last_ms,
            },
            None => SourceKind::File,
        },
    }
}

/// The pairs of two sides, and notes for the user about series only one
/// side has.
#[derive(Debug, Clone)]
pub struct Pairing {
    pub pairs: Vec<Pair>,
    pub notes: Vec<String>,
}

/// Pair series by name; two single series pair whatever their names.
/// The direction is the series' own (either side's), else
/// `default_direction`; the threshold `threshold` when given, else the stored
/// metric's, else 2%.
pub fn pair(
    [baseline, candidate]: [&[Series]; 2],
    [base_spec, cand_spec]: [&str; 2],
    default_direction: Better,
    threshold: Option<f64>,
) -> Result<Pairing, CommandError> {
    let mut matched: Vec<(String, &Series, &Series)> = Vec::new();
    let mut notes = Vec::new();
    if let ([base], [cand]) = (baseline, candidate) {
        let name = if base.name == cand.name {
            base.name.clone()
        } else {
            format!("{} vs {}", cand.name, base.name)
        };
        matched.push((name, base, cand));
    } else {
        for base in baseline {
            if let Some(cand) = candidate.iter().find(|cand| cand.name == base.name) {
                matched.push((base.name.clone(), base, cand));
            } else {
                notes.push(format!("`{}` is only in {base_spec}", base.name));
            }
        }
        for cand in candidate
            .iter()
            .filter(|cand| !baseline.iter().any(|base| base.name == cand.name))
        {
            notes.push(format!("`{}` is only in {cand_spec}", cand.name));
        }
    }
    if matched.is_empty() {
        return Err(CommandError::input(format!(
            "{base_spec} and {cand_spec} have nothing in common to compare"
        )));
    }
    for (name, base, cand) in &matched {
        if base.unit != cand.unit {
            return Err(CommandError::input(format!(
                "`{name}`: units differ ({} vs {}); compare like with like",
                base.unit, cand.unit
            )));
        }
        for (series, spec) in [(base, base_spec), (cand, cand_spec)] {
            // One value a side is compared too: its row says why it cannot
            // be decided (no spread) and what would decide it.
            if series.values.is_empty() {
                return Err(CommandError::input(format!(
                    "`{name}` in {spec} has no values; a comparison needs at least 1 per side"
                )));
            }
        }
    }
    let pairs = matched
        .into_iter()
        .map(|(name, base, cand)| Pair {
            name,
            unit: base.unit.clone(),
            direction: base
                .direction
                .or(cand.direction)
                .unwrap_or(default_direction),
            threshold: threshold
                .or(base.threshold)
                .or(cand.threshold)
                .unwrap_or(0.02),
            baseline: base.clone(),
            candidate: cand.clone(),
        })
        .collect();
    Ok(Pairing { pairs, notes })
}

/// The stored side of a selection's first series, if it is stored.
pub fn stored_source(series: &[Series]) -> Option<&StoredSource> {
    series.first().and_then(|series| series.source.as_ref())
}

/// The kernel configs stored with the runs the two sides' values came
/// from (`compare --config-diff`): (where it came from, its text) each.
/// `store` is `None` when both sides are files.
pub fn stored_configs(
    store: Option<&dyn Store>,
    specs: [&str; 2],
    sides: [&[Series]; 2],
) -> Result<[(String, String); 2], CommandError> {
    let store = store.ok_or_else(|| {
        CommandError::input("--config-diff needs stored selections; both sides are files")
    })?;
    Ok([
        stored_config(store, specs[0], sides[0])?,
        stored_config(store, specs[1], sides[1])?,
    ])
}

/// The kernel config stored with the run a side's values came from (the
/// newest, when pooled): (where it came from, its text).
fn stored_config(
    store: &dyn Store,
    spec: &str,
    series: &[Series],
) -> Result<(String, String), CommandError> {
    let run = stored_source(series)
        .and_then(|source| source.span.runs.last().copied())
        .ok_or_else(|| {
            CommandError::input(format!(
                "--config-diff needs stored selections; `{spec}` is a file"
            ))
        })?;
    // A boot level's kernel (`RUN:kernel=patched` of a booted run): the
    // config its proven boots recorded (the guest's /proc/config.gz, or
    // the config of the kernel verdict built).
    if let Some(found) = boot_level_config(store, run, spec)? {
        return Ok(found);
    }
    // Stored once per distinct config under the hash the run's environment
    // records (schema v4); runs from before that carry it as an annotation.
    let record = store.run(run).map_err(CommandError::internal)?;
    if let Some(sha256) = &record.environment_start.kernel_config_sha256
        && let Some((source, text)) = store
            .kernel_config(sha256)
            .map_err(CommandError::internal)?
    {
        return Ok((format!("run {run} ({source})"), text));
    }
    let annotations = store.annotations(run).map_err(CommandError::internal)?;
    let config = annotations.get("kernel_config").ok_or_else(|| {
        CommandError::input(format!(
            "--config-diff: run {run} has no stored kernel config (none was readable when it ran)"
        ))
    })?;
    Ok((
        format!("run {run} ({})", config["source"].as_str().unwrap_or("?")),
        config["text"].as_str().unwrap_or_default().to_string(),
    ))
}

/// The config of the boots of `run` whose levels the selection `spec`
/// names (every named level that is a boot level is in the boot's key;
/// every boot when it names none): the guest's /proc/config.gz, or the
/// config of the kernel verdict built. `None` when no such boot recorded
/// one (a run that booted nothing); an error when those boots booted
/// kernels of different configs (name a boot level).
fn boot_level_config(
    store: &dyn Store,
    run: RunId,
    spec: &str,
) -> Result<Option<(String, String)>, CommandError> {
    let Some(selection) = parse_selection(spec) else {
        return Ok(None);
    };
    let boots = store.boots(run).map_err(CommandError::internal)?;
    let named = |boot: &verdict_store::BootRow| {
        let keys: Vec<&str> = boot.level_key.split(',').collect();
        selection
            .levels
            .iter()
            .filter(|(factor, _)| {
                keys.iter()
                    .any(|key| key.split_once('=').is_some_and(|(name, _)| name == factor))
            })
            .all(|(factor, level)| keys.contains(&format!("{factor}={level}").as_str()))
    };
    let mut found: Vec<(String, &verdict_store::BootRow)> = Vec::new();
    for boot in boots.iter().rev().filter(|boot| named(boot)) {
        let Some(environment) = &boot.environment else {
            continue;
        };
        let sha256 = environment.kernel_config_sha256.clone().or_else(|| {
            environment
                .kernel_build
                .as_ref()
                .map(|build| build.config_sha256.clone())
        });
        if let Some(sha256) = sha256
            && !found.iter().any(|(known, _)| *known == sha256)
        {
            found.push((sha256, boot));
        }
    }
    match found.as_slice() {
        [] if boots.is_empty() => Ok(None),
        // A run that booted its kernels: the controller's config is not
        // theirs.
        [] => Err(CommandError::input(format!(
            "--config-diff: the boots of `{spec}` (run {run}) recorded no kernel config (the guest had none and none was found beside its image)"
        ))),
        [(sha256, boot)] => Ok(store
            .kernel_config(sha256)
            .map_err(CommandError::internal)?
            .map(|(source, text)| {
                // The config is stored once per hash, labelled by the
                // first build that had it: a build of the same config
                // with a patch names its own key.
                let source = boot
                    .environment
                    .as_ref()
                    .and_then(|environment| environment.kernel_build.as_ref())
                    .map_or(source, |build| {
                        format!("kernel build {}", &build.key[..build.key.len().min(20)])
                    });
                (
                    format!("run {run} boot {} {} ({source})", boot.id, boot.level_key),
                    text,
                )
            })),
        several => Err(CommandError::input(format!(
            "--config-diff: the boots `{spec}` selects booted kernels of {} configs ({}); name one boot level (RUN:factor=level)",
            several.len(),
            several
                .iter()
                .map(|(_, boot)| boot.level_key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boot_levels_config_is_its_boots() {
        use verdict_store::{NewBoot, NewRun, SqliteStore};
        let directory = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
        let run = store
            .create_run(&NewRun {
                name: "k".into(),
                kind: verdict_model::RunKind::Run,
                placement: verdict_model::Placement::Vm,
                experiment_text: String::new(),
                experiment_sha256: String::new(),
                experiment_json: String::new(),
                tool_version: String::new(),
                seed: 1,
                host: "vm".into(),
                planned: 2,
                started_at_ms: 0,
                environment_start: verdict_model::Environment::default(),
                command_line: Vec::new(),
                bisect: None,
            })
            .unwrap();
        for (slot, (level, config)) in [
            ("patch=without", "CONFIG_A=y\n"),
            ("patch=with", "CONFIG_A=m\n"),
        ]
        .into_iter()
        .enumerate()
        {
            let id = store
                .create_boot(
                    run,
                    &NewBoot {
                        slot: slot as u32,
                        attempt: 0,
                        level_key: level.into(),
                        first_sequence: slot as u32,
                        kernel: "bzImage".into(),
                        command_line: String::new(),
                        started_at_ms: 0,
                    },
                )
                .unwrap();
            let sha256 = format!("{slot:064}");
            store
                .put_kernel_config(&sha256, "kernel build", config)
                .unwrap();
            let mut row = store.boots(run).unwrap()[id as usize].clone();
            row.status = verdict_model::BootStatus::Complete;
            // The guest had no /proc/config.gz: the build's config.
            row.environment = Some(verdict_model::Environment {
                kernel_build: Some(verdict_model::KernelBuild {
                    source: "linux".into(),
                    commit: "c".repeat(40),
                    tree_id: "t".into(),
                    tarball_sha256: None,
                    patches: Vec::new(),
                    config_recipe: vec!["tinyconfig".into()],
                    config_sha256: sha256,
                    compiler: "gcc".into(),
                    make: Vec::new(),
                    release: "6.1".into(),
                    version: None,
                    key: "k".repeat(64),
                    built_at_ms: 0,
                    build_seconds: 1.0,
                }),
                ..verdict_model::Environment::default()
            });
            store.update_boot(run, &row).unwrap();
        }
        let with = boot_level_config(&store, run, &format!("{run}:patch=with"))
            .unwrap()
            .unwrap();
        assert_eq!(with.1, "CONFIG_A=m\n");
        assert!(with.0.contains("patch=with"), "{}", with.0);
        // Named by its own build, not by the first build of its config.
        assert!(
            with.0
                .ends_with(&format!("(kernel build {})", "k".repeat(20))),
            "{}",
            with.0
        );
        let without = boot_level_config(&store, run, &format!("{run}:patch=without"))
            .unwrap()
            .unwrap();
        assert_eq!(without.1, "CONFIG_A=y\n");
        // No boot level named: the boots booted two configs.
        let error = boot_level_config(&store, run, &format!("{run}"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("name one boot level"), "{error}");
        assert!(
            boot_level_config(&store, run, "results.csv")
                .unwrap()
                .is_none()
        );
    }

    fn series(name: &str, unit: &str, values: &[f64]) -> Series {
        Series {
            name: name.to_string(),
            unit: unit.to_string(),
            direction: None,
            threshold: None,
            values: values.to_vec(),
            source: None,
        }
    }

    #[test]
    fn selections_are_a_run_a_cell_of_a_run_or_levels() {
        assert_eq!(
            parse_selection("12"),
            Some(StoredSelection {
                run: Some(RunId(12)),
                levels: Vec::new()
            })
        );
        assert_eq!(
            parse_selection("3:kernel=6.1, mode = full"),
            Some(StoredSelection {
                run: Some(RunId(3)),
                levels: vec![
                    ("kernel".to_string(), "6.1".to_string()),
                    ("mode".to_string(), "full".to_string())
                ]
            })
        );
        assert_eq!(
            parse_selection("kernel=6.1").map(|selection| selection.run),
            Some(None)
        );
        assert_eq!(parse_selection("results.csv"), None);
        assert_eq!(parse_selection("x:kernel=6.1"), None);
        assert_eq!(parse_selection("3:kernel"), None);
        assert_eq!(parse_selection(""), None);
    }

    #[test]
    fn single_series_pair_whatever_their_names_and_others_by_name() {
        let single = pair(
            [
                &[series("a", "ns", &[1.0, 2.0])],
                &[series("b", "ns", &[1.0, 2.0])],
            ],
            ["old", "new"],
            Better::Lower,
            None,
        )
        .unwrap();
        assert_eq!(single.pairs[0].name, "b vs a");
        assert_eq!(single.pairs[0].threshold, 0.02);
        let named = pair(
            [
                &[series("a", "ns", &[1.0, 2.0]), series("c", "ns", &[1.0])],
                &[series("a", "ns", &[3.0, 4.0]), series("d", "ns", &[1.0])],
            ],
            ["old", "new"],
            Better::Higher,
            Some(0.05),
        )
        .unwrap();
        assert_eq!(named.pairs.len(), 1);
        assert_eq!(named.pairs[0].direction, Better::Higher);
        assert_eq!(named.pairs[0].threshold, 0.05);
        assert_eq!(
            named.notes,
            [
                "`c` is only in old".to_string(),
                "`d` is only in new".to_string()
            ]
        );
    }

    #[test]
    fn pairs_need_one_unit_and_a_value_a_side() {
        let units = pair(
            [
                &[series("a", "ns", &[1.0, 2.0])],
                &[series("a", "ms", &[1.0, 2.0])],
            ],
            ["old", "new"],
            Better::Lower,
            None,
        );
        assert!(
            matches!(&units, Err(CommandError::Input(message)) if message.contains("units differ")),
            "{units:?}"
        );
        // One value a side is a pair (its row says why it cannot be
        // decided); none is an error.
        let single = pair(
            [
                &[series("a", "ns", &[1.0, 2.0])],
                &[series("a", "ns", &[1.0])],
            ],
            ["old", "new"],
            Better::Lower,
            None,
        );
        assert!(single.is_ok(), "{single:?}");
        let empty = pair(
            [&[series("a", "ns", &[1.0, 2.0])], &[series("a", "ns", &[])]],
            ["old", "new"],
            Better::Lower,
            None,
        );
        assert!(
            matches!(&empty, Err(CommandError::Input(message)) if message.contains("in new has no values")),
            "{empty:?}"
        );
        let disjoint = pair(
            [
                &[
                    series("a", "ns", &[1.0, 2.0]),
                    series("b", "ns", &[1.0, 2.0]),
                ],
                &[
                    series("c", "ns", &[1.0, 2.0]),
                    series("d", "ns", &[1.0, 2.0]),
                ],
            ],
            ["old", "new"],
            Better::Lower,
            None,
        );
        assert!(
            matches!(&disjoint, Err(CommandError::Input(message)) if message.contains("nothing in common")),
            "{disjoint:?}"
        );
    }
}
