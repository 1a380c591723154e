//! Reason trees: why a symbol has its value in a given `.config`, following
//! selects, implies, prompts, defaults, choices and dependencies recursively
//! down to roots, with file:line at every step; and the side-by-side "blame"
//! of two trees. Pure: a parsed tree and a config in, values and strings out.
//! Each tree visits a symbol at most once and stops after a node budget, so a
//! tree costs O(budget) whatever the kernel.

use crate::config::DotConfig;
use crate::error::KconfigError;
use crate::expr::{Expr, Operand, Tristate, Values};
use crate::tree::{BlockKind, Definition, Dependency, Kconfig, Location};
use serde::Serialize;
use std::collections::HashSet;

/// One step of an explanation. `location` is `file:line` in the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReasonNode {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ReasonNode>,
}

impl ReasonNode {
    fn new(text: impl Into<String>, location: Option<&Location>) -> Self {
        Self {
            text: text.into(),
            location: location.map(ToString::to_string),
            children: Vec::new(),
        }
    }

    fn with(mut self, children: Vec<ReasonNode>) -> Self {
        self.children = children;
        self
    }

    /// Every node, depth first, with its depth.
    pub fn walk(&self) -> Vec<(usize, &ReasonNode)> {
        let mut nodes = Vec::new();
        let mut stack = vec![(0usize, self)];
        while let Some((depth, node)) = stack.pop() {
            nodes.push((depth, node));
            for child in node.children.iter().rev() {
                stack.push((depth + 1, child));
            }
        }
        nodes
    }

    /// True when some node's text contains `needle`.
    pub fn mentions(&self, needle: &str) -> bool {
        self.walk()
            .iter()
            .any(|(_, node)| node.text.contains(needle))
    }

    fn line(&self) -> String {
        match &self.location {
            Some(location) => format!("{}  [{location}]", self.text),
            None => self.text.clone(),
        }
    }
}

/// Renders a tree as indented ASCII lines (`|-` and `` `- `` branches).
pub fn render_tree(root: &ReasonNode) -> String {
    tree_lines(root).join("\n") + "\n"
}

fn tree_lines(root: &ReasonNode) -> Vec<String> {
    fn visit(node: &ReasonNode, prefix: &str, last: bool, top: bool, lines: &mut Vec<String>) {
        if top {
            lines.push(node.line());
        } else {
            let branch = if last { "`- " } else { "|- " };
            lines.push(format!("{prefix}{branch}{}", node.line()));
        }
        let child_prefix = if top {
            String::new()
        } else if last {
            format!("{prefix}   ")
        } else {
            format!("{prefix}|  ")
        };
        for (index, child) in node.children.iter().enumerate() {
            visit(
                child,
                &child_prefix,
                index + 1 == node.children.len(),
                false,
                lines,
            );
        }
    }
    let mut lines = Vec::new();
    visit(root, "", true, true, &mut lines);
    lines
}

/// Two reason trees for one symbol and the leaves that differ.
#[derive(Debug, Clone, Serialize)]
pub struct Blame {
    pub symbol: String,
    pub old: ReasonNode,
    pub new: ReasonNode,
    /// Leaf lines present only in the old tree.
    pub only_old: Vec<String>,
    /// Leaf lines present only in the new tree.
    pub only_new: Vec<String>,
}

impl Blame {
    /// Compares two trees by their leaves. A leaf is keyed by the nearest
    /// symbol above it and its line, so "no rule turns it on" under
    /// HAVE_PREEMPT_DYNAMIC_KEY differs from the same words under another
    /// symbol.
    pub fn between(symbol: &str, old: ReasonNode, new: ReasonNode) -> Self {
        let old_leaves: Vec<String> = keyed_lines(&old).into_iter().flatten().collect();
        let new_leaves: Vec<String> = keyed_lines(&new).into_iter().flatten().collect();
        let old_set: HashSet<&String> = old_leaves.iter().collect();
        let new_set: HashSet<&String> = new_leaves.iter().collect();
        let only_old = old_leaves
            .iter()
            .filter(|l| !new_set.contains(l))
            .cloned()
            .collect();
        let only_new = new_leaves
            .iter()
            .filter(|l| !old_set.contains(l))
            .cloned()
            .collect();
        Self {
            symbol: symbol.to_string(),
            old,
            new,
            only_old,
            only_new,
        }
    }
}

