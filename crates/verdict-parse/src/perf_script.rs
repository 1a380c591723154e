//! `perf script -F comm,tid,period,ip,sym,dso` output folded to stacks, and
//! each symbol's self and inclusive weight: what a profiled iteration
//! spent its samples on.
//!
//! Two layouts, both read: with call chains (`perf record -g`), a header
//! line `COMM TID PERIOD`, one tab-indented line per frame `IP SYM (DSO)`
//! from the leaf to the root, and a blank line; without them, one line per
//! sample `COMM TID PERIOD IP SYM (DSO)`. The command name is left-padded
//! and may hold spaces; a symbol may hold spaces and parentheses (C++) and
//! any other byte the binary's symbol table holds, control characters
//! included: symbols are kept raw (bytes that are not UTF-8 become `\xNN`),
//! and escaping is the renderers' job. A frame perf could not resolve is
//! `[unknown]`, named here with its object (`[unknown] (/usr/lib/libc.so.6)`)
//! so unresolved code in different objects stays apart.
//!
//! Weights are perf's sample periods (nanoseconds for `cpu-clock`, events
//! for a counter), as `perf report` weighs its overhead. Source: perf-script(1);
//! the stack layout is the one Brendan Gregg's stackcollapse-perf.pl
//! (FlameGraph, 2011) folds. Must not read files or start perf.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use regex::Regex;

/// One distinct stack and the weight of the samples that had it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stack {
    /// The sampled thread's command name.
    pub comm: String,
    /// Symbols from the root (outermost caller) to the leaf.
    pub frames: Vec<String>,
    pub weight: u64,
}

/// A profile folded to its distinct stacks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoldedProfile {
    /// Samples read.
    pub samples: u64,
    /// Their summed weight.
    pub weight: u64,
    /// Distinct (command, frames), sorted.
    pub stacks: Vec<Stack>,
    /// Lines that fit neither layout (counted, never guessed at).
    pub unparsed_lines: usize,
}

/// One symbol's share of a profile.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SymbolWeight {
    pub symbol: String,
    /// Weight of the samples in which it was the leaf (running itself).
    pub self_weight: u64,
    /// Weight of the samples in which it was anywhere on the stack (itself
    /// or what it called), each sample counted once.
    pub inclusive_weight: u64,
}

fn header_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(r"^\s*(?P<comm>.*?)\s+(?P<tid>\d+)\s+(?P<period>\d+)\s*$")
            .expect("a valid pattern")
    })
}

fn single_line_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(
            r"^\s*(?P<comm>.*?)\s+(?P<tid>\d+)\s+(?P<period>\d+)\s+(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)\s+\((?P<dso>.*)\)\s*$",
        )
        .expect("a valid pattern")
    })
}

fn frame_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(r"^\s+(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)\s+\((?P<dso>.*)\)\s*$")
            .expect("a valid pattern")
    })
}

/// `bytes` as text, each byte that is not part of valid UTF-8 written
/// `\xNN` (lossless for symbol names, which are bytes).
fn text_of(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            text.push_str(&format!("\\x{byte:02x}"));
        }
    }
    text
}

fn symbol_name(symbol: &str, object: &str) -> String {
    if symbol == "[unknown]" && object != "[unknown]" {
        format!("[unknown] ({object})")
    } else {
        symbol.to_string()
    }
}

/// A sample being read: command, weight, frames leaf first.
struct Pending {
    comm: String,
    weight: u64,
    leaf_first: Vec<String>,
}

/// Folds `perf script` output (see the module documentation). Never fails:
/// what cannot be read is counted in `unparsed_lines`. O(output size).
pub fn fold_perf_script(output: &[u8]) -> FoldedProfile {
    let mut merged: HashMap<(String, Vec<String>), u64> = HashMap::new();
    let mut profile = FoldedProfile::default();
    let mut pending: Option<Pending> = None;
    let mut finish = |pending: Option<Pending>, profile: &mut FoldedProfile| {
        if let Some(sample) = pending {
            profile.samples += 1;
            profile.weight = profile.weight.saturating_add(sample.weight);
            let mut frames = sample.leaf_first;
            frames.reverse();
            let entry = merged.entry((sample.comm, frames)).or_insert(0);
            *entry = entry.saturating_add(sample.weight);
        }
    };
    for raw in output.split(|&byte| byte == b'\n') {
        let line = text_of(raw);
        if line.trim().is_empty() {
            finish(pending.take(), &mut profile);
            continue;
        }
        if line.starts_with(char::is_whitespace) && pending.is_some() {
            match frame_pattern().captures(&line) {
                Some(frame) => {
                    if let Some(sample) = pending.as_mut() {
                        sample
                            .leaf_first
                            .push(symbol_name(&frame["sym"], &frame["dso"]));
                    }
                }
                None => profile.unparsed_lines += 1,
            }
            continue;
        }
        finish(pending.take(), &mut profile);
        if let Some(sample) = single_line_pattern().captures(&line) {
            let weight = sample["period"].parse().unwrap_or(0);
            pending = Some(Pending {
                comm: sample["comm"].to_string(),
                weight,
                leaf_first: vec![symbol_name(&sample["sym"], &sample["dso"])],
            });
            finish(pending.take(), &mut profile);
        } else if let Some(header) = header_pattern().captures(&line) {
            pending = Some(Pending {
                comm: header["comm"].to_string(),
                weight: header["period"].parse().unwrap_or(0),
                leaf_first: Vec::new(),
            });
        } else {
            profile.unparsed_lines += 1;
        }
    }
    finish(pending.take(), &mut profile);
    profile.stacks = merged
        .into_iter()
        .map(|((comm, frames), weight)| Stack {
            comm,
            frames,
            weight,
        })
        .collect();
    profile.stacks.sort();
    profile
}

