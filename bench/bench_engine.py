"""Client CPU per request: jurist's engine vs a plain ``AsyncOpenAI`` client, in the same run.

A mock OpenAI server (tests/mock_openai.py) runs in its own process, pinned to one core where the machine
has two or more; this process is pinned to another. Each round sends N requests at concurrency C with:

* ``jurist engine``: ``Engine.client(alias).complete`` (limits, retries, accounting included);
* ``jurist engine + cache``: the same with the request cache on, every request a miss (a fresh cache file
  per round, one sample index per request): the lookup and the store it adds to each request;
* ``jurist generate stage``: the whole generation stage of ``jurist run --inference-only`` (engine plus
  resume bookkeeping and line-atomic appends of every answer), on a synthetic question file, cache off;
* ``AsyncOpenAI``: ``client.chat.completions.create`` behind an ``asyncio.Semaphore(C)``, its connection
  pool sized to C (the SDK keeps 100 idle connections by default, so at C=256 it would close and reopen
  156 connections all the time, a cost of the pool setting rather than of the client).

The mock listens with an accept queue of 1024 (bench/e2e_mock.py; aiohttp's default is 128): 256 clients
connecting at once overflowed the default one, the kernel dropped SYNs, and SYN retransmits (1, 3, 7 s)
ran past the SDK's 5 s connect timeout, so the AsyncOpenAI leg failed to connect at concurrency 256.
The run prints the host's listen-queue overflows (``/proc/net/netstat``, every process of the host
counted) so a repeat shows whether connections were dropped.

CPU is this process's user+sys time (``getrusage``) over the timed section. Rounds alternate between the
clients, after one untimed warm-up round of each; the table shows medians over rounds.
Usage: ``python bench/bench_engine.py [--n 5000] [--conc 256] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROMPT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {
        "role": "user",
        "content": "Explain in two sentences why the sky looks blue during the day and red at dusk.",
    },
]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listen_overflows() -> int:
    """The host's count of connections dropped because a listen queue was full (0 where unreadable)."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return 0
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            return int(dict(zip(names.split(), values.split(), strict=True)).get("ListenOverflows", 0))
    return 0


def start_mock(port: int) -> subprocess.Popen[bytes]:
    """tests/mock_openai.py's server with a deep accept queue (bench/e2e_mock.py), on its own core."""
    command = [sys.executable, str(ROOT / "bench" / "e2e_mock.py"), "--port", str(port), "--backlog", "1024"]
    process = subprocess.Popen(command)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        os.sched_setaffinity(process.pid, {cpus[0]})
        os.sched_setaffinity(0, set(cpus[1:]))
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1).read()
            return process
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("mock server did not start")


async def run_jurist_engine(base_url: str, n: int, conc: int, cache_file: Path | None = None) -> None:
    from jurist.config import Endpoint, ModelSpec
    from jurist.engine import open_cache
    from jurist.engine.client import Engine

    spec = ModelSpec(
        alias="bench", model="bench", endpoints=[Endpoint(api_base=base_url)], parallel=conc, max_tokens=64
    )
    cache = open_cache(cache_file) if cache_file is not None else None
    engine = Engine({"bench": spec}, max_concurrency=conc, cache=cache)
    client = engine.client("bench")
    try:
        await asyncio.gather(*[client.complete(PROMPT, sample=i) for i in range(n)])
    finally:
        await engine.aclose()
        if cache is not None:
            cache.close()
            assert (cache.hits, cache.misses) == (0, n), "the cache variant measures misses only"


async def run_async_openai(base_url: str, n: int, conc: int) -> None:
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient

    try:
        from httpx2 import Limits  # what openai 3.x is built on
    except ImportError:
        from httpx import Limits  # type: ignore[no-redef]  # openai 1.x and 2.x

    pool = DefaultAsyncHttpxClient(limits=Limits(max_connections=conc, max_keepalive_connections=conc))
    client = AsyncOpenAI(base_url=base_url, api_key="bench-key", max_retries=0, http_client=pool)
    sem = asyncio.Semaphore(conc)

    async def one() -> None:
        async with sem:
            response = await client.chat.completions.create(
                model="bench",
                messages=PROMPT,  # type: ignore[arg-type]
                max_tokens=64,
            )
            assert response.choices[0].message.content

    try:
        await asyncio.gather(*[one() for _ in range(n)])
    finally:
        await client.close()


