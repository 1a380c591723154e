//! What-if and how-to for `verdict kconfig set` and `how`: applying
//! assignments and reporting every symbol `make olddefconfig` then changes
//! with its reason, and searching the smallest sets of user-settable
//! changes that give a symbol a value, each checked by the evaluator.
//! Works on a parsed tree and config text; never reads a file or prints.

use crate::{
    ConfigDiff, DotConfig, Evaluation, Kconfig, KconfigError, SymbolType, Tristate, apply_edit,
    assignment_line, changed_symbols, edit_config, goal_value, similar_symbols, symbol_name,
};
use std::collections::HashMap;

/// "no `config X` in the tree; did you mean Y?" for a name the tree does not
/// define (up to three suggestions by edit distance).
pub fn unknown_symbol(tree: &Kconfig, symbol: &str, arch: &str) -> KconfigError {
    let suggestions = similar_symbols(tree, symbol);
    let hint = match suggestions.as_slice() {
        [] => String::new(),
        [only] => format!("; did you mean {only}?"),
        several => format!("; did you mean one of {}?", several.join(", ")),
    };
    KconfigError::NotInTree {
        symbol: symbol.to_string(),
        arch: arch.to_string(),
        hint,
    }
}

/// What `set` computes: the report (every changed symbol with its reason,
/// and a note for each assignment that did not take effect) and the config
/// `make olddefconfig` writes after the edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetOutcome {
    pub report: String,
    pub config: String,
}

/// Applies `SYMBOL=VALUE` assignments to config text (choosing a choice
/// member un-chooses the others) and evaluates before and after.
pub fn set_symbols(
    tree: &Kconfig,
    text: &str,
    arch: &str,
    assignments: &[String],
) -> Result<SetOutcome, KconfigError> {
    let config = DotConfig::parse(text, "config")?;
    let mut before = Evaluation::new(tree, text);
    let before_text = before.write_config();
    let mut edited = text.to_string();
    let mut requested = Vec::new();
    for assignment in assignments {
        let Some((raw_name, value)) = assignment.split_once('=') else {
            return Err(KconfigError::Request {
                message: format!("read assignment `{assignment}`: expected SYMBOL=VALUE"),
            });
        };
        let name = symbol_name(raw_name.trim());
        if !before.is_defined(&name) {
            return Err(unknown_symbol(tree, &name, arch));
        }
        let line = assignment_line(&before, &name, value.trim()).map_err(|error| {
            KconfigError::Request {
                message: format!("set {error}"),
            }
        })?;
        edited = edit_config(&edited, &name, &line);
        if value.trim() == "y" {
            // Choosing a choice member: the others are no longer chosen.
            for sibling in before.choice_siblings(&name) {
                if config.get(&sibling) == Some("y") {
                    edited =
                        edit_config(&edited, &sibling, &format!("# CONFIG_{sibling} is not set"));
                }
            }
        }
        requested.push((name, value.trim().to_string()));
    }
    let mut after = Evaluation::new(tree, &edited);
    let after_text = after.write_config();
    let old = DotConfig::parse(&before_text, "before")?;
    let new = DotConfig::parse(&after_text, "after")?;
    let diff = ConfigDiff::between(&old, &new);
    let mut report = String::new();
    for (name, value) in &requested {
        let result = after.value(name).unwrap_or_default();
        let wanted = value.trim_matches('"');
        if result != wanted {
            let reason = after.reason(name).unwrap_or_default();
            report.push_str(&format!(
                "note: {name}={value} did not take effect: {name} is {reason}\n"
            ));
        }
    }
    let (removed, changed, added) = diff.counts();
    report.push_str(&format!(
        "{} symbol(s) change ({changed} changed, {added} added, {removed} removed), as make olddefconfig computes it after the edit:\n",
        removed + changed + added
    ));
    for line in diff.render_text().lines() {
        let name = line[1..].split_whitespace().next().unwrap_or_default();
        let reason = if requested
            .iter()
            .any(|(requested_name, _)| requested_name == name)
        {
            format!(
                "set by this edit ({})",
                after.reason(name).unwrap_or_default()
            )
        } else {
            after
                .reason(name)
                .unwrap_or_else(|| "no longer defined".to_string())
        };
        report.push_str(&format!("{line}\n    because {reason}\n"));
    }
    Ok(SetOutcome {
        report,
        config: after_text,
    })
}

/// A way to a goal: the edits, and the other symbols it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Way {
    pub edits: Vec<(String, Tristate)>,
    pub others: Vec<String>,
}

/// What `how` found for `SYMBOL=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HowAnswer {
    pub name: String,
    pub wanted: Tristate,
    /// The symbol's value now.
    pub current: String,
    /// Why it has that value.
    pub reason: String,
    /// Ways that give the goal, fewest edits then fewest other changes
    /// first; empty when the goal already holds or none was found.
    pub ways: Vec<Way>,
}

