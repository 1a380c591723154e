//! The Kconfig evaluator: computes every symbol's value the way the kernel's
//! scripts/kconfig does (menu.c `menu_finalize` for dependency propagation,
//! symbol.c `sym_calc_value` / `sym_calc_visibility` / `sym_calc_choice`,
//! expr.c `expr_calc_value` with tristate order n < m < y, confdata.c
//! `conf_read_simple` and `conf_write`), so that [`Evaluation::write_config`]
//! is byte-identical to `make olddefconfig`. Works on a tree parsed with
//! [`crate::parse_tree_expanded`] and on config text; no files, no processes.
//! Probes that were not run (see [`crate::mentions_probe`]) are answered
//! from the config's own value of the symbol they define.

use crate::expr::{Comparison, Expr, Operand, Tristate};
use crate::macros::mentions_probe;
use crate::tree::{BlockKind, Choice, Definition, Kconfig, NodeKind, SymbolType};
use std::collections::HashMap;
use std::rc::Rc;

/// An expression over the evaluator's symbol indices (the parsed [`Expr`]
/// with every operand interned), as scripts/kconfig's `struct expr`.
#[derive(Debug)]
enum SymbolExpression {
    Symbol(usize),
    Compare(Comparison, usize, usize),
    Not(Rc<SymbolExpression>),
    And(Rc<SymbolExpression>, Rc<SymbolExpression>),
    Or(Rc<SymbolExpression>, Rc<SymbolExpression>),
}

/// A dependency or visibility; absent means always (`y`), as a NULL
/// `struct expr *` in scripts/kconfig.
type Condition = Option<Rc<SymbolExpression>>;

fn and(left: Condition, right: Condition) -> Condition {
    match (left, right) {
        (None, other) | (other, None) => other,
        (Some(left), Some(right)) => Some(Rc::new(SymbolExpression::And(left, right))),
    }
}

fn or(left: Condition, right: Condition) -> Condition {
    match (left, right) {
        (None, other) | (other, None) => other,
        (Some(left), Some(right)) => Some(Rc::new(SymbolExpression::Or(left, right))),
    }
}

/// A user value read from the config.
#[derive(Debug, Clone)]
enum UserValue {
    Tristate(Tristate),
    Text(String),
}

#[derive(Debug, Default)]
struct Symbol {
    name: String,
    symbol_type: Option<SymbolType>,
    defined: bool,
    constant: Option<Tristate>,
    is_choice: bool,
    /// A quoted constant (`"text"` in the tree).
    quoted: bool,
    members: Vec<usize>,
    choice_of: Option<usize>,
    prompts: Vec<Condition>,
    defaults: Vec<(Rc<SymbolExpression>, Condition)>,
    ranges: Vec<(usize, usize, Condition)>,
    dir_dep: Condition,
    rev_dep: Condition,
    implied: Condition,
    /// (selector, its term of `rev_dep`), for explanations.
    selected_by: Vec<(usize, Rc<SymbolExpression>)>,
    implied_by: Vec<(usize, Rc<SymbolExpression>)>,
    /// Defined through a probe that was not run.
    probe: bool,
    // State.
    valid: bool,
    tristate: Tristate,
    text: String,
    choice_pick: Option<usize>,
    visible: Tristate,
    dir_dep_value: Tristate,
    rev_dep_value: Tristate,
    implied_value: Tristate,
    write: bool,
    user: Option<UserValue>,
    user_choice: Option<usize>,
}

#[derive(Debug)]
enum Entry {
    Symbol(usize),
    Menu {
        title: String,
        visibility: Condition,
        visible: Condition,
        children: Vec<Entry>,
    },
    Comment {
        text: String,
        visible: Condition,
    },
    Group(Vec<Entry>),
}

/// A tree with every symbol's value computed for one config.
#[derive(Debug)]
pub struct Evaluation {
    symbols: Vec<Symbol>,
    names: HashMap<String, usize>,
    entries: Vec<Entry>,
    modules: usize,
    modules_value: Tristate,
    mainmenu: String,
    yes: usize,
    module: usize,
    no: usize,
}

const NO: Tristate = Tristate::No;

impl Evaluation {
    /// Reads `config_text` (a `.config`) into the tree and computes every
    /// value, as `conf --olddefconfig` does before writing.
    pub fn new(tree: &Kconfig, config_text: &str) -> Self {
        let mut evaluation = Self::build(tree);
        evaluation.read(config_text);
        evaluation
    }

    fn intern(&mut self, name: &str, quoted: bool) -> usize {
        match name {
            "y" => return self.yes,
            "m" => return self.module,
            "n" => return self.no,
            _ => {}
        }
        let key = if quoted {
            format!("\"{name}")
        } else {
            name.to_string()
        };
        if let Some(&index) = self.names.get(&key) {
            return index;
        }
        let index = self.symbols.len();
        // A probe that was not run counts as passed where it guards a prompt
        // or a default; the symbols it defines take the config's value.
        let tristate = if mentions_probe(name) {
            Tristate::Yes
        } else {
            NO
        };
        self.symbols.push(Symbol {
            name: name.to_string(),
            text: name.to_string(),
            valid: true,
            tristate,
            quoted,
            ..Symbol::default()
        });
        self.names.insert(key, index);
        index
    }

    fn operand(&mut self, operand: &Operand) -> usize {
        match operand {
            Operand::Symbol(name) => self.intern(name, false),
            Operand::Text(text) | Operand::Macro(text) => self.intern(text, true),
        }
    }

    fn convert(&mut self, expr: &Expr) -> Rc<SymbolExpression> {
        Rc::new(match expr {
            Expr::Leaf(operand) => SymbolExpression::Symbol(self.operand(operand)),
            Expr::Compare(comparison, left, right) => {
                SymbolExpression::Compare(*comparison, self.operand(left), self.operand(right))
            }
            Expr::Not(inner) => SymbolExpression::Not(self.convert(inner)),
            Expr::And(left, right) => {
                SymbolExpression::And(self.convert(left), self.convert(right))
            }
            Expr::Or(left, right) => SymbolExpression::Or(self.convert(left), self.convert(right)),
        })
    }

