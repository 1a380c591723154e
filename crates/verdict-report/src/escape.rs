//! Escaping of quoted values, one function per output format: every
//! renderer passes each value it quotes (names, levels, commands, config
//! values, output tails) through the function of its format before laying
//! it out. JSON needs none here: serde escapes control characters itself.
//! Pure string functions; this module must not lay out tables or format
//! numbers (that is `table` and `format`).
//!
//! Control characters (C0, DEL, C1) and the Unicode bidirectional
//! overrides/isolates are spelled visibly in every format (`\n`, `\t`,
//! `\r`, `\x1b`, `\u{202e}`), so quoted workload output can neither rewrite
//! the reader's terminal nor break a table's rows; a backslash itself is
//! spelled `\\`, so a spelled character never reads like text that was
//! there (a level holding a tab prints `\t`, a level holding a backslash
//! and a `t` prints `\\t`).

/// A character that must never reach the output raw, spelled visibly;
/// `None` for a character that may pass.
fn visible(character: char) -> Option<String> {
    match character {
        '\\' => Some("\\\\".to_string()),
        '\n' => Some("\\n".to_string()),
        '\r' => Some("\\r".to_string()),
        '\t' => Some("\\t".to_string()),
        control if control.is_control() && (control as u32) < 0x80 => {
            Some(format!("\\x{:02x}", control as u32))
        }
        control if control.is_control() => Some(format!("\\u{{{:x}}}", control as u32)),
        // Bidirectional embeddings, overrides and isolates (Trojan Source)
        // and the line/paragraph separators.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' => {
            Some(format!("\\u{{{:x}}}", character as u32))
        }
        _ => None,
    }
}

/// Typographic characters spelled in ASCII for a plain-text email.
fn ascii_spelling(character: char) -> Option<&'static str> {
    Some(match character {
        '±' => "+-",
        'γ' => "gamma",
        'α' => "alpha",
        '–' | '−' => "-",
        '—' => "--",
        '≥' => ">=",
        '≤' => "<=",
        '×' => "x",
        '·' => "*",
        'µ' | 'μ' => "u",
        _ => return None,
    })
}

/// Plain text (the email report): typographic characters in ASCII, control
/// characters and backslashes spelled visibly, everything else printable
/// kept. Two different values never print the same.
pub fn text(value: &str) -> String {
    let mut output = String::with_capacity(value.len());
    for character in value.chars() {
        if let Some(spelled) = visible(character) {
            output.push_str(&spelled);
        } else if let Some(ascii) = ascii_spelling(character) {
            output.push_str(ascii);
        } else {
            output.push(character);
        }
    }
    output
}

/// Several lines of plain text (a header, a footnote): each line escaped as
/// [`text`], the line breaks kept.
pub fn text_lines(value: &str) -> String {
    value.split('\n').map(text).collect::<Vec<_>>().join("\n")
}

/// A markdown table cell or list item: as [`text`], and every character
/// that could end the cell, start markup or raw HTML backslash-escaped
/// (CommonMark lets any ASCII punctuation be escaped): `\ | ` * _ [ ] < > & ~ #`.
pub fn markdown(value: &str) -> String {
    let mut output = String::with_capacity(value.len());
    for character in text(value).chars() {
        if matches!(
            character,
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' | '#'
        ) {
            output.push('\\');
        }
        output.push(character);
    }
    output
}

/// A CSV field (RFC 4180): control characters spelled visibly (so one
/// record is one line and nothing reaches a terminal raw), then quoted
/// when it holds a comma, a double quote, or leading/trailing spaces, with
/// double quotes doubled. Typographic characters are kept (CSV is UTF-8
/// data, not an email).
pub fn csv(value: &str) -> String {
    let mut neutral = String::with_capacity(value.len());
    for character in value.chars() {
        match visible(character) {
            Some(spelled) => neutral.push_str(&spelled),
            None => neutral.push(character),
        }
    }
    if neutral.contains([',', '"'])
        || neutral.starts_with(' ')
        || neutral.ends_with(' ')
        || neutral.len() != value.len()
    {
        format!("\"{}\"", neutral.replace('"', "\"\""))
    } else {
        neutral
    }
}

/// A word for a POSIX shell command line the user copies: as it is when
/// it needs no quoting, else in single quotes (`'` as `'\''`).
pub fn shell_word(word: &str) -> String {
    verdict_analysis::provenance::shell_word(word)
}

/// True when `text` holds a byte a terminal would act on (C0 controls
/// other than the line feed, DEL, C1 controls); for tests and checks.
pub fn has_raw_control(text: &str) -> bool {
    text.chars().any(|character| {
        character != '\n'
            && character != '\\'
            && (character.is_control() || visible(character).is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_word_is_quoted_only_when_it_needs_it() {
        assert_eq!(shell_word("v6.1-rc2"), "v6.1-rc2");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    const NASTY: &str = "a\nb\u{1b}[31mc|d,\"e";

    #[test]
    fn text_spells_controls_and_typography() {
        assert_eq!(text(NASTY), "a\\nb\\x1b[31mc|d,\"e");
        assert_eq!(
            text("68 ±9%, γ = −2 ≥ 1\t\u{202e}x"),
            "68 +-9%, gamma = -2 >= 1\\t\\u{202e}x"
        );
        // A tab and a backslash followed by `t` print differently.
        assert_eq!(text("\t"), "\\t");
        assert_eq!(text("\\t"), "\\\\t");
        assert_ne!(text("a\tb"), text("a\\tb"));
        assert_ne!(markdown("\t"), markdown("\\t"));
        assert_ne!(csv("\t"), csv("\\t"));
        assert_eq!(text("\u{85}\u{7f}"), "\\u{85}\\x7f");
    }

    #[test]
    fn markdown_escapes_table_breakers() {
        assert_eq!(markdown(NASTY), "a\\\\nb\\\\x1b\\[31mc\\|d,\"e");
        assert_eq!(markdown("C:\\"), "C:\\\\\\\\");
        assert_eq!(markdown("<b>*x*</b>"), "\\<b\\>\\*x\\*\\</b\\>");
    }

    #[test]
    fn csv_quotes_per_rfc_4180_and_neutralises_controls() {
        assert_eq!(csv("plain"), "plain");
        assert_eq!(csv("a,b"), "\"a,b\"");
        assert_eq!(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv(NASTY), "\"a\\nb\\x1b[31mc|d,\"\"e\"");
        assert_eq!(csv("tab\there"), "\"tab\\there\"");
        assert!(!has_raw_control(&csv(NASTY)));
    }
}
