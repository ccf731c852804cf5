"""Managed servers through the engine's pool, with a fake server (a tiny http.server script).

The fake speaks just enough of the OpenAI wire (``GET /v1/models``, ``POST /v1/chat/completions``) and
starts a child process, so that stopping it must take its whole process group.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY
from jurist.config import ModelSpec, ServeSpec
from jurist.engine.cache.store import open_cache
from jurist.engine.client import Engine
from jurist.engine.servers import ManagedServer
from jurist.engine.servers.pool import ServerPool, log_stem
from jurist.errors import JuristError

FAKE_SERVER = r"""
import json, subprocess, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, mode = int(sys.argv[1]), sys.argv[2]
print("fake server: mode", mode, flush=True)
if mode == "crash":
    print("fake server: CUDA out of memory, giving up", flush=True)
    sys.exit(3)
if mode == "silent":
    time.sleep(600)
time.sleep(30 if mode == "slow" else 0.3)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # same process group


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, data):
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply({"object": "list", "data": [{"id": "fake"}]})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = f"[{request['model']}] {request['messages'][-1]['content']}"
        message = {"role": "assistant", "content": content}
        usage = {"prompt_tokens": 3, "completion_tokens": 5}
        self.reply({"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage})


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


class FakeServer(ManagedServer):
    name = "fake server"

    def __init__(self, mode: str = "ok", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mode = mode

    def command(self) -> list[str]:
        return [sys.executable, "-c", FAKE_SERVER, str(self.port), self.mode]


class Factory:
    """Makes fake servers and remembers them (and their process groups)."""

    def __init__(self, mode: str = "ok", startup_timeout: float = 30.0) -> None:
        self.mode = mode
        self.startup_timeout = startup_timeout
        self.made: list[FakeServer] = []
        self.pgids: list[int] = []

    def __call__(self, spec: ModelSpec, log_path: Path | None) -> ManagedServer:
        server = FakeServer(self.mode, startup_timeout=self.startup_timeout, log_path=log_path)
        original = server.start

        def start() -> None:
            original()
            assert server.pgid is not None
            self.pgids.append(server.pgid)

        server.start = start  # type: ignore[method-assign]
        self.made.append(server)
        return server


def managed_spec(alias: str = "local") -> ModelSpec:
    serve = ServeSpec(kind="llama.cpp", model="/models/fake.gguf", startup_timeout=30)
    return ModelSpec(alias=alias, model=f"{alias}-served", serve=serve, parallel=4, timeout=10.0)


def group_gone(pgid: int, within: float = 10.0) -> bool:
    """True once no process of the group is left (orphans are reaped by init, which may take a moment)."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def ask_all(engine: Engine, n: int, alias: str = "local") -> list[Any]:
    async def main() -> list[Any]:
        try:
            client = engine.client(alias)
            return list(
                await asyncio.gather(
                    *(client.complete([{"role": "user", "content": f"q{i}"}]) for i in range(n))
                )
            )
        finally:
            await engine.aclose()

    return asyncio.run(main())


def test_started_once_under_concurrent_first_requests_and_stopped_on_aclose(tmp_path: Path) -> None:
    factory = Factory()
    notes: list[str] = []
    pool = ServerPool(notify=notes.append, log_dir=tmp_path / "logs", factory=factory)
    engine = Engine({"local": managed_spec()}, max_concurrency=8, policy=FAST_RETRY, pool=pool)
    completions = ask_all(engine, 20)
    assert len(factory.made) == 1 and len(factory.pgids) == 1
    assert sorted(c.text for c in completions) == sorted(f"[local-served] q{i}" for i in range(20))
    assert engine.stats.requests == 20
    assert notes == ["starting a llama.cpp server for local (/models/fake.gguf)..."]
    assert "fake server: mode ok" in (tmp_path / "logs" / "local.log").read_text()
    assert group_gone(factory.pgids[0])  # aclose stopped it, child included
    assert pool.servers == {}
    pool.stop_all()  # idempotent
    engine.close_servers()


def test_an_engine_without_a_pool_makes_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = Factory()
    monkeypatch.setattr("jurist.engine.servers.pool.server_for", factory)
    engine = Engine({"local": managed_spec()}, max_concurrency=4, policy=FAST_RETRY)
    assert engine.pool is None
    (completion,) = ask_all(engine, 1)
    assert completion.text == "[local-served] q0" and isinstance(engine.pool, ServerPool)
    assert group_gone(factory.pgids[0])


def test_close_servers_stops_them_when_the_runner_raises() -> None:
    factory = Factory()
    engine = Engine(
        {"local": managed_spec()}, max_concurrency=4, policy=FAST_RETRY, pool=ServerPool(factory=factory)
    )

    async def runner() -> None:
        client = engine.client("local")
        try:
            await client.complete([{"role": "user", "content": "hi"}])
            raise RuntimeError("a bug in the runner")
        finally:
            await client.aclose()  # its sessions, not the servers: the engine is never closed here

    with pytest.raises(RuntimeError, match="a bug"):
        try:
            asyncio.run(runner())
        finally:
            engine.close_servers()  # what the runner does outside the event loop
    assert len(factory.pgids) == 1 and group_gone(factory.pgids[0])


def test_a_server_that_exits_fails_fast_with_its_log_tail() -> None:
    factory = Factory("crash")
    engine = Engine(
        {"local": managed_spec()}, max_concurrency=4, policy=FAST_RETRY, pool=ServerPool(factory=factory)
    )
    started = time.monotonic()
    with pytest.raises(JuristError) as info:
        ask_all(engine, 5)
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert "model 'local'" in message and "exited with code 3" in message
    assert "CUDA out of memory, giving up" in message  # the log tail
    assert len(factory.made) == 1  # a failed start is not tried again by the other requests


def test_a_server_that_never_answers_times_out() -> None:
    factory = Factory("silent", startup_timeout=1.0)
    server = factory(managed_spec(), None)
    started = time.monotonic()
    with pytest.raises(JuristError, match=r"did not answer on http://127\.0\.0\.1:\d+/v1 within 1 s"):
        server.start()
    assert time.monotonic() - started < 8
    assert server.process is None and server.log_path is not None and not server.log_path.exists()


def test_cancelling_a_start_stops_the_server_at_once() -> None:
    """Ctrl-C while a server loads: the start is abandoned and its process group stopped, no waiting."""
    factory = Factory("slow")
    pool = ServerPool(factory=factory)

    pgids: list[int] = []

    async def main() -> None:
        task = asyncio.create_task(pool.ensure(managed_spec()))
        while not factory.made or factory.made[0].pgid is None:
            await asyncio.sleep(0.02)
        pgids.append(factory.made[0].pgid)  # type: ignore[arg-type]
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(main())  # returns once the worker thread has given up the start, too
    assert time.monotonic() - started < 10  # not the 30 s the fake takes to become ready
    assert factory.made[0].process is None and group_gone(pgids[0])
    pool.stop_all()


def test_a_cache_hit_needs_no_server(tmp_path: Path) -> None:
    cache = open_cache(tmp_path)
    factory = Factory()
    first = Engine(
        {"local": managed_spec()}, max_concurrency=4, cache=cache, pool=ServerPool(factory=factory)
    )
    ask_all(first, 2)
    assert len(factory.made) == 1
    second = Engine(
        {"local": managed_spec()}, max_concurrency=4, cache=cache, pool=ServerPool(factory=factory)
    )
    completions = ask_all(second, 2)
    assert all(c.cached for c in completions) and second.stats.requests == 0
    assert len(factory.made) == 1  # never started again
    assert cache is not None
    cache.close()


def test_a_spec_with_serve_shows_it_and_has_no_endpoints_until_started() -> None:
    spec = managed_spec()
    assert spec.resolved_endpoints() == []
    public = spec.public_dict()
    assert public["serve"]["kind"] == "llama.cpp" and public["serve"]["model"] == "/models/fake.gguf"
    assert public["endpoints"] == []


def test_a_long_or_slashed_alias_gets_a_log_file_it_can_open(tmp_path: Path) -> None:
    """A server's log is named from its alias: ``org/model`` or a 300-byte alias must not stop the server
    from starting (a file name over 255 bytes, or one with a separator, cannot be opened)."""
    aliases = ["org/model", "m" * 150 + "é" * 80, "plain-name"]
    pool = ServerPool(log_dir=tmp_path / "logs", factory=Factory())
    engine = Engine({a: managed_spec(a) for a in aliases}, max_concurrency=4, policy=FAST_RETRY, pool=pool)

    async def main() -> list[Any]:
        try:
            return [await engine.client(a).complete([{"role": "user", "content": "q0"}]) for a in aliases]
        finally:
            await engine.aclose()

    completions = asyncio.run(main())
    assert [c.text for c in completions] == [f"[{alias}-served] q0" for alias in aliases]
    names = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert len(names) == 3 and "plain-name.log" in names
    assert all(len(name.encode()) <= 255 and "/" not in name for name in names)
    assert len({log_stem(a) for a in aliases}) == 3 and log_stem("org/model") != log_stem("org_model")
    engine.close_servers()