    fn convert_all<'e>(&mut self, exprs: impl IntoIterator<Item = &'e Expr>) -> Condition {
        let mut result = None;
        for expr in exprs {
            let converted = self.convert(expr);
            result = and(result, Some(converted));
        }
        result
    }

    /// rewrite_m(): `m` becomes `m && MODULES` in dependencies.
    fn rewrite_m(&self, expr: &Condition) -> Condition {
        let expr = expr.as_ref()?;
        Some(match &**expr {
            SymbolExpression::Symbol(symbol) if *symbol == self.module => {
                Rc::new(SymbolExpression::And(
                    expr.clone(),
                    Rc::new(SymbolExpression::Symbol(self.modules)),
                ))
            }
            SymbolExpression::Not(inner) => {
                Rc::new(SymbolExpression::Not(self.rewrite_m(&Some(inner.clone()))?))
            }
            SymbolExpression::And(left, right) => Rc::new(SymbolExpression::And(
                self.rewrite_m(&Some(left.clone()))?,
                self.rewrite_m(&Some(right.clone()))?,
            )),
            SymbolExpression::Or(left, right) => Rc::new(SymbolExpression::Or(
                self.rewrite_m(&Some(left.clone()))?,
                self.rewrite_m(&Some(right.clone()))?,
            )),
            _ => expr.clone(),
        })
    }

    /// expr_trans_bool(): `FOO != n` becomes `FOO` for a tristate FOO.
    fn trans_bool(&self, expr: &Condition) -> Condition {
        let expr = expr.as_ref()?;
        Some(match &**expr {
            SymbolExpression::Compare(Comparison::NotEqual, left, right)
                if *right == self.no
                    && self.symbols[*left].symbol_type == Some(SymbolType::Tristate) =>
            {
                Rc::new(SymbolExpression::Symbol(*left))
            }
            SymbolExpression::Not(inner) => Rc::new(SymbolExpression::Not(
                self.trans_bool(&Some(inner.clone()))?,
            )),
            SymbolExpression::And(left, right) => Rc::new(SymbolExpression::And(
                self.trans_bool(&Some(left.clone()))?,
                self.trans_bool(&Some(right.clone()))?,
            )),
            SymbolExpression::Or(left, right) => Rc::new(SymbolExpression::Or(
                self.trans_bool(&Some(left.clone()))?,
                self.trans_bool(&Some(right.clone()))?,
            )),
            _ => expr.clone(),
        })
    }

    fn build(tree: &Kconfig) -> Self {
        let mut evaluation = Self {
            symbols: Vec::new(),
            names: HashMap::new(),
            entries: Vec::new(),
            modules: 0,
            modules_value: NO,
            mainmenu: tree.mainmenu.clone().unwrap_or_default(),
            yes: 0,
            module: 1,
            no: 2,
        };
        for (name, value) in [("y", Tristate::Yes), ("m", Tristate::Module), ("n", NO)] {
            evaluation.symbols.push(Symbol {
                name: name.to_string(),
                text: name.to_string(),
                symbol_type: Some(SymbolType::Tristate),
                constant: Some(value),
                tristate: value,
                valid: true,
                ..Symbol::default()
            });
        }
        // Symbols and their types (the first typed definition wins).
        for definition in &tree.definitions {
            let index = evaluation.intern(&definition.symbol, false);
            let symbol = &mut evaluation.symbols[index];
            symbol.defined = true;
            symbol.valid = false;
            if symbol.symbol_type.is_none() && definition.symbol_type != SymbolType::Unknown {
                symbol.symbol_type = Some(definition.symbol_type);
            }
        }
        evaluation.modules =
            evaluation.intern(tree.modules_symbol.as_deref().unwrap_or("MODULES"), false);
        // Choices become symbols of their own.
        let mut choice_symbols = Vec::new();
        for choice in &tree.choices {
            let index = evaluation.symbols.len();
            let mut symbol_type = None;
            for member in &choice.members {
                let member = evaluation.intern(member, false);
                if symbol_type.is_none() {
                    symbol_type = evaluation.symbols[member].symbol_type;
                }
            }
            evaluation.symbols.push(Symbol {
                name: format!("<choice {}>", choice.location),
                is_choice: true,
                symbol_type: Some(symbol_type.unwrap_or(SymbolType::Bool)),
                ..Symbol::default()
            });
            choice_symbols.push(index);
        }
        for (position, choice) in tree.choices.iter().enumerate() {
            let choice_index = choice_symbols[position];
            for member in &choice.members {
                let member = evaluation.intern(member, false);
                if evaluation.symbols[member].symbol_type.is_none() {
                    evaluation.symbols[member].symbol_type =
                        evaluation.symbols[choice_index].symbol_type;
                }
                evaluation.symbols[member].choice_of = Some(choice_index);
                if !evaluation.symbols[choice_index].members.contains(&member) {
                    evaluation.symbols[choice_index].members.push(member);
                }
            }
        }
        // Children of every node, in source order.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); tree.nodes.len()];
        let mut roots = Vec::new();
        for (index, node) in tree.nodes.iter().enumerate() {
            match node.parent {
                Some(parent) => children[parent].push(index),
                None => roots.push(index),
            }
        }
        let context = Context {
            tree,
            children: &children,
            choice_symbols: &choice_symbols,
        };
        let mut visibilities = Vec::new();
        evaluation.entries = evaluation.finalize(&context, &roots, &None, &mut visibilities);
        evaluation
    }

    /// menu_finalize(): propagates the dependencies of menus, `if` blocks
    /// and choices to every entry below them and builds the entries
    /// `conf_write` walks. One step per kind of node.
    fn finalize(
        &mut self,
        context: &Context<'_>,
        nodes: &[usize],
        parent_dependency: &Condition,
        visibilities: &mut Vec<Condition>,
    ) -> Vec<Entry> {
        let mut entries = Vec::new();
        for &node in nodes {
            let upper_visibility = visibilities
                .iter()
                .fold(None, |all, condition| and(all, condition.clone()));
            let scope = Scope {
                node,
                parent_dependency,
                upper_visibility: &upper_visibility,
            };
            match &context.tree.nodes[node].kind {
                NodeKind::Definition(position) => {
                    self.finalize_definition(
                        context,
                        &scope,
                        *position,
                        visibilities,
                        &mut entries,
                    );
                }
                NodeKind::Comment { text, depends } => {
                    let own = self.convert_all(depends.iter());
                    let visible = and(parent_dependency.clone(), self.rewrite_m(&own));
                    entries.push(Entry::Comment {
                        text: text.clone(),
                        visible,
                    });
                }
                NodeKind::Block(block) => {
                    self.finalize_block(context, &scope, *block, visibilities, &mut entries);
                }
            }
        }
        entries
    }

    /// A `config` entry: its prompts, defaults, ranges, selects and implies
    /// under its dependencies, then the entries nested below it.
    fn finalize_definition(
        &mut self,
        context: &Context<'_>,
        scope: &Scope<'_>,
        position: usize,
        visibilities: &mut Vec<Condition>,
        entries: &mut Vec<Entry>,
    ) {
        let definition = &context.tree.definitions[position];
        let index = self.intern(&definition.symbol, false);
        let own = self.convert_all(definition.depends.iter().map(|dependency| &dependency.expr));
        let entry = DefinitionEntry {
            index,
            base_dependency: and(scope.parent_dependency.clone(), self.rewrite_m(&own)),
            bool_like: self.symbols[index].symbol_type != Some(SymbolType::Tristate),
        };
        let mut probe = self.add_prompts(&entry, definition, scope.upper_visibility);
        probe |= self.add_defaults(&entry, definition);
        self.add_ranges(&entry, definition);
        self.add_reverse_dependencies(&entry, definition);
        probe |= definition
            .depends
            .iter()
            .any(|dependency| mentions_probe(&dependency.expr.to_string()));
        let symbol = &mut self.symbols[index];
        symbol.probe |= probe;
        if symbol.choice_of.is_none() {
            symbol.dir_dep = or(symbol.dir_dep.take(), entry.base_dependency);
        }
        entries.push(Entry::Symbol(index));
        let children = &context.children[scope.node];
        if !children.is_empty() {
            let inner = self.finalize(context, children, scope.parent_dependency, visibilities);
            entries.push(Entry::Group(inner));
        }
    }

    /// `condition` under the entry's dependencies, as a property's
    /// visibility (`m` rewritten, `!= n` dropped for bool-like symbols).
    fn property_visibility(&self, entry: &DefinitionEntry, condition: Condition) -> Condition {
        let visible = and(entry.base_dependency.clone(), self.rewrite_m(&condition));
        if entry.bool_like {
            self.trans_bool(&visible)
        } else {
            visible
        }
    }

    fn optional_condition(&mut self, condition: Option<&Expr>) -> Condition {
        condition.map(|condition| self.convert(condition))
    }

    /// The prompts; whether one is behind a toolchain probe.
    fn add_prompts(
        &mut self,
        entry: &DefinitionEntry,
        definition: &Definition,
        upper_visibility: &Condition,
    ) -> bool {
        let mut probe = false;
        for prompt in &definition.prompts {
            probe |= prompt
                .condition
                .as_ref()
                .is_some_and(|condition| mentions_probe(&condition.to_string()));
            self.push_prompt(entry, prompt.condition.as_ref(), upper_visibility);
        }
        probe
    }

    /// A prompt's visibility: its condition under the menus' `visible if`
    /// and the entry's dependencies.
    fn push_prompt(
        &mut self,
        entry: &DefinitionEntry,
        condition: Option<&Expr>,
        upper_visibility: &Condition,
    ) {
        let condition = self.optional_condition(condition);
        let condition = and(condition, upper_visibility.clone());
        let visible = self.property_visibility(entry, condition);
        self.symbols[entry.index].prompts.push(visible);
    }

    /// A default's value and when it applies.
    fn push_default(&mut self, entry: &DefinitionEntry, value: &Expr, condition: Option<&Expr>) {
        let value = self.convert(value);
        let condition = self.optional_condition(condition);
        let visible = self.property_visibility(entry, condition);
        self.symbols[entry.index].defaults.push((value, visible));
    }

    /// The defaults; whether one mentions a toolchain probe.
    fn add_defaults(&mut self, entry: &DefinitionEntry, definition: &Definition) -> bool {
        let mut probe = false;
        for default in &definition.defaults {
            probe |= mentions_probe(&default.value.to_string())
                || default
                    .condition
                    .as_ref()
                    .is_some_and(|condition| mentions_probe(&condition.to_string()));
            self.push_default(entry, &default.value, default.condition.as_ref());
        }
        probe
    }

    fn add_ranges(&mut self, entry: &DefinitionEntry, definition: &Definition) {
        for range in &definition.ranges {
            let low = self.intern(&range.low, false);
            let high = self.intern(&range.high, false);
            let condition = self.optional_condition(range.condition.as_ref());
            let visible = self.property_visibility(entry, condition);
            self.symbols[entry.index].ranges.push((low, high, visible));
        }
    }

    /// `select` and `imply`: a term `SYMBOL && visibility` added to the
    /// target's reverse dependency or implication.
    fn add_reverse_dependencies(&mut self, entry: &DefinitionEntry, definition: &Definition) {
        for (reverses, implied) in [(&definition.selects, false), (&definition.implies, true)] {
            for reverse in reverses {
                let target = self.intern(&reverse.target, false);
                let condition = self.optional_condition(reverse.condition.as_ref());
                let visible = self.property_visibility(entry, condition);
                let term = and(
                    Some(Rc::new(SymbolExpression::Symbol(entry.index))),
                    visible,
                );
                let probe_condition = reverse
                    .condition
                    .as_ref()
                    .is_some_and(|condition| mentions_probe(&condition.to_string()));
                let symbol = &mut self.symbols[target];
                symbol.probe |= probe_condition;
                if let Some(term) = &term {
                    if implied {
                        symbol.implied_by.push((entry.index, term.clone()));
                    } else {
                        symbol.selected_by.push((entry.index, term.clone()));
                    }
                }
                if implied {
                    symbol.implied = or(symbol.implied.take(), term);
                } else {
                    symbol.rev_dep = or(symbol.rev_dep.take(), term);
                }
            }
        }
    }

    /// An `if` block, a `menu` or a `choice`: its dependencies become the
    /// parent dependency of everything inside.
    fn finalize_block(
        &mut self,
        context: &Context<'_>,
        scope: &Scope<'_>,
        block: usize,
        visibilities: &mut Vec<Condition>,
        entries: &mut Vec<Entry>,
    ) {
        let block = &context.tree.blocks[block];
        let own = self.convert_all(block.depends.iter().map(|dependency| &dependency.expr));
        let base_dependency = and(scope.parent_dependency.clone(), self.rewrite_m(&own));
        let children = &context.children[scope.node];
        match &block.kind {
            BlockKind::If => {
                let inner = self.finalize(context, children, &base_dependency, visibilities);
                entries.push(Entry::Group(inner));
            }
            BlockKind::Menu { title } => {
                let visibility =
                    self.convert_all(block.visible_if.iter().map(|dependency| &dependency.expr));
                visibilities.push(visibility.clone());
                let inner = self.finalize(context, children, &base_dependency, visibilities);
                visibilities.pop();
                entries.push(Entry::Menu {
                    title: title.clone(),
                    visibility,
                    visible: base_dependency,
                    children: inner,
                });
            }
            BlockKind::Choice { choice } => {
                let choice_index = context.choice_symbols[*choice];
                self.add_choice_properties(
                    &context.tree.choices[*choice],
                    choice_index,
                    &base_dependency,
                    scope.upper_visibility,
                );
                let choice_dependency = Some(Rc::new(SymbolExpression::Symbol(choice_index)));
                let inner = self.finalize(context, children, &choice_dependency, visibilities);
                entries.push(Entry::Symbol(choice_index));
                entries.push(Entry::Group(inner));
            }
        }
    }

    /// A choice's prompts and defaults, and for a non-optional choice the
    /// reverse dependency `visibility && m` that keeps it from being n.
    fn add_choice_properties(
        &mut self,
        definition: &Choice,
        choice_index: usize,
        base_dependency: &Condition,
        upper_visibility: &Condition,
    ) {
        let entry = DefinitionEntry {
            index: choice_index,
            base_dependency: base_dependency.clone(),
            bool_like: self.symbols[choice_index].symbol_type != Some(SymbolType::Tristate),
        };
        for prompt in &definition.prompts {
            self.push_prompt(&entry, prompt.condition.as_ref(), upper_visibility);
        }
        for default in &definition.defaults {
            self.push_default(&entry, &default.value, default.condition.as_ref());
        }
        if !definition.optional {
            if let Some(first) = self.symbols[choice_index].prompts.first().cloned() {
                let term = and(first, Some(Rc::new(SymbolExpression::Symbol(self.module))));
                let symbol = &mut self.symbols[choice_index];
                symbol.rev_dep = or(symbol.rev_dep.take(), term);
            }
        }
    }

    /// conf_read_simple() followed by conf_read()'s value checks.
    fn read(&mut self, text: &str) {
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let (name, value) = if let Some(rest) = line.strip_prefix("# CONFIG_") {
                let Some((name, tail)) = rest.split_once(' ') else {
                    continue;
                };
                if !tail.starts_with("is not set") {
                    continue;
                }
                (name, "n")
            } else if let Some(rest) = line.strip_prefix("CONFIG_") {
                let Some((name, value)) = rest.split_once('=') else {
                    continue;
                };
                (name, value)
            } else {
                continue;
            };
            let Some(&index) = self.names.get(name) else {
                continue;
            };
            if !self.symbols[index].defined && self.symbols[index].choice_of.is_none() {
                continue;
            }
            let symbol_type = self.symbols[index].symbol_type;
            let user = match symbol_type {
                Some(SymbolType::Tristate | SymbolType::Bool) => match value.as_bytes().first() {
                    Some(b'm') if symbol_type == Some(SymbolType::Tristate) => {
                        UserValue::Tristate(Tristate::Module)
                    }
                    Some(b'y') => UserValue::Tristate(Tristate::Yes),
                    Some(b'n') => UserValue::Tristate(NO),
                    _ => continue,
                },
                Some(SymbolType::String) => {
                    let Some(rest) = value.strip_prefix('"') else {
                        continue;
                    };
                    let mut text = String::new();
                    let mut characters = rest.chars();
                    let mut closed = false;
                    while let Some(character) = characters.next() {
                        match character {
                            '"' => {
                                closed = true;
                                break;
                            }
                            '\\' => {
                                if let Some(next) = characters.next() {
                                    text.push(next);
                                }
                            }
                            other => text.push(other),
                        }
                    }
                    if !closed {
                        continue;
                    }
                    UserValue::Text(text)
                }
                Some(SymbolType::Int) if valid_int(value) => UserValue::Text(value.to_string()),
                Some(SymbolType::Hex) if valid_hex(value) => UserValue::Text(value.to_string()),
                _ => continue,
            };
            if let (Some(choice), UserValue::Tristate(tristate)) =
                (self.symbols[index].choice_of, &user)
            {
                if *tristate == Tristate::Yes {
                    self.symbols[choice].user_choice = Some(index);
                }
            }
            self.symbols[index].user = Some(user);
        }
        let modules = self.modules;
        self.calculate(modules);
        for index in 0..self.symbols.len() {
            self.calculate(index);
        }
        // Out-of-range int/hex values are dropped and recomputed on write.
        for index in 0..self.symbols.len() {
            let symbol = &self.symbols[index];
            if !symbol.defined {
                continue;
            }
            if let Some(UserValue::Text(value)) = symbol.user.clone() {
                if !self.within_range(index, &value) {
                    self.symbols[index].user = None;
                    self.symbols[index].valid = false;
                }
            }
        }
    }

    fn within_range(&mut self, index: usize, value: &str) -> bool {
        let base = match self.symbols[index].symbol_type {
            Some(SymbolType::Int) => 10,
            Some(SymbolType::Hex) => 16,
            _ => return true,
        };
        let Some((low, high)) = self.range(index) else {
            return true;
        };
        let value = parse_number(value, base);
        value >= self.range_value(low, base) && value <= self.range_value(high, base)
    }

    fn range(&mut self, index: usize) -> Option<(usize, usize)> {
        let ranges: Vec<(usize, usize, Condition)> = self.symbols[index]
            .ranges
            .iter()
            .map(|(low, high, visible)| (*low, *high, visible.clone()))
            .collect();
        for (low, high, visible) in ranges {
            if self.value_of(&visible) != NO {
                return Some((low, high));
            }
        }
        None
    }

    fn range_value(&mut self, index: usize, base: u32) -> i64 {
        self.calculate(index);
        parse_number(&self.symbols[index].text, base)
    }

    fn value_of(&mut self, expr: &Condition) -> Tristate {
        match expr {
            None => Tristate::Yes,
            Some(expr) => self.evaluate(expr),
        }
    }

    /// expr_calc_value().
    fn evaluate(&mut self, expr: &Rc<SymbolExpression>) -> Tristate {
        match &**expr {
            SymbolExpression::Symbol(index) => {
                self.calculate(*index);
                self.symbols[*index].tristate
            }
            SymbolExpression::Not(inner) => self.evaluate(inner).negate(),
            SymbolExpression::And(left, right) => self.evaluate(left).min(self.evaluate(right)),
            SymbolExpression::Or(left, right) => self.evaluate(left).max(self.evaluate(right)),
            SymbolExpression::Compare(comparison, left, right) => {
                self.calculate(*left);
                self.calculate(*right);
                let left_text = self.string_value(*left);
                let right_text = self.string_value(*right);
                let left_type = self.symbols[*left].symbol_type;
                let right_type = self.symbols[*right].symbol_type;
                let both_strings =
                    left_type == Some(SymbolType::String) && right_type == Some(SymbolType::String);
                let (left_kind, right_kind) = if both_strings {
                    (Kind::Text, Kind::Text)
                } else {
                    (
                        classify(&left_text, left_type),
                        classify(&right_text, right_type),
                    )
                };
                let ordering = match (left_kind, right_kind) {
                    (Kind::Text, _) | (_, Kind::Text) => {
                        left_text.as_bytes().cmp(right_text.as_bytes())
                    }
                    (Kind::Unsigned(left), Kind::Unsigned(right)) => left.cmp(&right),
                    (Kind::Unsigned(left), Kind::Signed(right)) => left.cmp(&(right as u64)),
                    (Kind::Signed(left), Kind::Unsigned(right)) => (left as u64).cmp(&right),
                    (Kind::Signed(left), Kind::Signed(right)) => left.cmp(&right),
                };
                let result = match comparison {
                    Comparison::Equal => ordering.is_eq(),
                    Comparison::NotEqual => ordering.is_ne(),
                    Comparison::Less => ordering.is_lt(),
                    Comparison::LessEqual => ordering.is_le(),
                    Comparison::Greater => ordering.is_gt(),
                    Comparison::GreaterEqual => ordering.is_ge(),
                };
                if result { Tristate::Yes } else { NO }
            }
        }
    }

    /// sym_get_type().
    fn effective_type(&self, index: usize) -> Option<SymbolType> {
        let symbol = &self.symbols[index];
        let mut symbol_type = symbol.symbol_type;
        if symbol_type == Some(SymbolType::Tristate)
            && symbol.constant.is_none()
            && ((symbol.choice_of.is_some() && symbol.visible == Tristate::Yes)
                || self.modules_value == NO)
        {
            symbol_type = Some(SymbolType::Bool);
        }
        symbol_type
    }

    /// sym_get_string_value(). `m` reads as "m" whether or not MODULES is
    /// set (scripts/kconfig of Linux 6.1): with modules off no symbol is m,
    /// so `FOO = m` is n and `FOO != m` is y, as the kernel computes them.
    fn string_value(&self, index: usize) -> String {
        let symbol = &self.symbols[index];
        match symbol.symbol_type {
            Some(SymbolType::Bool | SymbolType::Tristate) => match symbol.tristate {
                Tristate::No => "n".to_string(),
                Tristate::Module => "m".to_string(),
                Tristate::Yes => "y".to_string(),
            },
            _ => symbol.text.clone(),
        }
    }

    /// sym_calc_visibility().
    fn calculate_visibility(&mut self, index: usize) {
        let prompts = self.symbols[index].prompts.clone();
        let choice = self.symbols[index].choice_of;
        let symbol_type = self.symbols[index].symbol_type;
        let mut visible = NO;
        for prompt in &prompts {
            let mut value = self.value_of(prompt);
            if let Some(choice) = choice {
                if symbol_type == Some(SymbolType::Tristate)
                    && value == Tristate::Module
                    && self.symbols[choice].tristate == Tristate::Yes
                {
                    value = NO;
                }
            }
            visible = visible.max(value);
        }
        if visible == Tristate::Module
            && (symbol_type != Some(SymbolType::Tristate) || self.modules_value == NO)
        {
            visible = Tristate::Yes;
        }
        self.symbols[index].visible = visible;
        if choice.is_some() {
            return;
        }
        let is_bool = self.effective_type(index) == Some(SymbolType::Bool);
        let promote = |value: Tristate| {
            if value == Tristate::Module && is_bool {
                Tristate::Yes
            } else {
                value
            }
        };
        let dir_dep = self.symbols[index].dir_dep.clone();
        let value = promote(self.value_of(&dir_dep));
        self.symbols[index].dir_dep_value = value;
        let rev_dep = self.symbols[index].rev_dep.clone();
        let value = if rev_dep.is_some() {
            promote(self.value_of(&rev_dep))
        } else {
            NO
        };
        self.symbols[index].rev_dep_value = value;
        let implied = self.symbols[index].implied.clone();
        let value = if implied.is_some() {
            promote(self.value_of(&implied))
        } else {
            NO
        };
        self.symbols[index].implied_value = value;
    }

    /// The first default whose condition holds (sym_get_default_prop()).
    fn default_property(&mut self, index: usize) -> Option<(Rc<SymbolExpression>, Tristate)> {
        let defaults = self.symbols[index].defaults.clone();
        for (value, visible) in defaults {
            let condition = self.value_of(&visible);
            if condition != NO {
                return Some((value, condition));
            }
        }
        None
    }

    /// sym_calc_value().
    fn calculate(&mut self, index: usize) {
        if self.symbols[index].valid {
            return;
        }
        self.symbols[index].valid = true;
        let symbol_type = self.symbols[index].symbol_type;
        let initial = match symbol_type {
            Some(SymbolType::Int) => "0",
            Some(SymbolType::Hex) => "0x0",
            Some(SymbolType::String) => "",
            Some(SymbolType::Bool | SymbolType::Tristate) => "n",
            _ => {
                let name = self.symbols[index].name.clone();
                self.symbols[index].text = name;
                self.symbols[index].tristate = NO;
                return;
            }
        };
        let mut tristate = NO;
        let mut text = initial.to_string();
        self.symbols[index].write = false;
        self.calculate_visibility(index);
        let visible = self.symbols[index].visible;
        let mut write = visible != NO;
        self.symbols[index].tristate = NO;
        self.symbols[index].text = text.clone();
        let user = self.symbols[index].user.clone();
        let probe_answer = self.symbols[index].probe && self.symbols[index].prompts.is_empty();
        match self.effective_type(index) {
            Some(SymbolType::Bool | SymbolType::Tristate) => {
                let choice = self.symbols[index].choice_of;
                let probe_absent = self.symbols[index].probe && user.is_none() && choice.is_none();
                if probe_absent {
                    // A probe that was not run, for a symbol the config
                    // does not mention: the kernel computed it as n.
                    write = false;
                } else if let (Some(choice), Tristate::Yes) = (choice, visible) {
                    tristate = if self.symbols[choice].choice_pick == Some(index) {
                        Tristate::Yes
                    } else {
                        NO
                    };
                } else {
                    let mut done = false;
                    if visible != NO {
                        if let Some(UserValue::Tristate(value)) = user {
                            tristate = value.min(visible);
                            done = true;
                        }
                    }
                    if !done {
                        if self.symbols[index].rev_dep_value != NO {
                            write = true;
                        }
                        if !self.symbols[index].is_choice {
                            if probe_answer {
                                // Absent from the config: the probe said n.
                                if let Some(UserValue::Tristate(value)) = user {
                                    tristate = value;
                                    write = true;
                                }
                            } else if let Some((value, condition)) = self.default_property(index) {
                                tristate = self.evaluate(&value).min(condition);
                                if tristate != NO {
                                    write = true;
                                }
                            }
                            let implied = self.symbols[index].implied_value;
                            if implied != NO {
                                write = true;
                                tristate = tristate.max(implied);
                                tristate = tristate.min(self.symbols[index].dir_dep_value);
                            }
                        }
                    }
                    tristate = tristate.max(self.symbols[index].rev_dep_value);
                }
                if tristate == Tristate::Module
                    && self.effective_type(index) == Some(SymbolType::Bool)
                {
                    tristate = Tristate::Yes;
                }
            }
            Some(SymbolType::String | SymbolType::Int | SymbolType::Hex) => {
                let mut done = false;
                if visible != NO {
                    if let Some(UserValue::Text(value)) = &user {
                        text = value.clone();
                        done = true;
                    }
                }
                if !done && probe_answer {
                    if let Some(UserValue::Text(value)) = &user {
                        text = value.clone();
                        write = true;
                        done = true;
                    }
                }
                if !done {
                    if let Some((value, _)) = self.default_property(index) {
                        if let SymbolExpression::Symbol(source) = &*value {
                            write = true;
                            self.calculate(*source);
                            text = self.symbols[*source].text.clone();
                        }
                    }
                }
            }
            _ => {}
        }
        let symbol = &mut self.symbols[index];
        symbol.tristate = tristate;
        symbol.text = text;
        symbol.write = write;
        if symbol.is_choice && tristate == Tristate::Yes {
            let pick = self.calculate_choice(index);
            self.symbols[index].choice_pick = pick;
            if pick.is_none() {
                self.symbols[index].tristate = NO;
            }
        }
        self.validate_range(index);
        if index == self.modules {
            self.modules_value = self.symbols[index].tristate;
        }
        if self.symbols[index].is_choice {
            let members = self.symbols[index].members.clone();
            let choice_write = self.symbols[index].write;
            for member in members {
                if choice_write && self.symbols[member].visible != NO {
                    self.symbols[member].write = true;
                }
            }
            // Choices themselves are never written (SYMBOL_NO_WRITE).
            self.symbols[index].write = false;
        }
    }

    fn validate_range(&mut self, index: usize) {
        let base = match self.symbols[index].symbol_type {
            Some(SymbolType::Int) => 10,
            Some(SymbolType::Hex) => 16,
            _ => return,
        };
        let Some((low, high)) = self.range(index) else {
            return;
        };
        let value = parse_number(&self.symbols[index].text, base);
        let mut bound = low;
        if value >= self.range_value(low, base) {
            bound = high;
            if value <= self.range_value(high, base) {
                return;
            }
        }
        self.symbols[index].text = self.symbols[bound].text.clone();
    }

    /// sym_calc_choice() and sym_choice_default().
    fn calculate_choice(&mut self, index: usize) -> Option<usize> {
        let members = self.symbols[index].members.clone();
        for &member in &members {
            self.calculate_visibility(member);
        }
        if let Some(pick) = self.symbols[index].user_choice {
            if self.symbols[pick].visible != NO {
                return Some(pick);
            }
        }
        let defaults = self.symbols[index].defaults.clone();
        for (value, visible) in defaults {
            if self.value_of(&visible) == NO {
                continue;
            }
            if let SymbolExpression::Symbol(target) = &*value {
                if self.symbols[*target].visible != NO {
                    return Some(*target);
                }
            }
        }
        members
            .into_iter()
            .find(|member| self.symbols[*member].visible != NO)
    }

    /// The `.config` text `conf_write()` produces.
    pub fn write_config(&mut self) -> String {
        let mut output = format!(
            "#\n# Automatically generated file; DO NOT EDIT.\n# {}\n#\n",
            self.mainmenu
        );
        let entries = std::mem::take(&mut self.entries);
        let mut written = vec![false; self.symbols.len()];
        let mut need_newline = false;
        self.write_entries(&entries, &mut output, &mut written, &mut need_newline);
        self.entries = entries;
        output
    }

    fn write_entries(
        &mut self,
        entries: &[Entry],
        output: &mut String,
        written: &mut [bool],
        need_newline: &mut bool,
    ) {
        for entry in entries {
            match entry {
                Entry::Symbol(index) => {
                    let index = *index;
                    if self.symbols[index].is_choice || written[index] {
                        continue;
                    }
                    self.calculate(index);
                    if !self.symbols[index].write {
                        continue;
                    }
                    if *need_newline {
                        output.push('\n');
                        *need_newline = false;
                    }
                    written[index] = true;
                    self.print_symbol(index, output);
                }
                Entry::Comment { text, visible } => {
                    if self.value_of(visible) != NO {
                        output.push_str(&format!("\n#\n# {text}\n#\n"));
                        *need_newline = false;
                    }
                }
                Entry::Menu {
                    title,
                    visibility,
                    visible,
                    children,
                } => {
                    let shown = (visibility.is_none() || self.value_of(visibility) != NO)
                        && self.value_of(visible) != NO;
                    if shown {
                        output.push_str(&format!("\n#\n# {title}\n#\n"));
                        *need_newline = false;
                    }
                    self.write_entries(children, output, written, need_newline);
                    if shown {
                        output.push_str(&format!("# end of {title}\n"));
                        *need_newline = true;
                    }
                }
                Entry::Group(children) => {
                    self.write_entries(children, output, written, need_newline);
                }
            }
        }
    }

    fn print_symbol(&self, index: usize, output: &mut String) {
        let symbol = &self.symbols[index];
        let value = self.string_value(index);
        let name = &symbol.name;
        match symbol.symbol_type {
            Some(SymbolType::Bool | SymbolType::Tristate) if value == "n" => {
                output.push_str(&format!("# CONFIG_{name} is not set\n"));
            }
            Some(SymbolType::String) => {
                let mut escaped = String::from("\"");
                for character in value.chars() {
                    if character == '"' || character == '\\' {
                        escaped.push('\\');
                    }
                    escaped.push(character);
                }
                escaped.push('"');
                output.push_str(&format!("CONFIG_{name}={escaped}\n"));
            }
            Some(_) => output.push_str(&format!("CONFIG_{name}={value}\n")),
            None => {}
        }
    }

    /// The bool and tristate symbols whose prompt is visible (the ones a
    /// user can flip), with their computed value, in tree order.
    pub fn user_visible_symbols(&mut self) -> Vec<(String, Tristate)> {
        let mut result = Vec::new();
        for index in 0..self.symbols.len() {
            if !self.symbols[index].defined
                || !matches!(
                    self.symbols[index].symbol_type,
                    Some(SymbolType::Bool | SymbolType::Tristate)
                )
            {
                continue;
            }
            self.calculate(index);
            if self.symbols[index].visible != NO {
                result.push((
                    self.symbols[index].name.clone(),
                    self.symbols[index].tristate,
                ));
            }
        }
        result
    }

    fn render(&self, expr: &SymbolExpression) -> String {
        let name = |index: usize| {
            let symbol = &self.symbols[index];
            if symbol.quoted {
                format!("\"{}\"", symbol.name)
            } else {
                symbol.name.clone()
            }
        };
        let child = |inner: &SymbolExpression, parent_rank: u8| {
            let rank = match inner {
                SymbolExpression::Or(..) => 1,
                SymbolExpression::And(..) => 2,
                _ => 3,
            };
            let text = self.render(inner);
            if rank < parent_rank {
                format!("({text})")
            } else {
                text
            }
        };
        match expr {
            SymbolExpression::Symbol(index) => name(*index),
            SymbolExpression::Compare(comparison, left, right) => {
                let operator = match comparison {
                    Comparison::Equal => "=",
                    Comparison::NotEqual => "!=",
                    Comparison::Less => "<",
                    Comparison::LessEqual => "<=",
                    Comparison::Greater => ">",
                    Comparison::GreaterEqual => ">=",
                };
                format!("{} {operator} {}", name(*left), name(*right))
            }
            SymbolExpression::Not(inner) => format!("!{}", child(inner, 3)),
            SymbolExpression::And(left, right) => {
                format!("{} && {}", child(left, 2), child(right, 2))
            }
            SymbolExpression::Or(left, right) => {
                format!("{} || {}", child(left, 1), child(right, 1))
            }
        }
    }

    /// The conjuncts of an expression that are `n` (what blocks it), with
    /// the value of each symbol they name.
    fn unmet(&mut self, expr: &Rc<SymbolExpression>, out: &mut Vec<String>) {
        match &**expr {
            SymbolExpression::And(left, right) => {
                self.unmet(left, out);
                self.unmet(right, out);
            }
            _ => {
                if self.evaluate(expr) == NO {
                    let text = match &**expr {
                        SymbolExpression::Symbol(index) => {
                            format!("{} is n", self.symbols[*index].name)
                        }
                        SymbolExpression::Compare(_, left, _) => format!(
                            "needs {}, but {} is {}",
                            self.render(expr),
                            self.symbols[*left].name,
                            self.string_value(*left)
                        ),
                        _ => format!("{} is n", self.render(expr)),
                    };
                    if !out.contains(&text) {
                        out.push(text);
                    }
                }
            }
        }
    }

    /// One line saying why `name` has its computed value, from the
    /// evaluation itself: the user's value (and a cap at m), a choice pick
    /// or fallback, selects, implies, the default used, or the unmet
    /// dependency that hides the prompt. `None` for unknown names.
    pub fn reason(&mut self, name: &str) -> Option<String> {
        let index = *self.names.get(name)?;
        if !self.symbols[index].defined {
            return None;
        }
        self.calculate(index);
        let value = self.string_value(index);
        let symbol_type = self.symbols[index].symbol_type;
        let visible = self.symbols[index].visible;
        let user = self.symbols[index].user.clone();
        if let Some(choice) = self.symbols[index].choice_of {
            if self.symbols[choice].tristate == Tristate::Yes {
                let pick = self.symbols[choice].choice_pick;
                let user_pick = self.symbols[choice].user_choice;
                let pick_name = pick.map_or_else(
                    || "nothing".to_string(),
                    |pick| self.symbols[pick].name.clone(),
                );
                let text = match (pick == Some(index), user_pick) {
                    (true, Some(chosen)) if chosen == index => "chosen in the config".to_string(),
                    (true, Some(chosen)) => {
                        let mut blockers = Vec::new();
                        for prompt in self.symbols[chosen].prompts.clone().into_iter().flatten() {
                            self.unmet(&prompt, &mut blockers);
                        }
                        format!(
                            "choice fallback: the config chose {}, which is not available ({}), so the choice falls back to {name}",
                            self.symbols[chosen].name,
                            blockers.join(", ")
                        )
                    }
                    (true, None) => "the choice's default".to_string(),
                    (false, _) if visible == NO => {
                        let mut blockers = Vec::new();
                        for prompt in self.symbols[index].prompts.clone().into_iter().flatten() {
                            self.unmet(&prompt, &mut blockers);
                        }
                        format!(
                            "not available in its choice ({}); the choice picks {pick_name}",
                            blockers.join(", ")
                        )
                    }
                    (false, _) => format!("its choice picks {pick_name}"),
                };
                return Some(format!("{value}: {text}"));
            }
            return Some(format!("{value}: its choice is off"));
        }
        let mut parts = Vec::new();
        let is_boolean = matches!(symbol_type, Some(SymbolType::Bool | SymbolType::Tristate));
        let user_used = visible != NO
            && matches!(
                (&user, is_boolean),
                (Some(UserValue::Tristate(_)), true) | (Some(UserValue::Text(_)), false)
            );
        if user_used {
            match &user {
                Some(UserValue::Tristate(Tristate::Yes)) if visible == Tristate::Module => {
                    parts.push(
                        "set to y in the config, capped at m because its dependencies allow only m"
                            .to_string(),
                    );
                }
                Some(UserValue::Tristate(wanted)) => {
                    parts.push(format!("set to {} in the config", wanted.letter()));
                }
                Some(UserValue::Text(text)) => parts.push(format!("set to {text} in the config")),
                None => {}
            }
        } else {
            if self.symbols[index].probe
                && (user.is_none() || self.symbols[index].prompts.is_empty())
            {
                parts.push(format!(
                    "a toolchain probe that was not run (use --run-probes to run it); the config's answer is {value}"
                ));
                return Some(format!("{value}: {}", parts.join("; ")));
            }
            if self.symbols[index].prompts.is_empty() {
                parts.push("no prompt: computed from defaults and selects".to_string());
            } else if visible == NO {
                let mut blockers = Vec::new();
                for prompt in self.symbols[index].prompts.clone().into_iter().flatten() {
                    self.unmet(&prompt, &mut blockers);
                }
                parts.push(format!("prompt hidden: {}", blockers.join(", ")));
                if let Some(UserValue::Tristate(wanted)) = &user {
                    if wanted.letter() != value {
                        parts.push(format!("the config's {} is ignored", wanted.letter()));
                    }
                }
            } else {
                parts.push("not set in the config".to_string());
            }
            if is_boolean {
                let mut default_text = None;
                for (value_expr, visible_expr) in self.symbols[index].defaults.clone() {
                    if self.value_of(&visible_expr) != NO {
                        let result = self.evaluate(&value_expr);
                        default_text = Some(format!(
                            "default {} = {}",
                            self.render(&value_expr),
                            result.letter()
                        ));
                        break;
                    }
                }
                parts.push(default_text.unwrap_or_else(|| "no default applies".to_string()));
            } else if let Some((value_expr, _)) = self.default_property(index) {
                parts.push(format!("default {}", self.render(&value_expr)));
            }
        }
        if is_boolean {
            for (list, verb) in [
                (self.symbols[index].selected_by.clone(), "selected by"),
                (self.symbols[index].implied_by.clone(), "implied by"),
            ] {
                let mut names = Vec::new();
                for (selector, term) in list {
                    let result = self.evaluate(&term);
                    if result != NO {
                        names.push(format!(
                            "{} ({})",
                            self.symbols[selector].name,
                            result.letter()
                        ));
                    }
                }
                if !names.is_empty() {
                    parts.push(format!("{verb} {}", names.join(", ")));
                }
            }
            if let Some(dir_dep) = self.symbols[index].dir_dep.clone() {
                let dependency = self.symbols[index].dir_dep_value;
                if dependency != Tristate::Yes {
                    let mut blockers = Vec::new();
                    self.unmet(&dir_dep, &mut blockers);
                    if blockers.is_empty() {
                        parts.push(format!(
                            "its dependencies allow at most {}",
                            dependency.letter()
                        ));
                    } else {
                        parts.push(format!("depends on: {}", blockers.join(", ")));
                    }
                }
            }
        }
        Some(format!("{value}: {}", parts.join("; ")))
    }

    /// The other members of the choice `name` belongs to (empty when it is
    /// not a choice member).
    pub fn choice_siblings(&self, name: &str) -> Vec<String> {
        let Some(&index) = self.names.get(name) else {
            return Vec::new();
        };
        let Some(choice) = self.symbols[index].choice_of else {
            return Vec::new();
        };
        self.symbols[choice]
            .members
            .iter()
            .filter(|member| **member != index)
            .map(|member| self.symbols[*member].name.clone())
            .collect()
    }

    /// The declared type of a defined symbol.
    pub fn symbol_type(&self, name: &str) -> Option<SymbolType> {
        let index = *self.names.get(name)?;
        self.symbols[index].symbol_type
    }

    /// The evaluation read with another config (the tree's expressions are
    /// reused; every value is recomputed). Cheaper than [`Evaluation::new`].
    pub fn reevaluate(&mut self, config_text: &str) {
        for symbol in &mut self.symbols {
            if symbol.defined || symbol.is_choice {
                symbol.valid = false;
                symbol.user = None;
                symbol.user_choice = None;
                symbol.choice_pick = None;
                symbol.write = false;
                symbol.tristate = NO;
                symbol.visible = NO;
                symbol.text.clear();
            }
        }
        self.modules_value = NO;
        self.read(config_text);
    }

    /// Symbols whose value could influence `name`: those named by its
    /// dependencies, prompts, defaults, selects and implies, and (when it is
    /// a choice member) its choice's members, followed `depth` levels deep.
    pub fn influences(&self, name: &str, depth: usize) -> Vec<String> {
        let Some(&start) = self.names.get(name) else {
            return Vec::new();
        };
        let mut seen = vec![false; self.symbols.len()];
        let mut frontier = vec![start];
        seen[start] = true;
        let mut order = Vec::new();
        for _ in 0..depth {
            let mut next = Vec::new();
            for index in frontier {
                let symbol = &self.symbols[index];
                let mut found = Vec::new();
                let mut collect = |expr: &Condition| {
                    if let Some(expr) = expr {
                        collect_symbols(expr, &mut found);
                    }
                };
                collect(&symbol.dir_dep);
                collect(&symbol.rev_dep);
                collect(&symbol.implied);
                for prompt in &symbol.prompts {
                    collect(prompt);
                }
                for (value, visible) in &symbol.defaults {
                    collect(&Some(value.clone()));
                    collect(visible);
                }
                if let Some(choice) = symbol.choice_of {
                    found.extend(self.symbols[choice].members.iter().copied());
                    for prompt in self.symbols[choice].prompts.iter().flatten() {
                        collect_symbols(prompt, &mut found);
                    }
                }
                for candidate in found {
                    if !seen[candidate] {
                        seen[candidate] = true;
                        if self.symbols[candidate].is_choice {
                            next.push(candidate);
                            continue;
                        }
                        if self.symbols[candidate].defined {
                            order.push(candidate);
                            next.push(candidate);
                        }
                    }
                }
            }
            frontier = next;
        }
        order
            .into_iter()
            .map(|index| self.symbols[index].name.clone())
            .collect()
    }

    /// For every symbol that can influence `name` (up to `depth` steps),
    /// the shortest chain from it to `name` (it first, `name` last).
    pub fn influence_chains(&self, name: &str, depth: usize) -> Vec<(String, Vec<String>)> {
        let Some(&start) = self.names.get(name) else {
            return Vec::new();
        };
        let mut parent: Vec<Option<usize>> = vec![None; self.symbols.len()];
        let mut seen = vec![false; self.symbols.len()];
        seen[start] = true;
        let mut frontier = vec![start];
        let mut found_order = Vec::new();
        for _ in 0..depth {
            let mut next = Vec::new();
            for index in frontier {
                let symbol = &self.symbols[index];
                let mut found = Vec::new();
                for expr in [&symbol.dir_dep, &symbol.rev_dep, &symbol.implied]
                    .into_iter()
                    .chain(symbol.prompts.iter())
                    .chain(symbol.defaults.iter().map(|(_, visible)| visible))
                    .flatten()
                {
                    collect_symbols(expr, &mut found);
                }
                for (value, _) in &symbol.defaults {
                    collect_symbols(value, &mut found);
                }
                if let Some(choice) = symbol.choice_of {
                    found.extend(self.symbols[choice].members.iter().copied());
                }
                if symbol.is_choice {
                    found.extend(symbol.members.iter().copied());
                }
                for candidate in found {
                    if !seen[candidate] {
                        seen[candidate] = true;
                        parent[candidate] = Some(index);
                        next.push(candidate);
                        if self.symbols[candidate].defined {
                            found_order.push(candidate);
                        }
                    }
                }
            }
            frontier = next;
        }
        found_order
            .into_iter()
            .map(|index| {
                let mut chain = vec![self.symbols[index].name.clone()];
                let mut current = index;
                while let Some(up) = parent[current] {
                    if self.symbols[up].defined {
                        chain.push(self.symbols[up].name.clone());
                    }
                    current = up;
                }
                (self.symbols[index].name.clone(), chain)
            })
            .collect()
    }

    /// True when `name` has a prompt somewhere (a user can set it when its
    /// dependencies allow).
    pub fn has_prompt(&self, name: &str) -> bool {
        self.names
            .get(name)
            .is_some_and(|index| !self.symbols[*index].prompts.is_empty())
    }

    /// True when `name` is a defined symbol of the tree.
    pub fn is_defined(&self, name: &str) -> bool {
        self.names
            .get(name)
            .is_some_and(|index| self.symbols[*index].defined)
    }

    /// The computed value of a symbol as `.config` writes it (`y`, `m`,
    /// `n`, a number or the unquoted string); `None` for unknown names.
    pub fn value(&mut self, name: &str) -> Option<String> {
        let index = *self.names.get(name)?;
        if !self.symbols[index].defined {
            return None;
        }
        self.calculate(index);
        Some(self.string_value(index))
    }
}

