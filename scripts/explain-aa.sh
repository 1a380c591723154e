#!/usr/bin/env bash
# Real A/A runs of `verdict explain`: RUNS experiments (default 20) whose
# two levels run the same command (a C program of two loops taking turns,
# and a directory walk for some kernel time), monitors on and a cpu-clock
# profile in every block; each one explained at q = 0.05. Prints each run's
# rows tested and discoveries, and how many runs reported nothing (the
# goal: nothing in at least 19 of 20). The figure is in docs/validation.md.
#
#   scripts/explain-aa.sh [RUNS] [ITERATIONS]
#
# Must not: leave anything behind (one temporary directory, removed).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
iterations=${2:-10}
for tool in gcc perf python3; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 2; }
done
cargo build --release -q -p verdict
verdict=$PWD/target/release/verdict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/same.c" <<'EOF'
#include <stdlib.h>
__attribute__((noinline, noipa)) double work_a(long n) { double x = 0; for (long i = 0; i < n; i++) x += i * 0.5; return x; }
__attribute__((noinline, noipa)) double work_b(long n) { double x = 0; for (long i = 0; i < n; i++) x += i * 0.25; return x; }
int main(int argc, char **argv) {
    volatile double r = 0;
    for (int turn = 0; turn < 400; turn++) r += work_a(atol(argv[1]) / 400) + work_b(atol(argv[1]) / 400);
    return r < 0;
}
EOF
gcc -O1 -fno-omit-frame-pointer -o "$work/same" "$work/same.c"
cat > "$work/aa.toml" <<EOF
name = "explain-aa"
command = ["sh", "-c", "\"\$0\" 30000000 && ls -R /usr/share/doc > /dev/null", "$work/same"]
[factors]
copy = ["a", "b"]
[sampling]
iterations = $iterations
warmups = 1
[profile]
event = "cpu-clock"
EOF
quiet=0
printf '%-4s %8s %12s %s\n' run tested discoveries rows
for run in $(seq 1 "$runs"); do
  "$verdict" run --db "$work/aa.db" "$work/aa.toml" >/dev/null 2>&1
  "$verdict" explain --db "$work/aa.db" --format json > "$work/explain.json"
  line=$(python3 - "$work/explain.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
comparison = report["comparisons"][0]
rows = [row["name"] + (" (" + row["share"] + ")" if "share" in row else "")
        for row in comparison["monitors"] + comparison["symbols"]]
print(comparison["tested"], comparison["discoveries"], "; ".join(rows))
EOF
)
  read -r tested discoveries names <<<"$line"
  [ "$discoveries" = 0 ] && quiet=$((quiet + 1))
  printf '%-4s %8s %12s %s\n' "$run" "$tested" "$discoveries" "${names:-}"
done
printf 'A/A: %d of %d runs reported nothing at q = 0.05 (%s iterations per level, %s)\n' "$quiet" "$runs" "$iterations" "$(uname -r)"
