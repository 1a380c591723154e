//! The fixture tree of story 2 (tests/fixtures/preempt-tree): parsing it,
//! and the reason chain PREEMPT_RCU <- PREEMPT_DYNAMIC <- HAVE_PREEMPT_DYNAMIC
//! <- HAVE_PREEMPT_DYNAMIC_KEY <- PPC with file:line at each step; why-not
//! in the old config; and the blame between the two.

use std::path::{Path, PathBuf};
use verdict_kconfig::{Blame, DotConfig, Explainer, Kconfig, load_tree, render_blame, render_tree};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn tree() -> Kconfig {
    load_tree(&fixtures().join("preempt-tree"), "ppc64le").expect("fixture tree parses")
}

fn config(name: &str) -> DotConfig {
    let path = fixtures().join("configs").join(name);
    DotConfig::parse(&std::fs::read_to_string(&path).unwrap(), name).unwrap()
}

/// Line number of the first line of `file` (in the fixture tree) that
/// contains `needle`, so the tests do not hard-code line numbers.
fn line_of(file: &str, needle: &str) -> String {
    let text = std::fs::read_to_string(fixtures().join("preempt-tree").join(file)).unwrap();
    let index = text.lines().position(|line| line.contains(needle)).unwrap();
    format!("{file}:{}", index + 1)
}

#[test]
fn parses_nested_sources_for_powerpc() {
    let tree = tree();
    assert_eq!(tree.files, 10);
    assert_eq!(tree.srcarch, "powerpc");
    let ppc = tree.definitions_of("PPC").next().unwrap();
    assert_eq!(
        ppc.location.to_string(),
        line_of("arch/powerpc/Kconfig", "config PPC")
    );
    let splpar = tree.definitions_of("PPC_SPLPAR").next().unwrap();
    assert_eq!(
        splpar.location.file.as_ref(),
        "arch/powerpc/platforms/Kconfig"
    );
    assert_eq!(tree.choices.len(), 2);
    assert_eq!(
        tree.choices[0].members,
        ["PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT", "PREEMPT_RT"]
    );
}

#[test]
fn why_preempt_rcu_names_the_whole_chain_with_locations() {
    let tree = tree();
    let config = config("new.config");
    let node = Explainer::new(&tree, &config).why("PREEMPT_RCU").unwrap();
    let text = render_tree(&node);
    let expected_steps = [
        format!(
            "PREEMPT_RCU=y  [{}]",
            line_of("kernel/rcu/Kconfig", "config PREEMPT_RCU")
        ),
        format!(
            "default y if PREEMPT || PREEMPT_RT || PREEMPT_DYNAMIC  [{}]",
            line_of("kernel/rcu/Kconfig", "default y if (PREEMPT ||")
        ),
        format!(
            "PREEMPT_DYNAMIC=y  [{}]",
            line_of("kernel/Kconfig.preempt", "config PREEMPT_DYNAMIC")
        ),
        format!(
            "set by the user at prompt \"Preemption behaviour defined on boot\"  [{}]",
            line_of(
                "kernel/Kconfig.preempt",
                "Preemption behaviour defined on boot"
            )
        ),
        format!(
            "depends on HAVE_PREEMPT_DYNAMIC && !PREEMPT_RT: holds  [{}]",
            line_of("kernel/Kconfig.preempt", "depends on HAVE_PREEMPT_DYNAMIC")
        ),
        format!(
            "selected by HAVE_PREEMPT_DYNAMIC_KEY  [{}]",
            "arch/Kconfig:".to_string()
                + &(std::fs::read_to_string(fixtures().join("preempt-tree/arch/Kconfig"))
                    .unwrap()
                    .lines()
                    .enumerate()
                    .skip_while(|(_, line)| !line.contains("config HAVE_PREEMPT_DYNAMIC_KEY"))
                    .find(|(_, line)| line.contains("select HAVE_PREEMPT_DYNAMIC"))
                    .unwrap()
                    .0
                    + 1)
                .to_string()
        ),
        format!(
            "selected by PPC  [{}]",
            line_of("arch/powerpc/Kconfig", "select HAVE_PREEMPT_DYNAMIC_KEY")
        ),
        format!("PPC=y  [{}]", line_of("arch/powerpc/Kconfig", "config PPC")),
    ];
    let mut position = 0;
    for step in &expected_steps {
        let found = text[position..]
            .find(step.as_str())
            .unwrap_or_else(|| panic!("missing step `{step}` (in order) in:\n{text}"));
        position += found + step.len();
    }
    // PREEMPT and PREEMPT_RT are off, so only the holding part of the `||`
    // is explained.
    assert!(!text.contains("PREEMPT_RT=n (explained above)") || text.contains("!PREEMPT_RT"));
    assert!(!text.contains("\n   |- PREEMPT=n"), "{text}");
}

