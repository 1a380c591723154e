#!/usr/bin/env bash
# Shared work at scale (the figures in docs/performance.md, "The lab at
# scale"): builds verdict and the work_scale example (release), then runs
# it on a throwaway PostgreSQL cluster it starts (Debian package
# `postgresql`) with durable settings: the cost per sample of `verdict
# work` against `verdict run`, the parallel efficiency of 8 controllers
# against one, and one detached run of BLOCKS blocks measured by 16
# controllers over 8 host names (a 20 ms workload), with blocks per second
# over its first and last 1,000 blocks and where the CPU went.
#
# Usage: scripts/bench-work.sh [BLOCKS [ROUNDS [PARTS]]]
#   (default 10000 9 cost,parallel,scale)
#
# Must not: touch any database but the ones it creates in a temporary
# directory, or leave a server or a worker running.
set -euo pipefail
cd "$(dirname "$0")/.."
blocks=${1:-10000}
rounds=${2:-9}
parts=${3:-cost,parallel,scale}
export CARGO_INCREMENTAL=0
cargo build -q --release -p verdict
cargo run -q --release -p verdict-store --example work_scale -- target/release/verdict "$blocks" "$rounds" "$parts"
