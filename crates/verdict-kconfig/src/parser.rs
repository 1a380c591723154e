//! A line-oriented parser for the Kconfig language
//! (Documentation/kbuild/kconfig-language.rst and kconfig-macro-language.rst):
//! entries, attributes, blocks, `source` in its four spellings with `$(VAR)`
//! expansion, help text skipping and expressions. Macro calls such as
//! `$(cc-option,...)` are kept as opaque operands: this crate never runs the
//! toolchain. File access goes through [`SourceFiles`]; this module does no
//! I/O of its own. Linear in the size of the tree.

use crate::error::KconfigError;
use crate::expr::{Comparison, Expr, Operand};
use crate::load::SourceFiles;
use crate::macros::{Preprocessor, ProbeRunner};
use crate::tree::{
    Block, BlockKind, Choice, Default, Definition, Dependency, Kconfig, Location, Node, NodeKind,
    Prompt, Range, ReverseDependency, SymbolType,
};
use std::collections::HashMap;
use std::sync::Arc;

/// Settings for one parse: the architecture directory and any extra
/// variables (`SRCARCH`, `ARCH`, `srctree` and `KERNELVERSION` are preset).
#[derive(Debug, Clone)]
pub struct ParseOptions {
    pub srcarch: String,
    pub arch: String,
    pub variables: Vec<(String, String)>,
}

impl ParseOptions {
    /// Options for `srcarch` (`x86`, `powerpc`, ...), with ARCH the same.
    pub fn for_srcarch(srcarch: &str) -> Self {
        Self {
            srcarch: srcarch.to_string(),
            arch: srcarch.to_string(),
            variables: Vec::new(),
        }
    }
}

/// Parses the tree whose top file is `root` (usually `Kconfig`), reading
/// every sourced file through `files`.
pub fn parse_tree(
    files: &dyn SourceFiles,
    root: &str,
    options: &ParseOptions,
) -> Result<Kconfig, KconfigError> {
    parse_with(files, root, options, None)
}

/// Parses the tree as the kernel does for evaluation: every `$(...)` is
/// expanded while reading (variables, user functions, the environment in
/// `environment`, `$(shell,...)` through `runner`), so expressions hold only
/// symbols and constants. Probes the runner declines become opaque words
/// (see [`crate::mentions_probe`]).
pub fn parse_tree_expanded(
    files: &dyn SourceFiles,
    root: &str,
    options: &ParseOptions,
    environment: HashMap<String, String>,
    runner: &dyn ProbeRunner,
) -> Result<Kconfig, KconfigError> {
    let mut environment = environment;
    environment
        .entry("SRCARCH".to_string())
        .or_insert_with(|| options.srcarch.clone());
    environment
        .entry("ARCH".to_string())
        .or_insert_with(|| options.arch.clone());
    for (name, value) in &options.variables {
        environment.insert(name.clone(), value.clone());
    }
    let preprocessor = Preprocessor::new(environment, runner);
    parse_with(files, root, options, Some(preprocessor))
}

fn parse_with(
    files: &dyn SourceFiles,
    root: &str,
    options: &ParseOptions,
    macros: Option<Preprocessor<'_>>,
) -> Result<Kconfig, KconfigError> {
    let mut variables = HashMap::new();
    variables.insert("SRCARCH".to_string(), options.srcarch.clone());
    variables.insert("ARCH".to_string(), options.arch.clone());
    variables.insert("srctree".to_string(), ".".to_string());
    variables.insert("KERNELVERSION".to_string(), String::new());
    for (name, value) in &options.variables {
        variables.insert(name.clone(), value.clone());
    }
    let plain = variables.keys().cloned().collect();
    let mut parser = Parser {
        files,
        variables,
        plain,
        tree: Kconfig {
            srcarch: options.srcarch.clone(),
            expanded: macros.is_some(),
            ..Kconfig::default()
        },
        macros,
        stack: Vec::new(),
        current: Current::None,
        depth: 0,
    };
    let text = files
        .read(root)?
        .ok_or_else(|| KconfigError::MissingSource {
            file: "(command line)".to_string(),
            line: 0,
            path: root.to_string(),
        })?;
    parser.parse_file(root, &text)?;
    if let Some(macros) = &parser.macros {
        parser.tree.messages = macros.messages.borrow().clone();
    }
    let mut tree = parser.tree;
    tree.build_index();
    Ok(tree)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Text(String),
    Macro(String),
    Operator(&'static str),
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Self::Word(word) => format!("`{word}`"),
            Self::Text(text) => format!("string \"{text}\""),
            Self::Macro(text) => format!("macro `{text}`"),
            Self::Operator(operator) => format!("`{operator}`"),
        }
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self, Self::Word(found) if found == word)
    }
}

