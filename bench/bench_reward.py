"""What ``jurist serve reward`` adds over the judge call itself, and how fast it rewards by rule.

1. Added latency: the mock judge (tests/mock_openai.py, ``--judge-delay`` ms per reply) judges a starter
   question's two games either through the reward server (``POST /v1/reward``, one item, request cache off,
   so both games go to the judge) or bare: the same two request bodies posted at once straight to the
   judge. Printed side by side: p50 and p90 of each, and the p50 difference (target: at most 5 ms).
2. Rule rewards: IFEval's 541 GPT-4 answers (shared data) rewarded in batches of ``--batch`` by
   ``--clients`` concurrent clients over HTTP (target: at least 2,000 items/s), beside the same items
   rewarded in-process one at a time (``RewardService.reward``: the checks' own floor with 1 worker; with
   more, each item pays a round trip to a worker, so that column falls below HTTP's batches); the
   median of ``--rule-rounds`` rounds, HTTP and in-process in turn,
   also per CPU-second of the server's thread (steadier than wall time on a shared machine; with
   ``--rule-workers`` above 1 the checks' CPU is the workers' and not counted there).

A benchmark, not a test: it prints, asserts nothing. ``python bench/bench_reward.py [--rounds 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
INPUT = SHARED / "ifeval" / "input_data_gpt4_20231107_145030.jsonl"
RESPONSES = SHARED / "ifeval" / "input_response_data_gpt4_20231107_145030.jsonl"
sys.path.insert(0, str(ROOT / "tests"))


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))]


async def _latency(
    url: str, judge_url: str, bodies: list[bytes], rounds: int
) -> tuple[list[float], list[float]]:
    """Seconds per reward request and per bare pair of judge requests, interleaved round by round."""
    rewarded, bare = [], []
    async with aiohttp.ClientSession() as session:
        for n in range(rounds):
            item = {
                "question": f"Question {n}?",
                "answer": f"[better] answer {n}",
                "baseline_answer": "[worse] b",
            }
            started = time.perf_counter()
            async with session.post(f"{url}/v1/reward", json={"items": [item]}) as response:
                await response.read()
            rewarded.append(time.perf_counter() - started)
            started = time.perf_counter()

            async def one(body: bytes) -> None:
                headers = {"Content-Type": "application/json"}
                async with session.post(f"{judge_url}/chat/completions", data=body, headers=headers) as reply:
                    await reply.read()

            await asyncio.gather(*(one(body) for body in bodies))
            bare.append(time.perf_counter() - started)
    return rewarded, bare


async def _rules_http(url: str, items: list[dict[str, Any]], batch: int, clients: int) -> float:
    """Items per second over HTTP: ``clients`` clients, each posting its share in batches."""
    chunks = [items[i : i + batch] for i in range(0, len(items), batch)]

    async with aiohttp.ClientSession() as session:

        async def client(mine: list[list[dict[str, Any]]]) -> None:
            for chunk in mine:
                async with session.post(f"{url}/v1/reward", json={"items": chunk}) as response:
                    assert response.status == 200, await response.text()
                    await response.read()

        started = time.perf_counter()
        await asyncio.gather(*(client(chunks[c::clients]) for c in range(clients)))
        return len(items) / (time.perf_counter() - started)


LANGDETECT = ("language:response_language", "change_case:english_capital", "change_case:english_lowercase")
"""IFEval's instructions whose reference checker runs langdetect (~50 ms a call here)."""


