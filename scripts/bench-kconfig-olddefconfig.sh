#!/usr/bin/env bash
# Whole-tree olddefconfig, side by side: the kernel's own `make olddefconfig`
# (Debian's linux-source-6.1, scripts/kconfig/conf already built) against
# `verdict kconfig olddefconfig` with the toolchain probes run
# (--run-probes, the same work the kernel does) and without them (answers
# from the config). Both read Debian's amd64 config as `make olddefconfig`
# wrote it; hyperfine measures them in the same run, so the ratio holds on a
# noisy machine even where absolute times do not.
# Usage: scripts/bench-kconfig-olddefconfig.sh [VERDICT_BINARY]
# Needs scripts/prepare-kernel-tree.sh done, hyperfine, make, gcc.
set -euo pipefail
verdict=${1:-target/release/verdict}
verdict=$(realpath "$verdict")
source_tree=${VERDICT_KERNEL_SRC:-/usr/src/linux-source-6.1}
oracle=${VERDICT_KCONFIG_ORACLE:-/usr/src/linux-kconfig-oracle}
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
input="$oracle/amd64.olddefconfig"
mkdir -p "$work/build"
cp "$input" "$work/build/.config"
# Build the kernel's conf once, outside the measurement.
make -s -C "$source_tree" O="$work/build" ARCH=x86 olddefconfig >/dev/null
cmp "$work/build/.config" "$input"
hyperfine --warmup 1 --runs "$runs" --export-markdown "$work/result.md" \
  -n "make olddefconfig" \
  "cp $input $work/build/.config && make -s -C $source_tree O=$work/build ARCH=x86 olddefconfig" \
  -n "verdict olddefconfig --run-probes" \
  "$verdict kconfig olddefconfig --tree $source_tree --config $input --arch x86_64 --run-probes -o $work/probes.config" \
  -n "verdict olddefconfig" \
  "$verdict kconfig olddefconfig --tree $source_tree --config $input --arch x86_64 -o $work/config.config"
cmp "$work/probes.config" "$input"
cmp "$work/config.config" "$input"
echo "all three outputs are byte-identical"
cat "$work/result.md"
