//! What `verdict kconfig why`, `why-not` and `blame` say around the reason
//! trees: the evaluator's preamble (does the config match the tree?), the
//! blame heading, and the JSON documents `verdict.kconfig-why/v1` and
//! `verdict.kconfig-blame/v1`. Never reads a file or prints.

use crate::{
    Blame, DotConfig, Evaluation, Explainer, Kconfig, KconfigError, ReasonNode, SymbolType,
    changed_symbols, guess_arch, similar_symbols, srcarch_for_arch,
};
use serde::Serialize;

/// `why` (or `why_not`) for a symbol with the value it displays; an
/// unknown symbol's error names up to three similar ones.
pub fn explain(
    tree: &Kconfig,
    config: &DotConfig,
    symbol: &str,
    why_not: bool,
) -> Result<(ReasonNode, String), KconfigError> {
    let explainer = Explainer::new(tree, config);
    let node = if why_not {
        explainer.why_not(symbol)
    } else {
        explainer.why(symbol)
    }
    .map_err(|error| match error {
        KconfigError::UnknownSymbol { .. } => {
            let suggestions = similar_symbols(tree, symbol);
            if suggestions.is_empty() {
                error
            } else {
                KconfigError::Suggested {
                    error: Box::new(error),
                    suggestions: suggestions.join(" or "),
                }
            }
        }
        other => other,
    })?;
    Ok((node, explainer.display_value(symbol)))
}

/// What `blame` compares: both reason trees (old config on the old tree,
/// new on the new) and the displayed old and new values.
pub fn blame(
    old_tree: &Kconfig,
    new_tree: &Kconfig,
    old_config: &DotConfig,
    new_config: &DotConfig,
    symbol: &str,
) -> Result<(Blame, String, String), KconfigError> {
    let old_explainer = Explainer::new(old_tree, old_config);
    let new_explainer = Explainer::new(new_tree, new_config);
    let old = old_explainer.why(symbol)?;
    let new = new_explainer.why(symbol)?;
    Ok((
        Blame::between(symbol, old, new),
        old_explainer.display_value(symbol),
        new_explainer.display_value(symbol),
    ))
}

/// What the evaluator says before the reason tree: warnings when the
/// config's header or arch does not match the tree, "this config does not
/// match the tree" when the file's value is not what the tree computes, and
/// the computed value with its reason.
pub fn evaluator_preamble(
    tree: &Kconfig,
    text: &str,
    config: &DotConfig,
    arch: &str,
    symbol: &str,
) -> String {
    let mut evaluation = Evaluation::new(tree, text);
    let mut lines = String::new();
    let header = text
        .lines()
        .take(4)
        .find_map(|line| line.strip_prefix("# Linux/"))
        .map(|rest| format!("Linux/{rest}"));
    if let (Some(header), Some(mainmenu)) = (&header, &tree.mainmenu) {
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        if words(header) != words(mainmenu) {
            lines.push_str(&format!(
                "warning: the config was written for `{header}`, the tree is `{mainmenu}`\n"
            ));
        }
    }
    if let Some(guessed) = guess_arch(config) {
        if srcarch_for_arch(guessed) != srcarch_for_arch(arch) {
            lines.push_str(&format!(
                "warning: the config looks like {guessed} (from its arch symbols) but is explained for arch {arch}\n"
            ));
        }
    }
    let Some(computed) = evaluation.value(symbol) else {
        return lines;
    };
    let reason = evaluation.reason(symbol).unwrap_or_default();
    let in_file = match config.get(symbol) {
        Some(value) => value.trim_matches('"').to_string(),
        None if matches!(
            evaluation.symbol_type(symbol),
            Some(SymbolType::Bool | SymbolType::Tristate)
        ) =>
        {
            "n".to_string()
        }
        None => String::new(),
    };
    if in_file != computed {
        lines.push_str(&format!(
            "this config does not match the tree: {symbol}={in_file} in the file, but the tree computes {symbol}={reason}\n"
        ));
        let output = evaluation.write_config();
        let differing = changed_symbols(text, &output).unwrap_or_default();
        if !differing.is_empty() {
            lines.push_str(&format!(
                "  ({} symbol(s) of this config differ from what `make olddefconfig` would write for this tree)\n",
                differing.len()
            ));
        }
    } else {
        lines.push_str(&format!("computed by the tree: {symbol}={reason}\n"));
    }
    lines.push('\n');
    lines
}

/// The first line of `blame`'s text: the change, or that the value is the
/// same in both configs.
pub fn blame_heading(symbol: &str, old_value: &str, new_value: &str) -> String {
    if old_value == new_value {
        format!("{symbol} is {old_value} in both configs; the reasons may still differ.\n\n")
    } else {
        format!("{symbol}: {old_value} -> {new_value}\n\n")
    }
}

/// `verdict.kconfig-why/v1`.
#[derive(Debug, Serialize)]
pub struct WhyDocument<'a> {
    schema: &'static str,
    symbol: &'a str,
    value: String,
    arch: &'a str,
    reason: &'a ReasonNode,
}

