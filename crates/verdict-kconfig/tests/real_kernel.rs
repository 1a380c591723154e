//! Parses a complete real kernel tree (Debian's linux-source-6.1, or
//! VERDICT_KERNEL_SRC) and explains every symbol of real configs
//! (linux-config-6.1, or VERDICT_KERNEL_CONFIGS). A missing tree or config
//! fails naming the package (verdict-testkit; VERDICT_TEST_ALLOW_MISSING=1
//! skips). Must not modify the tree or the configs.

use std::path::{Path, PathBuf};
use std::time::Instant;
use verdict_kconfig::{DotConfig, Explainer, load_tree};

fn kernel_source() -> Option<PathBuf> {
    let path = std::env::var_os("VERDICT_KERNEL_SRC")
        .map_or_else(|| PathBuf::from("/usr/src/linux-source-6.1"), PathBuf::from);
    verdict_testkit::require_path(
        &path.join("Kconfig"),
        "apt-get install linux-source-6.1, then scripts/prepare-kernel-tree.sh (or set VERDICT_KERNEL_SRC to an extracted tree)",
    )
    .map(|_| path)
}

fn config_directory() -> PathBuf {
    std::env::var_os("VERDICT_KERNEL_CONFIGS")
        .map_or_else(|| PathBuf::from("/usr/src/linux-config-6.1"), PathBuf::from)
}

/// Real amd64 configs: plain `config.*amd64*` files, or `.xz` ones
/// decompressed with the real `xz` tool.
fn amd64_configs(directory: &Path) -> Vec<(String, DotConfig)> {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or_default();
            name.starts_with("config.") && name.contains("amd64") && name.ends_with(".xz")
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let output = std::process::Command::new("xz")
                .arg("-dc")
                .arg(&path)
                .output()
                .ok()?;
            if !output.status.success() {
                return None;
            }
            let text = String::from_utf8_lossy(&output.stdout);
            let label = path.display().to_string();
            Some((
                label.clone(),
                DotConfig::parse(&text, &label).expect("real config parses"),
            ))
        })
        .collect()
}

/// Symbols that only the PREEMPT_RT patch set (Debian's rt flavour) defines.
const RT_PATCH_SYMBOLS: &[&str] = &["HAVE_ATOMIC_CONSOLE", "HAVE_PREEMPT_LAZY", "PREEMPT_LAZY"];

#[test]
fn whole_x86_tree_parses_and_every_config_symbol_is_explained() {
    let Some(source) = kernel_source() else {
        return;
    };
    let Some(_) = verdict_testkit::require_program("xz", "xz-utils") else {
        return;
    };
    let started = Instant::now();
    let tree = load_tree(&source, "x86_64").unwrap_or_else(|error| panic!("failed to {error}"));
    let elapsed = started.elapsed();
    eprintln!(
        "parsed {} files, {} definitions of the x86 tree in {:.3} s",
        tree.files,
        tree.definitions.len(),
        elapsed.as_secs_f64()
    );
    assert!(tree.files > 1000, "only {} files parsed", tree.files);
    // The budget: the whole x86 tree in under 2 seconds (release).
    if !cfg!(debug_assertions) {
        assert!(elapsed.as_secs_f64() < 2.0, "parsing took {elapsed:?}");
    }
    for symbol in [
        "PREEMPT_RCU",
        "PREEMPT_DYNAMIC",
        "HAVE_PREEMPT_DYNAMIC_CALL",
        "X86_64",
        "NET",
    ] {
        assert!(tree.is_defined(symbol), "{symbol} missing");
    }

    // The story's architecture and another one parse too.
    for arch in ["ppc64le", "arm64"] {
        let other = load_tree(&source, arch).unwrap_or_else(|error| panic!("failed to {error}"));
        assert!(other.is_defined("HAVE_PREEMPT_DYNAMIC_KEY"), "{arch}");
        assert!(other.files > 1000, "{arch}: only {} files", other.files);
    }

    let configs = amd64_configs(&config_directory());
    if configs.is_empty() {
        verdict_testkit::missing::<()>(
            &format!("a config.*amd64*.xz in {}", config_directory().display()),
            "apt-get install linux-config-6.1 (or set VERDICT_KERNEL_CONFIGS to its directory)",
        );
        return;
    }
    for (label, config) in &configs {
        let explainer = Explainer::new(&tree, config);
        let mut explained = 0;
        let mut unknown = Vec::new();
        let mut unexplained = Vec::new();
        for (name, _) in config.iter() {
            let result = if explainer.is_on(name) {
                explainer.why(name)
            } else {
                explainer.why_not(name)
            };
            match result {
                Ok(node) => {
                    let root = if node.text.starts_with(name) {
                        &node
                    } else {
                        &node.children[0]
                    };
                    assert!(
                        root.text.starts_with(&format!("{name}=")),
                        "{name}: {}",
                        node.text
                    );
                    assert!(!root.children.is_empty(), "{name}: no reason given");
                    if root
                        .children
                        .iter()
                        .any(|child| child.text.starts_with("no rule in this tree"))
                    {
                        unexplained.push(name.to_string());
                    }
                    explained += 1;
                }
                Err(_) => unknown.push(name.to_string()),
            }
        }
        eprintln!("{label}: explained {explained} symbols; not in the x86 tree: {unknown:?}");
        // Debian's amd64 configs are generated from this very tree; the rt
        // flavour adds the PREEMPT_RT patch set, whose symbols the plain
        // tree does not have.
        let allowed: &[&str] = if label.contains("_rt_") {
            RT_PATCH_SYMBOLS
        } else {
            &[]
        };
        let surprising: Vec<&String> = unknown
            .iter()
            .filter(|name| !allowed.contains(&name.as_str()))
            .collect();
        assert!(
            surprising.is_empty(),
            "{label}: symbols missing from the tree: {surprising:?}"
        );
        assert!(explained > 3000, "{label}: only {explained} symbols");
        // A symbol that is on without any rule of the tree turning it on
        // means the evaluator and kconfig disagree.
        if !label.contains("_rt_") {
            assert!(
                unexplained.is_empty(),
                "{label}: on without a reason: {unexplained:?}"
            );
        }
    }

    // The story's chain on the real tree: PREEMPT_RCU comes from PREEMPTION,
    // which PREEMPT_DYNAMIC's select of PREEMPT_BUILD provides.
    let (_, config) = &configs[0];
    let explainer = Explainer::new(&tree, config);
    if config.get("PREEMPT_RCU") == Some("y") && config.get("PREEMPT_DYNAMIC") == Some("y") {
        let node = explainer.why("PREEMPT_RCU").unwrap();
        let text = verdict_kconfig::render_tree(&node);
        eprintln!("{text}");
        assert!(
            text.contains("default y if PREEMPTION  [kernel/rcu/Kconfig:"),
            "{text}"
        );
        assert!(
            text.contains("selected by PREEMPT_DYNAMIC  [kernel/Kconfig.preempt:"),
            "{text}"
        );
        assert!(text.contains("HAVE_PREEMPT_DYNAMIC_CALL=y"), "{text}");
    }
}