/// Each symbol's self and inclusive weight over `stacks`, by symbol name.
/// A symbol that appears twice on one stack (recursion) counts once there
/// in its inclusive weight. O(total frames).
pub fn symbol_weights(stacks: &[Stack]) -> Vec<SymbolWeight> {
    let mut weights: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut seen: Vec<&str> = Vec::new();
    for stack in stacks {
        seen.clear();
        for frame in &stack.frames {
            if seen.contains(&frame.as_str()) {
                continue;
            }
            seen.push(frame);
            let entry = weights.entry(frame).or_insert((0, 0));
            entry.1 = entry.1.saturating_add(stack.weight);
        }
        if let Some(leaf) = stack.frames.last() {
            let entry = weights.entry(leaf).or_insert((0, 0));
            entry.0 = entry.0.saturating_add(stack.weight);
        }
    }
    weights
        .into_iter()
        .map(|(symbol, (self_weight, inclusive_weight))| SymbolWeight {
            symbol: symbol.to_string(),
            self_weight,
            inclusive_weight,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL_CHAINS: &str = "planted 22364    1001001 \n\
        \t            1158 work_a (/tmp/planted)\n\
        \t            1190 main (/tmp/planted)\n\
        \t           2724a __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
        \n\
        planted 22364    1001001 \n\
        \t            1164 work_b (/tmp/planted)\n\
        \t            1190 main (/tmp/planted)\n\
        \t           2724a __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
        \n\
        planted 22364    1001001 \n\
        \t            1158 work_a (/tmp/planted)\n\
        \t            1190 main (/tmp/planted)\n\
        \t           2724a __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
        \n\
        kworker/0:1 H 99    500 \n\
        \tffffffff815a5300 filemap_map_pages ([kernel.kallsyms])\n\
        \t               0 [unknown] ([unknown])\n\
        \t           1462a [unknown] (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n\
        \n";

    #[test]
    fn call_chains_fold_root_first_and_merge() {
        let profile = fold_perf_script(CALL_CHAINS.as_bytes());
        assert_eq!(profile.samples, 4);
        assert_eq!(profile.weight, 3 * 1_001_001 + 500);
        assert_eq!(profile.unparsed_lines, 0);
        assert_eq!(profile.stacks.len(), 3);
        let work_a = profile
            .stacks
            .iter()
            .find(|stack| stack.frames.last().map(String::as_str) == Some("work_a"))
            .unwrap();
        assert_eq!(work_a.weight, 2_002_002);
        assert_eq!(work_a.frames, ["__libc_start_call_main", "main", "work_a"]);
        let kernel = profile
            .stacks
            .iter()
            .find(|stack| stack.comm == "kworker/0:1 H")
            .unwrap();
        assert_eq!(
            kernel.frames,
            [
                "[unknown] (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)",
                "[unknown]",
                "filemap_map_pages"
            ]
        );
        let weights = symbol_weights(&profile.stacks);
        let of = |name: &str| weights.iter().find(|weight| weight.symbol == name).unwrap();
        assert_eq!(of("work_a").self_weight, 2_002_002);
        assert_eq!(of("main").self_weight, 0);
        assert_eq!(of("main").inclusive_weight, 3_003_003);
        assert_eq!(of("filemap_map_pages").inclusive_weight, 500);
    }

    #[test]
    fn single_lines_without_call_chains() {
        let output = "         planted 23002    1001001      562a458c3158 work_a (/tmp/planted)\n\
                      \x20        planted 23002    1001001      562a458c3160 work_b (/tmp/planted)\n\
                      \x20  my prog 1 7 ff (anonymous namespace)::run(int) const (/x (y)/lib.so)\n";
        let profile = fold_perf_script(output.as_bytes());
        assert_eq!(profile.samples, 3);
        assert_eq!(profile.unparsed_lines, 0);
        let cpp = profile
            .stacks
            .iter()
            .find(|stack| stack.comm == "my prog")
            .unwrap();
        assert_eq!(cpp.frames, ["(anonymous namespace)::run(int) const"]);
        assert_eq!(cpp.weight, 7);
    }

    #[test]
    fn control_characters_and_bytes_are_kept_and_garbage_is_counted() {
        let mut output = b"p 1 10 \n\t  4f0 evil\x1b[31m\x07name\xff (/bin/p)\n\n".to_vec();
        output.extend_from_slice(b"this is not perf output\n");
        let profile = fold_perf_script(&output);
        assert_eq!(profile.samples, 1);
        assert_eq!(profile.stacks[0].frames, ["evil\u{1b}[31m\u{7}name\\xff"]);
        assert_eq!(profile.unparsed_lines, 1);
        assert_eq!(fold_perf_script(b""), FoldedProfile::default());
    }

    #[test]
    fn recursion_counts_once_inclusively() {
        let stacks = [Stack {
            comm: "p".into(),
            frames: vec!["f".into(), "f".into(), "g".into()],
            weight: 5,
        }];
        let weights = symbol_weights(&stacks);
        assert_eq!(
            weights,
            [
                SymbolWeight {
                    symbol: "f".into(),
                    self_weight: 0,
                    inclusive_weight: 5
                },
                SymbolWeight {
                    symbol: "g".into(),
                    self_weight: 5,
                    inclusive_weight: 5
                }
            ]
        );
    }
}
