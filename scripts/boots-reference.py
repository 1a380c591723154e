#!/usr/bin/env python3
"""Reference numbers for crates/verdict-stats/src/boots.rs's unit tests,
computed with scipy (pip install scipy). Prints them; the tests hold the
printed values. Usage: python3 scripts/boots-reference.py"""
import math

import numpy as np
import scipy
from scipy import stats

print(f"scipy {scipy.__version__}")

print("# Student t quantiles (probability, degrees, t.ppf)")
for probability, degrees in [(0.975, 1.0), (0.975, 2.0), (0.975, 2.5), (0.995, 3.7),
                             (0.975, 30.0), (0.9995, 1.3)]:
    print(f"({probability}, {degrees}, {float(stats.t.ppf(probability, degrees))!r})")

print("# Welch: baseline [0.01, -0.02, 0.03, 0.005], candidate [0.08, 0.05, 0.11]")
baseline = np.array([0.01, -0.02, 0.03, 0.005])
candidate = np.array([0.08, 0.05, 0.11])
test = stats.ttest_ind(candidate, baseline, equal_var=False)
interval = test.confidence_interval(0.95)
print(f"difference {float(candidate.mean() - baseline.mean())!r}")
print(f"p_value {float(test.pvalue)!r} df {float(test.df)!r}")
print(f"interval {float(interval.low)!r} {float(interval.high)!r}")

print("# One-way ANOVA of three boots (logs)")
boots = [np.array([0.0, 0.1, -0.05, 0.02]), np.array([0.2, 0.25, 0.18]),
         np.array([-0.1, -0.05, -0.12, -0.08, -0.02])]
f_statistic, p_value = stats.f_oneway(*boots)
sizes = np.array([len(boot) for boot in boots])
total = sizes.sum()
groups = len(boots)
grand = np.concatenate(boots).mean()
within = sum(((boot - boot.mean()) ** 2).sum() for boot in boots) / (total - groups)
between = sum(len(boot) * (boot.mean() - grand) ** 2 for boot in boots) / (groups - 1)
n0 = (total - (sizes ** 2).sum() / total) / (groups - 1)
print(f"F {float(f_statistic)!r} p {float(p_value)!r}")
print(f"within_sd {math.sqrt(within)!r}")
print(f"between_sd {math.sqrt(max(0.0, (between - within) / n0))!r}")

print("# Mann-Whitney exact, 4 vs 4 completely separated")
print(repr(float(stats.mannwhitneyu([1, 2, 3, 4], [5, 6, 7, 8], method="exact").pvalue)))