def _ifeval_items(repeat: int) -> tuple[Path, list[dict[str, Any]], set[str]]:
    responses = {}
    for line in RESPONSES.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            responses[row["prompt"]] = row["response"]
    rows = [json.loads(line) for line in INPUT.read_text().splitlines() if line.strip()]
    items = [{"uid": str(row["key"]), "answer": responses[row["prompt"]]} for row in rows]
    slow = {str(row["key"]) for row in rows if set(row["instruction_id_list"]) & set(LANGDETECT)}
    return INPUT, items * repeat, slow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(url: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - the local mock
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _judge_bodies(work: Path) -> list[bytes]:
    """The two judge requests one reward item sends, caught by an in-process mock (the bare calls)."""
    from conftest import write_models_file
    from jurist.serve.service import RewardItem, RewardService, ServeSettings
    from mock_openai import MockOpenAI

    mock = MockOpenAI(keep_bodies=True)
    models = write_models_file(work / "catch.yaml", mock.start(), {"judge": {"parallel": 64}})
    settings = ServeSettings(bench="starter", judge="judge", models_file=models, cache=False, out=work / "c")

    async def one() -> None:
        service = RewardService.build(settings)
        try:
            await service.reward(
                RewardItem(answer="[better] an answer", question="Q?", baseline_answer="[worse] b")
            )
        finally:
            await service.aclose()

    try:
        asyncio.run(one())
    finally:
        mock.stop()
    return [json.dumps(body).encode() for body in mock.stats.bodies[-2:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--judge-delay", type=float, default=20.0, help="ms the mock judge takes per reply")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=8, help="times the 541 IFEval items are sent")
    parser.add_argument(
        "--rule-workers",
        type=int,
        default=None,
        help="processes checking rule rewards [the server's default]",
    )
    parser.add_argument("--rule-rounds", type=int, default=3, help="alternating HTTP/in-process rounds")
    args = parser.parse_args()
    os.environ.setdefault("NLTK_DATA", str(SHARED / "nltk_data"))
    os.environ["JURIST_CACHE_DIR"] = tempfile.mkdtemp(prefix="jurist-bench-cache-")

    from conftest import write_models_file  # the tests' own models file for the mock
    from jurist.serve.app import Bounds
    from jurist.serve.rule_checks import usable_cores
    from jurist.serve.server import Listen, RewardServer, ThreadedServer
    from jurist.serve.service import RewardItem, ServeSettings

    work = Path(tempfile.mkdtemp(prefix="jurist-bench-reward-"))
    bodies = _judge_bodies(work)
    port = _free_port()
    judge_url = f"http://127.0.0.1:{port}/v1"
    mock = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "mock_openai.py"), "--port", str(port),
         "--delay", str(args.judge_delay / 1000.0)], start_new_session=True,
    )  # fmt: skip
    models = write_models_file(work / "m.yaml", judge_url, {"judge": {"parallel": 64}})
    serve = [sys.executable, "-m", "jurist", "serve", "reward", "--bench", "starter", "--judge", "judge",
             "--models-file", str(models), "--no-cache", "--port", "0", "--out", str(work / "p")]  # fmt: skip
    server = subprocess.Popen(serve, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for(judge_url + "/models")
        assert server.stderr is not None
        line = server.stderr.readline()
        url = line.split(" at ", 1)[1].split(";", 1)[0]
        asyncio.run(_latency(url, judge_url, bodies, 5))  # warm: connections, the judge's identity
        rewarded, bare = asyncio.run(_latency(url, judge_url, bodies, args.rounds))
    finally:
        for process in (server, mock):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(60)
    print(f"added latency over the judge call ({args.rounds} rounds, judge {args.judge_delay:g} ms/reply)")
    print(f"  {'':24} {'p50 ms':>9} {'p90 ms':>9}")
    for name, values in (("bare judge (2 games)", bare), ("POST /v1/reward", rewarded)):
        print(f"  {name:24} {1000 * _p(values, 0.5):9.2f} {1000 * _p(values, 0.9):9.2f}")
    added = 1000 * (statistics.median(rewarded) - statistics.median(bare))
    print(f"  added p50: {added:.2f} ms (target <= 5 ms)")

    questions, items, slow = _ifeval_items(args.repeat)
    workers = usable_cores() if args.rule_workers is None else args.rule_workers
    quick = [item for item in items if item["uid"] not in slow]
    rules = ServeSettings(
        bench="ifeval", bench_options={"file": str(questions)}, out=work / "r", rule_workers=args.rule_workers
    )
    server = ThreadedServer(RewardServer(rules, Listen(port=0), Bounds(max_batch=args.batch)))
    url = server.start()
    try:
        asyncio.run(_rules_http(url, items[:541], args.batch, args.clients))  # warm
        service = server.server.service
        assert service is not None

        async def direct(chosen: list[dict[str, Any]]) -> float:
            reward_items = [RewardItem(answer=i["answer"], uid=i["uid"]) for i in chosen]
            started = time.perf_counter()
            for item in reward_items:
                await service.reward(item)
            return len(reward_items) / (time.perf_counter() - started)

        async def server_cpu() -> float:
            return time.thread_time()  # the server thread's CPU seconds (not the clients', not workers')

        def timed(run: Any) -> tuple[float, float]:
            """(items/s by the clock, the server thread's CPU seconds) of one round."""
            before = float(server.run(server_cpu()))  # type: ignore[arg-type]
            rate = float(run())
            return rate, float(server.run(server_cpu())) - before  # type: ignore[arg-type]

        rates = []
        for chosen in (items, quick):
            http, local, http_cpu, local_cpu = [], [], [], []
            for _ in range(args.rule_rounds):  # alternating, so a burst of load hits both alike
                rate, cpu_s = timed(lambda: asyncio.run(_rules_http(url, chosen, args.batch, args.clients)))  # noqa: B023
                http.append(rate)
                http_cpu.append(cpu_s)
                rate, cpu_s = timed(lambda: server.run(direct(chosen)))  # noqa: B023
                local.append(rate)
                local_cpu.append(cpu_s)
            cpu = (len(chosen) / statistics.median(http_cpu), len(chosen) / statistics.median(local_cpu))
            rates.append((len(chosen), statistics.median(http), statistics.median(local), *cpu))
    finally:
        server.stop()
    chosen_by = " (the default: usable cores)" if args.rule_workers is None else ""
    print(
        f"rule rewards (IFEval's GPT-4 answers, batches of {args.batch}, {args.clients} clients, "
        f"{workers} rule worker(s){chosen_by}), items/s, median of {args.rule_rounds} rounds; "
        "per CPU-second of the server's thread"
    )
    print(f"  {'':40} {'items':>7} {'HTTP':>9} {'in-process':>11} {'HTTP/CPU-s':>11} {'in-proc/CPU-s':>14}")
    for name, (count, http_rate, local_rate, http_per_cpu, local_per_cpu) in zip(
        ("all instructions", "without langdetect's 3 instructions"), rates, strict=True
    ):
        print(
            f"  {name:40} {count:7,} {http_rate:9,.0f} {local_rate:11,.0f} "
            f"{http_per_cpu:11,.0f} {local_per_cpu:14,.0f}"
        )
    print("  (target >= 2,000 items/s over HTTP)")


if __name__ == "__main__":
    main()
