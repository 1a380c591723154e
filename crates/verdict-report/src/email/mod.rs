//! The email form of the reports (`--format email`): plain text a
//! maintainer pastes into a mail to a list, every line at most 80 columns
//! and prose wrapped at 72, one comparison per block of lines (its name;
//! its verdict with the delta and interval; both medians with their n),
//! then what exactly ran (commit, CPU, kernel, compiler, config, build,
//! how many runs and boots) and the command that reproduces it with the
//! experiment file's hash. Built on [`Lines`], a width-aware line writer
//! that escapes what it quotes (as the text format does), wraps what does
//! not fit, and stacks a table too wide for the page.
//!
//! Must not: compute anything (every figure and word comes from the
//! verdict-analysis models, as in the text form), or read anything.

mod blocks;
mod explain;
mod hosts;
mod run;

pub use blocks::{SideProvenance, compare, comparison_blocks, pivot, provenance_block};
pub use explain::explain;
pub use hosts::hosts;
pub use run::run;

use crate::escape;
use crate::table::{Table, display_width};

/// The widest line of an email report.
pub const WIDTH: usize = 80;
/// Where prose (legends, methods, notes) wraps.
pub const PROSE_WIDTH: usize = 72;

/// Wraps already escaped `text` at spaces into lines of at most `width`
/// display columns: the first indented by `indent`, the rest by `hang`. A
/// word longer than a line is cut (a hash, a path). Runs of spaces
/// between words are kept within a line (alignment), dropped at a break.
pub fn wrap(text: &str, indent: usize, hang: usize, width: usize) -> Vec<String> {
    let width = width.max(hang + 8).max(indent + 8);
    let mut lines = Vec::new();
    let mut current = " ".repeat(indent);
    let mut used = indent;
    let mut empty = true;
    // Spaces beyond the one that separates two words.
    let mut extra = 0usize;
    for word in text.trim().split(' ') {
        if word.is_empty() {
            extra += 1;
            continue;
        }
        let spaces = std::mem::take(&mut extra);
        let mut rest = word;
        loop {
            let gap = if empty { 0 } else { 1 + spaces };
            let rest_width = display_width(rest);
            if used + gap + rest_width <= width {
                current.push_str(&" ".repeat(gap));
                current.push_str(rest);
                used += gap + rest_width;
                empty = false;
                break;
            }
            if !empty {
                lines.push(std::mem::replace(&mut current, " ".repeat(hang)));
                used = hang;
                empty = true;
                continue;
            }
            // Alone on its line and still too long: cut it.
            let room = width - used;
            let mut taken = 0;
            let mut cut = 0;
            for (index, character) in rest.char_indices() {
                let character_width = display_width(character.encode_utf8(&mut [0; 4]));
                if taken + character_width > room {
                    break;
                }
                taken += character_width;
                cut = index + character.len_utf8();
            }
            let cut = cut.max(rest.chars().next().map_or(0, char::len_utf8));
            current.push_str(&rest[..cut]);
            lines.push(std::mem::replace(&mut current, " ".repeat(hang)));
            used = hang;
            rest = &rest[cut..];
            if rest.is_empty() {
                break;
            }
        }
    }
    if !empty || lines.is_empty() {
        lines.push(current.trim_end().to_string());
    }
    lines
}

/// `6 per cell`, `6 to 8 per cell`: how many of something each cell has;
/// `None` without cells.
pub fn per_cell(counts: &[usize]) -> Option<String> {
    match (counts.iter().min(), counts.iter().max()) {
        (Some(low), Some(high)) if low == high => Some(format!("{low} per cell")),
        (Some(low), Some(high)) => Some(format!("{low} to {high} per cell")),
        _ => None,
    }
}

/// A report being written line by line within [`WIDTH`].
#[derive(Debug, Clone)]
pub struct Lines {
    text: String,
    width: usize,
}

impl Default for Lines {
    fn default() -> Self {
        Self::new()
    }
}

impl Lines {
    pub fn new() -> Lines {
        Lines {
            text: String::new(),
            width: WIDTH,
        }
    }

    /// One logical line (escaped), wrapped within the width with
    /// continuation lines indented 4 more than the first.
    pub fn line(&mut self, indent: usize, text: &str) {
        self.push_wrapped(&escape::text(text), indent, indent + 4, self.width);
    }

    /// Prose (escaped), wrapped at [`PROSE_WIDTH`] under the same indent.
    pub fn prose(&mut self, indent: usize, text: &str) {
        self.push_wrapped(&escape::text(text), indent, indent, PROSE_WIDTH);
    }

