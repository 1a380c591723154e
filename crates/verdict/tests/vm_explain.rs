//! `verdict explain` inside a real QEMU guest (TCG, Debian's kernel): the
//! planted program and perf put in the guest with `programs`, one boot
//! for both levels; the guest's own perf records the profiled iterations,
//! the agent there reads /proc around each one, and explain names the
//! function that does 30% more work first, with an interval that excludes
//! 0. One short VM run.

mod common;

use common::planted::{PLANTED, compile};
use common::vm::debian_kernel;
use serde_json::Value;

#[test]
fn a_planted_function_is_named_first_inside_a_tcg_guest() {
    let Some(kernel) = debian_kernel() else {
        return;
    };
    let Some(perf) = verdict_testkit::require_program("perf", "linux-perf") else {
        return;
    };
    if verdict_testkit::require_program("gcc", "gcc").is_none() {
        return;
    }
    // Under the target directory, wherever the checkout is (also under
    // /tmp: the guest keeps what the initramfs put there over its tmpfs).
    let directory = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let program = compile(
        directory.path(),
        "planted",
        &[("planted.c", PLANTED.as_bytes())],
    );
    // TCG runs the loops some ten times slower than the host: a few
    // million iterations give a few hundred samples per profile at 4999 Hz.
    std::fs::write(
        directory.path().join("e.toml"),
        format!(
            "name = \"planted-vm\"\ncommand = [\"{program}\", \"{{a}}\", \"4000000\"]\n\
             [factors]\na = [\"4000000\", \"5200000\"]\n\
             [sampling]\niterations = 8\nwarmups = 0\ntimeout = \"120s\"\nseed = 5\n\
             [profile]\nevent = \"cpu-clock\"\nfrequency = 4999\n\
             [target]\nvm = {{ kernel = \"{kernel}\", cmdline = \"no_timer_check\", cpus = 2, memory = \"1G\", accel = \"tcg\", boot_timeout = \"400s\", programs = [\"{program}\", \"{perf}\"] }}\n",
            program = program.display(),
            kernel = kernel.display(),
            perf = perf.display(),
        ),
    )
    .unwrap();
    let ran = common::verdict(directory.path())
        .args(["run", "e.toml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr).into_owned();
    assert!(
        ran.status.success(),
        "{}\n{stderr}",
        String::from_utf8_lossy(&ran.stdout)
    );
    let explained =
        common::succeed(common::verdict(directory.path()).args(["explain", "--format", "json"]));
    let report: Value = serde_json::from_str(&explained).unwrap();
    let comparison = &report["comparisons"][0];
    assert_eq!(comparison["name"], "a=5200000 vs 4000000");
    assert_eq!(comparison["baseline"]["profiles"], 8, "{comparison:#}");
    assert_eq!(comparison["candidate"]["profiles"], 8, "{comparison:#}");
    assert_eq!(
        comparison["candidate"]["monitored"], 8,
        "read by the guest's agent"
    );
    let first = &comparison["symbols"][0];
    assert_eq!(first["name"], "work_a", "{comparison:#}");
    assert_eq!(first["change"], "increase");
    assert!(first["interval"][0].as_f64().unwrap() > 0.0, "{first:#}");
    for symbol in comparison["symbols"].as_array().unwrap() {
        assert!(
            !(symbol["name"] == "work_b" && symbol["change"] == "increase"),
            "{symbol:#}"
        );
    }
}