impl<'a> WhyDocument<'a> {
    pub fn new(symbol: &'a str, value: String, arch: &'a str, reason: &'a ReasonNode) -> Self {
        Self {
            schema: "verdict.kconfig-why/v1",
            symbol,
            value,
            arch,
            reason,
        }
    }
}

/// One side of `verdict.kconfig-blame/v1`.
#[derive(Debug, Serialize)]
struct BlameSide<'a> {
    value: String,
    reason: &'a ReasonNode,
}

/// `verdict.kconfig-blame/v1`.
#[derive(Debug, Serialize)]
pub struct BlameDocument<'a> {
    schema: &'static str,
    symbol: &'a str,
    arch: &'a str,
    old: BlameSide<'a>,
    new: BlameSide<'a>,
    only_old: &'a [String],
    only_new: &'a [String],
}

impl<'a> BlameDocument<'a> {
    /// The document for `blame` with the displayed old and new values.
    pub fn new(blame: &'a Blame, arch: &'a str, old_value: String, new_value: String) -> Self {
        Self {
            schema: "verdict.kconfig-blame/v1",
            symbol: &blame.symbol,
            arch,
            old: BlameSide {
                value: old_value,
                reason: &blame.old,
            },
            new: BlameSide {
                value: new_value,
                reason: &blame.new,
            },
            only_old: &blame.only_old,
            only_new: &blame.only_new,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemoryFiles, ParseOptions, parse_tree};

    fn tree() -> Kconfig {
        let files = MemoryFiles::new(&[(
            "Kconfig",
            "mainmenu \"Linux/x86 6.1.0 Kernel Configuration\"\n\
             config NET\n\
             \tbool \"Networking\"\n\
             \tdefault y\n\
             config X86_64\n\
             \tdef_bool y\n\
             config ALWAYS\n\
             \tdef_bool y\n",
        )]);
        parse_tree(&files, "Kconfig", &ParseOptions::for_srcarch("x86")).unwrap()
    }

    #[test]
    fn the_preamble_says_whether_the_config_matches_the_tree() {
        let text = "#\n# Linux/x86 6.1.0 Kernel Configuration\n#\nCONFIG_NET=y\nCONFIG_X86_64=y\n";
        let config = DotConfig::parse(text, "config").unwrap();
        let preamble = evaluator_preamble(&tree(), text, &config, "x86_64", "NET");
        assert!(
            preamble.starts_with("computed by the tree: NET=y"),
            "{preamble}"
        );
        assert!(preamble.ends_with("\n\n"));

        let text = "#\n# Linux/x86 5.4.0 Kernel Configuration\n#\n# CONFIG_NET is not set\nCONFIG_X86_64=y\n";
        let config = DotConfig::parse(text, "config").unwrap();
        let preamble = evaluator_preamble(&tree(), text, &config, "arm64", "ALWAYS");
        let lines: Vec<&str> = preamble.lines().collect();
        assert_eq!(
            lines[0],
            "warning: the config was written for `Linux/x86 5.4.0 Kernel Configuration`, the tree is `Linux/x86 6.1.0 Kernel Configuration`"
        );
        assert_eq!(
            lines[1],
            "warning: the config looks like x86_64 (from its arch symbols) but is explained for arch arm64"
        );
        assert!(
            lines[2].starts_with("this config does not match the tree: ALWAYS=n in the file, but the tree computes ALWAYS=y"),
            "{preamble}"
        );
    }

    #[test]
    fn unknown_symbols_get_suggestions_and_blame_compares_values() {
        let text = "CONFIG_NET=y\nCONFIG_X86_64=y\n";
        let config = DotConfig::parse(text, "config").unwrap();
        let (_, value) = explain(&tree(), &config, "NET", false).unwrap();
        assert_eq!(value, "y");
        let error = explain(&tree(), &config, "NETT", true).unwrap_err();
        assert!(
            error.to_string().ends_with("; did you mean NET?"),
            "{error}"
        );
        let old = DotConfig::parse("# CONFIG_NET is not set\n", "old").unwrap();
        let (blame, old_value, new_value) = blame(&tree(), &tree(), &old, &config, "NET").unwrap();
        assert_eq!((old_value.as_str(), new_value.as_str()), ("n", "y"));
        assert_eq!(blame.symbol, "NET");
    }

    #[test]
    fn blame_headings_and_documents() {
        assert_eq!(blame_heading("NET", "y", "n"), "NET: y -> n\n\n");
        assert_eq!(
            blame_heading("NET", "y", "y"),
            "NET is y in both configs; the reasons may still differ.\n\n"
        );
        let node = ReasonNode {
            text: "NET=y".to_string(),
            location: None,
            children: Vec::new(),
        };
        let why =
            serde_json::to_value(WhyDocument::new("NET", "y".into(), "x86_64", &node)).unwrap();
        assert_eq!(why["schema"], "verdict.kconfig-why/v1");
        assert_eq!(why["value"], "y");
        let blame = Blame::between("NET", node.clone(), node);
        let document =
            serde_json::to_value(BlameDocument::new(&blame, "x86_64", "y".into(), "n".into()))
                .unwrap();
        assert_eq!(document["schema"], "verdict.kconfig-blame/v1");
        assert_eq!(document["symbol"], "NET");
        assert_eq!(document["new"]["value"], "n");
    }
}
