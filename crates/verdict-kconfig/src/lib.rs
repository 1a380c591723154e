//! verdict-kconfig: kernel `.config` files, their differences, a Kconfig tree
//! parser and evaluator, reason trees that explain why a symbol has its
//! value, and the config fragments verdict ships (`vm-guest`). Reading
//! files happens only in [`load`] (behind [`SourceFiles`]); everything else
//! works on text and values and never prints.

mod config;
mod diff;
mod difference;
mod edit;
mod error;
mod evaluate;
mod explain;
mod expr;
mod fragment;
mod load;
mod macros;
mod parser;
mod ranking;
mod reason;
mod tree;
mod whatif;

pub use config::{DotConfig, decode_config_bytes};
pub use diff::{ConfigDiff, DiffCounts, DiffDocument, DiffEntry, DiffKind};
pub use difference::{NamedDifference, named_difference};
pub use edit::{
    ValueError, apply_edit, assignment_line, changed_symbols, edit_config, goal_value, symbol_name,
};
pub use error::KconfigError;
pub use evaluate::{Cause, Evaluation, blame_causes, similar_symbols};
pub use explain::{BlameDocument, WhyDocument, blame, blame_heading, evaluator_preamble, explain};
pub use expr::{Expr, Tristate};
pub use fragment::{Unmet, fragment, fragment_names, unmet, vm_guest_needs};
pub use load::{
    DirectorySource, MemoryFiles, SourceFiles, guess_arch, kernel_version, load_kernel_tree,
    load_tree, load_tree_expanded, make_environment, read_config, require_kconfig,
    srcarch_for_arch,
};
pub use macros::{NoProbes, PROBE_MARKER, ProbeRunner, mentions_probe};
pub use parser::{ParseOptions, parse_tree, parse_tree_expanded};
pub use ranking::render_causes;
pub use reason::{Blame, Explainer, ReasonNode, render_blame, render_tree};
pub use tree::{
    Block, BlockKind, Choice, Default, Definition, Dependency, Kconfig, Location, Node, NodeKind,
    Prompt, Range, ReverseDependency, SymbolType,
};
pub use whatif::{HowAnswer, SetOutcome, Way, how, set_symbols, unknown_symbol};
