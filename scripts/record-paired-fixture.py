#!/usr/bin/env python3
"""Records an interleaved A/A sequence on this machine for the paired-blocks
fixtures (crates/verdict-stats/tests/fixtures/paired-*.csv).

Each block runs the same stress-ng workload twice, as arm A and arm B in a
random order, and writes `block,arm,order,seconds` (order 0 = ran first).
With --load-steps, a background `stress-ng --cpu 2` is started and stopped
at random block boundaries (5% per block), so the machine steps between
loaded and idle as a neighbour's build would make it. It must not be used
to claim speed: it records noise, nothing else.

Usage: scripts/record-paired-fixture.py BLOCKS SEED [--load-steps] > FILE.csv
"""
import random
import subprocess
import sys
import time

WORKLOAD = ["stress-ng", "--cpu", "1", "--cpu-method", "matrixprod", "--cpu-ops", "20", "-q"]


def run_once():
    start = time.perf_counter()
    subprocess.run(WORKLOAD, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    blocks = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]))
    load_steps = "--load-steps" in sys.argv[3:]
    load = None
    print("block,arm,order,seconds")
    try:
        for block in range(blocks):
            if load_steps and rng.random() < 0.05:
                if load is None:
                    load = subprocess.Popen(["stress-ng", "--cpu", "2", "-q"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                else:
                    load.terminate()
                    load.wait()
                    load = None
            arms = ["A", "B"]
            rng.shuffle(arms)
            for order, arm in enumerate(arms):
                print(f"{block},{arm},{order},{run_once():.6f}")
    finally:
        if load is not None:
            load.terminate()
            load.wait()


if __name__ == "__main__":
    main()