#[test]
fn why_not_in_the_old_config_names_the_unmet_dependency() {
    let tree = tree();
    let config = config("old.config");
    let explainer = Explainer::new(&tree, &config);
    let text = render_tree(&explainer.why_not("PREEMPT_DYNAMIC").unwrap());
    assert!(text.starts_with("PREEMPT_DYNAMIC=n"), "{text}");
    assert!(
        text.contains("unmet dependency: depends on HAVE_PREEMPT_DYNAMIC && !PREEMPT_RT: is n"),
        "{text}"
    );
    assert!(text.contains("HAVE_PREEMPT_DYNAMIC=n"), "{text}");
    assert!(
        text.contains(
            "would be selected by HAVE_PREEMPT_DYNAMIC_KEY: HAVE_PREEMPT_DYNAMIC_KEY is off"
        ),
        "{text}"
    );
    let rcu = render_tree(&explainer.why_not("PREEMPT_RCU").unwrap());
    assert!(
        rcu.contains("default y if PREEMPT || PREEMPT_RT || PREEMPT_DYNAMIC: condition is n"),
        "{rcu}"
    );
    // An `if` block and a choice member.
    let fanout = render_tree(&explainer.why_not("RCU_FANOUT").unwrap());
    assert!(
        fanout.contains("unmet dependency: inside `if RCU_EXPERT`: is n"),
        "{fanout}"
    );
    let preempt = render_tree(&explainer.why_not("PREEMPT").unwrap());
    assert!(
        preempt.contains("not chosen in choice \"Preemption Model\": PREEMPT_VOLUNTARY was chosen"),
        "{preempt}"
    );
    // why-not for a symbol that is on says so.
    let on = explainer.why_not("PPC").unwrap();
    assert_eq!(on.text, "PPC is not off: it is y");
}

#[test]
fn why_explains_choices_implies_and_user_values() {
    let tree = tree();
    let config = config("new.config");
    let explainer = Explainer::new(&tree, &config);
    let voluntary = render_tree(&explainer.why("PREEMPT_VOLUNTARY").unwrap());
    assert!(
        voluntary.contains("chosen in choice \"Preemption Model\""),
        "{voluntary}"
    );
    assert!(
        voluntary.contains("(the choice's default would be PREEMPT_NONE: default PREEMPT_NONE)"),
        "{voluntary}"
    );
    let crc = render_tree(&explainer.why("CRC32").unwrap());
    assert!(crc.contains("implied by PPC"), "{crc}");
    let cpus = render_tree(&explainer.why("NR_CPUS").unwrap());
    assert!(
        cpus.contains("set by the user at prompt \"Maximum number of CPUs (2-8192)\""),
        "{cpus}"
    );
    assert!(
        cpus.contains("(its default here is \"2048\": default \"2048\" if PPC64)"),
        "{cpus}"
    );
    let elf = render_tree(&explainer.why("CC_HAS_ELFV2").unwrap());
    assert!(elf.contains("is a toolchain probe"), "{elf}");
    let unknown = explainer.why("NOT_A_SYMBOL").unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "explain NOT_A_SYMBOL: no `config NOT_A_SYMBOL` in the Kconfig tree for arch powerpc"
    );
}

#[test]
fn blame_highlights_the_arch_select_that_changed() {
    // The old kernel: the same tree without the arch patch's select line.
    let old_root = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("preempt-tree"), old_root.path());
    let arch_file = old_root.path().join("arch/powerpc/Kconfig");
    let patched = std::fs::read_to_string(&arch_file)
        .unwrap()
        .replace("\tselect HAVE_PREEMPT_DYNAMIC_KEY\n", "");
    std::fs::write(&arch_file, patched).unwrap();
    let old_tree = load_tree(old_root.path(), "ppc64le").unwrap();
    let new_tree = tree();
    let old_config = config("old.config");
    let new_config = config("new.config");
    let old = Explainer::new(&old_tree, &old_config)
        .why("PREEMPT_RCU")
        .unwrap();
    let new = Explainer::new(&new_tree, &new_config)
        .why("PREEMPT_RCU")
        .unwrap();
    let blame = Blame::between("PREEMPT_RCU", old, new);
    let text = render_blame(&blame);
    let select_line = line_of("arch/powerpc/Kconfig", "select HAVE_PREEMPT_DYNAMIC_KEY");
    assert!(
        blame.only_old.contains(
            &"HAVE_PREEMPT_DYNAMIC_KEY: no prompt, default, select or imply can turn it on"
                .to_string()
        ),
        "{text}"
    );
    assert!(
        blame.only_new.contains(&format!(
            "PPC: default y  [{}]",
            line_of("arch/powerpc/Kconfig", "default y")
        )),
        "{text}"
    );
    assert!(
        text.contains("*    |           |- the user picked PREEMPT_VOLUNTARY"),
        "{text}"
    );
    assert!(text.contains("Leaves only in NEW:"), "{text}");
    assert!(
        text.contains(&format!("selected by PPC  [{select_line}]")),
        "{text}"
    );
    assert!(!blame.only_old.is_empty(), "{text}");
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_constant_m_needs_modules() {
    let files = verdict_kconfig::MemoryFiles::new(&[(
        "Kconfig",
        "config MODULES\n\tbool \"modules\"\n\tmodules\nconfig T\n\ttristate\n\tdefault m\n",
    )]);
    let tree = verdict_kconfig::parse_tree(
        &files,
        "Kconfig",
        &verdict_kconfig::ParseOptions::for_srcarch("x86"),
    )
    .unwrap();
    let with_modules = DotConfig::from_pairs([("MODULES", "y"), ("T", "m")]);
    let text = render_tree(&Explainer::new(&tree, &with_modules).why("T").unwrap());
    assert!(text.contains("`- default m  [Kconfig:6]"), "{text}");
    let without = DotConfig::from_pairs([("MODULES", "n")]);
    let text = render_tree(&Explainer::new(&tree, &without).why_not("T").unwrap());
    assert!(text.contains("default m: applies and gives n"), "{text}");
}