#[derive(Debug, Clone, Copy)]
enum Current {
    None,
    Config(usize),
    Choice(usize),
    Menu(usize),
    Comment(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closer {
    Menu,
    If,
    Choice,
}

impl Closer {
    fn keyword(self) -> &'static str {
        match self {
            Self::Menu => "endmenu",
            Self::If => "endif",
            Self::Choice => "endchoice",
        }
    }
}

#[derive(Debug)]
struct OpenBlock {
    block: usize,
    node: usize,
    closer: Closer,
    location: Location,
}

struct Parser<'a> {
    files: &'a dyn SourceFiles,
    variables: HashMap<String, String>,
    /// Variables whose values involve no function call (so they can be
    /// substituted into expressions and strings); the rest stay opaque.
    plain: std::collections::HashSet<String>,
    tree: Kconfig,
    macros: Option<Preprocessor<'a>>,
    stack: Vec<OpenBlock>,
    current: Current,
    depth: usize,
}

const MAXIMUM_SOURCE_DEPTH: usize = 64;

struct Line<'a> {
    tokens: &'a [Token],
    location: &'a Location,
}

impl Line<'_> {
    fn error(&self, expected: &str, found: Option<&Token>) -> KconfigError {
        KconfigError::Parse {
            file: self.location.file.to_string(),
            line: self.location.line,
            expected: expected.to_string(),
            found: found.map_or_else(|| "end of line".to_string(), Token::describe),
        }
    }
}

fn measure_indent(line: &str) -> Option<usize> {
    let mut width = 0;
    for character in line.chars() {
        match character {
            ' ' => width += 1,
            '\t' => width = (width / 8 + 1) * 8,
            _ => return Some(width),
        }
    }
    None
}

/// Index of the first line after a help block that starts at `start`.
fn skip_help(lines: &[&str], start: usize) -> usize {
    let mut help_indent = None;
    let mut index = start;
    while index < lines.len() {
        match measure_indent(lines[index]) {
            None => {}
            Some(indent) => match help_indent {
                None if indent == 0 => return index,
                None => help_indent = Some(indent),
                Some(first) if indent < first => return index,
                Some(_) => {}
            },
        }
        index += 1;
    }
    index
}

fn is_word_character(character: char) -> bool {
    character.is_ascii_alphanumeric() || matches!(character, '_' | '-' | '.' | '/' | '+')
}

