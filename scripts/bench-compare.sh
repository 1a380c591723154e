#!/usr/bin/env bash
# `verdict compare` on 10^6 vs 10^6 samples (issue 3: under 1 second on a
# 2-core machine). Times the statistics alone (the verdict-stats example)
# and the whole command on plain-number files (parsing 2 x 10^6 lines too).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
cargo build --release -q -p verdict -p verdict-stats --examples --bins
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$n" "$work" <<'PY'
import random, sys
n, work = int(sys.argv[1]), sys.argv[2]
random.seed(1)
with open(f"{work}/a.txt", "w") as f:
    f.write("\n".join(f"{random.lognormvariate(0, 0.13):.6f}" for _ in range(n)))
with open(f"{work}/b.txt", "w") as f:
    f.write("\n".join(f"{1.01 * random.lognormvariate(0, 0.13):.6f}" for _ in range(n)))
PY
echo "statistics only (relative_shift on $n vs $n):"
./target/release/examples/shift_timing 2>/dev/null | tail -3 || true
for round in 1 2 3; do
  start=$(date +%s.%N)
  ./target/release/verdict compare "$work/a.txt" "$work/b.txt" > "$work/out.txt"
  end=$(date +%s.%N)
  printf 'round %s: verdict compare %s vs %s values: %.2f s (parse + summaries + U test + HL interval)\n' "$round" "$n" "$n" "$(echo "$end - $start" | bc -l)"
done
cat "$work/out.txt"