    /// `key: value` (both escaped), the value from column `indent + 12`
    /// (or after a longer key) with its continuation lines under it, or
    /// indented 4 more than the key when the key is long.
    pub fn fact(&mut self, indent: usize, key: &str, value: &str) {
        let key = format!("{}:", escape::text(key));
        let column = (indent + display_width(&key) + 1).max(indent + 12);
        let hang = if column <= indent + 16 {
            column
        } else {
            indent + 4
        };
        let value = escape::text(value);
        let mut wrapped = wrap(&value, column, hang, self.width).into_iter();
        let first = wrapped.next().unwrap_or_default();
        let head = format!("{}{key}", " ".repeat(indent));
        let pad = column.saturating_sub(display_width(&head));
        self.text.push_str(&head);
        self.text.push_str(&" ".repeat(pad));
        self.text.push_str(first.trim_start());
        self.text.push('\n');
        for line in wrapped {
            self.text.push_str(line.trim_end());
            self.text.push('\n');
        }
    }

    /// A line as given: already within the width (the caller measured it);
    /// escaped, and wrapped anyway should it not fit.
    pub fn exact(&mut self, text: &str) {
        let text = escape::text(text);
        if display_width(&text) <= self.width {
            self.text.push_str(text.trim_end());
            self.text.push('\n');
        } else {
            let indent = text.len() - text.trim_start().len();
            self.push_wrapped(text.trim_start(), indent, indent + 4, self.width);
        }
    }

    /// A heading line followed by a rule of its length.
    pub fn heading(&mut self, text: &str) {
        self.blank();
        let text = escape::text(text);
        let width = display_width(&text).min(self.width);
        self.text.push_str(&text);
        self.text.push('\n');
        self.text.push_str(&"-".repeat(width));
        self.text.push('\n');
    }

    /// An empty line, never two in a row and none at the top.
    pub fn blank(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with("\n\n") {
            self.text.push('\n');
        }
    }

    /// A table indented by `indent`: aligned when it fits, else stacked.
    pub fn table(&mut self, indent: usize, table: &Table) {
        let pad = " ".repeat(indent);
        for line in table.text_within(self.width - indent).lines() {
            if line.is_empty() {
                self.text.push('\n');
            } else {
                self.text.push_str(&pad);
                self.text.push_str(line);
                self.text.push('\n');
            }
        }
    }

    fn push_wrapped(&mut self, text: &str, indent: usize, hang: usize, width: usize) {
        for line in wrap(text, indent, hang, width) {
            self.text.push_str(line.trim_end());
            self.text.push('\n');
        }
    }

    /// The report, ending in one newline.
    pub fn finish(self) -> String {
        let mut text = self.text.trim_end().to_string();
        text.push('\n');
        text
    }
}

/// Any text (a doctor report, a Kconfig difference) laid out within
/// [`WIDTH`]: each line kept when it fits, else wrapped with continuation
/// lines indented 4 more than it.
pub fn fit(text: &str) -> String {
    let mut lines = Lines::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            lines.blank();
        } else {
            lines.exact(line);
        }
    }
    lines.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words_and_cuts_only_what_cannot_fit() {
        let text = "one two three four five six seven";
        assert_eq!(
            wrap(text, 2, 6, 16),
            vec!["  one two three", "      four five", "      six seven"]
        );
        let hash = "0123456789abcdef".repeat(4);
        let lines = wrap(&format!("sha256 {hash}"), 2, 4, 30);
        assert!(
            lines.iter().all(|line| display_width(line) <= 30),
            "{lines:?}"
        );
        assert_eq!(lines.concat().replace(' ', ""), format!("sha256{hash}"));
        assert_eq!(wrap("", 2, 2, 80), vec![""]);
    }

    #[test]
    fn facts_hang_under_their_value_and_tables_stack() {
        let mut lines = Lines::new();
        lines.fact(2, "kernel", &"word ".repeat(30));
        let text = lines.finish();
        assert!(
            text.lines().all(|line| display_width(line) <= WIDTH),
            "{text}"
        );
        assert!(
            text.lines().nth(1).unwrap().starts_with(&" ".repeat(14)),
            "{text}"
        );
        let mut table = Table::new(vec!["name".into(), "a".into(), "b".into()]);
        table.push(vec!["x".repeat(50), "y".repeat(30), "z".into()]);
        let stacked = table.text_within(60);
        assert_eq!(
            stacked,
            format!("{}\n  a: {}\n  b: z\n", "x".repeat(50), "y".repeat(30))
        );
        assert_eq!(table.text_within(200), table.text());
        let mut lines = Lines::new();
        lines.table(2, &table);
        assert!(lines.finish().lines().all(|line| line.len() <= WIDTH));
    }

    #[test]
    fn what_is_quoted_is_escaped_before_it_is_measured() {
        let mut lines = Lines::new();
        lines.line(0, "a\u{1b}[31mb ± c");
        assert_eq!(lines.finish(), "a\\x1b[31mb +- c\n");
        assert_eq!(fit(&format!("{}\n\nx", "w ".repeat(60))).lines().count(), 4);
    }
}