impl HowAnswer {
    /// The goal holds without any change.
    pub fn already(&self) -> bool {
        self.current == self.wanted.letter()
    }

    /// The answer as `verdict kconfig how` prints it, at most `limit` ways.
    pub fn render(&self, arch: &str, limit: usize) -> String {
        let Self {
            name,
            current,
            reason,
            ways,
            ..
        } = self;
        if self.already() {
            return format!("{name} is already {current}: {reason}\n");
        }
        if ways.is_empty() {
            return format!(
                "impossible on this arch ({arch}) with one or two changes of user-settable symbols: {name} stays {current} because {reason}\n"
            );
        }
        let mut report = format!(
            "{name}={} (now {current}): {} way(s), each checked by the evaluator, fewest other changes first:\n",
            self.wanted.letter(),
            ways.len()
        );
        for (number, way) in ways.iter().take(limit).enumerate() {
            let edits_text: Vec<String> = way
                .edits
                .iter()
                .map(|(candidate, value)| format!("{candidate}={}", value.letter()))
                .collect();
            let preview: Vec<&str> = way.others.iter().take(8).map(String::as_str).collect();
            let more = if way.others.len() > preview.len() {
                format!(", ... {} more", way.others.len() - preview.len())
            } else {
                String::new()
            };
            report.push_str(&format!(
                "  {}. {}  (changes {} other symbol(s){}{}{})\n",
                number + 1,
                edits_text.join(" "),
                way.others.len(),
                if preview.is_empty() { "" } else { ": " },
                preview.join(", "),
                more
            ));
        }
        report
    }
}

/// Searches the ways to `goal` (`SYMBOL=VALUE`, y, m or n): every single
/// change of the goal or a user-settable bool/tristate that influences it
/// (nearest first), and when none works, pairs of the nearest 60 changes.
/// A way counts only when the goal and every edit hold after evaluation.
pub fn how(tree: &Kconfig, text: &str, arch: &str, goal: &str) -> Result<HowAnswer, KconfigError> {
    let Some((raw_name, raw_value)) = goal.split_once('=') else {
        return Err(KconfigError::Request {
            message: format!("read goal `{goal}`: expected SYMBOL=VALUE"),
        });
    };
    let name = symbol_name(raw_name.trim());
    let mut evaluation = Evaluation::new(tree, text);
    if !evaluation.is_defined(&name) {
        return Err(unknown_symbol(tree, &name, arch));
    }
    let wanted = goal_value(&evaluation, &name, raw_value.trim()).map_err(|error| {
        KconfigError::Request {
            message: error.to_string(),
        }
    })?;
    let base = evaluation.write_config();
    let mut answer = HowAnswer {
        current: evaluation.value(&name).unwrap_or_default(),
        reason: evaluation.reason(&name).unwrap_or_default(),
        name,
        wanted,
        ways: Vec::new(),
    };
    if answer.already() {
        return Ok(answer);
    }
    let single_options = single_changes(&mut evaluation, &answer.name);
    let name = answer.name.clone();
    let mut try_edits = |edits: &[(String, Tristate)],
                         evaluation: &mut Evaluation|
     -> Result<bool, KconfigError> {
        let mut edited = text.to_string();
        for (candidate, value) in edits {
            edited = apply_edit(evaluation, &edited, candidate, *value);
        }
        evaluation.reevaluate(&edited);
        if evaluation.value(&name).as_deref() != Some(wanted.letter()) {
            return Ok(false);
        }
        // Only ways whose every edit sticks are achievable.
        for (candidate, value) in edits {
            if evaluation.value(candidate).as_deref() != Some(value.letter()) {
                return Ok(false);
            }
        }
        let output = evaluation.write_config();
        let others: Vec<String> = changed_symbols(&base, &output)?
            .into_iter()
            .filter(|changed| changed != &name && !edits.iter().any(|(edit, _)| edit == changed))
            .collect();
        answer.ways.push(Way {
            edits: edits.to_vec(),
            others,
        });
        Ok(true)
    };
    let mut single_successes = 0;
    for (candidate, value) in &single_options {
        if try_edits(&[(candidate.clone(), *value)], &mut evaluation)? {
            single_successes += 1;
        }
    }
    if single_successes == 0 {
        // Pairs of the nearest candidates (a bounded search).
        let near: Vec<&(String, Tristate)> = single_options.iter().take(60).collect();
        for (position, first) in near.iter().enumerate() {
            for second in &near[position + 1..] {
                if first.0 == second.0 {
                    continue;
                }
                try_edits(&[(*first).clone(), (*second).clone()], &mut evaluation)?;
            }
        }
    }
    answer
        .ways
        .sort_by_key(|way| (way.edits.len(), way.others.len()));
    Ok(answer)
}

