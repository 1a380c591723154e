//! What `verdict history` reads: a stored selection (`EXPERIMENT`,
//! `EXPERIMENT:factor=level,...` or `factor=level,...`) with the metric it
//! follows (`--metric`, else the primary metric of the newest run of the
//! experiment), or a column of a CSV file with optional row labels. Must
//! not print or compute the history itself (`history` does).

use std::path::Path;

use verdict_model::Experiment;
use verdict_store::HistoryStore;

use crate::error::CommandError;

/// An experiment name and (factor, level) filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistorySpec {
    pub experiment: Option<String>,
    pub levels: Vec<(String, String)>,
}

/// `EXPERIMENT[:factor=level,...]` or `factor=level,...`.
pub fn parse_history_selection(spec: &str) -> Result<HistorySpec, CommandError> {
    let (experiment, filters) = match spec.split_once(':') {
        Some((experiment, filters)) => (Some(experiment), filters),
        None if spec.contains('=') => (None, spec),
        None => (Some(spec), ""),
    };
    let mut levels = Vec::new();
    for filter in filters.split(',').filter(|filter| !filter.is_empty()) {
        match filter.split_once('=') {
            Some((factor, level)) if !factor.trim().is_empty() => {
                levels.push((factor.trim().to_string(), level.trim().to_string()))
            }
            _ => {
                return Err(CommandError::Input(format!(
                    "selection `{spec}`: expected factor=level in `{filter}`"
                )));
            }
        }
    }
    let experiment = experiment.map(str::trim).filter(|name| !name.is_empty());
    if experiment.is_none() && levels.is_empty() {
        return Err(CommandError::Input(format!(
            "selection `{spec}`: expected EXPERIMENT, EXPERIMENT:factor=level,... or factor=level,..."
        )));
    }
    Ok(HistorySpec {
        experiment: experiment.map(str::to_string),
        levels,
    })
}

/// The metric (and its unit): `metric` or the primary metric of the
/// newest run of `experiment` (or of the database).
pub fn metric_of(
    store: &dyn HistoryStore,
    experiment: Option<&str>,
    metric: Option<&str>,
    spec: &str,
) -> Result<(String, String), CommandError> {
    let internal = |error: verdict_store::StoreError| CommandError::Internal(error.to_string());
    let newest = store
        .newest_run_named(experiment)
        .map_err(internal)?
        .ok_or_else(|| {
            CommandError::Input(format!(
                "`{spec}`: no stored run{}",
                experiment.map_or(String::new(), |name| format!(" of experiment `{name}`"))
            ))
        })?;
    let record = store.run(newest).map_err(internal)?;
    let parsed: Option<Experiment> = serde_json::from_str(&record.experiment_json).ok();
    let unit_of = |name: &str| {
        parsed
            .as_ref()
            .and_then(|experiment| experiment.metrics.iter().find(|m| m.name == name))
            .map(|m| m.unit.clone())
            .unwrap_or_default()
    };
    match metric {
        Some(name) => Ok((name.to_string(), unit_of(name))),
        None => {
            let experiment = parsed.ok_or_else(|| {
                CommandError::Input(format!(
                    "run {} has no readable experiment; name the metric with --metric",
                    record.id
                ))
            })?;
            let primary = experiment.primary_metric();
            Ok((primary.name.clone(), primary.unit.clone()))
        }
    }
}

/// The values of CSV column `column` of the file at `path`, and a label per
/// row: the text of column `labels`, else `row N`.
pub fn file_series(
    path: &Path,
    column: &str,
    labels: Option<&str>,
) -> Result<(Vec<f64>, Vec<String>), CommandError> {
    let in_file =
        |error: &dyn std::fmt::Display| CommandError::Input(format!("{}: {error}", path.display()));
    let text = std::fs::read_to_string(path)
        .map_err(|error| CommandError::Input(format!("read {}: {error}", path.display())))?;
    let values = verdict_parse::csv_column(&text, column).map_err(|error| in_file(&error))?;
    let labels = match labels {
        Some(labels) => {
            verdict_parse::csv_text_column(&text, labels).map_err(|error| in_file(&error))?
        }
        None => (1..=values.len()).map(|row| format!("row {row}")).collect(),
    };
    Ok((values, labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_name_an_experiment_levels_or_both() {
        assert_eq!(
            parse_history_selection("kill").unwrap(),
            HistorySpec {
                experiment: Some("kill".to_string()),
                levels: Vec::new()
            }
        );
        assert_eq!(
            parse_history_selection("kill:mode = fast").unwrap().levels,
            [("mode".to_string(), "fast".to_string())]
        );
        assert_eq!(
            parse_history_selection("mode=fast").unwrap().experiment,
            None
        );
        assert!(
            matches!(parse_history_selection("kill:fast"), Err(CommandError::Input(message)) if message.contains("expected factor=level in `fast`"))
        );
        assert!(parse_history_selection(" :").is_err());
    }

    #[test]
    fn a_csv_column_with_or_without_labels() {
        let directory =
            std::env::temp_dir().join(format!("verdict-history-source-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let path = directory.join("series.csv");
        std::fs::write(&path, "when,ms\nmon,10\ntue,12\n").unwrap();
        assert_eq!(
            file_series(&path, "ms", Some("when")).unwrap(),
            (vec![10.0, 12.0], vec!["mon".to_string(), "tue".to_string()])
        );
        assert_eq!(
            file_series(&path, "ms", None).unwrap().1,
            ["row 1", "row 2"]
        );
        let missing = file_series(&path, "nope", None).unwrap_err().to_string();
        assert!(
            missing.starts_with(&path.display().to_string()),
            "{missing}"
        );
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
