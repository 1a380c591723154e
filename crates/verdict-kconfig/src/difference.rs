//! The difference between two named `.config` texts as `verdict compare
//! --config-diff` shows it: a heading naming both sides (and the symbol
//! filter), the diffconfig-style lines or "(no differences)", and the JSON
//! document. Works on text only; never reads a file or prints.

use crate::{ConfigDiff, DotConfig, KconfigError};

/// The rendered difference (heading and lines) and its JSON document.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedDifference {
    pub text: String,
    pub document: serde_json::Value,
}

/// The difference from `old` to `new`, each `(name, text)`, keeping only
/// symbols matching the regular expression `pattern` unless it is empty.
pub fn named_difference(
    (old_name, old_text): (&str, &str),
    (new_name, new_text): (&str, &str),
    pattern: &str,
) -> Result<NamedDifference, KconfigError> {
    let old = DotConfig::parse(old_text, old_name)?;
    let new = DotConfig::parse(new_text, new_name)?;
    let mut diff = ConfigDiff::between(&old, &new);
    if !pattern.is_empty() {
        diff.retain_matching(pattern)?;
    }
    let lines = diff.render_text();
    let heading = format!(
        "kernel config: {old_name} -> {new_name}{}\n",
        if pattern.is_empty() {
            String::new()
        } else {
            format!(" (symbols matching {pattern})")
        }
    );
    let body = if lines.trim().is_empty() {
        "  (no differences)\n".to_string()
    } else {
        lines
    };
    // A document of strings and counts always serializes.
    let document = serde_json::to_value(diff.to_document(old_name, new_name)).unwrap_or_default();
    Ok(NamedDifference {
        text: format!("{heading}{body}"),
        document,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_both_sides_and_the_filter_and_says_when_nothing_differs() {
        let old = "CONFIG_A=y\nCONFIG_HZ=250\n";
        let new = "CONFIG_A=y\nCONFIG_HZ=1000\n";
        let changed = named_difference(("run 1 (a)", old), ("run 2 (b)", new), "").unwrap();
        assert!(
            changed
                .text
                .starts_with("kernel config: run 1 (a) -> run 2 (b)\n"),
            "{}",
            changed.text
        );
        assert!(changed.text.contains("HZ"), "{}", changed.text);
        let filtered = named_difference(("old", old), ("new", new), "^A$").unwrap();
        assert_eq!(
            filtered.text,
            "kernel config: old -> new (symbols matching ^A$)\n  (no differences)\n"
        );
        assert!(named_difference(("old", old), ("new", new), "(").is_err());
    }
}
