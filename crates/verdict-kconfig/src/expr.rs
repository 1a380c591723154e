//! Kconfig expressions and tristate logic (n < m < y; `&&` is min, `||` is
//! max, `!` is `y - value`), as in Documentation/kbuild/kconfig-language.rst
//! "Menu dependencies". Evaluation takes a lookup closure; this module knows
//! nothing about files or `.config`.

use std::fmt;

/// A tristate value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Tristate {
    #[default]
    No,
    Module,
    Yes,
}

impl Tristate {
    /// `y - value`.
    pub fn negate(self) -> Self {
        match self {
            Self::No => Self::Yes,
            Self::Module => Self::Module,
            Self::Yes => Self::No,
        }
    }

    /// Parses a raw `.config` value; anything but `y`/`m` is n.
    pub fn from_raw(raw: &str) -> Self {
        match raw {
            "y" => Self::Yes,
            "m" => Self::Module,
            _ => Self::No,
        }
    }

    /// `n`, `m` or `y`.
    pub fn letter(self) -> &'static str {
        match self {
            Self::No => "n",
            Self::Module => "m",
            Self::Yes => "y",
        }
    }

    fn from_bool(value: bool) -> Self {
        if value { Self::Yes } else { Self::No }
    }
}

/// A comparison operator between two symbols or constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
}

impl Comparison {
    fn symbol(self) -> &'static str {
        match self {
            Self::Equal => "=",
            Self::NotEqual => "!=",
            Self::Less => "<",
            Self::LessEqual => "<=",
            Self::Greater => ">",
            Self::GreaterEqual => ">=",
        }
    }
}

/// An operand of a comparison, or a leaf of an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A symbol name (or the constants `y`, `m`, `n`, or a bare number).
    Symbol(String),
    /// A quoted string constant.
    Text(String),
    /// An unexpanded `$(...)` macro: a toolchain probe this crate does not run.
    Macro(String),
}

impl fmt::Display for Operand {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Symbol(name) => formatter.write_str(name),
            Self::Text(text) => write!(formatter, "\"{text}\""),
            Self::Macro(text) => formatter.write_str(text),
        }
    }
}

/// A Kconfig expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Leaf(Operand),
    Compare(Comparison, Operand, Operand),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

/// What an evaluator must supply: the tristate and the string value of an
/// operand.
pub(crate) trait Values {
    fn tristate(&self, operand: &Operand) -> Tristate;
    fn text(&self, operand: &Operand) -> String;
}

impl Expr {
    /// A symbol leaf.
    pub fn symbol(name: &str) -> Self {
        Self::Leaf(Operand::Symbol(name.to_string()))
    }

    /// `left && right`.
    pub fn and(left: Self, right: Self) -> Self {
        Self::And(Box::new(left), Box::new(right))
    }

    /// Evaluates with tristate logic. O(size of the expression).
    pub(crate) fn evaluate(&self, values: &dyn Values) -> Tristate {
        match self {
            Self::Leaf(operand) => values.tristate(operand),
            Self::Compare(comparison, left, right) => {
                let left = values.text(left);
                let right = values.text(right);
                Tristate::from_bool(compare(*comparison, &left, &right))
            }
            Self::Not(inner) => inner.evaluate(values).negate(),
            Self::And(left, right) => left.evaluate(values).min(right.evaluate(values)),
            Self::Or(left, right) => left.evaluate(values).max(right.evaluate(values)),
        }
    }

