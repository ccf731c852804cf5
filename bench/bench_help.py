"""Time ``jurist --help`` against a bare ``python -c pass`` (prints, asserts nothing).

Each round runs, one after the other in a fresh process: the bare interpreter, ``jurist --help``, and
``jurist run --help``; the rounds alternate so that a busy machine slows all of them alike. Printed: the
median, min and max wall time of each over the rounds, the median CPU time, and ``jurist --help``
minus the bare interpreter (what jurist itself costs). Bytecode is cached (outside the checkout, as
bench/e2e_systems.py's ``with_bytecode`` does) even where the host sets ``PYTHONDONTWRITEBYTECODE``: an
installed jurist has its ``.pyc`` files, and recompiling the tree at every launch is not jurist's cost.
``--importtime N`` also prints the N slowest imports (cumulative) of ``import jurist.cli`` under
``python -X importtime``, from the fastest of the rounds. Run from the repository root, with this
tree's sources first on the path: ``PYTHONPATH=src .venv/bin/python bench/bench_help.py [--rounds N]
[--importtime N]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e_systems import with_bytecode  # noqa: E402

ENV = with_bytecode(os.environ)
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
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=ENV)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def slowest_imports(rounds: int, top: int) -> list[str]:
    """The ``top`` largest cumulative times of ``import jurist.cli`` (``-X importtime``), from the round
    whose total was least: a loaded machine inflates the others."""
    best: list[tuple[int, str]] = []
    for _ in range(rounds):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import jurist.cli"],
            capture_output=True, text=True, check=True, env=ENV,
        )  # fmt: skip
        rows = []
        for line in done.stderr.splitlines():
            if line.startswith("import time:") and "|" in line and "cumulative" not in line:
                _self, cumulative, name = line.removeprefix("import time:").split("|")
                rows.append((int(cumulative), name.rstrip()))
        total = max(rows)[0] if rows else 0
        if not best or total < max(best)[0]:
            best = rows
    return [f"{us / 1000:8.1f} ms  {name}" for us, name in sorted(best, reverse=True)[:top]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="fresh processes of each command")
    parser.add_argument("--importtime", type=int, default=0, help="print the N slowest imports")
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
    if args.importtime:
        print(f"\nimport jurist.cli, cumulative (fastest of {args.rounds}):")
        print("\n".join(slowest_imports(args.rounds, args.importtime)))


if __name__ == "__main__":
    main()
