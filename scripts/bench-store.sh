#!/usr/bin/env bash
# Store throughput: PostgreSQL against SQLite in the same run (the figures
# in docs/performance.md). Builds verdict and the store_bench example
# (release), then runs it: samples/s written by one writer (one
# transaction per sample, as `verdict run` and `verdict work` write), and
# over one run of 10^6 stored samples in each store `verdict report` (text,
# JSON), `verdict export` (CSV, JSON) and a repeated `verdict push`, each
# with its wall and CPU time and peak RSS. PostgreSQL is a throwaway cluster the
# example starts (Debian package `postgresql`) and stops.
#
# Usage: scripts/bench-store.sh [WRITES [REPORT_SAMPLES [KEEP_SQLITE]]]  (default 5000 1000000)
#
# Must not: touch any database but the ones it creates in a temporary
# directory.
set -euo pipefail
cd "$(dirname "$0")/.."
writes=${1:-5000}
report_samples=${2:-1000000}
export CARGO_INCREMENTAL=0
cargo build -q --release -p verdict
cargo run -q --release -p verdict-store --example store_bench -- target/release/verdict "$writes" "$report_samples" ${3:+"$3"}
