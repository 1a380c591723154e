#!/usr/bin/env bash
# Extract the Kconfig files of Debian's linux-source-6.1 to
# /usr/src/linux-source-6.1 (where the kconfig real-tree tests look, unless
# VERDICT_KERNEL_SRC says otherwise). Needs the linux-source-6.1 package.
# Only Kconfig* files are extracted (about 15 s); the configs of
# linux-config-6.1 are read compressed as packaged.
set -euo pipefail
tarball=/usr/src/linux-source-6.1.tar.xz
target=/usr/src/linux-source-6.1
if [ -f "$target/Kconfig" ]; then
  echo "kernel tree already at $target"
  exit 0
fi
if [ ! -f "$tarball" ]; then
  echo "no $tarball (apt-get install linux-source-6.1)" >&2
  exit 1
fi
tar -C /usr/src -xf "$tarball" --wildcards '*/Kconfig*'
echo "extracted Kconfig files to $target"