def run_generate_stage(base_url: str, n: int, conc: int, workdir: Path, round_no: int) -> float:
    """The generation stage of a real run; returns its CPU seconds (setup excluded)."""
    from jurist.engine.pacing.retry import RetryPolicy
    from jurist.run.pipeline import RunConfig, run_pipeline

    questions = workdir / "questions.jsonl"
    if not questions.exists():
        with questions.open("w") as fh:
            for i in range(n):
                fh.write(
                    json.dumps({"uid": f"q{i}", "category": "bench", "prompt": PROMPT[1]["content"]}) + "\n"
                )
    models = workdir / "models.yaml"
    models.write_text(
        json.dumps(
            {
                "bench": {
                    "model": "bench",
                    "endpoints": [{"api_base": base_url}],
                    "parallel": conc,
                    "max_tokens": 64,
                }
            }
        )
    )
    config = RunConfig(
        bench=str(questions),
        models_file=models,
        models=["bench"],
        out=workdir / f"run{round_no}",
        mode="inference-only",
        max_concurrency=conc,
        progress=False,
        retry=RetryPolicy(),
        cache=False,
    )
    start = cpu_seconds()
    result = run_pipeline(config)
    spent = cpu_seconds() - start
    assert result.exit_code == 0 and result.requests == n
    return spent


def timed(make: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    start_cpu, start_wall = cpu_seconds(), time.perf_counter()
    asyncio.run(make())  # type: ignore[arg-type]
    return cpu_seconds() - start_cpu, time.perf_counter() - start_wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--conc", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    port = free_port()
    server = start_mock(port)
    base_url = f"http://127.0.0.1:{port}/v1"
    cache_home = tempfile.TemporaryDirectory(prefix="jurist-bench-cache-")  # never the user's cache
    os.environ["JURIST_CACHE_DIR"] = cache_home.name
    results: dict[str, list[tuple[float, float]]] = {
        "jurist engine": [],
        "jurist engine + cache": [],
        "jurist generate stage": [],
        "AsyncOpenAI": [],
    }
    overflows = listen_overflows()
    try:
        # Warm-up: imports, connection pools, the server's first requests.
        timed(lambda: run_jurist_engine(base_url, 500, args.conc))
        timed(lambda: run_async_openai(base_url, 500, args.conc))
        with tempfile.TemporaryDirectory() as warm:
            timed(lambda: run_jurist_engine(base_url, 500, args.conc, Path(warm) / "warm.sqlite"))
        with tempfile.TemporaryDirectory() as tmp:
            for round_no in range(args.rounds):
                results["jurist engine"].append(timed(lambda: run_jurist_engine(base_url, args.n, args.conc)))
                cache_file = Path(tmp) / f"cache{round_no}.sqlite"  # fresh: every request a miss
                results["jurist engine + cache"].append(
                    timed(lambda: run_jurist_engine(base_url, args.n, args.conc, cache_file))  # noqa: B023
                )
                start = time.perf_counter()
                cpu = run_generate_stage(base_url, args.n, args.conc, Path(tmp), round_no)
                results["jurist generate stage"].append((cpu, time.perf_counter() - start))
                results["AsyncOpenAI"].append(timed(lambda: run_async_openai(base_url, args.n, args.conc)))
    finally:
        cache_home.cleanup()
        server.terminate()
        server.wait(10)
    import openai

    print(
        f"{args.n} requests per round at concurrency {args.conc}, {args.rounds} rounds; "
        f"openai {openai.__version__}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}; "
        f"listen-queue overflows on the host during the run: {listen_overflows() - overflows}; "
        "medians (min-max)"
    )
    print(f"{'client':<24} {'CPU ms/request':>22} {'req/s (wall)':>14}")
    per_request = {}
    for name, rows in results.items():
        cpu_ms = [1000 * cpu / args.n for cpu, _ in rows]
        rps = [args.n / wall for _, wall in rows]
        per_request[name] = statistics.median(cpu_ms)
        print(
            f"{name:<24} {statistics.median(cpu_ms):>8.3f} ({min(cpu_ms):.3f}-{max(cpu_ms):.3f}) "
            f"{statistics.median(rps):>14.0f}"
        )
    for name in ("jurist engine", "jurist generate stage"):
        print(
            f"AsyncOpenAI / {name}: {per_request['AsyncOpenAI'] / per_request[name]:.1f}x the CPU per request"
        )
    added = per_request["jurist engine + cache"] - per_request["jurist engine"]
    print(f"request cache (lookup + store, all misses): {added:+.3f} ms/request")


if __name__ == "__main__":
    main()
