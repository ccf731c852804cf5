"""``--local`` vs a managed server: the embedded model (SmolLM2-135M, llama.cpp, CPU) on the same prompts.

Each round runs both legs, in alternating order (so a slow spell of a shared machine does not always fall
on the same leg), each on a fresh engine with the request cache off:

* ``local``: ``Engine(local=LocalModels())``: llama-cpp-python's ``Llama`` in this process;
* ``server``: ``Engine(pool=ServerPool())``: the managed ``python -m llama_cpp.server`` on 127.0.0.1.

A leg first asks one 1-token request (``ready``: the model loaded, or the server started and answering),
then the first N starter prompts at the model's own concurrency (``parallel: 1``: llama-cpp-python decodes
one request at a time either way) with the embedded model's settings (temperature 0, max_tokens 256).
``generate`` is the wall time of those N requests and tok/s their completion tokens over it; ``total`` is
ready + generate. ``cpu s`` is the CPU time the N requests took, model and client together (this process's
``getrusage``, plus the server process's ``/proc/PID/stat`` in the server leg): on a shared machine wall
times swing with the load, CPU time much less. The table shows medians over rounds, and whether both legs
gave the same answers.
Usage: ``python bench/bench_local.py [--n 20] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from jurist.benchmarks.starter import load_starter
from jurist.engine.client import Engine
from jurist.engine.local import LocalModels
from jurist.engine.local.embedded import EMBEDDED_ALIAS, embedded_model_spec
from jurist.engine.servers.pool import ServerPool


@dataclass
class Leg:
    ready_s: float
    generate_s: float
    cpu_s: float
    completion_tokens: int
    answers: list[str]

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.generate_s

    @property
    def total_s(self) -> float:
        return self.ready_s + self.generate_s


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_now(pool: ServerPool | None) -> float:
    """This process's CPU time, plus the managed servers' (the server leg)."""
    servers = pool.servers.values() if pool is not None else []
    return own_cpu_s() + sum(process_cpu_s(s.process.pid) for s in servers if s.process is not None)


async def run_leg(how: str, prompts: list[str]) -> Leg:
    local = LocalModels() if how == "local" else None
    pool = None if local else ServerPool()
    engine = Engine({EMBEDDED_ALIAS: embedded_model_spec()}, max_concurrency=64, pool=pool, local=local)
    try:
        client = engine.client(EMBEDDED_ALIAS)
        started = time.perf_counter()
        await client.complete([{"role": "user", "content": "Hi"}], cache="off", max_tokens=1)
        ready = time.perf_counter() - started
        started, cpu = time.perf_counter(), cpu_now(pool)
        done = await asyncio.gather(
            *(client.complete([{"role": "user", "content": p}], cache="off") for p in prompts)
        )
        generate, cpu = time.perf_counter() - started, cpu_now(pool) - cpu
    finally:
        await engine.aclose()
        engine.close_servers()
    tokens = sum(c.completion_tokens or 0 for c in done)
    return Leg(ready, generate, cpu, tokens, [c.text for c in done])


def median(legs: list[Leg], name: str) -> float:
    return statistics.median(getattr(leg, name) for leg in legs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=20, help="starter prompts per leg")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    prompts = [q.prompt for q in load_starter().questions[: args.n]]
    legs: dict[str, list[Leg]] = {"local": [], "server": []}
    for round_no in range(args.rounds):
        order = ["local", "server"] if round_no % 2 == 0 else ["server", "local"]
        for how in order:
            leg = asyncio.run(run_leg(how, prompts))
            legs[how].append(leg)
            print(
                f"round {round_no + 1} {how:6}: ready {leg.ready_s:5.2f} s  "
                f"generate {leg.generate_s:6.2f} s  cpu {leg.cpu_s:6.2f} s  "
                f"{leg.completion_tokens} tokens  {leg.tokens_per_s:6.1f} tok/s",
                flush=True,
            )
    same = all(a.answers == b.answers for a, b in zip(legs["local"], legs["server"], strict=True))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n{args.n} starter prompts, {os.cpu_count()} CPU(s), load {load}; medians of {args.rounds}")
    print(f"{'':8}{'ready s':>10}{'generate s':>12}{'total s':>10}{'tok/s':>9}{'cpu s':>9}{'tokens':>8}")
    for how, runs in legs.items():
        print(
            f"{how:8}{median(runs, 'ready_s'):10.2f}{median(runs, 'generate_s'):12.2f}"
            f"{median(runs, 'total_s'):10.2f}{median(runs, 'tokens_per_s'):9.1f}"
            f"{median(runs, 'cpu_s'):9.2f}{int(median(runs, 'completion_tokens')):8d}"
        )
    print(f"same answers in every round: {same}")


if __name__ == "__main__":
    main()