/// A user-settable symbol that differs between two configs, ranked by how
/// well it alone explains the change of the blamed symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    pub symbol: String,
    pub old: String,
    pub new: String,
    /// Applied alone to the old config, it gives the blamed symbol its new value.
    pub flips: bool,
    /// Symbols that still differ from the new config after applying it alone.
    pub unexplained: usize,
    /// Lines of the old config its edit touches (a choice member set to y
    /// also un-chooses the member that was chosen).
    pub edited_lines: usize,
    /// The shortest influence chain from this symbol to the blamed one.
    pub chain: Vec<String>,
}

/// Ranks the user-settable symbols that differ between `old_text` and
/// `new_text` (both configs of `tree`) as causes of `symbol`'s change:
/// each is applied alone to the old config and re-evaluated; those that
/// give `symbol` its new value come first, then those that leave the fewest
/// other differences from the new config, then the smallest edit (choosing
/// a choice member also un-chooses the chosen one), then the shortest
/// chain. Only symbols that can influence `symbol` are tried.
pub fn blame_causes(tree: &Kconfig, old_text: &str, new_text: &str, symbol: &str) -> Vec<Cause> {
    let mut old = Evaluation::new(tree, old_text);
    let mut new = Evaluation::new(tree, new_text);
    let new_output = new.write_config();
    let target_new = new.value(symbol).unwrap_or_default();
    let chains = old.influence_chains(symbol, 12);
    let mut candidates = Vec::new();
    for (name, chain) in &chains {
        let Some(&index) = new.names.get(name.as_str()) else {
            continue;
        };
        let symbol_type = new.symbols[index].symbol_type;
        if !matches!(symbol_type, Some(SymbolType::Bool | SymbolType::Tristate))
            || new.symbols[index].prompts.is_empty()
        {
            continue;
        }
        let (Some(before), Some(after)) = (old.value(name), new.value(name)) else {
            continue;
        };
        if before != after && new.symbols[index].visible != NO {
            candidates.push((name.clone(), before, after, chain.clone()));
        }
    }
    let mut causes = Vec::new();
    let new_lines: std::collections::HashSet<&str> = new_output.lines().collect();
    for (name, before, after, chain) in candidates {
        let line = if after == "n" {
            format!("# CONFIG_{name} is not set")
        } else {
            format!("CONFIG_{name}={after}")
        };
        let mut edited = replace_line(old_text, &name, &line);
        let mut edited_lines = 1;
        if after == "y" {
            for sibling in old.choice_siblings(&name) {
                let chosen = format!("CONFIG_{sibling}=y");
                if old_text.lines().any(|current| current == chosen) {
                    edited_lines += 1;
                    edited =
                        replace_line(&edited, &sibling, &format!("# CONFIG_{sibling} is not set"));
                }
            }
        }
        old.reevaluate(&edited);
        let flips = old.value(symbol).unwrap_or_default() == target_new;
        let output = old.write_config();
        let unexplained = output
            .lines()
            .filter(|line| !new_lines.contains(line))
            .count();
        causes.push(Cause {
            symbol: name,
            old: before,
            new: after,
            flips,
            unexplained,
            edited_lines,
            chain,
        });
    }
    causes.sort_by(|left, right| {
        right
            .flips
            .cmp(&left.flips)
            .then(left.unexplained.cmp(&right.unexplained))
            .then(left.edited_lines.cmp(&right.edited_lines))
            .then(left.chain.len().cmp(&right.chain.len()))
            .then(left.symbol.cmp(&right.symbol))
    });
    causes
}