/// For each node in preorder: `Some("SYMBOL: line")` for leaves (SYMBOL the
/// nearest symbol node above or at it), `None` for inner nodes.
fn keyed_lines(tree: &ReasonNode) -> Vec<Option<String>> {
    let mut symbols: Vec<String> = Vec::new();
    let mut keys = Vec::new();
    for (depth, node) in tree.walk() {
        symbols.truncate(depth);
        let name = node
            .text
            .split_once('=')
            .map(|(name, _)| name)
            .filter(|name| {
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            });
        let owner = match name {
            Some(name) => name.to_string(),
            None => symbols.last().cloned().unwrap_or_default(),
        };
        symbols.push(owner.clone());
        keys.push(
            node.children
                .is_empty()
                .then(|| format!("{owner}: {}", node.line())),
        );
    }
    keys
}

/// Renders a blame: the two trees side by side (changed leaves marked `*`),
/// then the changed leaves in full.
pub fn render_blame(blame: &Blame) -> String {
    const COLUMN: usize = 72;
    let mark = |tree: &ReasonNode, changed: &[String]| -> Vec<String> {
        let changed: HashSet<&String> = changed.iter().collect();
        tree_lines(tree)
            .into_iter()
            .zip(keyed_lines(tree))
            .map(|(line, key)| {
                let flag = key.is_some_and(|key| changed.contains(&key));
                format!("{} {line}", if flag { '*' } else { ' ' })
            })
            .collect()
    };
    let old_lines = mark(&blame.old, &blame.only_old);
    let new_lines = mark(&blame.new, &blame.only_new);
    let clip = |line: &str| -> String {
        if line.chars().count() > COLUMN {
            let kept: String = line.chars().take(COLUMN - 1).collect();
            format!("{kept}~")
        } else {
            line.to_string()
        }
    };
    let mut text = format!("{:<COLUMN$} | {}\n", "OLD", "NEW");
    text.push_str(&format!(
        "{}-+-{}\n",
        "-".repeat(COLUMN),
        "-".repeat(COLUMN)
    ));
    for index in 0..old_lines.len().max(new_lines.len()) {
        let left = old_lines.get(index).map(|l| clip(l)).unwrap_or_default();
        let right = new_lines.get(index).map(|l| clip(l)).unwrap_or_default();
        text.push_str(format!("{left:<COLUMN$} | {right}").trim_end());
        text.push('\n');
    }
    text.push_str("\nLeaves only in OLD:\n");
    for line in &blame.only_old {
        text.push_str(&format!("  - {line}\n"));
    }
    if blame.only_old.is_empty() {
        text.push_str("  (none)\n");
    }
    text.push_str("Leaves only in NEW:\n");
    for line in &blame.only_new {
        text.push_str(&format!("  + {line}\n"));
    }
    if blame.only_new.is_empty() {
        text.push_str("  (none)\n");
    }
    text
}

/// Explains symbol values of one config against one parsed tree.
#[derive(Debug)]
pub struct Explainer<'a> {
    tree: &'a Kconfig,
    config: &'a DotConfig,
    budget: usize,
}

const MAXIMUM_DEPTH: usize = 24;
const MAXIMUM_LISTED: usize = 8;

struct Walk {
    visited: HashSet<String>,
    nodes: usize,
}

fn strip_quotes(raw: &str) -> String {
    raw.strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .map_or_else(
            || raw.to_string(),
            |inner| inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        )
}

impl Values for Explainer<'_> {
    fn tristate(&self, operand: &Operand) -> Tristate {
        match operand {
            Operand::Symbol(name) => match self.config.get(name) {
                Some(raw) => Tristate::from_raw(raw),
                None if self.tree.is_defined(name) => Tristate::No,
                // The constant m means `m && MODULES` (kconfig-language.rst).
                None if name == "m" => match self.config.get("MODULES") {
                    Some("y") => Tristate::Module,
                    _ => Tristate::No,
                },
                None => Tristate::from_raw(name),
            },
            Operand::Text(text) => Tristate::from_raw(text),
            Operand::Macro(_) => Tristate::No,
        }
    }

    fn text(&self, operand: &Operand) -> String {
        match operand {
            Operand::Symbol(name) => match self.config.get(name) {
                Some(raw) => strip_quotes(raw),
                None if self.tree.symbol_type(name).is_boolean() => "n".to_string(),
                None if self.tree.is_defined(name) => String::new(),
                None => name.clone(),
            },
            Operand::Text(text) | Operand::Macro(text) => text.clone(),
        }
    }
}

