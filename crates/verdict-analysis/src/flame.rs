//! The differential flame graph's model: the candidate's profiles merged
//! into one call tree (command, then frames from the root), each node's
//! width its mean share of a profile (every profiled iteration weighs the
//! same), and each node marked with the tested change of its symbol's
//! inclusive share (a discovery's direction and shift, or none). Pure;
//! verdict-report draws it (widths from the candidate, colour from the
//! significant change in share).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::explain::{Change, ExplainHost, ExplainRow, ShareKind};

/// Nodes narrower than this share of the profile are left out of the
/// drawing (0.2%): too thin to read, and they would make the page large.
pub const FLAME_FLOOR: f64 = 0.002;

/// One frame of the merged call tree.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FlameNode {
    /// The frame's symbol (the command at the first level; `all` at the
    /// root). Raw: the renderer escapes it.
    pub name: String,
    /// Mean share of a candidate profile spent here or below.
    pub share: f64,
    /// The tested change of this symbol's inclusive share.
    pub change: Change,
    /// That row's shift (on its scale), when it was tested.
    pub shift: Option<f64>,
    pub children: Vec<FlameNode>,
}

#[derive(Default)]
struct Tree {
    share: f64,
    children: BTreeMap<String, Tree>,
}

impl Tree {
    fn into_node(self, name: String, rows: &BTreeMap<&str, &ExplainRow>) -> FlameNode {
        let row = rows.get(name.as_str());
        let mut children: Vec<FlameNode> = self
            .children
            .into_iter()
            .filter(|(_, child)| child.share >= FLAME_FLOOR)
            .map(|(name, child)| child.into_node(name, rows))
            .collect();
        children.sort_by(|a, b| a.name.cmp(&b.name));
        FlameNode {
            change: row.map_or(Change::None, |row| row.change),
            shift: row.map(|row| row.shift),
            name,
            share: self.share,
            children,
        }
    }
}

/// The candidate cell's profiles on `host`, merged (see the module
/// documentation); `None` without a profile that has samples.
pub(crate) fn flame_graph(
    host: Option<&ExplainHost<'_>>,
    candidate: usize,
    symbols: &[ExplainRow],
) -> Option<FlameNode> {
    let host = host?;
    let profiles: Vec<_> = host
        .samples
        .iter()
        .filter(|sample| sample.cell == candidate && sample.is_data())
        .filter_map(|sample| host.details.get(&sample.sequence)?.profile.as_ref())
        .filter(|profile| profile.weight > 0)
        .collect();
    if profiles.is_empty() {
        return None;
    }
    let count = profiles.len() as f64;
    let mut root = Tree::default();
    for profile in profiles {
        for stack in &profile.stacks {
            let share = stack.weight as f64 / profile.weight as f64 / count;
            root.share += share;
            let mut node = &mut root;
            for frame in std::iter::once(&stack.comm).chain(&stack.frames) {
                node = node.children.entry(frame.clone()).or_default();
                node.share += share;
            }
        }
    }
    let rows: BTreeMap<&str, &ExplainRow> = symbols
        .iter()
        .filter(|row| row.share == Some(ShareKind::Inclusive))
        .map(|row| (row.name.as_str(), row))
        .collect();
    Some(root.into_node("all".to_string(), &rows))
}