fn replace_line(text: &str, name: &str, line: &str) -> String {
    let set = format!("CONFIG_{name}=");
    let unset = format!("# CONFIG_{name} is not set");
    let mut found = false;
    let mut lines: Vec<&str> = text
        .lines()
        .map(|current| {
            if current.starts_with(&set) || current == unset {
                found = true;
                line
            } else {
                current
            }
        })
        .collect();
    if !found {
        lines.push(line);
    }
    let mut result = lines.join("\n");
    result.push('\n');
    result
}

/// Defined symbols of `tree` whose names are close to `name` (Levenshtein
/// distance at most a quarter of the length, at least 2), best first: the
/// "did you mean" of a misspelled symbol.
pub fn similar_symbols(tree: &Kconfig, name: &str) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = tree
        .symbol_names()
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= 2.max(candidate.len() / 4))
        .collect();
    scored.sort_unstable();
    scored.dedup();
    scored
        .into_iter()
        .take(3)
        .map(|(_, name)| name.to_string())
        .collect()
}

fn collect_symbols(expr: &SymbolExpression, out: &mut Vec<usize>) {
    match expr {
        SymbolExpression::Symbol(index) => out.push(*index),
        SymbolExpression::Compare(_, left, right) => {
            out.push(*left);
            out.push(*right);
        }
        SymbolExpression::Not(inner) => collect_symbols(inner, out),
        SymbolExpression::And(left, right) | SymbolExpression::Or(left, right) => {
            collect_symbols(left, out);
            collect_symbols(right, out);
        }
    }
}

