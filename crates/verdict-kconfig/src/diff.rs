//! The difference between two `.config` files with scripts/diffconfig
//! semantics: removed symbols (`-SYM val`), changed ones (` SYM old -> new`)
//! and added ones (`+SYM val`), each group sorted by name. Pure: values in,
//! values and strings out.

use crate::config::DotConfig;
use crate::error::KconfigError;
use serde::Serialize;

/// How a symbol differs between the old and the new config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DiffKind {
    Removed,
    Changed,
    Added,
}

/// One differing symbol. `old` is absent for added symbols, `new` for
/// removed ones. Values are raw (`y`, `m`, `n` for "is not set", `"str"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffEntry {
    pub symbol: String,
    pub kind: DiffKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
}

/// All differences, in diffconfig's order: removed, changed, added; each
/// group sorted by symbol name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ConfigDiff {
    pub entries: Vec<DiffEntry>,
}

impl ConfigDiff {
    /// Compares two configs. O(n log n) in the number of symbols.
    pub fn between(old: &DotConfig, new: &DotConfig) -> Self {
        let mut removed = Vec::new();
        let mut changed = Vec::new();
        let mut added = Vec::new();
        for (symbol, old_value) in old.iter() {
            match new.get(symbol) {
                None => removed.push(DiffEntry {
                    symbol: symbol.to_string(),
                    kind: DiffKind::Removed,
                    old: Some(old_value.to_string()),
                    new: None,
                }),
                Some(new_value) if new_value != old_value => changed.push(DiffEntry {
                    symbol: symbol.to_string(),
                    kind: DiffKind::Changed,
                    old: Some(old_value.to_string()),
                    new: Some(new_value.to_string()),
                }),
                Some(_) => {}
            }
        }
        for (symbol, new_value) in new.iter() {
            if old.get(symbol).is_none() {
                added.push(DiffEntry {
                    symbol: symbol.to_string(),
                    kind: DiffKind::Added,
                    old: None,
                    new: Some(new_value.to_string()),
                });
            }
        }
        // DotConfig iterates in name order, so each group is already sorted.
        let mut entries = removed;
        entries.extend(changed);
        entries.extend(added);
        Self { entries }
    }

    /// Keeps only the symbols for which `keep` returns true.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.entries.retain(|entry| keep(&entry.symbol));
    }

    /// Keeps only the symbols matching `pattern` (a regular expression,
    /// unanchored, against the name without `CONFIG_`).
    pub fn retain_matching(&mut self, pattern: &str) -> Result<(), KconfigError> {
        let regex = regex::Regex::new(pattern).map_err(|error| KconfigError::Pattern {
            pattern: pattern.to_string(),
            message: error.to_string(),
        })?;
        self.retain(|symbol| regex.is_match(symbol));
        Ok(())
    }

    /// True when the configs do not differ.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Counts of (removed, changed, added).
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |kind| self.entries.iter().filter(|e| e.kind == kind).count();
        (
            count(DiffKind::Removed),
            count(DiffKind::Changed),
            count(DiffKind::Added),
        )
    }

    /// diffconfig's text format, one line per symbol.
    pub fn render_text(&self) -> String {
        let mut text = String::new();
        for entry in &self.entries {
            let old = entry.old.as_deref().unwrap_or_default();
            let new = entry.new.as_deref().unwrap_or_default();
            let line = match entry.kind {
                DiffKind::Removed => format!("-{} {old}\n", entry.symbol),
                DiffKind::Changed => format!(" {} {old} -> {new}\n", entry.symbol),
                DiffKind::Added => format!("+{} {new}\n", entry.symbol),
            };
            text.push_str(&line);
        }
        text
    }

    /// The document for `--format json` (schema `verdict.kconfig-diff/v1`,
    /// documented in docs/kconfig.md); serialize it with serde_json.
    pub fn to_document<'a>(&'a self, old_file: &'a str, new_file: &'a str) -> DiffDocument<'a> {
        let (removed, changed, added) = self.counts();
        DiffDocument {
            schema: "verdict.kconfig-diff/v1",
            old_file,
            new_file,
            counts: DiffCounts {
                removed,
                changed,
                added,
            },
            entries: &self.entries,
        }
    }
}

/// The JSON form of a diff, fields in documented order.
#[derive(Debug, Serialize)]
pub struct DiffDocument<'a> {
    pub schema: &'static str,
    pub old_file: &'a str,
    pub new_file: &'a str,
    pub counts: DiffCounts,
    pub entries: &'a [DiffEntry],
}

/// How many symbols were removed, changed and added.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DiffCounts {
    pub removed: usize,
    pub changed: usize,
    pub added: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_diffconfig_order_and_format() {
        let old = DotConfig::from_pairs([("B", "y"), ("A", "m"), ("GONE", "y"), ("OFF", "n")]);
        let new = DotConfig::from_pairs([("B", "y"), ("A", "y"), ("NEW", "\"x\""), ("OFF", "y")]);
        let diff = ConfigDiff::between(&old, &new);
        assert_eq!(
            diff.render_text(),
            "-GONE y\n A m -> y\n OFF n -> y\n+NEW \"x\"\n"
        );
        assert_eq!(diff.counts(), (1, 2, 1));
        let json = serde_json::to_value(diff.to_document("o", "n")).unwrap();
        assert_eq!(json["schema"], "verdict.kconfig-diff/v1");
        assert_eq!(json["counts"]["changed"], 2);
        assert_eq!(json["entries"][0]["kind"], "removed");
        assert!(json["entries"][0].get("new").is_none());
    }

    #[test]
    fn filters_by_pattern() {
        let old = DotConfig::from_pairs([("PREEMPT", "n"), ("NET", "y")]);
        let new = DotConfig::from_pairs([("PREEMPT", "y"), ("NET", "m"), ("PREEMPT_RCU", "y")]);
        let mut diff = ConfigDiff::between(&old, &new);
        diff.retain_matching("^PREEMPT").unwrap();
        assert_eq!(diff.render_text(), " PREEMPT n -> y\n+PREEMPT_RCU y\n");
        let error = diff.retain_matching("(").unwrap_err().to_string();
        assert!(error.starts_with("compile symbol pattern `(`:"), "{error}");
    }

    #[test]
    fn identical_configs_have_no_difference() {
        let config = DotConfig::from_pairs([("A", "y")]);
        assert!(ConfigDiff::between(&config, &config).is_empty());
    }
}
