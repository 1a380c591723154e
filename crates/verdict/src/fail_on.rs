//! `--fail-on`: the one exit policy for a set of typed verdicts, shared by
//! `report`, `compare`, `run`/`ab` (through their report options) and the
//! multi-host summary. It maps verdicts to an exit code and nothing else:
//! it must not compute, render or read verdicts from strings.

use std::process::ExitCode;
use verdict_model::ExitClass;
use verdict_stats::verdict::Verdict;

/// Which verdicts make the command exit 1 (the spellings on the command
/// line are the clap value names: `regression`, `change`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FailOn {
    // Plain comments, not doc comments: clap would list doc comments in
    // `--help`, which stays as it was.
    // A regression.
    Regression,
    // A regression or an improvement.
    Change,
}

impl FailOn {
    /// Whether one verdict meets the condition.
    pub(crate) const fn is_met_by(self, verdict: Verdict) -> bool {
        match self {
            FailOn::Regression => matches!(verdict, Verdict::Regression),
            FailOn::Change => verdict.is_change(),
        }
    }
}

/// Exit code for `--fail-on`: 1 when some verdict meets the condition,
/// else 0 (also when no condition was given).
pub(crate) fn exit_code(
    condition: Option<FailOn>,
    verdicts: impl IntoIterator<Item = Verdict>,
) -> ExitCode {
    let failed = condition.is_some_and(|condition| {
        verdicts
            .into_iter()
            .any(|verdict| condition.is_met_by(verdict))
    });
    ExitCode::from(if failed {
        ExitClass::Finding
    } else {
        ExitClass::Success
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_fails_only_on_regressions_and_change_on_both_directions() {
        let all = [
            Verdict::Regression,
            Verdict::Improvement,
            Verdict::Equivalent,
            Verdict::Inconclusive,
        ];
        let met = |condition: FailOn| -> Vec<Verdict> {
            all.into_iter()
                .filter(|verdict| condition.is_met_by(*verdict))
                .collect()
        };
        assert_eq!(met(FailOn::Regression), [Verdict::Regression]);
        assert_eq!(
            met(FailOn::Change),
            [Verdict::Regression, Verdict::Improvement]
        );
        assert_eq!(
            exit_code(Some(FailOn::Change), [Verdict::Improvement]),
            ExitCode::from(ExitClass::Finding)
        );
        assert_eq!(
            exit_code(Some(FailOn::Regression), [Verdict::Improvement]),
            ExitCode::SUCCESS
        );
        assert_eq!(exit_code(None, all), ExitCode::SUCCESS);
    }
}
