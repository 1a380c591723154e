#!/usr/bin/env bash
# bench-bisect.sh: accuracy and cost of `verdict bisect` on real git
# repositories of a small C program whose run time grows by about 10% at
# one commit, against fixed-N bisection (--fixed-runs) on the same
# repositories. Must not: be run in CI (it takes hours at full size), or
# touch anything outside its work directory.
#
# Each trial generates a repository of COMMITS commits of prog.c, a busy
# loop of ITERATIONS iterations (3-12 ms on the development VM, whose speed
# varies that much from second to second); at the culprit (a random
# position, seeded per trial) the count grows by SHIFT_PERCENT percent.
# Every other commit changes a comment or an unrelated function. Build hook:
# gcc -O1 -o prog prog.c. Per trial it reports: culprit found or not, total
# runs, wall time; then a summary table (accuracy, mean and p95 runs).
#
# Environment (defaults are the issue's benchmark; about 12 minutes here):
#   TRIALS=20 COMMITS=200 SHIFT_PERCENT=10 ITERATIONS=5000000
#   FIXED_RUNS=15 (0 skips the fixed-N pass)  SEED=1
#   VERDICT=path to the verdict binary (default: cargo build --release)
#   WORK=directory for repositories, databases and logs (default: mktemp)
#   EXTRA_ARGS="..." arguments for verdict bisect, both modes (default:
#     --worktrees --batch 1 --max-runs-per-step 600: every commit built once
#     in its own worktree, the endpoints and the candidate run back to back)
# Quick version: TRIALS=3 COMMITS=60 scripts/bench-bisect.sh
set -euo pipefail

TRIALS=${TRIALS:-20}
COMMITS=${COMMITS:-200}
SHIFT_PERCENT=${SHIFT_PERCENT:-10}
ITERATIONS=${ITERATIONS:-5000000}
FIXED_RUNS=${FIXED_RUNS:-15}
SEED=${SEED:-1}
EXTRA_ARGS=${EXTRA_ARGS:---worktrees --batch 1 --max-runs-per-step 600}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d /tmp/bench-bisect.XXXXXX)}
mkdir -p "$WORK"

if [ -z "${VERDICT:-}" ]; then
    (cd "$ROOT" && cargo build --release -q -p verdict)
    VERDICT=$ROOT/target/release/verdict
fi
command -v gcc >/dev/null || { echo "bench-bisect: gcc is required" >&2; exit 2; }
# Build each commit once across both modes and all bisections of a trial
# (without --worktrees every block switches commits and would recompile).
# The cache is keyed by the commit.
mkdir -p "$WORK/build-cache"
BUILD="h=\$(git rev-parse HEAD); if [ -x '$WORK/build-cache/'\$h ]; then cp '$WORK/build-cache/'\$h prog; else gcc -O1 -o prog prog.c && cp prog '$WORK/build-cache/'\$h; fi"

# prog.c for commit $1 (1-based) of a repository whose culprit is $2.
write_program() {
    local index=$1 culprit=$2 iterations=$ITERATIONS
    if [ "$index" -ge "$culprit" ]; then
        iterations=$(( ITERATIONS + ITERATIONS * SHIFT_PERCENT / 100 ))
    fi
    cat > prog.c <<C
/* revision $index: a busy loop standing in for a workload. */
#include <stdio.h>

static int unrelated_$((index % 7))(int value) { return value * $(( index % 13 + 1 )); }

int main(void) {
    volatile unsigned long counter = 0;
    for (unsigned long step = 0; step < ${iterations}UL; step++) {
        counter += step;
    }
    if (unrelated_$((index % 7))((int)(counter & 1)) < 0) {
        puts("never");
    }
    return 0;
}
C
}

# make_repo DIR CULPRIT: COMMITS commits, the first good, the last bad.
make_repo() {
    local directory=$1 culprit=$2
    rm -rf "$directory"
    mkdir -p "$directory"
    (
        cd "$directory"
        git init -q
        printf 'prog\n' > .gitignore
        for index in $(seq 1 "$COMMITS"); do
            write_program "$index" "$culprit"
            git add prog.c .gitignore
            git -c user.name=bench -c user.email=bench@localhost commit -qm "commit $index"
        done
    )
}

