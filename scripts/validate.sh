#!/usr/bin/env bash
# Regenerates docs/validation.md: builds verdict in release mode and runs the
# full Monte-Carlo validation matrix (`verdict simulate --validate`).
# Usage: scripts/validate.sh            (10,000 trials per configuration, seed 1)
#        TRIALS=2000 SEED=7 scripts/validate.sh
# Takes several minutes on two cores; the output is deterministic for a seed.
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${TRIALS:-10000}"
seed="${SEED:-1}"
cargo build --release --quiet -p verdict
mkdir -p docs
output="docs/validation.md"
cargo run --release --quiet -p verdict -- simulate --validate --trials "$trials" --seed "$seed" >"$output.tmp"
# The change point comparison with Apache Otava (scripts/validate-history.py, which
# needs otava installed) is kept in its own file and appended.
cat docs/validation-history.md >>"$output.tmp"
mv "$output.tmp" "$output"
echo "wrote $output ($trials trials per configuration, seed $seed)" >&2
