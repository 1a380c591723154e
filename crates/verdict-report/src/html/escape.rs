//! Escaping for everything an HTML report quotes: experiment names, levels,
//! commands, output tails, environment strings. Text becomes character data
//! that cannot open a tag, close an attribute or start an entity; control
//! characters (terminal escapes included) become visible Unicode control
//! pictures, so the page stays well-formed and shows what was there.
//! Must not: decide layout or pass anything through unescaped.

/// Escape `text` for use as HTML/SVG character data or inside a quoted
/// attribute value (both quote characters are escaped).
pub fn text(text: &str) -> String {
    let mut output = String::with_capacity(text.len() + text.len() / 8);
    for character in text.chars() {
        match character {
            '&' => output.push_str("&amp;"),
            '<' => output.push_str("&lt;"),
            '>' => output.push_str("&gt;"),
            '"' => output.push_str("&quot;"),
            '\'' => output.push_str("&#39;"),
            '\n' | '\t' => output.push(character),
            '\r' => output.push('\u{240d}'),
            // C0 controls as their control pictures (ESC shows as U+241B).
            control @ '\u{0}'..='\u{1f}' => {
                output.push(char::from_u32(0x2400 + control as u32).unwrap_or('\u{fffd}'))
            }
            '\u{7f}' => output.push('\u{2421}'),
            // C1 controls and noncharacters have no place in HTML text.
            control if control.is_control() => output.push('\u{fffd}'),
            '\u{fdd0}'..='\u{fdef}' | '\u{fffe}' | '\u{ffff}' => output.push('\u{fffd}'),
            other => output.push(other),
        }
    }
    output
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn markup_becomes_text() {
        assert_eq!(
            text("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(
            text("a & b \"c\" 'd'"),
            "a &amp; b &quot;c&quot; &#39;d&#39;"
        );
        assert_eq!(text("&amp;"), "&amp;amp;");
    }

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(text("ok\u{1b}[31mred"), "ok\u{241b}[31mred");
        assert_eq!(text("nul\u{0}"), "nul\u{2400}");
        assert_eq!(text("c1\u{9b}x"), "c1\u{fffd}x");
        assert_eq!(text("line\nnext\tcol"), "line\nnext\tcol");
    }
}
