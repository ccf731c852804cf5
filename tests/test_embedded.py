"""Real-model tests: the embedded llama.cpp server with SmolLM2-135M (slow; ``./dev test`` runs them)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SHARED_DATA
from jurist.config import ModelSpec, ServeSpec
from jurist.engine.client import Engine
from jurist.engine.local.embedded import EMBEDDED_ALIAS, embedded_gguf_path, embedded_model_spec
from jurist.engine.servers.llama_cpp import LlamaCppServer
from jurist.engine.servers.pool import ServerPool
from jurist.errors import JuristError
from jurist.store.jsonl import read_jsonl

pytestmark = pytest.mark.slow


# Servers started while these tests run inherit this mark (in-process engines and jurist subprocesses pass
# the environment on), so other llama.cpp servers on the machine (another run, another test session) are
# never mistaken for ours.
_MARK = f"JURIST_TEST_SERVERS={os.getpid()}-{time.time_ns()}"
os.environ["JURIST_TEST_SERVERS"] = _MARK.split("=", 1)[1]


def llama_servers() -> set[int]:
    """PIDs of running llama.cpp server processes started by these tests."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                if b"llama_cpp.server" not in cmdline:
                    continue
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if _MARK.encode() in environ.split(b"\0"):
                found.add(int(entry.name))
    return found


def test_the_engine_starts_the_embedded_server_on_first_use_and_stops_it(tmp_path: Path) -> None:
    before = llama_servers()
    notes: list[str] = []
    spec = embedded_model_spec()
    assert spec.serve is not None and Path(spec.serve.model) == embedded_gguf_path()
    pool = ServerPool(notify=notes.append, log_dir=tmp_path / "logs")
    engine = Engine({EMBEDDED_ALIAS: spec}, max_concurrency=4, pool=pool)
    pgids: list[int] = []

    async def main() -> list[str]:
        try:
            client = engine.client(EMBEDDED_ALIAS)
            prompts = ["What is 2+2?", "Name a colour.", "Say hello."]
            done = await asyncio.gather(*(client.complete([{"role": "user", "content": p}]) for p in prompts))
            pgids.extend(server.pgid for server in pool.servers.values() if server.pgid is not None)
            return [c.text for c in done]
        finally:
            await engine.aclose()

    texts = asyncio.run(main())
    assert len(texts) == 3 and all(t.strip() for t in texts)
    assert notes == ["starting the embedded llama.cpp server (SmolLM2-135M-Instruct)..."]
    assert len(pgids) == 1 and engine.stats.requests == 3
    assert (tmp_path / "logs" / f"{EMBEDDED_ALIAS}.log").stat().st_size > 0
    with pytest.raises(ProcessLookupError):
        os.killpg(pgids[0], 0)
    assert llama_servers() == before


def test_close_servers_stops_the_embedded_server_when_the_runner_fails() -> None:
    before = llama_servers()
    engine = Engine({EMBEDDED_ALIAS: embedded_model_spec()}, max_concurrency=1)

    async def failing_runner() -> None:
        client = engine.client(EMBEDDED_ALIAS)
        try:
            await client.complete([{"role": "user", "content": "Hi"}])
            raise KeyboardInterrupt  # as Ctrl-C would, with the server up
        finally:
            await client.aclose()

    with pytest.raises(KeyboardInterrupt):
        try:
            asyncio.run(failing_runner())
        finally:
            engine.close_servers()
    assert llama_servers() == before


def test_a_missing_model_file_is_reported_before_anything_starts(tmp_path: Path) -> None:
    serve = ServeSpec(kind="llama.cpp", model=str(tmp_path / "absent.gguf"))
    server = LlamaCppServer.from_spec(ModelSpec(alias="x", model="x", serve=serve))
    with pytest.raises(JuristError, match="absent.gguf does not exist"):
        server.start()
    assert server.process is None


def test_jurist_run_limit_3_on_the_embedded_model(tmp_path: Path) -> None:
    before = llama_servers()
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--limit", "3", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / "runs" / "starter"
    answers = read_jsonl(run / "answers" / "smollm2-135m.jsonl")
    assert len(answers) == 3 and all(a["answer"].strip() for a in answers)
    assert all(a["usage"]["completion_tokens"] > 0 for a in answers)
    judgments = read_jsonl(run / "judgments" / "smollm2-135m" / "smollm2-135m.jsonl")
    assert len(judgments) == 3
    # The schema-constrained verdict keeps even a 135M judge parseable.
    assert all(g["label"] in {"A>>B", "A>B", "A=B", "B>A", "B>>A"} for j in judgments for g in j["games"])
    board = json.loads((run / "leaderboard.json").read_text())
    rows = {row["model"]: row for row in board}
    assert rows["reference"]["score"] == 50.0
    assert 0.0 <= rows["smollm2-135m"]["score"] <= 100.0 and rows["smollm2-135m"]["n"] == 3
    assert "smollm2-135m" in result.stdout
    assert llama_servers() == before  # the server was stopped
    # Resuming a finished run needs no server and sends nothing.
    again = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--limit", "3", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0
    assert "starting the embedded" not in again.stderr
    assert json.loads((run / "leaderboard.json").read_text()) == board
    assert json.loads((run / "run.json").read_text())["usage"]["requests"] == 0


def test_ctrl_c_stops_the_embedded_server(tmp_path: Path) -> None:
    before = llama_servers()
    process = subprocess.Popen(
        [sys.executable, "-m", "jurist", "run", "--no-progress"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (llama_servers() - before):
        time.sleep(0.2)
    assert llama_servers() - before, "the server never started"
    answers = tmp_path / "runs" / "starter" / "answers" / "smollm2-135m.jsonl"
    while time.monotonic() < deadline and not (answers.exists() and answers.stat().st_size):
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert b"interrupted" in stderr
    time.sleep(0.5)
    assert llama_servers() == before
    assert read_jsonl(answers)  # what finished before the interrupt is kept


def test_ifeval_limit_20_on_the_embedded_model(tmp_path: Path) -> None:
    """A rule-checked benchmark with a real model: answers generated, every instruction checked offline."""
    env = {**os.environ, "JURIST_DATA_DIR": str(SHARED_DATA)}
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--bench", "ifeval", "--limit", "20", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1500,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / "runs" / "ifeval"
    answers = read_jsonl(run / "answers" / "smollm2-135m.jsonl")
    assert len(answers) == 20 and sum(bool(a["answer"].strip()) for a in answers) >= 15
    points = read_jsonl(run / "points" / "smollm2-135m.jsonl")
    assert len(points) == 20
    assert sum(len(p["detail"]["instructions"]) for p in points) >= 20
    summary = json.loads((run / "summary.json").read_text())
    row = summary["models"]["smollm2-135m"]
    assert 0.0 <= row["prompt_strict"] <= row["prompt_loose"] <= 100.0
    assert "prompt strict" in result.stdout