    /// Calls `visit` for every symbol name in the expression.
    pub fn symbols<'a>(&'a self, visit: &mut dyn FnMut(&'a str)) {
        let mut operand = |operand: &'a Operand| {
            if let Operand::Symbol(name) = operand {
                visit(name);
            }
        };
        match self {
            Self::Leaf(leaf) => operand(leaf),
            Self::Compare(_, left, right) => {
                operand(left);
                operand(right);
            }
            Self::Not(inner) => inner.symbols(visit),
            Self::And(left, right) | Self::Or(left, right) => {
                left.symbols(visit);
                right.symbols(visit);
            }
        }
    }

    fn precedence(&self) -> u8 {
        match self {
            Self::Or(..) => 1,
            Self::And(..) => 2,
            Self::Not(..) => 3,
            Self::Compare(..) | Self::Leaf(..) => 4,
        }
    }

    fn write_child(&self, child: &Self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if child.precedence() < self.precedence() {
            write!(formatter, "({child})")
        } else {
            write!(formatter, "{child}")
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Leaf(operand) => write!(formatter, "{operand}"),
            Self::Compare(comparison, left, right) => {
                write!(formatter, "{left} {} {right}", comparison.symbol())
            }
            Self::Not(inner) => {
                formatter.write_str("!")?;
                self.write_child(inner, formatter)
            }
            Self::And(left, right) => {
                self.write_child(left, formatter)?;
                formatter.write_str(" && ")?;
                self.write_child(right, formatter)
            }
            Self::Or(left, right) => {
                self.write_child(left, formatter)?;
                formatter.write_str(" || ")?;
                self.write_child(right, formatter)
            }
        }
    }
}

/// Parses a Kconfig integer (decimal, or hex with or without `0x`).
fn number(text: &str) -> Option<i128> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return i128::from_str_radix(hex, 16).ok();
    }
    text.parse().ok()
}

/// Compares two values numerically when both are numbers, else as strings
/// (what scripts/kconfig/expr.c does for untyped operands).
fn compare(comparison: Comparison, left: &str, right: &str) -> bool {
    let ordering = match (number(left), number(right)) {
        (Some(left), Some(right)) => left.cmp(&right),
        _ => left.cmp(right),
    };
    match comparison {
        Comparison::Equal => ordering.is_eq(),
        Comparison::NotEqual => ordering.is_ne(),
        Comparison::Less => ordering.is_lt(),
        Comparison::LessEqual => ordering.is_le(),
        Comparison::Greater => ordering.is_gt(),
        Comparison::GreaterEqual => ordering.is_ge(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;
    impl Values for Fixed {
        fn tristate(&self, operand: &Operand) -> Tristate {
            match operand {
                Operand::Symbol(name) => Tristate::from_raw(match name.as_str() {
                    "Y" => "y",
                    "M" => "m",
                    other => other,
                }),
                _ => Tristate::No,
            }
        }
        fn text(&self, operand: &Operand) -> String {
            match operand {
                Operand::Symbol(name) if name == "NUM" => "0x20".to_string(),
                Operand::Symbol(name) | Operand::Text(name) | Operand::Macro(name) => name.clone(),
            }
        }
    }

    fn leaf(name: &str) -> Expr {
        Expr::symbol(name)
    }

    #[test]
    fn tristate_logic() {
        let or = Expr::Or(Box::new(leaf("M")), Box::new(leaf("N")));
        assert_eq!(or.evaluate(&Fixed), Tristate::Module);
        let and = Expr::and(leaf("M"), leaf("Y"));
        assert_eq!(and.evaluate(&Fixed), Tristate::Module);
        assert_eq!(
            Expr::Not(Box::new(leaf("M"))).evaluate(&Fixed),
            Tristate::Module
        );
        assert_eq!(
            Expr::Not(Box::new(leaf("Y"))).evaluate(&Fixed),
            Tristate::No
        );
    }

    #[test]
    fn comparisons_are_numeric_when_possible() {
        let greater = Expr::Compare(
            Comparison::Greater,
            Operand::Symbol("NUM".into()),
            Operand::Symbol("16".into()),
        );
        assert_eq!(greater.evaluate(&Fixed), Tristate::Yes);
        let equal = Expr::Compare(
            Comparison::Equal,
            Operand::Symbol("abc".into()),
            Operand::Text("abd".into()),
        );
        assert_eq!(equal.evaluate(&Fixed), Tristate::No);
    }

    #[test]
    fn displays_with_minimal_parentheses() {
        let expr = Expr::and(
            Expr::Or(Box::new(leaf("A")), Box::new(leaf("B"))),
            Expr::Not(Box::new(Expr::and(leaf("C"), leaf("D")))),
        );
        assert_eq!(expr.to_string(), "(A || B) && !(C && D)");
    }
}