/// A dependency with a description of where it comes from.
struct Gate<'a> {
    label: String,
    dependency: &'a Dependency,
}

impl<'a> Explainer<'a> {
    /// An explainer with the default size budget (400 nodes per tree).
    pub fn new(tree: &'a Kconfig, config: &'a DotConfig) -> Self {
        Self {
            tree,
            config,
            budget: 400,
        }
    }

    /// Changes the per-tree node budget.
    pub fn with_budget(mut self, budget: usize) -> Self {
        self.budget = budget.max(1);
        self
    }

    /// Evaluates an expression against the config.
    pub fn evaluate(&self, expr: &Expr) -> Tristate {
        expr.evaluate(self)
    }

    /// The symbol's value as shown: `y`/`m`/`n` for bool and tristate,
    /// the raw value otherwise, `(unset)` when absent.
    pub fn display_value(&self, name: &str) -> String {
        match self.config.get(name) {
            Some(raw) => raw.to_string(),
            None if self.tree.symbol_type(name).is_boolean() => "n".to_string(),
            None => "(unset)".to_string(),
        }
    }

    /// True when the symbol is on: y/m, or a non-boolean with a value.
    pub fn is_on(&self, name: &str) -> bool {
        if self.tree.symbol_type(name).is_boolean() {
            self.tristate(&Operand::Symbol(name.to_string())) != Tristate::No
        } else {
            self.config.get(name).is_some_and(|raw| raw != "n")
        }
    }

    /// The reason tree for the symbol's value, whatever it is.
    pub fn why(&self, name: &str) -> Result<ReasonNode, KconfigError> {
        if !self.tree.is_defined(name) {
            return Err(KconfigError::UnknownSymbol {
                symbol: name.to_string(),
                arch: self.tree.srcarch.clone(),
            });
        }
        let mut walk = Walk {
            visited: HashSet::new(),
            nodes: 0,
        };
        Ok(self.symbol(name, 0, &mut walk))
    }

    /// The reason tree for a symbol that is off. For a symbol that is on,
    /// the root says so and the tree explains why it is on.
    pub fn why_not(&self, name: &str) -> Result<ReasonNode, KconfigError> {
        let tree = self.why(name)?;
        if self.is_on(name) {
            let text = format!("{name} is not off: it is {}", self.display_value(name));
            return Ok(ReasonNode::new(text, None).with(vec![tree]));
        }
        Ok(tree)
    }

    fn symbol(&self, name: &str, depth: usize, walk: &mut Walk) -> ReasonNode {
        walk.nodes += 1;
        let value = self.display_value(name);
        let first = self.tree.definitions_of(name).next();
        let location = first.map(|definition| &definition.location);
        let head = format!("{name}={value}");
        if first.is_none() {
            let constant = matches!(name, "y" | "m" | "n") || name.parse::<i64>().is_ok();
            if constant {
                return ReasonNode::new(format!("{name} (constant)"), None);
            }
            return ReasonNode::new(
                format!(
                    "{head} (not defined in the Kconfig tree for {})",
                    self.tree.srcarch
                ),
                None,
            );
        }
        if walk.visited.contains(name) {
            return ReasonNode::new(format!("{head} (explained above)"), location);
        }
        if depth >= MAXIMUM_DEPTH || walk.nodes >= self.budget {
            return ReasonNode::new(
                format!("{head} (not expanded here; ask about {name} directly)"),
                location,
            );
        }
        walk.visited.insert(name.to_string());
        let children = if self.is_on(name) {
            self.reasons_on(name, depth, walk)
        } else {
            self.reasons_off(name, depth, walk)
        };
        ReasonNode::new(head, location).with(children)
    }

