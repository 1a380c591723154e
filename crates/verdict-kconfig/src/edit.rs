//! Editing `.config` text for `verdict kconfig set` and `how`: the line an
//! assignment writes (checked against the symbol's type), replacing or
//! appending a symbol's line, choosing a choice member, reading a goal,
//! and which symbols two written configs disagree on. Text in, text out;
//! never reads a file or prints.

use crate::{ConfigDiff, DotConfig, Evaluation, KconfigError, SymbolType, Tristate};

/// `CONFIG_NAME` or `NAME` as the symbol's name.
pub fn symbol_name(raw: &str) -> String {
    raw.strip_prefix("CONFIG_").unwrap_or(raw).to_string()
}

/// Replaces (or appends) the line of `name` in config text.
pub fn edit_config(text: &str, name: &str, line: &str) -> String {
    let set_prefix = format!("CONFIG_{name}=");
    let unset = format!("# CONFIG_{name} is not set");
    let mut found = false;
    let mut lines: Vec<String> = text
        .lines()
        .map(|current| {
            if current.starts_with(&set_prefix) || current == unset {
                found = true;
                line.to_string()
            } else {
                current.to_string()
            }
        })
        .collect();
    if !found {
        lines.push(line.to_string());
    }
    let mut result = lines.join("\n");
    result.push('\n');
    result
}

/// Why a value cannot be given to a symbol: the symbol's type does not
/// take it. Messages name the symbol and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("{name} is a bool: expected y or n, found `{value}`")]
    NotBool { name: String, value: String },
    #[error("{name} is a tristate: expected y, m or n, found `{value}`")]
    NotTristate { name: String, value: String },
    #[error("{name} has no type in this tree")]
    Untyped { name: String },
    /// A goal of `how` that is not a tristate letter.
    #[error("read goal {name}={value}: `how` answers for y, m or n")]
    GoalLetter { name: String, value: String },
    /// A goal the symbol's type cannot take (`m` for a bool, any letter
    /// for a string or number).
    #[error("read goal {name}={value}: {name} is not a bool or tristate that can be {value}")]
    GoalType { name: String, value: String },
}

/// The `.config` line for an assignment, checked against the symbol's type.
pub fn assignment_line(
    evaluation: &Evaluation,
    name: &str,
    value: &str,
) -> Result<String, ValueError> {
    let owned = || (name.to_string(), value.to_string());
    let tristate = |letter: &str| match letter {
        "n" => Some(Tristate::No),
        "m" => Some(Tristate::Module),
        "y" => Some(Tristate::Yes),
        _ => None,
    };
    match evaluation.symbol_type(name) {
        Some(SymbolType::Bool) => match tristate(value) {
            Some(Tristate::No) => Ok(format!("# CONFIG_{name} is not set")),
            Some(Tristate::Yes) => Ok(format!("CONFIG_{name}=y")),
            _ => {
                let (name, value) = owned();
                Err(ValueError::NotBool { name, value })
            }
        },
        Some(SymbolType::Tristate) => match tristate(value) {
            Some(Tristate::No) => Ok(format!("# CONFIG_{name} is not set")),
            Some(other) => Ok(format!("CONFIG_{name}={}", other.letter())),
            None => {
                let (name, value) = owned();
                Err(ValueError::NotTristate { name, value })
            }
        },
        Some(SymbolType::String) => {
            let inner = value
                .strip_prefix('"')
                .and_then(|rest| rest.strip_suffix('"'))
                .map_or_else(
                    || value.replace('\\', "\\\\").replace('"', "\\\""),
                    str::to_string,
                );
            Ok(format!("CONFIG_{name}=\"{inner}\""))
        }
        Some(SymbolType::Int | SymbolType::Hex) => Ok(format!("CONFIG_{name}={value}")),
        _ => Err(ValueError::Untyped {
            name: name.to_string(),
        }),
    }
}

/// Applies `name=value` (a bool/tristate letter) to config text; choosing a
/// choice member un-chooses the others.
pub fn apply_edit(evaluation: &Evaluation, text: &str, name: &str, value: Tristate) -> String {
    let line = match value {
        Tristate::No => format!("# CONFIG_{name} is not set"),
        other => format!("CONFIG_{name}={}", other.letter()),
    };
    let mut edited = edit_config(text, name, &line);
    if value == Tristate::Yes {
        for sibling in evaluation.choice_siblings(name) {
            edited = edit_config(&edited, &sibling, &format!("# CONFIG_{sibling} is not set"));
        }
    }
    edited
}

/// Symbols whose written value differs between two olddefconfig outputs.
pub fn changed_symbols(before: &str, after: &str) -> Result<Vec<String>, KconfigError> {
    let old = DotConfig::parse(before, "before")?;
    let new = DotConfig::parse(after, "after")?;
    let diff = ConfigDiff::between(&old, &new);
    Ok(diff
        .render_text()
        .lines()
        .filter_map(|line| line.get(1..)?.split_whitespace().next().map(str::to_string))
        .collect())
}

/// The goal's tristate for `how NAME=VALUE`, checked against the symbol's
/// type; the error reads after "failed to".
pub fn goal_value(
    evaluation: &Evaluation,
    name: &str,
    value: &str,
) -> Result<Tristate, ValueError> {
    let wanted = match value {
        "y" => Tristate::Yes,
        "m" => Tristate::Module,
        "n" => Tristate::No,
        other => {
            return Err(ValueError::GoalLetter {
                name: name.to_string(),
                value: other.to_string(),
            });
        }
    };
    match evaluation.symbol_type(name) {
        Some(SymbolType::Tristate) => Ok(wanted),
        Some(SymbolType::Bool) if wanted != Tristate::Module => Ok(wanted),
        _ => Err(ValueError::GoalType {
            name: name.to_string(),
            value: value.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_replaced_where_it_is_or_appended() {
        let text = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=m\n";
        assert_eq!(
            edit_config(text, "B", "CONFIG_B=y"),
            "CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=m\n"
        );
        assert_eq!(
            edit_config(text, "A", "# CONFIG_A is not set"),
            "# CONFIG_A is not set\n# CONFIG_B is not set\nCONFIG_C=m\n"
        );
        assert_eq!(
            edit_config(text, "D", "CONFIG_D=1"),
            "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=m\nCONFIG_D=1\n"
        );
        // CONFIG_AB is another symbol than CONFIG_A.
        assert_eq!(
            edit_config("CONFIG_AB=y\n", "A", "CONFIG_A=y"),
            "CONFIG_AB=y\nCONFIG_A=y\n"
        );
    }

    #[test]
    fn names_lose_their_prefix_and_changed_symbols_are_listed() {
        assert_eq!(symbol_name("CONFIG_PREEMPT"), "PREEMPT");
        assert_eq!(symbol_name("PREEMPT"), "PREEMPT");
        assert_eq!(
            changed_symbols(
                "CONFIG_A=y\nCONFIG_B=y\n",
                "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n"
            )
            .unwrap(),
            ["B", "C"]
        );
    }
}