printf 'name = "prog"\ncommand = ["./prog"]\n' > "$WORK/experiment.toml"

# bisect MODE TRIAL REPO CULPRIT_HASH: one bisection; prints one result line.
bisect() {
    local mode=$1 trial=$2 repo=$3 expected=$4 database log start end
    database=$WORK/$mode-$trial.db
    log=$WORK/$mode-$trial.log
    rm -f "$database"
    local mode_args=()
    if [ "$mode" = fixed ]; then
        mode_args=(--fixed-runs "$FIXED_RUNS")
    fi
    start=$(date +%s.%N)
    # shellcheck disable=SC2086 # EXTRA_ARGS is a list of arguments
    if ! "$VERDICT" bisect --db "$database" --repo "$repo" \
        --good "$(git -C "$repo" rev-list --max-parents=0 HEAD)" --bad HEAD \
        --experiment "$WORK/experiment.toml" --build "$BUILD" \
        "${mode_args[@]}" $EXTRA_ARGS > "$log" 2> "$log.err"; then
        echo "bench-bisect: $mode trial $trial failed, see $log.err" >&2
    fi
    end=$(date +%s.%N)
    local found runs correct
    found=$(sed -n 's/^first bad commit: \([0-9a-f]*\).*/\1/p' "$log")
    runs=$(sed -n 's/^[0-9]* steps, \([0-9]*\) runs in total$/\1/p' "$log")
    correct=no
    [ "$found" = "$expected" ] && correct=yes
    local named=range
    if [ -n "$found" ]; then
        named=$(git -C "$repo" log --format=%s -1 "$found" | sed 's/commit //')
    fi
    printf '%-10s %5s %6s %8s %9s %8.1f\n' "$mode" "$trial" "$correct" "${runs:-?}" \
        "$named" "$(awk -v start="$start" -v end="$end" 'BEGIN { print end - start }')"
}

results=$WORK/results.txt
: > "$results"
printf '%-10s %5s %6s %8s %9s %8s\n' mode trial found runs named seconds
echo "# per trial: right culprit or not, runs, the commit it named (range: several), wall seconds" >&2
RANDOM=$SEED
declare -a culprits
for trial in $(seq 1 "$TRIALS"); do
    culprits[trial]=$(( RANDOM % (COMMITS - 2) + 2 ))
done
for trial in $(seq 1 "$TRIALS"); do
    culprit=${culprits[trial]}
    repo=$WORK/repo-$trial
    make_repo "$repo" "$culprit"
    expected=$(git -C "$repo" log --format=%H --grep="^commit $culprit\$")
    echo "# trial $trial: $COMMITS commits, culprit commit $culprit" >&2
    bisect sequential "$trial" "$repo" "$expected" | tee -a "$results"
    if [ "$FIXED_RUNS" -gt 0 ]; then
        bisect fixed "$trial" "$repo" "$expected" | tee -a "$results"
    fi
done

echo
echo "summary: $TRIALS trials, $COMMITS commits, +$SHIFT_PERCENT% at the culprit (work dir $WORK)"
printf '%-24s %9s %10s %8s %10s\n' mode accuracy "mean runs" "p95 runs" "mean s"
for mode in sequential fixed; do
    grep "^$mode " "$results" | awk -v mode="$mode" -v label="$( [ "$mode" = fixed ] && echo "fixed N=$FIXED_RUNS" || echo sequential)" '
        { n++; if ($3 == "yes") right++; if ($4 != "?") { runs[++m] = $4; total += $4 }; seconds += $6 }
        END {
            if (n == 0) exit
            # p95: sort the runs (insertion sort, small n)
            for (i = 2; i <= m; i++) { v = runs[i]; j = i - 1; while (j > 0 && runs[j] > v) { runs[j+1] = runs[j]; j-- } runs[j+1] = v }
            p = int((m * 95 + 99) / 100); if (p < 1) p = 1
            printf "%-24s %4d/%-4d %10.0f %8s %10.1f\n", label, right, n, (m ? total / m : 0), (m ? runs[p] : "?"), seconds / n
        }'
done
