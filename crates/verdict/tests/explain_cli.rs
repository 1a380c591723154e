//! `verdict explain` end to end on this machine: real programs compiled
//! with gcc here, real `perf record`, the real store. A planted function
//! doing 30% more work is named first with an interval that excludes 0;
//! a planted pipe ping-pong shows as context switches and CPU time by
//! mode; what cannot be profiled (an event perf lacks, perf missing) is a
//! clear error before anything is measured; a workload too short for a
//! sample is a note; symbols with control characters come out escaped in
//! every format, and whole in the JSON.

mod common;

use common::planted::{PLANTED, compile};
use common::{succeed, verdict};
use serde_json::Value;
use verdict_testkit::require_program;

fn tools() -> Option<()> {
    require_program("gcc", "gcc")?;
    require_program("perf", "linux-perf")?;
    Some(())
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

#[test]
fn a_planted_function_is_named_first_with_an_interval_that_excludes_zero() {
    if tools().is_none() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let program = compile(
        directory.path(),
        "planted",
        &[("planted.c", PLANTED.as_bytes())],
    );
    // work_a does 30% more work in level 52000000; work_b never changes.
    std::fs::write(
        directory.path().join("exp.toml"),
        format!(
            "name = \"planted\"\ncommand = [\"{}\", \"{{a}}\", \"40000000\"]\n\
             [factors]\na = [\"40000000\", \"52000000\"]\n\
             [sampling]\niterations = 10\nwarmups = 0\n\
             [profile]\nevent = \"cpu-clock\"\nfrequency = 4999\n",
            program.display()
        ),
    )
    .unwrap();
    let ran = verdict(directory.path())
        .args(["run", "exp.toml"])
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    // The report points to explain (on standard error: the report
    // document itself is unchanged).
    assert!(
        String::from_utf8_lossy(&ran.stderr).contains("verdict explain 1"),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let report = json(&succeed(
        verdict(directory.path()).args(["explain", "--format", "json"]),
    ));
    assert_eq!(report["schema"], "verdict.explain/v1");
    let comparison = &report["comparisons"][0];
    assert_eq!(comparison["name"], "a=52000000 vs 40000000");
    assert_eq!(comparison["baseline"]["profiles"], 10);
    assert_eq!(
        comparison["candidate"]["profiles"], 10,
        "every cell profiled alike"
    );
    let symbols = comparison["symbols"].as_array().unwrap();
    let first = &symbols[0];
    assert_eq!(first["name"], "work_a", "{symbols:#?}");
    assert_eq!(first["share"], "self");
    assert_eq!(first["change"], "increase");
    let interval = first["interval"].as_array().unwrap();
    assert!(interval[0].as_f64().unwrap() > 0.0, "{first:#}");
    assert!(first["q"].as_f64().unwrap() <= 0.05);
    assert!(first["candidate"].as_f64().unwrap() > first["baseline"].as_f64().unwrap());
    for symbol in symbols {
        assert!(
            !(symbol["name"] == "work_b" && symbol["change"] == "increase"),
            "work_b did not change: {symbol:#}"
        );
    }
    // The profiled iterations are extra: the main metric has 10 per cell.
    let runs = json(&succeed(
        verdict(directory.path()).args(["report", "--format", "json"]),
    ));
    assert_eq!(runs["cells"][0]["n"], 10);
    // Every format renders; the HTML page draws the flame graph.
    let text = succeed(verdict(directory.path()).args(["explain"]));
    assert!(text.contains("work_a"), "{text}");
    let markdown =
        succeed(verdict(directory.path()).args(["explain", "--format", "markdown", "--all"]));
    assert!(markdown.contains("| work\\_a |"), "{markdown}");
    let page = succeed(verdict(directory.path()).args(["explain", "--format", "html"]));
    assert!(page.contains("<svg class=\"plot flame\""), "no flame graph");
    assert!(!page.contains("<script"));
    // By email: within 80 columns, the planted row first among the
    // symbols, then what ran and the command that reproduces it.
    let email = succeed(verdict(directory.path()).args(["explain", "--format", "email"]));
    assert_eq!(common::line_over(&email, 80), None, "{email}");
    let symbols = email
        .find("symbols (share of the profile)")
        .expect("a symbols block");
    assert!(
        email[symbols..]
            .lines()
            .nth(1)
            .is_some_and(|line| line.trim() == "work_a (self)"),
        "{email}"
    );
    assert!(
        email.contains("What ran") && email.contains("Reproduce"),
        "{email}"
    );
    assert!(
        email.contains("verdict run exp.toml") || email.contains("run exp.toml"),
        "{email}"
    );
}

/// A fixed loop, then (with a count above 0) that many round trips of one
/// byte between two processes over two pipes.
const PING_PONG: &str = r#"
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    volatile double x = 0;
    for (long i = 0; i < 20000000; i++) x += i * 0.5;
    if (n > 0) {
        int there[2], back[2];
        if (pipe(there) || pipe(back)) return 1;
        pid_t child = fork();
        char c = 'x';
        if (child == 0) {
            for (long i = 0; i < n; i++) { if (read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1) _exit(1); }
            _exit(0);
        }
        for (long i = 0; i < n; i++) { if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1) return 1; }
        waitpid(child, 0, 0);
    }
    return 0;
}
"#;