/// Byte length of a `$(...)` starting at `text[0]`, balancing parentheses.
fn macro_length(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (offset, byte) in text.bytes().enumerate() {
        match byte {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(offset + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn parse_error(location: &Location, expected: &str, found: String) -> KconfigError {
    KconfigError::Parse {
        file: location.file.to_string(),
        line: location.line,
        expected: expected.to_string(),
        found,
    }
}

fn tokenize(line: &str, location: &Location) -> Result<Vec<Token>, KconfigError> {
    let mut tokens = Vec::new();
    let bytes = line.as_bytes();
    let mut position = 0;
    while position < bytes.len() {
        let rest = &line[position..];
        let character = rest.chars().next().unwrap_or(' ');
        if character.is_whitespace() {
            position += character.len_utf8();
            continue;
        }
        if character == '#' {
            break;
        }
        if character == '"' || character == '\'' {
            let mut text = String::new();
            let mut offset = 1;
            let mut closed = false;
            while offset < rest.len() {
                let next = rest[offset..].chars().next().unwrap_or(' ');
                if next == character {
                    offset += 1;
                    closed = true;
                    break;
                }
                if next == '\\' {
                    offset += 1;
                    if let Some(escaped) = rest[offset..].chars().next() {
                        text.push(escaped);
                        offset += escaped.len_utf8();
                    }
                    continue;
                }
                if rest[offset..].starts_with("$(") {
                    if let Some(length) = macro_length(&rest[offset + 1..]) {
                        text.push_str(&rest[offset..offset + 1 + length]);
                        offset += 1 + length;
                        continue;
                    }
                }
                text.push(next);
                offset += next.len_utf8();
            }
            if !closed {
                return Err(parse_error(
                    location,
                    &format!("a closing {character} quote"),
                    "end of line".to_string(),
                ));
            }
            tokens.push(Token::Text(text));
            position += offset;
            continue;
        }
        if rest.starts_with("$(") || is_word_character(character) {
            // A word, possibly with macros glued to it (`FOO_$(BAR)`).
            let mut offset = 0;
            let mut has_macro = false;
            loop {
                let tail = &rest[offset..];
                if tail.starts_with("$(") {
                    let length = macro_length(&tail[1..]).ok_or_else(|| {
                        parse_error(location, "a closing `)` of the macro", "end of line".into())
                    })?;
                    offset += 1 + length;
                    has_macro = true;
                } else if let Some(next) = tail.chars().next().filter(|c| is_word_character(*c)) {
                    offset += next.len_utf8();
                } else {
                    break;
                }
            }
            let text = rest[..offset].to_string();
            tokens.push(if has_macro {
                Token::Macro(text)
            } else {
                Token::Word(text)
            });
            position += offset;
            continue;
        }
        let operators: [&'static str; 11] =
            ["&&", "||", "!=", "<=", ">=", "!", "=", "<", ">", "(", ")"];
        match operators
            .iter()
            .find(|operator| rest.starts_with(**operator))
        {
            Some(operator) => {
                tokens.push(Token::Operator(operator));
                position += operator.len();
            }
            None => {
                return Err(parse_error(
                    location,
                    "a symbol, string, operator or keyword",
                    format!("`{character}`"),
                ));
            }
        }
    }
    Ok(tokens)
}

/// Splits `tokens` at a top-level `if`, returning (before, condition).
fn split_condition(tokens: &[Token]) -> (&[Token], Option<&[Token]>) {
    let mut depth = 0i32;
    for (index, token) in tokens.iter().enumerate() {
        match token {
            Token::Operator("(") => depth += 1,
            Token::Operator(")") => depth -= 1,
            Token::Word(word) if word == "if" && depth == 0 => {
                return (&tokens[..index], Some(&tokens[index + 1..]));
            }
            _ => {}
        }
    }
    (tokens, None)
}

struct ExpressionParser<'a> {
    line: &'a Line<'a>,
    tokens: &'a [Token],
    position: usize,
}

impl ExpressionParser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.position)
    }

    fn or(&mut self) -> Result<Expr, KconfigError> {
        let mut left = self.and()?;
        while self.peek() == Some(&Token::Operator("||")) {
            self.position += 1;
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, KconfigError> {
        let mut left = self.unary()?;
        while self.peek() == Some(&Token::Operator("&&")) {
            self.position += 1;
            let right = self.unary()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, KconfigError> {
        if self.peek() == Some(&Token::Operator("!")) {
            self.position += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.peek() == Some(&Token::Operator("(")) {
            self.position += 1;
            let inner = self.or()?;
            if self.peek() != Some(&Token::Operator(")")) {
                return Err(self.line.error("`)` or `&&`/`||`", self.peek()));
            }
            self.position += 1;
            return Ok(inner);
        }
        let left = self.operand()?;
        let comparison = match self.peek() {
            Some(Token::Operator("=")) => Some(Comparison::Equal),
            Some(Token::Operator("!=")) => Some(Comparison::NotEqual),
            Some(Token::Operator("<")) => Some(Comparison::Less),
            Some(Token::Operator("<=")) => Some(Comparison::LessEqual),
            Some(Token::Operator(">")) => Some(Comparison::Greater),
            Some(Token::Operator(">=")) => Some(Comparison::GreaterEqual),
            _ => None,
        };
        match comparison {
            Some(comparison) => {
                self.position += 1;
                let right = self.operand()?;
                Ok(Expr::Compare(comparison, left, right))
            }
            None => Ok(Expr::Leaf(left)),
        }
    }

    fn operand(&mut self) -> Result<Operand, KconfigError> {
        let operand = match self.peek() {
            Some(Token::Word(word)) => Operand::Symbol(word.clone()),
            Some(Token::Text(text)) => Operand::Text(text.clone()),
            Some(Token::Macro(text)) => Operand::Macro(text.clone()),
            other => return Err(self.line.error("a symbol, string or `(`", other)),
        };
        self.position += 1;
        Ok(operand)
    }
}

fn parse_expression(line: &Line<'_>, tokens: &[Token]) -> Result<Expr, KconfigError> {
    let mut parser = ExpressionParser {
        line,
        tokens,
        position: 0,
    };
    let expr = parser.or()?;
    if parser.position != tokens.len() {
        return Err(line.error("`&&`, `||`, `if` or end of line", parser.peek()));
    }
    Ok(expr)
}

fn parse_condition(
    line: &Line<'_>,
    tokens: Option<&[Token]>,
) -> Result<Option<Expr>, KconfigError> {
    tokens
        .map(|tokens| parse_expression(line, tokens))
        .transpose()
}

fn symbol_type(keyword: &str) -> Option<SymbolType> {
    Some(match keyword {
        "bool" | "boolean" | "def_bool" => SymbolType::Bool,
        "tristate" | "def_tristate" => SymbolType::Tristate,
        "string" => SymbolType::String,
        "int" => SymbolType::Int,
        "hex" => SymbolType::Hex,
        _ => return None,
    })
}

fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// Recognises `NAME := value`, `NAME = value` and `NAME += value`.
fn assignment(line: &str) -> Option<(&str, &str, &str)> {
    let trimmed = line.trim_start();
    let name_length = trimmed
        .find(|character: char| {
            !(character.is_ascii_alphanumeric() || matches!(character, '_' | '-'))
        })
        .unwrap_or(trimmed.len());
    if name_length == 0 {
        return None;
    }
    let name = &trimmed[..name_length];
    let rest = trimmed[name_length..].trim_start();
    for operator in [":=", "+=", "="] {
        if let Some(value) = rest.strip_prefix(operator) {
            return Some((name, operator, value.trim()));
        }
    }
    None
}

impl Parser<'_> {
    /// Expands `$(NAME)` references to known plain variables; function
    /// calls and unknown names expand to nothing, as in the kernel when the
    /// environment does not define them.
    fn expand(&self, text: &str, depth: usize) -> String {
        if let Some(macros) = &self.macros {
            return macros.expand(text);
        }
        let mut output = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("$(") {
            output.push_str(&rest[..start]);
            let tail = &rest[start..];
            let Some(length) = macro_length(&tail[1..]) else {
                output.push_str(tail);
                return output;
            };
            let inner = &tail[2..length];
            if !inner.contains(',') && depth < 16 {
                let name = self.expand(inner, depth + 1);
                if let Some(value) = self.variables.get(name.trim()) {
                    output.push_str(&self.expand(value, depth + 1));
                }
            }
            rest = &tail[1 + length..];
        }
        output.push_str(rest);
        output
    }

    /// True when every `$(...)` in `text` names a plain variable.
    fn references_only_plain(&self, text: &str) -> bool {
        let mut rest = text;
        while let Some(start) = rest.find("$(") {
            let tail = &rest[start..];
            let Some(length) = macro_length(&tail[1..]) else {
                return false;
            };
            if !self.plain.contains(tail[2..length].trim()) {
                return false;
            }
            rest = &tail[1 + length..];
        }
        true
    }

    /// Replaces top-level `$(NAME)` references to plain variables by their
    /// values, as the kernel's preprocessor does, leaving function calls
    /// and opaque variables for the evaluator to treat as probes.
    fn substitute_plain(&self, line: &str) -> String {
        let mut output = String::new();
        let mut rest = line;
        while let Some(start) = rest.find("$(") {
            output.push_str(&rest[..start]);
            let tail = &rest[start..];
            let Some(length) = macro_length(&tail[1..]) else {
                output.push_str(tail);
                return output;
            };
            let name = tail[2..length].trim();
            match self
                .variables
                .get(name)
                .filter(|_| self.plain.contains(name))
            {
                Some(value) => output.push_str(&self.expand(value, 0)),
                None => output.push_str(&tail[..1 + length]),
            }
            rest = &tail[1 + length..];
        }
        output.push_str(rest);
        output
    }

    fn parse_file(&mut self, path: &str, text: &str) -> Result<(), KconfigError> {
        self.tree.files += 1;
        let file: Arc<str> = Arc::from(path);
        let opened_here = self.stack.len();
        let lines: Vec<&str> = text.lines().collect();
        let mut index = 0;
        while index < lines.len() {
            let location = Location {
                file: file.clone(),
                line: u32::try_from(index + 1).unwrap_or(u32::MAX),
            };
            let mut logical = lines[index].to_string();
            index += 1;
            while logical.ends_with('\\') && index < lines.len() {
                logical.pop();
                logical.push_str(lines[index]);
                index += 1;
            }
            let trimmed = logical.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if let Some(macros) = &mut self.macros {
                macros.position = (path.to_string(), location.line);
                if let Some((name, operator, value)) = assignment(trimmed) {
                    macros.assign(name, operator, value);
                    continue;
                }
            }
            if trimmed.starts_with("$(") {
                if let Some(macros) = &self.macros {
                    // A bare macro call such as $(error-if,...): expanded for
                    // its messages; the result is normally empty.
                    if !macros.expand(trimmed).trim().is_empty() {
                        return Err(parse_error(
                            &location,
                            "a Kconfig keyword",
                            format!("`{trimmed}` (a macro expanding to text)"),
                        ));
                    }
                }
                continue;
            }
            if let Some((name, operator, value)) = assignment(trimmed) {
                let is_plain = self.references_only_plain(value)
                    && (operator != "+=" || self.plain.contains(name));
                let value = match operator {
                    ":=" => self.expand(value, 0),
                    "+=" => {
                        let previous = self.variables.get(name).cloned().unwrap_or_default();
                        format!("{previous} {value}")
                    }
                    _ => value.to_string(),
                };
                if is_plain {
                    self.plain.insert(name.to_string());
                } else {
                    self.plain.remove(name);
                }
                self.variables.insert(name.to_string(), value);
                continue;
            }
            let logical = if logical.contains("$(") && self.macros.is_none() {
                self.substitute_plain(&logical)
            } else {
                logical
            };
            let mut tokens = tokenize(&logical, &location)?;
            if let Some(macros) = &self.macros {
                tokens = tokens
                    .into_iter()
                    .filter_map(|token| match token {
                        Token::Macro(text) => {
                            let word = macros.expand(&text);
                            (!word.is_empty()).then_some(Token::Word(word))
                        }
                        Token::Text(text) if text.contains('$') => {
                            Some(Token::Text(macros.expand(&text)))
                        }
                        other => Some(other),
                    })
                    .collect();
            }
            let line = Line {
                tokens: &tokens,
                location: &location,
            };
            let Some(Token::Word(keyword)) = tokens.first() else {
                return Err(line.error("a Kconfig keyword", tokens.first()));
            };
            if keyword == "help" || keyword == "---help---" {
                if tokens.len() > 1 {
                    return Err(line.error("end of line after `help`", tokens.get(1)));
                }
                index = skip_help(&lines, index);
                continue;
            }
            self.statement(keyword, &line)?;
        }
        if self.stack.len() > opened_here {
            let open = &self.stack[self.stack.len() - 1];
            return Err(KconfigError::Parse {
                file: path.to_string(),
                line: u32::try_from(lines.len()).unwrap_or(u32::MAX),
                expected: format!(
                    "`{}` closing the block opened at {}",
                    open.closer.keyword(),
                    open.location
                ),
                found: "end of file".to_string(),
            });
        }
        Ok(())
    }

    fn push_node(&mut self, kind: NodeKind) -> usize {
        let node = self.tree.nodes.len();
        self.tree.nodes.push(Node {
            kind,
            parent: self.stack.last().map(|open| open.node),
        });
        node
    }

    fn open_block(&mut self, kind: BlockKind, closer: Closer, location: &Location) -> usize {
        let block = self.tree.blocks.len();
        let node = self.push_node(NodeKind::Block(block));
        self.tree.blocks.push(Block {
            kind,
            location: location.clone(),
            node,
            parent: self.stack.last().map(|open| open.block),
            depends: Vec::new(),
            visible_if: Vec::new(),
        });
        self.stack.push(OpenBlock {
            block,
            node,
            closer,
            location: location.clone(),
        });
        block
    }

    fn close_block(&mut self, closer: Closer, line: &Line<'_>) -> Result<(), KconfigError> {
        if line.tokens.len() > 1 {
            return Err(line.error("end of line", line.tokens.get(1)));
        }
        match self.stack.last() {
            Some(open) if open.closer == closer => {
                self.stack.pop();
                self.current = Current::None;
                Ok(())
            }
            Some(open) => Err(line.error(
                &format!(
                    "`{}` for the block opened at {}",
                    open.closer.keyword(),
                    open.location
                ),
                line.tokens.first(),
            )),
            None => Err(line.error("an entry (no block is open)", line.tokens.first())),
        }
    }

    fn single_name(&self, line: &Line<'_>) -> Result<String, KconfigError> {
        match line.tokens.get(1) {
            Some(Token::Word(name)) if line.tokens.len() == 2 => Ok(name.clone()),
            Some(Token::Macro(name)) if line.tokens.len() == 2 => Ok(self.expand(name, 0)),
            Some(Token::Word(_) | Token::Macro(_)) => {
                Err(line.error("end of line after the symbol name", line.tokens.get(2)))
            }
            other => Err(line.error("a symbol name", other)),
        }
    }

    fn single_text(line: &Line<'_>) -> Result<String, KconfigError> {
        match line.tokens.get(1) {
            Some(Token::Text(text)) if line.tokens.len() == 2 => Ok(text.clone()),
            Some(Token::Text(_)) => Err(line.error("end of line", line.tokens.get(2))),
            other => Err(line.error("a quoted string", other)),
        }
    }

    fn statement(&mut self, keyword: &str, line: &Line<'_>) -> Result<(), KconfigError> {
        match keyword {
            "config" | "menuconfig" => {
                let symbol = self.single_name(line)?;
                let choice = self
                    .stack
                    .iter()
                    .rev()
                    .find(|open| open.closer != Closer::If)
                    .and_then(|open| match self.tree.blocks[open.block].kind {
                        BlockKind::Choice { choice } => Some(choice),
                        _ => None,
                    });
                if let Some(choice) = choice {
                    self.tree.choices[choice].members.push(symbol.clone());
                }
                self.push_node(NodeKind::Definition(self.tree.definitions.len()));
                self.current = Current::Config(self.tree.definitions.len());
                self.tree.definitions.push(Definition {
                    symbol,
                    location: line.location.clone(),
                    menuconfig: keyword == "menuconfig",
                    symbol_type: SymbolType::Unknown,
                    prompts: Vec::new(),
                    defaults: Vec::new(),
                    selects: Vec::new(),
                    implies: Vec::new(),
                    depends: Vec::new(),
                    ranges: Vec::new(),
                    block: self.stack.last().map(|open| open.block),
                    choice,
                });
            }
            "choice" => {
                if line.tokens.len() > 2 {
                    return Err(line.error("end of line", line.tokens.get(2)));
                }
                let choice = self.tree.choices.len();
                let block =
                    self.open_block(BlockKind::Choice { choice }, Closer::Choice, line.location);
                self.tree.choices.push(Choice {
                    location: line.location.clone(),
                    prompts: Vec::new(),
                    defaults: Vec::new(),
                    optional: false,
                    block,
                    members: Vec::new(),
                });
                self.current = Current::Choice(choice);
            }
            "endchoice" => self.close_block(Closer::Choice, line)?,
            "menu" => {
                let title = Self::single_text(line)?;
                let block = self.open_block(BlockKind::Menu { title }, Closer::Menu, line.location);
                self.current = Current::Menu(block);
            }
            "endmenu" => self.close_block(Closer::Menu, line)?,
            "if" => {
                let expr = parse_expression(line, &line.tokens[1..])?;
                let block = self.open_block(BlockKind::If, Closer::If, line.location);
                self.tree.blocks[block].depends.push(Dependency {
                    expr,
                    location: line.location.clone(),
                });
                self.current = Current::None;
            }
            "endif" => self.close_block(Closer::If, line)?,
            "comment" => {
                let text = Self::single_text(line)?;
                let node = self.push_node(NodeKind::Comment {
                    text,
                    depends: Vec::new(),
                });
                self.current = Current::Comment(node);
            }
            "mainmenu" => {
                let text = Self::single_text(line)?;
                let text = if text.contains("$(") && self.macros.is_none() {
                    self.expand(&text, 0)
                } else {
                    text
                };
                self.tree.mainmenu = Some(text);
                self.current = Current::None;
            }
            "source" | "rsource" | "osource" | "orsource" => self.source(keyword, line)?,
            _ => self.attribute(keyword, line)?,
        }
        Ok(())
    }

    fn source(&mut self, keyword: &str, line: &Line<'_>) -> Result<(), KconfigError> {
        let raw = Self::single_text(line)?;
        let expanded = self.expand(&raw, 0);
        let relative = keyword.starts_with('r') || keyword.starts_with("or");
        let path = if relative {
            let directory = line
                .location
                .file
                .rsplit_once('/')
                .map_or("", |(directory, _)| directory);
            normalize(&format!("{directory}/{expanded}"))
        } else {
            normalize(&expanded)
        };
        let optional = keyword.starts_with('o');
        self.current = Current::None;
        if self.depth >= MAXIMUM_SOURCE_DEPTH {
            return Err(line.error("at most 64 levels of nested `source`", line.tokens.get(1)));
        }
        match self.files.read(&path)? {
            Some(text) => {
                self.depth += 1;
                let result = self.parse_file(&path, &text);
                self.depth -= 1;
                self.current = Current::None;
                result
            }
            None if optional => Ok(()),
            None => Err(KconfigError::MissingSource {
                file: line.location.file.to_string(),
                line: line.location.line,
                path,
            }),
        }
    }

    fn definition(
        &mut self,
        line: &Line<'_>,
        keyword: &str,
    ) -> Result<&mut Definition, KconfigError> {
        match self.current {
            Current::Config(index) => Ok(&mut self.tree.definitions[index]),
            _ => Err(line.error(
                &format!("`{keyword}` only inside a config entry"),
                line.tokens.first(),
            )),
        }
    }

    /// One attribute line of the current entry: the keyword picks the step.
    fn attribute(&mut self, keyword: &str, line: &Line<'_>) -> Result<(), KconfigError> {
        if let Some(symbol_type) = symbol_type(keyword) {
            return self.type_attribute(keyword, symbol_type, line);
        }
        match keyword {
            "prompt" => self.prompt_attribute(line),
            "default" => self.default_attribute(line),
            "depends" => self.depends_attribute(line),
            "visible" => self.visible_attribute(line),
            "select" | "imply" => self.reverse_attribute(keyword, line),
            "range" => self.range_attribute(line),
            "optional" => match self.current {
                Current::Choice(index) => {
                    self.tree.choices[index].optional = true;
                    Ok(())
                }
                _ => Err(line.error("`optional` only inside a choice", line.tokens.first())),
            },
            "option" | "modules" | "transitional" | "allnoconfig_y" | "defconfig_list" => {
                self.option_attribute(keyword, line)
            }
            _ => Err(line.error(
                "an entry (config, menuconfig, choice, menu, if, comment, source) or an attribute (bool, tristate, string, int, hex, prompt, default, depends on, select, imply, range, help)",
                line.tokens.first(),
            )),
        }
    }

    /// `bool`, `tristate`, `string`, `int`, `hex` with an optional prompt,
    /// or `def_bool` / `def_tristate` with a default.
    fn type_attribute(
        &mut self,
        keyword: &str,
        symbol_type: SymbolType,
        line: &Line<'_>,
    ) -> Result<(), KconfigError> {
        let location = line.location.clone();
        let (before, condition) = split_condition(&line.tokens[1..]);
        let condition = parse_condition(line, condition)?;
        if keyword.starts_with("def_") {
            let value = parse_expression(line, before)?;
            let definition = self.definition(line, keyword)?;
            definition.symbol_type = symbol_type;
            definition.defaults.push(Default {
                value,
                condition,
                location,
            });
            return Ok(());
        }
        let prompt = match before {
            [] => None,
            [Token::Text(text)] => Some(Prompt {
                text: text.clone(),
                condition,
                location,
            }),
            [Token::Text(_), extra, ..] => {
                return Err(line.error("`if` or end of line", Some(extra)));
            }
            [other, ..] => {
                return Err(line.error("a prompt string or end of line", Some(other)));
            }
        };
        match self.current {
            Current::Config(index) => {
                let definition = &mut self.tree.definitions[index];
                definition.symbol_type = symbol_type;
                definition.prompts.extend(prompt);
            }
            Current::Choice(index) => self.tree.choices[index].prompts.extend(prompt),
            _ => {
                return Err(line.error(
                    &format!("`{keyword}` only inside a config or choice entry"),
                    line.tokens.first(),
                ));
            }
        }
        Ok(())
    }

    fn prompt_attribute(&mut self, line: &Line<'_>) -> Result<(), KconfigError> {
        let (before, condition) = split_condition(&line.tokens[1..]);
        let text = match before {
            [Token::Text(text)] => text.clone(),
            [Token::Text(_), extra, ..] => {
                return Err(line.error("`if` or end of line", Some(extra)));
            }
            other => return Err(line.error("a quoted prompt", other.first())),
        };
        let prompt = Prompt {
            text,
            condition: parse_condition(line, condition)?,
            location: line.location.clone(),
        };
        match self.current {
            Current::Config(index) => self.tree.definitions[index].prompts.push(prompt),
            Current::Choice(index) => self.tree.choices[index].prompts.push(prompt),
            _ => {
                return Err(line.error(
                    "`prompt` only inside a config or choice",
                    line.tokens.first(),
                ));
            }
        }
        Ok(())
    }

    fn default_attribute(&mut self, line: &Line<'_>) -> Result<(), KconfigError> {
        let (before, condition) = split_condition(&line.tokens[1..]);
        let default = Default {
            value: parse_expression(line, before)?,
            condition: parse_condition(line, condition)?,
            location: line.location.clone(),
        };
        match self.current {
            Current::Config(index) => self.tree.definitions[index].defaults.push(default),
            Current::Choice(index) => self.tree.choices[index].defaults.push(default),
            _ => {
                return Err(line.error(
                    "`default` only inside a config or choice",
                    line.tokens.first(),
                ));
            }
        }
        Ok(())
    }

    fn depends_attribute(&mut self, line: &Line<'_>) -> Result<(), KconfigError> {
        let arguments = &line.tokens[1..];
        if !arguments.first().is_some_and(|token| token.is_word("on")) {
            return Err(line.error("`on` after `depends`", arguments.first()));
        }
        let dependency = Dependency {
            expr: parse_expression(line, &arguments[1..])?,
            location: line.location.clone(),
        };
        match self.current {
            Current::Config(index) => self.tree.definitions[index].depends.push(dependency),
            Current::Choice(index) => {
                let block = self.tree.choices[index].block;
                self.tree.blocks[block].depends.push(dependency);
            }
            Current::Menu(block) => self.tree.blocks[block].depends.push(dependency),
            Current::Comment(node) => {
                if let NodeKind::Comment { depends, .. } = &mut self.tree.nodes[node].kind {
                    depends.push(dependency.expr);
                }
            }
            Current::None => {
                return Err(line.error("`depends on` only inside an entry", line.tokens.first()));
            }
        }
        Ok(())
    }

    fn visible_attribute(&mut self, line: &Line<'_>) -> Result<(), KconfigError> {
        let arguments = &line.tokens[1..];
        if !arguments.first().is_some_and(|token| token.is_word("if")) {
            return Err(line.error("`if` after `visible`", arguments.first()));
        }
        let dependency = Dependency {
            expr: parse_expression(line, &arguments[1..])?,
            location: line.location.clone(),
        };
        match self.current {
            Current::Menu(block) => {
                self.tree.blocks[block].visible_if.push(dependency);
                Ok(())
            }
            _ => Err(line.error("`visible if` only inside a menu", line.tokens.first())),
        }
    }

    /// `select` or `imply`.
    fn reverse_attribute(&mut self, keyword: &str, line: &Line<'_>) -> Result<(), KconfigError> {
        let (before, condition) = split_condition(&line.tokens[1..]);
        let target = match before {
            [Token::Word(name)] => name.clone(),
            [Token::Word(_), extra, ..] => {
                return Err(line.error("`if` or end of line", Some(extra)));
            }
            other => return Err(line.error("a symbol name", other.first())),
        };
        let reverse = ReverseDependency {
            target,
            condition: parse_condition(line, condition)?,
            location: line.location.clone(),
        };
        let definition = self.definition(line, keyword)?;
        if keyword == "select" {
            definition.selects.push(reverse);
        } else {
            definition.implies.push(reverse);
        }
        Ok(())
    }

    fn range_attribute(&mut self, line: &Line<'_>) -> Result<(), KconfigError> {
        let (before, condition) = split_condition(&line.tokens[1..]);
        let bound = |token: &Token| match token {
            Token::Word(word) | Token::Macro(word) => Some(word.clone()),
            _ => None,
        };
        let (low, high) = match before {
            [low, high] => match (bound(low), bound(high)) {
                (Some(low), Some(high)) => (low, high),
                (None, _) => return Err(line.error("a number or symbol", Some(low))),
                (_, None) => return Err(line.error("a number or symbol", Some(high))),
            },
            other => {
                return Err(line.error("two bounds after `range`", other.get(other.len().min(2))));
            }
        };
        let range = Range {
            low,
            high,
            condition: parse_condition(line, condition)?,
            location: line.location.clone(),
        };
        self.definition(line, "range")?.ranges.push(range);
        Ok(())
    }

    /// `option ...`, `modules`, `transitional`, `allnoconfig_y`,
    /// `defconfig_list`: only `modules` matters to the evaluator.
    fn option_attribute(&mut self, keyword: &str, line: &Line<'_>) -> Result<(), KconfigError> {
        if let (Current::Config(index), "modules") = (self.current, keyword) {
            self.tree.modules_symbol = Some(self.tree.definitions[index].symbol.clone());
        }
        if matches!(self.current, Current::None) {
            return Err(line.error(
                &format!("`{keyword}` only inside an entry"),
                line.tokens.first(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::MemoryFiles;

    fn parse(files: &[(&str, &str)]) -> Result<Kconfig, KconfigError> {
        let memory = MemoryFiles::new(files);
        parse_tree(&memory, "Kconfig", &ParseOptions::for_srcarch("x86"))
    }

    #[test]
    fn parses_entries_attributes_and_blocks() {
        let tree = parse(&[(
            "Kconfig",
            "mainmenu \"Test\"\n\
             config A\n\
             \tbool \"A prompt\" if B\n\
             \tdepends on B && !(C || D = \"x\")\n\
             \tdefault y if B\n\
             \tselect E if C\n\
             \timply F\n\
             \thelp\n\
             \t  some help\n\
             \n\
             \t  config NOT_A_CONFIG in help\n\
             menu \"M\"\n\
             \tvisible if B\n\
             \tdepends on C\n\
             if D\n\
             config E\n\
             \tdef_tristate m if \\\n\
             \t\tC\n\
             \trange 1 10\n\
             endif\n\
             endmenu\n",
        )])
        .unwrap();
        assert_eq!(tree.definitions.len(), 2);
        let a = &tree.definitions[0];
        assert_eq!(a.prompts[0].text, "A prompt");
        assert_eq!(a.depends[0].expr.to_string(), "B && !(C || D = \"x\")");
        assert_eq!(a.selects[0].target, "E");
        assert_eq!(a.implies[0].target, "F");
        let e = &tree.definitions[1];
        assert_eq!(e.location.line, 16);
        assert_eq!(e.symbol_type, SymbolType::Tristate);
        assert_eq!(e.defaults[0].condition.as_ref().unwrap().to_string(), "C");
        assert_eq!(tree.enclosing_blocks(e).len(), 2);
        assert_eq!(tree.blocks[0].visible_if.len(), 1);
        assert!(!tree.is_defined("NOT_A_CONFIG"));
    }

    #[test]
    fn sources_with_variables_and_relative_paths() {
        let tree = parse(&[
            ("Kconfig", "ARCHDIR := arch/$(SRCARCH)\nsource \"$(ARCHDIR)/Kconfig\"\nosource \"missing/Kconfig\"\n"),
            ("arch/x86/Kconfig", "config X86\n\tdef_bool y\nrsource \"sub/Kconfig\"\n"),
            ("arch/x86/sub/Kconfig", "config SUB\n\tbool\n"),
        ])
        .unwrap();
        assert_eq!(tree.files, 3);
        let sub = tree.definitions_of("SUB").next().unwrap();
        assert_eq!(sub.location.to_string(), "arch/x86/sub/Kconfig:1");
    }

    #[test]
    fn errors_name_file_line_and_expectation() {
        let error = parse(&[("Kconfig", "config A\n\tbool\n\tdepends on (B &&\n")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "parse Kconfig:3: expected a symbol, string or `(`, found end of line"
        );
        let error = parse(&[("Kconfig", "menu \"x\"\nconfig A\n\tbool\nendif\n")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "parse Kconfig:4: expected `endmenu` for the block opened at Kconfig:1, found `endif`"
        );
        let error = parse(&[("Kconfig", "if A\n")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "parse Kconfig:1: expected `endif` closing the block opened at Kconfig:1, found end of file"
        );
        let error = parse(&[("Kconfig", "config A\n\tfrobnicate y\n")]).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("parse Kconfig:2: expected an entry"),
            "{error}"
        );
        let error = parse(&[("Kconfig", "source \"nowhere/Kconfig\"\n")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "read Kconfig:1: sourced file `nowhere/Kconfig` does not exist"
        );
    }

    #[test]
    fn macros_are_opaque_operands() {
        let tree = parse(&[(
            "Kconfig",
            "cc-option = $(success,$(CC) -Werror $(1))\n$(error-if,y,oops)\n\
             config CC_HAS_X\n\tdef_bool $(cc-option,-mfoo \"bar\")\n\
             config S\n\tstring\n\tdefault \"$(shell,echo \"hi\")\"\n",
        )])
        .unwrap();
        let default = &tree.definitions_of("CC_HAS_X").next().unwrap().defaults[0];
        assert_eq!(default.value.to_string(), "$(cc-option,-mfoo \"bar\")");
    }

    #[test]
    fn plain_variables_are_substituted_and_probes_are_not() {
        let tree = parse(&[(
            "Kconfig",
            "cc-info := $(shell,cc --version)\ncc-name := $(shell,set -- $(cc-info) && echo $1)\nword := BAR\n\
             config A\n\tdef_bool \"$(ARCH)\" != \"i386\"\n\
             config B\n\tint\n\tdefault $(cc-name) if A\n\tdepends on $(word)\n",
        )])
        .unwrap();
        let a = &tree.definitions_of("A").next().unwrap().defaults[0];
        assert_eq!(a.value.to_string(), "\"x86\" != \"i386\"");
        let b = tree.definitions_of("B").next().unwrap();
        assert_eq!(b.defaults[0].value.to_string(), "$(cc-name)");
        assert_eq!(b.depends[0].expr.to_string(), "BAR");
    }

    #[test]
    fn choice_members_are_recorded() {
        let tree = parse(&[(
            "Kconfig",
            "choice\n\tprompt \"Model\"\n\tdefault ONE\nconfig ONE\n\tbool \"one\"\nif X\nconfig TWO\n\tbool \"two\"\nendif\nendchoice\n",
        )])
        .unwrap();
        assert_eq!(tree.choices[0].members, vec!["ONE", "TWO"]);
        assert_eq!(tree.definitions_of("TWO").next().unwrap().choice, Some(0));
    }
}
