"""A sweep's generation throughput beside its servers' own maximum (issue 13, item 6).

Each round runs two legs on the same prompts (the first N IFEval prompts, one sample each, with a llama.cpp
checkpoint's default settings: temperature 0, max_tokens 256) and alternates which leg goes first, so a
slow spell of a shared machine does not always fall on the same one:

* ``sweep``: ``jurist sweep`` over K checkpoints (the embedded SmolLM2 GGUF under K step names) on K CPU
  slots, request cache off. Its generation time runs from the moment the first server answers to the
  moment the last is stopped (the sweep stops a server as soon as its answers are in); its tokens are the
  completion tokens the runs' ledgers counted.
* ``plain``: the same K llama.cpp servers, started by the same class with the same arguments, and the
  same request bodies sent by a plain client (urllib), one thread per server, since llama-cpp-python's
  server decodes one request at a time (its slot count, which is also the sweep's default ``parallel``).

The ratio sweep / plain is the share of the servers' own maximum that jurist reaches (target: >= 95%).
Usage: ``python bench/bench_sweep_throughput.py [--n 20] [--rounds 3] [--servers 1]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from jurist.config import ModelSpec
from jurist.engine.local.embedded import embedded_gguf_path
from jurist.engine.servers import ManagedServer, server_for
from jurist.run.budget import usage_of_runs
from jurist.sweep.build import build_plan
from jurist.sweep.launch import run_sweep
from jurist.sweep.plan import SweepPlan, checkpoint_spec

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass
class Leg:
    name: str
    seconds: float
    completion_tokens: int
    client_cpu_s: float = 0.0  # CPU time of this process (the sweep or the plain client) during the leg

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.seconds


class TimedServers:
    """The sweep's server factory: each real server, with when it was ready and when it was stopped."""

    def __init__(self) -> None:
        self.ready: list[float] = []
        self.stopped: list[float] = []

    def __call__(self, spec: ModelSpec, log_path: Path | None) -> ManagedServer:
        server = server_for(spec, log_path)
        start, stop = server.start, server.stop

        def timed_start() -> None:
            start()
            self.ready.append(time.perf_counter())

        def timed_stop() -> None:
            self.stopped.append(time.perf_counter())
            stop()

        server.start = timed_start  # type: ignore[method-assign]
        server.stop = timed_stop  # type: ignore[method-assign]
        return server


def make_plan(root: Path, n: int, servers: int, tag: str) -> SweepPlan:
    names = [root / "run" / f"step_{k + 1}.gguf" for k in range(servers)]
    for path in names:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(embedded_gguf_path())
    return build_plan(
        checkpoints=",".join(str(path) for path in names),
        tasks="ifeval",
        limit=n,
        servers=servers,
        out=root / f"sweep-{tag}",
        cache=False,
        check=False,
        progress=False,
    )


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def sweep_leg(plan: SweepPlan) -> Leg:
    cpu = _cpu_seconds()
    timed = TimedServers()
    quiet = Console(file=io.StringIO())
    with contextlib.redirect_stdout(io.StringIO()):  # the sweep's tables: not part of the measurement
        result = run_sweep(plan, quiet, server_factory=timed, plots=False)
    if result.exit_code != 0:
        raise SystemExit(f"the sweep failed: {result.document['checkpoints']}")
    ledger = usage_of_runs([plan.run_dir(c, "ifeval") for c in plan.checkpoints])
    tokens = sum(int(row["completion_tokens"]) for row in ledger["rows"] if row["phase"] == "generate")
    return Leg("sweep", max(timed.stopped) - min(timed.ready), tokens, _cpu_seconds() - cpu)


def request_bodies(plan: SweepPlan, spec: ModelSpec) -> list[bytes]:
    """What the sweep sends for each question, byte for byte the same fields."""
    from jurist.benchmarks.registry import load_benchmark
    from jurist.run.generate import answer_messages

    bench = load_benchmark("ifeval", {}).limited(plan.limits.get("ifeval"), "first", 0)
    bodies = []
    for question in bench.questions:
        body: dict[str, Any] = {"model": spec.model, "messages": answer_messages(spec, question)}
        body |= {"max_tokens": spec.max_tokens, "temperature": spec.temperature}
        bodies.append(json.dumps(body).encode())
    return bodies


def plain_leg(plan: SweepPlan, root: Path) -> Leg:
    specs = [checkpoint_spec(plan, checkpoint) for checkpoint in plan.checkpoints]
    servers = [server_for(spec, root / f"plain-{spec.alias}.log") for spec in specs]
    tokens = [0] * len(servers)
    try:
        for server in servers:
            server.start()

        def client(index: int) -> None:  # one request at a time: the server's one slot
            url = f"{servers[index].base_url}/chat/completions"
            for body in request_bodies(plan, specs[index]):
                request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=600) as reply:  # noqa: S310 (loopback)
                    tokens[index] += int(json.loads(reply.read())["usage"]["completion_tokens"])

        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(servers))]
        cpu = _cpu_seconds()
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
    finally:
        for server in servers:
            server.stop()
    return Leg("plain", seconds, sum(tokens), _cpu_seconds() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=20, help="IFEval prompts per checkpoint")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--servers", type=int, default=1, help="checkpoints at once (CPU slots)")
    args = parser.parse_args()
    if "JURIST_DATA_DIR" not in os.environ and SHARED_DATA.is_dir():
        os.environ["JURIST_DATA_DIR"] = str(SHARED_DATA)
    legs: dict[str, list[Leg]] = {"sweep": [], "plain": []}
    with tempfile.TemporaryDirectory(prefix="jurist-bench-sweep-") as temp:
        root = Path(temp)
        for number in range(args.rounds):
            order = ("sweep", "plain") if number % 2 == 0 else ("plain", "sweep")
            for name in order:
                plan = make_plan(root, args.n, args.servers, f"{number}-{name}")
                leg = sweep_leg(plan) if name == "sweep" else plain_leg(plan, root)
                legs[name].append(leg)
                print(
                    f"round {number + 1} {name:5}: {leg.completion_tokens} tokens in {leg.seconds:.1f} s = "
                    f"{leg.tokens_per_s:.1f} tok/s (client CPU {leg.client_cpu_s:.1f} s)",
                    flush=True,
                )
    sweep = statistics.median(leg.tokens_per_s for leg in legs["sweep"])
    plain = statistics.median(leg.tokens_per_s for leg in legs["plain"])
    paired = [s.tokens_per_s / p.tokens_per_s for s, p in zip(legs["sweep"], legs["plain"], strict=True)]
    same = {leg.completion_tokens for leg in legs["sweep"]} == {
        leg.completion_tokens for leg in legs["plain"]
    }
    print(
        f"median: sweep {sweep:.1f} tok/s, plain client {plain:.1f} tok/s: {100 * sweep / plain:.1f}% of the "
        f"servers' own throughput ({args.servers} server(s), {args.n} prompts each; same tokens: {same}); "
        f"median of the rounds' own ratios (legs run back to back): {100 * statistics.median(paired):.1f}%"
    )


if __name__ == "__main__":
    main()