    fn gates(&self, definition: &'a Definition) -> Vec<Gate<'a>> {
        let mut gates: Vec<Gate<'a>> = definition
            .depends
            .iter()
            .map(|dependency| Gate {
                label: format!("depends on {}", dependency.expr),
                dependency,
            })
            .collect();
        let mut current = definition.block;
        while let Some(position) = current {
            let block = &self.tree.blocks[position];
            for dependency in &block.depends {
                let label = match &block.kind {
                    BlockKind::If => format!("inside `if {}`", dependency.expr),
                    BlockKind::Menu { title } => {
                        format!("inside menu \"{title}\" (depends on {})", dependency.expr)
                    }
                    BlockKind::Choice { .. } => {
                        format!("inside a choice (depends on {})", dependency.expr)
                    }
                };
                gates.push(Gate { label, dependency });
            }
            current = block.parent;
        }
        gates
    }

    fn gates_value(&self, definition: &Definition) -> Tristate {
        self.gates(definition)
            .iter()
            .map(|gate| self.evaluate(&gate.dependency.expr))
            .min()
            .unwrap_or(Tristate::Yes)
    }

    fn menu_visible(&self, definition: &Definition) -> Vec<&'a Dependency> {
        let mut hidden = Vec::new();
        let mut current = definition.block;
        while let Some(position) = current {
            let block = &self.tree.blocks[position];
            hidden.extend(
                block
                    .visible_if
                    .iter()
                    .filter(|dependency| self.evaluate(&dependency.expr) == Tristate::No),
            );
            current = block.parent;
        }
        hidden
    }

    fn condition_value(&self, condition: Option<&Expr>) -> Tristate {
        condition.map_or(Tristate::Yes, |expr| self.evaluate(expr))
    }

    fn budget_left(&self, walk: &Walk) -> bool {
        walk.nodes < self.budget
    }