#[test]
fn a_planted_ping_pong_shows_as_context_switches_and_cpu_time_by_mode() {
    if require_program("gcc", "gcc").is_none() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let program = compile(
        directory.path(),
        "pingpong",
        &[("pingpong.c", PING_PONG.as_bytes())],
    );
    std::fs::write(
        directory.path().join("exp.toml"),
        format!(
            "name = \"pingpong\"\ncommand = [\"{}\", \"{{pipes}}\"]\n\
             [factors]\npipes = [\"0\", \"40000\"]\n\
             [sampling]\niterations = 8\nwarmups = 0\n",
            program.display()
        ),
    )
    .unwrap();
    succeed(verdict(directory.path()).args(["run", "exp.toml"]));
    let report = json(&succeed(
        verdict(directory.path()).args(["explain", "--format", "json", "--all"]),
    ));
    let monitors = report["comparisons"][0]["monitors"].as_array().unwrap();
    let row = |name: &str| {
        monitors
            .iter()
            .find(|row| row["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {monitors:#?}"))
    };
    for name in ["context_switches", "workload.voluntary_switches"] {
        let switches = row(name);
        assert_eq!(switches["change"], "increase", "{switches:#}");
        let interval = switches["interval"].as_array().unwrap();
        assert!(interval[0].as_f64().unwrap() > 0.0, "{switches:#}");
    }
    // Where the time moved: the CPU modes are rows with their shifts; the
    // pipes' system calls add system time (the rows are system-wide, so on
    // a loaded machine other processes' time makes them noisier than the
    // workload's own switches: the shift's sign is asserted, not a
    // discovery).
    let system = row("cpu.system");
    assert!(system["shift"].as_f64().unwrap() > 0.0, "{system:#}");
    assert!(system["explains"].as_f64().is_some(), "{system:#}");
    assert!(monitors.iter().any(|row| row["name"] == "cpu.user"));
    let text = succeed(verdict(directory.path()).args(["explain"]));
    assert!(text.contains("context_switches"), "{text}");
    // Two runs of one cell each (as a bisection measures two commits):
    // `--baseline` compares them as two levels.
    for (name, pipes) in [("quiet", "0"), ("busy", "40000")] {
        std::fs::write(
            directory.path().join(format!("{name}.toml")),
            format!(
                "name = \"{name}\"\ncommand = [\"{}\", \"{pipes}\"]\n[sampling]\niterations = 6\nwarmups = 0\n",
                program.display()
            ),
        )
        .unwrap();
        succeed(verdict(directory.path()).args(["run", &format!("{name}.toml")]));
    }
    let report = json(&succeed(verdict(directory.path()).args([
        "explain",
        "3",
        "--baseline",
        "2",
        "--format",
        "json",
    ])));
    let comparison = &report["comparisons"][0];
    assert_eq!(comparison["name"], "run=3 vs 2");
    assert!(
        comparison["monitors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["name"] == "workload.voluntary_switches" && row["change"] == "increase"),
        "{comparison:#}"
    );
    // Run 1 has two cells: not a run of one cell.
    let refused = verdict(directory.path())
        .args(["explain", "1", "--baseline", "2"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("run 1 has 2 cells"));
}

#[test]
fn what_cannot_be_profiled_is_refused_before_measuring() {
    if tools().is_none() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let experiment = |event: &str| {
        format!(
            "name = \"refused\"\ncommand = [\"true\"]\n[sampling]\niterations = 2\nwarmups = 0\n[profile]\nevent = \"{event}\"\n"
        )
    };
    // An event perf does not know.
    std::fs::write(
        directory.path().join("bad.toml"),
        experiment("no-such-event"),
    )
    .unwrap();
    let refused = verdict(directory.path())
        .args(["run", "bad.toml"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("profile on local: perf cannot record the event `no-such-event` there"),
        "{message}"
    );
    // Nothing was measured: no run was created.
    let runs = succeed(verdict(directory.path()).args(["runs", "--format", "json"]));
    assert_eq!(
        json(&runs)["runs"].as_array().map(Vec::len),
        Some(0),
        "{runs}"
    );
    // `cycles`: on a machine without a PMU (this VM) perf quietly records
    // cpu-clock instead, which is refused; where the PMU has it, it runs.
    std::fs::write(directory.path().join("cycles.toml"), experiment("cycles")).unwrap();
    let probe = directory.path().join("probe.data");
    std::process::Command::new("perf")
        .args(["record", "-e", "cycles", "-q", "-o"])
        .arg(&probe)
        .args(["--", "true"])
        .output()
        .unwrap();
    let listed = std::process::Command::new("perf")
        .args(["evlist", "-i"])
        .arg(&probe)
        .output()
        .unwrap();
    let has_cycles = String::from_utf8_lossy(&listed.stdout).starts_with("cycles");
    let cycles = verdict(directory.path())
        .args(["run", "cycles.toml"])
        .output()
        .unwrap();
    if has_cycles {
        assert!(
            cycles.status.success(),
            "{}",
            String::from_utf8_lossy(&cycles.stderr)
        );
    } else {
        assert_eq!(cycles.status.code(), Some(2));
        let message = String::from_utf8_lossy(&cycles.stderr);
        assert!(
            message.contains(
                "the event `cycles` is not supported there: perf recorded `cpu-clock` instead"
            ),
            "{message}"
        );
    }
    // perf missing on the target: a PATH with what verdict needs but perf.
    let bin = directory.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["mktemp", "rm", "true", "git"] {
        let found = verdict_testkit::find_program(tool).unwrap();
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    std::fs::write(directory.path().join("cpu.toml"), experiment("cpu-clock")).unwrap();
    let missing = verdict(directory.path())
        .env("PATH", &bin)
        .args(["run", "cpu.toml"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let message = String::from_utf8_lossy(&missing.stderr);
    assert!(
        message.contains("perf could not be started") && message.contains("linux-perf"),
        "{message}"
    );
}

#[test]
fn a_too_short_workload_is_a_note_and_hostile_symbols_come_out_escaped() {
    if tools().is_none() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    // A function whose symbol holds an escape sequence, markup, a table
    // separator and a bell: its loop runs in that symbol, beside a plain
    // loop, so its share of the profile varies and is tested.
    let name = "evil\u{1b}[31m<b>&name|x\u{7}";
    let assembly = format!(
        ".text\n.globl spin\n.type spin, @function\nspin:\n jmp \"{name}\"\n.size spin, .-spin\n\
         .globl \"{name}\"\n.type \"{name}\", @function\n\"{name}\":\n mov %rdi, %rcx\n1: dec %rcx\n jnz 1b\n ret\n\
         .size \"{name}\", .-\"{name}\"\n.section .note.GNU-stack,\"\",@progbits\n"
    );
    let program = compile(
        directory.path(),
        "hostile",
        &[
            ("spin.s", assembly.as_bytes()),
            (
                "main.c",
                b"#include <stdlib.h>\nvoid spin(long n);\n\
                  __attribute__((noinline)) double work(long n) { double x = 0; for (long i = 0; i < n; i++) x += i * 0.5; return x; }\n\
                  int main(int c, char **v) { spin(atol(v[1])); volatile double r = work(60000000); return r < 0; }\n",
            ),
        ],
    );
    std::fs::write(
        directory.path().join("exp.toml"),
        format!(
            "name = \"hostile\"\ncommand = [\"{}\", \"{{n}}\"]\n[factors]\nn = [\"100000000\", \"150000000\"]\n\
             [sampling]\niterations = 3\nwarmups = 0\n[profile]\nevent = \"cpu-clock\"\n",
            program.display()
        ),
    )
    .unwrap();
    succeed(verdict(directory.path()).args(["run", "exp.toml"]));
    let text = succeed(verdict(directory.path()).args(["explain", "1", "--all"]));
    assert!(text.contains("evil\\x1b[31m<b>&name|x\\x07"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'));
    let markdown =
        succeed(verdict(directory.path()).args(["explain", "1", "--all", "--format", "markdown"]));
    assert!(
        markdown.contains("evil\\\\x1b\\[31m\\<b\\>\\&name\\|x\\\\x07"),
        "{markdown}"
    );
    let page =
        succeed(verdict(directory.path()).args(["explain", "1", "--all", "--format", "html"]));
    assert!(
        page.contains("evil\u{241b}[31m&lt;b&gt;&amp;name|x\u{2407}"),
        "escaped in the page"
    );
    assert!(!page.contains("<b>&name") && !page.contains('\u{1b}'));
    // Nothing lost: the JSON holds the name exactly.
    let report = json(&succeed(
        verdict(directory.path()).args(["explain", "1", "--all", "--format", "json"]),
    ));
    let symbols = report["comparisons"][0]["symbols"].as_array().unwrap();
    assert!(
        symbols.iter().any(|symbol| symbol["name"] == name),
        "{symbols:#?}"
    );
    // `true` is far shorter than a sampling period: its profiles are
    // empty, and explain says why instead of failing.
    std::fs::write(
        directory.path().join("short.toml"),
        "name = \"short\"\ncommand = [\"true\"]\n[factors]\nx = [\"a\", \"b\"]\n\
         [sampling]\niterations = 3\nwarmups = 0\n[profile]\nevent = \"cpu-clock\"\n",
    )
    .unwrap();
    succeed(verdict(directory.path()).args(["run", "short.toml"]));
    let text = succeed(verdict(directory.path()).args(["explain", "2"]));
    assert!(
        text.contains("note: no samples: the profiled iteration ran"),
        "{text}"
    );
}

#[test]
fn without_monitors_there_is_nothing_to_explain() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(
        directory.path().join("exp.toml"),
        "name = \"quiet\"\ncommand = [\"true\"]\n[factors]\nx = [\"a\", \"b\"]\n\
         [sampling]\niterations = 3\nwarmups = 0\n[monitors]\nenabled = false\n",
    )
    .unwrap();
    let ran = verdict(directory.path())
        .args(["run", "exp.toml"])
        .output()
        .unwrap();
    assert!(ran.status.success());
    assert!(!String::from_utf8_lossy(&ran.stderr).contains("verdict explain"));
    let explained = verdict(directory.path())
        .args(["explain"])
        .output()
        .unwrap();
    assert_eq!(explained.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&explained.stderr)
            .contains("run 1 captured no monitors and no profiles"),
        "{}",
        String::from_utf8_lossy(&explained.stderr)
    );
}
