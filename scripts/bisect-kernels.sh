#!/usr/bin/env bash
# bisect-kernels.sh: a statistical kernel bisection with real QEMU, longer
# than CI can afford (docs/bisect.md, "Bisecting kernels"). Must not: be
# run in CI (every boot costs 15-90 s under TCG on a loaded machine; the
# default settings take about 40-90 boots), or touch anything outside its
# work directory.
#
# It generates a git repository of COMMITS commits standing in for a kernel
# tree: each commit's "build" copies the host's Debian kernel (KERNEL) into
# the tree and writes verdict-boot.toml with the commit's command line,
# `demo.loops=N`: LOOPS before the culprit (commit CULPRIT), LOOPS plus
# SHIFT_PERCENT percent from it on. The workload, run in the guest, counts
# to the N of its own /proc/cmdline in busybox sh, so its wall time
# depends on the boot it runs in, with the noise of TCG on this machine
# (within a boot and from boot to boot). Then it runs
#   verdict bisect --worktrees --boot-kernel bzImage --boot-spec verdict-boot.toml
#       --batch BATCH --step-error STEP_ERROR
# and prints whether the culprit was named, the runs and the boots, and
# `verdict bisect log`.
#
# Environment:
#   COMMITS=8 CULPRIT=5 LOOPS=20000 SHIFT_PERCENT=50 BATCH=3 STEP_ERROR=0.1
#   ENDPOINT_MAX_RUNS=60 MAX_RUNS_PER_STEP=60
#   KERNEL=newest /boot/vmlinuz-*   ACCEL=tcg   BOOT_TIMEOUT=400s
#   VERDICT=path to the verdict binary (default: cargo build --release)
#   WORK=directory for the repository, database and logs (default: mktemp)
set -euo pipefail

COMMITS=${COMMITS:-8}
CULPRIT=${CULPRIT:-5}
LOOPS=${LOOPS:-20000}
SHIFT_PERCENT=${SHIFT_PERCENT:-50}
BATCH=${BATCH:-3}
STEP_ERROR=${STEP_ERROR:-0.1}
ENDPOINT_MAX_RUNS=${ENDPOINT_MAX_RUNS:-60}
MAX_RUNS_PER_STEP=${MAX_RUNS_PER_STEP:-60}
ACCEL=${ACCEL:-tcg}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-400s}
KERNEL=${KERNEL:-$(ls /boot/vmlinuz-* 2>/dev/null | sort | tail -n 1)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d /tmp/bisect-kernels.XXXXXX)}
mkdir -p "$WORK"

if [ -z "$KERNEL" ] || [ ! -f "$KERNEL" ]; then
    echo "bisect-kernels.sh: no kernel image in /boot (apt-get install linux-image-amd64)" >&2
    exit 2
fi
for program in qemu-system-x86_64 busybox sshd ssh-keygen git; do
    if ! command -v "$program" > /dev/null; then
        echo "bisect-kernels.sh: $program is missing (see scripts/test for the Debian packages)" >&2
        exit 2
    fi
done
if [ -z "${VERDICT:-}" ]; then
    (cd "$ROOT" && cargo build --release -q -p verdict)
    VERDICT=$ROOT/target/release/verdict
fi

repo=$WORK/repo
rm -rf "$repo" "$WORK/v.db"
mkdir -p "$repo"
git_() {
    git -C "$repo" -c user.name=bisect-kernels -c user.email=bisect-kernels@localhost "$@"
}
git_ init -q
cat > "$repo/build.sh" <<EOF
#!/bin/sh
# Stands in for \`make bzImage\`: the kernel, and this commit's boot level.
set -e
cp '$KERNEL' bzImage
printf '[boot]\\ncmdline = "%s"\\n' "\$(cat cmdline)" > verdict-boot.toml
EOF
chmod +x "$repo/build.sh"
printf 'bzImage\nverdict-boot.toml\n' > "$repo/.gitignore"
hashes=()
for index in $(seq 0 $((COMMITS - 1))); do
    loops=$LOOPS
    if [ "$index" -ge "$CULPRIT" ]; then
        loops=$((LOOPS + LOOPS * SHIFT_PERCENT / 100))
    fi
    echo "demo.loops=$loops" > "$repo/cmdline"
    echo "revision $index" > "$repo/REVISION"
    git_ add -A
    git_ commit -q -m "commit $index"
    hashes+=("$(git_ rev-parse HEAD)")
done

cat > "$WORK/exp.toml" <<EOF
name = "loops"
command = ["sh", "-c", "n=\$(sed -n 's/.*demo[.]loops=\\\\([0-9]*\\\\).*/\\\\1/p' /proc/cmdline); i=0; while [ \$i -lt \$n ]; do i=\$((i + 1)); done"]

[sampling]
boot_retries = 1

[target]
vm = { kernel = "$KERNEL", cmdline = "no_timer_check", cpus = 2, memory = "1G", accel = "$ACCEL", boot_timeout = "$BOOT_TIMEOUT" }
EOF

echo "work directory: $WORK"
echo "culprit: commit $CULPRIT ${hashes[$CULPRIT]} (+$SHIFT_PERCENT% loops), $COMMITS commits"
start=$(date +%s)
cd "$WORK"
status=0
VERDICT_DB=$WORK/v.db NO_COLOR=1 "$VERDICT" bisect --repo "$repo" \
    --good "${hashes[0]}" --bad "${hashes[$((COMMITS - 1))]}" --experiment exp.toml \
    --worktrees --build ./build.sh --boot-kernel bzImage --boot-spec verdict-boot.toml \
    --batch "$BATCH" --step-error "$STEP_ERROR" \
    --endpoint-max-runs "$ENDPOINT_MAX_RUNS" --max-runs-per-step "$MAX_RUNS_PER_STEP" \
    > "$WORK/bisect.txt" 2> "$WORK/bisect.err" || status=$?
end=$(date +%s)
cat "$WORK/bisect.txt"
if [ "$status" -ne 0 ]; then
    tail -n 5 "$WORK/bisect.err"
fi
if grep -q "^first bad commit: ${hashes[$CULPRIT]}" "$WORK/bisect.txt"; then
    echo "result: right culprit"
else
    echo "result: NOT the culprit (exit $status)"
fi
echo "wall time: $((end - start)) s"
VERDICT_DB=$WORK/v.db NO_COLOR=1 "$VERDICT" bisect log
