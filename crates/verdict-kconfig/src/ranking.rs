//! `verdict kconfig blame`'s ranking as text: the changed user settings
//! that alone give the symbol its new value first (at most three unless
//! `full`), each with its shortest chain, the rest folded behind a count.
//! The causes come from `blame_causes`; this only renders them.

use crate::Cause;

/// The ranked causes of `symbol`'s change, one line each, and a blank line.
pub fn render_causes(causes: &[Cause], symbol: &str, full: bool) -> String {
    if causes.is_empty() {
        return "no changed user setting can influence it in this tree\n\n".to_string();
    }
    let shown: Vec<_> = if full {
        causes.iter().collect()
    } else {
        let flipping: Vec<_> = causes.iter().filter(|cause| cause.flips).take(3).collect();
        if flipping.is_empty() {
            causes.iter().take(3).collect()
        } else {
            flipping
        }
    };
    let mut text = String::from("changed user settings, the best explanation first:\n");
    for (number, cause) in shown.iter().enumerate() {
        let effect = if cause.flips {
            format!("alone gives {symbol} its new value")
        } else {
            format!("alone does not change {symbol}")
        };
        let rest = if cause.unexplained == 0 {
            ", and explains the whole difference".to_string()
        } else {
            format!(", {} other line(s) still differ", cause.unexplained)
        };
        text.push_str(&format!(
            "  {}. {} {} -> {}  ({effect}{rest}; chain: {})\n",
            number + 1,
            cause.symbol,
            cause.old,
            cause.new,
            cause.chain.join(" -> ")
        ));
    }
    if causes.len() > shown.len() {
        text.push_str(&format!(
            "  ... {} more changed user setting(s) that can influence {symbol} (--full)\n",
            causes.len() - shown.len()
        ));
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cause(symbol: &str, flips: bool, unexplained: usize) -> Cause {
        Cause {
            symbol: symbol.to_string(),
            old: "n".to_string(),
            new: "y".to_string(),
            flips,
            unexplained,
            edited_lines: 1,
            chain: vec![symbol.to_string(), "GOAL".to_string()],
        }
    }

    #[test]
    fn flipping_causes_come_first_and_the_rest_is_counted() {
        let causes = [
            cause("A", false, 2),
            cause("B", true, 0),
            cause("C", true, 1),
            cause("D", false, 0),
        ];
        let text = render_causes(&causes, "GOAL", false);
        assert_eq!(
            text,
            "changed user settings, the best explanation first:\n  \
             1. B n -> y  (alone gives GOAL its new value, and explains the whole difference; chain: B -> GOAL)\n  \
             2. C n -> y  (alone gives GOAL its new value, 1 other line(s) still differ; chain: C -> GOAL)\n  \
             ... 2 more changed user setting(s) that can influence GOAL (--full)\n\n"
        );
        assert_eq!(render_causes(&causes, "GOAL", true).lines().count(), 6);
        assert_eq!(
            render_causes(&[], "GOAL", false),
            "no changed user setting can influence it in this tree\n\n"
        );
    }
}
