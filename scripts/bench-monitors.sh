#!/usr/bin/env bash
# What monitors and profiles cost per iteration: the same experiment with
# `[monitors] enabled = false` (the peer), with monitors on (the default),
# and with `[profile]` every block, in the same run, alternating rounds so
# machine drift hits each alike.
#
#   scripts/bench-monitors.sh [ITERATIONS] [ROUNDS]
#
# Monitors: the workload is `true`, so the difference between the two runs
# per iteration is what monitors add to an iteration (reading /proc/stat,
# /proc/interrupts, /proc/softirqs and /proc/vmstat before and after,
# parsing them, storing ~100 counters with the sample), in wall time and
# in CPU time of the whole run (verdict and its children, from
# /usr/bin/time); each is shown as a share of a 100 ms iteration, the bar
# for monitors being on by default (1%). On a machine shared with other
# work the wall time also counts waiting for a CPU; the CPU time does not. The snapshots are read outside the timed interval: the
# median wall verdict records for `true` is shown for both, and should not
# move. Profiles: a 100 ms loop with `[profile] event = "cpu-clock"` in
# every block against the same without; the difference per profiled
# iteration is the profiled extra run plus `perf script` and cleanup.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-1000}
rounds=${2:-10}
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "gcc is not installed (apt-get install gcc)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is not installed (apt-get install time)" >&2; exit 2; }
cargo build --release -q -p verdict
verdict=$PWD/target/release/verdict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.9f\", $1 }"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

experiment() { # NAME MONITORS COMMAND ITERATIONS [PROFILE]
  cat > "$work/$1.toml" <<EOF
name = "$1"
command = $3
[sampling]
iterations = $4
warmups = 0
[monitors]
enabled = $2
$5
EOF
}
experiment off false '["true"]' "$iterations" ""
experiment on true '["true"]' "$iterations" ""

run() { # NAME -> seconds, cpu seconds, and the run's median recorded wall in us
  local start; start=$(now)
  /usr/bin/time -f "%U %S" -o "$work/time" "$verdict" run --db "$work/v.db" --format json "$work/$1.toml" > "$work/$1.json" 2> "$work/$1.err" || { echo "verdict run failed:" >&2; tail -5 "$work/$1.err" >&2; exit 1; }
  seconds=$(calc "$(now) - $start")
  cpu=$(awk '{ printf "%.6f", $1 + $2 }' "$work/time")
  recorded=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cells"][0]["median"]*1e6)' "$work/$1.json")
}

printf '%-6s %12s %12s %10s %12s %12s %10s %12s %12s\n' round "off us/it" "on us/it" "added us" "off cpu us" "on cpu us" "added cpu" "off wall us" "on wall us"
added=(); shares=(); cpu_added=(); cpu_shares=()
for round in $(seq 1 "$rounds"); do
  if (( round % 2 )); then order="off on"; else order="on off"; fi
  for name in $order; do
    run "$name"
    declare "${name}_seconds=$seconds" "${name}_cpu=$cpu" "${name}_recorded=$recorded"
  done
  off=$(calc "$off_seconds * 1000000 / $iterations")
  on=$(calc "$on_seconds * 1000000 / $iterations")
  off_c=$(calc "$off_cpu * 1000000 / $iterations")
  on_c=$(calc "$on_cpu * 1000000 / $iterations")
  difference=$(calc "$on - $off")
  cpu_difference=$(calc "$on_c - $off_c")
  added+=("$difference"); shares+=("$(calc "$difference / 100000 * 100")")
  cpu_added+=("$cpu_difference"); cpu_shares+=("$(calc "$cpu_difference / 100000 * 100")")
  printf '%-6s %12.0f %12.0f %10.0f %12.0f %12.0f %10.0f %12.0f %12.0f\n' "$round" "$off" "$on" "$difference" "$off_c" "$on_c" "$cpu_difference" "$off_recorded" "$on_recorded"
done
printf 'monitors: median %.0f us of wall time added per iteration = %.3f%% of a 100 ms iteration; %.0f us of CPU time = %.3f%% (%s iterations x %s rounds, %s)\n' \
  "$(printf '%s\n' "${added[@]}" | median)" "$(printf '%s\n' "${shares[@]}" | median)" \
  "$(printf '%s\n' "${cpu_added[@]}" | median)" "$(printf '%s\n' "${cpu_shares[@]}" | median)" \
  "$iterations" "$rounds" "$(uname -r)"

# Profiles: a ~100 ms loop, 6 iterations per round, profiled in every block.
cat > "$work/loop.c" <<'EOF'
#include <stdlib.h>
int main(int argc, char **argv) { volatile double x = 0; for (long i = 0; i < atol(argv[1]); i++) x += i * 0.5; return 0; }
EOF
gcc -O1 -fno-omit-frame-pointer -o "$work/loop" "$work/loop.c"
calibrated=30000000
experiment plain true "[\"$work/loop\", \"$calibrated\"]" 6 ""
experiment profiled true "[\"$work/loop\", \"$calibrated\"]" 6 $'[profile]\nevent = "cpu-clock"'
printf '%-6s %14s %16s %16s %16s %12s\n' round "plain s/iter" "profiled s/iter" "added s/profile" "added cpu s" "loop cpu ms"
extra=(); extra_cpu=()
for round in 1 2 3; do
  if (( round % 2 )); then order="plain profiled"; else order="profiled plain"; fi
  for name in $order; do
    run "$name"
    declare "${name}_seconds=$seconds" "${name}_cpu=$cpu" "${name}_recorded=$recorded"
  done
  difference=$(calc "($profiled_seconds - $plain_seconds) / 6")
  cpu_difference=$(calc "($profiled_cpu - $plain_cpu) / 6")
  extra+=("$difference"); extra_cpu+=("$cpu_difference")
  printf '%-6s %14.3f %16.3f %16.3f %16.3f %12.1f\n' "$round" "$(calc "$plain_seconds / 6")" "$(calc "$profiled_seconds / 6")" "$difference" "$cpu_difference" "$(calc "$plain_cpu / 6 * 1000")"
done
printf 'profiles: median %.3f s of wall time and %.3f s of CPU time added per profiled iteration of a loop using %.0f ms of CPU\n' \
  "$(printf '%s\n' "${extra[@]}" | median)" "$(printf '%s\n' "${extra_cpu[@]}" | median)" "$(calc "$plain_cpu / 6 * 1000")"

# The store alone: per-sample cost in SQLite and in PostgreSQL (a
# throwaway cluster, Debian package postgresql) without details, with ~100
# monitors, and with monitors and a profile
# (crates/verdict-store/examples/details_bench.rs).
cargo run --release -q -p verdict-store --example details_bench -- 2000 5 500
