#!/usr/bin/env bash
# What a kernel built from source costs (docs/performance.md, "Kernels
# built from source"): in a fresh kernel cache, `verdict run` of an
# experiment with two boot levels, Debian's linux-source-6.1 (tinyconfig +
# kvm_guest.config + verdict:vm-guest) without and with the one-file patch
# of examples/rcu-expedite-smt-switch.patch, one boot each of `true`; then
# the same run again (every kernel from the cache). Prints, per build,
# what verdict recorded (the seconds the run spent, make's seconds, built
# or cached) and, as the peer, Kbuild's own no-op: `make` in the shared
# checkout and object directory with nothing changed.
#
#   scripts/bench-kernel-build.sh [VERDICT_BINARY] [CACHE_DIRECTORY]
#
# With CACHE_DIRECTORY holding the unpatched kernel already (the CI test's
# cache, target/tmp/kernel-cache, does), the first run builds only the
# patched one. Needs linux-source-6.1, make, gcc, flex, bison, bc,
# libelf-dev, git, xz-utils, qemu-system-x86, busybox-static,
# openssh-server, python3, and about 3.5 GB of disk for a fresh cache.
# Takes the time of one full kernel build plus a few minutes in a fresh
# cache (about 5 minutes on 2 idle cores; 40 minutes at a load average of
# 12). Must not: touch the user's kernel cache (the cache is a new
# directory unless one is given); leaves nothing but a given cache.
set -euo pipefail
cd "$(dirname "$0")/.."
verdict=$(realpath "${1:-target/release/verdict}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache=$(realpath -m "${2:-$work/cache}")
patch=$(realpath examples/rcu-expedite-smt-switch.patch)
tree=/usr/src/linux-source-6.1.tar.xz
build="tree = \"$tree\", config = \"tinyconfig\", fragments = [\"kvm_guest.config\", \"verdict:vm-guest\"]"
cat >"$work/bench.toml" <<EOF
name = "bench-kernel-build"
command = ["true"]

[factors.patch]
levels = [
  { value = "without", boot = { build = { $build } } },
  { value = "with", boot = { build = { $build, patches = ["$patch"] } } },
]

[sampling]
iterations = 1

[target]
vm = { smp = "2", memory = "1G", accel = "tcg", cmdline = "no_timer_check" }
EOF

run() {
  local label=$1
  echo "== $label"
  VERDICT_KERNEL_CACHE=$cache /usr/bin/time -f "$label: %e s wall (verdict run, with 2 boots), %U s user, %S s sys" \
    "$verdict" run "$work/bench.toml" --db "$work/v.db" >/dev/null 2>"$work/$label.err" || {
    cat "$work/$label.err"
    exit 1
  }
  grep -E '^verdict: (kernel for|importing|building)' "$work/$label.err" || true
  tail -n 1 "$work/$label.err"
  local run
  run=$("$verdict" runs --db "$work/v.db" --format json | python3 -c 'import json,sys; print(max(r["id"] for r in json.load(sys.stdin)["runs"]))')
  "$verdict" report "$run" --db "$work/v.db" --format json | python3 -c '
import json, sys
for record in json.load(sys.stdin)["boots"]["kernel_builds"]:
    build = record.get("build") or {}
    print("  %-14s %-7s %7.1f s in this run; make %7.1f s; key %s" % (
        ",".join(record["levels"]), record["status"], record["seconds"],
        build.get("build_seconds", 0.0), build.get("key", "-")[:20]))
'
}

uptime
run first
run again
src=$(ls -d "$cache"/work/*/src | head -n 1)
obj=$(dirname "$src")/obj
echo "== peer: Kbuild's own no-op make in the shared checkout and object directory"
/usr/bin/time -f "make with nothing to do: %e s wall, %U s user, %S s sys" \
  make -C "$src" O="$obj" -j"$(nproc)" >/dev/null
uptime