/// Every value other than its current one of the goal and each user-settable
/// bool/tristate that can influence it, nearest first.
fn single_changes(evaluation: &mut Evaluation, name: &str) -> Vec<(String, Tristate)> {
    let mut candidates = vec![name.to_string()];
    candidates.extend(evaluation.influences(name, 6));
    candidates.retain(|candidate| {
        evaluation.has_prompt(candidate)
            && matches!(
                evaluation.symbol_type(candidate),
                Some(SymbolType::Bool | SymbolType::Tristate)
            )
    });
    let mut current_values = HashMap::new();
    for candidate in &candidates {
        current_values.insert(
            candidate.clone(),
            evaluation.value(candidate).unwrap_or_default(),
        );
    }
    let mut single_options = Vec::new();
    for candidate in &candidates {
        let mut values = vec![Tristate::Yes, Tristate::No];
        if evaluation.symbol_type(candidate) == Some(SymbolType::Tristate) {
            values.insert(1, Tristate::Module);
        }
        for value in values {
            if current_values.get(candidate).map(String::as_str) != Some(value.letter()) {
                single_options.push((candidate.clone(), value));
            }
        }
    }
    single_options
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemoryFiles, ParseOptions, parse_tree};

    fn tree() -> Kconfig {
        let files = MemoryFiles::new(&[(
            "Kconfig",
            "mainmenu \"Test\"\n\
             config MODULES\n\
             \tbool \"Modules\"\n\
             \tmodules\n\
             config NET\n\
             \tbool \"Networking\"\n\
             config WIRELESS\n\
             \ttristate \"Wireless\"\n\
             \tdepends on NET\n\
             config HIDDEN\n\
             \tbool\n\
             \tdefault WIRELESS\n",
        )]);
        parse_tree(&files, "Kconfig", &ParseOptions::for_srcarch("x86")).unwrap()
    }

    #[test]
    fn set_reports_each_change_with_its_reason() {
        let text = "CONFIG_MODULES=y\n# CONFIG_NET is not set\n";
        let outcome = set_symbols(
            &tree(),
            text,
            "x86_64",
            &["NET=y".to_string(), "WIRELESS=y".to_string()],
        )
        .unwrap();
        assert!(outcome.config.contains("CONFIG_WIRELESS=y\n"));
        assert!(outcome.config.contains("CONFIG_HIDDEN=y\n"));
        assert!(
            outcome
                .report
                .starts_with("3 symbol(s) change (1 changed, 2 added, 0 removed)"),
            "{}",
            outcome.report
        );
        assert!(outcome.report.contains("    because set by this edit ("));
    }

    #[test]
    fn set_refuses_unknown_symbols_and_bad_values() {
        let text = "CONFIG_MODULES=y\n";
        let error = set_symbols(&tree(), text, "x86_64", &["NETT=y".to_string()]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "find symbol NETT: no `config NETT` in the Kconfig tree for arch x86_64; did you mean NET?"
        );
        let error = set_symbols(&tree(), text, "x86_64", &["NET=m".to_string()]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "set NET is a bool: expected y or n, found `m`"
        );
        let error = set_symbols(&tree(), text, "x86_64", &["NET".to_string()]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "read assignment `NET`: expected SYMBOL=VALUE"
        );
    }

    #[test]
    fn how_finds_the_dependency_to_turn_on_and_checks_it() {
        let text = "CONFIG_MODULES=y\n# CONFIG_NET is not set\n";
        let answer = how(&tree(), text, "x86_64", "WIRELESS=m").unwrap();
        assert_eq!(answer.current, "n");
        assert!(!answer.already());
        assert_eq!(
            answer.ways,
            [Way {
                edits: vec![
                    ("WIRELESS".to_string(), Tristate::Module),
                    ("NET".to_string(), Tristate::Yes)
                ],
                others: vec!["HIDDEN".to_string()],
            }]
        );
        assert_eq!(
            answer.render("x86_64", 5),
            "WIRELESS=m (now n): 1 way(s), each checked by the evaluator, fewest other changes first:\n  1. WIRELESS=m NET=y  (changes 1 other symbol(s): HIDDEN)\n"
        );
        let already = how(&tree(), text, "x86_64", "NET=n").unwrap();
        assert!(already.already());
        assert!(
            already
                .render("x86_64", 5)
                .starts_with("NET is already n: ")
        );
        let error = how(&tree(), text, "x86_64", "NET=m").unwrap_err();
        assert_eq!(
            error.to_string(),
            "read goal NET=m: NET is not a bool or tristate that can be m"
        );
    }
}
