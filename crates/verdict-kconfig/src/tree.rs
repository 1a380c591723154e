//! The parsed Kconfig tree: symbol definitions with every property and its
//! file:line, the enclosing menus, `if` blocks and choices, and an index from
//! each symbol to the entries that select or imply it. Plain data; parsing
//! lives in parser.rs and meaning in reason.rs.

use crate::expr::Expr;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A position in the tree: file relative to the tree root, 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    pub file: Arc<str>,
    pub line: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:{}", self.file, self.line)
    }
}

/// The declared type of a symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolType {
    Unknown,
    Bool,
    Tristate,
    String,
    Int,
    Hex,
}

impl SymbolType {
    /// True for bool and tristate symbols.
    pub fn is_boolean(self) -> bool {
        matches!(self, Self::Bool | Self::Tristate)
    }
}

/// `depends on EXPR` (or an `if EXPR` block condition) and where it is.
#[derive(Debug, Clone)]
pub struct Dependency {
    pub expr: Expr,
    pub location: Location,
}

/// A prompt: the symbol is user-settable when the condition and the
/// dependencies hold.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub text: String,
    pub condition: Option<Expr>,
    pub location: Location,
}

/// `default VALUE [if COND]` (also from `def_bool`/`def_tristate`).
#[derive(Debug, Clone)]
pub struct Default {
    pub value: Expr,
    pub condition: Option<Expr>,
    pub location: Location,
}

/// `select TARGET [if COND]` or `imply TARGET [if COND]`.
#[derive(Debug, Clone)]
pub struct ReverseDependency {
    pub target: String,
    pub condition: Option<Expr>,
    pub location: Location,
}

/// `range LOW HIGH [if COND]`.
#[derive(Debug, Clone)]
pub struct Range {
    pub low: String,
    pub high: String,
    pub condition: Option<Expr>,
    pub location: Location,
}

/// One `config`/`menuconfig` entry. A symbol can have several.
#[derive(Debug, Clone)]
pub struct Definition {
    pub symbol: String,
    pub location: Location,
    pub menuconfig: bool,
    pub symbol_type: SymbolType,
    pub prompts: Vec<Prompt>,
    pub defaults: Vec<Default>,
    pub selects: Vec<ReverseDependency>,
    pub implies: Vec<ReverseDependency>,
    pub depends: Vec<Dependency>,
    pub ranges: Vec<Range>,
    /// The innermost enclosing menu, `if` or choice.
    pub block: Option<usize>,
    /// The choice this symbol is a member of.
    pub choice: Option<usize>,
}

/// What kind of block encloses entries.
#[derive(Debug, Clone)]
pub enum BlockKind {
    Menu { title: String },
    If,
    Choice { choice: usize },
}

/// A menu, `if` block or choice: its conditions apply to every entry inside.
#[derive(Debug, Clone)]
pub struct Block {
    pub kind: BlockKind,
    pub location: Location,
    pub parent: Option<usize>,
    /// This block's entry in [`Kconfig::nodes`].
    pub node: usize,
    /// `depends on` of a menu or choice, the condition of an `if`.
    pub depends: Vec<Dependency>,
    /// `visible if` of a menu: hides prompts but does not force values.
    pub visible_if: Vec<Dependency>,
}

/// A `choice ... endchoice` group.
#[derive(Debug, Clone)]
pub struct Choice {
    pub location: Location,
    pub prompts: Vec<Prompt>,
    pub defaults: Vec<Default>,
    pub optional: bool,
    pub block: usize,
    pub members: Vec<String>,
}

/// One entry of the menu structure, in source order: what `make
/// olddefconfig` walks to write a `.config`.
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// A `config`/`menuconfig` entry (index into `definitions`).
    Definition(usize),
    /// A `menu`, `if` or `choice` (index into `blocks`).
    Block(usize),
    /// A `comment "TEXT"` with its `depends on`.
    Comment { text: String, depends: Vec<Expr> },
}