    fn gate_nodes(
        &self,
        gates: &[Gate<'_>],
        holding: bool,
        depth: usize,
        walk: &mut Walk,
    ) -> Vec<ReasonNode> {
        let mut nodes = Vec::new();
        for gate in gates {
            let value = self.evaluate(&gate.dependency.expr);
            if (value != Tristate::No) != holding {
                continue;
            }
            walk.nodes += 1;
            let verdict = if holding { "holds" } else { "is n" };
            let children = self.expression(&gate.dependency.expr, depth + 1, walk);
            nodes.push(
                ReasonNode::new(
                    format!("{}: {verdict}", gate.label),
                    Some(&gate.dependency.location),
                )
                .with(children),
            );
        }
        nodes
    }

    fn reasons_on(&self, name: &str, depth: usize, walk: &mut Walk) -> Vec<ReasonNode> {
        let mut reasons = Vec::new();
        let index = self.tree.symbol_index(name);
        let selected_by = index
            .map(|entry| entry.selected_by.as_slice())
            .unwrap_or_default();
        let implied_by = index
            .map(|entry| entry.implied_by.as_slice())
            .unwrap_or_default();
        for (verb, list, is_select) in [
            ("selected", selected_by, true),
            ("implied", implied_by, false),
        ] {
            for &(selector_position, reverse_position) in list {
                let selector = &self.tree.definitions[selector_position];
                let reverse = if is_select {
                    &selector.selects[reverse_position]
                } else {
                    &selector.implies[reverse_position]
                };
                let selector_value = self.tristate(&Operand::Symbol(selector.symbol.clone()));
                let strength = selector_value.min(self.condition_value(reverse.condition.as_ref()));
                if strength == Tristate::No {
                    continue;
                }
                walk.nodes += 1;
                let mut text = format!("{verb} by {}", selector.symbol);
                if let Some(condition) = &reverse.condition {
                    text.push_str(&format!(" if {condition}"));
                }
                let mut children = vec![self.symbol(&selector.symbol, depth + 1, walk)];
                if let Some(condition) = &reverse.condition {
                    children.extend(self.expression(condition, depth + 1, walk));
                }
                reasons.push(ReasonNode::new(text, Some(&reverse.location)).with(children));
            }
        }
        for definition in self.tree.definitions_of(name) {
            if let Some(choice_position) = definition.choice {
                reasons.push(self.choice_reason(name, choice_position, depth, walk));
                return reasons;
            }
        }
        let definitions: Vec<&Definition> = self.tree.definitions_of(name).collect();
        for definition in &definitions {
            let gates = self.gates(definition);
            let gates_hold = self.gates_value(definition) != Tristate::No;
            let hidden = self.menu_visible(definition);
            for prompt in &definition.prompts {
                if !gates_hold
                    || self.condition_value(prompt.condition.as_ref()) == Tristate::No
                    || !hidden.is_empty()
                {
                    continue;
                }
                walk.nodes += 1;
                let mut children = self.gate_nodes(&gates, true, depth, walk);
                if let Some(condition) = &prompt.condition {
                    let nodes = self.expression(condition, depth + 1, walk);
                    children.push(
                        ReasonNode::new(
                            format!("prompt condition `if {condition}`: holds"),
                            Some(&prompt.location),
                        )
                        .with(nodes),
                    );
                }
                if let Some(default) = self.active_default(&definitions) {
                    let value = self.evaluate_default(default);
                    children.push(ReasonNode::new(
                        format!(
                            "(its default here is {value}: {})",
                            describe_default(default)
                        ),
                        Some(&default.location),
                    ));
                } else {
                    children.push(ReasonNode::new(
                        "(no default applies: the value is the user's answer)",
                        None,
                    ));
                }
                reasons.push(
                    ReasonNode::new(
                        format!("set by the user at prompt \"{}\"", prompt.text),
                        Some(&prompt.location),
                    )
                    .with(children),
                );
                return reasons;
            }
        }
        if reasons.is_empty() || !self.tree.symbol_type(name).is_boolean() {
            if let Some(default) = self.active_default(&definitions) {
                walk.nodes += 1;
                let mut children = Vec::new();
                if let Some(condition) = &default.condition {
                    children.extend(self.expression(condition, depth + 1, walk));
                }
                if !is_constant(&default.value) {
                    children.extend(self.expression(&default.value, depth + 1, walk));
                }
                let owner = definitions.iter().find(|definition| {
                    definition.defaults.iter().any(|d| std::ptr::eq(d, default))
                });
                if let Some(owner) = owner {
                    let gates = self.gates(owner);
                    if self.budget_left(walk) {
                        children.extend(self.gate_nodes(&gates, true, depth, walk));
                    }
                }
                let value = self.evaluate_default(default);
                if value == "n" && reasons.is_empty() {
                    children.push(ReasonNode::new(
                        "(this default gives n, yet the config has it on)",
                        None,
                    ));
                }
                reasons.push(
                    ReasonNode::new(describe_default(default), Some(&default.location))
                        .with(children),
                );
            }
        }
        if reasons.is_empty() {
            let probes = self.probe_rules(&definitions);
            if probes.is_empty() {
                reasons.push(ReasonNode::new(
                    "no rule in this tree gives it this value: it comes from the .config alone (does the config belong to this tree and arch?)",
                    None,
                ));
            } else {
                reasons.push(
                    ReasonNode::new(
                        "its rules use toolchain probes that verdict does not run; the config's value says they succeeded when it was made",
                        None,
                    )
                    .with(probes),
                );
            }
        }
        reasons
    }

    /// The dependencies, prompt conditions and defaults of `definitions`
    /// that contain `$(...)` toolchain probes.
    fn probe_rules(&self, definitions: &[&'a Definition]) -> Vec<ReasonNode> {
        let mut nodes = Vec::new();
        for definition in definitions {
            for gate in self.gates(definition) {
                if contains_macro(&gate.dependency.expr) {
                    nodes.push(ReasonNode::new(gate.label, Some(&gate.dependency.location)));
                }
            }
            for prompt in &definition.prompts {
                if prompt.condition.as_ref().is_some_and(contains_macro) {
                    nodes.push(ReasonNode::new(
                        format!(
                            "prompt \"{}\" if {}",
                            prompt.text,
                            prompt
                                .condition
                                .as_ref()
                                .map(ToString::to_string)
                                .unwrap_or_default()
                        ),
                        Some(&prompt.location),
                    ));
                }
            }
            for default in &definition.defaults {
                if contains_macro(&default.value)
                    || default.condition.as_ref().is_some_and(contains_macro)
                {
                    nodes.push(ReasonNode::new(
                        describe_default(default),
                        Some(&default.location),
                    ));
                }
            }
        }
        nodes
    }

    fn active_default<'d>(
        &self,
        definitions: &[&'d Definition],
    ) -> Option<&'d crate::tree::Default> {
        definitions.iter().find_map(|definition| {
            if self.gates_value(definition) == Tristate::No {
                return None;
            }
            definition
                .defaults
                .iter()
                .find(|default| self.condition_value(default.condition.as_ref()) != Tristate::No)
        })
    }

    fn evaluate_default(&self, default: &crate::tree::Default) -> String {
        match &default.value {
            Expr::Leaf(Operand::Text(text)) => format!("\"{text}\""),
            Expr::Leaf(Operand::Macro(text)) => text.clone(),
            Expr::Leaf(Operand::Symbol(name))
                if !self.tree.is_defined(name) && !matches!(name.as_str(), "y" | "m" | "n") =>
            {
                name.clone()
            }
            Expr::Leaf(Operand::Symbol(name))
                if self.tree.is_defined(name) && !self.tree.symbol_type(name).is_boolean() =>
            {
                self.display_value(name)
            }
            other => self.evaluate(other).letter().to_string(),
        }
    }

    fn choice_reason(
        &self,
        name: &str,
        choice_position: usize,
        depth: usize,
        walk: &mut Walk,
    ) -> ReasonNode {
        walk.nodes += 1;
        let choice = &self.tree.choices[choice_position];
        let title = choice
            .prompts
            .first()
            .map_or("(unnamed)", |prompt| prompt.text.as_str());
        let mut children = Vec::new();
        let block = &self.tree.blocks[choice.block];
        let choice_gates: Vec<Gate<'_>> = block
            .depends
            .iter()
            .map(|dependency| Gate {
                label: format!("the choice depends on {}", dependency.expr),
                dependency,
            })
            .collect();
        children.extend(self.gate_nodes(&choice_gates, true, depth, walk));
        let visible_prompt = choice
            .prompts
            .iter()
            .find(|prompt| self.condition_value(prompt.condition.as_ref()) != Tristate::No);
        let default = choice
            .defaults
            .iter()
            .find(|default| self.condition_value(default.condition.as_ref()) != Tristate::No);
        let default_member = default.and_then(|default| match &default.value {
            Expr::Leaf(Operand::Symbol(member)) => Some(member.as_str()),
            _ => None,
        });
        if let Some(prompt) = visible_prompt {
            children.push(ReasonNode::new(
                format!(
                    "the user picked {name} at the choice prompt \"{}\"",
                    prompt.text
                ),
                Some(&prompt.location),
            ));
        }
        match (default, default_member) {
            (Some(default), Some(member)) if member == name => children.push(ReasonNode::new(
                format!(
                    "{name} is the choice's default: {}",
                    describe_default(default)
                ),
                Some(&default.location),
            )),
            (Some(default), Some(member)) => children.push(ReasonNode::new(
                format!(
                    "(the choice's default would be {member}: {})",
                    describe_default(default)
                ),
                Some(&default.location),
            )),
            _ => children.push(ReasonNode::new(
                "(the choice has no applicable default: the first visible member wins)",
                None,
            )),
        }
        ReasonNode::new(
            format!("chosen in choice \"{title}\""),
            Some(&choice.location),
        )
        .with(children)
    }

    fn reasons_off(&self, name: &str, depth: usize, walk: &mut Walk) -> Vec<ReasonNode> {
        let definitions: Vec<&Definition> = self.tree.definitions_of(name).collect();
        let mut reasons = Vec::new();
        let all_gated = definitions
            .iter()
            .all(|definition| self.gates_value(definition) == Tristate::No);
        if all_gated {
            for definition in &definitions {
                let gates = self.gates(definition);
                let mut nodes = self.gate_nodes(&gates, false, depth, walk);
                for node in &mut nodes {
                    node.text = format!("unmet dependency: {}", node.text);
                }
                reasons.extend(nodes);
            }
        } else {
            for definition in &definitions {
                if let Some(choice_position) = definition.choice {
                    let choice = &self.tree.choices[choice_position];
                    let title = choice
                        .prompts
                        .first()
                        .map_or("(unnamed)", |prompt| prompt.text.as_str());
                    let chosen = choice.members.iter().find(|member| self.is_on(member));
                    walk.nodes += 1;
                    let node = match chosen {
                        Some(other) => ReasonNode::new(
                            format!("not chosen in choice \"{title}\": {other} was chosen"),
                            Some(&choice.location),
                        )
                        .with(vec![self.symbol(other, depth + 1, walk)]),
                        None => ReasonNode::new(
                            format!("not chosen in choice \"{title}\" (no member is set)"),
                            Some(&choice.location),
                        ),
                    };
                    reasons.push(node);
                    return reasons;
                }
            }
            for definition in &definitions {
                let hidden = self.menu_visible(definition);
                for prompt in &definition.prompts {
                    walk.nodes += 1;
                    let condition = self.condition_value(prompt.condition.as_ref());
                    if self.gates_value(definition) == Tristate::No {
                        continue;
                    }
                    if condition == Tristate::No {
                        let children = prompt
                            .condition
                            .as_ref()
                            .map(|expr| self.expression(expr, depth + 1, walk))
                            .unwrap_or_default();
                        reasons.push(
                            ReasonNode::new(
                                format!("prompt \"{}\" is hidden: its `if` is n", prompt.text),
                                Some(&prompt.location),
                            )
                            .with(children),
                        );
                    } else if let Some(dependency) = hidden.first() {
                        reasons.push(ReasonNode::new(
                            format!(
                                "prompt \"{}\" is hidden by `visible if {}`",
                                prompt.text, dependency.expr
                            ),
                            Some(&dependency.location),
                        ));
                    } else {
                        reasons.push(ReasonNode::new(
                            format!("the user left it off at prompt \"{}\"", prompt.text),
                            Some(&prompt.location),
                        ));
                    }
                }
            }
            reasons.extend(self.defaults_off(&definitions, depth, walk));
        }
        reasons.extend(self.reverse_off(name, depth, walk));
        if reasons.is_empty() {
            reasons.push(ReasonNode::new(
                "no prompt, default, select or imply can turn it on",
                None,
            ));
        }
        reasons
    }

    fn defaults_off(
        &self,
        definitions: &[&Definition],
        depth: usize,
        walk: &mut Walk,
    ) -> Vec<ReasonNode> {
        let mut nodes = Vec::new();
        for definition in definitions {
            if self.gates_value(definition) == Tristate::No {
                continue;
            }
            for default in &definition.defaults {
                if !self.budget_left(walk) {
                    return nodes;
                }
                walk.nodes += 1;
                let condition = self.condition_value(default.condition.as_ref());
                if condition == Tristate::No {
                    let children = default
                        .condition
                        .as_ref()
                        .map(|expr| self.expression(expr, depth + 1, walk))
                        .unwrap_or_default();
                    nodes.push(
                        ReasonNode::new(
                            format!("{}: condition is n", describe_default(default)),
                            Some(&default.location),
                        )
                        .with(children),
                    );
                } else {
                    let children = if is_constant(&default.value) {
                        Vec::new()
                    } else {
                        self.expression(&default.value, depth + 1, walk)
                    };
                    let value = self.evaluate_default(default);
                    nodes.push(
                        ReasonNode::new(
                            format!("{}: applies and gives {value}", describe_default(default)),
                            Some(&default.location),
                        )
                        .with(children),
                    );
                    break;
                }
            }
        }
        nodes
    }

    fn reverse_off(&self, name: &str, depth: usize, walk: &mut Walk) -> Vec<ReasonNode> {
        let Some(index) = self.tree.symbol_index(name) else {
            return Vec::new();
        };
        let mut nodes = Vec::new();
        for (verb, list, is_select) in [
            ("selected", &index.selected_by, true),
            ("implied", &index.implied_by, false),
        ] {
            let total = list.len();
            for (listed, &(selector_position, reverse_position)) in list.iter().enumerate() {
                if listed >= MAXIMUM_LISTED || !self.budget_left(walk) {
                    nodes.push(ReasonNode::new(
                        format!("... and {} more that could have {verb} it", total - listed),
                        None,
                    ));
                    break;
                }
                walk.nodes += 1;
                let selector = &self.tree.definitions[selector_position];
                let reverse = if is_select {
                    &selector.selects[reverse_position]
                } else {
                    &selector.implies[reverse_position]
                };
                let mut text = format!("would be {verb} by {}", selector.symbol);
                if let Some(condition) = &reverse.condition {
                    text.push_str(&format!(" if {condition}"));
                }
                let selector_on = self.is_on(&selector.symbol);
                let mut children = Vec::new();
                if selector_on {
                    if let Some(condition) = &reverse.condition {
                        children.extend(self.expression(condition, depth + 1, walk));
                    }
                    text.push_str(": condition is n");
                } else {
                    text.push_str(&format!(": {} is off", selector.symbol));
                    children.push(self.symbol(&selector.symbol, depth + 1, walk));
                }
                nodes.push(ReasonNode::new(text, Some(&reverse.location)).with(children));
            }
        }
        nodes
    }

    /// Nodes explaining why each relevant part of `expr` has its value:
    /// the parts that make `&&` fail or `||` hold, all parts otherwise.
    fn expression(&self, expr: &Expr, depth: usize, walk: &mut Walk) -> Vec<ReasonNode> {
        if !self.budget_left(walk) {
            return Vec::new();
        }
        match expr {
            Expr::Leaf(Operand::Symbol(name)) => {
                if self.tree.is_defined(name) || self.config.get(name).is_some() {
                    vec![self.symbol(name, depth, walk)]
                } else {
                    Vec::new()
                }
            }
            Expr::Leaf(Operand::Macro(text)) => vec![ReasonNode::new(
                format!("{text} is a toolchain probe; verdict does not run it (treated as n)"),
                None,
            )],
            Expr::Leaf(Operand::Text(_)) => Vec::new(),
            Expr::Compare(_, left, right) => {
                walk.nodes += 1;
                let value = self.evaluate(expr);
                let mut children = Vec::new();
                for operand in [left, right] {
                    if let Operand::Symbol(name) = operand {
                        if self.tree.is_defined(name) {
                            children.push(self.symbol(name, depth + 1, walk));
                        }
                    }
                }
                vec![
                    ReasonNode::new(
                        format!(
                            "`{expr}` is {} ({} is \"{}\", {} is \"{}\")",
                            value.letter(),
                            left,
                            self.text(left),
                            right,
                            self.text(right)
                        ),
                        None,
                    )
                    .with(children),
                ]
            }
            Expr::Not(inner) => self.expression(inner, depth, walk),
            Expr::And(left, right) | Expr::Or(left, right) => {
                let is_and = matches!(expr, Expr::And(..));
                let value = self.evaluate(expr);
                let relevant = |part: &Expr| {
                    let part_value = self.evaluate(part);
                    match (is_and, value != Tristate::No) {
                        (true, true) | (false, false) => true,
                        (true, false) => part_value == Tristate::No,
                        (false, true) => part_value != Tristate::No,
                    }
                };
                let mut nodes = Vec::new();
                for part in [left.as_ref(), right.as_ref()] {
                    if relevant(part) {
                        nodes.extend(self.expression(part, depth, walk));
                    }
                }
                nodes
            }
        }
    }
}

fn contains_macro(expr: &Expr) -> bool {
    match expr {
        Expr::Leaf(operand) => matches!(operand, Operand::Macro(_)),
        Expr::Compare(_, left, right) => {
            matches!(left, Operand::Macro(_)) || matches!(right, Operand::Macro(_))
        }
        Expr::Not(inner) => contains_macro(inner),
        Expr::And(left, right) | Expr::Or(left, right) => {
            contains_macro(left) || contains_macro(right)
        }
    }
}

fn is_constant(expr: &Expr) -> bool {
    match expr {
        Expr::Leaf(Operand::Symbol(name)) => {
            matches!(name.as_str(), "y" | "m" | "n")
                || name.parse::<i64>().is_ok()
                || name.starts_with("0x")
        }
        Expr::Leaf(Operand::Text(_)) => true,
        _ => false,
    }
}

fn describe_default(default: &crate::tree::Default) -> String {
    match &default.condition {
        Some(condition) => format!("default {} if {condition}", default.value),
        None => format!("default {}", default.value),
    }
}
