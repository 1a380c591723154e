#!/usr/bin/env bash
# ssh targets over loopback: what the agent costs and whether it keeps the
# target's timings, against local runs and the naive ssh-per-iteration
# approach, all measured in the same run.
#
#   scripts/bench-ssh.sh [ITERATIONS] [ROUNDS]
#
# 1. Fidelity: the median wall time verdict records for `sleep 0.05` over
#    ssh (timed by the agent on the target) against the local median.
# 2. Cost: per-iteration wall time of `verdict ab -n ITERATIONS true`
#    locally and with --host, both as total time / iterations (set-up
#    included: for --host the ssh connection, the probe and hashing the
#    binary to check the agent) and steady (the span of the recorded start
#    times / (iterations - 1)), and of a shell loop running `ssh HOST true`
#    once per iteration through a ControlMaster connection (the naive
#    approach at its best) and without one. Rounds alternate the order
#    (ABBA).
# Needs openssh-server and openssh-client; starts one throwaway sshd on
# 127.0.0.1 (scripts/ssh-loopback-hosts.sh) and stops it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-500}
rounds=${2:-4}
cargo build --release -q -p verdict
verdict=$PWD/target/release/verdict
work=$(mktemp -d)
cleanup() { kill $(cat "$work"/hosts/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
config=$(scripts/ssh-loopback-hosts.sh "$work/hosts" 1)
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.9f\", $1 }"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# Median wall of the data samples of the latest run in a database.
recorded_median() {
  python3 - "$1" <<'PY'
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
run = db.execute("select max(id) from runs").fetchone()[0]
walls = [w for (w,) in db.execute(
    "select wall_seconds from samples where run_id = ? and warmup = 0 and failed = 0", (run,))]
print(f"{statistics.median(walls):.6f}")
PY
}
# Microseconds between consecutive iteration starts in the latest run.
steady_us() {
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run = db.execute("select max(id) from runs").fetchone()[0]
first, last, count = db.execute(
    "select min(started_at_ms), max(started_at_ms), count(*) from samples where run_id = ?", (run,)).fetchone()
print(f"{(last - first) * 1000 / (count - 1):.0f}")
PY
}

echo "== fidelity: recorded median wall of 'sleep 0.05', 40 iterations each =="
printf '%-6s %14s %14s %8s\n' round "local s" "ssh s" ratio
fidelity=()
for round in $(seq 1 "$rounds"); do
  local_db=$work/local-$round.db; ssh_db=$work/ssh-$round.db
  run_local() { "$verdict" ab --db "$local_db" -n 40 'sleep 0.05' >/dev/null 2>&1; }
  run_ssh() { "$verdict" ab --db "$ssh_db" --host host1 --ssh-config "$config" -n 40 'sleep 0.05' >/dev/null 2>&1; }
  if (( round % 2 )); then run_local; run_ssh; else run_ssh; run_local; fi
  l=$(recorded_median "$local_db"); s=$(recorded_median "$ssh_db")
  r=$(calc "$s / $l"); fidelity+=("$r")
  printf '%-6s %14.6f %14.6f %8.4f\n' "$round" "$l" "$s" "$r"
done
printf 'median ratio ssh/local of the recorded medians: %.4f\n\n' "$(printf '%s\n' "${fidelity[@]}" | median)"

echo "== cost per iteration of 'true' ($iterations iterations; naive loops $((iterations / 5))) =="
printf '%-6s %9s %9s %9s %9s %12s %10s %8s %8s %8s\n' round "local us" "steady" "agent us" "steady" "naive+mux us" "naive us" agent/l steady naive+mux/l
agent_ratios=(); steady_ratios=(); naive_ratios=()
naive=$((iterations / 5))
for round in $(seq 1 "$rounds"); do
  time_local() { local t; t=$(now); "$verdict" ab --db "$work/cost-local-$round.db" -n "$iterations" true >/dev/null 2>&1; local_s=$(calc "$(now) - $t"); }
  time_agent() { local t; t=$(now); "$verdict" ab --db "$work/cost-agent-$round.db" --host host1 --ssh-config "$config" -n "$iterations" true >/dev/null 2>&1; agent_s=$(calc "$(now) - $t"); }
  time_naive_mux() {
    local control=$work/mux; local t
    ssh -F "$config" -o BatchMode=yes -o ControlMaster=yes -o ControlPersist=30 -o ControlPath="$control" -N host1
    t=$(now)
    for _ in $(seq 1 "$naive"); do ssh -F "$config" -o BatchMode=yes -o ControlPath="$control" host1 true; done
    mux_s=$(calc "$(now) - $t")
    ssh -F "$config" -o ControlPath="$control" -O exit host1 2>/dev/null
  }
  time_naive() {
    local t; t=$(now)
    for _ in $(seq 1 "$naive"); do ssh -F "$config" -o BatchMode=yes host1 true; done
    plain_s=$(calc "$(now) - $t")
  }
  if (( round % 2 )); then time_local; time_agent; time_naive_mux; time_naive
  else time_naive; time_naive_mux; time_agent; time_local; fi
  l=$(calc "$local_s * 1000000 / $iterations"); a=$(calc "$agent_s * 1000000 / $iterations")
  ls=$(steady_us "$work/cost-local-$round.db"); as=$(steady_us "$work/cost-agent-$round.db")
  m=$(calc "$mux_s * 1000000 / $naive"); p=$(calc "$plain_s * 1000000 / $naive")
  ra=$(calc "$a / $l"); rs=$(calc "$as / $ls"); rm=$(calc "$m / $l")
  agent_ratios+=("$ra"); steady_ratios+=("$rs"); naive_ratios+=("$rm")
  printf '%-6s %9.0f %9.0f %9.0f %9.0f %12.0f %10.0f %8.3f %8.3f %8.1f\n' "$round" "$l" "$ls" "$a" "$as" "$m" "$p" "$ra" "$rs" "$rm"
done
printf 'median ratios: agent/local %.3f (total), %.3f (steady); naive with ControlMaster/local %.1f (%s, %s, load %s)\n' \
  "$(printf '%s\n' "${agent_ratios[@]}" | median)" "$(printf '%s\n' "${steady_ratios[@]}" | median)" \
  "$(printf '%s\n' "${naive_ratios[@]}" | median)" "$(uname -r)" "$(ssh -V 2>&1)" "$(cut -d' ' -f1-3 /proc/loadavg)"
