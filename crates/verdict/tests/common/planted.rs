//! The planted programs of `verdict explain`'s tests (on this machine and
//! in a TCG guest), compiled here with gcc: sources and the compiler call
//! only, no assertion about verdict's output.

use std::path::{Path, PathBuf};

/// Two loops that are never inlined (nor called once for all: `noipa`),
/// taking turns; the first argument sizes `work_a`, the second `work_b`.
pub const PLANTED: &str = r#"
#include <stdlib.h>
__attribute__((noinline, noipa)) double work_a(long n) { double x = 0; for (long i = 0; i < n; i++) x += i * 0.5; return x; }
__attribute__((noinline, noipa)) double work_b(long n) { double x = 0; for (long i = 0; i < n; i++) x += i * 0.25; return x; }
int main(int argc, char **argv) {
    long a = atol(argv[1]), b = atol(argv[2]);
    volatile double r = 0;
    /* In 400 turns: however unevenly perf's samples fall in time (a
       guest's timer under a loaded host), each function's share of them
       follows its share of the work. */
    for (int turn = 0; turn < 400; turn++) r += work_a(a / 400) + work_b(b / 400);
    return r < 0;
}
"#;

/// Compiles `sources` (file name, text) in `directory` with gcc into
/// `program`; frame pointers kept so perf's call chains are whole.
pub fn compile(directory: &Path, program: &str, sources: &[(&str, &[u8])]) -> PathBuf {
    let mut arguments: Vec<String> = vec![
        "-O1".into(),
        "-fno-omit-frame-pointer".into(),
        "-o".into(),
        directory.join(program).display().to_string(),
    ];
    for (name, text) in sources {
        std::fs::write(directory.join(name), text).unwrap();
        arguments.push(directory.join(name).display().to_string());
    }
    let output = std::process::Command::new("gcc")
        .args(&arguments)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    directory.join(program)
}
