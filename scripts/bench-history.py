#!/usr/bin/env python3
"""Benchmark of `verdict history` over a large store (issue 17): builds a
database of RUNS stored runs of one experiment (10 samples each, a +15% step
at 70% of the series and a -10% step at 90%) by cloning one real `verdict
run` with SQL, then times

  1. the first answer (stored state deleted: every window examined, state stored),
  2. the same question again (state reused, nothing appended),
  3. after appending one real run (only the tail re-examined),
  4. --from-scratch after that append, the peer of 3,

in interleaved rounds (medians reported).

Usage: scripts/bench-history.py [--runs 10000] [--rounds 7] [--verdict target/release/verdict]
Needs python3 (sqlite3 module) and a built verdict. Prints a table; the
ratios, not the absolute times, are the claim (docs/history.md).
"""

import argparse
import json
import random
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def verdict(binary, database, *arguments):
    started = time.perf_counter()
    output = subprocess.run([str(binary), *arguments], capture_output=True, text=True,
                            env={"VERDICT_DB": str(database), "PATH": "/usr/bin:/bin"})
    seconds = time.perf_counter() - started
    if output.returncode != 0:
        raise SystemExit(f"verdict {' '.join(arguments)} failed: {output.stderr}")
    return output.stdout, seconds


def build(binary, directory, runs, seed):
    experiment = directory / "bench.toml"
    experiment.write_text('name = "bench"\ncommand = ["true"]\n\n[sampling]\nwarmups = 0\n')
    database = directory / "verdict.db"
    verdict(binary, database, "run", str(experiment), "-n", "10", "--commit", "c0")
    connection = sqlite3.connect(database)
    template = connection.execute("SELECT * FROM runs WHERE id = 1").fetchone()
    columns = [row[1] for row in connection.execute("PRAGMA table_info(runs)")]
    samples = connection.execute("SELECT * FROM samples WHERE run_id = 1 ORDER BY sequence").fetchall()
    sample_columns = [row[1] for row in connection.execute("PRAGMA table_info(samples)")]
    cells = connection.execute("SELECT * FROM run_cells WHERE run_id = 1").fetchall()
    levels = connection.execute("SELECT * FROM cell_levels WHERE run_id = 1").fetchall()
    rng = random.Random(seed)
    wall = sample_columns.index("wall_seconds")
    started = template[columns.index("started_at_ms")]
    with connection:
        for run in range(2, runs + 1):
            row = list(template)
            row[columns.index("id")] = run
            row[columns.index("started_at_ms")] = started - (runs + 1 - run) * 3_600_000
            row[columns.index("finished_at_ms")] = started - (runs + 1 - run) * 3_600_000 + 1000
            row[columns.index("git_commit")] = f"c{run}"
            connection.execute(f"INSERT INTO runs VALUES ({','.join('?' * len(row))})", row)
            for cell in cells:
                connection.execute("INSERT INTO run_cells VALUES (?, ?, ?)", (run, *cell[1:]))
            for level in levels:
                connection.execute("INSERT INTO cell_levels VALUES (?, ?, ?, ?)", (run, *level[1:]))
            level = 0.001 * (1.15 if run > 0.7 * runs else 1.0) * (0.9 if run > 0.9 * runs else 1.0)
            for sample in samples:
                values = list(sample)
                values[0] = run
                values[wall] = level * rng.lognormvariate(0, 0.05)
                connection.execute(f"INSERT INTO samples VALUES ({','.join('?' * len(values))})", values)
    connection.execute("VACUUM")
    connection.close()
    return database, experiment


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--verdict", type=Path, default=ROOT / "target" / "release" / "verdict")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=7)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        started = time.perf_counter()
        database, experiment = build(arguments.verdict, directory, arguments.runs, arguments.seed)
        print(f"built {arguments.runs} runs x 10 samples in {time.perf_counter() - started:.1f} s "
              f"({database.stat().st_size / 1e6:.1f} MB)")
        question = ["history", "bench", "--format", "json"]
        output, _ = verdict(arguments.verdict, database, *question, "--from-scratch")
        answer = json.loads(output)["series"][0]
        found = [change["index"] for change in answer["change_points"]]
        print(f"change points at {found} (steps at {int(0.7 * arguments.runs)} and {int(0.9 * arguments.runs)}), "
              f"windows examined {answer['windows_examined']}")
        times = {"first": [], "again": [], "appended": [], "scratch": []}
        details = {}
        # Interleaved rounds, so that load from other processes hits every kind alike.
        for _ in range(arguments.rounds):
            connection = sqlite3.connect(database)
            with connection:
                connection.execute("DELETE FROM history_cache")
            connection.close()
            output, seconds = verdict(arguments.verdict, database, *question)
            times["first"].append(seconds)
            details["first"] = json.loads(output)["series"][0]
            output, seconds = verdict(arguments.verdict, database, *question)
            times["again"].append(seconds)
            details["again"] = json.loads(output)["series"][0]
            verdict(arguments.verdict, database, "run", str(experiment), "-n", "10", "--commit", "new")
            output, seconds = verdict(arguments.verdict, database, *question)
            times["appended"].append(seconds)
            details["appended"] = json.loads(output)["series"][0]
            output, seconds = verdict(arguments.verdict, database, *question, "--from-scratch")
            times["scratch"].append(seconds)
            details["scratch"] = json.loads(output)["series"][0]
        first = statistics.median(times["first"])
        labels = {
            "first": "1. first answer (no stored state)",
            "again": "2. again, nothing new",
            "appended": "3. after appending one run",
            "scratch": "4. --from-scratch (peer of 3)",
        }
        print(f"medians of {arguments.rounds} interleaved rounds; JSON output of every point")
        print(f"{'answer':36} {'seconds':>8} {'vs 1.':>6} {'reused':>7} {'windows':>8}")
        for kind, label in labels.items():
            median = statistics.median(times[kind])
            print(f"{label:36} {median:8.3f} {median / first:6.2f} {details[kind]['reused_points']:>7} "
                  f"{details[kind]['windows_examined']:>8}")
        print(f"3. / 4.: {statistics.median(times['appended']) / statistics.median(times['scratch']):.2f}")

if __name__ == "__main__":
    main()
