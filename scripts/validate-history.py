#!/usr/bin/env python3
"""Development oracle for `verdict history`: runs Apache Otava's change point
analysis and verdict's (crates/verdict-stats/src/changepoint.rs, through the
`changepoints` example) on seeded synthetic series with known steps and
reports agreement, precision and recall side by side.

Not a CI dependency. Needs apache-otava in a virtual environment:

    python3 -m venv /tmp/otava-venv && /tmp/otava-venv/bin/pip install apache-otava
    /tmp/otava-venv/bin/python scripts/validate-history.py --series 1000 --seed 1

`--write-fixture PATH` instead writes a small set of series with Otava's
answers (the CI test crates/verdict-stats/tests/changepoint_otava.rs reads it).
"""

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from otava.analysis import compute_change_points, split

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 2  # a detection within ±2 points of a true step counts as a hit


def synthetic(rng, max_length):
    """A series of 50-max_length points, CV 2-13%, 0-4 steps of 5-30% at known points."""
    length = rng.randint(50, max_length)
    cv = rng.uniform(0.02, 0.13)
    steps = rng.randint(0, 4)
    positions = sorted(rng.sample(range(10, length - 10), min(steps, max(0, length - 20) // 20)))
    # keep steps at least 10 points apart
    kept = []
    for position in positions:
        if not kept or position - kept[-1] >= 10:
            kept.append(position)
    level = 100.0
    levels = []
    boundaries = kept + [length]
    previous = 0
    for boundary in boundaries:
        levels.append((previous, boundary, level))
        change = rng.uniform(0.05, 0.30) * rng.choice([-1, 1])
        level *= 1 + change
        previous = boundary
    series = []
    for start, end, mean in levels:
        for _ in range(start, end):
            series.append(round(rng.gauss(mean, mean * cv), 6))
    return series, kept, cv


def otava(series, window, pvalue, magnitude):
    points, _ = compute_change_points(list(series), window_len=window, max_pvalue=pvalue, min_magnitude=magnitude)
    # compute_change_points returns the merged list twice (merge() edits the
    # weak list in place), so the weak points come from split() itself.
    first_pass = pvalue * 10 if pvalue < 0.05 else (pvalue * 2 if pvalue < 0.5 else pvalue)
    weak = split(list(series), window, first_pass)
    return [{"index": int(p.index), "pvalue": float(p.stats.pvalue),
             "mean_before": float(p.stats.mean_1), "mean_after": float(p.stats.mean_2)} for p in points], \
           [int(p.index) for p in weak]


def verdict(requests):
    subprocess.run(["cargo", "build", "-q", "-p", "verdict-stats", "--example", "changepoints"],
                   cwd=ROOT, check=True)
    binary = ROOT / "target" / "debug" / "examples" / "changepoints"
    text = "".join(json.dumps(request) + "\n" for request in requests)
    started = time.perf_counter()
    output = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in output.splitlines()], time.perf_counter() - started


def hits(found, truth):
    matched_truth = set()
    true_positive = 0
    for index in found:
        near = [step for step in truth if abs(step - index) <= TOLERANCE and step not in matched_truth]
        if near:
            matched_truth.add(near[0])
            true_positive += 1
    return true_positive, len(matched_truth)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--series", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--pvalue", type=float, default=0.001)
    parser.add_argument("--magnitude", type=float, default=0.0)
    parser.add_argument("--max-length", type=int, default=1000)
    parser.add_argument("--write-fixture", type=Path)
    arguments = parser.parse_args()

    rng = random.Random(arguments.seed)
    cases = [synthetic(rng, arguments.max_length) for _ in range(arguments.series)]
    requests = [{"series": series, "window": arguments.window, "pvalue": arguments.pvalue,
                 "magnitude": arguments.magnitude} for series, _, _ in cases]

    started = time.perf_counter()
    expected = [otava(series, arguments.window, arguments.pvalue, arguments.magnitude) for series, _, _ in cases]
    otava_seconds = time.perf_counter() - started

    if arguments.write_fixture:
        fixture = [{"series": request["series"], "window": request["window"], "pvalue": request["pvalue"],
                    "magnitude": request["magnitude"], "change_points": points, "weak_change_points": weak}
                   for request, (points, weak) in zip(requests, expected)]
        arguments.write_fixture.write_text(json.dumps(fixture, indent=None) + "\n")
        print(f"wrote {len(fixture)} series with otava's answers to {arguments.write_fixture}")
        return 0

    answers, verdict_seconds = verdict(requests)
    same_points = same_weak = pvalue_close = 0
    totals = {"otava": [0, 0, 0], "verdict": [0, 0, 0]}  # detections, true positives, recalled steps
    true_steps = 0
    disagreements = []
    for number, ((series, truth, cv), (points, weak), answer) in enumerate(zip(cases, expected, answers)):
        mine = answer["change_points"]
        true_steps += len(truth)
        if [p["index"] for p in points] == [p["index"] for p in mine]:
            same_points += 1
            if all(abs(a["pvalue"] - b["pvalue"]) <= 1e-9 + 1e-6 * abs(a["pvalue"]) for a, b in zip(points, mine)):
                pvalue_close += 1
        else:
            disagreements.append((number, len(series), [p["index"] for p in points], [p["index"] for p in mine]))
        if weak == [p["index"] for p in answer["weak_change_points"]]:
            same_weak += 1
        for name, found in (("otava", [p["index"] for p in points]), ("verdict", [p["index"] for p in mine])):
            true_positive, recalled = hits(found, truth)
            totals[name][0] += len(found)
            totals[name][1] += true_positive
            totals[name][2] += recalled

    count = len(cases)
    print(f"series: {count} (seed {arguments.seed}, lengths 50-{arguments.max_length}, CV 2-13%, 0-4 steps of 5-30%), "
          f"window {arguments.window}, p {arguments.pvalue}, magnitude {arguments.magnitude}")
    print(f"identical change point indices: {same_points}/{count}; of those with p-values within 1e-6 relative: "
          f"{pvalue_close}/{same_points}; identical weak change points: {same_weak}/{count}")
    print(f"true steps: {true_steps}; a hit is within ±{TOLERANCE} points")
    print(f"{'':8} {'detections':>10} {'precision':>9} {'recall':>7} {'seconds':>8}")
    for name, seconds in (("otava", otava_seconds), ("verdict", verdict_seconds)):
        detections, true_positive, recalled = totals[name]
        precision = true_positive / detections if detections else float("nan")
        recall = recalled / true_steps if true_steps else float("nan")
        print(f"{name:8} {detections:>10} {precision:>9.3f} {recall:>7.3f} {seconds:>8.2f}")
    for number, length, theirs, mine in disagreements[:10]:
        print(f"disagreement: series {number} (length {length}): otava {theirs}, verdict {mine}")
    return 0 if same_points == count else 1


if __name__ == "__main__":
    sys.exit(main())