/// Levenshtein distance.
fn edit_distance(left: &str, right: &str) -> usize {
    let right: Vec<char> = right.chars().collect();
    let mut previous: Vec<usize> = (0..=right.len()).collect();
    for (row, left_character) in left.chars().enumerate() {
        let mut current = vec![row + 1];
        for (column, right_character) in right.iter().enumerate() {
            let substitution = previous[column] + usize::from(left_character != *right_character);
            current.push(
                substitution
                    .min(previous[column + 1] + 1)
                    .min(current[column] + 1),
            );
        }
        previous = current;
    }
    previous[right.len()]
}

struct Context<'a> {
    tree: &'a Kconfig,
    children: &'a [Vec<usize>],
    choice_symbols: &'a [usize],
}

/// Where a node sits while finalizing: its index, the dependency its
/// parents give it, and the `visible if` of the menus around it.
struct Scope<'a> {
    node: usize,
    parent_dependency: &'a Condition,
    upper_visibility: &'a Condition,
}

/// A config entry (or a choice) while its properties are finalized.
struct DefinitionEntry {
    index: usize,
    /// The entry's own dependencies under its parents' (menu.c `basedep`).
    base_dependency: Condition,
    /// Not a tristate: `FOO != n` conditions reduce to `FOO`.
    bool_like: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Text,
    Signed(i64),
    Unsigned(u64),
}

