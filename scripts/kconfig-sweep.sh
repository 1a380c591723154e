#!/usr/bin/env bash
# The wide kconfig mechanism sweep: verdict's olddefconfig against the
# kernel's own scripts/kconfig/conf on Debian's amd64, cloud and rt configs
# and the arm64 / powerpc defconfigs, each with whole mechanisms turned off
# or on (MODULES, 64BIT, EXPERT, COMPILE_TEST, PCI, NET, BLOCK, SMP, PRINTK,
# ... and combinations; the lists are in
# crates/verdict-kconfig/tests/olddefconfig_oracle.rs). CI runs the first
# few of each list; this runs them all (VERDICT_KCONFIG_SWEEP=wide) and
# prints one line per perturbation and a summary per config, the figures in
# docs/kconfig.md ("Testing against a real kernel tree").
# Usage: scripts/kconfig-sweep.sh [extra cargo test arguments]
# Needs scripts/prepare-kernel-tree.sh done. The kernel's answers are cached
# under the oracle directory, so a second run only pays for verdict's side.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
VERDICT_KCONFIG_SWEEP=wide cargo test -p verdict-kconfig --test olddefconfig_oracle \
  "$@" mechanisms -- --nocapture --test-threads=1 >"$log" 2>&1 || status=$?
# (cargo's "test NAME ... " may share a line with the first result)
results=$(grep -oE 'mechanisms? [a-z0-9]+[ :].*' "$log" || true)
echo "$results"
if [ "$status" -ne 0 ]; then
  grep -E 'panicked|differs|error' "$log" >&2 || tail -40 "$log" >&2
fi
total=$(grep -cE '^mechanism [^:]+: (identical|DIFFERENT)' <<<"$results" || true)
identical=$(grep -cE '^mechanism [^:]+: identical' <<<"$results" || true)
effect=$(grep -E '^mechanism [^:]+: ' <<<"$results" | grep -cvE '\(0 lines changed' || true)
echo "sweep: $identical of $total perturbations byte-identical to the kernel's conf" \
  "($effect changed the kernel's output), $(($(date +%s) - started)) s"
exit "$status"