/// A node of the menu structure and its enclosing block node.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    pub parent: Option<usize>,
}

/// Where a symbol is defined and who selects or implies it.
#[derive(Debug, Clone, Default)]
pub(crate) struct SymbolIndex {
    pub(crate) definitions: Vec<usize>,
    /// (definition index of the selector, index into its `selects`).
    pub(crate) selected_by: Vec<(usize, usize)>,
    pub(crate) implied_by: Vec<(usize, usize)>,
}

/// A whole parsed tree for one architecture.
#[derive(Debug, Clone, Default)]
pub struct Kconfig {
    pub definitions: Vec<Definition>,
    pub blocks: Vec<Block>,
    pub choices: Vec<Choice>,
    /// Number of files read.
    pub files: usize,
    /// The `SRCARCH` the tree was parsed for.
    pub srcarch: String,
    /// Every entry in source order (definitions, blocks, comments).
    pub nodes: Vec<Node>,
    /// The `mainmenu` title, macros expanded.
    pub mainmenu: Option<String>,
    /// The symbol carrying the `modules` attribute (MODULES in Linux).
    pub modules_symbol: Option<String>,
    /// True when every macro was expanded by the kernel's rules (see
    /// [`crate::parse_tree_expanded`]); probes that were not run appear as
    /// words containing [`crate::PROBE_MARKER`].
    pub expanded: bool,
    /// Messages of `$(info,...)`, `$(warning-if,...)`, `$(error-if,...)`.
    pub messages: Vec<String>,
    pub(crate) index: HashMap<String, SymbolIndex>,
}

impl Kconfig {
    /// Builds the symbol index; called once after parsing.
    pub(crate) fn build_index(&mut self) {
        let mut index: HashMap<String, SymbolIndex> = HashMap::new();
        for (position, definition) in self.definitions.iter().enumerate() {
            index
                .entry(definition.symbol.clone())
                .or_default()
                .definitions
                .push(position);
            for (select, reverse) in definition.selects.iter().enumerate() {
                index
                    .entry(reverse.target.clone())
                    .or_default()
                    .selected_by
                    .push((position, select));
            }
            for (imply, reverse) in definition.implies.iter().enumerate() {
                index
                    .entry(reverse.target.clone())
                    .or_default()
                    .implied_by
                    .push((position, imply));
            }
        }
        self.index = index;
    }

    /// True when some `config NAME` entry exists.
    pub fn is_defined(&self, name: &str) -> bool {
        self.index
            .get(name)
            .is_some_and(|entry| !entry.definitions.is_empty())
    }

    /// The definitions of `name`, in tree order.
    pub fn definitions_of(&self, name: &str) -> impl Iterator<Item = &Definition> {
        self.index
            .get(name)
            .into_iter()
            .flat_map(|entry| entry.definitions.iter())
            .map(|&position| &self.definitions[position])
    }

    /// The declared type of `name` (the first typed definition wins).
    pub fn symbol_type(&self, name: &str) -> SymbolType {
        self.definitions_of(name)
            .map(|definition| definition.symbol_type)
            .find(|symbol_type| *symbol_type != SymbolType::Unknown)
            .unwrap_or(SymbolType::Unknown)
    }

    /// Every defined symbol name (unordered).
    pub fn symbol_names(&self) -> impl Iterator<Item = &str> {
        self.index
            .iter()
            .filter(|(_, entry)| !entry.definitions.is_empty())
            .map(|(name, _)| name.as_str())
    }

    pub(crate) fn symbol_index(&self, name: &str) -> Option<&SymbolIndex> {
        self.index.get(name)
    }

    /// The chain of enclosing blocks of a definition, innermost first.
    pub fn enclosing_blocks(&self, definition: &Definition) -> Vec<&Block> {
        let mut blocks = Vec::new();
        let mut current = definition.block;
        while let Some(position) = current {
            let block = &self.blocks[position];
            blocks.push(block);
            current = block.parent;
        }
        blocks
    }
}
