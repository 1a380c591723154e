#!/usr/bin/env bash
# Harness overhead: verdict vs hyperfine on the same trivial command, in the
# same run, alternating rounds so machine drift hits both alike.
#
#   scripts/bench-overhead.sh [ITERATIONS] [ROUNDS]
#
# Per-iteration cost = total wall time of the tool / ITERATIONS (spawning
# `true`, waiting, measuring, and for verdict: capturing output, extracting
# metrics and committing each sample to SQLite). Prints each round and the
# median ratio verdict/hyperfine; < 1 means verdict's overhead is lower.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-2000}
rounds=${2:-10}
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
cargo build --release -q -p verdict
verdict=$PWD/target/release/verdict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
# Arithmetic with awk (bc is not on every machine).
calc() { awk "BEGIN { printf \"%.9f\", $1 }"; }
ratios=()
printf '%-6s %18s %18s %8s\n' round "verdict us/iter" "hyperfine us/iter" ratio
run_verdict() {
  local start; start=$(now)
  "$verdict" ab --db "$work/v.db" -n "$iterations" true >/dev/null 2>&1
  verdict_seconds=$(calc "$(now) - $start")
}
run_hyperfine() {
  local start; start=$(now)
  hyperfine -N -r "$iterations" --style none true >/dev/null 2>&1
  hyperfine_seconds=$(calc "$(now) - $start")
}
for round in $(seq 1 "$rounds"); do
  # ABBA: odd rounds run verdict first, even rounds hyperfine first, so
  # neither tool always follows the other.
  if (( round % 2 )); then run_verdict; run_hyperfine; else run_hyperfine; run_verdict; fi
  v=$(calc "$verdict_seconds * 1000000 / $iterations")
  h=$(calc "$hyperfine_seconds * 1000000 / $iterations")
  r=$(calc "$v / $h")
  ratios+=("$r")
  printf '%-6s %18.0f %18.0f %8.3f\n' "$round" "$v" "$h" "$r"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
printf 'median ratio verdict/hyperfine: %.3f (%s iterations x %s rounds, %s)\n' "$median" "$iterations" "$rounds" "$(uname -r)"