/// expr_parse_string().
fn classify(text: &str, symbol_type: Option<SymbolType>) -> Kind {
    match symbol_type {
        Some(SymbolType::Bool | SymbolType::Tristate) => Kind::Signed(match text {
            "n" => 0,
            "m" => 1,
            "y" => 2,
            _ => -1,
        }),
        Some(SymbolType::Int) => match strtoll(text, 10) {
            Some(value) => Kind::Signed(value),
            None => Kind::Text,
        },
        Some(SymbolType::Hex) => match strtoull(text, 16) {
            Some(value) => Kind::Unsigned(value),
            None => Kind::Text,
        },
        _ => match strtoll(text, 0) {
            Some(value) => Kind::Signed(value),
            None => Kind::Text,
        },
    }
}

/// strtoll() that must consume the whole (non-empty) text.
fn strtoll(text: &str, base: u32) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (radix, digits) = match base {
        0 => {
            if let Some(hex) = digits
                .strip_prefix("0x")
                .or_else(|| digits.strip_prefix("0X"))
            {
                (16, hex)
            } else if digits.len() > 1 && digits.starts_with('0') {
                (8, &digits[1..])
            } else {
                (10, digits)
            }
        }
        16 => (
            16,
            digits
                .strip_prefix("0x")
                .or_else(|| digits.strip_prefix("0X"))
                .unwrap_or(digits),
        ),
        other => (other, digits),
    };
    if digits.is_empty() {
        return None;
    }
    let value = i64::from_str_radix(digits, radix).ok()?;
    Some(if negative { -value } else { value })
}

fn strtoull(text: &str, base: u32) -> Option<u64> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(digits, base).ok()
}

/// strtoll(text, NULL, base) as range checks use it: leading valid part.
fn parse_number(text: &str, base: u32) -> i64 {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let rest = if base == 16 {
        rest.strip_prefix("0x")
            .or_else(|| rest.strip_prefix("0X"))
            .unwrap_or(rest)
    } else {
        rest
    };
    let digits: String = rest.chars().take_while(|c| c.is_digit(base)).collect();
    let value = i64::from_str_radix(&digits, base).unwrap_or(0);
    if negative { -value } else { value }
}

fn valid_int(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|byte| byte.is_ascii_digit())
        && !(digits.starts_with('0') && digits.len() > 1)
}

fn valid_hex(text: &str) -> bool {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_hexdigit())
}
