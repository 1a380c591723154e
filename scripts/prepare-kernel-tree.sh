#!/usr/bin/env bash
# Prepare Debian's linux-source-6.1 for the kconfig tests:
#  1. extract what the Kconfig parser and the kernel's own `make olddefconfig`
#     / `make ARCH=... defconfig` need (Kconfig*, Makefile*, Kbuild*,
#     scripts/, arch/*/configs/, arch/*/tools/) to /usr/src/linux-source-6.1
#     (where the tests look, unless VERDICT_KERNEL_SRC says otherwise);
#  2. build the kernel's scripts/kconfig/conf (the oracle) and compute the
#     oracle outputs once, in VERDICT_KCONFIG_ORACLE (default
#     /usr/src/linux-kconfig-oracle): for each of Debian's amd64, cloud and
#     rt configs and the arm64 `defconfig` / powerpc `ppc64_defconfig`,
#     NAME.input (the config given to olddefconfig) and NAME.olddefconfig
#     (what `make olddefconfig` wrote).
# Idempotent: each step is skipped when its output exists. Needs
# linux-source-6.1, linux-config-6.1, xz-utils, make, gcc, flex, bison, bc.
set -euo pipefail
tarball=/usr/src/linux-source-6.1.tar.xz
target=/usr/src/linux-source-6.1
oracle=${VERDICT_KCONFIG_ORACLE:-/usr/src/linux-kconfig-oracle}
configs=/usr/src/linux-config-6.1

if [ ! -f "$target/scripts/kconfig/conf.c" ] || [ ! -f "$target/Kconfig" ]; then
  if [ ! -f "$tarball" ]; then
    echo "no $tarball (apt-get install linux-source-6.1)" >&2
    exit 1
  fi
  tar -C /usr/src -xf "$tarball" --wildcards '*/Kconfig*' '*/Makefile*' '*/Kbuild*' \
    'linux-source-6.1/scripts/*' 'linux-source-6.1/arch/*/configs/*' \
    'linux-source-6.1/arch/*/tools/*'
  echo "extracted the Kconfig files, Makefiles and scripts to $target"
else
  echo "kernel tree already at $target"
fi

if [ -f "$oracle/done" ]; then
  echo "kconfig oracle outputs already in $oracle"
  exit 0
fi
for tool in make gcc flex bison xz; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "prepare-kernel-tree: $tool is missing; the kconfig oracle is not built" >&2
    exit 1
  fi
done
mkdir -p "$oracle"

# make_in NAME ARCH TARGET: runs the kernel's make with an output directory
# of its own, so the source tree stays clean.
make_in() {
  local name=$1 arch=$2
  shift 2
  make -s -C "$target" O="$oracle/build-$name" ARCH="$arch" "$@" >"$oracle/$name.log" 2>&1
}

for flavour in amd64_none_amd64:amd64 amd64_none_cloud-amd64:cloud amd64_rt_amd64:rt; do
  file=${flavour%%:*}
  name=${flavour##*:}
  mkdir -p "$oracle/build-$name"
  xz -dc "$configs/config.$file.xz" >"$oracle/$name.input"
  cp "$oracle/$name.input" "$oracle/build-$name/.config"
  make_in "$name" x86 olddefconfig
  cp "$oracle/build-$name/.config" "$oracle/$name.olddefconfig"
done

for pair in arm64:arm64:defconfig powerpc:powerpc:ppc64_defconfig; do
  IFS=: read -r name arch defconfig <<<"$pair"
  mkdir -p "$oracle/build-$name"
  make_in "$name" "$arch" "$defconfig"
  cp "$oracle/build-$name/.config" "$oracle/$name.input"
  make_in "$name" "$arch" olddefconfig
  cp "$oracle/build-$name/.config" "$oracle/$name.olddefconfig"
done

cp "$oracle/build-amd64/scripts/kconfig/conf" "$oracle/conf"
rm -rf "$oracle"/build-*
# The tests cache the kernel's answers for their perturbed configs here.
mkdir -p "$oracle/cache"
chmod 1777 "$oracle/cache"
touch "$oracle/done"
echo "kconfig oracle built in $oracle"
