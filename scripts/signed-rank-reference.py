#!/usr/bin/env python3
"""Reference p-values for the paired analysis's signed-rank test with ties
and zeros (Pratt 1959 zero handling, midranks), computed with scipy as a
development oracle (pip install scipy); CI reads the committed fixture and
never needs scipy.

Writes crates/verdict-stats/tests/fixtures/signed-rank-scipy.json: seeded
random integer differences (many ties and zeros), each with
- up to 16 differences: scipy.stats.wilcoxon(d, zero_method="pratt",
  method=PermutationMethod(n_resamples=2**n)), the exact distribution
  conditional on the midranks (every sign pattern enumerated);
- 60 to 120 differences: wilcoxon(d, zero_method="pratt",
  method="approx", correction=True), the normal approximation with the
  tie and zero corrections.
Cases whose statistic lies within half a rank of its mean are left out
(scipy's continuity correction then crosses the mean, verdict's stops at
it: both say p ~ 1).

Usage: python3 scripts/signed-rank-reference.py [--cases N] [--seed S]
"""
import argparse
import json

import numpy as np
import scipy
from scipy import stats
from scipy.stats import rankdata


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument(
        "--output", default="crates/verdict-stats/tests/fixtures/signed-rank-scipy.json"
    )
    arguments = parser.parse_args()
    rng = np.random.default_rng(arguments.seed)
    cases = []
    while len(cases) < arguments.cases:
        exact = len(cases) % 2 == 0
        count = int(rng.integers(4, 17)) if exact else int(rng.integers(60, 121))
        spread = int(rng.integers(1, 5))
        shift = int(rng.integers(0, 3))
        d = rng.integers(-spread, spread + 1, size=count) + shift * (rng.random(count) < 0.5)
        d = d.astype(float)
        ranks = rankdata(np.abs(d))
        positive = ranks[d > 0].sum()
        mean = ranks[d != 0].sum() / 2.0
        if abs(positive - mean) < 0.5 or not (d != 0).any():
            continue
        if exact:
            method = stats.PermutationMethod(n_resamples=2**count)
        else:
            method = "approx"
        result = stats.wilcoxon(d, zero_method="pratt", method=method, correction=True)
        cases.append(
            {
                "differences": d.tolist(),
                "exact": exact,
                "p_value": float(result.pvalue),
            }
        )
    document = {
        "source": f"scipy {scipy.__version__} stats.wilcoxon, zero_method='pratt'; "
        f"scripts/signed-rank-reference.py --cases {arguments.cases} --seed {arguments.seed}",
        "cases": cases,
    }
    with open(arguments.output, "w") as output:
        json.dump(document, output, indent=0)
        output.write("\n")
    print(f"wrote {len(cases)} cases to {arguments.output}")


if __name__ == "__main__":
    main()
