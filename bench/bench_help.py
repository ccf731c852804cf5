"""Time ``jurist --help`` against a bare ``python -c pass`` (prints, asserts nothing).

Each round runs, one after the other in a fresh process: the bare interpreter, ``jurist --help``, and
``jurist run --help``; the rounds alternate so that a busy machine slows all of them alike. Printed: the
median, min and max wall time of each over the rounds, the median CPU time, and ``jurist --help``
minus the bare interpreter (what jurist itself costs). Run from the repository root, with this
tree's sources first on the path: ``PYTHONPATH=src .venv/bin/python bench/bench_help.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "jurist --help": [sys.executable, "-m", "jurist", "--help"],
    "jurist run --help": [sys.executable, "-m", "jurist", "run", "--help"],
}


def measure(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system) of one run of ``command``, its output discarded; the CPU
    time holds up on a busy machine where the wall time does not."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="fresh processes of each command")
    args = parser.parse_args()
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpus: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():  # a first, unmeasured run: bytecode compiled and cached
        measure(command)
    for _ in range(args.rounds):
        for name, command in COMMANDS.items():
            elapsed, cpu = measure(command)
            walls[name].append(elapsed)
            cpus[name].append(cpu)
    print(
        f"{'command':<20} {'wall median':>11} {'min':>6} {'max':>6} {'CPU median':>11}"
        f"   ({args.rounds} rounds)"
    )
    for name in COMMANDS:
        wall, cpu = walls[name], cpus[name]
        spread = f"{min(wall):6.3f} {max(wall):6.3f}"
        print(f"{name:<20} {statistics.median(wall):11.3f} {spread} {statistics.median(cpu):11.3f}")
    own = statistics.median(walls["jurist --help"]) - statistics.median(walls["python -c pass"])
    print(f"jurist --help above the bare interpreter: {own:.3f} s wall (median)")


if __name__ == "__main__":
    main()
