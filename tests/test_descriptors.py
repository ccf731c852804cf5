"""The [reliability] issue, item 5: open files are bounded by the global concurrency, not models x limit.

At concurrency 256 with 6 models jurist held 1,550 open files (one connection pool per model, each
filling up to 256 idle connections) and died under ``ulimit -n 1024``. Here 8 models, each on a port of
its own (the worst case: no idle connection of one model can serve another), run at concurrency 256
under that limit; the mock runs in a process of its own, so its sockets do not count.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp
import yaml

from jurist.engine.servers.base import ManagedServer
from jurist.engine.wire.connections import ConnectionBudget
from jurist.store.jsonl import read_jsonl
from mock_openai import MockOpenAI
from mock_process import run_watched, spawn_mock, stop_process

MODELS = [f"m{i}" for i in range(8)]
QUESTIONS = 300  # more than the concurrency, so that every model alone could fill all 256 slots


def _models_file(path: Path, urls: list[str]) -> Path:
    entry = {"api_type": "openai", "parallel": 256, "max_tokens": 64, "temperature": 0.0, "timeout": 30}
    data = {
        alias: {"model": alias, "endpoints": [{"api_base": url}], **entry}
        for alias, url in zip([*MODELS, "base", "judge-good"], [*urls, urls[0], urls[1]], strict=True)
    }
    path.write_text(yaml.safe_dump(data))
    return path


def test_256_in_flight_over_8_models_fit_in_1024_descriptors(tmp_path: Path) -> None:
    questions = tmp_path / "question.jsonl"
    questions.write_text(
        "".join(json.dumps({"uid": f"q{i}", "prompt": f"question {i}"}) + "\n" for i in range(QUESTIONS))
    )
    mock, urls = spawn_mock(len(MODELS), ["--delay", "0.02"])
    try:
        models_file = _models_file(tmp_path / "models.yaml", urls)
        args = [sys.executable, "-m", "jurist", "run", "--bench", str(questions)]
        args += ["--models-file", str(models_file), "--baseline", "base", "--judge", "judge-good"]
        args += [arg for alias in MODELS for arg in ("--model", alias)]
        args += ["--max-concurrency", "256", "--no-progress", "--out", "run"]
        env = {**os.environ, "JURIST_CACHE_DIR": str(tmp_path / "cache")}
        run = run_watched(args, cwd=tmp_path, env=env, nofile=1024, timeout=120)
    finally:
        stop_process(mock)
    print(f"\npeak open files of jurist: {run.peak_fds} (limit 1024); {run.seconds:.1f} s")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Too many open files" not in run.stderr and "Traceback" not in run.stderr
    every = sorted(f"q{i}" for i in range(QUESTIONS))
    root = tmp_path / "run"
    for alias in [*MODELS, "base"]:
        assert sorted(record["uid"] for record in read_jsonl(root / "answers" / f"{alias}.jsonl")) == every
    for alias in MODELS:
        judged = read_jsonl(root / "judgments" / "judge-good" / f"{alias}.jsonl")
        assert sorted(record["uid"] for record in judged) == every
    # 256 connections at most, plus the run's files, the request cache and the event loop's own; before
    # the shared pool this run peaked at 2,171 without the limit.
    assert run.peak_fds <= 256 + 40


def test_the_shared_pool_closes_idle_connections_of_other_hosts_to_stay_within_its_limit(
    mock_server: Callable[..., MockOpenAI],
) -> None:
    """Idle keep-alive connections do not count against aiohttp's own limit: without eviction, 4 hosts
    used one after another at 8 in flight would leave 32 sockets open for a limit of 8."""
    urls = [mock_server(delay=0.05).base_url for _ in range(4)]

    async def go() -> tuple[int, int]:
        budget = ConnectionBudget(8)
        sessions = [aiohttp.ClientSession(connector=budget.connector(), connector_owner=False) for _ in urls]
        peak = 0
        try:
            for session, url in zip(sessions, urls, strict=True):

                async def one(session: aiohttp.ClientSession = session, url: str = url) -> None:
                    async with session.get(f"{url}/models") as resp:
                        await resp.read()

                await asyncio.gather(*[one() for _ in range(8)])
                peak = max(peak, budget.open_connections())
            return peak, budget.open_connections()
        finally:
            for session in sessions:
                await session.close()
            await budget.aclose()

    peak, left = asyncio.run(go())
    assert peak <= 8 and left <= 8


class _MockServer(ManagedServer):
    """The mock OpenAI server as a server jurist starts itself."""

    name = "mock server"

    def command(self) -> list[str]:
        return [sys.executable, str(Path(__file__).with_name("mock_openai.py")), "--port", str(self.port)]


def _open_files() -> list[str]:
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            names.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return names


def test_a_managed_server_leaves_no_descriptor_behind(tmp_path: Path) -> None:
    """Its log is the server's own: jurist keeps no handle on it while it runs, and nothing after."""
    before = sorted(_open_files())
    log = tmp_path / "logs" / "mock.log"
    with _MockServer(startup_timeout=30, log_path=log) as server:
        assert server.process is not None and str(log) not in _open_files()
    assert sorted(_open_files()) == before
    temp = _MockServer(startup_timeout=30)  # no log folder: a temporary log, removed at stop
    with temp:
        assert temp.log_path is not None and temp.log_path.exists()
    assert not temp.log_path.exists() and sorted(_open_files()) == before
